//! Board localisation: where the 8 × 8 board is in a grey image.
//!
//! Input: a [`GrayImage`] (a book diagram, a page with a diagram on it, a screenshot, a photo
//! of a screen). Output: a [`BoardBox`] — an axis-aligned box in image pixels and a score —
//! or a [`LocateError`] (`too small`, `no board`). Reading the squares is [`super`]'s job.
//!
//! The method: the image is scaled down (longest side ≤ [`WORK_SIDE`]) and blurred (so that
//! hatched or dotted dark squares turn flat grey and only square borders give edges); per
//! axis, the mean absolute gradient across that axis gives a profile, and a board is a run
//! of 9 equally spaced positions where the profile is high at the 9 lines and low half way
//! between them ([`lattice`]). The [`CANDIDATES`] best lattices of each axis over the whole
//! image are each completed by fitting the other axis over their span (sizes within
//! [`ASPECT_TOL`], so the box is near-square) and refitting once; the best-scoring candidate
//! whose squares alternate light and dark like a chessboard's ([`MIN_CHECKER`]; a ruled form
//! or a table does not) wins. A lattice one square off (a rank of page in, the board's own
//! last rank out) is moved back where the squares alternate better (`settle`), and the box
//! is refined at full resolution. Where the whole image shows no board, a light page is
//! searched again in overlapping windows ([`locate_in_windows`]): a diagram of a tenth to
//! a fifth of a typeset page's side is too small for the whole-image search. A board seen
//! at a moderate slant gets its four corners from lattices fitted separately near each
//! edge ([`slant`]) and is warped square before its squares are cut ([`rectified`]); a
//! strong slant or a turned board is not followed (a known gap), and a board cut tight at
//! the image's edge may come back a few pixels inside (no edge to see there).
//!
//! ```no_run
//! let img = image::open("diagram.png").unwrap().to_luma8();
//! match hamle::board::locate::locate(&img) {
//!     Ok(b) => println!("board at {:?}, score {}", b.corners(), b.score),
//!     Err(e) => println!("{e}"),
//! }
//! ```

use image::{GrayImage, Luma};
use imageproc::geometric_transformations::{warp_into, Interpolation, Projection};
use serde::Serialize;

/// Longest side the coarse search works at.
pub const WORK_SIDE: u32 = 512;
/// Smallest board side, as a share of the image's side along that axis.
pub const MIN_FRAC: f32 = 0.2;
/// Smallest image side (pixels) that can hold a readable board.
pub const MIN_IMAGE_SIDE: u32 = 32;
/// Largest relative difference between the box's width and height.
pub const ASPECT_TOL: f32 = 0.15;
/// [`ASPECT_TOL`] of the second try, where no near-square board is found.
pub const WIDE_ASPECT_TOL: f32 = 0.45;
/// How many first fits per axis are completed into candidate boxes.
pub const CANDIDATES: usize = 3;
/// Smallest [`BoardBox::score`] that counts as a board.
pub const MIN_SCORE: f32 = 0.25;
/// Smallest [`BoardBox::checker`] that counts as a board.
pub const MIN_CHECKER: f32 = 0.6;
/// How much better (share of neighbouring square pairs) a lattice one square away must
/// alternate to replace the one found (`settle`).
pub const SHIFT_MARGIN: f32 = 0.03;
/// Boards scoring at least this share of the best board's score compete on size, so that
/// a page with two diagrams answers with the larger one. (A dev diagram beside a 0.6×
/// copy of another scored 0.53 of the small one: a crisper lattice. No dev board changed.)
pub const LARGEST_WITHIN: f32 = 0.5;

/// The board found: an axis-aligned box in image pixels (`x0, y0` top left, `x1, y1`
/// bottom right, lines of the lattice) and how board-like it is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BoardBox {
    pub x0: f32,
    pub y0: f32,
    pub x1: f32,
    pub y1: f32,
    /// Lattice contrast, 0..1: the weaker axis's `(at lines − between) / at lines`.
    pub score: f32,
    /// Share of neighbouring squares (0..1) whose corner brightness alternates light/dark
    /// the way a chessboard's does (a ruled form or a table does not).
    pub checker: f32,
}

impl BoardBox {
    /// The four corners: top left, top right, bottom right, bottom left, as `[x, y]`.
    pub fn corners(&self) -> [[f32; 2]; 4] {
        [
            [self.x0, self.y0],
            [self.x1, self.y0],
            [self.x1, self.y1],
            [self.x0, self.y1],
        ]
    }

    /// The box scaled by `k` (image coordinates of a resized image).
    pub fn scaled(&self, k: f32) -> BoardBox {
        BoardBox {
            x0: self.x0 * k,
            y0: self.y0 * k,
            x1: self.x1 * k,
            y1: self.y1 * k,
            score: self.score,
            checker: self.checker,
        }
    }
}

/// Why no board came back.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum LocateError {
    /// The image is smaller than [`MIN_IMAGE_SIDE`] on a side.
    TooSmall { width: u32, height: u32 },
    /// The image (`width` × `height`, as given) is so long and narrow that its shorter side
    /// falls under [`MIN_IMAGE_SIDE`] at the size a reader works at.
    TooNarrow { width: u32, height: u32 },
    /// Nothing board-like: the best lattice's score is below [`MIN_SCORE`], or its
    /// squares do not alternate light and dark ([`MIN_CHECKER`]).
    NoBoard { score: f32, checker: f32 },
    /// A photo of a physical set in which no board was found, and why.
    NoSet(String),
}

impl std::fmt::Display for LocateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LocateError::TooSmall { width, height } => write!(
                f,
                "image too small for a board ({width}×{height} px; at least {MIN_IMAGE_SIDE} a side)"
            ),
            LocateError::TooNarrow { width, height } => write!(
                f,
                "image too narrow for a board ({width}×{height} px; its shorter side is under \
                 {MIN_IMAGE_SIDE} px at the size it is read at)"
            ),
            LocateError::NoBoard { score, checker } => write!(
                f,
                "no board found (best lattice: score {score:.2}, light/dark alternation {checker:.2})"
            ),
            LocateError::NoSet(why) => write!(f, "{why}"),
        }
    }
}

impl std::error::Error for LocateError {}

/// One axis's fit: lines at `start + k · size / 8`, `k = 0..=8`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    pub start: f32,
    pub size: f32,
    /// `(mean at lines − mean between) / mean at lines`, 0..1.
    pub score: f32,
    /// `mean at lines − mean between`, in profile units.
    pub contrast: f32,
}

/// Mean absolute gradients of a blurred image: `gx` across columns, `gy` across rows,
/// row-major, centred on each pixel (0 on the border).
struct Gradients {
    w: usize,
    h: usize,
    gx: Vec<f32>,
    gy: Vec<f32>,
}

