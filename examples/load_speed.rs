//! Times loading a page as grey levels: decoding, then the grey conversion.
//! `taskset -c 0 cargo run --release --example load_speed -- PAGE.png...`
use std::time::Instant;

fn main() {
    for p in std::env::args().skip(1) {
        let t = Instant::now();
        let img = hamle::vision::decode(std::path::Path::new(&p)).expect("decode");
        let dec = t.elapsed().as_secs_f64() * 1000.0;
        let t = Instant::now();
        let (g, _) = hamle::vision::gray_of(img);
        let conv = t.elapsed().as_secs_f64() * 1000.0;
        println!(
            "{p}: decode {dec:.1} ms, grey {conv:.1} ms ({}x{})",
            g.width(),
            g.height()
        );
    }
}
