//! The board pipeline: image → board box → 64 square crops → square classes → the
//! position as FEN, with per-square confidences, the orientation and rule-sanity flags.
//!
//! Input: an image file, or a [`GrayImage`]. Output: [`BoardReading`] — plain data: the
//! canonical placement (White at the bottom, rank 8 first) and full FEN, the placement as
//! displayed in the image, which side is at the bottom, the box and every square's class and
//! confidence. Doubt is data: an impossible position (two white kings, a pawn on rank 8, the
//! side not to move in check) is still read and reported, its problems listed in `flags`.
//!
//! This module owns the glue between [`mod@locate`] (where the board is), [`crate::model`] (the
//! square classifier, `models/squares.md`) and the rule checks (over `shakmaty`). The
//! orientation comes from printed coordinates when [`coords`] reads them clearly, else from
//! where the pawns and kings stand. Not yet: side to move from the image.
//!
//! ```no_run
//! use hamle::board::{read_file, BoardConfig};
//! let r = read_file(std::path::Path::new("diagram.png"), &BoardConfig::default())?;
//! println!("{} (confidence {:.2}, {:?})", r.fen, r.confidence, r.flags);
//! # Ok::<(), hamle::board::BoardError>(())
//! ```

pub mod coords;
pub mod locate;
pub mod physical;
mod piece_prior;
pub mod pose;

use std::path::Path;
use std::time::Instant;

use image::{GrayImage, Luma};
use serde::Serialize;
use shakmaty::{CastlingMode, Chess, Color, File, Piece, Rank, Role, Square};

use crate::model::{SquareModel, SQUARE_BATCH, SQUARE_CLASSES, SQUARE_S};
use crate::vision;
pub use locate::{locate, BoardBox, LocateError};

/// Squares whose confidence is below this are listed in [`BoardReading::low_confidence`].
pub const LOW_CONFIDENCE: f32 = 0.8;

/// Which side is at the bottom of the image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Orientation {
    /// White plays up the image (the usual diagram).
    White,
    /// Black at the bottom: the image is the board turned 180°.
    Black,
    /// White's side at the left edge of the image (a photo of a set from the side).
    Left,
    /// White's side at the right edge of the image.
    Right,
}

/// What decided a reading's orientation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OrientationFrom {
    /// `--orientation`.
    Given,
    /// Printed coordinates ([`coords`]).
    Coordinates,
    /// The position: pawns and kings (diagrams), colours (sets).
    Pieces,
}

/// How to read a board.
#[derive(Debug, Clone)]
pub struct BoardConfig {
    /// Side to move; `None`: White, marked as not given.
    pub side: Option<Color>,
    /// Which side is at the bottom; `None`: decided from the pieces.
    pub orientation: Option<Orientation>,
    /// Squares below this confidence are listed.
    pub low_confidence: f32,
    /// What the image shows.
    pub kind: BoardKind,
    /// Whether printed coordinates decide the orientation of a diagram when they are clear
    /// ([`coords`]); off, only the pieces do.
    pub coordinates: bool,
}

impl Default for BoardConfig {
    fn default() -> Self {
        BoardConfig {
            side: None,
            orientation: None,
            low_confidence: LOW_CONFIDENCE,
            kind: BoardKind::Auto,
            coordinates: true,
        }
    }
}

/// What a board image shows, i.e. which pipeline reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BoardKind {
    /// A diagram first (book, screen, a photo of either); a photo of a physical set when no
    /// diagram is found, unless the image is nearly all light, a page
    /// ([`TEXT_PAGE_LIGHT`]: no board then).
    #[default]
    Auto,
    /// A flat diagram: printed, on a screen, or a photo of one.
    Diagram,
    /// A photo of a physical set ([`physical`]).
    Physical,
}

/// The piece on each square, rank by rank: `grid[row][col]`, row 0 at the top.
pub type Grid = [[Option<Piece>; 8]; 8];

/// One square as read.
#[derive(Debug, Clone, Serialize)]
pub struct SquareRead {
    /// Square name on the canonical board (`a8` … `h1`).
    pub square: String,
    /// FEN letter of the piece, or `None` for an empty square.
    pub piece: Option<char>,
    /// Softmax probability of the chosen class (3 decimals).
    pub confidence: f64,
}

/// A read board. Serialised field names are the JSON output of `hamle board` (plus `file`).
#[derive(Debug, Clone, Serialize)]
pub struct BoardReading {
    /// FEN placement, canonical (White at the bottom, rank 8 first).
    pub placement: String,
    /// Full FEN: placement, side to move, castling rights from the home squares, no en
    /// passant, `0 1`.
    pub fen: String,
    /// Which side is at the bottom of the image.
    pub orientation: Orientation,
    /// Whether the orientation was given (`--orientation`) rather than decided.
    pub orientation_given: bool,
    /// What decided the orientation: `given`, `coordinates` (printed file letters and rank
    /// digits, [`coords`]) or `pieces` (where pawns and kings stand, or for sets the colours).
    pub orientation_from: OrientationFrom,
    /// The printed coordinates read, when they settled the orientation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coordinates: Option<coords::CoordReading>,
    /// `w` or `b`.
    pub side_to_move: char,
    /// Whether the side to move was given (`--side`).
    pub side_given: bool,
    /// Where the side to move comes from: `given`, `check` (Black's king is attacked and
    /// White's is not, so Black must be to move) or `assumed` (White).
    pub side_from: SideFrom,
    /// How sure the reading is as a whole. A diagram or screen: the lowest of the 64
    /// squares' confidences (the board is as sure as its least sure square; a product
    /// would sink every board, the model's softmax being smoothed). A photo of a set: the
    /// probability that all 64 squares are right ([`physical::board_confidence`]), and 0
    /// for a position no game reaches (`flags` from the rule checks): the reading is wrong
    /// somewhere.
    pub confidence: f64,
    /// The lowest of the 64 squares' confidences (0 for a set's position no game reaches):
    /// what `--kind auto` weighs a set's reading against a diagram's by.
    #[serde(skip)]
    pub least_square: f64,
    /// The placement as displayed: the image's top row first, its left square first.
    pub displayed: String,
    /// Every square, canonical order (`a8`, `b8`, … `h1`).
    pub squares: Vec<SquareRead>,
    /// Board corners in image pixels: top left, top right, bottom right, bottom left.
    pub corners: [[f32; 2]; 4],
    /// How board-like the box is (0..1; see [`BoardBox::score`]).
    pub locate_score: f64,
    /// How much the squares alternate light and dark (0..1; see [`BoardBox::checker`]).
    pub checker: f64,
    /// Problems of the reading, never hidden: rule problems of the position read (e.g. `two
    /// white kings`) and, for a photo of a set, a board found that may run off the photo.
    pub flags: Vec<String>,
    /// Squares whose most likely class broke a rule no diagram breaks (one king each, no
    /// pawn on the first or last rank) and that were taken as their best class that does
    /// not, e.g. `e1 read as k, taken as K (one black king)`. Their confidence is the new
    /// class's probability, so they are also listed as low-confidence squares.
    pub rule_fixes: Vec<String>,
    /// Squares read with confidence below [`BoardConfig::low_confidence`].
    pub low_confidence: Vec<String>,
    /// Which pipeline read it: `diagram` or `physical` (a photo of a set).
    pub kind: BoardKind,
    /// Wall time of the whole reading, loading included.
    pub seconds: f64,
    /// The grid as displayed (row 0 = top of the image).
    #[serde(skip)]
    pub grid: Grid,
}

/// Why a board could not be read at all.
#[derive(Debug)]
#[non_exhaustive]
pub enum BoardError {
    /// The file is not an image that can be decoded.
    Decode(vision::VisionError),
    /// No board in the image (or it is too small).
    Locate(LocateError),
    /// The square model failed.
    Model(String),
}

impl std::fmt::Display for BoardError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BoardError::Decode(e) => e.fmt(f),
            BoardError::Locate(e) => e.fmt(f),
            BoardError::Model(e) => write!(f, "square model: {e}"),
        }
    }
}

impl std::error::Error for BoardError {}

impl BoardReading {
    /// Takes the corners from an image scaled by `scale` (as [`vision::load_gray`] scales)
    /// back to the pixels of the image as given.
    pub fn unscale(&mut self, scale: f32) {
        if scale > 0.0 && scale != 1.0 {
            for c in &mut self.corners {
                c[0] /= scale;
                c[1] /= scale;
            }
        }
    }

    /// The mean of the 64 squares' confidences (0 when there are none).
    pub fn mean_confidence(&self) -> f64 {
        if self.squares.is_empty() {
            return 0.0;
        }
        self.squares.iter().map(|s| s.confidence).sum::<f64>() / self.squares.len() as f64
    }
}

/// Reads the board in an image file: a diagram or a photo of a physical set, as
/// `cfg.kind` says.
///
/// # Errors
///
/// The file cannot be decoded, holds no board, or a model fails.
pub fn read_file(path: &Path, cfg: &BoardConfig) -> Result<BoardReading, BoardError> {
    if cfg.kind == BoardKind::Physical {
        return physical::read_file(path, cfg);
    }
    let t0 = Instant::now();
    // Decoded once: `auto` may need it twice, grey for a diagram and in colour for a set.
    // `auto` takes a large JPEG at a reduced size (see AUTO_MIN_SIDE); `diagram` whole.
    let (img, scale) = match cfg.kind {
        BoardKind::Auto => vision::decode_at_least(path, AUTO_MIN_SIDE),
        _ => vision::decode(path).map(|img| (img, 1.0)),
    }
    .map_err(BoardError::Decode)?;
    let size = file_size(&img, scale);
    let mut r = read_decoded(img, cfg).map_err(|e| sized(e, size))?;
    r.unscale(scale);
    r.seconds = t0.elapsed().as_secs_f64();
    Ok(r)
}

/// The size in the file's pixels of an image decoded at `scale` (as
/// [`vision::decode_at_least`] gives it).
pub(crate) fn file_size(img: &image::DynamicImage, scale: f32) -> (u32, u32) {
    let s = if scale > 0.0 { scale } else { 1.0 };
    let side = |v: u32| (v as f32 / s).round() as u32;
    (side(img.width()), side(img.height()))
}

/// `e`, with a [`LocateError::TooSmall`] naming the image's size as given (`size`) rather
/// than the size a reader scaled it to (a 5000 × 40 strip was "1280×10 px"); an image that
/// is not small on either side is [`LocateError::TooNarrow`].
pub(crate) fn sized(e: BoardError, size: (u32, u32)) -> BoardError {
    let (width, height) = size;
    match e {
        BoardError::Locate(LocateError::TooSmall { .. }) => {
            BoardError::Locate(if width.min(height) < locate::MIN_IMAGE_SIDE {
                LocateError::TooSmall { width, height }
            } else {
                LocateError::TooNarrow { width, height }
            })
        }
        e => e,
    }
}

/// The least longer side `--kind auto` decodes a JPEG at: one at least twice this size is
/// decoded at 1/2, 1/4 or 1/8 ([`vision::decode_at_least`]), so that the largest phone
/// photos (3264 to 5130 pixels) stay within 300 ms on one core. It is the set reader's
/// working side, so `auto` reads a set from the same pixels as `--kind physical`; the
/// diagram reader then sees at least 1,280 pixels, more than the dev images have (286 to
/// 1,365). `--kind diagram` still decodes the whole image.
pub const AUTO_MIN_SIDE: u32 = physical::WORK_SIDE;