impl Gradients {
    fn new(img: &GrayImage, radius: u32) -> Gradients {
        let b = imageproc::filter::box_filter(img, radius, radius);
        let (w, h) = (b.width() as usize, b.height() as usize);
        let px = b.as_raw();
        let mut gx = vec![0.0f32; w * h];
        let mut gy = vec![0.0f32; w * h];
        for y in 0..h {
            for x in 1..w.saturating_sub(1) {
                let i = y * w + x;
                gx[i] = (px[i + 1] as f32 - px[i - 1] as f32).abs();
            }
        }
        for y in 1..h.saturating_sub(1) {
            for x in 0..w {
                let i = y * w + x;
                gy[i] = (px[i + w] as f32 - px[i - w] as f32).abs();
            }
        }
        Gradients { w, h, gx, gy }
    }

    /// Column profile of `gx` over rows `y0..y1`.
    fn columns(&self, y0: usize, y1: usize) -> Vec<f32> {
        let (y0, y1) = (y0.min(self.h), y1.min(self.h).max(y0.min(self.h) + 1));
        let mut p = vec![0.0f32; self.w];
        for y in y0..y1.min(self.h) {
            for (a, g) in p.iter_mut().zip(&self.gx[y * self.w..(y + 1) * self.w]) {
                *a += g;
            }
        }
        let n = (y1.min(self.h) - y0).max(1) as f32;
        p.iter_mut().for_each(|a| *a /= n);
        p
    }

    /// Row profile of `gy` over columns `x0..x1`.
    fn rows(&self, x0: usize, x1: usize) -> Vec<f32> {
        let (x0, x1) = (x0.min(self.w), x1.min(self.w).max(x0.min(self.w) + 1));
        let n = (x1.min(self.w) - x0).max(1) as f32;
        (0..self.h)
            .map(|y| {
                let row = &self.gy[y * self.w..(y + 1) * self.w];
                row.get(x0..x1.min(self.w))
                    .map(|r| r.iter().sum::<f32>())
                    .unwrap_or(0.0)
                    / n
            })
            .collect()
    }
}

/// The profile with a 1-pixel tolerance: each value the maximum of itself and its neighbours.
fn widen(p: &[f32]) -> Vec<f32> {
    (0..p.len())
        .map(|i| {
            let a = if i > 0 { p[i - 1] } else { 0.0 };
            let c = p.get(i + 1).copied().unwrap_or(0.0);
            p[i].max(a).max(c)
        })
        .collect()
}

/// Scores the lattice `start + k · size / 8` on profile `p` (and its widened copy `q`).
fn score_at(p: &[f32], q: &[f32], start: f32, size: f32) -> Option<Fit> {
    let n = p.len();
    let step = size / 8.0;
    let mut at = 0.0;
    let mut between = 0.0;
    for k in 0..9 {
        let i = (start + k as f32 * step).round();
        if i < 0.0 || i as usize >= n {
            return None;
        }
        at += q[i as usize];
        if k < 8 {
            let m = (start + (k as f32 + 0.5) * step).round() as usize;
            between += p.get(m).copied()?;
        }
    }
    at /= 9.0;
    between /= 8.0;
    let contrast = at - between;
    Some(Fit {
        start,
        size,
        score: if at > 0.0 { contrast / at } else { 0.0 },
        contrast,
    })
}

/// The best lattice of 9 equally spaced lines on profile `p` with a size (distance from the
/// first line to the last) in `min_size..=max_size` pixels, by contrast (`None` when no
/// size fits). Sizes and starts are whole pixels.
pub fn lattice(p: &[f32], min_size: usize, max_size: usize) -> Option<Fit> {
    lattices(p, min_size, max_size, 1).into_iter().next()
}

/// The `k` best lattices (see [`lattice`]) that overlap each other by less than half,
/// best first.
pub fn lattices(p: &[f32], min_size: usize, max_size: usize, k: usize) -> Vec<Fit> {
    let n = p.len();
    let q = widen(p);
    // The best start of each size.
    let mut per_size: Vec<Fit> = Vec::new();
    let max_size = max_size.min(n.saturating_sub(1));
    for size in min_size.max(16)..=max_size {
        // Whole-pixel starts: the offsets of the lines and of the points between them
        // depend on the size only (the same rounding as `score_at`).
        let step = size as f32 / 8.0;
        let lines: [usize; 9] = std::array::from_fn(|k| (k as f32 * step).round() as usize);
        let mids: [usize; 8] = std::array::from_fn(|k| ((k as f32 + 0.5) * step).round() as usize);
        let mut best: Option<(f32, usize)> = None;
        for start in 0..n - size {
            let (Some(qs), Some(ps)) = (q.get(start..), p.get(start..)) else {
                continue;
            };
            let at: f32 = lines
                .iter()
                .map(|&o| qs.get(o).copied().unwrap_or(0.0))
                .sum();
            let between: f32 = mids
                .iter()
                .map(|&o| ps.get(o).copied().unwrap_or(0.0))
                .sum();
            let contrast = at / 9.0 - between / 8.0;
            if best.is_none_or(|b| contrast > b.0) {
                best = Some((contrast, start));
            }
        }
        if let Some((_, start)) = best {
            per_size.extend(score_at(p, &q, start as f32, size as f32));
        }
    }
    per_size.sort_by(|a, b| b.contrast.total_cmp(&a.contrast));
    let mut out: Vec<Fit> = Vec::new();
    for f in per_size {
        if out.len() >= k {
            break;
        }
        let overlaps = out.iter().any(|o| {
            let inter = (o.start + o.size).min(f.start + f.size) - o.start.max(f.start);
            let union = (o.start + o.size).max(f.start + f.size) - o.start.min(f.start);
            inter / union.max(1.0) > 0.5
        });
        if !overlaps {
            out.push(f);
        }
    }
    out
}

/// Refines a fit on profile `p` within `± r` pixels of its start and size.
fn refine(p: &[f32], fit: Fit, r: i32) -> Fit {
    let q = widen(p);
    let mut best = score_at(p, &q, fit.start, fit.size).unwrap_or(fit);
    for ds in -r..=r {
        for dz in -2 * r..=2 * r {
            let (s, z) = (fit.start + ds as f32, fit.size + dz as f32);
            if z < 16.0 {
                continue;
            }
            if let Some(f) = score_at(p, &q, s, z) {
                if f.contrast > best.contrast {
                    best = f;
                }
            }
        }
    }
    best
}

fn range_around(size: f32, n: usize, tol: f32) -> (usize, usize) {
    let lo = (size * (1.0 - tol)).floor().max(16.0) as usize;
    let hi = ((size * (1.0 + tol)).ceil() as usize).min(n.saturating_sub(1));
    (lo, hi.max(lo))
}

