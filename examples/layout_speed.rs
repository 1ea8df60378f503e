//! Times the layout stage's steps on one page:
//! `cargo build --release --example layout_speed && taskset -c 0 ./target/release/examples/layout_speed IMAGE`.
use hamle::vision;
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("IMAGE");
    let t = Instant::now();
    let (gray, scale) = vision::load_gray(path.as_ref()).expect("image");
    println!("load {:?} {}x{}", t.elapsed(), gray.width(), gray.height());
    let radius = vision::rule_radius(&gray);
    let t = Instant::now();
    let bm = vision::ruled_lines(&gray, radius);
    println!("binarize {:?}", t.elapsed());
    let t = Instant::now();
    let skew = vision::skew_degrees(&bm, 6.0);
    println!("skew {:?} ({skew})", t.elapsed());
    let t = Instant::now();
    let _ = vision::rotate(&gray, skew);
    println!("rotate {:?}", t.elapsed());
    let t = Instant::now();
    let _ = vision::rectifying(&bm, 0.3, skew);
    println!("rectifying {:?}", t.elapsed());
    let t = Instant::now();
    let _ = hamle::sheet::layout::find(&gray, scale);
    println!("find {:?}", t.elapsed());
}