/// [`read_file`] on an image already decoded (the reading's `seconds` are left as the
/// reader set them; [`read_file`] counts them from before the decoding).
///
/// # Errors
///
/// The image holds no board, or a model fails.
pub fn read_decoded(
    img: image::DynamicImage,
    cfg: &BoardConfig,
) -> Result<BoardReading, BoardError> {
    let size = (img.width(), img.height());
    match cfg.kind {
        BoardKind::Physical => physical::read_image(img, cfg),
        BoardKind::Diagram => read_diagram(img, cfg),
        BoardKind::Auto => {
            let (gray, scale) = vision::to_gray_scaled(&img);
            read_auto(img, &gray, scale, cfg)
        }
    }
    .map_err(|e| sized(e, size))
}

/// `--kind auto` on an image decoded (`img`) and made grey (`gray`, scaled by `scale`).
fn read_auto(
    img: image::DynamicImage,
    gray: &GrayImage,
    scale: f32,
    cfg: &BoardConfig,
) -> Result<BoardReading, BoardError> {
    auto_after_diagram(read_scaled_gray(gray, scale, cfg), gray, || Some(img), cfg)
}

/// `--kind auto` after the diagram reader has read `gray` (the image made grey and scaled
/// as [`vision::to_gray_scaled`] does) into `diagram`: the reading kept, or the image
/// read as a photo of a set from `colour` (the image as decoded, asked for only when the
/// set reader runs; `None`: no colour image, the diagram's answer stands).
///
/// # Errors
///
/// As the readers: no board, or a model fails.
pub fn auto_after_diagram(
    diagram: Result<BoardReading, BoardError>,
    gray: &GrayImage,
    colour: impl FnOnce() -> Option<image::DynamicImage>,
    cfg: &BoardConfig,
) -> Result<BoardReading, BoardError> {
    match diagram {
        // A light page (a book's, a screenshot of a document) with no diagram found
        // holds no board: the set reader would read its text as pieces.
        Err(e @ BoardError::Locate(LocateError::NoBoard { .. }))
            if locate::light_share(gray) >= TEXT_PAGE_LIGHT =>
        {
            Err(e)
        }
        Err(e @ BoardError::Locate(LocateError::NoBoard { .. })) => match colour() {
            Some(img) => physical::read_image_with(img, cfg, physical::Look::Once),
            None => Err(e),
        },
        // A diagram read with little confidence may be a photo of a set. How sure its
        // squares are on average tells the two apart ([`AUTO_SET_MEAN`],
        // [`AUTO_FLAT_MEAN`]); in between, the set's reading wins when it is clearly
        // surer ([`AUTO_SET_MARGIN`]).
        Ok(d) => match auto_step(d.confidence, d.mean_confidence()) {
            AutoStep::Diagram => Ok(d),
            AutoStep::Set => Ok(colour()
                .and_then(|img| physical::read_image_with(img, cfg, physical::Look::Mirrored).ok())
                .unwrap_or(d)),
            // The set's reading is read only as far as it can still come out surer.
            AutoStep::SetIfSurer => {
                let above = AUTO_SET_MARGIN * d.confidence;
                match colour().map(|img| physical::read_image_if_surer(img, cfg, above)) {
                    Some(Ok(Some(p))) if p.least_square > above => Ok(p),
                    _ => Ok(d),
                }
            }
        },
        r => r,
    }
}

/// With `--kind auto`, an image in which no diagram is found and at least this share is
/// light ([`locate::light_share`]) is a page with no board (its text is not read as a photo
/// of a set). Session 28 took [`locate::LIGHT_PAGE`] (0.6) for it; then 2 of the 100 test
/// renders of sets (`render_3d.py --split test --seed 101`, light tables and walls, 71 % and
/// 77 % light) lost their set readings (62 and 55 of 64 squares right) as `no board`.
/// The 69 typeset pages without a diagram of session 28 are 88–98 % light; the renders at
/// most 77 %, the 30 real photos of sets at most 40 %. The dev screenshot of a PDF page that
/// the rule was made for (`mixed-d7724c91e0`) is 71 % light and goes to the set reader again.
pub const TEXT_PAGE_LIGHT: f32 = 0.85;

/// With `--kind auto`, a diagram read with a confidence under this is read as a photo of a
/// set too, and the more confident reading is kept. (Dev diagrams: 10 % read under 0.58;
/// photos of sets read as diagrams: half under 0.11.)
pub const AUTO_SET_BELOW: f64 = 0.3;

/// What `--kind auto` does after reading an image as a diagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AutoStep {
    /// Keep the diagram's reading.
    Diagram,
    /// Read the image as a photo of a set too (crops once); keep that reading if it is more
    /// than [`AUTO_SET_MARGIN`] times as confident.
    SetIfSurer,
    /// The image is a photo of a set: read it so (crops also mirrored) and keep that
    /// reading if it finds a board.
    Set,
}

/// [`AutoStep`] for a diagram reading of this confidence (its least sure square) and mean
/// square confidence.
fn auto_step(confidence: f64, mean: f64) -> AutoStep {
    if confidence >= AUTO_SET_BELOW || mean >= AUTO_FLAT_MEAN {
        AutoStep::Diagram
    } else if mean < AUTO_SET_MEAN {
        AutoStep::Set
    } else {
        AutoStep::SetIfSurer
    }
}

/// With `--kind auto`, an unsure diagram reading (confidence under [`AUTO_SET_BELOW`]) whose
/// squares are read with a mean confidence under this is taken for a photo of a set: the
/// set reader reads it (crops also mirrored, as `--kind physical`) and its reading is kept
/// whenever it finds a board. The diagram reader is unsure of many squares of a set, whose
/// pieces stand up into the squares behind them, and of few squares of a flat board. Chosen
/// (session 22) below every flat board of the tuning images: the diagram readings under
/// [`AUTO_SET_BELOW`] of the even half of corners-3lc (21 images, means 0.793–0.944) and of
/// the dev images (one, 0.925), against 46 renders of session 22's styled sets (0.637–0.891,
/// half under 0.80).
pub const AUTO_SET_MEAN: f64 = 0.79;

/// With `--kind auto`, an unsure diagram reading whose squares' mean confidence is at least
/// this is kept without reading the image as a photo of a set (about 80 ms saved): above
/// every render of a set in the tuning images of [`AUTO_SET_MEAN`] (at most 0.891).
pub const AUTO_FLAT_MEAN: f64 = 0.9;

/// With `--kind auto`, the reading as a photo of a set replaces an unsure diagram reading
/// only when its confidence is more than this many times the diagram's. The two pipelines'
/// confidences are not on one scale (the set reader's was fitted on renders); with a plain
/// comparison (factor 1), 7 of the 628 flat boards of corners-3lc went to the set reader.
/// 2 is the smallest round factor that sends none of its even half there (ratios seen:
/// 1.17 and 1.68); the odd half, which holds the held-out photos, was not looked at for it.
pub const AUTO_SET_MARGIN: f64 = 2.0;

/// Reads the board in a decoded diagram image (see [`read_gray`]), corners in the image's
/// own pixels.
///
/// # Errors
///
/// No board is found, or the model fails.
pub fn read_diagram(
    img: image::DynamicImage,
    cfg: &BoardConfig,
) -> Result<BoardReading, BoardError> {
    let (gray, scale) = vision::gray_of(img);
    read_scaled_gray(&gray, scale, cfg)
}

/// [`read_gray`] on a grey image scaled by `scale`, corners taken back to the unscaled
/// pixels.
fn read_scaled_gray(
    gray: &GrayImage,
    scale: f32,
    cfg: &BoardConfig,
) -> Result<BoardReading, BoardError> {
    let mut r = read_gray(gray, cfg)?;
    r.unscale(scale);
    Ok(r)
}

/// Reads the board in a grey image.
///
/// # Errors
///
/// No board in the image, or the model fails.
pub fn read_gray(img: &GrayImage, cfg: &BoardConfig) -> Result<BoardReading, BoardError> {
    let t0 = Instant::now();
    let mut found = Found::find(img, cfg.kind == BoardKind::Diagram)?;
    let model = SquareModel::get().map_err(BoardError::Model)?;
    let mut logits = {
        let (board, bx) = found.board(img);
        model
            .run_board(&cut_squares(board, &bx))
            .map_err(|e| BoardError::Model(format!("{e:#}")))?
    };
    // A toolbar or a line of text can stand in for an edge rank or file (`edge_shift`).
    if let Some(shift) = edge_shift(model, &found, img, &logits)? {
        found.bx = shift.bx;
        logits = shift.logits;
    }
    let (board, bx) = found.board(img);
    // Unsure squares are read twice more, from the board box shrunk and grown by
    // [`SECOND_LOOK_ZOOM`] of its side, and the three readings averaged.
    second_look(model, board, &bx, &mut logits)?;
    let corners = found.corners();
    // Printed coordinates, when they are clear, decide the orientation; else the pieces.
    let printed = match (cfg.orientation, cfg.coordinates) {
        (None, true) => coords::read(img, &corners).map_err(BoardError::Model)?,
        _ => None,
    };
    let orientation = match (cfg.orientation, &printed) {
        (Some(o), _) => o,
        (None, Some(c)) => c.orientation,
        (None, None) => {
            let (mut grid, mut conf) = classes(&logits);
            rule_fixes(&logits, &mut grid, &mut conf);
            orientation_of(&grid)
        }
    };
    let mut r = finish(
        &logits,
        orientation,
        cfg,
        Located {
            kind: BoardKind::Diagram,
            corners,
            score: found.bx.score,
            checker: found.bx.checker,
        },
        t0,
    );
    if printed.is_some() {
        r.orientation_from = OrientationFrom::Coordinates;
        r.coordinates = printed;
    }
    Ok(r)
}

/// [`edge_shift`] looks past an edge line (rank or file) of the board whose squares the
/// model reads with a mean confidence under this. Set in session 25 after the first set of
/// held-out XBoard screenshots (`scripts/xboard_shots.py --seed 1`), where three boards
/// lay one square too high: their window bars read 0.60–0.75. No dev image has a line
/// that unsure, one of the 125 held-out photos has (it does not move); of the 631 images of
/// corners-3lc, 4 have, and 2 move: one onto its labelled corners, the other (a painted
/// medieval board, read as nonsense either way) one square off them.
pub const EDGE_UNSURE: f32 = 0.8;
/// [`edge_shift`] moves the board when the line it would take in is read with a mean
/// confidence of at least this...
pub const EDGE_SURE: f32 = 0.85;
/// ...and this much more than the line it would give up.
pub const EDGE_GAIN: f32 = 0.1;

/// The board moved by one square, where that makes it read better.
struct EdgeShift {
    bx: BoardBox,
    logits: Vec<[f32; SQUARE_CLASSES]>,
}

