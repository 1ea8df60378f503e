//! Compares cell recognizer files in tract: each model reads the same cells (128 × 32, as
//! `hamle sheet --dump-cells` writes them), the models taking turns round after round so that
//! the machine's drift hits all alike; prints each model's median milliseconds per cell and
//! the largest difference of its outputs from the first model's.
//!
//! `RAYON_NUM_THREADS=1 taskset -c 0 cargo run --release --example cell_models -- \
//!     --model models/cells.onnx --model OTHER.onnx CELL.png...`

use std::time::Instant;

use hamle::model::{CellFrames, CellModel};

fn main() -> Result<(), String> {
    let mut models = Vec::new();
    let mut imgs = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--model" {
            let path = args.next().ok_or("--model needs a path")?;
            let bytes = std::fs::read(&path).map_err(|e| format!("{path}: {e}"))?;
            let m = CellModel::from_bytes(&bytes).map_err(|e| format!("{path}: {e:#}"))?;
            models.push((path, m));
        } else if let Ok(i) = image::open(&a) {
            imgs.push(i.to_luma8());
        }
    }
    if models.is_empty() || imgs.is_empty() {
        return Err("give --model PATH (one or more) and cell images".into());
    }
    let read = |m: &CellModel| -> Result<Vec<CellFrames>, String> {
        m.run_cells(&imgs).into_iter().collect()
    };
    let base = read(&models[0].1)?;
    let rounds = 9;
    let mut times = vec![Vec::new(); models.len()];
    let mut diffs = vec![0.0f32; models.len()];
    for _ in 0..rounds {
        for (k, (_, m)) in models.iter().enumerate() {
            let t = Instant::now();
            let out = read(m)?;
            times[k].push(t.elapsed().as_secs_f64() * 1000.0 / imgs.len() as f64);
            for (a, b) in out.iter().zip(&base) {
                for (x, y) in a.logp.iter().zip(&b.logp) {
                    diffs[k] = diffs[k].max((x - y).abs());
                }
            }
        }
    }
    for (k, (path, _)) in models.iter().enumerate() {
        times[k].sort_by(f64::total_cmp);
        println!(
            "{path}: {:.2} ms per cell (median of {rounds} rounds of {} cells; range {:.2}-{:.2}), largest difference from the first {:.2e}",
            times[k][rounds / 2],
            imgs.len(),
            times[k][0],
            times[k][rounds - 1],
            diffs[k]
        );
    }
    Ok(())
}