/// Alternating fits from a first fit of one axis: the other axis over its span (sizes
/// within `tol` of each other), then each axis once more over the other's span.
fn fit_from(g: &Gradients, first: Fit, x_first: bool, tol: f32) -> Option<(Fit, Fit)> {
    let (w, h) = (g.w, g.h);
    let span = |f: Fit| (f.start as usize, (f.start + f.size) as usize + 1);
    let fit_x = |fy: Fit| {
        let (lo, hi) = range_around(fy.size, w, tol);
        let (a, b) = span(fy);
        lattice(&g.columns(a, b), lo, hi)
    };
    let fit_y = |fx: Fit| {
        let (lo, hi) = range_around(fx.size, h, tol);
        let (a, b) = span(fx);
        lattice(&g.rows(a, b), lo, hi)
    };
    let (mut fx, mut fy) = if x_first {
        (first, fit_y(first)?)
    } else {
        (fit_x(first)?, first)
    };
    fx = fit_x(fy).unwrap_or(fx);
    fy = fit_y(fx).unwrap_or(fy);
    Some((fx, fy))
}

/// How good a pair of fits is: the weaker axis's relative contrast (lattice-ness, which
/// text and photos lack) times the pair's contrast (edge strength).
fn pair_score(p: &(Fit, Fit)) -> f32 {
    p.0.score.min(p.1.score) * (p.0.contrast + p.1.contrast)
}

/// Candidate boxes: the [`CANDIDATES`] best lattices of each axis over the whole image,
/// each completed by [`fit_from`].
fn candidates(g: &Gradients, tol: f32) -> Vec<(Fit, Fit)> {
    let min_x = (g.w as f32 * MIN_FRAC) as usize;
    let min_y = (g.h as f32 * MIN_FRAC) as usize;
    let mut out = Vec::new();
    for fx in lattices(&g.columns(0, g.h), min_x, g.w, CANDIDATES) {
        out.extend(fit_from(g, fx, true, tol));
    }
    for fy in lattices(&g.rows(0, g.w), min_y, g.h, CANDIDATES) {
        out.extend(fit_from(g, fy, false, tol));
    }
    out
}

/// How much the squares of the lattice `fx × fy` alternate light and dark: the share of
/// the 112 pairs of neighbouring squares whose brightness (at the squares' corners, where
/// pieces seldom reach) differs by more than 2 grey levels in the direction the whole
/// board's light/dark pattern says.
fn checker(img: &GrayImage, fx: Fit, fy: Fit) -> f32 {
    let (sw, sh) = (fx.size / 8.0, fy.size / 8.0);
    let mut v = [[0.0f32; 8]; 8];
    for (r, row) in v.iter_mut().enumerate() {
        for (c, cell) in row.iter_mut().enumerate() {
            let (x0, y0) = (fx.start + c as f32 * sw, fy.start + r as f32 * sh);
            let (mut sum, mut n) = (0.0f32, 0u32);
            for (ax, ay) in [(0.08, 0.08), (0.72, 0.08), (0.08, 0.72), (0.72, 0.72)] {
                let px0 = (x0 + ax * sw) as u32;
                let py0 = (y0 + ay * sh) as u32;
                let px1 = ((x0 + (ax + 0.2) * sw) as u32).max(px0 + 1);
                let py1 = ((y0 + (ay + 0.2) * sh) as u32).max(py0 + 1);
                for y in py0..py1.min(img.height()) {
                    for x in px0..px1.min(img.width()) {
                        sum += img.get_pixel(x, y)[0] as f32;
                        n += 1;
                    }
                }
            }
            *cell = sum / n.max(1) as f32;
        }
    }
    // +1 when the squares of even parity (a8, c8, …) are the lighter ones.
    let mut d = 0.0;
    for (r, row) in v.iter().enumerate() {
        for (c, x) in row.iter().enumerate() {
            d += if (r + c) % 2 == 0 { *x } else { -*x };
        }
    }
    let sign = if d >= 0.0 { 1.0 } else { -1.0 };
    let mut agree = 0;
    for r in 0..8 {
        for c in 0..8 {
            let parity = if (r + c) % 2 == 0 { 1.0 } else { -1.0 };
            if c < 7 && parity * sign * (v[r][c] - v[r][c + 1]) > 2.0 {
                agree += 1;
            }
            if r < 7 && parity * sign * (v[r][c] - v[r + 1][c]) > 2.0 {
                agree += 1;
            }
        }
    }
    agree as f32 / 112.0
}

/// The image scaled down so that its longer side is at most [`WORK_SIDE`], and the scale
/// (≤ 1); the image itself where it is small enough.
fn work_copy(img: &GrayImage, side: u32) -> (std::borrow::Cow<'_, GrayImage>, f32) {
    let (w, h) = img.dimensions();
    let k = (side as f32 / w.max(h).max(1) as f32).min(1.0);
    match shrunk(img, k) {
        Some(small) => (std::borrow::Cow::Owned(small), k),
        None => (std::borrow::Cow::Borrowed(img), k),
    }
}

/// The image scaled by `k` (triangle filter), or `None` where `k` is not under 1.
fn shrunk(img: &GrayImage, k: f32) -> Option<GrayImage> {
    (k < 1.0).then(|| {
        let (w, h) = img.dimensions();
        let sw = ((w as f32 * k).round() as u32).max(1);
        let sh = ((h as f32 * k).round() as u32).max(1);
        crate::vision::resize(img, sw, sh)
    })
}

/// The lattice moved by a whole square where that makes the squares alternate better.
///
/// Text or a toolbar beside a board can stand in for its last line when the board's own
/// edge is faint, pieces crowd its last rank, or the image cuts it: the lattice then holds
/// one rank or file of page and loses one of the board, and still alternates over the rest.
/// Of the lattice and its eight neighbours one square away (each at most half a square
/// outside the image), the one whose squares alternate best (`checker`) wins, the lattice
/// found keeping ties within [`SHIFT_MARGIN`]; repeated while it moves (at most 8 times).
fn settle(img: &GrayImage, mut fx: Fit, mut fy: Fit, mut chk: f32) -> (Fit, Fit, f32) {
    let (w, h) = (img.width() as f32, img.height() as f32);
    let inside =
        |f: Fit, n: f32| f.start >= -f.size / 16.0 && f.start + f.size <= n + f.size / 16.0;
    for _ in 0..8 {
        let mut best = (fx, fy, chk + SHIFT_MARGIN);
        for dx in -1..=1 {
            for dy in -1..=1 {
                if dx == 0 && dy == 0 {
                    continue;
                }
                let sx = Fit {
                    start: fx.start + dx as f32 * fx.size / 8.0,
                    ..fx
                };
                let sy = Fit {
                    start: fy.start + dy as f32 * fy.size / 8.0,
                    ..fy
                };
                if !inside(sx, w) || !inside(sy, h) {
                    continue;
                }
                let c = checker(img, sx, sy);
                if c > best.2 {
                    best = (sx, sy, c);
                }
            }
        }
        if best.0 == fx && best.1 == fy {
            break;
        }
        (fx, fy, chk) = best;
    }
    (fx, fy, chk)
}