/// The lattice moved by one square where an edge line of the board is a line of something
/// else: a bar of an app's window above a board cut tight at the image's edge (the lattice
/// search takes the bar, with its text and buttons, for the first rank, and loses the last
/// one, whose edge is the image's), or a line of text beside a diagram. Where an edge line's
/// squares are read with a mean confidence under [`EDGE_UNSURE`], the line one square past
/// the opposite edge is cut and read (8 crops); the board moves there when that line is
/// read with a mean confidence of at least [`EDGE_SURE`] and [`EDGE_GAIN`] more than the
/// line it gives up, and its squares alternate light and dark at least as well as before
/// (`locate::box_checker`: a blank page beside a board reads as sure empty squares, but
/// does not alternate). Of several such moves, the one gaining most. Boards warped square
/// (slanted) are left as they are. Returns the moved box and the logits in its order.
///
/// # Errors
///
/// The model fails.
fn edge_shift(
    model: &SquareModel,
    found: &Found,
    img: &GrayImage,
    logits: &[[f32; SQUARE_CLASSES]],
) -> Result<Option<EdgeShift>, BoardError> {
    if found.slanted.is_some() || logits.len() != SQUARE_BATCH {
        return Ok(None);
    }
    let (board, bx) = found.board(img);
    let conf: Vec<f32> = logits.iter().map(top_prob).collect();
    let (sw, sh) = ((bx.x1 - bx.x0) / 8.0, (bx.y1 - bx.y0) / 8.0);
    let (w, h) = (board.width() as f32, board.height() as f32);
    // How well the board as found alternates: only needed once a move is in sight.
    let mut checker = None;
    let mut best: Option<(f32, EdgeShift)> = None;
    // (rows, columns) the board moves by: down, up, right, left.
    for (dr, dc) in [(1i32, 0i32), (-1, 0), (0, 1), (0, -1)] {
        // Square `k` (0..8) of the line given up, and of the line taken in (in the moved
        // board's order).
        let line = |k: usize, far: bool| -> usize {
            let edge = |d: i32| if (d > 0) != far { 0 } else { 7 };
            if dr != 0 {
                edge(dr) * 8 + k
            } else {
                k * 8 + edge(dc)
            }
        };
        let given_up = (0..8).map(|k| conf[line(k, false)]).sum::<f32>() / 8.0;
        if given_up >= EDGE_UNSURE {
            continue;
        }
        let moved = BoardBox {
            x0: bx.x0 + dc as f32 * sw,
            x1: bx.x1 + dc as f32 * sw,
            y0: bx.y0 + dr as f32 * sh,
            y1: bx.y1 + dr as f32 * sh,
            ..bx
        };
        if moved.x0 < -sw / 16.0
            || moved.y0 < -sh / 16.0
            || moved.x1 > w + sw / 16.0
            || moved.y1 > h + sh / 16.0
        {
            continue;
        }
        let mut pixels = Vec::with_capacity(8 * (SQUARE_S * SQUARE_S) as usize);
        for k in 0..8 {
            let i = line(k, true);
            pixels.extend(cut_square(board, &moved, i / 8, i % 8));
        }
        let new = model
            .run_crops(&pixels)
            .map_err(|e| BoardError::Model(format!("{e:#}")))?;
        let taken = new.iter().map(top_prob).sum::<f32>() / 8.0;
        let gain = taken - given_up;
        if taken < EDGE_SURE || gain < EDGE_GAIN || best.as_ref().is_some_and(|b| b.0 >= gain) {
            continue;
        }
        let moved = BoardBox {
            checker: locate::box_checker(board, &moved),
            ..moved
        };
        if moved.checker < *checker.get_or_insert_with(|| locate::box_checker(board, &bx)) {
            continue;
        }
        // The moved board's squares: the old ones one line over, and the new line.
        let mut out = vec![[0.0f32; SQUARE_CLASSES]; SQUARE_BATCH];
        for (i, o) in out.iter_mut().enumerate() {
            let (r, c) = ((i / 8) as i32 + dr, (i % 8) as i32 + dc);
            if (0..8).contains(&r) && (0..8).contains(&c) {
                *o = logits[(r * 8 + c) as usize];
            }
        }
        for (k, l) in new.into_iter().enumerate() {
            out[line(k, true)] = l;
        }
        best = Some((
            gain,
            EdgeShift {
                bx: moved,
                logits: out,
            },
        ));
    }
    Ok(best.map(|b| b.1))
}

/// How much better ([`physical::lattice_support`] points) the diagram corner model's board
/// must be confirmed by its maps than the lattice search's to replace it
/// ([`Found::corner_check`]).
pub const CORNER_MODEL_MARGIN: f32 = 5.0;

/// Whether the diagram corner model's board, confirmed by `support` points of its maps,
/// replaces the lattice search's board, confirmed by `theirs`, when the two differ by
/// `moved` (the farthest corner's move, in board sides): a move of more than half a
/// square, [`CORNER_MODEL_MARGIN`] more support and at least [`CORNER_MODEL_MIN_SUPPORT`].
fn model_board_replaces(moved: f32, support: f32, theirs: f32) -> bool {
    moved > 1.0 / 16.0
        && support >= theirs + CORNER_MODEL_MARGIN
        && support >= CORNER_MODEL_MIN_SUPPORT
}

/// The least [`physical::lattice_support`] (of 97: 81 lattice points and 16 outer corner
/// peaks) with which the diagram corner model's board replaces a board the lattice search
/// found: half of them. The model sees the whole image at 128 × 128, where a diagram
/// spanning a fifth of a page leaves no peaks; on such pages it proposed boards in the
/// text with 21–35 points (27 typeset pages), one of which alternated enough to replace
/// the true diagram (`chessboard-10`). Every replacement that kept its board on the held-out
/// photos, the corners-3lc images and the typeset diagrams photographed had 63 or more.
/// Where the lattice search found no board, the model's board needs no such support.
pub const CORNER_MODEL_MIN_SUPPORT: f32 = 48.5;

/// Share of the board's side by which [`second_look`] shrinks and grows the box.
pub const SECOND_LOOK_ZOOM: f32 = 0.02;
/// Squares whose most likely class has a probability under this get a [`second_look`].
pub const SECOND_LOOK_BELOW: f32 = 0.9;

/// Test-time augmentation for the unsure squares: the (up to 32) squares least sure of
/// their class (below [`SECOND_LOOK_BELOW`]) are cut again from the box shrunk and from
/// the box grown by [`SECOND_LOOK_ZOOM`] of its side (so a square's crop moves by up to a
/// sixth of a square, more at the board's edges), two more crops for the model per square, and
/// each such square's row becomes the mean of its three log-probability rows. Sure squares
/// are left as they are, and a board without unsure squares costs nothing more.
///
/// # Errors
///
/// The model fails.
pub fn second_look(
    model: &SquareModel,
    img: &GrayImage,
    bx: &BoardBox,
    logits: &mut [[f32; SQUARE_CLASSES]],
) -> Result<(), BoardError> {
    let mut unsure: Vec<(f32, usize)> = logits
        .iter()
        .enumerate()
        .map(|(i, l)| (top_prob(l), i))
        .filter(|(p, _)| *p < SECOND_LOOK_BELOW)
        .collect();
    if unsure.is_empty() {
        return Ok(());
    }
    unsure.sort_by(|a, b| a.0.total_cmp(&b.0));
    // At most half a board: the cap from when both views shared one batch of 64, kept so
    // that boards read as before.
    unsure.truncate(SQUARE_BATCH / 2);
    let (w, h) = (bx.x1 - bx.x0, bx.y1 - bx.y0);
    // The box shrunk by `f` of its side on each edge (grown for a negative `f`).
    let inset = |f: f32| BoardBox {
        x0: bx.x0 + f * w,
        y0: bx.y0 + f * h,
        x1: bx.x1 - f * w,
        y1: bx.y1 - f * h,
        ..*bx
    };
    let views = [inset(SECOND_LOOK_ZOOM), inset(-SECOND_LOOK_ZOOM)];
    let s = SQUARE_S as usize;
    let mut pixels = Vec::with_capacity(2 * unsure.len() * s * s);
    for view in &views {
        for &(_, i) in &unsure {
            pixels.extend_from_slice(&cut_square(img, view, i / 8, i % 8));
        }
    }
    let more = model
        .run_crops(&pixels)
        .map_err(|e| BoardError::Model(format!("{e:#}")))?;
    let n = unsure.len();
    for (k, &(_, i)) in unsure.iter().enumerate() {
        let (a, b, c) = (
            log_softmax(&logits[i]),
            log_softmax(&more[k]),
            log_softmax(&more[n + k]),
        );
        logits[i] = std::array::from_fn(|j| (a[j] + b[j] + c[j]) / 3.0);
    }
    Ok(())
}

/// A diagram found in a grey image and made ready to cut: its box in the image it was found
/// in (the image itself, or a copy turned straight), and where the board is slanted, the
/// board warped square ([`locate::slant`]).
#[derive(Debug, Clone)]
pub struct Found {
    /// The image turned straight, where the board was only found so.
    pub turned: Option<locate::Turned>,
    /// The board's box in the image it was found in.
    pub bx: BoardBox,
    /// The board warped square, where it is slanted.
    pub slanted: Option<locate::Slanted>,
}

impl Found {
    /// The board in `img`: [`locate()`]; for an image known to hold a diagram (`diagram`),
    /// [`locate::locate_stretched`] and, where that finds none, the same in the image
    /// turned straight by its dominant edge direction ([`locate::turn`]). Then the slant.
    ///
    /// # Errors
    ///
    /// No board is found (the first failure).
    pub fn find(img: &GrayImage, diagram: bool) -> Result<Found, BoardError> {
        Found::find_with(img, diagram, true)
    }

    /// [`Found::find`], with the diagram corner model's check ([`Found::corner_check`])
    /// or, for comparisons, without it (`model` false).
    ///
    /// # Errors
    ///
    /// No board is found.
    pub fn find_with(img: &GrayImage, diagram: bool, model: bool) -> Result<Found, BoardError> {
        let lattice = Found::find_lattice(img, diagram);
        if !model {
            return lattice;
        }
        match Found::corner_check(img, lattice.as_ref().ok()) {
            Some(found) => Ok(found),
            None => lattice,
        }
    }

    /// The board where the diagram corner model (`models/corners2d.onnx`) sees it, when
    /// that differs from `lattice` (the lattice search's board) and the model's maps confirm
    /// it clearly better, or when the lattice search found none. `None`: keep `lattice`.
    ///
    /// The model sees the whole image at 128 × 128 and marks the board's outer corners and
    /// the 81 points of its lattice ([`physical::fit_lattice`] makes a board of them, as for
    /// photos of sets). Each board is scored by how well the maps confirm it
    /// ([`physical::lattice_support`]: lattice points matched, plus the outer corners'
    /// peaks); the model's board replaces the lattice search's only when a corner moves by
    /// more than half a square, it scores [`CORNER_MODEL_MARGIN`] more and at least
    /// [`CORNER_MODEL_MIN_SUPPORT`] in all, and its squares
    /// alternate light and dark ([`locate::MIN_CHECKER`]). The lattice
    /// search stays first: it is exact to the pixel where it is right, and the model, at
    /// 4 px per map cell on the whole image, loses small diagrams on a large page.
    pub fn corner_check(img: &GrayImage, lattice: Option<&Found>) -> Option<Found> {
        let model = crate::model::CornerModel::get_2d().ok()?;
        // Resized while grey, then given the model's three equal planes (the same pixels as
        // resizing a colour copy, without making one of the whole image).
        let small = crate::vision::resize(img, model.side, model.side);
        let rgb = image::DynamicImage::ImageLuma8(small).to_rgb8();
        let (cp, lp) = physical::lattice_peaks_resized(model, &rgb, img.dimensions()).ok()?;
        let area = f64::from(img.width()) * f64::from(img.height());
        let fit = physical::fit_lattice(&cp, &lp, area).ok()?;
        // a1, h1, h8, a8 with a1–h1 the lowest edge: bottom left, bottom right, top right,
        // top left.
        let c = fit.corners;
        let q = [c[3], c[2], c[1], c[0]];
        let support = physical::lattice_support(&fit.homography, &cp, &lp);
        if let Some(l) = lattice {
            let lc = l.corners();
            let h = pose::Homography::from_corners(&lc)?;
            let theirs = physical::lattice_support(&h, &cp, &lp);
            let side = ((lc[1][0] - lc[0][0]).hypot(lc[1][1] - lc[0][1])
                + (lc[3][0] - lc[0][0]).hypot(lc[3][1] - lc[0][1]))
                / 2.0;
            let moved = q
                .iter()
                .zip(lc)
                .map(|(a, b)| (a[0] - b[0]).hypot(a[1] - b[1]))
                .fold(0.0f32, f32::max);
            if !model_board_replaces(moved / side, support, theirs) {
                return None;
            }
        }
        let (image, mut bx) = locate::rectified(img, &q)?;
        bx.checker = locate::box_checker(&image, &bx);
        // As for the lattice search's boards: the squares alternate light and dark like a
        // chessboard's (a ruled scoresheet or a table has a lattice too).
        if bx.checker < locate::MIN_CHECKER {
            return None;
        }
        bx.score = support / (81.0 + 16.0);
        let bounds = bounds(&q);
        Some(Found {
            turned: None,
            bx: BoardBox {
                x0: bounds[0],
                y0: bounds[1],
                x1: bounds[2],
                y1: bounds[3],
                ..bx
            },
            slanted: Some(locate::Slanted {
                corners: q,
                image,
                bx,
            }),
        })
    }

