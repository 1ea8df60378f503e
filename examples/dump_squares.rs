//! Cuts the square crops of labelled board images exactly as `hamle board --kind diagram`
//! feeds them to the square model, for fine-tuning it on real boards
//! (`scripts/train_squares.py --real-boards`).
//!
//! `cargo run --release --example dump_squares -- DIR OUT`
//!
//! `DIR` holds `NAME.png|jpg` + `NAME.fen` (placement as displayed, as `hamle eval boards`
//! reads `photo-*`; `scripts/heldout_boards.py` makes such
//! folders). For each image the board is found as `--kind diagram` finds it, and its 64
//! squares are cut from the found box and from six boxes near it (shrunk and grown by 2 %
//! of its side, moved by 3 % along each axis), the jitter of imperfect localisation.
//! `OUT.u8` gets 7 × 64 crops of 32 × 32 grey bytes per board, row-major from the image's
//! top-left square; `OUT.tsv` one line per board: name, the labelled placement, and the
//! shipped model's 64 argmax classes on the found box (for skipping boxes that are off).

use std::io::Write;
use std::path::Path;

use hamle::board::{cut_squares, Found};
use hamle::model::SquareModel;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, out] = args.as_slice() else {
        return Err("usage: dump_squares DIR OUT".into());
    };
    let model = SquareModel::get()?;
    let mut names: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("png" | "jpg" | "jpeg" | "JPG")
            )
        })
        .collect();
    names.sort();
    let mut crops = std::io::BufWriter::new(std::fs::File::create(format!("{out}.u8"))?);
    let mut tsv = std::fs::File::create(format!("{out}.tsv"))?;
    let (mut done, mut skipped) = (0, 0);
    for path in names {
        let fen = path.with_extension("fen");
        let Ok(label) = std::fs::read_to_string(&fen) else {
            continue;
        };
        let img = hamle::vision::decode(Path::new(&path))?;
        let (gray, _) = hamle::vision::gray_of(img);
        let Ok(found) = Found::find(&gray, true) else {
            skipped += 1;
            continue;
        };
        let (board, bx) = found.board(&gray);
        let (w, h) = (bx.x1 - bx.x0, bx.y1 - bx.y0);
        let views = [
            (0.0, 0.0, 0.0),
            (0.02, 0.0, 0.0),
            (-0.02, 0.0, 0.0),
            (0.0, 0.03, 0.0),
            (0.0, -0.03, 0.0),
            (0.0, 0.0, 0.03),
            (0.0, 0.0, -0.03),
        ];
        let mut argmax = Vec::new();
        for (k, (inset, dx, dy)) in views.into_iter().enumerate() {
            let mut b = bx;
            b.x0 += inset * w + dx * w;
            b.x1 += -inset * w + dx * w;
            b.y0 += inset * h + dy * h;
            b.y1 += -inset * h + dy * h;
            let pixels = cut_squares(board, &b);
            if k == 0 {
                let logits = model.run_board(&pixels)?;
                argmax = logits
                    .iter()
                    .map(|l| {
                        (0..l.len())
                            .max_by(|&i, &j| l[i].total_cmp(&l[j]))
                            .unwrap_or(0)
                    })
                    .collect();
            }
            let bytes: Vec<u8> = pixels
                .iter()
                .map(|p| (p * 255.0).round().clamp(0.0, 255.0) as u8)
                .collect();
            crops.write_all(&bytes)?;
        }
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let classes: Vec<String> = argmax.iter().map(|k| k.to_string()).collect();
        writeln!(tsv, "{name}\t{}\t{}", label.trim(), classes.join(","))?;
        done += 1;
    }
    eprintln!("{done} boards cut, {skipped} without a board found");
    Ok(())
}
