//! Finding the move grid of a scoresheet from its printed lines.
//!
//! Nothing here knows a particular form. The page is binarized and deskewed; its long
//! horizontal rules cut it into bands; in each band the vertical rules that cross it from top to
//! bottom make a *signature*. The move grid is the longest run of bands of like height with the
//! same signature (a header row such as "WHITE | BLACK" has fewer verticals and is left out).
//! Between its verticals, narrow columns are move-number columns and each is followed by a
//! White and a Black column; blocks are numbered left to right, rows top to bottom.

use image::GrayImage;
use serde::Serialize;

use crate::geometry::Homography;
use crate::vision::{self, Bitmap, Rule};

/// Which player's move a cell holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    White,
    Black,
}

/// One move cell on the page, in the coordinates of the original image.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CellBox {
    /// Move number (1-based).
    pub number: u32,
    pub side: Side,
    /// Left, top, right, bottom, in pixels of the image as given.
    pub rect: [f32; 4],
}

/// The grid found on a page.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The page after deskewing (the image cells are cut from).
    pub page: GrayImage,
    /// Ink of `page`.
    pub ink: Bitmap,
    /// Skew that was undone, degrees.
    pub skew: f32,
    /// The perspective that was undone (a photo at a slant), if any: maps the scaled image,
    /// before the deskew, to `page` (the deskew is folded into it).
    pub warp: Option<Homography>,
    /// Scale from the original image to `page` (≤ 1).
    pub scale: f32,
    /// Column blocks and rows found.
    pub blocks: usize,
    pub rows: usize,
    /// Cells in move order (1 White, 1 Black, 2 White, …), with boxes in `page` coordinates.
    pub cells: Vec<PageCell>,
    /// The page was upside down and has been turned.
    pub turned: bool,
}

/// A cell in page coordinates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PageCell {
    pub number: u32,
    pub side: Side,
    pub x0: f32,
    pub y0: f32,
    pub x1: f32,
    pub y1: f32,
}

/// Why no grid was found.
#[derive(Debug, Clone, PartialEq)]
pub enum LayoutError {
    TooSmall { width: u32, height: u32 },
    NoGrid(String),
}

impl std::fmt::Display for LayoutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LayoutError::TooSmall { width, height } => write!(
                f,
                "the image is too small for a scoresheet ({width}×{height} pixels; at least 400×400 needed)"
            ),
            LayoutError::NoGrid(why) => write!(f, "no scoresheet move grid found: {why}"),
        }
    }
}

impl std::error::Error for LayoutError {}

/// Ruled lines whose directions differ by this much (degrees) between the top and bottom, or
/// the left and right, of the page, or column rules leaning by this much on average, are a
/// photo at a slant, and are made parallel and upright.
const RECTIFY_MIN_DEG: f32 = 0.3;

/// Smallest page side we try to read.
const MIN_SIDE: u32 = 400;

/// Finds the move grid on a grey page.
pub fn find(gray: &GrayImage, scale: f32) -> Result<Layout, LayoutError> {
    if gray.width() < MIN_SIDE || gray.height() < MIN_SIDE {
        return Err(LayoutError::TooSmall {
            width: gray.width(),
            height: gray.height(),
        });
    }
    let radius = vision::rule_radius(gray);
    let lines0 = vision::ruled_lines(gray, radius);
    let skew = vision::skew_degrees(&lines0, 6.0);
    let turned = skew.abs() >= vision::MIN_ROTATION_DEG;
    // A photo at a slant: make the ruled lines parallel again first, the turn and the warp
    // in one resampling.
    let (page, warp, found) = match vision::rectifying(&lines0, RECTIFY_MIN_DEG, skew) {
        Some(p) => {
            let (w, h) = gray.dimensions();
            straightened(gray, vision::rotation(w, h, skew).then(&p), radius)
        }
        None => {
            let page = vision::rotate(gray, skew);
            let lines = if turned {
                vision::ruled_lines(&page, radius)
            } else {
                lines0
            };
            let found = grid(&lines, &page, radius);
            (page, None, found)
        }
    };
    let at = Placement { skew, scale, warp };
    match found {
        Ok(g) if !g.upside_down => Ok(build(page, radius, at, g, false)),
        Ok(_) => {
            // Numbers to the right of their moves: the page is upside down.
            let page = image::imageops::rotate180(&page);
            let g = grid(&vision::ruled_lines(&page, radius), &page, radius)?;
            Ok(build(page, radius, at, g, true))
        }
        Err(e) => Err(e),
    }
}