    /// The lattice search of [`Found::find`].
    fn find_lattice(img: &GrayImage, diagram: bool) -> Result<Found, BoardError> {
        let (turned, bx) = if !diagram {
            (None, locate(img).map_err(BoardError::Locate)?)
        } else {
            match locate::locate_stretched(img) {
                Ok(b) => (None, b),
                Err(e) => {
                    let t = locate::turn(img).ok_or_else(|| BoardError::Locate(e.clone()))?;
                    let b =
                        locate::locate_stretched(&t.image).map_err(|_| BoardError::Locate(e))?;
                    (Some(t), b)
                }
            }
        };
        let slanted = locate::slant(turned.as_ref().map_or(img, |t| &t.image), &bx);
        Ok(Found {
            turned,
            bx,
            slanted,
        })
    }

    /// The image the squares are cut from and the board's box in it (`img` is the image
    /// the board was looked for in).
    pub fn board<'a>(&'a self, img: &'a GrayImage) -> (&'a GrayImage, BoardBox) {
        match (&self.slanted, &self.turned) {
            (Some(s), _) => (&s.image, s.bx),
            (None, Some(t)) => (&t.image, self.bx),
            (None, None) => (img, self.bx),
        }
    }

    /// The board's corners in the pixels of the image it was looked for in: top left, top
    /// right, bottom right, bottom left.
    pub fn corners(&self) -> [[f32; 2]; 4] {
        let c = self
            .slanted
            .as_ref()
            .map_or(self.bx.corners(), |s| s.corners);
        match &self.turned {
            Some(t) => c.map(|p| t.to_original(p)),
            None => c,
        }
    }
}

/// Where a pipeline found the board, for [`finish`].
pub(crate) struct Located {
    /// [`BoardKind::Diagram`] or [`BoardKind::Physical`].
    pub kind: BoardKind,
    /// Image corners of the displayed grid: top left, top right, bottom right, bottom left.
    pub corners: [[f32; 2]; 4],
    pub score: f32,
    pub checker: f32,
}

/// The reading from the square model's logits in displayed order (row 0 = the top of the
/// image) and the orientation: classes and confidences on the canonical board, the rule
/// fixes (on ranks 1 and 8, whichever way the board was seen), side to move, sanity flags.
pub(crate) fn finish(
    displayed: &[[f32; SQUARE_CLASSES]],
    orientation: Orientation,
    cfg: &BoardConfig,
    at: Located,
    t0: Instant,
) -> BoardReading {
    let logits = canonical_logits(displayed, orientation);
    let (mut canon, mut canon_conf) = classes(&logits);
    let mut fixes = rule_fixes(&logits, &mut canon, &mut canon_conf);
    // A side has at most eight pawns and no more promoted pieces than missing pawns. Sets:
    // unusual counts cost too (their piece kinds are often confused); diagrams: only an
    // impossible count is changed, and only where that costs under MAX_FIX_COST (a white
    // queen printed dark grey read as a second black queen beside eight black pawns).
    let (extra, impossible) = match at.kind {
        BoardKind::Physical => (EXTRA_PIECE_COST, IMPOSSIBLE_COUNT),
        _ => (0.0, MAX_FIX_COST),
    };
    fixes.extend(count_fixes(
        &logits,
        &mut canon,
        &mut canon_conf,
        extra,
        impossible,
    ));
    // Not given: the side whose king is attacked must be the one to move (a diagram of the
    // position after a check); else White, as books print most diagrams.
    let (side, side_from) = match cfg.side {
        Some(s) => (s, SideFrom::Given),
        None if in_check(&canon, Color::Black) && !in_check(&canon, Color::White) => {
            (Color::Black, SideFrom::Check)
        }
        None => (Color::White, SideFrom::Assumed),
    };
    let sanity = sanity(&canon, side);
    let placement = placement(&canon);
    let fen = format!(
        "{placement} {} {} - 0 1",
        side.fold_wb('w', 'b'),
        sanity.castling
    );
    let changed: Vec<String> = fixes
        .iter()
        .map(|f| {
            let ch = |p: Option<Piece>| p.map_or('-', |p| p.char());
            format!(
                "{} read as {}, taken as {} ({})",
                square_name(f.row, f.col),
                ch(f.from),
                ch(f.to),
                f.why
            )
        })
        .collect();
    let mut squares = Vec::with_capacity(64);
    let mut low = Vec::new();
    let mut confidence = 1.0f32;
    for (r, row) in canon.iter().enumerate() {
        for (c, p) in row.iter().enumerate() {
            let name = square_name(r, c);
            let cf = canon_conf[r][c];
            confidence = confidence.min(cf);
            if cf < cfg.low_confidence {
                low.push(name.clone());
            }
            squares.push(SquareRead {
                square: name,
                piece: p.map(|p| p.char()),
                confidence: round3(cf),
            });
        }
    }
    let mut grid: Grid = [[None; 8]; 8];
    for (r, row) in grid.iter_mut().enumerate() {
        for (c, v) in row.iter_mut().enumerate() {
            let (cr, cc) = canonical_rc(orientation, r, c);
            *v = canon[cr][cc];
        }
    }
    BoardReading {
        placement,
        fen,
        orientation,
        orientation_given: cfg.orientation.is_some(),
        orientation_from: if cfg.orientation.is_some() {
            OrientationFrom::Given
        } else {
            OrientationFrom::Pieces
        },
        coordinates: None,
        side_to_move: side.fold_wb('w', 'b'),
        side_given: cfg.side.is_some(),
        side_from,
        confidence: round3(confidence),
        least_square: round3(confidence),
        displayed: self::placement(&grid),
        squares,
        corners: at.corners,
        locate_score: round3(at.score),
        checker: round3(at.checker),
        flags: sanity.flags,
        rule_fixes: changed,
        low_confidence: low,
        kind: at.kind,
        seconds: t0.elapsed().as_secs_f64(),
        grid,
    }
}

/// Where the displayed square at row `r`, column `c` (row 0 at the top of the image) lies
/// on the canonical board (row 0 = rank 8, column 0 = the a-file).
pub fn canonical_rc(o: Orientation, r: usize, c: usize) -> (usize, usize) {
    match o {
        Orientation::White => (r, c),
        Orientation::Black => (7 - r, 7 - c),
        // White at the left edge, facing right: a1 top left, h1 bottom left.
        Orientation::Left => (7 - c, r),
        // White at the right edge, facing left: a1 bottom right, h1 top right.
        Orientation::Right => (c, 7 - r),
    }
}

/// Logits in displayed order (64 rows, row-major from the image's top left) turned to the
/// canonical board's order (a8 first).
pub(crate) fn canonical_logits(
    displayed: &[[f32; SQUARE_CLASSES]],
    o: Orientation,
) -> Vec<[f32; SQUARE_CLASSES]> {
    let mut out = vec![[0.0; SQUARE_CLASSES]; 64];
    for (i, row) in displayed.iter().take(64).enumerate() {
        let (cr, cc) = canonical_rc(o, i / 8, i % 8);
        out[cr * 8 + cc] = *row;
    }
    out
}

/// Every board in an image, largest first: the board [`read_gray`] reads, then the next one
/// with the boards found so far painted white (with a margin for frames and coordinates),
/// up to `max` boards. A later board must alternate light and dark clearly
/// ([`EXTRA_MIN_CHECKER`]) and score at least half the first one's box.
///
/// # Errors
///
/// No board at all ([`BoardError::Locate`], saying what was found instead), or the square
/// model fails.
pub fn read_all(
    img: &GrayImage,
    cfg: &BoardConfig,
    max: usize,
) -> Result<Vec<BoardReading>, BoardError> {
    let mut work = std::borrow::Cow::Borrowed(img);
    let mut out: Vec<BoardReading> = Vec::new();
    while out.len() < max {
        let b = match read_gray(&work, cfg) {
            Ok(b) => b,
            Err(BoardError::Locate(_)) if !out.is_empty() => break,
            Err(e) => return Err(e),
        };
        // After the first board, only clear boards: text and tables left on a page can pass
        // the one-board thresholds once the real board is painted out.
        if let Some(first) = out.first() {
            if b.checker < EXTRA_MIN_CHECKER || b.locate_score < 0.5 * first.locate_score {
                break;
            }
        }
        let r = bounds(&b.corners);
        let m = (r[2] - r[0]) * 0.06;
        let (x0, y0) = ((r[0] - m).max(0.0) as u32, (r[1] - m).max(0.0) as u32);
        let x1 = ((r[2] + m).max(0.0) as u32).min(work.width());
        let y1 = ((r[3] + m).max(0.0) as u32).min(work.height());
        let w = work.to_mut();
        for y in y0..y1 {
            for x in x0..x1 {
                w.put_pixel(x, y, Luma([255]));
            }
        }
        out.push(b);
    }
    Ok(out)
}

/// Light/dark alternation a second or later board of a page needs (the first needs
/// `locate::MIN_CHECKER`): what a board found in a window needs
/// (`locate::WINDOW_MIN_CHECKER`). It was 0.8 until session 30; on 120 pages composed of
/// two typeset diagrams (`scripts/compose_boards.py --mode two`, seeds 1 and 2) both were
/// read right on 106 pages instead of 103, and no page of one diagram or none gave
/// another board.
pub const EXTRA_MIN_CHECKER: f64 = 0.7;

/// The box around corners: left, top, right, bottom.
pub fn bounds(corners: &[[f32; 2]; 4]) -> [f32; 4] {
    let mut r = [
        f32::INFINITY,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NEG_INFINITY,
    ];
    for c in corners {
        r[0] = r[0].min(c[0]);
        r[1] = r[1].min(c[1]);
        r[2] = r[2].max(c[0]);
        r[3] = r[3].max(c[1]);
    }
    r
}

/// `v` to 3 decimals, for the JSON.
fn round3(v: f32) -> f64 {
    (v as f64 * 1000.0).round() / 1000.0
}

/// The model input for a box: 64 crops (row-major from the image's top-left square), each
/// exactly one square (margin 0) resampled to 32 × 32, `pixel / 255`.
pub fn cut_squares(img: &GrayImage, bx: &BoardBox) -> Vec<f32> {
    let s = SQUARE_S as usize;
    let mut out = Vec::with_capacity(SQUARE_BATCH * s * s);
    for r in 0..8 {
        for c in 0..8 {
            out.extend(cut_square(img, bx, r, c));
        }
    }
    out
}

