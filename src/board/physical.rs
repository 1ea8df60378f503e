//! Photos of physical sets (issue #6): a wooden or plastic set photographed from a player's
//! or an arbiter's seat → the position.
//!
//! Stages, each handing plain data to the next:
//! 1. **Lattice** ([`find_lattice`]): the corner model (`models/corners3d.md`) marks the
//!    playing area's four outer corners and the 81 points of the square lattice; the four
//!    strongest corner peaks that make a convex quadrilateral give a first homography, which
//!    is refitted by least squares to the lattice peaks it predicts (pieces hide some of them).
//!    A board that runs off the photo, or whose corner peaks mark a piece's head, is found
//!    again from the lattice: a corner searched for on a grid, or the lattice grown from
//!    the peaks alone and the board chosen among its 9 × 9 windows; the board that fits
//!    the peaks best is kept.
//! 2. **Camera** ([`super::pose`]): focal length and pose from the homography, so each square gets
//!    an image box that holds a piece standing on it — tall pieces lean into the squares behind
//!    them, so the box reaches up from the square's base, not around it.
//! 3. **Pieces**: the piece model (`models/pieces3d.md`) reads the 64 boxes in one batch.
//! 4. **Orientation**: which edge is White's. The board's colouring says which pair of
//!    opposite edges (a1 is dark), the pawns and kings say which of the two, unless
//!    `--orientation` does.
//!
//! The corners come back in the image's pixels like a diagram's; doubt is data as for
//! diagrams (low-confidence squares, rule flags).

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use image::RgbImage;

use super::piece_prior::PIECE_PRIOR;
use super::pose::{square_box, Camera, Homography, BOARD_CORNERS};
use super::{finish, BoardConfig, BoardError, BoardReading, LocateError, Located, Orientation};
use crate::model::{Board3dModel, CornerModel, PieceModel, PIECE_H, PIECE_W, SQUARE_CLASSES};
use crate::vision;

/// Photos are read at most this large (longer side, pixels): squares of up to ~100 px.
pub const WORK_SIDE: u32 = 1280;
/// Height of the box cut above each square, in squares (a tall king is ~1.9 squares).
pub const PIECE_HEIGHT: f64 = 2.0;
/// The box's top is inset this much of a square on each side (pieces are narrower than
/// their square).
pub const PIECE_INSET: f64 = 0.1;
/// A corner candidate needs at least this probability (the lattice then decides which
/// four are the board's).
pub const MIN_CORNER: f32 = 0.05;
/// The sharpest angle a board's outline may have in the photo, degrees.
pub const MIN_ANGLE_DEG: f64 = 30.0;
/// A board is accepted when at least this many of its 81 lattice points are seen by the
/// lattice map (pieces hide many; a photo without a board confirms few).
pub const MIN_MATCHED: usize = 20;
/// A lattice peak needs at least this probability.
pub const MIN_LATTICE: f32 = 0.2;
/// A lattice peak matches a predicted lattice point within this share of a square.
pub const MATCH_RADIUS: f64 = 0.3;

/// The board found in a photo.
#[derive(Debug, Clone)]
pub struct Lattice {
    /// Image corners a1, h1, h8, a8 of the reading frame: the a1–h1 edge is the one nearest
    /// the bottom of the image (which edge is White's is decided later).
    pub corners: [[f32; 2]; 4],
    /// Board plane → image.
    pub homography: Homography,
    /// The probabilities of the four corner peaks that chose the board, lowest (a corner
    /// moved off the photo keeps the value of the four it was chosen from; 0 for a board
    /// the lattice peaks alone found, when no four corner peaks made one).
    pub corner_prob: f32,
    /// Lattice points matched by a peak, of 81.
    pub matched: usize,
    /// Found from the lattice peaks alone: no four corner peaks made a board, so its edges
    /// rest on where the lattice peaks end and may be off by a square.
    pub lattice_only: bool,
    /// Lattice peaks that lie outside the board found (more than a third of a square beyond
    /// its edges): the board may run off the photo or be found wrong ([`OUTSIDE_PEAKS`]).
    pub outside: usize,
}

/// From this many lattice peaks outside the board found ([`Lattice::outside`]), a photo of
/// a set is flagged. Twice the most seen on the 92 tuning renders (session 22's styled sets,
/// seed 30) whose board was found within a quarter square (at most 4); 13 of their other 28
/// reach it. On the test renders: none of the 81 found right and 7 of the 18 found wrong,
/// boards that run off the photo.
pub const OUTSIDE_PEAKS: usize = 8;

/// Reads the position in a photo of a physical set.
///
/// # Errors
///
/// The image does not decode, no board is found, or a model fails.
pub fn read_file(path: &Path, cfg: &BoardConfig) -> Result<BoardReading, BoardError> {
    let t0 = Instant::now();
    // Read at WORK_SIDE: a large JPEG is decoded no larger than that needs.
    let (img, scale) = vision::decode_at_least(path, WORK_SIDE).map_err(BoardError::Decode)?;
    let size = super::file_size(&img, scale);
    let mut r = read_image(img, cfg).map_err(|e| super::sized(e, size))?;
    r.unscale(scale);
    r.seconds = t0.elapsed().as_secs_f64();
    Ok(r)
}

/// Reads the position in a decoded photo (scaled to [`WORK_SIDE`] for the reading), corners
/// in the photo's own pixels.
///
/// # Errors
///
/// No board is found, or a model fails.
pub fn read_image(img: image::DynamicImage, cfg: &BoardConfig) -> Result<BoardReading, BoardError> {
    read_image_with(img, cfg, Look::Mirrored)
}

/// How the piece model looks at the crops: also mirrored ([`PieceModel::read_board`]), or
/// once ([`PieceModel::run_board`], half the model's time). `--kind physical` looks twice,
/// and so does `--kind auto` on an image it takes for a photo of a set; where its set
/// reading is only a fallback (no diagram found, or an unsure one that could be either), it
/// looks once, to keep within the diagrams' time budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    Once,
    Mirrored,
}

/// [`read_image`], with the piece model looking as `look` says.
///
/// # Errors
///
/// No board is found, or a model fails.
pub fn read_image_with(
    img: image::DynamicImage,
    cfg: &BoardConfig,
    look: Look,
) -> Result<BoardReading, BoardError> {
    let size = (img.width(), img.height());
    let (rgb, scale) = vision::rgb_of(img, WORK_SIDE);
    let mut r = read_rgb_with(&rgb, cfg, look).map_err(|e| super::sized(e, size))?;
    r.unscale(scale);
    Ok(r)
}

/// [`read_image_with`] looking once, for a reading that is only of use if its least sure
/// square's confidence ([`BoardReading::least_square`]) comes out above `above`: `Ok(None)`
/// where it does not.
///
/// Until session 42 this gave up part way, as soon as the squares read so far bounded the
/// confidence under `above` (the square prior alone could only lower a square's top
/// probability so far); the board model ([`Board3dModel`]) reads all 64 squares together
/// and can raise any square's, so the board is read whole.
///
/// # Errors
///
/// No board is found, or a model fails.
pub fn read_image_if_surer(
    img: image::DynamicImage,
    cfg: &BoardConfig,
    above: f64,
) -> Result<Option<BoardReading>, BoardError> {
    let r = read_image_with(img, cfg, Look::Once)?;
    Ok((r.least_square > above).then_some(r))
}

/// The orientations a reading of a photo of a set can take (the order of
/// [`orientation_of_photo`]'s candidates).
const ORIENTATIONS: [Orientation; 4] = [
    Orientation::White,
    Orientation::Black,
    Orientation::Left,
    Orientation::Right,
];

/// The piece model is overconfident on sets it has not seen, so its logits are divided by a
/// temperature before the softmax. Chosen on the 60 renders of `work-tmp/r3d/seen`
/// (training sets, a seed not trained on): the calibration error of square confidences
/// (10 bins) is 0.046 at 1.0, 0.043 at 1.4, 0.072 at 1.9; on the held-out test renders
/// 0.060 at 1.0 and 0.030 at 1.4. Squares read at 0.9 or more stay overconfident (96 %
/// right) — orientation errors and confused kinds are sure of themselves.
pub const TEMPERATURE: f32 = 1.4;

/// Reads the position in a colour photo of a physical set.
///
/// # Errors
///
/// No board is found, or a model fails.
pub fn read_rgb(img: &RgbImage, cfg: &BoardConfig) -> Result<BoardReading, BoardError> {
    read_rgb_with(img, cfg, Look::Mirrored)
}