/// The best-scoring candidate box (sizes within `tol`) that looks like a chessboard;
/// failing that, the best-scoring one's figures as the error.
fn choose(g: &Gradients, work: &GrayImage, tol: f32) -> Result<(Fit, Fit, f32), LocateError> {
    let mut cands: Vec<(Fit, Fit, f32)> = candidates(g, tol)
        .into_iter()
        .map(|(fx, fy)| (fx, fy, checker(work, fx, fy)))
        .collect();
    cands.sort_by(|a, b| pair_score(&(b.0, b.1)).total_cmp(&pair_score(&(a.0, a.1))));
    let ok = |c: &(Fit, Fit, f32)| {
        c.0.score.min(c.1.score) >= MIN_SCORE
            && c.2 >= MIN_CHECKER
            && c.0.contrast > 0.0
            && c.1.contrast > 0.0
    };
    // Of the boards that score nearly as well as the best, the largest: a page with two
    // diagrams answers with the bigger one.
    let best_ok = cands
        .iter()
        .find(|c| ok(c))
        .map(|c| pair_score(&(c.0, c.1)));
    let chosen = best_ok.and_then(|b| {
        cands
            .iter()
            .filter(|c| ok(c) && pair_score(&(c.0, c.1)) >= LARGEST_WITHIN * b)
            .max_by(|a, c| (a.0.size * a.1.size).total_cmp(&(c.0.size * c.1.size)))
    });
    chosen.copied().ok_or_else(|| {
        let (score, checker) = cands
            .first()
            .map(|c| (c.0.score.min(c.1.score).max(0.0), c.2))
            .unwrap_or((0.0, 0.0));
        LocateError::NoBoard { score, checker }
    })
}

/// Finds the board in `img`.
///
/// # Errors
///
/// [`LocateError::TooSmall`] for an image under [`MIN_IMAGE_SIDE`] on a side;
/// [`LocateError::NoBoard`] when nothing scores as a board.
pub fn locate(img: &GrayImage) -> Result<BoardBox, LocateError> {
    locate_with(img, false)
}

/// [`locate`], and where no near-square board is found, a second try for a box stretched by
/// up to [`WIDE_ASPECT_TOL`] (a squashed camera preview, a page photographed at a slant).
/// For images known to hold a diagram: on photos of physical sets the second try finds
/// boards in the table and the pieces more often than [`locate`] does (4 more of the 100
/// test renders and one of the 30 real photos of `boards/photos-3d-unlabelled`), so
/// `--kind auto` does not use it.
///
/// # Errors
///
/// As [`locate`].
pub fn locate_stretched(img: &GrayImage) -> Result<BoardBox, LocateError> {
    locate_with(img, true)
}

/// Longer image side (pixels) from which a page is also searched in windows
/// ([`locate_in_windows`]) when the whole image shows no board. A page rendered or
/// scanned at 85 dpi or more is this large; the nine searches cost about 30 ms on one
/// core, which a smaller image (a screenshot whose board is not found, as one dev image)
/// would pay for a diagram too small to read anyway.
pub const WINDOWS_FROM: u32 = 1000;
/// Smallest [`BoardBox::score`] of a board found in a window: nine searches of a text
/// page find more lattices by chance than one, so a window's board must be clearer than
/// [`MIN_SCORE`] asks of the whole image's.
pub const WINDOW_MIN_SCORE: f32 = 0.5;
/// Smallest [`BoardBox::checker`] of a board found in a window (see [`WINDOW_MIN_SCORE`]).
pub const WINDOW_MIN_CHECKER: f32 = 0.7;
/// Longest side a window of [`locate_in_windows`] is searched at (then refined at full
/// resolution, as the whole image is).
pub const WINDOW_SIDE: u32 = 384;

fn locate_with(img: &GrayImage, stretched: bool) -> Result<BoardBox, LocateError> {
    match locate_whole(img, stretched, WORK_SIDE) {
        Err(e @ LocateError::NoBoard { .. }) => locate_in_windows(img, stretched).ok_or(e),
        other => other,
    }
}

/// Share of the image that must be light (grey ≥ [`LIGHT_GREY`]) for [`light_page`]:
/// [`locate_in_windows`] searches only such pages.
pub const LIGHT_PAGE: f32 = 0.6;
/// What counts as light for [`LIGHT_PAGE`].
pub const LIGHT_GREY: u8 = 200;

/// Whether at least [`LIGHT_PAGE`] of the image is light ([`light_share`]): paper or a
/// screen's page, not a photo of a set on a table (the 30 real photos of
/// `boards/photos-3d-unlabelled` are at most 40 % light).
pub fn light_page(img: &GrayImage) -> bool {
    light_share(img) >= LIGHT_PAGE
}

/// Share of the image that is light ([`LIGHT_GREY`] or more), on a copy of at most 128
/// pixels a side; 0 for an empty image.
pub fn light_share(img: &GrayImage) -> f32 {
    let (w, h) = img.dimensions();
    if w == 0 || h == 0 {
        return 0.0;
    }
    let k = (128.0 / w.max(h) as f32).min(1.0);
    let thumb = crate::vision::resize(
        img,
        ((w as f32 * k).round() as u32).max(1),
        ((h as f32 * k).round() as u32).max(1),
    );
    let light = thumb.pixels().filter(|p| p.0[0] >= LIGHT_GREY).count();
    light as f32 / (thumb.width() * thumb.height()) as f32
}

