//! `hamle eval sheets DIR`: read every labelled scoresheet of a folder (`NAME.png|jpg` beside
//! `NAME.moves.txt`) and compare the decoded game with the label, ply by ply.
//!
//! A ply is right when the decoded move is the labelled one at the same ply; plies the label
//! has and the decoding lacks are wrong. A game is fully right when every labelled ply is right
//! and nothing more was decoded. Where `NAME.second.png|jpg` (the opponent's copy of the same
//! game) is there too, both are decoded together (unless `pairs` is off). Sheets whose layout cannot be found count as read with no
//! plies (all wrong) and are listed.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use rayon::prelude::*;
use serde::Serialize;
use shakmaty::Move;

use crate::record::Status;
use crate::sheet::{self, SheetConfig};

/// One sheet's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct SheetOutcome {
    pub name: String,
    pub plies: usize,
    pub right: usize,
    pub decoded: usize,
    pub seconds: f64,
    /// Where the seconds went, for a sheet that was read.
    pub stages: Option<sheet::Stages>,
    /// Layout or model failure, if any.
    pub error: Option<String>,
    /// First wrong ply (1-based), if any.
    pub first_wrong: Option<usize>,
    /// (status, confidence, right) of each decoded ply that has a label.
    #[serde(skip)]
    pub scored: Vec<(Status, f32, bool)>,
    /// With `--final-boards`: how the photo of the final position was used.
    pub final_board: Option<FinalOutcome>,
}

/// A sheet's final-position photo, in `hamle eval sheets --final-boards`.
#[derive(Debug, Clone, Serialize)]
pub struct FinalOutcome {
    /// Squares of the photo's reading (turned the way that agrees best) that match the true
    /// final position, of 64; `None` when the photo could not be read.
    pub photo_right: Option<usize>,
    /// Whether the game read ends in the photographed position.
    pub agrees: bool,
    /// Plies the photo changed in the reading of the sheet.
    pub changed: usize,
}

/// The report.
#[derive(Debug, Clone, Serialize)]
pub struct SheetsReport {
    pub sheets: usize,
    pub plies: usize,
    pub right: usize,
    pub move_accuracy: f64,
    pub games_fully_right: usize,
    pub ok_plies: usize,
    pub ok_right: usize,
    pub ok_accuracy: Option<f64>,
    pub flagged: usize,
    /// Of the wrong plies, how many were flagged (status other than `ok`).
    pub wrong_flagged: usize,
    pub wrong: usize,
    pub ece: f64,
    pub mean_seconds_per_sheet: f64,
    pub max_seconds_per_sheet: f64,
    /// Each stage's mean seconds over the sheets read.
    pub mean_stages: sheet::Stages,
    pub failures: usize,
    /// With `--final-boards`: sheets read with a photo, of those the photos read exactly,
    /// the games read that end in the photographed position, and plies the photos changed.
    pub final_photos: usize,
    pub final_photos_exact: usize,
    pub final_agree: usize,
    pub final_changed: usize,
    pub outcomes: Vec<SheetOutcome>,
}

/// Labelled pairs of a folder: (image, `NAME.moves.txt`), sorted by name.
pub fn labelled(dir: &Path) -> anyhow::Result<Vec<(PathBuf, PathBuf)>> {
    super::labelled_images(dir, ".moves.txt")
}

/// Reads the sheets of `dir` and compares them with their labels; with `pairs`, a sheet's
/// `NAME.second` copy is read together with it.
///
/// With `final_boards`, a folder holding a photo of each game's final position
/// (`NAME.jpg|png` for the sheet `NAME`) and what they show, each sheet is read with its
/// photo ([`SheetConfig::final_board`], [`sheet::final_board::read_photo`]); a sheet
/// without one is read alone.
pub fn run(
    dir: &Path,
    cfg: &SheetConfig,
    pairs: bool,
    final_boards: Option<(&Path, crate::board::BoardKind)>,
) -> anyhow::Result<SheetsReport> {
    let sheets = labelled(dir)?;
    if sheets.is_empty() {
        anyhow::bail!(
            "no labelled sheets in {} (NAME.png or NAME.jpg beside NAME.moves.txt)",
            dir.display()
        );
    }
    // One sheet per worker; cells inside a sheet also run on rayon.
    let outcomes: Vec<SheetOutcome> = sheets
        .par_iter()
        .map(|(img, label)| one(img, label, cfg, pairs, final_boards))
        .collect::<anyhow::Result<_>>()?;
    Ok(report(outcomes))
}