/// The model input of one square (row `r` from the image's top, column `c` from its left) of
/// the box, as [`cut_squares`] cuts it.
pub fn cut_square(img: &GrayImage, bx: &BoardBox, r: usize, c: usize) -> Vec<f32> {
    let sw = (bx.x1 - bx.x0) / 8.0;
    let sh = (bx.y1 - bx.y0) / 8.0;
    let x0 = bx.x0 + c as f32 * sw;
    let y0 = bx.y0 + r as f32 * sh;
    let mut crop = resample(img, [x0, y0, x0 + sw, y0 + sh], SQUARE_S as usize);
    crop.iter_mut().for_each(|p| *p /= 255.0);
    crop
}

/// Filter taps of one output axis: for each output pixel, the first input index and the
/// normalised weights (a triangle filter widened by the scale when shrinking, as PIL's
/// `BILINEAR` resize with a `box`, which the model was trained on).
fn taps(from: f32, to: f32, out: usize, len: usize) -> Vec<(usize, Vec<f32>)> {
    let scale = (to - from) / out as f32;
    let support = scale.max(1.0);
    let last = len.saturating_sub(1) as f32;
    (0..out)
        .map(|i| {
            let centre = from + (i as f32 + 0.5) * scale;
            let lo = (centre - support + 0.5).floor().clamp(0.0, last) as usize;
            let hi = ((centre + support + 0.5).floor().clamp(0.0, len as f32) as usize).max(lo + 1);
            let mut w: Vec<f32> = (lo..hi)
                .map(|j| (1.0 - ((j as f32 + 0.5 - centre) / support).abs()).max(0.0))
                .collect();
            let sum: f32 = w.iter().sum();
            if sum > 0.0 {
                w.iter_mut().for_each(|v| *v /= sum);
            } else {
                // Outside the image: the nearest pixel.
                w.iter_mut().for_each(|v| *v = 0.0);
                w[0] = 1.0;
            }
            (lo, w)
        })
        .collect()
}

/// The box `[x0, y0, x1, y1]` (image pixels, fractional) of `img` resampled to `n × n`
/// grey values (0..255), row-major.
fn resample(img: &GrayImage, b: [f32; 4], n: usize) -> Vec<f32> {
    let (w, h) = (img.width() as usize, img.height() as usize);
    let tx = taps(b[0], b[2], n, w);
    let ty = taps(b[1], b[3], n, h);
    let y_lo = ty.iter().map(|t| t.0).min().unwrap_or(0);
    let y_hi = ty.iter().map(|t| t.0 + t.1.len()).max().unwrap_or(0).min(h);
    let raw = img.as_raw();
    // Horizontal pass over the rows the vertical taps need.
    let mut rows = vec![0.0f32; (y_hi.saturating_sub(y_lo)) * n];
    for y in y_lo..y_hi {
        let line = &raw[y * w..(y + 1) * w];
        for (i, (lo, wt)) in tx.iter().enumerate() {
            rows[(y - y_lo) * n + i] = wt
                .iter()
                .zip(&line[*lo..(*lo + wt.len()).min(w)])
                .map(|(a, &p)| a * p as f32)
                .sum();
        }
    }
    let mut out = vec![0.0f32; n * n];
    for (o, (lo, wt)) in ty.iter().enumerate() {
        for (k, a) in wt.iter().enumerate() {
            let Some(y) = (lo + k).checked_sub(y_lo) else {
                continue;
            };
            if let Some(row) = rows.get(y * n..(y + 1) * n) {
                for (dst, v) in out[o * n..(o + 1) * n].iter_mut().zip(row) {
                    *dst += a * v;
                }
            }
        }
    }
    out
}

/// The square model's class index of a piece (`None` = empty): the inverse of
/// [`piece_of_class`].
fn class_of_piece(p: Option<Piece>) -> usize {
    p.map_or(0, |p| {
        p.role as usize + if p.color == Color::White { 0 } else { 6 }
    })
}

/// A class index of the square model as a piece (`None` = empty; `Err` = out of range).
pub fn piece_of_class(k: usize) -> Result<Option<Piece>, usize> {
    const ROLES: [Role; 6] = [
        Role::Pawn,
        Role::Knight,
        Role::Bishop,
        Role::Rook,
        Role::Queen,
        Role::King,
    ];
    match k {
        0 => Ok(None),
        1..=6 => Ok(Some(Piece {
            color: Color::White,
            role: ROLES[k - 1],
        })),
        7..=12 => Ok(Some(Piece {
            color: Color::Black,
            role: ROLES[k - 7],
        })),
        _ => Err(k),
    }
}

/// Argmax and softmax probability of each square's logits, as a displayed grid.
fn classes(logits: &[[f32; SQUARE_CLASSES]]) -> (Grid, [[f32; 8]; 8]) {
    let mut grid: Grid = [[None; 8]; 8];
    let mut conf = [[0.0f32; 8]; 8];
    for (i, row) in logits.iter().take(64).enumerate() {
        let (k, p) = top_class(row);
        grid[i / 8][i % 8] = piece_of_class(k).unwrap_or(None);
        conf[i / 8][i % 8] = p;
    }
    (grid, conf)
}

/// The most likely class of one square's logits and its softmax probability (0 where the
/// logits are not numbers): what [`classes`] takes for each square, so what a reading's
/// square confidences start from.
pub(crate) fn top_class(row: &[f32; SQUARE_CLASSES]) -> (usize, f32) {
    let (k, &max) = row
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .unwrap_or((0, &0.0));
    let z: f32 = row.iter().map(|&v| (v - max).exp()).sum();
    (
        k,
        if z.is_finite() && z > 0.0 {
            1.0 / z
        } else {
            0.0
        },
    )
}

/// The probability of the most likely class of one square's logits, through
/// [`log_softmax`] (as [`second_look`] ranks squares).
fn top_prob(row: &[f32; SQUARE_CLASSES]) -> f32 {
    log_softmax(row)
        .iter()
        .copied()
        .fold(f32::MIN, f32::max)
        .exp()
}

/// A square changed by [`rule_fixes`] (grid as displayed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleFix {
    pub row: usize,
    pub col: usize,
    pub from: Option<Piece>,
    pub to: Option<Piece>,
    pub why: &'static str,
}

/// Class indices of the kings and pawns (see [`piece_of_class`]).
const WHITE_PAWN: usize = 1;
const WHITE_KING: usize = 6;
const BLACK_PAWN: usize = 7;
const BLACK_KING: usize = 12;
/// A fix may cost at most this much log-probability: beyond it the reading stays as it is
/// and the rule checks flag it. (On the dev boards the fixes that made a board right cost
/// under 1.7; a board cut one rank short asked for five fixes of about 4.6 each, which
/// would only have hidden its flags.)
const MAX_FIX_COST: f32 = 3.0;

/// Most that changing one of a side's two kings may cost (log-probability) when the other
/// side has none: that reading is no position (of the 309 real and typeset diagrams
/// labelled here, dev, held-out photos and TeX manuals, none shows it: prior odds under
/// 1/300, e^-5.7), and the extra king is most often the other side's.
const KING_SWAP_COST: f32 = 6.0;

fn log_softmax(row: &[f32; SQUARE_CLASSES]) -> [f32; SQUARE_CLASSES] {
    let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let z: f32 = row.iter().map(|&v| (v - max).exp()).sum::<f32>().ln() + max;
    let mut out = [f32::NEG_INFINITY; SQUARE_CLASSES];
    for (o, &v) in out.iter_mut().zip(row) {
        if v.is_finite() && z.is_finite() {
            *o = v - z;
        }
    }
    out
}

/// Makes the argmax reading obey what every diagram obeys, at the least cost in the
/// model's log-probabilities: no pawn on the top or bottom row (ranks 1 and 8 in either
/// orientation), exactly one king of each colour. A square is changed only to its best
/// allowed class and only when that costs at most `MAX_FIX_COST` (`KING_SWAP_COST` for
/// a side's second king when the other side has none); the changes are returned (and
/// their confidence becomes the new class's probability).
pub fn rule_fixes(
    logits: &[[f32; SQUARE_CLASSES]],
    grid: &mut Grid,
    conf: &mut [[f32; 8]; 8],
) -> Vec<RuleFix> {
    let lp: Vec<[f32; SQUARE_CLASSES]> = logits.iter().take(64).map(log_softmax).collect();
    if lp.len() < 64 {
        return Vec::new();
    }
    // The classes as read (what `grid` holds), not a second argmax that could disagree
    // with it on a degenerate row.
    let mut class: Vec<usize> = grid.iter().flatten().map(|p| class_of_piece(*p)).collect();
    let mut fixes = Vec::new();
    let mut set = |i: usize, k: usize, class: &mut Vec<usize>, why: &'static str| {
        apply_fix(&mut fixes, grid, conf, class, &lp[i], i, k, why);
    };
    // Pawns on the edge rows.
    for i in (0..8).chain(56..64) {
        if class[i] == WHITE_PAWN || class[i] == BLACK_PAWN {
            let cur = lp[i][class[i]];
            if let Some((k, v)) = lp[i]
                .iter()
                .enumerate()
                .filter(|(k, _)| *k != WHITE_PAWN && *k != BLACK_PAWN)
                .max_by(|a, b| a.1.total_cmp(b.1))
            {
                if cur - v <= MAX_FIX_COST {
                    set(i, k, &mut class, "no pawn on the first or last rank");
                }
            }
        }
    }
    // One king of each colour: first drop extra kings (an extra black king is often the
    // missing white one), then add a missing one where it costs least.
    let kings = [
        (
            WHITE_KING,
            BLACK_KING,
            "no white king read",
            "one white king",
        ),
        (
            BLACK_KING,
            WHITE_KING,
            "no black king read",
            "one black king",
        ),
    ];
    for (king, other, _, why_more) in kings {
        let found: Vec<usize> = (0..64).filter(|&i| class[i] == king).collect();
        // Two kings of one colour and none of the other is no position at all (a white
        // king in the shade read as black): then an extra king may cost more to change.
        let budget = if found.len() >= 2 && !class.contains(&other) {
            KING_SWAP_COST
        } else {
            MAX_FIX_COST
        };
        let keep = found
            .iter()
            .copied()
            .max_by(|&a, &b| lp[a][king].total_cmp(&lp[b][king]));
        for &i in &found {
            if Some(i) == keep {
                continue;
            }
            let edge = !(8..56).contains(&i);
            let best = lp[i]
                .iter()
                .enumerate()
                .filter(|(k, _)| *k != king && !(edge && (*k == WHITE_PAWN || *k == BLACK_PAWN)))
                .max_by(|a, b| a.1.total_cmp(b.1))
                .map(|(k, v)| (k, *v));
            if let Some((k, v)) = best {
                if lp[i][king] - v <= budget {
                    set(i, k, &mut class, why_more);
                }
            }
        }
    }
    for (king, other, why_none, _) in kings {
        if class.contains(&king) {
            continue;
        }
        // A king is misread as another piece far more often than as an empty square:
        // only occupied squares are candidates, so an empty board stays empty.
        let best = (0..64)
            .filter(|&i| class[i] != other && class[i] != 0)
            .map(|i| (i, lp[i][class[i]] - lp[i][king]))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((i, cost)) = best {
            if cost <= MAX_FIX_COST {
                set(i, king, &mut class, why_none);
            }
        }
    }
    fixes
}

