//! `hamle eval boards DIR`: read every labelled board image of a folder (`NAME.png|jpg`
//! beside `NAME.fen`) and compare the placement read with the label, square by square.
//!
//! Labels follow `../shared/data/README.md`: names starting `photo-` are labelled as
//! displayed (the image's top row is the FEN's first rank), so they are compared with the
//! grid as seen, before any orientation decision; all other labels are canonical (White at
//! the bottom) and are compared with the canonical placement. "Exact up to orientation"
//! also accepts the board turned a quarter, a half or three quarters, so orientation errors
//! show apart from reading errors.
//! Figures are given per name prefix (the text before the first `-`) and overall. Images
//! where no board is found count as read with every square wrong and are listed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use serde::Serialize;

use crate::board::{self, agreeing_squares, BoardConfig};

/// One image's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct BoardOutcome {
    pub name: String,
    pub prefix: String,
    /// Squares right (of 64), as compared (see the module docs).
    pub right: usize,
    /// Squares right in the best of the four orientations ([`board::best_turns`]).
    pub right_any_orientation: usize,
    pub seconds: f64,
    /// The placement compared with the label.
    pub read: Option<String>,
    pub label: String,
    pub confidence: Option<f64>,
    pub flags: Vec<String>,
    /// Why nothing was read, if so.
    pub error: Option<String>,
    /// When `NAME.json` gives the true `corners` (renders of physical sets): the largest
    /// distance of a corner found from its true place, in squares (the board's mean side /
    /// 8), under the best of the eight ways to pair the corners.
    pub corner_error: Option<f64>,
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
    /// Images with true corners, and how many were found within a quarter square.
    pub with_corners: usize,
    pub corners_within_quarter: usize,
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
    // Load the models first, so that no image's time includes them.
    crate::model::SquareModel::get().map_err(anyhow::Error::msg)?;
    crate::model::CoordModel::get().map_err(anyhow::Error::msg)?;
    crate::model::CornerModel::get_2d().map_err(anyhow::Error::msg)?;
    if cfg.kind != board::BoardKind::Diagram {
        crate::model::CornerModel::get().map_err(anyhow::Error::msg)?;
        crate::model::PieceModel::get().map_err(anyhow::Error::msg)?;
    }
    let outcomes = pairs
        .iter()
        .map(|(img, label)| one(img, label, cfg))
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok(report(outcomes))
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
        corner_error: None,
    };
    let truth = true_corners(img);
    match read {
        Ok(r) => {
            o.corner_error = truth.map(|t| corner_error(&r.corners, &t));
            let got = if as_displayed {
                r.grid
            } else {
                board::parse_placement(&r.placement).unwrap_or(r.grid)
            };
            o.right = agreeing_squares(&got, &want);
            o.right_any_orientation = board::best_turns(&got, &want).1;
            o.read = Some(board::placement(&got));
            o.confidence = Some(r.confidence);
            o.flags = r.flags;
        }
        Err(e) => {
            o.error = Some(e.to_string());
            o.corner_error = truth.map(|_| f64::INFINITY);
        }
    }
    Ok(o)
}

