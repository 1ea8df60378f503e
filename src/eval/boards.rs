//! `hamle eval boards DIR`: read every labelled board image of a folder (`NAME.png|jpg`
//! beside `NAME.fen`) and compare the placement read with the label, square by square.
//!
//! Labels follow `../shared/data/README.md`: names starting `photo-` are labelled as
//! displayed (the image's top row is the FEN's first rank), so they are compared with the
//! grid as seen, before any orientation decision; all other labels are canonical (White at
//! the bottom) and are compared with the canonical placement. "Exact up to orientation"
//! also accepts the board turned 180°, so orientation errors show apart from reading errors.
//! Figures are given per name prefix (the text before the first `-`) and overall. Images
//! where no board is found count as read with every square wrong and are listed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use serde::Serialize;

use crate::board::{self, turned, BoardConfig, Grid};

/// One image's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct BoardOutcome {
    pub name: String,
    pub prefix: String,
    /// Squares right (of 64), as compared (see the module docs).
    pub right: usize,
    /// Squares right with the board turned 180°, the better of the two.
    pub right_any_orientation: usize,
    pub seconds: f64,
    /// The placement compared with the label.
    pub read: Option<String>,
    pub label: String,
    pub confidence: Option<f64>,
    pub flags: Vec<String>,
    /// Why nothing was read, if so.
    pub error: Option<String>,
}

/// Figures of a group of images.
#[derive(Debug, Clone, Default, Serialize)]
pub struct GroupFigures {
    pub images: usize,
    pub exact: usize,
    pub exact_up_to_orientation: usize,
    pub squares: usize,
    pub squares_right: usize,
    pub square_accuracy: f64,
    pub failures: usize,
    pub mean_seconds: f64,
    pub max_seconds: f64,
}

/// The report.
#[derive(Debug, Clone, Serialize)]
pub struct BoardsReport {
    pub all: GroupFigures,
    pub by_prefix: BTreeMap<String, GroupFigures>,
    pub outcomes: Vec<BoardOutcome>,
}

/// Labelled pairs of a folder: (image, `NAME.fen`), sorted by name.
///
/// # Errors
///
/// The folder cannot be read.
pub fn labelled(dir: &Path) -> anyhow::Result<Vec<(PathBuf, PathBuf)>> {
    super::labelled_images(dir, ".fen")
}

/// Reads the boards of `dir` one after another (so each image's time is one core's: decoding,
/// locating, cutting, the model and the checks; the one-time model load is done before) and
/// compares them with their labels.
///
/// # Errors
///
/// The folder cannot be read, holds no labelled image, or a label is not a placement.
pub fn run(dir: &Path, cfg: &BoardConfig) -> anyhow::Result<BoardsReport> {
    let pairs = labelled(dir)?;
    if pairs.is_empty() {
        anyhow::bail!(
            "no labelled boards in {} (NAME.png or NAME.jpg beside NAME.fen)",
            dir.display()
        );
    }
    // Load the model first, so that no image's time includes it.
    crate::model::SquareModel::get().map_err(anyhow::Error::msg)?;
    let outcomes = pairs
        .iter()
        .map(|(img, label)| one(img, label, cfg))
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(report(outcomes))
}

fn matches(a: &Grid, b: &Grid) -> usize {
    a.iter()
        .flatten()
        .zip(b.iter().flatten())
        .filter(|(x, y)| x == y)
        .count()
}

fn one(img: &Path, label: &Path, cfg: &BoardConfig) -> anyhow::Result<BoardOutcome> {
    let text =
        std::fs::read_to_string(label).with_context(|| format!("reading {}", label.display()))?;
    let want = board::parse_placement(&text)
        .with_context(|| format!("{}: not a FEN placement", label.display()))?;
    let name = img
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_string();
    let prefix = name.split('-').next().unwrap_or_default().to_string();
    let as_displayed = prefix == "photo";
    let t0 = Instant::now();
    let read = board::read_file(img, cfg);
    let seconds = t0.elapsed().as_secs_f64();
    let mut o = BoardOutcome {
        name,
        prefix,
        right: 0,
        right_any_orientation: 0,
        seconds,
        read: None,
        label: board::placement(&want),
        confidence: None,
        flags: Vec::new(),
        error: None,
    };
    match read {
        Ok(r) => {
            let got = if as_displayed {
                r.grid
            } else {
                board::parse_placement(&r.placement).unwrap_or(r.grid)
            };
            o.right = matches(&got, &want);
            o.right_any_orientation = o.right.max(matches(&turned(&got), &want));
            o.read = Some(board::placement(&got));
            o.confidence = Some(r.confidence);
            o.flags = r.flags;
        }
        Err(e) => o.error = Some(e.to_string()),
    }
    Ok(o)
}

