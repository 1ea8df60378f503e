//! Times `vision::warp_page` against imageproc's bilinear `warp` by the same slant on a page,
//! the two taking turns:
//! `RAYON_NUM_THREADS=1 taskset -c 0 cargo run --release --example warp_speed -- PAGE`
use hamle::geometry::Homography;
use imageproc::geometric_transformations::{warp, Interpolation, Projection};
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("PAGE");
    let (g, _) = hamle::vision::load_gray(path.as_ref()).expect("image");
    let (w, h) = (g.width() as f32, g.height() as f32);
    let square = [(0.0, 0.0), (w, 0.0), (w, h), (0.0, h)];
    // corners moved inwards by up to 4 % of the page, as a photo at a slant
    let slant = [
        (0.03 * w, 0.01 * h),
        (0.99 * w, 0.04 * h),
        (0.96 * w, 0.98 * h),
        (0.01 * w, 0.96 * h),
    ];
    let p = Projection::from_control_points(slant, square).expect("a slant");
    let f64s = |p: [(f32, f32); 4]| p.map(|(x, y)| [f64::from(x), f64::from(y)]);
    let hm = Homography::from_points(&f64s(slant), &f64s(square)).expect("a slant");
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..10 {
        let t = Instant::now();
        std::hint::black_box(hamle::vision::warp_page(&g, &hm));
        ours.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        std::hint::black_box(warp(&g, &p, Interpolation::Bilinear, image::Luma([255])));
        theirs.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    ours.sort_by(f64::total_cmp);
    theirs.sort_by(f64::total_cmp);
    println!(
        "{}x{}: vision::warp_page {:.1} ms, imageproc {:.1} ms (medians of 10)",
        g.width(),
        g.height(),
        ours[5],
        theirs[5]
    );
}
