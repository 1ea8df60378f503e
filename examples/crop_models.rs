//! Compares crop-classifier files in tract at a batch of 1 (as hamle runs them): the models
//! take turns, 64 crops of varied pixels each time; prints each model's median ms per board
//! and the largest output difference from the first.
//!
//! `taskset -c 0 cargo run --release --example crop_models -- C H W A.onnx B.onnx...`
use std::time::Instant;
use tract_onnx::prelude::*;

fn main() -> TractResult<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [c, h, w]: [usize; 3] = [args[0].parse()?, args[1].parse()?, args[2].parse()?];
    let mut plans = Vec::new();
    for p in &args[3..] {
        let plan = tract_onnx::onnx()
            .model_for_path(p)?
            .with_input_fact(0, f32::fact([1, c, h, w]).into())?
            .with_output_fact(0, Default::default())?
            .into_optimized()?
            .into_runnable()?;
        plans.push(plan);
    }
    let crops: Vec<Tensor> = (0..64)
        .map(|k| {
            let x: Vec<f32> = (0..c * h * w)
                .map(|i| ((i * 7 + k * 13) % 251) as f32 / 251.0)
                .collect();
            Tensor::from_shape(&[1, c, h, w], &x).unwrap()
        })
        .collect();
    let mut times = vec![Vec::new(); plans.len()];
    let mut outs: Vec<Vec<f32>> = vec![Vec::new(); plans.len()];
    for _ in 0..41 {
        for (k, plan) in plans.iter().enumerate() {
            let t = Instant::now();
            let mut o = Vec::new();
            for x in &crops {
                let mut st = plan.spawn()?;
                let r = st.run(tvec!(x.clone().into_tvalue()))?;
                o.extend(r[0].to_plain_array_view::<f32>()?.iter().cloned());
            }
            times[k].push(t.elapsed().as_secs_f64() * 1000.0);
            outs[k] = o;
        }
    }
    for (k, p) in args[3..].iter().enumerate() {
        times[k].sort_by(f64::total_cmp);
        let d = outs[k]
            .iter()
            .zip(&outs[0])
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        println!(
            "{p}: {:.2} ms per 64 crops (median of 41), largest difference {d:.2e}",
            times[k][20]
        );
    }
    Ok(())
}