/// The true corners of a render (`NAME.json`'s `corners`), if given.
fn true_corners(img: &Path) -> Option<[[f64; 2]; 4]> {
    let text = std::fs::read_to_string(img.with_extension("json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    serde_json::from_value(v.get("corners")?.clone()).ok()
}

/// One square's side in pixels, roughly: the board outline's mean side / 8.
fn square_side(corners: &[[f64; 2]; 4]) -> f64 {
    (0..4)
        .map(|i| {
            let (a, b) = (corners[i], corners[(i + 1) % 4]);
            (a[0] - b[0]).hypot(a[1] - b[1])
        })
        .sum::<f64>()
        / 32.0
}

/// The largest corner distance, in squares, under the best pairing (4 rotations × 2
/// directions) of found and true corners.
fn corner_error(found: &[[f32; 2]; 4], truth: &[[f64; 2]; 4]) -> f64 {
    let side = square_side(truth);
    let mut best = f64::INFINITY;
    for k in 0..4 {
        for dir in [1usize, 3] {
            let worst = (0..4)
                .map(|i| {
                    let f = found[i];
                    let t = truth[(k + dir * i) % 4];
                    (f64::from(f[0]) - t[0]).hypot(f64::from(f[1]) - t[1])
                })
                .fold(0.0, f64::max);
            best = best.min(worst);
        }
    }
    best / side.max(1e-9)
}

/// Writes the piece model's training crops: for each render of a physical set in `dir`
/// (`NAME.jpg`, `NAME.json` with the true `corners` a1, h1, h8, a8, `NAME.fen`), `copies`
/// mosaics `NAME-K.png` of the 64 crops [`board::physical::cut_pieces`] cuts (8 × 8 tiles,
/// rank 8 at the top, the a-file at the left), each with the corners moved by a Gaussian
/// error of `jitter` squares (the corner model is not exact either), and `NAME-K.fen`.
/// Each crop is `crop_scale` times the piece model's input (`PIECE_W × PIECE_H`) each way:
/// 1 for training it, more for probes of a larger input.
/// Returns how many mosaics were written.
///
/// # Errors
///
/// A folder or file cannot be read or written, or a label is malformed.
pub fn dump_pieces(
    dir: &Path,
    out: &Path,
    jitter: f64,
    copies: usize,
    seed: u64,
    crop_scale: u32,
) -> anyhow::Result<usize> {
    use crate::board::physical::{cut_pieces_sized, WORK_SIDE};
    use crate::board::pose::{Camera, Homography};
    use crate::model::{PIECE_H, PIECE_W};
    if !(1..=8).contains(&crop_scale) {
        anyhow::bail!("crop scale {crop_scale}: give 1 to 8");
    }
    let (cw, ch) = (PIECE_W * crop_scale, PIECE_H * crop_scale);
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let pairs = labelled(dir)?;
    let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut gauss = move || {
        // xorshift64* and Box–Muller: reproducible without a dependency
        let mut uni = || {
            rng ^= rng >> 12;
            rng ^= rng << 25;
            rng ^= rng >> 27;
            ((rng.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let (a, b) = (uni(), uni());
        (-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos()
    };
    let mut n = 0;
    for (img_path, fen_path) in pairs {
        let json_path = img_path.with_extension("json");
        if !json_path.exists() {
            continue;
        }
        let corners = true_corners(&img_path)
            .with_context(|| format!("{}: no 4 corners", json_path.display()))?;
        let (img, scale) =
            crate::vision::load_rgb(&img_path, WORK_SIDE).map_err(|e| anyhow::anyhow!("{e}"))?;
        let fen = std::fs::read_to_string(&fen_path)?;
        let side = square_side(&corners) * f64::from(scale);
        let stem = img_path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("board")
            .to_string();
        for k in 0..copies {
            let c = [0, 1, 2, 3].map(|i| {
                let e = if k == 0 && copies > 1 {
                    0.0
                } else {
                    jitter * side
                };
                [
                    (corners[i][0] * f64::from(scale) + e * gauss()) as f32,
                    (corners[i][1] * f64::from(scale) + e * gauss()) as f32,
                ]
            });
            let Some(cam) = Homography::from_corners(&c)
                .and_then(|h| Camera::from_homography(&h, img.width(), img.height()))
            else {
                continue;
            };
            let (w, h) = (cw as usize, ch as usize);
            let px = cut_pieces_sized(&img, &cam, w, h);
            let mut m = image::RgbImage::new(8 * cw, 8 * ch);
            for rank in 0..8 {
                for file in 0..8 {
                    let i = rank * 8 + file;
                    let crop = &px[i * 3 * w * h..(i + 1) * 3 * w * h];
                    for y in 0..h {
                        for x in 0..w {
                            let at =
                                |ch: usize| (crop[ch * w * h + y * w + x] * 255.0).round() as u8;
                            m.put_pixel(
                                (file * w + x) as u32,
                                ((7 - rank) * h + y) as u32,
                                image::Rgb([at(0), at(1), at(2)]),
                            );
                        }
                    }
                }
            }
            let name = format!("{stem}-{k}");
            m.save(out.join(format!("{name}.png")))
                .with_context(|| format!("writing {name}.png"))?;
            std::fs::write(out.join(format!("{name}.fen")), &fen)?;
            n += 1;
        }
    }
    Ok(n)
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
        if let Some(e) = o.corner_error {
            g.with_corners += 1;
            g.corners_within_quarter += (e <= 0.25) as usize;
        }
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
        row(f, "all", &self.all)?;
        if self.all.with_corners > 0 {
            writeln!(
                f,
                "board corners within a quarter square of the truth: {}/{}",
                self.all.corners_within_quarter, self.all.with_corners
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::{quarter_turn, turned};

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
            corner_error: None,
        }
    }

    #[test]
    fn corner_error_takes_the_best_pairing_in_squares() {
        let truth = [[0.0, 0.0], [80.0, 0.0], [80.0, 80.0], [0.0, 80.0]];
        // the same square named from another corner and the other way round
        let found = [[0.0, 80.0], [80.0, 80.0], [80.0, 0.0], [0.0, 0.0]];
        assert!(corner_error(&found, &truth) < 1e-9);
        // one corner half a square (5 px) off
        let off = [[0.0, 0.0], [85.0, 0.0], [80.0, 80.0], [0.0, 80.0]];
        assert!((corner_error(&off, &truth) - 0.5).abs() < 1e-9);
    }

    #[test]
    fn a_quarter_turn_twice_is_turned() {
        let g = board::parse_placement("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR").unwrap();
        assert_eq!(quarter_turn(&quarter_turn(&g)), turned(&g));
        assert_ne!(quarter_turn(&g), g);
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