/// The `page` warped straight by `p` (the deskew included), the map, and its grid. The
/// directions behind `p` are measured over parts of the page: at a strong slant one pass can
/// leave the far rows tilted enough to break their rules, and the grid comes out short. So
/// where the rows still converge, a second pass measures what is left, and the page warped
/// once by both (not a warp of a warp, which blurs twice) is used when its grid has more
/// cells (on pages the first pass got right, a second one measured through shadows can lose
/// rows).
fn straightened(
    page: &GrayImage,
    p: Homography,
    radius: u32,
) -> (GrayImage, Option<Homography>, Result<Grid, LayoutError>) {
    let warped = vision::warp_page(page, &p);
    let lines = vision::ruled_lines(&warped, radius);
    let found = grid(&lines, &warped, radius);
    // What breaks rows is rows still converging; columns measured again after one pass
    // mostly differ by their noise (session 24: on 116 photographed or slanted sheets the
    // second pass ran 63 times, 61 of them set off by the columns alone, and never found
    // more cells).
    let [top, bottom] = vision::banded_skews(&lines);
    if (top - bottom).abs() < RECTIFY_MIN_DEG {
        return (warped, Some(p), found);
    }
    if let Some(again) = vision::rectifying(&lines, RECTIFY_MIN_DEG, 0.0) {
        let both = p.then(&again);
        let twice = vision::warp_page(page, &both);
        let g = grid(&vision::ruled_lines(&twice, radius), &twice, radius);
        if cells(&g) > cells(&found) {
            return (twice, Some(both), g);
        }
    }
    (warped, Some(p), found)
}

/// Move cells of a grid found (rows × column blocks), 0 for none.
fn cells(g: &Result<Grid, LayoutError>) -> usize {
    g.as_ref().map_or(0, |g| g.rows.len() * g.blocks.len())
}

/// How the page was made from the image as given: scaled, then turned by `skew` degrees or
/// (a photo at a slant) warped by `warp`, the turn included.
#[derive(Debug, Clone, Copy)]
struct Placement {
    skew: f32,
    scale: f32,
    warp: Option<Homography>,
}

fn build(page: GrayImage, radius: u32, at: Placement, g: Grid, turned: bool) -> Layout {
    let ink = vision::binarize(&page, radius);
    let mut cells = Vec::new();
    for (b, block) in g.blocks.iter().enumerate() {
        for (r, &(y0, y1)) in g.rows.iter().enumerate() {
            let number = (b * g.rows.len() + r + 1) as u32;
            for (side, (x0, x1)) in [(Side::White, block.white), (Side::Black, block.black)] {
                cells.push(PageCell {
                    number,
                    side,
                    x0,
                    y0,
                    x1,
                    y1,
                });
            }
        }
    }
    cells.sort_by_key(|c| (c.number, c.side == Side::Black));
    Layout {
        page,
        ink,
        skew: at.skew,
        scale: at.scale,
        warp: at.warp,
        blocks: g.blocks.len(),
        rows: g.rows.len(),
        cells,
        turned,
    }
}

impl Layout {
    /// A cell's box in the coordinates of the image as it was given.
    pub fn original_box(&self, c: &PageCell) -> CellBox {
        let (w, h) = (self.page.width() as f32, self.page.height() as f32);
        let mut pts = [(c.x0, c.y0), (c.x1, c.y0), (c.x0, c.y1), (c.x1, c.y1)];
        if self.turned {
            for p in &mut pts {
                *p = (w - p.0, h - p.1);
            }
        }
        // Undo the warp (the deskew included) or the deskew rotation (about the centre),
        // then the scaling.
        let back = self.warp.and_then(|p| p.inverse());
        let (s, co) = self.skew.to_radians().sin_cos();
        let (cx, cy) = (w / 2.0, h / 2.0);
        let mut rect = [f32::MAX, f32::MAX, f32::MIN, f32::MIN];
        for (x, y) in pts {
            let (dx, dy) = (x - cx, y - cy);
            let (ox, oy) = match back {
                Some(b) => b
                    .apply([f64::from(x), f64::from(y)])
                    .map_or((x, y), |[x, y]| (x as f32, y as f32)),
                None => (cx + dx * co - dy * s, cy + dx * s + dy * co),
            };
            rect[0] = rect[0].min(ox / self.scale);
            rect[1] = rect[1].min(oy / self.scale);
            rect[2] = rect[2].max(ox / self.scale);
            rect[3] = rect[3].max(oy / self.scale);
        }
        CellBox {
            number: c.number,
            side: c.side,
            rect,
        }
    }

    /// The cell's image for the recognizer: the box grown a little (handwriting crosses the
    /// lines), resized to `w × h`.
    pub fn cell_image(&self, c: &PageCell, w: u32, h: u32) -> GrayImage {
        let (bw, bh) = (c.x1 - c.x0, c.y1 - c.y0);
        vision::crop_resize(
            &self.page,
            c.x0 - 0.02 * bw,
            c.y0 - 0.06 * bh,
            c.x1 + 0.02 * bw,
            c.y1 + 0.06 * bh,
            w,
            h,
        )
    }