/// A board too small for the whole-image search ([`MIN_FRAC`] of the image's side, and
/// squares of a few pixels once the page is scaled to [`WORK_SIDE`]): a diagram on a
/// typeset page. The image is searched in 3 × 3 windows of half its width and height,
/// a quarter apart, so that any board up to a quarter of the image's sides lies whole in
/// one of them, each scaled to at most [`WINDOW_SIDE`]; boards down to a tenth of the
/// image's sides are large enough for the windows' own search. Of the windows' boards, the
/// best-scoring one, or a larger one scoring at least [`LARGEST_WITHIN`] of it (as
/// [`choose`] does). `None` where no window holds one, the image is under
/// [`WINDOWS_FROM`] pixels on its longer side, or it is not a [`light_page`].
pub fn locate_in_windows(img: &GrayImage, stretched: bool) -> Option<BoardBox> {
    let (w, h) = img.dimensions();
    if w.max(h) < WINDOWS_FROM {
        return None;
    }
    if !light_page(img) {
        return None;
    }
    let (ww, wh) = (w / 2, h / 2);
    let mut found: Vec<BoardBox> = Vec::new();
    for j in 0..3 {
        for i in 0..3 {
            let (x, y) = (i * w / 4, j * h / 4);
            let (cw, ch) = (ww.min(w - x), wh.min(h - y));
            let crop = image::imageops::crop_imm(img, x, y, cw, ch).to_image();
            let Ok(b) = locate_whole(&crop, stretched, WINDOW_SIDE) else {
                continue;
            };
            // A board the window's edge cuts (where that edge is not the image's) may be
            // a part of the board with a rank of page: another window holds it whole.
            let m = (b.x1 - b.x0) / 32.0;
            let cut = (x > 0 && b.x0 < m)
                || (y > 0 && b.y0 < m)
                || (x + cw < w && b.x1 > cw as f32 - m)
                || (y + ch < h && b.y1 > ch as f32 - m);
            if b.score >= WINDOW_MIN_SCORE && b.checker >= WINDOW_MIN_CHECKER && !cut {
                let (ox, oy) = (x as f32, y as f32);
                found.push(BoardBox {
                    x0: b.x0 + ox,
                    y0: b.y0 + oy,
                    x1: b.x1 + ox,
                    y1: b.y1 + oy,
                    ..b
                });
            }
        }
    }
    let best = found
        .iter()
        .map(|b| b.score)
        .fold(f32::NEG_INFINITY, f32::max);
    found
        .into_iter()
        .filter(|b| b.score >= LARGEST_WITHIN * best)
        .max_by(|a, b| {
            let area = |b: &BoardBox| (b.x1 - b.x0) * (b.y1 - b.y0);
            // Larger first, the better score among boards of about the same size (one
            // board seen whole in several windows).
            let (aa, ab) = (area(a), area(b));
            if (aa - ab).abs() <= 0.1 * aa.max(ab) {
                a.score.total_cmp(&b.score)
            } else {
                aa.total_cmp(&ab)
            }
        })
}

fn locate_whole(img: &GrayImage, stretched: bool, side: u32) -> Result<BoardBox, LocateError> {
    let (w, h) = img.dimensions();
    if w < MIN_IMAGE_SIDE || h < MIN_IMAGE_SIDE {
        return Err(LocateError::TooSmall {
            width: w,
            height: h,
        });
    }
    let (work, k) = work_copy(img, side);
    let work = &*work;
    let g = Gradients::new(work, 2);
    // Near-square boxes first; a stretched one ([`locate_stretched`]) only where none is
    // found.
    let (fx, fy, checker) = match choose(&g, work, ASPECT_TOL) {
        Ok(c) => c,
        Err(e) if stretched => choose(&g, work, WIDE_ASPECT_TOL).map_err(|_| e)?,
        Err(e) => return Err(e),
    };
    let (fx, fy, checker) = settle(work, fx, fy, checker);
    let score = fx.score.min(fy.score);
    if k < 1.0 {
        // Refine at full resolution over a crop around the coarse box.
        let r = (1.0 / k).ceil() as i32 + 1;
        let m = 2 * r as u32 + 3;
        let cx0 = ((fx.start / k) as u32).saturating_sub(m);
        let cy0 = ((fy.start / k) as u32).saturating_sub(m);
        let cx1 = (((fx.start + fx.size) / k) as u32 + m).min(w);
        let cy1 = (((fy.start + fy.size) / k) as u32 + m).min(h);
        if cx1 > cx0 + 16 && cy1 > cy0 + 16 {
            let crop = image::imageops::crop_imm(img, cx0, cy0, cx1 - cx0, cy1 - cy0).to_image();
            let gf = Gradients::new(&crop, 1);
            let (ox, oy) = (cx0 as f32, cy0 as f32);
            let to_crop = |f: Fit, o: f32| Fit {
                start: (f.start / k).round() - o,
                size: (f.size / k).round(),
                ..f
            };
            let (ffx, ffy) = (to_crop(fx, ox), to_crop(fy, oy));
            // Profiles over the inner part of the other axis's span.
            let inset = |f: Fit| {
                let a = f.start + f.size * 0.02;
                (
                    a.max(0.0) as usize,
                    (f.start + f.size * 0.98).max(a + 1.0) as usize,
                )
            };
            let (ya, yb) = inset(ffy);
            let (xa, xb) = inset(ffx);
            let rx = refine(&gf.columns(ya, yb), ffx, r);
            let ry = refine(&gf.rows(xa, xb), ffy, r);
            return Ok(clamped(
                BoardBox {
                    x0: rx.start + ox,
                    y0: ry.start + oy,
                    x1: rx.start + ox + rx.size,
                    y1: ry.start + oy + ry.size,
                    score,
                    checker,
                },
                w,
                h,
            ));
        }
    }
    let b = BoardBox {
        x0: fx.start,
        y0: fy.start,
        x1: fx.start + fx.size,
        y1: fy.start + fy.size,
        score,
        checker,
    };
    Ok(clamped(if k < 1.0 { b.scaled(1.0 / k) } else { b }, w, h))
}

/// How far (in squares) a refined corner may be from the box's before the slant is not
/// believed.
pub const SLANT_MAX_MOVE: f32 = 1.0;
/// How far (in squares) the lattice of a band of [`slant`] may start from the box's (its
/// size twice as far).
pub const SLANT_REACH: f32 = 0.4;
/// Square size (pixels) at which [`slant`] fits the lines of a larger board.
pub const SLANT_SQUARE: f32 = 40.0;
/// Largest square (pixels) of a board warped by [`rectified`]: the model reads 32.
pub const RECTIFIED_SQUARE: f32 = 64.0;
/// How far inside the box (in squares) the bands of [`slant`] begin.
pub const BAND_IN: f32 = 0.5;
/// Smallest corner move (in squares) worth a warp: below it the box is read as it is.
pub const SLANT_MIN_MOVE: f32 = 0.15;

