//! Times the skew search of the layout stage on one page (whole page; the bands and side
//! columns of `rectifying`), with session 20's search over the whole page taking turns:
//! `cargo build --release --example skew_speed && taskset -c 0 ./target/release/examples/skew_speed IMAGE`.
use hamle::vision;
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("IMAGE");
    let (gray, _) = vision::load_gray(path.as_ref()).expect("image");
    let bm = vision::ruled_lines(&gray, vision::rule_radius(&gray));
    let ink = bm.ink.iter().filter(|&&b| b).count();
    let (mut times, mut before) = (Vec::new(), Vec::new());
    let mut skew = 0.0;
    for _ in 0..7 {
        let t = Instant::now();
        skew = vision::skew_degrees(&bm, 6.0);
        times.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        assert_eq!(session20_skew(&bm, 6.0), Some(skew));
        before.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    before.sort_by(f64::total_cmp);
    let mut rect = Vec::new();
    for _ in 0..7 {
        let t = Instant::now();
        std::hint::black_box(vision::rectifying(&bm, 0.3, skew));
        rect.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    rect.sort_by(f64::total_cmp);
    println!(
        "{}x{}, ink {:.1} %: skew {skew} in {:.1} ms (session 20: {:.1} ms), rectifying {:.1} ms (medians of 7)",
        bm.width,
        bm.height,
        100.0 * ink as f64 / bm.ink.len() as f64,
        times[3],
        before[3],
        rect[3]
    );
}

/// Session 20's `try_skew_degrees` (its angle steps were the ones `vision::sharpest_angle`
/// now holds).
fn session20_skew(bm: &vision::Bitmap, max_deg: f32) -> Option<f32> {
    let mut pts: Vec<(f32, f32)> = Vec::new();
    let step = (bm.width / 400).max(1);
    for y in 0..bm.height {
        for x in (0..bm.width).step_by(step as usize) {
            if bm.get(x, y) {
                pts.push((x as f32, y as f32));
            }
        }
    }
    if pts.len() < 100 {
        return None;
    }
    let score = |deg: f32| -> f64 {
        let t = deg.to_radians().tan();
        let off = bm.width as f32 * t.abs();
        let n = (bm.height as f32 + 2.0 * off) as usize / 2 + 2;
        let mut hist = vec![0u32; n];
        for &(x, y) in &pts {
            let b = ((y - x * t + off) / 2.0) as usize;
            if b < n {
                hist[b] += 1;
            }
        }
        hist.iter().map(|&c| (c as f64) * (c as f64)).sum()
    };
    Some(vision::sharpest_angle(max_deg, score))
}