fn one(
    img: &Path,
    label: &Path,
    cfg: &SheetConfig,
    pairs: bool,
    final_boards: Option<(&Path, crate::board::BoardKind)>,
) -> anyhow::Result<SheetOutcome> {
    let text =
        std::fs::read_to_string(label).with_context(|| format!("reading {}", label.display()))?;
    let (games, _) = super::repair::read_labels(&text, &label.display().to_string());
    let truth: Vec<Move> = games.into_iter().next().map(|g| g.0).unwrap_or_default();
    let name = img
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    // The opponent's copy, when the folder has one (`NAME.second.png|jpg`).
    let second = ["png", "jpg"]
        .iter()
        .map(|ext| img.with_extension(format!("second.{ext}")))
        .find(|p| pairs && p.is_file());
    // The final-position photo, when a folder of them is given.
    let photo = final_boards.and_then(|(d, _)| {
        let stem = img.file_stem()?.to_str()?;
        ["jpg", "png"]
            .iter()
            .map(|ext| d.join(format!("{stem}.{ext}")))
            .find(|p| p.is_file())
    });
    let mut cfg = cfg.clone();
    let mut photo_right = Vec::new();
    let mut photo_failed = false;
    if let (Some(p), Some((_, kind))) = (&photo, final_boards) {
        match sheet::final_board::read_photo(p, kind) {
            Ok(b) => {
                photo_right = b
                    .iter()
                    .map(|r| (r.kind, photo_squares_right(&truth, r)))
                    .collect();
                cfg.final_board = Some((b, p.display().to_string()));
            }
            Err(_) => photo_failed = true,
        }
    }
    let cfg = &cfg;
    let t0 = Instant::now();
    let read = match &second {
        Some(s) => sheet::read_pair(img, s, cfg),
        None => sheet::read_file(img, cfg),
    };
    let seconds = t0.elapsed().as_secs_f64();
    let mut o = SheetOutcome {
        name,
        plies: truth.len(),
        right: 0,
        decoded: 0,
        seconds,
        stages: read.as_ref().ok().map(|r| r.stages),
        error: None,
        first_wrong: None,
        scored: Vec::new(),
        final_board: photo_failed.then_some(FinalOutcome {
            photo_right: None,
            agrees: false,
            changed: 0,
        }),
    };
    match read {
        Ok(r) => {
            if let Some(c) = &r.final_board {
                // The squares right of the reading the check used.
                o.final_board = Some(FinalOutcome {
                    photo_right: photo_right
                        .iter()
                        .find(|(k, _)| *k == c.read_as)
                        .map(|x| x.1),
                    agrees: c.agrees,
                    changed: c.changed.len(),
                });
            }
            o.decoded = r.game.plies.len();
            for (i, t) in truth.iter().enumerate() {
                let p = r.game.plies.get(i);
                let ok = p.and_then(|p| p.mv.as_ref()) == Some(t);
                if ok {
                    o.right += 1;
                } else if o.first_wrong.is_none() {
                    o.first_wrong = Some(i + 1);
                }
                if let Some(p) = p {
                    o.scored.push((p.status, p.confidence, ok));
                }
            }
        }
        Err(e) => {
            o.error = Some(e.to_string());
            o.first_wrong = Some(1);
        }
    }
    Ok(o)
}

/// Squares of a photo's reading that match the true game's final position, the photo
/// turned the way that agrees best.
fn photo_squares_right(truth: &[Move], photo: &crate::board::BoardReading) -> usize {
    use shakmaty::{Chess, Position};
    let mut pos = Chess::default();
    for m in truth {
        if !pos.is_legal(*m) {
            break;
        }
        pos.play_unchecked(*m);
    }
    let want = crate::board::parse_placement(&pos.board().to_string());
    let got = crate::board::parse_placement(&photo.placement);
    let (Some(want), Some(got)) = (want, got) else {
        return 0;
    };
    crate::board::best_turns(&got, &want).1
}