/// A board seen at a slant or turned a little: the four corners (top left, top right,
/// bottom right, bottom left, image pixels) refined from the axis-aligned box, or `None`
/// where the box already fits to within [`SLANT_MIN_MOVE`] of a square or no consistent
/// slant is found. With the corners comes the board warped square.
///
/// The 9 vertical lines are fitted separately over the box's top two and bottom two ranks,
/// and the 9 horizontal ones over its left two and right two files (each a lattice near the
/// box's, `refine`); joining the two fits of each line gives straight lines whose outer
/// ones meet at the corners. The slant is kept when the squares of the board warped square
/// by it alternate at least as well as the box's (`checker`).
pub fn slant(img: &GrayImage, b: &BoardBox) -> Option<Slanted> {
    let (w, h) = img.dimensions();
    let (sw, sh) = ((b.x1 - b.x0) / 8.0, (b.y1 - b.y0) / 8.0);
    if sw < 4.0 || sh < 4.0 {
        return None;
    }
    let cx0 = (b.x0 - 1.5 * sw).max(0.0) as u32;
    let cy0 = (b.y0 - 1.5 * sh).max(0.0) as u32;
    let cx1 = ((b.x1 + 1.5 * sw).ceil() as u32).min(w);
    let cy1 = ((b.y1 + 1.5 * sh).ceil() as u32).min(h);
    if cx1 <= cx0 + 16 || cy1 <= cy0 + 16 {
        return None;
    }
    let crop = image::imageops::crop_imm(img, cx0, cy0, cx1 - cx0, cy1 - cy0).to_image();
    // Large boards are fitted at squares of SLANT_SQUARE pixels.
    let k = (SLANT_SQUARE / sw.min(sh)).min(1.0);
    let crop = shrunk(&crop, k).unwrap_or(crop);
    let (bw, bh) = (sw, sh);
    let (sw, sh) = (sw * k, sh * k);
    let radius = (sw.min(sh) / 16.0).round().clamp(1.0, 3.0) as u32;
    let g = Gradients::new(&crop, radius);
    let (ox, oy) = (cx0 as f32, cy0 as f32);
    let fx = Fit {
        start: ((b.x0 - ox) * k).round(),
        size: ((b.x1 - b.x0) * k).round(),
        score: 0.0,
        contrast: 0.0,
    };
    let fy = Fit {
        start: ((b.y0 - oy) * k).round(),
        size: ((b.y1 - b.y0) * k).round(),
        ..fx
    };
    let r = (SLANT_REACH * sw.min(sh)).round().max(2.0) as i32;
    let band = |a: f32, z: f32| (a.max(0.0) as usize, z.max(a + 1.0) as usize);
    // Vertical lines over the top and bottom two ranks, horizontal over the outer files.
    let (ta, tb) = band(fy.start + BAND_IN * sh, fy.start + (BAND_IN + 2.0) * sh);
    let (ba, bb) = band(
        fy.start + fy.size - (BAND_IN + 2.0) * sh,
        fy.start + fy.size - BAND_IN * sh,
    );
    let (la, lb) = band(fx.start + BAND_IN * sw, fx.start + (BAND_IN + 2.0) * sw);
    let (ra, rb) = band(
        fx.start + fx.size - (BAND_IN + 2.0) * sw,
        fx.start + fx.size - BAND_IN * sw,
    );
    let top = refine(&g.columns(ta, tb), fx, r);
    let bottom = refine(&g.columns(ba, bb), fx, r);
    let left = refine(&g.rows(la, lb), fy, r);
    let right = refine(&g.rows(ra, rb), fy, r);
    if [top, bottom, left, right]
        .iter()
        .any(|f| f.score < MIN_SCORE || f.contrast <= 0.0)
    {
        return None;
    }
    let (yt, yb) = ((ta + tb) as f32 / 2.0, (ba + bb) as f32 / 2.0);
    let (xl, xr) = ((la + lb) as f32 / 2.0, (ra + rb) as f32 / 2.0);
    // Line k of each family: x(y) for verticals, y(x) for horizontals.
    let vx = |k: f32, y: f32| {
        let (a, z) = (
            top.start + k * top.size / 8.0,
            bottom.start + k * bottom.size / 8.0,
        );
        a + (y - yt) * (z - a) / (yb - yt)
    };
    let hy = |k: f32, x: f32| {
        let (a, z) = (
            left.start + k * left.size / 8.0,
            right.start + k * right.size / 8.0,
        );
        a + (x - xl) * (z - a) / (xr - xl)
    };
    let meet = |kv: f32, kh: f32| {
        let (mut x, mut y) = (vx(kv, hy(kh, 0.0)), 0.0);
        for _ in 0..6 {
            y = hy(kh, x);
            x = vx(kv, y);
        }
        [x / k + ox, y / k + oy]
    };
    let q = [
        meet(0.0, 0.0),
        meet(8.0, 0.0),
        meet(8.0, 8.0),
        meet(0.0, 8.0),
    ];
    let moved = q
        .iter()
        .zip(b.corners())
        .map(|(a, c)| ((a[0] - c[0]) / bw).abs().max(((a[1] - c[1]) / bh).abs()))
        .fold(0.0f32, f32::max);
    if !moved.is_finite() || !(SLANT_MIN_MOVE..=SLANT_MAX_MOVE).contains(&moved) {
        return None;
    }
    let (image, bx) = rectified(img, &q)?;
    let side = bx.x1 - bx.x0;
    let lat = |start: f32| Fit {
        start,
        size: side,
        score: 0.0,
        contrast: 0.0,
    };
    let straight = checker(&image, lat(bx.x0), lat(bx.y0));
    (straight >= b.checker).then_some(Slanted {
        corners: q,
        image,
        bx,
    })
}

/// A slanted board ([`slant`]): its corners in the image, and the board warped square.
#[derive(Debug, Clone)]
pub struct Slanted {
    /// Top left, top right, bottom right, bottom left, image pixels.
    pub corners: [[f32; 2]; 4],
    /// The board warped square ([`rectified`]).
    pub image: GrayImage,
    /// The board's box in `image`.
    pub bx: BoardBox,
}

/// The quadrilateral `q` (top left, top right, bottom right, bottom left) warped to a
/// square of about its own size (squares of at most [`RECTIFIED_SQUARE`] pixels), with half
/// a square of margin, and the box of the board in
/// it. `None` for a degenerate quadrilateral.
pub fn rectified(img: &GrayImage, q: &[[f32; 2]; 4]) -> Option<(GrayImage, BoardBox)> {
    let d = |a: [f32; 2], c: [f32; 2]| ((a[0] - c[0]).powi(2) + (a[1] - c[1]).powi(2)).sqrt();
    let side = ((d(q[0], q[1]) + d(q[1], q[2]) + d(q[2], q[3]) + d(q[3], q[0])) / 4.0)
        .round()
        .clamp(16.0, 8.0 * RECTIFIED_SQUARE);
    let m = (side / 16.0).round();
    let to = [(m, m), (m + side, m), (m + side, m + side), (m, m + side)];
    let from = q.map(|p| (p[0], p[1]));
    let p = Projection::from_control_points(from, to)?;
    let n = (side + 2.0 * m) as u32;
    let mut out = GrayImage::new(n, n);
    warp_into(img, &p, Interpolation::Bilinear, Luma([255]), &mut out);
    Some((
        out,
        BoardBox {
            x0: m,
            y0: m,
            x1: m + side,
            y1: m + side,
            score: 0.0,
            checker: 0.0,
        },
    ))
}

/// How well the squares of the box `bx` of `image` alternate light/dark, 0..1 (what
/// [`BoardBox::checker`] holds for a box the lattice search found).
pub fn box_checker(image: &GrayImage, bx: &BoardBox) -> f32 {
    let fit = |start: f32, size: f32| Fit {
        start,
        size,
        score: 0.0,
        contrast: 0.0,
    };
    checker(image, fit(bx.x0, bx.x1 - bx.x0), fit(bx.y0, bx.y1 - bx.y0))
}

/// Smallest turn (degrees) [`turn`] straightens.
pub const TURN_MIN_DEG: f32 = 2.0;
/// Largest turn (degrees) [`turn`] believes; beyond it a board is as likely turned by the
/// other way round a quarter turn.
pub const TURN_MAX_DEG: f32 = 40.0;