fn figures<'a>(outcomes: impl Iterator<Item = &'a BoardOutcome>) -> GroupFigures {
    let mut g = GroupFigures::default();
    let mut total_seconds = 0.0;
    for o in outcomes {
        g.images += 1;
        g.exact += (o.right == 64) as usize;
        g.exact_up_to_orientation += (o.right_any_orientation == 64) as usize;
        g.squares += 64;
        g.squares_right += o.right;
        g.failures += o.error.is_some() as usize;
        total_seconds += o.seconds;
        g.max_seconds = g.max_seconds.max(o.seconds);
    }
    g.square_accuracy = g.squares_right as f64 / g.squares.max(1) as f64;
    g.mean_seconds = total_seconds / g.images.max(1) as f64;
    g
}

fn report(outcomes: Vec<BoardOutcome>) -> BoardsReport {
    let mut by_prefix = BTreeMap::new();
    for o in &outcomes {
        by_prefix.entry(o.prefix.clone()).or_insert(());
    }
    let by_prefix = by_prefix
        .into_keys()
        .map(|p| {
            let f = figures(outcomes.iter().filter(|o| o.prefix == p));
            (p, f)
        })
        .collect();
    BoardsReport {
        all: figures(outcomes.iter()),
        by_prefix,
        outcomes,
    }
}

impl std::fmt::Display for BoardsReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "image                       right  any-orient  confidence  seconds  problem"
        )?;
        for o in &self.outcomes {
            let problem = match (&o.error, o.right) {
                (Some(e), _) => e.clone(),
                (None, 64) => String::new(),
                (None, _) => format!("read {} want {}", o.read.as_deref().unwrap_or("-"), o.label),
            };
            writeln!(
                f,
                "{:<27} {:>5}  {:>10}  {:>10}  {:>7.3}  {}",
                o.name,
                o.right,
                o.right_any_orientation,
                o.confidence
                    .map(|c| format!("{c:.3}"))
                    .unwrap_or_else(|| "-".into()),
                o.seconds,
                problem
            )?;
        }
        writeln!(f)?;
        writeln!(
            f,
            "group   images  exact          exact up to orientation  squares right     no board  seconds mean/max"
        )?;
        let row = |f: &mut std::fmt::Formatter<'_>, name: &str, g: &GroupFigures| {
            writeln!(
                f,
                "{:<7} {:>6}  {:>3} ({:>5.1}%)   {:>3} ({:>5.1}%)             {:>5}/{:<5} {:>5.1}%  {:>8}  {:.3}/{:.3}",
                name,
                g.images,
                g.exact,
                100.0 * g.exact as f64 / g.images.max(1) as f64,
                g.exact_up_to_orientation,
                100.0 * g.exact_up_to_orientation as f64 / g.images.max(1) as f64,
                g.squares_right,
                g.squares,
                100.0 * g.square_accuracy,
                g.failures,
                g.mean_seconds,
                g.max_seconds
            )
        };
        for (p, g) in &self.by_prefix {
            row(f, p, g)?;
        }
        row(f, "all", &self.all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(prefix: &str, right: usize, any: usize, err: bool) -> BoardOutcome {
        BoardOutcome {
            name: format!("{prefix}-x.png"),
            prefix: prefix.into(),
            right,
            right_any_orientation: any,
            seconds: 0.1,
            read: None,
            label: String::new(),
            confidence: None,
            flags: Vec::new(),
            error: err.then(|| "no board".into()),
        }
    }

    #[test]
    fn report_counts_per_prefix() {
        let r = report(vec![
            outcome("book", 64, 64, false),
            outcome("book", 10, 64, false),
            outcome("photo", 0, 0, true),
        ]);
        assert_eq!(r.all.images, 3);
        assert_eq!(r.all.exact, 1);
        assert_eq!(r.all.exact_up_to_orientation, 2);
        assert_eq!(r.all.failures, 1);
        assert_eq!(r.by_prefix["book"].squares_right, 74);
        assert_eq!(r.by_prefix["photo"].images, 1);
        assert!(r.to_string().contains("all"));
    }
}