/// [`read_rgb`] looking as `look` says.
fn read_rgb_with(
    img: &RgbImage,
    cfg: &BoardConfig,
    look: Look,
) -> Result<BoardReading, BoardError> {
    let t0 = Instant::now();
    let min = super::locate::MIN_IMAGE_SIDE;
    if img.width() < min || img.height() < min {
        return Err(BoardError::Locate(LocateError::TooSmall {
            width: img.width(),
            height: img.height(),
        }));
    }
    let lat = find_lattice(img)?;
    let contrast = checker_contrast(img, &lat.homography);
    if contrast.t < MIN_CHECKER_T {
        return Err(BoardError::Locate(LocateError::NoSet(format!(
            "no board: the squares found do not alternate light and dark (their difference \
             is {:.1} standard errors, a board's at least {MIN_CHECKER_T})",
            contrast.t
        ))));
    }
    let cam = Camera::from_homography(&lat.homography, img.width(), img.height()).ok_or(
        BoardError::Locate(LocateError::NoSet(
            "no board: its corners give no camera".into(),
        )),
    )?;
    let pixels = cut_pieces(img, &cam);
    let model = PieceModel::get().map_err(BoardError::Model)?;
    let frame = match look {
        Look::Once => model.run_board(&pixels),
        Look::Mirrored => model.read_board(&pixels),
    }
    .map_err(|e| BoardError::Model(format!("{e:#}")))?;
    // Displayed order: row 0 = the frame's rank 8 (far edge), column 0 = its a-file. The
    // logits are divided by the model's temperature, so that square confidences are
    // probabilities.
    let mut displayed = vec![[0.0f32; SQUARE_CLASSES]; 64];
    for rank in 0..8 {
        for file in 0..8 {
            displayed[(7 - rank) * 8 + file] = frame[rank * 8 + file].map(|v| v / TEMPERATURE);
        }
    }
    let parity = contrast.parity;
    let orientation = match cfg.orientation {
        Some(o) => o,
        None => orientation_of_photo(&displayed, parity),
    };
    // The board model reads the 64 squares together (canonical order, White at the
    // bottom) and gives their classes' log-odds, in place of the square prior alone.
    let board = Board3dModel::get().map_err(BoardError::Model)?;
    let out = board
        .run(&super::canonical_logits(&displayed, orientation))
        .map_err(|e| BoardError::Model(format!("{e:#}")))?;
    let dump = std::env::var_os("HAMLE_SET_DUMP");
    let before = dump.as_ref().map(|_| displayed.clone());
    for (i, row) in displayed.iter_mut().enumerate() {
        let (cr, cc) = super::canonical_rc(orientation, i / 8, i % 8);
        *row = out[cr * 8 + cc];
    }
    if let (Some(path), Some(before)) = (dump, before) {
        dump_logits(Path::new(&path), orientation, &before, &displayed);
    }
    let [a1, h1, h8, a8] = lat.corners;
    let mut r = finish(
        &displayed,
        orientation,
        cfg,
        Located {
            kind: super::BoardKind::Physical,
            corners: [a8, h8, h1, a1],
            score: lat.corner_prob,
            checker: parity.abs().min(1.0),
        },
        t0,
    );
    // No game reaches what the rule checks flag (a side without its king, both kings in
    // check, a pawn on its first rank, ...): such a reading is wrong somewhere, however
    // sure its squares are (random noise read as an empty board with one pawn was 0.73).
    if r.flags.is_empty() {
        r.confidence = board_confidence(&r.squares);
    } else {
        r.confidence = 0.0;
        r.least_square = 0.0;
    }
    if lat.lattice_only {
        r.flags.push(
            "no four corner peaks make a board: it was found from its squares alone, and its \
             edges may be off by a square"
                .into(),
        );
    }
    if lat.outside >= OUTSIDE_PEAKS {
        r.flags.push(format!(
            "{} lattice points seen in the photo lie outside the board found: the board may \
             run off the photo or be found wrong",
            lat.outside
        ));
    }
    Ok(r)
}

/// With `HAMLE_SET_DUMP=FILE` (a diagnostic): one JSON line per photo of a set appended to
/// `FILE`, with the orientation chosen and each square's class log-odds in displayed order
/// (row 0 = the photo's far edge) from the piece model alone (`piece`, tempered) and after
/// the board model (`board`); `scripts/set_erasures.py` compares them with the labels. A
/// file that cannot be written is reported on stderr, and the reading goes on.
fn dump_logits(
    path: &Path,
    orientation: Orientation,
    piece: &[[f32; SQUARE_CLASSES]],
    board: &[[f32; SQUARE_CLASSES]],
) {
    use std::io::Write;
    let line = serde_json::json!({
        "orientation": format!("{orientation:?}"),
        "piece": piece,
        "board": board,
    });
    let written = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .and_then(|mut f| writeln!(f, "{line}"));
    if let Err(e) = written {
        eprintln!("HAMLE_SET_DUMP: {}: {e}", path.display());
    }
}

/// The exponent of [`board_confidence`]. The product of the 64 square confidences
/// (exponent 1) is underconfident: squares read at 0.97–0.99 are right more often than
/// that, and their shortfall compounds over 64 squares. Chosen by log loss of boards exact
/// on the 50 validation renders (`render_3d.py --split val --seed 102`, 6 exact): 0.352 at
/// 0.5, 0.364 at 0.6, 0.389 at 0.7, 0.500 at 1, and 0.489 for the least sure square (the
/// confidence before session 44).
pub const BOARD_CONFIDENCE_POWER: f64 = 0.5;

/// The probability that every square of a set's reading is right: the product of the
/// squares' confidences raised to [`BOARD_CONFIDENCE_POWER`].
pub fn board_confidence(squares: &[super::SquareRead]) -> f64 {
    let log: f64 = squares.iter().map(|s| s.confidence.max(1e-6).ln()).sum();
    super::round3((BOARD_CONFIDENCE_POWER * log).exp() as f32)
}

/// How much the square prior ([`PIECE_PRIOR`]: where pieces stand in real games) counts
/// against the piece model's tempered logits. Chosen on 400 renders of session 16's styled
/// training sets (`work-tmp/r3d/pieces-train16`, never trained on by the shipped model):
/// squares right 89.1 % at 0, 92.0 at 0.25, 92.7 at 0.5, 92.5 at 0.75, 92.1 at 1 (crops cut
/// at the true corners).
pub const PRIOR_WEIGHT: f32 = 0.5;

/// Adds [`PRIOR_WEIGHT`] × the square prior to the tempered logits of a displayed grid whose
/// White side is `o`: a photo of a set shows a game's position, and a white pawn on its
/// second rank is likelier than a white bishop there.
pub fn add_square_prior(displayed: &mut [[f32; SQUARE_CLASSES]], o: Orientation) {
    for (i, row) in displayed.iter_mut().take(64).enumerate() {
        let (cr, cc) = super::canonical_rc(o, i / 8, i % 8);
        for (v, p) in row.iter_mut().zip(PIECE_PRIOR[cr * 8 + cc]) {
            *v += PRIOR_WEIGHT * p;
        }
    }
}

/// Which edge is White's: of the four ways to name the frame's edges, those where a1 is on
/// a dark square (`parity` > 0: the frame's a1 squares are darker; < 0: the other pair;
/// near 0: all four), then the one whose square prior fits the readings best
/// ([`prior_fit`]; until session 40, piece votes: each piece's distance from the middle
/// towards its own side); a tie keeps White at the frame's near edge.
pub fn orientation_of_photo(displayed: &[[f32; SQUARE_CLASSES]], parity: f32) -> Orientation {
    let candidates: &[Orientation] = if parity > PARITY_SURE {
        &[Orientation::White, Orientation::Black]
    } else if parity < -PARITY_SURE {
        &[Orientation::Left, Orientation::Right]
    } else {
        &ORIENTATIONS
    };
    let mut best = (f32::NEG_INFINITY, candidates[0]);
    for &o in candidates {
        let v = prior_fit(displayed, o);
        if v > best.0 {
            best = (v, o);
        }
    }
    best.1
}

/// The least [`CheckerContrast::t`] of a board: below it the squares found do not alternate
/// light and dark, and the photo is taken for one without a board. Session 43: random noise
/// 0.2–0.7; renders at least 4.9 (150 test and validation renders), real photos at least
/// 8.0 (45).
pub const MIN_CHECKER_T: f32 = 2.0;

/// How much darker the squares of a1's colour are than the others (grey levels 0..1) in
/// the frame; below this either way the colouring is not trusted.
pub const PARITY_SURE: f32 = 0.03;

/// How well an orientation of a displayed grid fits how games look: the log-likelihood of
/// the piece model's readings with the square prior of that orientation, summed over the
/// squares (per square, the log-sum-exp over classes of the tempered logits plus
/// [`PRIOR_WEIGHT`] × the prior). Where the pieces stand in games (pawns and kings near
/// their own side, the back ranks' pieces) decides, weighed by how sure each reading is.
fn prior_fit(displayed: &[[f32; SQUARE_CLASSES]], o: Orientation) -> f32 {
    let mut v = displayed[..displayed.len().min(64)].to_vec();
    add_square_prior(&mut v, o);
    v.iter()
        .map(|row| {
            let m = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            m + row.iter().map(|x| (x - m).exp()).sum::<f32>().ln()
        })
        .sum()
}

/// How the frame's squares alternate light and dark: the mean grey of its odd squares
/// minus its even squares (a1 is even) and how many standard errors that stands from zero.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CheckerContrast {
    /// Mean grey of the odd squares minus the even ones (0..1 either way).
    pub parity: f32,
    /// `parity` over its standard error (Welch), from the spread of the squares' greys
    /// within each colour; 0 when fewer than two squares of a colour were measured.
    pub t: f32,
}

/// [`CheckerContrast`] of the frame `h` in `img`: each square's grey is the median of four
/// points near its corners, where a piece's round base rarely stands.
pub fn checker_contrast(img: &RgbImage, h: &Homography) -> CheckerContrast {
    let (mut even, mut odd) = (Vec::with_capacity(32), Vec::with_capacity(32));
    for rank in 0..8 {
        for file in 0..8 {
            let mut v = Vec::with_capacity(4);
            for (u, w) in [(0.15, 0.15), (0.85, 0.15), (0.85, 0.85), (0.15, 0.85)] {
                if let Some([x, y]) = h.apply([file as f64 + u, rank as f64 + w]) {
                    if let Some(g) = grey_at(img, x as f32, y as f32) {
                        v.push(g);
                    }
                }
            }
            if v.len() < 2 {
                continue;
            }
            v.sort_by(f32::total_cmp);
            let m = (v[(v.len() - 1) / 2] + v[v.len() / 2]) / 2.0;
            if (file + rank) % 2 == 0 {
                even.push(m);
            } else {
                odd.push(m);
            }
        }
    }
    let stats = |v: &[f32]| {
        let n = v.len() as f32;
        let mean = v.iter().sum::<f32>() / n;
        let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f32>() / (n - 1.0).max(1.0);
        (mean, var / n)
    };
    if even.is_empty() || odd.is_empty() {
        return CheckerContrast {
            parity: 0.0,
            t: 0.0,
        };
    }
    let ((me, se), (mo, so)) = (stats(&even), stats(&odd));
    let parity = mo - me;
    let t = if even.len() < 2 || odd.len() < 2 {
        0.0
    } else {
        // a board of perfectly flat colours has no spread: any difference is sure
        parity.abs() / (se + so).sqrt().max(1e-4)
    };
    CheckerContrast { parity, t }
}

fn grey_at(img: &RgbImage, x: f32, y: f32) -> Option<f32> {
    if x < 0.0 || y < 0.0 || x >= img.width() as f32 || y >= img.height() as f32 {
        return None;
    }
    let p = img.get_pixel(x as u32, y as u32);
    Some((0.299 * p[0] as f32 + 0.587 * p[1] as f32 + 0.114 * p[2] as f32) / 255.0)
}