/// Sets square `i` (displayed order) to class `k`, recording the change in `fixes` (a
/// square changed twice is one fix: from what was read to what it became). `lp`: the
/// square's log-probabilities.
#[allow(clippy::too_many_arguments)]
fn apply_fix(
    fixes: &mut Vec<RuleFix>,
    grid: &mut Grid,
    conf: &mut [[f32; 8]; 8],
    class: &mut [usize],
    lp: &[f32; SQUARE_CLASSES],
    i: usize,
    k: usize,
    why: &'static str,
) {
    let (r, c) = (i / 8, i % 8);
    let to = piece_of_class(k).unwrap_or(None);
    match fixes.iter_mut().find(|f| (f.row, f.col) == (r, c)) {
        Some(f) => {
            f.to = to;
            f.why = why;
        }
        None => fixes.push(RuleFix {
            row: r,
            col: c,
            from: grid[r][c],
            to,
            why,
        }),
    }
    grid[r][c] = to;
    conf[r][c] = lp[k].exp();
    class[i] = k;
}

/// What a piece beyond a side's usual set (two knights, bishops and rooks, one queen) costs
/// in [`count_fixes`], in nats: promoted pieces are rare in real games.
pub const EXTRA_PIECE_COST: f32 = 3.0;

/// A side's usual number of each kind, by class index within the side (P N B R Q K).
const USUAL: [usize; 6] = [8, 2, 2, 2, 1, 1];

/// What breaking a count rule that no game breaks costs: a ninth pawn, or more extra
/// pieces than missing pawns (each extra piece is a promoted pawn).
const IMPOSSIBLE_COUNT: f32 = 12.0;

/// The count penalty of a board's classes (see [`count_fixes`]).
fn count_penalty(class: &[usize], extra_cost: f32, impossible: f32) -> f32 {
    let mut total = 0.0;
    for side in 0..2 {
        let mut n = [0usize; 6];
        // bishops on light and dark squares
        let mut bishops = [0usize; 2];
        for (i, &k) in class.iter().enumerate() {
            if k != 0 && (k - 1) / 6 == side {
                n[(k - 1) % 6] += 1;
                if (k - 1) % 6 == 2 {
                    bishops[(i / 8 + i % 8) % 2] += 1;
                }
            }
        }
        // a side's own bishops stand on one light and one dark square; more are promoted
        let extra: usize = [1, 3, 4]
            .iter()
            .map(|&j| n[j].saturating_sub(USUAL[j]))
            .sum::<usize>()
            + bishops.iter().map(|b| b.saturating_sub(1)).sum::<usize>();
        let pawns_over = n[0].saturating_sub(8);
        let promoted_over = extra.saturating_sub(8 - n[0].min(8));
        total += extra_cost * extra as f32 + impossible * (pawns_over + promoted_over) as f32;
    }
    total
}

/// Makes the counts of a reading those of a real game at the least cost: a side has at most
/// eight pawns, no more extra pieces than missing pawns, and each piece beyond the usual
/// set (two knights, two rooks, one queen, one bishop on each colour of square) costs
/// `extra_cost` nats. For photos of sets, whose piece model confuses the kinds of a set it
/// has not seen (five "bishops" that are pawns): one square at a time, the change of a
/// piece (not a king) to another class (not a king, no pawn on the edge rows) that lowers
/// −log-probability + penalty most is made, while one does. Changes are returned like
/// [`rule_fixes`]'. `impossible`: what each piece beyond what a game allows costs
/// (`IMPOSSIBLE_COUNT` for photos of sets; for diagrams `MAX_FIX_COST`, with no cost for
/// the merely unusual, so that only a cheap change makes an impossible count possible).
pub fn count_fixes(
    logits: &[[f32; SQUARE_CLASSES]],
    grid: &mut Grid,
    conf: &mut [[f32; 8]; 8],
    extra_cost: f32,
    impossible: f32,
) -> Vec<RuleFix> {
    let lp: Vec<[f32; SQUARE_CLASSES]> = logits.iter().take(64).map(log_softmax).collect();
    if lp.len() < 64 {
        return Vec::new();
    }
    let mut class: Vec<usize> = grid.iter().flatten().map(|p| class_of_piece(*p)).collect();
    let mut fixes: Vec<RuleFix> = Vec::new();
    for _ in 0..32 {
        let now = count_penalty(&class, extra_cost, impossible);
        if now == 0.0 {
            break;
        }
        let mut best: Option<(f32, usize, usize)> = None;
        for i in 0..64 {
            let k0 = class[i];
            if k0 == 0 || k0 == WHITE_KING || k0 == BLACK_KING {
                continue;
            }
            let edge = !(8..56).contains(&i);
            for k in 0..SQUARE_CLASSES {
                if k == k0 || k == WHITE_KING || k == BLACK_KING {
                    continue;
                }
                if edge && (k == WHITE_PAWN || k == BLACK_PAWN) {
                    continue;
                }
                class[i] = k;
                let delta =
                    (lp[i][k0] - lp[i][k]) + count_penalty(&class, extra_cost, impossible) - now;
                class[i] = k0;
                if delta < -1e-4 && best.is_none_or(|b| delta < b.0) {
                    best = Some((delta, i, k));
                }
            }
        }
        let Some((_, i, k)) = best else { break };
        let why = "more pieces of a kind than a game has";
        apply_fix(&mut fixes, grid, conf, &mut class, &lp[i], i, k, why);
    }
    fixes.retain(|f| f.from != f.to);
    fixes
}

/// The grid turned 180°.
pub fn turned<T: Copy>(g: &[[T; 8]; 8]) -> [[T; 8]; 8] {
    let mut out = *g;
    for (r, row) in g.iter().enumerate() {
        for (c, v) in row.iter().enumerate() {
            out[7 - r][7 - c] = *v;
        }
    }
    out
}

/// The grid turned a quarter (clockwise as displayed; with [`turned`] it gives the other).
pub fn quarter_turn<T: Copy>(g: &[[T; 8]; 8]) -> [[T; 8]; 8] {
    let mut out = *g;
    for (r, row) in g.iter().enumerate() {
        for (c, v) in row.iter().enumerate() {
            out[c][7 - r] = *v;
        }
    }
    out
}

/// How many of the 64 squares two grids agree on.
pub fn agreeing_squares(a: &Grid, b: &Grid) -> usize {
    a.iter()
        .flatten()
        .zip(b.iter().flatten())
        .filter(|(x, y)| x == y)
        .count()
}

/// Of the four ways `g` could be turned, the number of quarter turns ([`quarter_turn`]) that
/// makes it agree best with `reference`, and how many squares then agree. Unturned comes
/// first, so a tie keeps it.
pub fn best_turns(g: &Grid, reference: &Grid) -> (usize, usize) {
    let mut best = (0, agreeing_squares(g, reference));
    let mut t = *g;
    for k in 1..4 {
        t = quarter_turn(&t);
        let n = agreeing_squares(&t, reference);
        if n > best.1 {
            best = (k, n);
        }
    }
    best
}

/// `g` turned `k` quarter turns ([`quarter_turn`]).
pub fn turn<T: Copy>(g: &[[T; 8]; 8], k: usize) -> [[T; 8]; 8] {
    (0..k).fold(*g, |g, _| quarter_turn(&g))
}

/// Which side is at the bottom, from where the pawns and kings stand: White's on the lower
/// half and Black's on the upper half count for White at the bottom, the reverse for Black.
/// A tie (e.g. no pawns, kings on the middle rows) reads as White at the bottom.
pub fn orientation_of(grid: &Grid) -> Orientation {
    let mut votes = 0i32;
    for (r, row) in grid.iter().enumerate() {
        let lower = r >= 4;
        for p in row.iter().flatten() {
            if matches!(p.role, Role::Pawn | Role::King) {
                let white = p.color == Color::White;
                votes += if white == lower { 1 } else { -1 };
            }
        }
    }
    if votes < 0 {
        Orientation::Black
    } else {
        Orientation::White
    }
}

/// FEN placement of a grid (row 0 first).
pub fn placement(grid: &Grid) -> String {
    let mut s = String::with_capacity(72);
    for (r, row) in grid.iter().enumerate() {
        if r > 0 {
            s.push('/');
        }
        let mut empty = 0u8;
        for p in row {
            match p {
                None => empty += 1,
                Some(p) => {
                    if empty > 0 {
                        s.push((b'0' + empty) as char);
                        empty = 0;
                    }
                    s.push(p.char());
                }
            }
        }
        if empty > 0 {
            s.push((b'0' + empty) as char);
        }
    }
    s
}

/// A FEN placement (the first field of a FEN, or a whole FEN) as a grid, rank 8 first.
/// `None` when it is not 8 ranks of 8 squares of known pieces.
pub fn parse_placement(fen: &str) -> Option<Grid> {
    let field = fen.split_whitespace().next()?;
    let mut grid: Grid = [[None; 8]; 8];
    let rows: Vec<&str> = field.split('/').collect();
    if rows.len() != 8 {
        return None;
    }
    for (r, row) in rows.iter().enumerate() {
        let mut c = 0usize;
        for ch in row.chars() {
            if let Some(d) = ch.to_digit(10) {
                c += d as usize;
            } else {
                *grid.get_mut(r)?.get_mut(c)? = Some(Piece::from_char(ch)?);
                c += 1;
            }
        }
        if c != 8 {
            return None;
        }
    }
    Some(grid)
}

fn square_at(r: usize, c: usize) -> Square {
    Square::from_coords(File::new(c as u32), Rank::new(7 - r as u32))
}

fn square_name(r: usize, c: usize) -> String {
    square_at(r, c).to_string()
}

/// What the rule checks found on a canonical grid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sanity {
    /// Castling field of the FEN (`KQkq` subset or `-`): a right wherever king and rook stand
    /// on their home squares.
    pub castling: String,
    /// Problems, in words.
    pub flags: Vec<String>,
}

/// Where the side to move of a reading comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SideFrom {
    Given,
    Check,
    Assumed,
}

fn board_of(grid: &Grid) -> shakmaty::Board {
    let mut board = shakmaty::Board::empty();
    for (r, row) in grid.iter().enumerate() {
        for (c, p) in row.iter().enumerate() {
            if let Some(p) = p {
                board.set_piece_at(square_at(r, c), *p);
            }
        }
    }
    board
}

/// Whether `color` has exactly one king and it is attacked (canonical grid).
pub fn in_check(grid: &Grid, color: Color) -> bool {
    let board = board_of(grid);
    let kings = board.by_piece(Piece {
        color,
        role: Role::King,
    });
    kings.count() == 1
        && board
            .king_of(color)
            .is_some_and(|k| board.attacks_to(k, !color, board.occupied()).any())
}

