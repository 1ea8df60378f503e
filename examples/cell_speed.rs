//! Times the cell recognizer: `cargo run --release --example cell_speed -- CELL.png...`
//! (cells as `hamle sheet --dump-cells` writes them; `RAYON_NUM_THREADS=1` for one core).
use std::time::Instant;

use hamle::model::CellModel;

fn main() {
    let imgs: Vec<image::GrayImage> = std::env::args()
        .skip(1)
        .filter_map(|p| image::open(p).ok().map(|i| i.to_luma8()))
        .collect();
    let t0 = Instant::now();
    let m = CellModel::get().expect("model");
    println!(
        "model loaded and planned in {:.1} ms",
        t0.elapsed().as_secs_f64() * 1000.0
    );
    m.run_cells(&imgs[..imgs.len().min(4)]);
    let t0 = Instant::now();
    let rounds = 3;
    for _ in 0..rounds {
        m.run_cells(&imgs);
    }
    let ms = t0.elapsed().as_secs_f64() * 1000.0 / (rounds * imgs.len()) as f64;
    println!("{} cells, {ms:.2} ms per cell", imgs.len());
}