    /// Where the writing in a cell is small (its ink spans under `below` of the cell's
    /// height), the cell's image zoomed on the writing alone, `w × h`: the recognizer was
    /// trained on writing 55–90 % of the image's height, and small writing in a whole cell
    /// is a few pixels tall.
    pub fn zoom_image(&self, c: &PageCell, w: u32, h: u32, below: f32) -> Option<GrayImage> {
        let r = self.zoom_box(c, w as f32 / h as f32, below)?;
        Some(vision::crop_resize(
            &self.page, r[0], r[1], r[2], r[3], w, h,
        ))
    }

    /// The box of [`Layout::zoom_image`]: around the ink inside the cell's lines (its 1st to
    /// 99th percentiles, so a speck does not count), the writing at 70 % of its height.
    fn zoom_box(&self, c: &PageCell, aspect: f32, below: f32) -> Option<[f32; 4]> {
        let (bw, bh) = (c.x1 - c.x0, c.y1 - c.y0);
        let (x0, x1) = (
            (c.x0 + 0.04 * bw).max(0.0) as u32,
            (c.x1 - 0.04 * bw) as u32,
        );
        let (y0, y1) = ((c.y0 + 0.1 * bh).max(0.0) as u32, (c.y1 - 0.1 * bh) as u32);
        let (x1, y1) = (x1.min(self.ink.width), y1.min(self.ink.height));
        let (mut xs, mut ys) = (Vec::new(), Vec::new());
        for y in y0..y1 {
            for x in x0..x1 {
                if self.ink.get(x, y) {
                    xs.push(x as f32);
                    ys.push(y as f32);
                }
            }
        }
        if xs.len() < 20 {
            return None;
        }
        let q = |v: &mut Vec<f32>, p: f32| {
            let i = ((v.len() - 1) as f32 * p).round() as usize;
            *v.select_nth_unstable_by(i, f32::total_cmp).1
        };
        let (ix0, ix1) = (q(&mut xs, 0.01), q(&mut xs, 0.99));
        let (iy0, iy1) = (q(&mut ys, 0.01), q(&mut ys, 0.99));
        let (iw, ih) = (ix1 - ix0 + 1.0, iy1 - iy0 + 1.0);
        if ih >= below * bh || ih < 0.08 * bh {
            return None;
        }
        // Text at 70 % of the crop's height, at least as wide as the writing and the aspect.
        let mut ch = ih / 0.7;
        let mut cw = (iw * 1.15 + 0.3 * ch).max(ch * aspect * 1.1);
        if cw > ch * aspect * 1.35 {
            ch = cw / (aspect * 1.35);
        }
        cw = cw.min(bw * 1.04);
        let (cx, cy) = ((ix0 + ix1) / 2.0, (iy0 + iy1) / 2.0);
        let left = (cx - cw / 2.0).clamp(c.x0 - 0.02 * bw, (c.x1 + 0.02 * bw - cw).max(c.x0));
        Some([left, cy - ch / 2.0, left + cw, cy + ch / 2.0])
    }

    /// Share of the cell's inside (away from its lines) that is ink.
    pub fn ink_share(&self, c: &PageCell) -> f32 {
        let (bw, bh) = (c.x1 - c.x0, c.y1 - c.y0);
        let (x0, x1) = ((c.x0 + 0.05 * bw) as u32, (c.x1 - 0.05 * bw) as u32);
        let (y0, y1) = ((c.y0 + 0.15 * bh) as u32, (c.y1 - 0.15 * bh) as u32);
        let area = (x1.saturating_sub(x0) * y1.saturating_sub(y0)).max(1);
        self.ink.count(x0, y0, x1, y1) as f32 / area as f32
    }
}

#[derive(Debug, Clone, PartialEq)]
struct Block {
    white: (f32, f32),
    black: (f32, f32),
}

#[derive(Debug, Clone, PartialEq)]
struct Grid {
    rows: Vec<(f32, f32)>,
    blocks: Vec<Block>,
    upside_down: bool,
}

