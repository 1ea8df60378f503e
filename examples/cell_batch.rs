//! How the cell recognizer's speed in tract depends on the batch it is planned at: the
//! given cells (128 × 32, as `hamle sheet --dump-cells` writes them) run in batches of
//! 1, 2, 4, 8 and 16, the variants taking turns; medians of the rounds, and the largest
//! difference of any output from the batch-1 run.
//!
//! `RAYON_NUM_THREADS=1 taskset -c 0 cargo run --release --example cell_batch -- CELL.png...`

use std::time::Instant;

use hamle::model::{pixels, CELL_H, CELL_ONNX, CELL_W};
use tract_onnx::prelude::*;

fn main() -> TractResult<()> {
    let imgs: Vec<Vec<f32>> = std::env::args()
        .skip(1)
        .filter_map(|p| image::open(p).ok().map(|i| pixels(&i.to_luma8())))
        .collect();
    let (h, w) = (CELL_H as usize, CELL_W as usize);
    let batches = [1usize, 2, 4, 8, 16];
    let n = imgs.len() / 16 * 16;
    let mut plans = Vec::new();
    for &b in &batches {
        let plan = tract_onnx::onnx()
            .model_for_read(&mut std::io::Cursor::new(CELL_ONNX))?
            .with_input_fact(0, f32::fact([b, 1, h, w]).into())?
            .with_output_fact(0, Default::default())?
            .into_optimized()?
            .into_runnable()?;
        plans.push((b, plan));
    }
    let run = |b: usize, plan: &std::sync::Arc<TypedRunnableModel>| -> TractResult<Vec<f32>> {
        // out (T, B, C) per chunk -> per cell (T, C)
        let mut all = vec![Vec::new(); n];
        for c0 in (0..n).step_by(b) {
            let x: Vec<f32> = imgs[c0..c0 + b].concat();
            let mut st = plan.spawn()?;
            let out = st.run(tvec!(Tensor::from_shape(&[b, 1, h, w], &x)?.into_tvalue()))?;
            let v = out[0].to_plain_array_view::<f32>()?;
            let s = v.shape().to_vec();
            for t in 0..s[0] {
                for k in 0..b {
                    for c in 0..s[2] {
                        all[c0 + k].push(v[[t, k, c]]);
                    }
                }
            }
        }
        Ok(all.concat())
    };
    let base = run(1, &plans[0].1)?;
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); batches.len()];
    for _ in 0..7 {
        for (k, (b, plan)) in plans.iter().enumerate() {
            let t = Instant::now();
            let out = run(*b, plan)?;
            times[k].push(t.elapsed().as_secs_f64() * 1000.0 / n as f64);
            let diff = out
                .iter()
                .zip(&base)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f32, f32::max);
            assert!(diff < 1e-3, "batch {b}: diff {diff}");
        }
    }
    for (k, b) in batches.iter().enumerate() {
        times[k].sort_by(|a, b| a.total_cmp(b));
        println!(
            "batch {b:2}: {:.2} ms per cell (median of 7, {n} cells)",
            times[k][3]
        );
    }
    Ok(())
}
