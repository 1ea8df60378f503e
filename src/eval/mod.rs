//! Evaluation: a seeded noise generator for move text and the accuracy reports behind
//! `hamle eval`.
//!
//! Input: labelled games (PGN files, `*.moves.txt` labels) and options. Output: report
//! types that print as plain-text tables ([`std::fmt::Display`]) and serialise to JSON.
//! This module measures the other stages; it decides nothing about a game itself and
//! prints nothing (the CLI prints the reports).
//!
//! - [`noise`]: an OCR-like corruption model for written move text (look-alike glyphs,
//!   random substitutions, lost and extra characters, merged and split words, lost `x`/`+`,
//!   case flips, dropped plies), with its own seeded PRNG so that every run is reproducible;
//!   and players' slips of the pen (a wrong move written: `Re3` for Re1), which no reader
//!   of the ink can undo.
//! - [`repair`]: `hamle eval repair` — real games rendered in Turkish notation, corrupted,
//!   repaired by [`crate::decode::repair_text`] and compared ply by ply with the truth:
//!   accuracy, status counts, calibration of the confidences, timing.
//!
//! - [`boards`]: `hamle eval boards` — labelled board images read and compared square by
//!   square: exact boards (also up to orientation), square accuracy, timing, per name prefix.
//!
//! ```no_run
//! use hamle::eval::{run, RepairEvalOptions};
//! let report = run(&RepairEvalOptions {
//!     paths: vec!["datasets/games".into()],
//!     noise: vec![0.05, 0.10],
//!     games: Some(100),
//!     ..Default::default()
//! })?;
//! println!("{report}");
//! # Ok::<(), anyhow::Error>(())
//! ```

pub mod boards;
pub mod noise;
pub mod repair;
pub mod sheets;

pub use repair::{run, RepairEvalOptions, RepairEvalReport};

use std::path::{Path, PathBuf};

use anyhow::Context;

/// Image files of a labelled folder: for every `NAME{label_suffix}`, the image `NAME.png`
/// (or jpg, jpeg, tif, tiff, webp, any case) beside it. Pairs (image, label), sorted by
/// name; labels without an image are left out.
pub(crate) fn labelled_images(
    dir: &Path,
    label_suffix: &str,
) -> anyhow::Result<Vec<(PathBuf, PathBuf)>> {
    const EXTS: [&str; 6] = ["png", "jpg", "jpeg", "tif", "tiff", "webp"];
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).with_context(|| format!("reading folder {}", dir.display()))? {
        let p = e?.path();
        let Some(name) = p.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(stem) = name.strip_suffix(label_suffix) else {
            continue;
        };
        let img = EXTS
            .iter()
            .flat_map(|ext| [ext.to_string(), ext.to_uppercase()])
            .map(|ext| dir.join(format!("{stem}.{ext}")))
            .find(|c| c.is_file());
        if let Some(img) = img {
            out.push((img, p));
        }
    }
    out.sort();
    Ok(out)
}