/// Rows and column blocks of the move grid.
///
/// The rows are the longest run of bands between horizontal rules whose heights match the
/// typical row height (a band of about twice that height is a rule the scan lost, and is
/// split; a sliver is a stroke of handwriting, and is merged). The columns are the vertical
/// rules that cross most of those rows; strokes of handwriting that happen to be vertical cross
/// only one. Rows at either end that lack some of those rules (a "WHITE | BLACK" header whose
/// number column is merged) are dropped, and rows whose ruled lines were lost at either end
/// are added while those rules still cross them. Both look for the rules again in the grey
/// `page` smoothed down its columns before deciding a row lacks them: a faint printed line
/// under a photo's sensor noise binarizes as dots, and smoothing along it keeps the line and
/// averages the noise away, so a smaller margin under the local mean is safe where the
/// lines' places are known. `bm` is the page binarized with `radius`.
fn grid(bm: &Bitmap, page: &GrayImage, radius: u32) -> Result<Grid, LayoutError> {
    let w = bm.width;
    let rules: Vec<Rule> = vision::horizontal_rules(bm, (w / 30).max(20), 0.25)
        .into_iter()
        .filter(|r| r.thickness <= (bm.height / 100).max(6))
        .collect();
    if rules.len() < 4 {
        return Err(LayoutError::NoGrid(format!(
            "{} long horizontal lines (a move grid needs at least 4)",
            rules.len()
        )));
    }
    let ys: Vec<f32> = rules.iter().map(|r| r.at).collect();
    let gaps: Vec<f32> = ys.windows(2).map(|p| p[1] - p[0]).collect();
    let pitch =
        row_pitch(&gaps).ok_or_else(|| LayoutError::NoGrid("no evenly ruled rows".into()))?;
    // Row boundaries along the longest regular run.
    let mut best: Vec<f32> = Vec::new();
    let mut cur: Vec<f32> = vec![ys[0]];
    for &y in &ys[1..] {
        let last = *cur.last().unwrap_or(&y);
        let g = y - last;
        if g < 0.5 * pitch {
            continue; // a stroke of handwriting: wait for the real rule
        }
        let k = (g / pitch).round();
        if (1.0..=4.0).contains(&k) && (g - k * pitch).abs() <= 0.22 * pitch {
            for i in 1..k as usize {
                cur.push(last + g * i as f32 / k);
            }
            cur.push(y);
        } else {
            if cur.len() > best.len() {
                best = std::mem::take(&mut cur);
            }
            cur = vec![y];
        }
    }
    if cur.len() > best.len() {
        best = cur;
    }
    if best.len() < 4 {
        return Err(LayoutError::NoGrid(format!(
            "the largest grid of like rows has {} rows",
            best.len().saturating_sub(1)
        )));
    }
    // Verticals crossing each row.
    let tol = (w as f32 * 0.012).max(4.0);
    let thick = (w / 150).max(6);
    let row_verts: Vec<Vec<f32>> = best
        .windows(2)
        .map(|p| {
            let m = (p[1] - p[0]) * 0.15;
            vision::vertical_rules_in_band(bm, (p[0] + m) as u32, (p[1] - m) as u32, 0.9)
                .into_iter()
                .filter(|v| v.thickness <= thick)
                .map(|v| v.at)
                .collect()
        })
        .collect();
    // Cluster all verticals; keep those crossing at least half of the rows.
    let mut all: Vec<f32> = row_verts.iter().flatten().copied().collect();
    all.sort_by(f32::total_cmp);
    let mut clusters: Vec<Vec<f32>> = Vec::new();
    for x in all {
        match clusters.last_mut() {
            Some(c) if x - c[0] <= tol => c.push(x),
            _ => clusters.push(vec![x]),
        }
    }
    let n_rows = row_verts.len();
    // The rules of the run span the grid; verticals outside it are page edges.
    let (lo, hi) = rules
        .iter()
        .filter(|r| best.iter().any(|y| (r.at - y).abs() < 1.0))
        .fold((f32::MAX, f32::MIN), |(lo, hi), r| {
            (lo.min(r.start as f32), hi.max(r.end as f32))
        });
    let verts: Vec<f32> = clusters
        .iter()
        .filter(|c| c.len() * 2 >= n_rows)
        .filter(|c| c[0] >= lo - tol && c[c.len() - 1] <= hi + tol)
        .map(|c| c.iter().sum::<f32>() / c.len() as f32)
        .collect();
    if verts.len() < 3 {
        return Err(LayoutError::NoGrid(format!(
            "{} vertical lines cross the rows (a move grid needs at least 3)",
            verts.len()
        )));
    }
    // Drop rows at the ends that lack some of the grid's verticals (headers, footers).
    let lacks = |found: &[f32]| {
        verts
            .iter()
            .filter(|v| !found.iter().any(|x| (*x - **v).abs() <= tol))
            .count()
    };
    let crossed_faintly = |a: f32, b: f32| {
        // Only the strip that the smoothing and the binarization of this row look at.
        let r = (radius / 3).max(2);
        let y0 = (a.max(0.0) as u32).saturating_sub(r + radius);
        let y1 = (b.max(0.0) as u32 + r + radius + 1).min(page.height());
        if y1 <= y0 {
            return false;
        }
        let strip = image::imageops::crop_imm(page, 0, y0, page.width(), y1 - y0).to_image();
        let faint = vision::binarize_with(
            &imageproc::filter::box_filter(&strip, 0, r),
            radius,
            0.012,
            3.0,
        );
        let m = (b - a) * 0.15;
        let (top, bottom) = ((a + m) as u32 - y0, (b - m) as u32 - y0);
        let found: Vec<f32> = vision::vertical_rules_in_band(&faint, top, bottom, 0.9)
            .into_iter()
            .filter(|v| v.thickness <= thick)
            .map(|v| v.at)
            .collect();
        lacks(&found) <= 1
    };
    let complete = |i: usize| lacks(&row_verts[i]) <= 1 || crossed_faintly(best[i], best[i + 1]);
    let mut first = 0;
    let mut last = n_rows;
    while first < last && !complete(first) {
        first += 1;
    }
    while last > first && !complete(last - 1) {
        last -= 1;
    }
    if last - first < 3 {
        return Err(LayoutError::NoGrid(format!(
            "only {} rows are crossed by every column line",
            last - first
        )));
    }
    let mut rows: Vec<(f32, f32)> = (first..last).map(|i| (best[i], best[i + 1])).collect();
    // Rows whose rules the binarization lost at either end (faint lines where a photo's
    // light falls off): one row height more while the grid's column lines still cross it.
    let height = (rows[rows.len() - 1].1 - rows[0].0) / rows.len() as f32;
    while let Some(&(_, b)) = rows.last() {
        if b + height > bm.height as f32 - 1.0 || !crossed_faintly(b, b + height) {
            break;
        }
        rows.push((b, b + height));
    }
    while rows[0].0 - height >= 0.0 && crossed_faintly(rows[0].0 - height, rows[0].0) {
        rows.insert(0, (rows[0].0 - height, rows[0].0));
    }
    let widths: Vec<f32> = verts.windows(2).map(|p| p[1] - p[0]).collect();
    let wide = widths.iter().cloned().fold(0.0f32, f32::max);
    let narrow: Vec<bool> = widths.iter().map(|&x| x < 0.6 * wide).collect();
    let cols: Vec<(f32, f32)> = verts.windows(2).map(|p| (p[0], p[1])).collect();
    let (blocks, upside_down) = pair_columns(&cols, &narrow)?;
    Ok(Grid {
        rows,
        blocks,
        upside_down,
    })
}