fn report(outcomes: Vec<SheetOutcome>) -> SheetsReport {
    let plies: usize = outcomes.iter().map(|o| o.plies).sum();
    let right: usize = outcomes.iter().map(|o| o.right).sum();
    let scored: Vec<&(Status, f32, bool)> = outcomes.iter().flat_map(|o| &o.scored).collect();
    let ok_plies = scored.iter().filter(|s| s.0 == Status::Ok).count();
    let ok_right = scored.iter().filter(|s| s.0 == Status::Ok && s.2).count();
    let flagged = scored.iter().filter(|s| s.0.is_flagged()).count();
    let wrong = plies - right;
    let wrong_flagged = scored.iter().filter(|s| s.0.is_flagged() && !s.2).count();
    let mut bins = [(0usize, 0usize, 0f64); 10];
    for s in &scored {
        let b = ((s.1 * 10.0) as usize).min(9);
        bins[b].0 += 1;
        bins[b].1 += s.2 as usize;
        bins[b].2 += s.1 as f64;
    }
    let n = scored.len().max(1) as f64;
    let ece = bins
        .iter()
        .filter(|b| b.0 > 0)
        .map(|b| (b.0 as f64 / n) * (b.1 as f64 / b.0 as f64 - b.2 / b.0 as f64).abs())
        .sum();
    let secs: Vec<f64> = outcomes.iter().map(|o| o.seconds).collect();
    let finals: Vec<FinalOutcome> = outcomes
        .iter()
        .filter_map(|o| o.final_board.clone())
        .collect();
    SheetsReport {
        sheets: outcomes.len(),
        plies,
        right,
        move_accuracy: right as f64 / plies.max(1) as f64,
        games_fully_right: outcomes
            .iter()
            .filter(|o| o.error.is_none() && o.right == o.plies && o.decoded == o.plies)
            .count(),
        ok_plies,
        ok_right,
        ok_accuracy: (ok_plies > 0).then(|| ok_right as f64 / ok_plies as f64),
        flagged,
        wrong_flagged,
        wrong,
        ece,
        mean_seconds_per_sheet: secs.iter().sum::<f64>() / secs.len().max(1) as f64,
        max_seconds_per_sheet: secs.iter().cloned().fold(0.0, f64::max),
        mean_stages: sheet::Stages::mean(outcomes.iter().filter_map(|o| o.stages)),
        failures: outcomes.iter().filter(|o| o.error.is_some()).count(),
        final_photos: finals.len(),
        final_photos_exact: finals.iter().filter(|f| f.photo_right == Some(64)).count(),
        final_agree: finals.iter().filter(|f| f.agrees).count(),
        final_changed: finals.iter().map(|f| f.changed).sum(),
        outcomes,
    }
}

impl std::fmt::Display for SheetsReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "sheet                     plies  right  decoded  first-wrong  seconds"
        )?;
        for o in &self.outcomes {
            writeln!(
                f,
                "{:<25} {:>5}  {:>5}  {:>7}  {:>11}  {:>7.2}{}",
                o.name,
                o.plies,
                o.right,
                o.decoded,
                o.first_wrong
                    .map(|w| w.to_string())
                    .unwrap_or_else(|| "-".into()),
                o.seconds,
                o.error
                    .as_ref()
                    .map(|e| format!("  ({e})"))
                    .unwrap_or_default()
            )?;
        }
        writeln!(f)?;
        writeln!(
            f,
            "moves right: {}/{} = {:.2}%   games fully right: {}/{}",
            self.right,
            self.plies,
            100.0 * self.move_accuracy,
            self.games_fully_right,
            self.sheets
        )?;
        writeln!(
            f,
            "ok plies right: {}/{}{}   flagged plies: {}   wrong plies flagged: {}/{}",
            self.ok_right,
            self.ok_plies,
            self.ok_accuracy
                .map(|a| format!(" = {:.2}%", 100.0 * a))
                .unwrap_or_default(),
            self.flagged,
            self.wrong_flagged,
            self.wrong
        )?;
        writeln!(
            f,
            "calibration error (ECE, 10 bins): {:.3}   seconds per sheet: mean {:.2}, max {:.2}   layout failures: {}",
            self.ece, self.mean_seconds_per_sheet, self.max_seconds_per_sheet, self.failures
        )?;
        let st = &self.mean_stages;
        writeln!(
            f,
            "mean seconds per stage: load {:.3}  layout {:.3}  cells {:.3}  recognizer {:.3}  zoom {:.3}  decode {:.3}",
            st.load, st.layout, st.cells, st.recognizer, st.zoom, st.decode
        )?;
        if self.final_photos > 0 {
            let squares: Vec<usize> = self
                .outcomes
                .iter()
                .filter_map(|o| o.final_board.as_ref()?.photo_right)
                .collect();
            writeln!(
                f,
                "final-board photos: {} (read exactly {}, squares right {:.1}%)   games ending in the photographed position: {}   plies the photos changed: {}",
                self.final_photos,
                self.final_photos_exact,
                100.0 * squares.iter().sum::<usize>() as f64 / (64 * squares.len()).max(1) as f64,
                self.final_agree,
                self.final_changed
            )?;
        }
        Ok(())
    }
}