/// Finds the board: corner peaks, the first homography, a least-squares refit to the
/// lattice peaks; then a corner moved ([`move_corners`]) or a board grown from the
/// lattice peaks alone ([`lattice_board`]) when it fits the peaks [`MOVE_GAIN`] better.
///
/// # Errors
///
/// [`BoardError::Locate`] when neither four corner peaks nor the lattice peaks (with fewer
/// than [`OUTSIDE_PEAKS`] outside it) make a board, or the model fails
/// ([`BoardError::Model`]).
pub fn find_lattice(img: &RgbImage) -> Result<Lattice, BoardError> {
    let model = CornerModel::get().map_err(BoardError::Model)?;
    let (corners, lattice) = lattice_peaks(model, img)?;
    let found = match fit_lattice(&corners, &lattice, img.width() as f64 * img.height() as f64) {
        Ok(found) => found,
        // No four corner peaks make a board: the lattice peaks may still show one, taken
        // only when few of them lie outside it.
        Err(e) => {
            return lattice_board(&corners, &lattice, 0.0)
                .filter(|g| g.outside < OUTSIDE_PEAKS)
                .map(|g| Lattice {
                    lattice_only: true,
                    ..g
                })
                .ok_or(e)
        }
    };
    let moved = move_corners(found, &corners, &lattice);
    Ok(match lattice_board(&corners, &lattice, moved.corner_prob) {
        Some(g)
            if placement_score(&g.homography, &corners, &lattice)
                >= placement_score(&moved.homography, &corners, &lattice) + MOVE_GAIN =>
        {
            g
        }
        _ => moved,
    })
}

/// Lattice peaks tried as the seed of [`grow_grid`], strongest first.
const GRID_SEEDS: usize = 8;
/// A lattice peak takes a grid label when it lies this near (in squares) to the lattice
/// point the grid predicts.
const GRID_RADIUS: f64 = 0.25;
/// Lattice steps beyond its labels that a grid labels peaks in one round of [`grow_grid`].
const GRID_GROWTH: i32 = 2;

/// The board the lattice peaks alone show, for photos whose corner peaks make no board
/// or a wrong one (a corner off the photo, a piece's head taken for a corner): the
/// lattice of squares grown from each of the strongest peaks in turn ([`grow_grid`]), the
/// one that labels the most peaks kept; then, of the 9 × 9 windows of that lattice, the one
/// that fits the peaks best ([`placement_score`]: the outer corners the corner model marks
/// decide where a board that runs off the photo ends), refitted to its lattice peaks.
fn lattice_board(corners: &[Peak], lattice: &[Peak], corner_prob: f32) -> Option<Lattice> {
    let (mut grid, mut labels) = (0..lattice.len().min(GRID_SEEDS))
        .filter_map(|s| grow_grid(lattice, s))
        .max_by_key(|g| g.1.len())?;
    if labels.len() < MIN_MATCHED {
        return None;
    }
    let bounds = |labels: &[[i32; 2]]| {
        labels
            .iter()
            .fold(([i32::MAX; 2], [i32::MIN; 2]), |(lo, hi), l| {
                (
                    [lo[0].min(l[0]), lo[1].min(l[1])],
                    [hi[0].max(l[0]), hi[1].max(l[1])],
                )
            })
    };
    let area = |labels: &[[i32; 2]]| {
        let (lo, hi) = bounds(labels);
        i64::from(hi[0] - lo[0] + 1) * i64::from(hi[1] - lo[1] + 1)
    };
    // A step to a stray peak (half a square off) grows a lattice twice as fine as the
    // board's along it: the labels then lie on a sublattice, which becomes the grid.
    // A stray label or two (a peak that fits the finer grid by chance) are dropped first:
    // a parity that all but a tenth of the labels share.
    for _ in 0..3 {
        for w in [[1, 0], [0, 1], [1, 1]] {
            let odd = |l: &[i32; 2]| (w[0] * l[0] + w[1] * l[1]).rem_euclid(2) == 1;
            let n_odd = labels.iter().filter(|l| odd(l)).count();
            let keep_odd = n_odd * 2 > labels.len();
            let minority = if keep_odd {
                labels.len() - n_odd
            } else {
                n_odd
            };
            if minority > 0 && minority * 10 <= labels.len() {
                labels.retain(|l| odd(l) == keep_odd);
            }
        }
        let first = labels[0];
        let (b1, b2) = label_basis(labels.iter().map(|l| [l[0] - first[0], l[1] - first[1]]));
        let index = b1[0] * b2[1] - b1[1] * b2[0];
        if index <= 1 {
            break;
        }
        let det = f64::from(index);
        // l = first + B · l', so l' = B⁻¹ (l - first) is whole.
        let to = Homography([
            [f64::from(b1[0]), f64::from(b2[0]), f64::from(first[0])],
            [f64::from(b1[1]), f64::from(b2[1]), f64::from(first[1])],
            [0.0, 0.0, 1.0],
        ]);
        grid = to.then(&grid);
        labels = labels
            .iter()
            .map(|l| {
                let (x, y) = (f64::from(l[0] - first[0]), f64::from(l[1] - first[1]));
                [
                    ((f64::from(b2[1]) * x - f64::from(b2[0]) * y) / det).round() as i32,
                    ((f64::from(b1[0]) * y - f64::from(b1[1]) * x) / det).round() as i32,
                ]
            })
            .collect();
    }
    if labels.len() < MIN_MATCHED {
        return None;
    }
    // A seed whose steps were a side and a diagonal grows a sheared lattice: the same
    // points, labelled along a diagonal. Shears are undone while they make the labels'
    // extent smaller (a board's is 9 × 9).
    'shear: for _ in 0..16 {
        for m in [[1, 1, 0, 1], [1, -1, 0, 1], [1, 0, 1, 1], [1, 0, -1, 1]] {
            let t: Vec<[i32; 2]> = labels
                .iter()
                .map(|l| [m[0] * l[0] + m[1] * l[1], m[2] * l[0] + m[3] * l[1]])
                .collect();
            if area(&t) < area(&labels) {
                // grid'(m · l) = grid(l): m's inverse, then the grid.
                let inv = Homography([
                    [f64::from(m[3]), -f64::from(m[1]), 0.0],
                    [-f64::from(m[2]), f64::from(m[0]), 0.0],
                    [0.0, 0.0, 1.0],
                ]);
                grid = inv.then(&grid);
                labels = t;
                continue 'shear;
            }
        }
        break;
    }
    let (lo, hi) = bounds(&labels);
    let mut best: Option<(f32, Homography)> = None;
    let span = |k: usize| (hi[k] - 8).min(lo[k])..=(hi[k] - 8).max(lo[k]);
    for a in span(0) {
        for b in span(1) {
            let shift = Homography([
                [1.0, 0.0, f64::from(a)],
                [0.0, 1.0, f64::from(b)],
                [0.0, 0.0, 1.0],
            ]);
            let h = shift.then(&grid);
            let score = placement_score(&h, corners, lattice);
            if best.as_ref().is_none_or(|b| score > b.0) {
                best = Some((score, h));
            }
        }
    }
    let (_, h) = best?;
    let quad = BOARD_CORNERS.map(|b| h.apply(b).map(|[x, y]| Peak { x, y, p: 0.0 }));
    let quad = [quad[0]?, quad[1]?, quad[2]?, quad[3]?];
    let h = Homography::from_corners(&frame_order(&quad))?;
    settle(h, corner_prob, lattice).ok()
}

/// A basis (Hermite normal form: `(a, b)` and `(0, d)`, `a, d > 0`) of the integer lattice
/// the vectors span; `((1, 0), (0, 1))` when they span no lattice of full rank.
fn label_basis(vectors: impl Iterator<Item = [i32; 2]>) -> ([i32; 2], [i32; 2]) {
    fn gcd_ext(a: i64, b: i64) -> (i64, i64, i64) {
        // (g, s, t) with s·a + t·b = g = gcd(a, b) ≥ 0
        if b == 0 {
            (a.abs(), a.signum(), 0)
        } else {
            let (g, s, t) = gcd_ext(b, a.rem_euclid(b));
            (g, t, s - a.div_euclid(b) * t)
        }
    }
    let (mut a, mut b, mut d) = (0i64, 0i64, 0i64);
    for v in vectors {
        let (x, y) = (i64::from(v[0]), i64::from(v[1]));
        if x == 0 && y == 0 {
            continue;
        }
        // Combine (x, y) with (a, b): their gcd in the first coordinate, the rest on d.
        let (g, s, t) = gcd_ext(a, x);
        let rest = if g == 0 { y } else { (a / g) * y - (x / g) * b };
        if g != 0 {
            b = s * b + t * y;
            a = g;
        }
        d = gcd_ext(d, rest).0;
        if d != 0 {
            b = b.rem_euclid(d);
        }
    }
    if a == 0 || d == 0 {
        return ([1, 0], [0, 1]);
    }
    let c = |v: i64| i32::try_from(v).unwrap_or(1);
    ([c(a), c(b)], [0, c(d)])
}