/// The typical distance between the rules of a ruled grid: the gap length shared (within
/// 12 %) by the most gaps.
fn row_pitch(gaps: &[f32]) -> Option<f32> {
    let mut best: Option<(usize, f32)> = None;
    for &g in gaps {
        if g < 12.0 {
            continue;
        }
        let like: Vec<f32> = gaps
            .iter()
            .copied()
            .filter(|&h| (h - g).abs() <= 0.12 * g)
            .collect();
        let mean = like.iter().sum::<f32>() / like.len() as f32;
        if best.is_none_or(|b| like.len() > b.0) {
            best = Some((like.len(), mean));
        }
    }
    best.filter(|b| b.0 >= 3).map(|b| b.1)
}

/// Groups columns into (number,) White, Black blocks. Returns whether the number columns
/// stand to the right of their moves (an upside-down page).
fn pair_columns(cols: &[(f32, f32)], narrow: &[bool]) -> Result<(Vec<Block>, bool), LayoutError> {
    let n_narrow = narrow.iter().filter(|&&n| n).count();
    let wide: Vec<usize> = (0..cols.len()).filter(|&i| !narrow[i]).collect();
    if wide.len() < 2 || wide.len() % 2 == 1 {
        return Err(LayoutError::NoGrid(format!(
            "{} move columns between the vertical lines (expected pairs of White and Black)",
            wide.len()
        )));
    }
    let blocks: Vec<Block> = wide
        .chunks(2)
        .map(|p| Block {
            white: cols[p[0]],
            black: cols[p[1]],
        })
        .collect();
    // With number columns: each should stand right before a White column.
    let mut before = 0;
    let mut after = 0;
    for (i, &is_n) in narrow.iter().enumerate() {
        if !is_n {
            continue;
        }
        if i + 2 < cols.len() && !narrow[i + 1] && !narrow[i + 2] {
            before += 1;
        }
        if i >= 2 && !narrow[i - 1] && !narrow[i - 2] {
            after += 1;
        }
    }
    let upside_down = n_narrow > 0 && after > before;
    Ok((blocks, upside_down))
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::Luma;

    /// Draws an empty form: `blocks` × (number, White, Black) columns and `rows` move rows
    /// below a header row whose number column is merged with the White column.
    pub(crate) fn blank_form(blocks: u32, rows: u32, w: u32, h: u32) -> GrayImage {
        let mut img = GrayImage::from_pixel(w, h, Luma([250]));
        let top = h / 6;
        let row_h = (h - top - h / 10) / (rows + 1);
        let left = w / 12;
        let block_w = (w - 2 * left) / blocks;
        let line = |img: &mut GrayImage, x0: u32, y0: u32, x1: u32, y1: u32| {
            for y in y0..=y1 {
                for x in x0..=x1 {
                    img.put_pixel(x, y, Luma([40]));
                }
            }
        };
        let bottom = top + row_h * (rows + 1);
        for r in 0..=rows + 1 {
            let y = top + r * row_h;
            line(&mut img, left, y, left + block_w * blocks, y + 1);
        }
        for b in 0..blocks {
            let x = left + b * block_w;
            let xs = [
                x,
                x + block_w / 7,
                x + block_w / 7 + (block_w - block_w / 7) / 2,
            ];
            for (i, &vx) in xs.iter().enumerate() {
                let y0 = if i == 1 { top + row_h } else { top };
                line(&mut img, vx, y0, vx + 1, bottom);
            }
        }
        line(
            &mut img,
            left + block_w * blocks,
            top,
            left + block_w * blocks + 1,
            bottom,
        );
        img
    }

    #[test]
    fn finds_two_and_three_block_forms() {
        for (blocks, rows) in [(2, 25), (2, 30), (3, 20)] {
            let img = blank_form(blocks, rows, 1400, 2000);
            let l = find(&img, 1.0).expect("grid");
            assert_eq!((l.blocks, l.rows), (blocks as usize, rows as usize));
            assert_eq!(l.cells.len(), (2 * blocks * rows) as usize);
            assert_eq!((l.cells[0].number, l.cells[0].side), (1, Side::White));
            assert_eq!((l.cells[1].number, l.cells[1].side), (1, Side::Black));
            let last = l.cells.last().unwrap();
            assert_eq!(last.number, blocks * rows);
            // Move rows+1 starts the second block at the top.
            let c = l.cells[(2 * rows) as usize];
            assert_eq!(c.number, rows + 1);
            assert!(c.x0 > l.cells[0].x1);
            assert!((c.y0 - l.cells[0].y0).abs() < 3.0);
            assert!(!l.turned);
        }
    }

    /// The 2 × 25 blank form (1400 × 2000) with a black square on cell `cell`, photographed
    /// so that its corners land on `slant`; also the square's centre in the photo and the
    /// flat form's layout.
    fn photographed(cell: usize, slant: [(f32, f32); 4]) -> (GrayImage, (f32, f32), Layout) {
        use imageproc::geometric_transformations::{warp, Interpolation, Projection};
        let img = blank_form(2, 25, 1400, 2000);
        let l0 = find(&img, 1.0).unwrap();
        let c0 = l0.cells[cell];
        let mut marked = img.clone();
        let (mx, my) = ((c0.x0 + c0.x1) / 2.0, (c0.y0 + c0.y1) / 2.0);
        for y in (my as u32 - 10)..(my as u32 + 10) {
            for x in (mx as u32 - 10)..(mx as u32 + 10) {
                marked.put_pixel(x, y, Luma([0]));
            }
        }
        let flat = [(0.0, 0.0), (1400.0, 0.0), (1400.0, 2000.0), (0.0, 2000.0)];
        let p = Projection::from_control_points(flat, slant).unwrap();
        let photo = warp(&marked, &p, Interpolation::Bilinear, Luma([255]));
        (photo, p * (mx, my), l0)
    }

    /// Whether cell `cell`'s box, mapped back onto the photo, holds the point `at`.
    fn box_holds(l: &Layout, cell: usize, (px, py): (f32, f32)) -> bool {
        let b = l.original_box(&l.cells[cell]).rect;
        b[0] < px && px < b[2] && b[1] < py && py < b[3]
    }

    /// A form photographed at a slant (its corners moved inwards unevenly) is made square
    /// again: the grid is found, and a cell's box maps back onto the slanted image.
    #[test]
    fn forms_photographed_at_a_slant() {
        let slant = [
            (60.0, 40.0),
            (1370.0, 90.0),
            (1330.0, 1930.0),
            (20.0, 1990.0),
        ];
        let (photo, at, l0) = photographed(10, slant);
        let l = find(&photo, 1.0).unwrap();
        assert!(l.warp.is_some());
        assert_eq!((l.blocks, l.rows), (2, 25));
        assert!(box_holds(&l, 10, at), "{at:?}");
        // A flat form is left alone.
        assert!(l0.warp.is_none());
    }

    /// Each slant photographed gives the whole 2 × 25 grid, and cell 60's box maps back
    /// onto the photo around the mark drawn in it.
    fn read_whole(slants: &[[(f32, f32); 4]]) {
        for (k, &slant) in slants.iter().enumerate() {
            let (photo, at, _) = photographed(60, slant);
            let l = find(&photo, 1.0).unwrap();
            assert_eq!((l.blocks, l.rows), (2, 25), "slant {k}");
            assert!(box_holds(&l, 60, at), "slant {k}: {at:?}");
        }
    }

    /// Slants stronger still (a corner moved by up to a fifth of the page) leave rows
    /// converging after one pass: only the second pass reads these grids whole (one pass
    /// gives 2 × 24 rows on the first two and no grid on the third), and a cell's box maps
    /// back onto the photo through both passes.
    #[test]
    fn extreme_slants_need_the_second_pass() {
        read_whole(&[
            [
                (0.0, 300.0),
                (1400.0, 0.0),
                (1300.0, 2000.0),
                (100.0, 1700.0),
            ],
            [
                (100.0, 400.0),
                (1400.0, 0.0),
                (1400.0, 2000.0),
                (0.0, 1600.0),
            ],
            [(0.0, 0.0), (1400.0, 400.0), (1350.0, 1600.0), (0.0, 2000.0)],
        ]);
    }

    /// Strong slants give the whole grid, and a cell's box maps back onto the slanted image.
    /// (Written for session 17's second perspective pass; since session 18's banded first
    /// pass one pass reads these forms whole, with or without the second.)
    #[test]
    fn forms_photographed_at_a_strong_slant() {
        read_whole(&[
            [
                (110.0, 70.0),
                (1340.0, 170.0),
                (1240.0, 1850.0),
                (40.0, 1990.0),
            ],
            [
                (20.0, 160.0),
                (1300.0, 40.0),
                (1380.0, 1990.0),
                (140.0, 1860.0),
            ],
            [
                (90.0, 20.0),
                (1290.0, 110.0),
                (1370.0, 1960.0),
                (10.0, 1870.0),
            ],
        ]);
    }

    /// A form photographed from a corner, its horizontal rules level but its vertical ones
    /// all leaning one way (a shear, which no difference between the thirds shows), is made
    /// upright: the leaning column rules would otherwise miss the end rows.
    #[test]
    fn a_sheared_form_is_read_whole() {
        let slant = [
            (80.0, 20.0),
            (1390.0, 20.0),
            (1320.0, 1980.0),
            (10.0, 1980.0),
        ];
        let (photo, at, _) = photographed(60, slant);
        let l = find(&photo, 1.0).unwrap();
        assert!(l.warp.is_some());
        assert_eq!((l.blocks, l.rows), (2, 25));
        assert!(box_holds(&l, 60, at), "{at:?}");
    }

    /// Where a photo's light falls off, the rules of the last rows print faint and binarize
    /// as dots under the sensor's noise: those rows are still found while the column rules
    /// cross them.
    #[test]
    fn faint_rules_at_the_end_of_the_grid() {
        let mut img = blank_form(2, 25, 1400, 2000);
        let mut seed = 12345u64;
        for (_, y, p) in img.enumerate_pixels_mut() {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // A uniform noise of ±10 grey levels (sd 5.8).
            let noise = ((seed >> 33) % 21) as i32 - 10;
            // The lowest rows' rules 10 levels under the paper instead of 210 (without the
            // second look, in the page smoothed down its columns, these rows are lost).
            let v = if y > 1560 && p[0] < 100 {
                240
            } else {
                p[0] as i32
            };
            p[0] = (v + noise).clamp(0, 255) as u8;
        }
        let l = find(&img, 1.0).unwrap();
        assert_eq!((l.blocks, l.rows), (2, 25));
    }

    /// Small writing gets a zoomed view around it; writing that fills the cell, or an empty
    /// cell, gets none.
    #[test]
    fn small_writing_is_zoomed() {
        let mut img = blank_form(2, 25, 1400, 2000);
        let l0 = find(&img, 1.0).unwrap();
        let (small, big, empty) = (l0.cells[0], l0.cells[1], l0.cells[2]);
        let bh = small.y1 - small.y0;
        // A "word" 30 % of the cell's height, left of centre; another filling 80 %.
        let blot = |img: &mut GrayImage, c: &PageCell, share: f32, x0: f32, wide: f32| {
            let h = (c.y1 - c.y0) * share;
            let cy = (c.y0 + c.y1) / 2.0;
            for y in (cy - h / 2.0) as u32..(cy + h / 2.0) as u32 {
                for x in (c.x0 + x0) as u32..(c.x0 + x0 + wide) as u32 {
                    if (x / 4) % 2 == 0 {
                        img.put_pixel(x, y, Luma([20]));
                    }
                }
            }
        };
        blot(&mut img, &small, 0.3, 30.0, 60.0);
        blot(&mut img, &big, 0.8, 30.0, 150.0);
        let l = find(&img, 1.0).unwrap();
        let (small, big, empty) = (
            l.cells
                .iter()
                .find(|c| c.number == small.number && c.side == small.side)
                .unwrap(),
            l.cells
                .iter()
                .find(|c| c.number == big.number && c.side == big.side)
                .unwrap(),
            l.cells
                .iter()
                .find(|c| c.number == empty.number && c.side == empty.side)
                .unwrap(),
        );
        assert!(l.zoom_image(big, 128, 32, 0.6).is_none());
        assert!(l.zoom_image(empty, 128, 32, 0.6).is_none());
        assert!(l.zoom_image(small, 128, 32, 0.0).is_none());
        let r = l.zoom_box(small, 4.0, 0.6).expect("a zoom box");
        // About 0.3 / 0.7 of the cell's height, around the writing, inside the cell's width.
        let h = r[3] - r[1];
        assert!((h / bh - 0.43).abs() < 0.06, "height {h} of {bh}");
        let cy = (small.y0 + small.y1) / 2.0;
        assert!(((r[1] + r[3]) / 2.0 - cy).abs() < 3.0);
        assert!(r[0] <= small.x0 + 30.0 && r[2] >= small.x0 + 90.0, "{r:?}");
        assert!(r[0] >= small.x0 - 0.03 * (small.x1 - small.x0));
        let z = l.zoom_image(small, 128, 32, 0.6).unwrap();
        assert_eq!(z.dimensions(), (128, 32));
    }

    #[test]
    fn skewed_and_upside_down_forms() {
        let img = blank_form(2, 25, 1400, 2000);
        // A dark square in move 1's White cell, to follow through the rotation.
        let mut marked = img.clone();
        let l0 = find(&img, 1.0).unwrap();
        let c0 = l0.cells[0];
        let (mx, my) = ((c0.x0 + c0.x1) / 2.0, (c0.y0 + c0.y1) / 2.0);
        for y in (my as u32 - 12)..(my as u32 + 12) {
            for x in (mx as u32 - 12)..(mx as u32 + 12) {
                marked.put_pixel(x, y, Luma([0]));
            }
        }
        let skewed = vision::rotate(&marked, -3.0);
        let l = find(&skewed, 1.0).expect("grid on a skewed page");
        assert!((l.skew - 3.0).abs() < 0.3, "skew {}", l.skew);
        assert_eq!((l.blocks, l.rows), (2, 25));
        // The cell's box, mapped back to the skewed image, holds the dark square.
        let b = l.original_box(&l.cells[0]).rect;
        let (mut sx, mut sy, mut n) = (0.0, 0.0, 0.0);
        for (x, y, p) in skewed.enumerate_pixels() {
            let inside = (x as f32 - b[0]) > 5.0
                && (b[2] - x as f32) > 5.0
                && (y as f32) > b[1] + 5.0
                && (y as f32) < b[3] - 5.0;
            if p[0] < 20 && inside {
                sx += x as f32;
                sy += y as f32;
                n += 1.0;
            }
        }
        assert!(n > 200.0, "the mark is not inside {b:?}");
        let (cx, cy) = ((b[0] + b[2]) / 2.0, (b[1] + b[3]) / 2.0);
        assert!(
            (sx / n - cx).abs() < 15.0 && (sy / n - cy).abs() < 15.0,
            "{b:?} vs ({}, {})",
            sx / n,
            sy / n
        );
        let turned = image::imageops::rotate180(&img);
        let l = find(&turned, 1.0).expect("grid on a turned page");
        assert!(l.turned);
        assert_eq!((l.blocks, l.rows), (2, 25));
        // Move 1's White cell maps back to the bottom right part of the turned image.
        let b = l.original_box(&l.cells[0]);
        assert!(b.rect[0] > 700.0 && b.rect[1] > 1000.0, "{b:?}");
    }

    #[test]
    fn blank_and_tiny_pages_are_errors() {
        let blank = GrayImage::from_pixel(1000, 1400, Luma([255]));
        assert!(matches!(find(&blank, 1.0), Err(LayoutError::NoGrid(_))));
        let tiny = GrayImage::from_pixel(50, 50, Luma([255]));
        assert!(matches!(
            find(&tiny, 1.0),
            Err(LayoutError::TooSmall { .. })
        ));
    }
}