/// An image turned so that a board in it stands straight ([`turn`]).
#[derive(Debug, Clone)]
pub struct Turned {
    /// Degrees the image was turned by (clockwise on screen).
    pub degrees: f32,
    /// The turned image, on a canvas large enough to hold all of the original.
    pub image: GrayImage,
    /// From the turned image's pixels back to the original's.
    back: Projection,
}

impl Turned {
    /// A point of the turned image in the original's pixels.
    pub fn to_original(&self, p: [f32; 2]) -> [f32; 2] {
        let (x, y) = self.back * (p[0], p[1]);
        [x, y]
    }
}

/// The dominant direction of the image's edges, folded into a quarter turn: the
/// gradient-weighted histogram of edge directions (Sobel; 1° bins, smoothed over 3) over the
/// image scaled to [`WORK_SIDE`], its peak refined between bins. A board's lines give a
/// sharp peak; `None` where the peak is under twice the histogram's mean (no direction
/// stands out).
pub fn edge_direction(img: &GrayImage) -> Option<f32> {
    let (work, _) = work_copy(img, WORK_SIDE);
    let work = &*work;
    let blurred = imageproc::filter::gaussian_blur_f32(work, 1.0);
    let gx = imageproc::gradients::horizontal_sobel(&blurred);
    let gy = imageproc::gradients::vertical_sobel(&blurred);
    let (w, h) = blurred.dimensions();
    let mut hist = [0.0f32; 90];
    for y in 1..h.saturating_sub(1) {
        for x in 1..w.saturating_sub(1) {
            let (gx, gy) = (gx.get_pixel(x, y)[0] as f32, gy.get_pixel(x, y)[0] as f32);
            let m = gx.abs() + gy.abs();
            if m < 24.0 {
                continue;
            }
            let deg = gy.atan2(gx).to_degrees().rem_euclid(90.0);
            hist[(deg as usize).min(89)] += m;
        }
    }
    let smooth: Vec<f32> = (0..90)
        .map(|i| hist[(i + 89) % 90] + hist[i] + hist[(i + 1) % 90])
        .collect();
    let (peak, &top) = smooth
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))?;
    let mean = smooth.iter().sum::<f32>() / 90.0;
    if top < 2.0 * mean || top <= 0.0 {
        return None;
    }
    let (l, r) = (smooth[(peak + 89) % 90], smooth[(peak + 1) % 90]);
    let d = l - 2.0 * top + r;
    let off = if d < 0.0 { 0.5 * (l - r) / d } else { 0.0 };
    let deg = peak as f32 + 0.5 + off;
    // Folded to -45..45: a board's lines at 3° or at 93° are the same board turned by 3°.
    Some(if deg >= 45.0 { deg - 90.0 } else { deg })
}

/// The image turned so that its dominant edge direction ([`edge_direction`]) is upright,
/// where that direction is off by [`TURN_MIN_DEG`] to [`TURN_MAX_DEG`]; `None` otherwise.
pub fn turn(img: &GrayImage) -> Option<Turned> {
    let deg = edge_direction(img)?;
    if !(TURN_MIN_DEG..=TURN_MAX_DEG).contains(&deg.abs()) {
        return None;
    }
    let (w, h) = (img.width() as f32, img.height() as f32);
    let t = (-deg).to_radians();
    let (c, s) = (t.cos().abs(), t.sin().abs());
    let (nw, nh) = ((w * c + h * s).ceil(), (w * s + h * c).ceil());
    let forward = Projection::translate(-w / 2.0, -h / 2.0)
        .and_then(Projection::rotate(t))
        .and_then(Projection::translate(nw / 2.0, nh / 2.0));
    let mut out = GrayImage::new(nw as u32, nh as u32);
    warp_into(
        img,
        &forward,
        Interpolation::Bilinear,
        Luma([255]),
        &mut out,
    );
    Some(Turned {
        degrees: deg,
        image: out,
        back: forward.invert(),
    })
}