/// The lattice of squares grown from lattice peak `seed`: a first grid from the seed and
/// its two shortest independent steps to other peaks (reduced, so that a diagonal step
/// becomes a side), then refitted to the peaks it labels, again and again while more take
/// a label. Returns the grid (lattice coordinates → image) and the labels taken; the
/// labels are the board's up to a shift (which window is the board: [`lattice_board`]),
/// and `None` when no grid could be grown.
fn grow_grid(lattice: &[Peak], seed: usize) -> Option<(Homography, Vec<[i32; 2]>)> {
    let p0 = lattice.get(seed)?;
    let mut steps: Vec<[f64; 2]> = lattice
        .iter()
        .map(|k| [k.x - p0.x, k.y - p0.y])
        .filter(|d| d[0].hypot(d[1]) > 1.0)
        .collect();
    steps.sort_by(|a, b| a[0].hypot(a[1]).total_cmp(&b[0].hypot(b[1])));
    let e1 = *steps.first()?;
    let n1 = e1[0] * e1[0] + e1[1] * e1[1];
    // The shortest step not along e1, reduced against it.
    let e2 = steps
        .iter()
        .take(12)
        .filter_map(|d| {
            let k = ((d[0] * e1[0] + d[1] * e1[1]) / n1).round();
            let r = [d[0] - k * e1[0], d[1] - k * e1[1]];
            let cross = (e1[0] * r[1] - e1[1] * r[0]).abs();
            (cross > 0.3 * n1).then_some(r)
        })
        .min_by(|a, b| a[0].hypot(a[1]).total_cmp(&b[0].hypot(b[1])))?;
    let mut grid = Homography([[e1[0], e2[0], p0.x], [e1[1], e2[1], p0.y], [0.0, 0.0, 1.0]]);
    let mut labels: Vec<[i32; 2]> = Vec::new();
    let mut before = grid;
    // The grid is trusted near the labels it was fitted to, not far beyond them (a first,
    // affine grid misses the perspective): it grows by up to GRID_GROWTH lattice steps a
    // round.
    let mut known: std::collections::HashSet<[i32; 2]> = [[0, 0]].into();
    for _ in 0..24 {
        let inv = grid.inverse()?;
        let mut taken: HashMap<[i32; 2], (f64, [f64; 2])> = HashMap::new();
        for k in lattice {
            let Some([u, v]) = inv.apply([k.x, k.y]) else {
                continue;
            };
            let (i, j) = (u.round(), v.round());
            let d = (u - i).hypot(v - j);
            if d > GRID_RADIUS || i.abs() > 16.0 || j.abs() > 16.0 {
                continue;
            }
            let l = [i as i32, j as i32];
            let near_known = (-GRID_GROWTH..=GRID_GROWTH).any(|di| {
                (-GRID_GROWTH..=GRID_GROWTH).any(|dj| known.contains(&[l[0] + di, l[1] + dj]))
            });
            if !near_known {
                continue;
            }
            if taken.get(&l).is_none_or(|t| d < t.0) {
                taken.insert(l, (d, [k.x, k.y]));
            }
        }
        if taken.len() <= labels.len() {
            // A refit that labels fewer peaks than the grid before it went astray.
            if taken.len() < labels.len() {
                grid = before;
            }
            break;
        }
        let pairs: Vec<PointPair> = taken
            .iter()
            .map(|(l, (_, p))| ([f64::from(l[0]), f64::from(l[1])], *p))
            .collect();
        labels = taken.into_keys().collect();
        known = labels.iter().copied().collect();
        // A few labels near the seed say little about perspective: an affine grid until
        // the labels spread.
        let next = if pairs.len() >= 16 {
            fit_homography(&pairs)
        } else {
            fit_affine(&pairs)
        };
        match next {
            Some(g) => (before, grid) = (grid, g),
            None => break,
        }
    }
    Some((grid, labels))
}

/// The least-squares affine map through the pairs (board point, image point); `None` when
/// the board points are collinear.
fn fit_affine(pairs: &[PointPair]) -> Option<Homography> {
    // Normal equations of x = a·u + b·v + c (and of y), centred on the means.
    let n = pairs.len() as f64;
    let mean = |f: &dyn Fn(&PointPair) -> f64| pairs.iter().map(f).sum::<f64>() / n;
    let (mu, mv) = (mean(&|p| p.0[0]), mean(&|p| p.0[1]));
    let (mx, my) = (mean(&|p| p.1[0]), mean(&|p| p.1[1]));
    let (mut suu, mut suv, mut svv) = (0.0, 0.0, 0.0);
    let (mut sux, mut svx, mut suy, mut svy) = (0.0, 0.0, 0.0, 0.0);
    for (b, im) in pairs {
        let (u, v, x, y) = (b[0] - mu, b[1] - mv, im[0] - mx, im[1] - my);
        suu += u * u;
        suv += u * v;
        svv += v * v;
        sux += u * x;
        svx += v * x;
        suy += u * y;
        svy += v * y;
    }
    let det = suu * svv - suv * suv;
    if det.abs() <= 1e-9 * (suu * svv).max(1e-12) {
        return None;
    }
    let solve = |su: f64, sv: f64| ((svv * su - suv * sv) / det, (suu * sv - suv * su) / det);
    let (a, b) = solve(sux, svx);
    let (d, e) = solve(suy, svy);
    Some(Homography([
        [a, b, mx - a * mu - b * mv],
        [d, e, my - d * mu - e * mv],
        [0.0, 0.0, 1.0],
    ]))
}

/// How far ([`CORNER_REACH`] squares either way) and how finely (coarse, then fine steps,
/// in squares) [`move_corners`] searches for a corner the corner model did not mark.
const CORNER_REACH: f64 = 4.0;
const CORNER_STEPS: [f64; 2] = [0.5, 0.125];
/// A board with a moved corner replaces the corner model's only when it fits the peaks
/// this much better ([`placement_score`]).
const MOVE_GAIN: f32 = 4.0;

/// A board that runs off the photo has a corner the corner model cannot mark, and its
/// best four corner peaks then make a wrong board (a corner on the photo's edge), although
/// the lattice peaks show the squares well. Each outer corner in turn is searched for on
/// a grid around where `found` puts it (the other three kept), scored by how well the
/// board fits the peaks ([`placement_score`]); twice, for boards with two such corners.
/// The best board replaces `found`, refitted to its lattice peaks, when it fits
/// [`MOVE_GAIN`] better; otherwise `found` is kept as it is.
fn move_corners(found: Lattice, corners: &[Peak], lattice: &[Peak]) -> Lattice {
    let mut best = (placement_score(&found.homography, corners, lattice), found);
    for _ in 0..2 {
        let h = best.1.homography;
        let Some(quad) = BOARD_CORNERS
            .iter()
            .map(|&b| h.apply(b))
            .collect::<Option<Vec<_>>>()
        else {
            break;
        };
        let mut moved: Option<(f32, Homography, usize, [f64; 2])> = None;
        for c in 0..4 {
            for (k, step) in CORNER_STEPS.into_iter().enumerate() {
                // The coarse grid around the corner; the fine one around the coarse best.
                let (centre, reach) = match (k, &moved) {
                    (0, _) => (BOARD_CORNERS[c], CORNER_REACH),
                    (_, Some(m)) if m.2 == c => (m.3, CORNER_STEPS[0]),
                    _ => continue,
                };
                let n = (reach / step).round() as i32;
                for i in -n..=n {
                    for j in -n..=n {
                        let b = [
                            centre[0] + f64::from(i) * step,
                            centre[1] + f64::from(j) * step,
                        ];
                        let Some(p) = h.apply(b) else { continue };
                        let mut q = [quad[0], quad[1], quad[2], quad[3]];
                        q[c] = p;
                        let Some(hc) = Homography::from_points(&BOARD_CORNERS, &q) else {
                            continue;
                        };
                        if !plausible(&hc) {
                            continue;
                        }
                        let score = placement_score(&hc, corners, lattice);
                        if moved.as_ref().is_none_or(|m| score > m.0) {
                            moved = Some((score, hc, c, b));
                        }
                    }
                }
            }
        }
        let Some((score, hc, ..)) = moved else { break };
        if score < best.0 + MOVE_GAIN {
            break;
        }
        let Ok(lat) = settle(hc, best.1.corner_prob, lattice) else {
            break;
        };
        let settled = placement_score(&lat.homography, corners, lattice);
        if settled < best.0 + MOVE_GAIN {
            break;
        }
        best = (settled, lat);
    }
    best.1
}

/// How well the board `h` fits a corner model's peaks, measured on the board (where a
/// square is one unit however the camera sees it): the lattice points matched by a lattice
/// peak within [`MATCH_RADIUS`], plus 4 × the strongest corner peak within it of each outer
/// corner, less the lattice peaks outside the board (more than a third of a square beyond
/// its edges: the corner model marks no point off the playing area). A board that runs
/// off the photo loses nothing for its squares out of sight.
fn placement_score(h: &Homography, corners: &[Peak], lattice: &[Peak]) -> f32 {
    let Some(inv) = h.inverse() else {
        return f32::NEG_INFINITY;
    };
    let near = |u: f64, v: f64| {
        let (i, j) = (u.round(), v.round());
        ((u - i).hypot(v - j) <= MATCH_RADIUS).then_some((i, j))
    };
    let mut seen = [false; 81];
    let mut outside = 0u32;
    for k in lattice {
        match inv.apply([k.x, k.y]) {
            Some([u, v]) if on_board(u) && on_board(v) => {
                if let Some((i, j)) = near(u, v) {
                    if (0.0..=8.0).contains(&i) && (0.0..=8.0).contains(&j) {
                        seen[(j * 9.0 + i) as usize] = true;
                    }
                }
            }
            _ => outside += 1,
        }
    }
    let mut support = [0.0f32; 4];
    for k in corners {
        let Some([u, v]) = inv.apply([k.x, k.y]) else {
            continue;
        };
        for (s, b) in support.iter_mut().zip(BOARD_CORNERS) {
            if (u - b[0]).hypot(v - b[1]) <= MATCH_RADIUS {
                *s = s.max(k.p);
            }
        }
    }
    let matched = seen.iter().filter(|s| **s).count() as f32;
    matched + 4.0 * support.iter().sum::<f32>() - outside as f32
}

/// A corner model's peaks on `img`, in its pixels: up to 8 outer-corner candidates (at least
/// [`MIN_CORNER`]) and up to 160 lattice points (at least [`MIN_LATTICE`]), strongest first.
///
/// # Errors
///
/// The model fails.
pub fn lattice_peaks(
    model: &CornerModel,
    img: &RgbImage,
) -> Result<(Vec<Peak>, Vec<Peak>), BoardError> {
    let small = crate::vision::resize(img, model.side, model.side);
    lattice_peaks_resized(model, &small, img.dimensions())
}

/// [`lattice_peaks`] of an image of `size` (width, height) already resized to the model's
/// input side (`small`), in the pixels of the full-size image.
///
/// # Errors
///
/// The model fails.
pub fn lattice_peaks_resized(
    model: &CornerModel,
    small: &RgbImage,
    size: (u32, u32),
) -> Result<(Vec<Peak>, Vec<Peak>), BoardError> {
    let maps = model
        .run(small)
        .map_err(|e| BoardError::Model(format!("{e:#}")))?;
    let (sx, sy) = (
        f64::from(size.0) / f64::from(small.width()),
        f64::from(size.1) / f64::from(small.height()),
    );
    let to_img = |p: &Peak| Peak {
        x: p.x * sx,
        y: p.y * sy,
        p: p.p,
    };
    let corners: Vec<Peak> = maps.peaks(0, MIN_CORNER, 8).iter().map(to_img).collect();
    let lattice: Vec<Peak> = maps.peaks(1, MIN_LATTICE, 160).iter().map(to_img).collect();
    Ok((corners, lattice))
}

