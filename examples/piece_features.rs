//! Dumps the piece model's penultimate features and logits for the mosaics of
//! `hamle eval dump-pieces` (64 crops of 32 × 64, rank 8 at the top), each crop read as it
//! is and mirrored, the two averaged as `PieceModel::read_board` does. Writes `OUT.f32`
//! (per crop: 128 features then 13 logits, little-endian f32) and `OUT.txt` (per mosaic:
//! its name and FEN), for experiments in Python.
//!
//! `cargo run --release --example piece_features -- models/pieces3d.onnx OUT DIR...`
use std::io::Write;
use tract_onnx::prelude::*;

const W: usize = 32;
const H: usize = 64;

fn main() -> TractResult<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut model = tract_onnx::onnx()
        .model_for_path(&args[0])?
        .with_input_fact(0, f32::fact([1, 3, H, W]).into())?;
    let feat = model.node_by_name("/head/head.3/Relu")?.id;
    let logits = model.output_outlets()?[0];
    model.select_output_outlets(&[OutletId::new(feat, 0), logits])?;
    let plan = model.into_optimized()?.into_runnable()?;
    let out = &args[1];
    let mut bin = std::io::BufWriter::new(std::fs::File::create(format!("{out}.f32"))?);
    let mut txt = std::fs::File::create(format!("{out}.txt"))?;
    for dir in &args[2..] {
        let mut files: Vec<_> = std::fs::read_dir(dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "png"))
            .collect();
        files.sort();
        for f in files {
            let fen = std::fs::read_to_string(f.with_extension("fen"))?;
            let img = image::open(&f)?.to_rgb8();
            for r in 0..8 {
                for c in 0..8 {
                    let mut sum = vec![0.0f32; 128 + 13];
                    for mirror in [false, true] {
                        let mut x = vec![0.0f32; 3 * H * W];
                        for y in 0..H {
                            for xx in 0..W {
                                let sx = if mirror { W - 1 - xx } else { xx };
                                let p = img.get_pixel((c * W + sx) as u32, (r * H + y) as u32);
                                for ch in 0..3 {
                                    x[ch * H * W + y * W + xx] = p[ch] as f32 / 255.0;
                                }
                            }
                        }
                        let t = Tensor::from_shape(&[1, 3, H, W], &x)?;
                        let res = plan.run(tvec!(t.into_tvalue()))?;
                        let feat = res[0].to_plain_array_view::<f32>()?;
                        let logit = res[1].to_plain_array_view::<f32>()?;
                        for (s, v) in sum.iter_mut().zip(feat.iter().chain(logit.iter())) {
                            *s += 0.5 * v;
                        }
                    }
                    for v in sum {
                        bin.write_all(&v.to_le_bytes())?;
                    }
                }
            }
            writeln!(txt, "{} {}", f.display(), fen.trim())?;
        }
    }
    Ok(())
}
