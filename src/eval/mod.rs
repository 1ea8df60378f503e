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
//!   case flips, dropped plies), with its own seeded PRNG so that every run is reproducible.
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