/// The board that a corner model's peaks ([`lattice_peaks`]) show in an image of `area`
/// pixels: of the convex quadrilaterals the corner candidates make, the one whose lattice
/// the lattice peaks confirm best, refitted to the lattice peaks it matches.
///
/// # Errors
///
/// [`BoardError::Locate`] when no four corner peaks make a board whose lattice at least
/// [`MIN_MATCHED`] lattice peaks confirm.
pub fn fit_lattice(corners: &[Peak], lattice: &[Peak], area: f64) -> Result<Lattice, BoardError> {
    let no = |why: String| BoardError::Locate(LocateError::NoSet(why));
    // Of the convex quadrilaterals the corner candidates make, the one whose lattice the
    // lattice peaks confirm best (a stray corner peak on a clock or a sheet predicts a
    // lattice nothing confirms).
    let mut best: Option<(f32, Homography, f32)> = None;
    for quad in convex_quads(corners, area) {
        let Some(h) = Homography::from_corners(&frame_order(&quad)) else {
            continue;
        };
        let (_, n) = lattice_matches(&h, lattice);
        let probs: f32 = quad.iter().map(|p| p.p).sum();
        let score = n as f32 + 4.0 * probs;
        if best.as_ref().is_none_or(|b| score > b.0) {
            let min_p = quad.iter().map(|p| p.p).fold(1.0f32, f32::min);
            best = Some((score, h, min_p));
        }
    }
    let (_, h, corner_prob) = best.ok_or_else(|| {
        no(format!(
            "no board: {} corner candidate{}, no four of them make a board",
            corners.len(),
            if corners.len() == 1 { "" } else { "s" }
        ))
    })?;
    settle(h, corner_prob, lattice)
}

/// The board `h` refitted to the lattice peaks it matches, as a [`Lattice`].
///
/// # Errors
///
/// [`BoardError::Locate`] when fewer than [`MIN_MATCHED`] lattice peaks confirm it.
fn settle(mut h: Homography, corner_prob: f32, lattice: &[Peak]) -> Result<Lattice, BoardError> {
    let no = |why: String| BoardError::Locate(LocateError::NoSet(why));
    let mut matched = 0;
    for _ in 0..2 {
        let (pairs, n) = lattice_matches(&h, lattice);
        matched = n;
        if n < 12 {
            break;
        }
        // A refit that bends the board into a shape no camera sees (a sliver, a corner
        // folded back) went after the wrong peaks: keep what the corners said.
        match fit_homography(&pairs).filter(plausible) {
            Some(better) => h = better,
            None => break,
        }
    }
    if matched < MIN_MATCHED {
        return Err(no(format!(
            "no board: the best four corners predict a lattice only {matched} of whose 81 points were seen"
        )));
    }
    let mut corners_out = [[0.0f32; 2]; 4];
    for (o, b) in corners_out.iter_mut().zip(BOARD_CORNERS) {
        let [x, y] = h
            .apply(b)
            .ok_or_else(|| no("the fitted lattice leaves the image".into()))?;
        *o = [x as f32, y as f32];
    }
    let outside = match h.inverse() {
        Some(inv) => lattice
            .iter()
            .filter(|k| {
                inv.apply([k.x, k.y])
                    .is_none_or(|[u, v]| !on_board(u) || !on_board(v))
            })
            .count(),
        None => lattice.len(),
    };
    Ok(Lattice {
        corners: corners_out,
        homography: h,
        corner_prob,
        matched,
        lattice_only: false,
        outside,
    })
}

/// Whether a board coordinate lies on the playing area or within a third of a square of
/// it (a lattice peak beyond that lies outside the board: [`Lattice::outside`]).
fn on_board(v: f64) -> bool {
    (-0.35..=8.35).contains(&v)
}

/// How well a corner model's peaks confirm the board `h` maps into the image: the lattice
/// points matched by a lattice peak (of 81) plus, for each outer corner, 4 × the
/// probability of the strongest corner peak within [`MATCH_RADIUS`] of a square of it (the
/// score [`fit_lattice`] chooses its corners by).
pub fn lattice_support(h: &Homography, corners: &[Peak], lattice: &[Peak]) -> f32 {
    let (_, n) = lattice_matches(h, lattice);
    let mut probs = 0.0;
    for b in BOARD_CORNERS {
        let (Some(p), Some(q)) = (
            h.apply(b),
            h.apply([if b[0] > 0.0 { 7.0 } else { 1.0 }, b[1]]),
        ) else {
            continue;
        };
        let r = MATCH_RADIUS * (q[0] - p[0]).hypot(q[1] - p[1]);
        probs += corners
            .iter()
            .filter(|k| (k.x - p[0]).hypot(k.y - p[1]) <= r)
            .map(|k| k.p)
            .fold(0.0f32, f32::max);
    }
    n as f32 + 4.0 * probs
}

/// A local maximum of a heat map, in image pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Peak {
    pub x: f64,
    pub y: f64,
    pub p: f32,
}

/// Every four of the strongest eight peaks that make a convex quadrilateral covering at
/// least 1 % of the image, with no angle sharper than [`MIN_ANGLE_DEG`] (a board seen from
/// 30° or more above the table never looks like a sliver or a triangle).
fn convex_quads(peaks: &[Peak], image_area: f64) -> Vec<[Peak; 4]> {
    let n = peaks.len().min(8);
    let mut out = Vec::new();
    for a in 0..n {
        for b in a + 1..n {
            for c in b + 1..n {
                for d in c + 1..n {
                    let q = [peaks[a], peaks[b], peaks[c], peaks[d]];
                    if convex_area(&q).is_some_and(|area| area >= 0.01 * image_area)
                        && min_angle_deg(&q) >= MIN_ANGLE_DEG
                    {
                        out.push(q);
                    }
                }
            }
        }
    }
    out
}

/// Whether a homography's board outline is convex with no angle sharper than
/// [`MIN_ANGLE_DEG`].
fn plausible(h: &Homography) -> bool {
    let mut q = [Peak {
        x: 0.0,
        y: 0.0,
        p: 0.0,
    }; 4];
    for (o, b) in q.iter_mut().zip(BOARD_CORNERS) {
        let Some([x, y]) = h.apply(b) else {
            return false;
        };
        *o = Peak { x, y, p: 0.0 };
    }
    convex_area(&q).is_some() && min_angle_deg(&q) >= MIN_ANGLE_DEG
}

/// The sharpest interior angle of a convex quadrilateral, degrees.
fn min_angle_deg(q: &[Peak; 4]) -> f64 {
    let o = frame_order(q);
    let mut min = 180.0f64;
    for i in 0..4 {
        let (p, a, b) = (o[i], o[(i + 3) % 4], o[(i + 1) % 4]);
        let (ax, ay) = (f64::from(a[0] - p[0]), f64::from(a[1] - p[1]));
        let (bx, by) = (f64::from(b[0] - p[0]), f64::from(b[1] - p[1]));
        let cos = (ax * bx + ay * by) / (ax.hypot(ay) * bx.hypot(by)).max(1e-12);
        min = min.min(cos.clamp(-1.0, 1.0).acos().to_degrees());
    }
    min
}

/// The quadrilateral's corners as a1, h1, h8, a8 of the reading frame: clockwise on screen
/// (y down: descending angle around the centre), starting so that the a1–h1 edge is the
/// one lowest in the image.
fn frame_order(quad: &[Peak; 4]) -> [[f32; 2]; 4] {
    let mut pts = quad.map(|p| [p.x, p.y]);
    let cx = pts.iter().map(|p| p[0]).sum::<f64>() / 4.0;
    let cy = pts.iter().map(|p| p[1]).sum::<f64>() / 4.0;
    pts.sort_by(|a, b| {
        let ta = (a[1] - cy).atan2(a[0] - cx);
        let tb = (b[1] - cy).atan2(b[0] - cx);
        tb.total_cmp(&ta)
    });
    let k = (0..4)
        .max_by(|&i, &j| {
            let yi = pts[i][1] + pts[(i + 1) % 4][1];
            let yj = pts[j][1] + pts[(j + 1) % 4][1];
            yi.total_cmp(&yj)
        })
        .unwrap_or(0);
    pts.rotate_left(k);
    pts.map(|[x, y]| [x as f32, y as f32])
}

/// Area of the convex quadrilateral the four points make in some order, `None` when one of
/// them lies inside the triangle of the others.
fn convex_area(q: &[Peak; 4]) -> Option<f64> {
    let cx = q.iter().map(|p| p.x).sum::<f64>() / 4.0;
    let cy = q.iter().map(|p| p.y).sum::<f64>() / 4.0;
    let mut v: Vec<[f64; 2]> = q.iter().map(|p| [p.x, p.y]).collect();
    v.sort_by(|a, b| {
        (a[1] - cy)
            .atan2(a[0] - cx)
            .total_cmp(&(b[1] - cy).atan2(b[0] - cx))
    });
    let mut sign = 0.0f64;
    let mut area = 0.0;
    for i in 0..4 {
        let (p, q1, r) = (v[i], v[(i + 1) % 4], v[(i + 2) % 4]);
        let cross = (q1[0] - p[0]) * (r[1] - q1[1]) - (q1[1] - p[1]) * (r[0] - q1[0]);
        if cross == 0.0 || (sign != 0.0 && cross.signum() != sign) {
            return None;
        }
        sign = cross.signum();
        area += p[0] * q1[1] - q1[0] * p[1];
    }
    Some(area.abs() / 2.0)
}

/// A board point and where it is in the image.
pub type PointPair = ([f64; 2], [f64; 2]);

/// Each of the 81 lattice points, as `h` predicts it, paired with the nearest lattice peak
/// within [`MATCH_RADIUS`] of a square (the four outer corners always paired with where `h`
/// puts them, so the refit cannot drift from the corner model's corners without evidence).
/// Returns the pairs (board point, image point) and how many were matched by a peak.
fn lattice_matches(h: &Homography, peaks: &[Peak]) -> (Vec<PointPair>, usize) {
    let mut pairs = Vec::new();
    let mut n = 0;
    for j in 0..=8 {
        for i in 0..=8 {
            let b = [i as f64, j as f64];
            let Some(p) = h.apply(b) else { continue };
            // the local size of a square: the distance to the next lattice point
            let q = h.apply([b[0] + if i < 8 { 1.0 } else { -1.0 }, b[1]]);
            let Some(q) = q else { continue };
            // Squared distances: this runs for every lattice point of every candidate
            // board against every peak (hundreds of thousands of pairs an image), where
            // `hypot` was 6.4 % of an `auto` reading of the slowest held-out photos.
            let r = MATCH_RADIUS * (q[0] - p[0]).hypot(q[1] - p[1]);
            let r2 = r * r;
            let near = peaks
                .iter()
                .map(|k| {
                    let (dx, dy) = (k.x - p[0], k.y - p[1]);
                    (dx * dx + dy * dy, k)
                })
                .filter(|(d2, _)| *d2 <= r2)
                .min_by(|a, b| a.0.total_cmp(&b.0));
            if let Some((_, k)) = near {
                pairs.push((b, [k.x, k.y]));
                n += 1;
            } else if (i == 0 || i == 8) && (j == 0 || j == 8) {
                pairs.push((b, p));
            }
        }
    }
    (pairs, n)
}

