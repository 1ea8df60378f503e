//! Times `vision::rotate` against imageproc's bilinear `rotate_about_center` on a page, the two
//! taking turns: `RAYON_NUM_THREADS=1 taskset -c 0 cargo run --release --example rotate_speed -- PAGE`
use imageproc::geometric_transformations::{rotate_about_center, Interpolation};
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("PAGE");
    let (g, _) = hamle::vision::load_gray(path.as_ref()).expect("image");
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for k in 0..10 {
        let deg = if k % 2 == 0 { 0.15f32 } else { -1.0 };
        let t = Instant::now();
        std::hint::black_box(hamle::vision::rotate(&g, deg));
        ours.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        let r = rotate_about_center(
            &g,
            -deg.to_radians(),
            Interpolation::Bilinear,
            image::Luma([255]),
        );
        std::hint::black_box(r);
        theirs.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    ours.sort_by(f64::total_cmp);
    theirs.sort_by(f64::total_cmp);
    println!(
        "{}x{}: vision::rotate {:.1} ms, imageproc {:.1} ms (medians of 10)",
        g.width(),
        g.height(),
        ours[5],
        theirs[5]
    );
}