/// The box moved inside the image (a line found in the white margin is on the edge).
fn clamped(b: BoardBox, w: u32, h: u32) -> BoardBox {
    BoardBox {
        x0: b.x0.clamp(0.0, w as f32),
        y0: b.y0.clamp(0.0, h as f32),
        x1: b.x1.clamp(0.0, w as f32),
        y1: b.y1.clamp(0.0, h as f32),
        ..b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A white page with text-like noise and an 8 × 8 checkerboard (with a frame) at
    /// `(ox, oy)`, squares of `sq` pixels.
    fn page(w: u32, h: u32, ox: u32, oy: u32, sq: u32) -> GrayImage {
        let mut img = GrayImage::from_pixel(w, h, Luma([245]));
        // "Text": short dark dashes in lines, a cheap deterministic pseudo-random pattern.
        let mut seed = 12345u32;
        let mut rnd = || {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (seed >> 16) & 0x7fff
        };
        for line in 0..h / 14 {
            let y = line * 14 + 3;
            let mut x = 5;
            while x + 12 < w {
                let len = 3 + rnd() % 9;
                for dx in 0..len {
                    for dy in 0..7 {
                        if rnd() % 3 != 0 && y + dy < h {
                            img.put_pixel(x + dx, y + dy, Luma([40]));
                        }
                    }
                }
                x += len + 2 + rnd() % 5;
            }
        }
        let side = 8 * sq;
        for y in oy.saturating_sub(6)..(oy + side + 6).min(h) {
            for x in ox.saturating_sub(6)..(ox + side + 6).min(w) {
                img.put_pixel(x, y, Luma([250]));
            }
        }
        for y in 0..side {
            for x in 0..side {
                let dark = (x / sq + y / sq) % 2 == 1;
                let v = if dark { 110 } else { 235 };
                img.put_pixel(ox + x, oy + y, Luma([v]));
            }
        }
        // A frame around the board.
        for t in 0..side {
            for (x, y) in [
                (ox + t, oy),
                (ox + t, oy + side - 1),
                (ox, oy + t),
                (ox + side - 1, oy + t),
            ] {
                img.put_pixel(x, y, Luma([20]));
            }
        }
        img
    }

    fn assert_box(b: &BoardBox, ox: u32, oy: u32, side: u32, tol: f32) {
        let want = [ox as f32, oy as f32, (ox + side) as f32, (oy + side) as f32];
        let got = [b.x0, b.y0, b.x1, b.y1];
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() <= tol, "box {got:?}, want {want:?}");
        }
    }

    #[test]
    fn finds_a_board_on_a_page_with_text() {
        let img = page(420, 560, 97, 143, 30);
        let b = locate(&img).unwrap();
        assert_box(&b, 97, 143, 240, 2.0);
        assert!(b.score > MIN_SCORE);
    }

    #[test]
    fn finds_a_board_on_a_large_page_refined_at_full_resolution() {
        let img = page(1300, 1700, 311, 702, 70);
        let b = locate(&img).unwrap();
        assert_box(&b, 311, 702, 560, 2.0);
    }

    /// A diagram of a seventh of a typeset page's width (squares of 20 px on 1100 × 1500):
    /// the whole-image search cannot see it, the windows find it.
    #[test]
    fn finds_a_small_diagram_on_a_page_in_windows() {
        let img = page(1100, 1500, 640, 520, 20);
        assert!(matches!(
            locate_whole(&img, false, WORK_SIDE),
            Err(LocateError::NoBoard { .. })
        ));
        let b = locate(&img).unwrap();
        assert_box(&b, 640, 520, 160, 2.0);
        // A page of text alone still has none, and a dark photo is not searched in windows.
        let text = page(1100, 1500, 0, 0, 0);
        assert!(matches!(locate(&text), Err(LocateError::NoBoard { .. })));
        let dark = image::imageops::colorops::brighten(&img, -120);
        assert!(locate_in_windows(&dark, false).is_none());
    }

    /// A board cut tight at the image's edge has no edge to see there: its box may come back
    /// a little inside (a known weakness), but not by a square.
    #[test]
    fn whole_image_board() {
        let img = page(256, 256, 0, 0, 32);
        let b = locate(&img).unwrap();
        assert_box(&b, 0, 0, 256, 5.0);
    }

    #[test]
    fn no_board_on_blank_or_text_pages() {
        let blank = GrayImage::from_pixel(300, 400, Luma([250]));
        assert!(matches!(locate(&blank), Err(LocateError::NoBoard { .. })));
        let text = page(400, 500, 0, 0, 0);
        assert!(
            matches!(locate(&text), Err(LocateError::NoBoard { .. })),
            "{:?}",
            locate(&text)
        );
        let tiny = GrayImage::from_pixel(20, 300, Luma([0]));
        assert!(matches!(locate(&tiny), Err(LocateError::TooSmall { .. })));
    }

    /// A lattice one rank too high (a rank of page above the board, the board's last rank
    /// lost) and one file to the left moves back onto the board.
    #[test]
    fn settle_moves_a_shifted_lattice_back() {
        let (ox, oy, sq) = (60u32, 90u32, 24u32);
        let img = page(400, 400, ox, oy, sq);
        let side = (8 * sq) as f32;
        let fit = |start: f32| Fit {
            start,
            size: side,
            score: 0.5,
            contrast: 1.0,
        };
        let (fx, fy) = (fit((ox - sq) as f32), fit((oy - sq) as f32));
        let chk = checker(&img, fx, fy);
        let (sx, sy, c) = settle(&img, fx, fy, chk);
        assert_eq!((sx.start, sy.start), (ox as f32, oy as f32));
        assert!(c > chk + SHIFT_MARGIN, "{c} vs {chk}");
        // The right lattice stays.
        let (sx, sy, _) = settle(&img, fit(ox as f32), fit(oy as f32), c);
        assert_eq!((sx.start, sy.start), (ox as f32, oy as f32));
    }

    /// A board photographed at a slant (corners moved by up to 0.3 of a square): the box
    /// alone misses a corner by more than a quarter of a square, the slant fit by under a
    /// fifth.
    #[test]
    fn slant_finds_the_corners_of_a_tilted_board() {
        let (ox, oy, sq) = (100u32, 120u32, 30u32);
        let flat = page(460, 500, ox, oy, sq);
        let side = (8 * sq) as f32;
        let (x0, y0) = (ox as f32, oy as f32);
        let square = [
            (x0, y0),
            (x0 + side, y0),
            (x0 + side, y0 + side),
            (x0, y0 + side),
        ];
        let want = [
            (x0 + 9.0, y0 + 3.0),
            (x0 + side - 4.0, y0 - 6.0),
            (x0 + side + 5.0, y0 + side + 4.0),
            (x0 - 8.0, y0 + side - 2.0),
        ];
        let p = Projection::from_control_points(square, want).unwrap();
        let mut img = GrayImage::new(460, 500);
        warp_into(&flat, &p, Interpolation::Bilinear, Luma([245]), &mut img);
        let b = locate(&img).unwrap();
        let err = |q: [[f32; 2]; 4]| {
            q.iter()
                .zip(want)
                .map(|(a, w)| (a[0] - w.0).abs().max((a[1] - w.1).abs()))
                .fold(0.0f32, f32::max)
                / sq as f32
        };
        assert!(err(b.corners()) > 0.25, "box {:?}", b.corners());
        let q = slant(&img, &b).expect("a slant").corners;
        assert!(err(q) < 0.2, "slant {q:?}, want {want:?}");
        // A straight board needs none.
        assert!(slant(&flat, &locate(&flat).unwrap()).is_none());
    }

    /// A board turned by 12°: no axis-aligned lattice fits it, the turned image has it
    /// upright, and its corners map back onto the turned board's.
    #[test]
    fn turn_straightens_a_turned_board() {
        let (ox, oy, sq) = (110u32, 120u32, 30u32);
        let flat = page(460, 480, ox, oy, sq);
        let (cx, cy) = (230.0f32, 240.0f32);
        let t = 12.0f32.to_radians();
        let spin = Projection::translate(-cx, -cy)
            .and_then(Projection::rotate(t))
            .and_then(Projection::translate(cx, cy));
        let mut img = GrayImage::new(460, 480);
        warp_into(&flat, &spin, Interpolation::Bilinear, Luma([245]), &mut img);
        let deg = edge_direction(&img).unwrap();
        assert!((deg - 12.0).abs() < 1.0, "{deg}");
        let turned = turn(&img).unwrap();
        let b = locate(&turned.image).unwrap();
        let side = (8 * sq) as f32;
        let (x0, y0) = (ox as f32, oy as f32);
        let square = [
            [x0, y0],
            [x0 + side, y0],
            [x0 + side, y0 + side],
            [x0, y0 + side],
        ];
        for (got, want) in b.corners().iter().zip(square) {
            let (wx, wy) = spin * (want[0], want[1]);
            let g = turned.to_original(*got);
            let err = (g[0] - wx).abs().max((g[1] - wy).abs());
            assert!(err < 0.25 * sq as f32, "{g:?} vs {:?}", (wx, wy));
        }
        // An upright board is not turned.
        assert!(turn(&flat).is_none());
    }

    #[test]
    fn lattice_on_a_clean_profile() {
        let mut p = vec![0.0f32; 200];
        for k in 0..9 {
            p[20 + k * 20] = 10.0;
        }
        let f = lattice(&p, 40, 199).unwrap();
        // Lines are matched within a pixel.
        assert!(
            (f.start - 20.0).abs() <= 1.0 && (f.size - 160.0).abs() <= 2.0,
            "{f:?}"
        );
        assert!(f.score > 0.99);
    }
}