/// The least-squares homography (DLT with `h33 = 1`, on normalised points) through the
/// pairs (board point, image point); `None` when there are fewer than 4 or the system is
/// singular.
pub fn fit_homography(pairs: &[PointPair]) -> Option<Homography> {
    if pairs.len() < 4 {
        return None;
    }
    // Normalise the image points (centre, mean distance √2) and the board points (/8).
    let n = pairs.len() as f64;
    let mx = pairs.iter().map(|p| p.1[0]).sum::<f64>() / n;
    let my = pairs.iter().map(|p| p.1[1]).sum::<f64>() / n;
    let md = pairs
        .iter()
        .map(|p| (p.1[0] - mx).hypot(p.1[1] - my))
        .sum::<f64>()
        / n;
    if md.is_nan() || md <= 0.0 {
        return None;
    }
    let s = std::f64::consts::SQRT_2 / md;
    let mut ata = [[0.0f64; 8]; 8];
    let mut atb = [0.0f64; 8];
    for &(b, im) in pairs {
        let (x, y) = (b[0] / 8.0, b[1] / 8.0);
        let (u, v) = ((im[0] - mx) * s, (im[1] - my) * s);
        let rows = [
            ([x, y, 1.0, 0.0, 0.0, 0.0, -u * x, -u * y], u),
            ([0.0, 0.0, 0.0, x, y, 1.0, -v * x, -v * y], v),
        ];
        for (a, rhs) in rows {
            for i in 0..8 {
                atb[i] += a[i] * rhs;
                for j in 0..8 {
                    ata[i][j] += a[i] * a[j];
                }
            }
        }
    }
    let h = solve8(ata, atb)?;
    // Undo the normalisations: H = T⁻¹ · Hn · diag(1/8, 1/8, 1).
    let hn = [[h[0], h[1], h[2]], [h[3], h[4], h[5]], [h[6], h[7], 1.0]];
    let tinv = [[1.0 / s, 0.0, mx], [0.0, 1.0 / s, my], [0.0, 0.0, 1.0]];
    let mut m = [[0.0f64; 3]; 3];
    for (i, row) in m.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            let col_scale = if j < 2 { 1.0 / 8.0 } else { 1.0 };
            *v = (0..3).map(|k| tinv[i][k] * hn[k][j]).sum::<f64>() * col_scale;
        }
    }
    // Through four of the pairs' board points again, so the sign and norm conventions of
    // `Homography::from_points` hold.
    let src = BOARD_CORNERS;
    let mut dst = [[0.0; 2]; 4];
    for (d, s) in dst.iter_mut().zip(src) {
        let w = m[2][0] * s[0] + m[2][1] * s[1] + m[2][2];
        if w.is_nan() || w.abs() <= 1e-12 {
            return None;
        }
        *d = [
            (m[0][0] * s[0] + m[0][1] * s[1] + m[0][2]) / w,
            (m[1][0] * s[0] + m[1][1] * s[1] + m[1][2]) / w,
        ];
    }
    Homography::from_points(&src, &dst)
}

