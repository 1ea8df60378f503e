//! How the crop models' speed in tract depends on the batch they are planned at: each
//! model's 64 crops of one board run as one batch of 64, 4 of 16, 8 of 8 and 64 of 1, the
//! variants taking turns so that a machine's drift hits all alike; medians of the runs.
//!
//! `cargo run --release --example crop_batch` (pin it to one core with `taskset -c 0`)

use std::time::Instant;

use tract_onnx::prelude::*;

fn main() -> TractResult<()> {
    let models: [(&str, &[u8], [usize; 3]); 3] = [
        ("squares", hamle::model::SQUARE_ONNX, [1, 32, 32]),
        ("pieces3d", hamle::model::PIECE3D_ONNX, [3, 64, 32]),
        ("coords", hamle::model::COORD_ONNX, [1, 24, 24]),
    ];
    let batches = [64usize, 16, 8, 1];
    for (name, bytes, [c, h, w]) in models {
        let mut plans = Vec::new();
        for &b in &batches {
            let plan = tract_onnx::onnx()
                .model_for_read(&mut std::io::Cursor::new(bytes))?
                .with_input_fact(0, f32::fact([b, c, h, w]).into())?
                .with_output_fact(0, Default::default())?
                .into_optimized()?
                .into_runnable()?;
            // varied pixels: a ramp
            let x: Vec<f32> = (0..b * c * h * w)
                .map(|i| (i % 251) as f32 / 251.0)
                .collect();
            plans.push((b, plan, Tensor::from_shape(&[b, c, h, w], &x)?));
        }
        let mut times: Vec<Vec<f64>> = vec![Vec::new(); batches.len()];
        for _ in 0..40 {
            for (k, (b, plan, x)) in plans.iter().enumerate() {
                let t = Instant::now();
                let mut st = plan.spawn()?;
                for _ in 0..64 / b {
                    let out = st.run(tvec!(x.clone().into_tvalue()))?;
                    std::hint::black_box(out);
                }
                times[k].push(t.elapsed().as_secs_f64() * 1e3);
            }
        }
        let line: Vec<String> = batches
            .iter()
            .zip(&mut times)
            .map(|(b, t)| {
                t.sort_by(f64::total_cmp);
                format!("batch {b}: {:.2} ms", t[t.len() / 2])
            })
            .collect();
        println!("{name} (64 crops): {}", line.join(", "));
    }
    Ok(())
}
