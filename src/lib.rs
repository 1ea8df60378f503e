//! hamle turns photos and scans of chess games — and the noisy text any OCR gives back —
//! into verified game records.
//!
//! The pipeline, one module per stage, plain data between them:
//!
//! ```text
//! text ──► notation::lexer ──► decode (rules + scorer) ──► record::Game ──► output
//! image ──► vision ──► sheet::layout (cells) ──► model (CTC frames) ──► decode ──► …
//! ```
//!
//! - [`input`]: input bytes into text (UTF-8, UTF-16, Windows-1254), with a size cap.
//! - [`notation`]: the letters of each language, a lenient lexer, a SAN formatter.
//! - [`rules`]: a thin layer over `shakmaty`: legal moves as spellable shapes, game end.
//! - [`decode`]: the repair engine — a beam search over legal moves that scores what was
//!   read against each move's spellings and reports doubt as data.
//! - [`pages`]: input files (images, multi-page TIFF, PDF, text) into pages, one at a time.
//! - [`vision`]: grey levels, binarization, deskew, ruled lines, crops.
//! - [`sheet`]: scoresheets — the move grid from the printed lines, one image per cell,
//!   recognition, and decoding (one copy or both players' copies together).
//! - [`board`]: board images — the board's box, 64 square crops, the square classifier,
//!   orientation and rule checks → the position as FEN.
//! - [`book`]: born-digital book PDFs — the text layer into games, diagrams checked against them.
//! - [`read`]: what a page holds — a scoresheet, a board, move text — read by the right reader.
//! - [`batch`]: many inputs in parallel into PGN and JSON files, resumable, with an error list.
//! - [`report`]: the HTML review report of a batch — crops beside readings, flagged first.
//! - [`model`]: the embedded ONNX models, run with tract.
//! - [`record`]: the decoded game.
//! - [`output`]: PGN, Turkish text, JSON.
//! - [`eval`]: the noise generator and accuracy reports behind `hamle eval`.
//!
//! # Feature flags
//!
//! None yet.

pub mod batch;
pub mod board;
pub mod book;
pub mod decode;
pub mod eval;
pub mod geometry;
pub mod input;
pub mod model;
pub mod notation;
pub mod output;
pub mod pages;
pub mod read;
pub mod record;
pub mod report;
pub mod rules;
pub mod sheet;
pub mod vision;