/// Gaussian elimination with partial pivoting on an 8 × 8 system.
fn solve8(mut a: [[f64; 8]; 8], mut b: [f64; 8]) -> Option<[f64; 8]> {
    for col in 0..8 {
        let piv = (col..8).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[piv][col].is_nan() || a[piv][col].abs() <= 1e-12 {
            return None;
        }
        a.swap(col, piv);
        b.swap(col, piv);
        let pivot_row = a[col];
        let pivot_b = b[col];
        for (row, rhs) in a.iter_mut().zip(b.iter_mut()).skip(col + 1) {
            let f = row[col] / pivot_row[col];
            for (v, p) in row.iter_mut().zip(pivot_row.iter()).skip(col) {
                *v -= f * p;
            }
            *rhs -= f * pivot_b;
        }
    }
    let mut x = [0.0; 8];
    for row in (0..8).rev() {
        let s: f64 = (row + 1..8).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - s) / a[row][row];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// The 64 piece crops of a board, in the frame's order (a1, b1, … h1, a2, … h8): each the
/// box above its square ([`square_box`]) resampled to `PIECE_W × PIECE_H`, RGB planes, 0..1.
pub fn cut_pieces(img: &RgbImage, cam: &Camera) -> Vec<f32> {
    cut_pieces_sized(img, cam, PIECE_W as usize, PIECE_H as usize)
}

/// [`cut_pieces`] with crops of `w × h` (larger crops for probes of the piece model's input
/// size; hamle itself reads `PIECE_W × PIECE_H`).
pub fn cut_pieces_sized(img: &RgbImage, cam: &Camera, w: usize, h: usize) -> Vec<f32> {
    let mut out = vec![0.0f32; 64 * 3 * w * h];
    for rank in 0..8u8 {
        for file in 0..8u8 {
            let i = rank as usize * 8 + file as usize;
            let b = square_box(cam, file, rank, PIECE_HEIGHT, PIECE_INSET);
            let dst = &mut out[i * 3 * w * h..(i + 1) * 3 * w * h];
            if let Some(b) = b {
                crop_into(img, b, w, h, dst);
            }
        }
    }
    out
}

/// Resamples the box `[x0, y0, x1, y1]` of `img` to `w × h`, RGB planes in 0..1: each
/// output pixel the mean of up to 4 × 4 bilinear samples (enough for boxes up to ~6 times
/// the output), outside the image clamped to its edge.
///
/// The samples of an output column share their x, those of a row their y, and bilinear
/// interpolation is separable: each column's samples become one list of (image column,
/// weight), each row's one list of (image row, weight), and the box is filtered along its
/// rows first, then down its columns (the same sums as sample by sample, in another order).
pub fn crop_into(img: &RgbImage, b: [f32; 4], w: usize, h: usize, dst: &mut [f32]) {
    let (bw, bh) = ((b[2] - b[0]).max(1e-3), (b[3] - b[1]).max(1e-3));
    let k = ((bw / w as f32).max(bh / h as f32) / 1.5)
        .ceil()
        .clamp(1.0, 4.0) as usize;
    let (iw, ih) = (img.width() as usize, img.height() as usize);
    if iw == 0 || ih == 0 || w == 0 || h == 0 {
        return;
    }
    // Per output coordinate, its 2k (image index, weight) taps; the mean's 1/k is in the
    // weights.
    let taps = |origin: f32, span: f32, out: usize, size: usize| -> Vec<[(usize, f32); 8]> {
        (0..out)
            .map(|o| {
                let mut t = [(0usize, 0.0f32); 8];
                for s in 0..k {
                    let x = origin + (o as f32 + (s as f32 + 0.5) / k as f32) * span / out as f32;
                    let x = (x - 0.5).clamp(0.0, (size - 1) as f32);
                    let x0 = x.floor() as usize;
                    let f = x - x0 as f32;
                    t[2 * s] = (x0, (1.0 - f) / k as f32);
                    t[2 * s + 1] = ((x0 + 1).min(size - 1), f / k as f32);
                }
                t
            })
            .collect()
    };
    let cols = taps(b[0], bw, w, iw);
    let rows = taps(b[1], bh, h, ih);
    let n = 2 * k;
    // The image rows any output row reads.
    let (r0, r1) = rows
        .iter()
        .flat_map(|t| &t[..n])
        .fold((usize::MAX, 0), |(lo, hi), t| (lo.min(t.0), hi.max(t.0)));
    // Along the rows: every image row the box needs, filtered to the output's columns.
    let raw = img.as_raw();
    let mut across = vec![[0.0f32; 3]; (r1 - r0 + 1) * w];
    for (r, line) in across.chunks_exact_mut(w).enumerate() {
        let src = &raw[(r0 + r) * iw * 3..(r0 + r + 1) * iw * 3];
        for (acc, t) in line.iter_mut().zip(&cols) {
            for &(x, wt) in &t[..n] {
                let p = &src[x * 3..x * 3 + 3];
                for c in 0..3 {
                    acc[c] += wt * p[c] as f32;
                }
            }
        }
    }
    // Down the columns.
    let plane = w * h;
    for (v, t) in rows.iter().enumerate() {
        for u in 0..w {
            let mut acc = [0.0f32; 3];
            for &(y, wt) in &t[..n] {
                let p = across[(y - r0) * w + u];
                for c in 0..3 {
                    acc[c] += wt * p[c];
                }
            }
            for c in 0..3 {
                dst[c * plane + v * w + u] = acc[c] / 255.0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seeded numbers in 0..1 (a 64-bit LCG), for tests that need many varied inputs.
    fn uniform(seed: u64) -> impl FnMut() -> f32 {
        let mut seed = seed;
        move || {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) as f32 / (1u64 << 31) as f32
        }
    }

    #[test]
    fn a_sets_board_confidence_is_the_tempered_product_of_its_squares() {
        let squares = |confs: &[f64]| -> Vec<super::super::SquareRead> {
            confs
                .iter()
                .enumerate()
                .map(|(i, &c)| super::super::SquareRead {
                    square: format!("{i}"),
                    piece: None,
                    confidence: c,
                })
                .collect()
        };
        // 64 squares at 0.99: 0.99^32 = 0.725, where the least sure square said 0.99.
        assert_eq!(board_confidence(&squares(&[0.99; 64])), 0.725);
        // One doubtful square among sure ones weighs as much as it should, not all.
        let mut one = [1.0; 64];
        one[17] = 0.36;
        assert_eq!(board_confidence(&squares(&one)), 0.6);
        // Many middling squares sink the board although none is under 0.9.
        assert!(board_confidence(&squares(&[0.93; 64])) < 0.1);
    }

    /// The reference for `crop_into`: the same crop, sample by sample (each output pixel the
    /// mean of up to 4 × 4 bilinear samples).
    fn crop_into_sampled(img: &RgbImage, b: [f32; 4], w: usize, h: usize, dst: &mut [f32]) {
        let (bw, bh) = ((b[2] - b[0]).max(1e-3), (b[3] - b[1]).max(1e-3));
        let k = ((bw / w as f32).max(bh / h as f32) / 1.5)
            .ceil()
            .clamp(1.0, 4.0) as usize;
        let (iw, ih) = (img.width() as f32, img.height() as f32);
        let plane = w * h;
        for v in 0..h {
            for u in 0..w {
                let mut acc = [0.0f32; 3];
                for sy in 0..k {
                    for sx in 0..k {
                        let x = b[0] + (u as f32 + (sx as f32 + 0.5) / k as f32) * bw / w as f32;
                        let y = b[1] + (v as f32 + (sy as f32 + 0.5) / k as f32) * bh / h as f32;
                        let px = bilinear_rgb(
                            img,
                            (x - 0.5).clamp(0.0, iw - 1.0),
                            (y - 0.5).clamp(0.0, ih - 1.0),
                        );
                        for c in 0..3 {
                            acc[c] += px[c];
                        }
                    }
                }
                let n = (k * k) as f32 * 255.0;
                for c in 0..3 {
                    dst[c * plane + v * w + u] = acc[c] / n;
                }
            }
        }
    }

    fn bilinear_rgb(img: &RgbImage, x: f32, y: f32) -> [f32; 3] {
        let (x0, y0) = (x.floor() as u32, y.floor() as u32);
        let (x1, y1) = (
            (x0 + 1).min(img.width() - 1),
            (y0 + 1).min(img.height() - 1),
        );
        let (fx, fy) = (x - x0 as f32, y - y0 as f32);
        let mut out = [0.0; 3];
        let (a, b, c, d) = (
            img.get_pixel(x0, y0),
            img.get_pixel(x1, y0),
            img.get_pixel(x0, y1),
            img.get_pixel(x1, y1),
        );
        for k in 0..3 {
            let top = a[k] as f32 * (1.0 - fx) + b[k] as f32 * fx;
            let bot = c[k] as f32 * (1.0 - fx) + d[k] as f32 * fx;
            out[k] = top * (1.0 - fy) + bot * fy;
        }
        out
    }

    /// A board whose corner and lattice peaks are exact is found with no lattice peak
    /// outside it; lattice peaks that go on past its edge (a bigger board, cut by the photo,
    /// whose corners the model put at the edge) are counted and flag the reading.
    #[test]
    fn lattice_peaks_outside_the_board_are_counted() {
        let corners: Vec<Peak> = BOARD_CORNERS.iter().map(|&b| peak(b, 0.9)).collect();
        let mut lattice: Vec<Peak> = (0..=8)
            .flat_map(|j| (0..=8).map(move |i| [f64::from(i), f64::from(j)]))
            .map(|b| peak(b, 0.8))
            .collect();
        let area = 640.0 * 480.0;
        let lat = fit_lattice(&corners, &lattice, area).unwrap();
        assert_eq!((lat.matched, lat.outside), (81, 0));
        // two more files of lattice points beyond the h-file
        lattice.extend((0..=8).flat_map(|j| [9.0, 10.0].map(|i| peak([i, f64::from(j)], 0.8))));
        let lat = fit_lattice(&corners, &lattice, area).unwrap();
        assert_eq!(lat.outside, 18);
        assert!(lat.outside >= OUTSIDE_PEAKS);
    }

    #[test]
    fn a_corner_off_the_photo_is_found_from_the_lattice() {
        let h = cam_homography();
        let area = 640.0 * 480.0;
        // Lattice points beyond the diagonal i + j = 13 are out of the photo; the corner
        // model marks a1, h1 and a8, and a point on the photo's edge for h8.
        let lattice: Vec<Peak> = (0..=8)
            .flat_map(|j| (0..=8).map(move |i| [f64::from(i), f64::from(j)]))
            .filter(|b| b[0] + b[1] <= 13.0)
            .map(|b| peak(b, 0.8))
            .collect();
        let corners: Vec<Peak> = [[0.0, 0.0], [8.0, 0.0], [7.0, 7.0], [0.0, 8.0]]
            .iter()
            .map(|&b| peak(b, 0.9))
            .collect();
        let err = |lat: &Lattice| {
            lat.corners
                .iter()
                .zip(BOARD_CORNERS)
                .map(|(c, b)| {
                    let [x, y] = h.apply(b).unwrap();
                    (f64::from(c[0]) - x).hypot(f64::from(c[1]) - y)
                })
                .fold(0.0f64, f64::max)
        };
        let found = fit_lattice(&corners, &lattice, area).unwrap();
        assert!(err(&found) > 8.0, "{}", err(&found));
        let moved = move_corners(found, &corners, &lattice);
        assert!(err(&moved) < 1.0, "{}", err(&moved));
        assert_eq!(moved.outside, 0);
        // A board the corner model marked in full is left as it was.
        let all: Vec<Peak> = BOARD_CORNERS.iter().map(|&b| peak(b, 0.9)).collect();
        let found = fit_lattice(&all, &lattice, area).unwrap();
        let before = found.corners;
        assert_eq!(move_corners(found, &all, &lattice).corners, before);
    }

    #[test]
    fn a_board_the_corner_peaks_miss_is_grown_from_the_lattice() {
        let h = cam_homography();
        let area = 640.0 * 480.0;
        // The strongest lattice peak is a stray one, half a square off the lattice (its
        // grid is twice as fine as the board's); 6 points hidden by pieces.
        let mut lattice = vec![peak([4.5, 4.0], 0.95)];
        lattice.extend(
            (0..=8)
                .flat_map(|j| (0..=8).map(move |i| [f64::from(i), f64::from(j)]))
                .filter(|b| !(b[1] == 3.0 && b[0] > 1.0 && b[0] < 7.0) && b != &[4.0, 5.0])
                .map(|b| peak(b, 0.8)),
        );
        // Two corner peaks: no four make a board.
        let corners: Vec<Peak> = [[0.0, 0.0], [8.0, 8.0]]
            .iter()
            .map(|&b| peak(b, 0.9))
            .collect();
        assert!(fit_lattice(&corners, &lattice, area).is_err());
        let lat = lattice_board(&corners, &lattice, 0.0).unwrap();
        for (c, b) in lat.corners.iter().zip(BOARD_CORNERS) {
            let [x, y] = h.apply(b).unwrap();
            assert!(
                (f64::from(c[0]) - x).hypot(f64::from(c[1]) - y) < 0.5,
                "{c:?} {} {}",
                lat.matched,
                lat.outside
            );
        }
        assert_eq!((lat.matched, lat.outside), (75, 0));
    }

    /// Whatever peaks the corner model gives (none, a few, collinear, on one spot, a true
    /// lattice with noise, random), finding the board from them never panics, and a board
    /// found has finite corners.
    #[test]
    fn any_peaks_find_a_board_or_none() {
        let mut r = uniform(40);
        let h = cam_homography();
        let mut grown = 0;
        for case in 0..300 {
            let n = (r() * 120.0) as usize;
            let lattice: Vec<Peak> = (0..n)
                .map(|k| {
                    let (x, y) = match case % 4 {
                        // a lattice with noise and some points missing
                        0 => {
                            let b = [f64::from((k % 9) as u8), f64::from(((k / 9) % 9) as u8)];
                            let [x, y] = h.apply(b).unwrap();
                            (
                                x + f64::from(r() - 0.5) * 8.0,
                                y + f64::from(r() - 0.5) * 8.0,
                            )
                        }
                        // collinear
                        1 => (f64::from(r()) * 640.0, 200.0),
                        // one spot
                        2 => (320.0, 240.0),
                        _ => (f64::from(r()) * 640.0, f64::from(r()) * 480.0),
                    };
                    Peak { x, y, p: r() }
                })
                .collect();
            let corners: Vec<Peak> = (0..(r() * 8.0) as usize)
                .map(|_| Peak {
                    x: f64::from(r()) * 640.0,
                    y: f64::from(r()) * 480.0,
                    p: r(),
                })
                .collect();
            let finite = |l: &Lattice| l.corners.iter().flatten().all(|v| v.is_finite());
            if let Some(l) = lattice_board(&corners, &lattice, 0.0) {
                assert!(finite(&l), "case {case}");
                grown += usize::from(case % 4 == 0);
            }
            if let Ok(found) = fit_lattice(&corners, &lattice, 640.0 * 480.0) {
                assert!(
                    finite(&move_corners(found, &corners, &lattice)),
                    "case {case}"
                );
            }
        }
        // the noisy lattices (75 cases, 0-119 peaks each) mostly make boards
        assert!(grown >= 30, "{grown}");
    }

    #[test]
    fn label_bases_are_hermite_normal_forms() {
        assert_eq!(
            label_basis([[2, 0], [0, 3], [4, 6]].into_iter()),
            ([2, 0], [0, 3])
        );
        // the checkerboard sublattice, index 2
        assert_eq!(
            label_basis([[1, 1], [1, -1], [2, 0]].into_iter()),
            ([1, 1], [0, 2])
        );
        assert_eq!(label_basis([[1, 0], [0, 1]].into_iter()), ([1, 0], [0, 1]));
        // collinear vectors span no full lattice
        assert_eq!(label_basis([[2, 2], [4, 4]].into_iter()), ([1, 0], [0, 1]));
    }

    /// A peak at board point `b` as [`cam_homography`] sees it.
    fn peak(b: [f64; 2], p: f32) -> Peak {
        let [x, y] = cam_homography().apply(b).unwrap();
        Peak { x, y, p }
    }

    fn cam_homography() -> Homography {
        Homography::from_corners(&[
            [148.0, 400.0],
            [492.0, 400.0],
            [430.0, 160.0],
            [210.0, 160.0],
        ])
        .unwrap()
    }

    #[test]
    fn least_squares_fit_recovers_an_exact_homography() {
        let h = cam_homography();
        let mut pairs = Vec::new();
        for j in 0..=8 {
            for i in 0..=8 {
                let b = [i as f64, j as f64];
                pairs.push((b, h.apply(b).unwrap()));
            }
        }
        let fit = fit_homography(&pairs).unwrap();
        for &(b, im) in &pairs {
            let p = fit.apply(b).unwrap();
            assert!(
                (p[0] - im[0]).abs() < 1e-6 && (p[1] - im[1]).abs() < 1e-6,
                "{b:?}"
            );
        }
        assert!(fit_homography(&pairs[..3]).is_none());
    }

    #[test]
    fn least_squares_fit_averages_noise() {
        let h = cam_homography();
        let mut pairs = Vec::new();
        let mut k = 0.0f64;
        for j in 0..=8 {
            for i in 0..=8 {
                let b = [i as f64, j as f64];
                let p = h.apply(b).unwrap();
                k += 1.0;
                // ±1.5 px of deterministic "noise"
                pairs.push((
                    b,
                    [p[0] + 1.5 * (k * 1.7).sin(), p[1] + 1.5 * (k * 2.3).cos()],
                ));
            }
        }
        let fit = fit_homography(&pairs).unwrap();
        let centre = h.apply([4.0, 4.0]).unwrap();
        let got = fit.apply([4.0, 4.0]).unwrap();
        assert!((centre[0] - got[0]).hypot(centre[1] - got[1]) < 0.7);
    }

    #[test]
    fn quads_must_be_convex_and_large_enough() {
        let p = |x: f64, y: f64, p: f32| Peak { x, y, p };
        let square = [
            p(0.0, 0.0, 0.9),
            p(100.0, 0.0, 0.9),
            p(100.0, 100.0, 0.9),
            p(0.0, 100.0, 0.9),
        ];
        assert!((convex_area(&square).unwrap() - 10_000.0).abs() < 1e-6);
        let dart = [
            p(0.0, 0.0, 0.9),
            p(100.0, 0.0, 0.9),
            p(50.0, 10.0, 0.9),
            p(50.0, 100.0, 0.9),
        ];
        assert!(convex_area(&dart).is_none());
        assert!((min_angle_deg(&square) - 90.0).abs() < 1e-6);
        // a sliver: convex but with a 3° corner, far too sharp to be a board
        let sliver = [
            p(0.0, 0.0, 0.9),
            p(300.0, 0.0, 0.9),
            p(300.0, 10.0, 0.9),
            p(200.0, 12.0, 0.9),
        ];
        assert!(convex_area(&sliver).is_some());
        assert!(convex_quads(&sliver, 1000.0).is_empty());
        // a point inside the square makes no convex four with three of its corners
        let mut peaks = square.to_vec();
        peaks.push(p(50.0, 50.0, 0.99));
        let quads = convex_quads(&peaks, 20_000.0);
        assert_eq!(quads.len(), 1);
        assert!(quads[0].iter().all(|k| k.p == 0.9));
        // too small for the image
        assert!(convex_quads(&square, 10_000_000.0).is_empty());
    }

    /// A flat board drawn with a1 dark at the bottom left: its frame's a1 squares are the
    /// darker ones; seen through the frame turned a quarter, they are the lighter.
    #[test]
    fn colour_parity_finds_the_dark_corner() {
        let sq = 20u32;
        let img = RgbImage::from_fn(8 * sq, 8 * sq, |x, y| {
            let (file, rank) = (x / sq, 7 - y / sq);
            let v = if (file + rank) % 2 == 0 { 60 } else { 220 };
            image::Rgb([v, v, v])
        });
        let s = (8 * sq) as f32;
        let h = Homography::from_corners(&[[0.0, s], [s, s], [s, 0.0], [0.0, 0.0]]).unwrap();
        assert!(checker_contrast(&img, &h).parity > 0.5);
        // the same board named from h1: its "a1" squares are light
        let turned = Homography::from_corners(&[[s, s], [s, 0.0], [0.0, 0.0], [0.0, s]]).unwrap();
        assert!(checker_contrast(&img, &turned).parity < -0.5);
    }

    /// A drawn board's squares stand many standard errors apart; random noise seen through
    /// the same frame does not reach [`MIN_CHECKER_T`].
    #[test]
    fn checker_contrast_tells_a_board_from_noise() {
        let sq = 20u32;
        let mut next = uniform(11);
        let mut rand = move || (next() * 255.0) as u8;
        let board = RgbImage::from_fn(8 * sq, 8 * sq, |x, y| {
            let (file, rank) = (x / sq, 7 - y / sq);
            let base = if (file + rank) % 2 == 0 { 90 } else { 170 };
            let v = base + rand() / 8;
            image::Rgb([v, v, v])
        });
        let noise = RgbImage::from_fn(8 * sq, 8 * sq, |_, _| {
            let v = rand();
            image::Rgb([v, v, v])
        });
        let s = (8 * sq) as f32;
        let h = Homography::from_corners(&[[0.0, s], [s, s], [s, 0.0], [0.0, 0.0]]).unwrap();
        let b = checker_contrast(&board, &h);
        assert!(b.parity > 0.2 && b.t > 10.0 * MIN_CHECKER_T, "{b:?}");
        let n = checker_contrast(&noise, &h);
        assert!(n.t < MIN_CHECKER_T, "{n:?}");
        // a frame wholly outside the image measures nothing
        let far = Homography::from_corners(&[
            [1e4, 1e4 + s],
            [1e4 + s, 1e4 + s],
            [1e4 + s, 1e4],
            [1e4, 1e4],
        ])
        .unwrap();
        assert_eq!(
            checker_contrast(&board, &far),
            CheckerContrast {
                parity: 0.0,
                t: 0.0
            }
        );
    }

    /// Crops of boxes inside, across and outside the image come back at the model's size
    /// with the image's own values (edge repeated outside), never a panic.
    #[test]
    fn crops_of_any_box() {
        let img = RgbImage::from_fn(50, 40, |x, _| image::Rgb([(x * 5) as u8, 100, 200]));
        let (w, h) = (PIECE_W as usize, PIECE_H as usize);
        for b in [
            [0.0, 0.0, 50.0, 40.0],
            [-30.0, -10.0, 10.0, 400.0],
            [60.0, 50.0, 61.0, 51.0],
        ] {
            let mut out = vec![-1.0f32; 3 * w * h];
            crop_into(&img, b, w, h, &mut out);
            assert!(out.iter().all(|v| (0.0..=1.0).contains(v)), "{b:?}");
            // green and blue planes are constant in the image
            assert!(out[w * h..2 * w * h]
                .iter()
                .all(|v| (v - 100.0 / 255.0).abs() < 1e-4));
        }
    }

    /// The separable crop gives the sample-by-sample crop's values (to float rounding) for
    /// boxes of every scale, inside, across and outside the image.
    #[test]
    fn separable_crop_is_the_sampled_crop() {
        let img = RgbImage::from_fn(173, 121, |x, y| {
            image::Rgb([
                ((x * 37 + y * 11) % 256) as u8,
                ((x * x + 3 * y) % 256) as u8,
                ((x ^ y) * 7 % 256) as u8,
            ])
        });
        let (w, h) = (PIECE_W as usize, PIECE_H as usize);
        let mut next = uniform(7);
        for i in 0..200 {
            let scale = [0.3, 1.0, 2.5, 6.0, 12.0][i % 5];
            let (x0, y0) = (next() * 220.0 - 40.0, next() * 160.0 - 30.0);
            let b = [
                x0,
                y0,
                x0 + scale * w as f32,
                y0 + scale * h as f32 * (0.5 + next()),
            ];
            let mut got = vec![0.0f32; 3 * w * h];
            let mut want = vec![0.0f32; 3 * w * h];
            crop_into(&img, b, w, h, &mut got);
            crop_into_sampled(&img, b, w, h, &mut want);
            for (g, e) in got.iter().zip(&want) {
                assert!((g - e).abs() < 1e-4, "{b:?}: {g} against {e}");
            }
        }
    }

    /// The square prior follows the orientation: a tie between a white pawn and a white
    /// bishop goes to the pawn on a2 and h2, wherever White sits, and a white pawn on
    /// White's back rank is all but ruled out.
    #[test]
    fn square_prior_follows_the_orientation() {
        let (pawn, bishop) = (1, 3);
        // (orientation, displayed squares of a2 and h2, displayed row or column of rank 1)
        let cases = [
            (
                Orientation::White,
                [6 * 8, 6 * 8 + 7],
                (0..8).map(|c| 7 * 8 + c).collect::<Vec<_>>(),
            ),
            (Orientation::Black, [8 + 7, 8], (0..8).collect()),
            (
                Orientation::Left,
                [1, 7 * 8 + 1],
                (0..8).map(|r| r * 8).collect(),
            ),
        ];
        for (o, second, back) in cases {
            let mut d = vec![[0.0f32; SQUARE_CLASSES]; 64];
            add_square_prior(&mut d, o);
            for i in second {
                assert!(d[i][pawn] > d[i][bishop], "{o:?} square {i}: {:?}", d[i]);
            }
            for i in back {
                assert!(d[i][pawn] < -3.0, "{o:?} square {i}: {:?}", d[i]);
            }
        }
    }

    #[test]
    fn parity_and_pawns_pick_the_orientation() {
        use crate::board::{canonical_rc, class_of_piece, parse_placement, Grid};
        // the start position as displayed with White at the bottom
        let grid = parse_placement("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR").unwrap();
        let logits = |g: &Grid| -> Vec<[f32; SQUARE_CLASSES]> {
            g.iter()
                .flatten()
                .map(|p| {
                    let mut row = [0.0; SQUARE_CLASSES];
                    row[class_of_piece(*p)] = 10.0;
                    row
                })
                .collect()
        };
        assert_eq!(
            orientation_of_photo(&logits(&grid), 0.2),
            Orientation::White
        );
        let turned = crate::board::turned(&grid);
        assert_eq!(
            orientation_of_photo(&logits(&turned), 0.2),
            Orientation::Black
        );
        // seen from White's left: displayed (r, c) holds canonical (7 - c, r)
        let mut left: Grid = [[None; 8]; 8];
        for (r, row) in left.iter_mut().enumerate() {
            for (c, v) in row.iter_mut().enumerate() {
                let (cr, cc) = canonical_rc(Orientation::Left, r, c);
                *v = grid[cr][cc];
            }
        }
        assert_eq!(
            orientation_of_photo(&logits(&left), -0.2),
            Orientation::Left
        );
        // the colouring alone rules out White at the bottom for that view
        assert_ne!(
            orientation_of_photo(&logits(&left), -0.2),
            Orientation::White
        );
        // no colouring: the pawns still find it
        assert_eq!(orientation_of_photo(&logits(&left), 0.0), Orientation::Left);
    }
}