/// Rule checks on a canonical grid (row 0 = rank 8) with `side` to move.
pub fn sanity(grid: &Grid, side: Color) -> Sanity {
    let board = board_of(grid);
    let mut flags = Vec::new();
    let name = |c: Color| c.fold_wb("white", "black");
    for color in Color::ALL {
        let kings = board
            .by_piece(Piece {
                color,
                role: Role::King,
            })
            .count();
        match kings {
            0 => flags.push(format!("no {} king", name(color))),
            1 => {}
            n => flags.push(format!("{n} {} kings", name(color))),
        }
        let pawns = board.by_piece(Piece {
            color,
            role: Role::Pawn,
        });
        for rank in [Rank::First, Rank::Eighth] {
            if pawns.into_iter().any(|sq| sq.rank() == rank) {
                flags.push(format!("{} pawn on rank {}", name(color), rank.char()));
            }
        }
        if pawns.count() > 8 {
            flags.push(format!("{} {} pawns", pawns.count(), name(color)));
        }
        let pieces = board.by_color(color).count();
        if pieces > 16 {
            flags.push(format!("{pieces} {} pieces", name(color)));
        }
    }
    let other = !side;
    if let Some(k) = board.king_of(other) {
        if board.attacks_to(k, side, board.occupied()).any() {
            flags.push(format!(
                "{} in check with {} to move",
                name(other),
                name(side)
            ));
        }
    }
    let mut castling = String::new();
    for (color, king_sq, rooks) in [
        (
            Color::White,
            Square::E1,
            [(Square::H1, 'K'), (Square::A1, 'Q')],
        ),
        (
            Color::Black,
            Square::E8,
            [(Square::H8, 'k'), (Square::A8, 'q')],
        ),
    ] {
        if board.piece_at(king_sq)
            != Some(Piece {
                color,
                role: Role::King,
            })
        {
            continue;
        }
        for (sq, ch) in rooks {
            if board.piece_at(sq)
                == Some(Piece {
                    color,
                    role: Role::Rook,
                })
            {
                castling.push(ch);
            }
        }
    }
    if castling.is_empty() {
        castling.push('-');
    }
    if flags.is_empty() {
        let mut setup = shakmaty::Setup::empty();
        setup.board = board;
        setup.turn = side;
        if let Err(e) = setup.position::<Chess>(CastlingMode::Standard) {
            flags.push(e.to_string());
        }
    }
    Sanity { castling, flags }
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR";

    /// The corner model's board replaces the lattice search's only where its maps see it:
    /// the bogus board it proposed in the text of a typeset page (`chessboard-10`: 33.8 of
    /// 97 points against 0 for the true small diagram, moved across the page) is refused,
    /// a board the maps confirm (the held-out photos' replacements: 63–93 points) is not.
    #[test]
    fn the_corner_models_board_must_be_seen_by_its_maps() {
        assert!(!model_board_replaces(4.3, 33.8, 0.0));
        assert!(!model_board_replaces(0.4, 48.0, 10.0));
        assert!(model_board_replaces(0.4, 63.6, 52.5));
        assert!(model_board_replaces(0.2, 90.0, 70.0));
        // As before: a small move or too little more support keeps the lattice's board.
        assert!(!model_board_replaces(0.05, 90.0, 10.0));
        assert!(!model_board_replaces(0.4, 90.0, 86.0));
    }

    /// `--kind auto` on a light page with no diagram answers `no board` instead of reading
    /// the text as a photo of a set; a dark image with no diagram still goes to the set
    /// reader (which answers for itself).
    #[test]
    fn auto_finds_no_board_on_a_light_page_of_text() {
        let no_board = |img: GrayImage| {
            let r = read_decoded(
                image::DynamicImage::ImageLuma8(img),
                &BoardConfig::default(),
            );
            matches!(r, Err(BoardError::Locate(LocateError::NoBoard { .. })))
        };
        // Lines of text 3 pixels high, 25 apart: all light at the share's scale (the 69
        // typeset pages without a diagram are 88–98 % light).
        let mut page = GrayImage::from_pixel(600, 800, image::Luma([250]));
        for line in 0..30u32 {
            for x in (40..560u32).filter(|x| (x * 7 + line * 3) % 11 < 6) {
                for dy in 0..3 {
                    page.put_pixel(x, 30 + line * 25 + dy, image::Luma([30]));
                }
            }
        }
        let share = locate::light_share(&page);
        assert!(share >= TEXT_PAGE_LIGHT, "{share}");
        assert!(no_board(page.clone()));
        let dark = image::imageops::colorops::brighten(&page, -150);
        assert!(!locate::light_page(&dark));
        assert!(!no_board(dark));
        // Light, but not a page's share (a set on a light table under a light wall): the
        // set reader answers, not the light-page rule.
        let mut table = page;
        for y in 560..800 {
            for x in 0..600 {
                table.put_pixel(x, y, image::Luma([90]));
            }
        }
        let share = locate::light_share(&table);
        assert!(
            locate::light_page(&table) && share < TEXT_PAGE_LIGHT,
            "{share}"
        );
        assert!(!no_board(table));
    }

    /// `--kind auto` after a diagram reading: a sure diagram stays one, however its other
    /// squares read; an unsure one is a flat board, a photo of a set or in between by how
    /// sure its squares are on average.
    #[test]
    fn auto_step_by_the_diagram_squares() {
        assert_eq!(auto_step(0.5, 0.6), AutoStep::Diagram);
        assert_eq!(auto_step(AUTO_SET_BELOW, 0.6), AutoStep::Diagram);
        assert_eq!(auto_step(0.1, 0.95), AutoStep::Diagram);
        assert_eq!(auto_step(0.1, AUTO_FLAT_MEAN), AutoStep::Diagram);
        assert_eq!(auto_step(0.1, 0.85), AutoStep::SetIfSurer);
        assert_eq!(auto_step(0.1, AUTO_SET_MEAN), AutoStep::SetIfSurer);
        assert_eq!(auto_step(0.1, 0.7), AutoStep::Set);
        assert_eq!(auto_step(0.0, 0.0), AutoStep::Set);
    }

    #[test]
    fn placement_round_trips() {
        for fen in [
            START,
            "8/8/8/8/8/8/8/8",
            "r3k2r/1b2bp1p/p3p1p1/q2p2P1/Pp2PP2/1P1BBQ2/1P5P/R4RK1",
        ] {
            assert_eq!(placement(&parse_placement(fen).unwrap()), fen);
        }
        for bad in [
            "",
            "8/8/8",
            "9/8/8/8/8/8/8/8",
            "7/8/8/8/8/8/8/8",
            "x7/8/8/8/8/8/8/8",
        ] {
            assert!(parse_placement(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn orientation_from_pawns_and_kings() {
        let g = parse_placement(START).unwrap();
        assert_eq!(orientation_of(&g), Orientation::White);
        assert_eq!(orientation_of(&turned(&g)), Orientation::Black);
        let end = parse_placement("8/5k2/8/8/8/8/2K5/8").unwrap();
        assert_eq!(orientation_of(&end), Orientation::White);
        assert_eq!(orientation_of(&turned(&end)), Orientation::Black);
        let empty = parse_placement("8/8/8/8/8/8/8/8").unwrap();
        assert_eq!(orientation_of(&empty), Orientation::White);
    }

    #[test]
    fn sane_start_position_has_all_castling_rights() {
        let s = sanity(&parse_placement(START).unwrap(), Color::White);
        assert_eq!(s.castling, "KQkq");
        assert!(s.flags.is_empty(), "{:?}", s.flags);
        let s = sanity(
            &parse_placement("r3k3/8/8/8/8/8/8/4K2R").unwrap(),
            Color::Black,
        );
        assert_eq!(s.castling, "Kq");
        let s = sanity(
            &parse_placement("4k3/8/8/8/8/8/8/R3K1R1").unwrap(),
            Color::White,
        );
        assert_eq!(s.castling, "Q");
    }

    #[test]
    fn sanity_flags_impossible_positions() {
        let s = sanity(
            &parse_placement("4k3/8/8/8/8/8/8/3KK3").unwrap(),
            Color::White,
        );
        assert!(
            s.flags.contains(&"2 white kings".to_string()),
            "{:?}",
            s.flags
        );
        let s = sanity(
            &parse_placement("4k2P/8/8/8/8/8/8/4K3").unwrap(),
            Color::White,
        );
        assert!(
            s.flags.contains(&"white pawn on rank 8".to_string()),
            "{:?}",
            s.flags
        );
        let s = sanity(&parse_placement("8/8/8/8/8/8/8/4K3").unwrap(), Color::White);
        assert!(
            s.flags.contains(&"no black king".to_string()),
            "{:?}",
            s.flags
        );
        // Black king attacked by the rook, White to move: the side not to move is in check.
        let g = parse_placement("4k3/8/8/8/8/8/8/R3K2R").unwrap();
        assert!(sanity(&g, Color::White).flags.is_empty());
        let g = parse_placement("4k3/8/8/8/8/8/8/4R1K1").unwrap();
        let s = sanity(&g, Color::White);
        assert_eq!(s.flags, ["black in check with white to move"]);
        assert!(sanity(&g, Color::Black).flags.is_empty());
    }

    /// Logits of a board: every square empty (class 0 at 5), with the given squares'
    /// classes and runner-ups.
    fn board_logits(cells: &[(usize, usize, f32, usize, f32)]) -> Vec<[f32; SQUARE_CLASSES]> {
        let mut l = vec![[0.0f32; SQUARE_CLASSES]; 64];
        for row in &mut l {
            row[0] = 5.0;
        }
        for &(i, k, v, k2, v2) in cells {
            l[i] = [0.0; SQUARE_CLASSES];
            l[i][k] = v;
            l[i][k2] = v2;
        }
        l
    }

    #[test]
    fn class_of_piece_inverts_piece_of_class() {
        for k in 0..SQUARE_CLASSES {
            assert_eq!(class_of_piece(piece_of_class(k).unwrap()), k);
        }
    }

    #[test]
    fn count_fixes_turn_extra_pieces_into_their_runner_up_at_least_cost() {
        // Kings on e8 and e1; white bishops (class 3) read on c1 and f1 (one on each colour,
        // the usual pair) and on a3, b3, c3, where a pawn (class 1) is the runner-up: c3
        // close (bishop 5, pawn 4.5), b3 far (bishop 9, pawn 1), a3 between (bishop 5,
        // pawn 3).
        let l = board_logits(&[
            (4, 12, 9.0, 0, 1.0),
            (60, 6, 9.0, 0, 1.0),
            (58, 3, 9.0, 0, 1.0),
            (61, 3, 9.0, 0, 1.0),
            (40, 3, 5.0, 1, 3.0),
            (41, 3, 9.0, 1, 1.0),
            (42, 3, 5.0, 1, 4.5),
        ]);
        let (mut g, mut c) = classes(&l);
        let fixes = count_fixes(&l, &mut g, &mut c, EXTRA_PIECE_COST, IMPOSSIBLE_COUNT);
        let ch = |r: usize, col: usize| g[r][col].map(|p| p.char());
        // c3 and a3 cost less than an extra bishop each: pawns; b3 stays a (promoted) bishop
        assert_eq!(ch(5, 2), Some('P'));
        assert_eq!(ch(5, 0), Some('P'));
        assert_eq!(ch(5, 1), Some('B'));
        assert_eq!(fixes.len(), 2, "{fixes:?}");
        assert!(c[5][2] < 0.5);
        // the pair on c1 and f1 is untouched
        assert_eq!((ch(7, 2), ch(7, 5)), (Some('B'), Some('B')));
        // a usual set is left alone
        let l = board_logits(&[
            (4, 12, 9.0, 0, 1.0),
            (60, 6, 9.0, 0, 1.0),
            (58, 3, 5.0, 1, 4.9),
            (42, 2, 5.0, 1, 4.9),
        ]);
        let (mut g, mut c) = classes(&l);
        assert!(count_fixes(&l, &mut g, &mut c, EXTRA_PIECE_COST, IMPOSSIBLE_COUNT).is_empty());
    }

    #[test]
    fn diagram_count_fixes_change_only_impossible_counts_and_only_cheaply() {
        // Black: king e8, queen d8, eight pawns on the 7th rank; a second black queen read
        // on d1, with White's queen the runner-up. Eight pawns leave no room for a promoted
        // queen: read 1 nat apart, d1 becomes White's queen; 8 nats apart, it stays (and the
        // position is flagged elsewhere).
        let mut cells = vec![
            (4, 12, 9.0, 0, 1.0),
            (60, 6, 9.0, 0, 1.0),
            (3, 11, 9.0, 0, 1.0),
        ];
        cells.extend((8..16).map(|i| (i, 7, 9.0, 0, 1.0)));
        let with_d1 = |q: f32, white_q: f32| {
            let mut c = cells.clone();
            c.push((59, 11, q, 5, white_q));
            board_logits(&c)
        };
        let l = with_d1(5.0, 4.0);
        let (mut g, mut c) = classes(&l);
        let fixes = count_fixes(&l, &mut g, &mut c, 0.0, MAX_FIX_COST);
        assert_eq!(g[7][3].map(|p| p.char()), Some('Q'), "{fixes:?}");
        assert_eq!(fixes.len(), 1);
        let l = with_d1(9.0, 1.0);
        let (mut g, mut c) = classes(&l);
        assert!(count_fixes(&l, &mut g, &mut c, 0.0, MAX_FIX_COST).is_empty());
        assert_eq!(g[7][3].map(|p| p.char()), Some('q'));
        // With seven black pawns the second queen may be a promoted one: left alone.
        let mut seven = cells.clone();
        seven.retain(|&(i, ..)| i != 15);
        seven.push((59, 11, 5.0, 5, 4.0));
        let l = board_logits(&seven);
        let (mut g, mut c) = classes(&l);
        assert!(count_fixes(&l, &mut g, &mut c, 0.0, MAX_FIX_COST).is_empty());
    }

    #[test]
    fn rule_fixes_make_one_king_each_at_least_cost() {
        // Black kings read on e8 (sure) and e1 (unsure; white king its runner-up), no
        // white king: e1 becomes the white king, in one fix.
        let l = board_logits(&[(4, 12, 9.0, 0, 1.0), (60, 12, 5.0, 6, 4.0)]);
        let (mut g, mut c) = classes(&l);
        let fixes = rule_fixes(&l, &mut g, &mut c);
        assert_eq!(fixes.len(), 1, "{fixes:?}");
        assert_eq!((fixes[0].row, fixes[0].col), (7, 4));
        assert_eq!(g[7][4].map(|p| p.char()), Some('K'));
        assert_eq!(g[0][4].map(|p| p.char()), Some('k'));
        assert!(c[7][4] < 0.5);
    }

    #[test]
    fn a_second_king_of_one_colour_with_none_of_the_other_may_cost_more_to_change() {
        // Black kings on e8 (sure) and c8, no white king; c8's white king is `gap` nats
        // behind its black one (the rest of its probability on an empty square).
        let read = |gap: f32| {
            let l = board_logits(&[(4, 12, 9.0, 0, 1.0), (2, 12, 9.0, 6, 9.0 - gap)]);
            let (mut g, mut c) = classes(&l);
            let fixes = rule_fixes(&l, &mut g, &mut c);
            (g[0][2].map(|p| p.char()), fixes.len())
        };
        // Beyond what other fixes may cost, within KING_SWAP_COST: c8 is White's king.
        assert_eq!(read(4.5), (Some('K'), 1));
        // Beyond KING_SWAP_COST: the reading stays as it is (and is flagged by `sanity`).
        assert_eq!(read(KING_SWAP_COST + 1.0), (Some('k'), 0));
        // With a white king on the board, a second black king costs no more than any fix:
        // a 4.5-nat change is not made.
        let l = board_logits(&[
            (4, 12, 9.0, 0, 1.0),
            (60, 6, 9.0, 0, 1.0),
            (2, 12, 9.0, 11, 4.5),
        ]);
        let (mut g, mut c) = classes(&l);
        rule_fixes(&l, &mut g, &mut c);
        assert_eq!(g[0][2].map(|p| p.char()), Some('k'));
    }

    #[test]
    fn rule_fixes_move_pawns_off_the_edge_rows_and_keep_costly_readings() {
        // A white pawn on a8 whose runner-up is a white rook; kings present.
        let l = board_logits(&[
            (0, 1, 6.0, 4, 5.0),
            (4, 12, 9.0, 0, 1.0),
            (60, 6, 9.0, 0, 1.0),
        ]);
        let (mut g, mut c) = classes(&l);
        let fixes = rule_fixes(&l, &mut g, &mut c);
        assert_eq!(fixes.len(), 1);
        assert_eq!(g[0][0].map(|p| p.char()), Some('R'));
        // No king anywhere and nothing close to one: nothing is invented.
        let l = board_logits(&[(10, 1, 20.0, 0, 0.0)]);
        let mut l2 = l.clone();
        for row in &mut l2 {
            row[6] = -20.0;
            row[12] = -20.0;
        }
        let (mut g, mut c) = classes(&l2);
        assert!(rule_fixes(&l2, &mut g, &mut c).is_empty());
        assert!(g
            .iter()
            .flatten()
            .all(|p| p.is_none_or(|p| p.role != Role::King)));
    }

    #[test]
    fn classes_take_argmax_and_softmax() {
        let mut logits = vec![[0.0f32; SQUARE_CLASSES]; 64];
        logits[0][10] = 10.0; // black rook top left
        logits[63][1] = 10.0; // white pawn bottom right
        logits[5][0] = f32::NAN;
        let (g, c) = classes(&logits);
        assert_eq!(g[0][0].map(|p| p.char()), Some('r'));
        assert_eq!(g[7][7].map(|p| p.char()), Some('P'));
        assert!(c[0][0] > 0.99);
        assert!(c[3][3] < 0.1);
        assert!(c[0][5] <= 1.0);
    }

    /// An empty drawn board of squares of `sq` pixels, 20 pixels of white around it.
    fn drawn_empty_board(sq: u32) -> GrayImage {
        GrayImage::from_fn(8 * sq + 40, 8 * sq + 40, |x, y| {
            let inside = (20..20 + 8 * sq).contains(&x) && (20..20 + 8 * sq).contains(&y);
            let dark = inside && ((x - 20) / sq + (y - 20) / sq) % 2 == 1;
            image::Luma([if dark { 120 } else { 240 }])
        })
    }

    /// The second look changes only the rows of unsure squares, and each to a mean of
    /// log-probabilities (a row that still sums to probability 1).
    #[test]
    fn second_look_touches_only_unsure_squares() {
        let img = drawn_empty_board(40);
        let bx = locate(&img).unwrap();
        let model = SquareModel::get().unwrap();
        let mut sure = [[0.0f32; SQUARE_CLASSES]; 64];
        for row in sure.iter_mut() {
            row[0] = 10.0;
        }
        let mut logits = sure.to_vec();
        second_look(model, &img, &bx, &mut logits).unwrap();
        assert_eq!(logits, sure.to_vec());
        // Square 9 (b7) unsure between empty and a white pawn.
        logits[9][0] = 0.2;
        logits[9][1] = 0.0;
        second_look(model, &img, &bx, &mut logits).unwrap();
        for (i, (a, b)) in logits.iter().zip(&sure).enumerate() {
            if i != 9 {
                assert_eq!(a, b, "square {i}");
            }
        }
        let total: f32 = logits[9].iter().map(|v| v.exp()).sum();
        assert!(total > 0.0 && total <= 1.0 + 1e-4, "{total}");
        // An empty square of a crisp board: the two new looks say empty.
        let best = (0..SQUARE_CLASSES)
            .max_by(|&a, &b| logits[9][a].total_cmp(&logits[9][b]))
            .unwrap();
        assert_eq!(best, 0, "{:?}", logits[9]);
    }

    /// The bundled page's diagram cut tight at its lowest edge, under a bar like an app
    /// window's (buttons and text one square high): from a box one square too high (the bar
    /// taken for the top rank, the last rank lost), `edge_shift` moves the board down onto
    /// its own squares, and the board reads as the sample's position. From the right box it
    /// moves nothing; and where the line below is blank page (sure empty squares that
    /// do not alternate), nothing either.
    #[test]
    fn edge_shift_moves_a_bar_taken_for_a_rank_back_onto_the_board() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
        let page = image::open(dir.join("board-page.png")).unwrap().to_luma8();
        let want = std::fs::read_to_string(dir.join("board-page.fen")).unwrap();
        let right = locate(&page).unwrap();
        let sq = (right.y1 - right.y0) / 8.0;
        // The board and one square above it; the bar drawn there: grey, with dark buttons
        // and strokes like text.
        let top = (right.y0 - sq).floor() as u32;
        let bottom = right.y1.round() as u32;
        let mut img =
            image::imageops::crop_imm(&page, 0, top, page.width(), bottom - top).to_image();
        let bar = (right.y0 - top as f32).round() as u32;
        for y in 0..bar {
            for x in 0..img.width() {
                let in_button = (x / 23) % 3 == 0 && (4..bar - 4).contains(&y);
                let stroke = (x % 7 < 2) && (bar / 3..2 * bar / 3).contains(&y) && x < 200;
                let v = if stroke || in_button && (x % 23 < 2 || y < 6 || y > bar - 7) {
                    30
                } else if in_button {
                    235
                } else {
                    205
                };
                img.put_pixel(x, y, image::Luma([v]));
            }
        }
        let model = SquareModel::get().unwrap();
        let at = |bx: BoardBox| Found {
            turned: None,
            bx,
            slanted: None,
        };
        let read = |bx: BoardBox| model.run_board(&cut_squares(&img, &bx)).unwrap();
        let truth = BoardBox {
            y0: right.y0 - top as f32,
            y1: right.y1 - top as f32,
            ..right
        };
        let high = BoardBox {
            y0: truth.y0 - sq,
            y1: truth.y1 - sq,
            ..truth
        };
        let moved = edge_shift(model, &at(high), &img, &read(high))
            .unwrap()
            .expect("the board moves");
        assert!(
            (moved.bx.y0 - truth.y0).abs() < 1.0,
            "{:?} {:?}",
            moved.bx,
            truth
        );
        assert_eq!(moved.bx.x0, truth.x0);
        let (grid, _) = classes(&moved.logits);
        assert_eq!(placement(&grid), want.trim());
        assert!(edge_shift(model, &at(truth), &img, &read(truth))
            .unwrap()
            .is_none());
        // The board's last rank blanked out (a page under a board whose lowest rank the
        // search lost): the blank line reads as sure empty squares, but does not alternate.
        let mut blank = img.clone();
        for y in (truth.y1 - sq).floor() as u32..blank.height() {
            for x in 0..blank.width() {
                blank.put_pixel(x, y, image::Luma([250]));
            }
        }
        let logits = model.run_board(&cut_squares(&blank, &high)).unwrap();
        assert!(edge_shift(model, &at(high), &blank, &logits)
            .unwrap()
            .is_none());
    }

    /// A drawn board with no pieces reads as empty squares in the right place.
    #[test]
    fn empty_drawn_board_reads_empty() {
        let img = drawn_empty_board(40);
        let r = read_gray(&img, &BoardConfig::default()).unwrap();
        assert!((r.corners[0][0] - 20.0).abs() <= 2.0, "{:?}", r.corners);
        let empties = r.squares.iter().filter(|s| s.piece.is_none()).count();
        assert!(empties >= 60, "{}", r.placement);
        assert!(r.flags.iter().any(|f| f.contains("king")));
        assert!(!r.side_given);
    }
}
