//! Printed text on a scanned page, found as boxes: columns, lines, words.
//!
//! Input: a page's grey levels and the boxes to leave out (its diagrams). Output:
//! [`ScanLine`]s in reading order (column by column, top to bottom), each with its word
//! boxes left to right, in the pixels of a copy of the page turned straight ([`Scan::gray`]).
//! Reading the words is the word model's job (`crate::model::WordModel`).
//!
//! Steps: the page is turned straight by the skew of its text rows; ink is found with a local
//! mean; columns are split at vertical gutters no ink crosses; a column's rows with ink form
//! line bands (a band much taller than the typical line is split at its thinnest row);
//! a line's words are split at gaps wider than 0.28 of the line's height, and a box still
//! wider than [`WIDE_WORD`] line heights (words set close in a tight justified line) at its
//! widest inner gaps.

use image::GrayImage;

use crate::vision;

/// A page turned straight, and its lines of words.
#[derive(Debug, Clone)]
pub struct Scan {
    /// The page turned by `-skew` degrees (what the boxes refer to).
    pub gray: GrayImage,
    /// The skew undone, degrees.
    pub skew: f32,
    pub lines: Vec<ScanLine>,
}

/// A line of printed text.
#[derive(Debug, Clone, PartialEq)]
pub struct ScanLine {
    pub column: usize,
    /// Left, top, right, bottom of the band.
    pub rect: [u32; 4],
    /// Each word's ink box (left, top, right, bottom; exclusive right and bottom).
    pub words: Vec<[u32; 4]>,
}

/// Finds the lines and words of printed text on a page, leaving out `exclude` (boxes in the
/// page's pixels, e.g. its diagrams, with a margin).
pub fn scan(page: &GrayImage, exclude: &[[f32; 4]]) -> Scan {
    let skew = {
        let bm = vision::binarize(page, 12);
        vision::skew_degrees(&bm, 3.0)
    };
    let mut gray = if skew.abs() >= 0.1 {
        vision::rotate(page, skew)
    } else {
        page.clone()
    };
    // Leave the diagrams out (their boxes are small against the skew; a margin covers it).
    for r in exclude {
        let m = (r[2] - r[0]).max(r[3] - r[1]) * 0.015 + 3.0;
        let x0 = (r[0] - m).max(0.0) as u32;
        let y0 = (r[1] - m).max(0.0) as u32;
        let x1 = ((r[2] + m).max(0.0) as u32).min(gray.width());
        let y1 = ((r[3] + m).max(0.0) as u32).min(gray.height());
        for y in y0..y1 {
            for x in x0..x1 {
                gray.put_pixel(x, y, image::Luma([255]));
            }
        }
    }
    let bm = vision::binarize_with(&gray, 15, 0.25, 40.0);
    let h = bm.height as usize;
    let mut lines = Vec::new();
    for (ci, (cx0, cx1)) in columns(&bm).into_iter().enumerate() {
        let rows = bm.ink_per_row(cx0 as u32, cx1 as u32, 0, h as u32);
        for (y0, y1) in bands(&rows) {
            let words = words_in(&bm, cx0, cx1, y0, y1);
            if words.is_empty() {
                continue;
            }
            let l = words.iter().map(|b| b[0]).min().unwrap_or(0);
            let r = words.iter().map(|b| b[2]).max().unwrap_or(0);
            lines.push(ScanLine {
                column: ci,
                rect: [l, y0 as u32, r, y1 as u32],
                words,
            });
        }
    }
    Scan { gray, skew, lines }
}

/// Column spans (left, right exclusive) split at vertical gutters: runs of x with (almost)
/// no ink wider than 1.2 typical line heights (and 1/60 of the page), with ink on both
/// sides.
fn columns(bm: &vision::Bitmap) -> Vec<(usize, usize)> {
    let (w, h) = (bm.width as usize, bm.height as usize);
    let cols = bm.ink_per_column(0, w as u32, 0, h as u32);
    let Some(first) = cols.iter().position(|&c| c > 1) else {
        return Vec::new();
    };
    let last = cols.iter().rposition(|&c| c > 1).unwrap_or(first);
    // A gutter is wider than a word space: more than the typical line height (spaces are
    // under half of it) and 1/60 of the page.
    let rows = bm.ink_per_row(0, w as u32, 0, h as u32);
    let mut hs: Vec<usize> = bands(&rows).iter().map(|(a, b)| b - a).collect();
    hs.sort_unstable();
    let line = hs.get(hs.len() / 2).copied().unwrap_or(10);
    let min_gap = (line * 6 / 5).max(w / 60).max(8);
    let mut spans = Vec::new();
    let mut start = first;
    let mut x = first;
    while x <= last {
        if cols[x] <= 1 {
            let g0 = x;
            while x <= last && cols[x] <= 1 {
                x += 1;
            }
            if x - g0 >= min_gap {
                spans.push((start, g0));
                start = x;
            }
        } else {
            x += 1;
        }
    }
    spans.push((start, last + 1));
    spans
}

/// Line bands (top, bottom exclusive) from a column's ink per row.
fn bands(rows: &[u32]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut y = 0;
    while y < rows.len() {
        if rows[y] == 0 {
            y += 1;
            continue;
        }
        let y0 = y;
        while y < rows.len() && rows[y] > 0 {
            y += 1;
        }
        out.push((y0, y));
    }
    if out.is_empty() {
        return out;
    }
    let mut hs: Vec<usize> = out.iter().map(|(a, b)| b - a).collect();
    hs.sort_unstable();
    let typical = hs[hs.len() / 2].max(1);
    // Specks and accents (a band much thinner than a line) join the nearest band.
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (a, b) in out {
        if b - a < typical / 3 {
            if let Some(last) = merged.last_mut() {
                if a - last.1 < typical / 2 {
                    last.1 = b;
                    continue;
                }
            }
        }
        merged.push((a, b));
    }
    // A band holding two touching lines is split at its thinnest row near the middle.
    let mut split = Vec::new();
    for (a, b) in merged {
        if b - a > typical * 17 / 10 {
            let lo = a + (b - a) / 3;
            let hi = a + 2 * (b - a) / 3;
            let cut = (lo..hi).min_by_key(|&y| rows[y]).unwrap_or((a + b) / 2);
            split.push((a, cut));
            split.push((cut, b));
        } else {
            split.push((a, b));
        }
    }
    split
}

/// Widest word box (in band heights) taken as one word; wider ones are split at their
/// widest gaps.
pub const WIDE_WORD: f32 = 5.0;
/// Smallest gap (share of the band's height) at which a too wide word box is split.
pub const TIGHT_GAP: f32 = 0.12;

/// Word boxes in a line band: ink runs split at gaps wider than 0.28 of the band's height
/// (at least 3 pixels).
fn words_in(bm: &vision::Bitmap, x0: usize, x1: usize, y0: usize, y1: usize) -> Vec<[u32; 4]> {
    let gap = ((y1 - y0) * 7 / 25).max(3);
    let cols = bm.ink_per_column(x0 as u32, x1 as u32, y0 as u32, y1 as u32);
    let mut out = Vec::new();
    let mut x = 0;
    while x < cols.len() {
        if cols[x] == 0 {
            x += 1;
            continue;
        }
        let start = x;
        let mut end = x;
        let mut blank = 0;
        while x < cols.len() {
            if cols[x] > 0 {
                end = x + 1;
                blank = 0;
            } else {
                blank += 1;
                if blank > gap {
                    break;
                }
            }
            x += 1;
        }
        if let Some((b, ink)) = ink_box(bm, x0 + start, x0 + end, y0, y1) {
            if ink >= 4 {
                out.push(b);
            }
        }
    }
    // A box far wider than any move is words set close in a tight justified line: it is
    // split at its widest inner gap (at least [`TIGHT_GAP`] of the band's height) until no
    // part is wider than [`WIDE_WORD`] band heights.
    let band = (y1 - y0) as u32;
    let min_gap = ((band as f32 * TIGHT_GAP).round() as usize).max(2);
    let widest = WIDE_WORD * band as f32;
    let out: Vec<[u32; 4]> = out
        .into_iter()
        .flat_map(|b| {
            let (a, z) = (b[0] as usize - x0, b[2] as usize - x0);
            if ((z - a) as f32) <= widest {
                return vec![b];
            }
            split_wide(&cols, a, z, min_gap, widest)
                .into_iter()
                .filter_map(|(p, q)| ink_box(bm, x0 + p, x0 + q, y0, y1).map(|(b, _)| b))
                .collect()
        })
        .collect();
    // A lone narrow glyph close before a word belongs to it: a `1` with wide side bearings
    // (`1 1.` is `11.`), a figurine set in its own font (`♗ g5`). No word is one such glyph.
    let mut merged: Vec<[u32; 4]> = Vec::with_capacity(out.len());
    let mut i = 0;
    while i < out.len() {
        let mut b = out[i];
        while i + 1 < out.len()
            && (b[2] - b[0]) * 20 < band * 13
            && (out[i + 1][0] - b[2]) * 5 < band * 3
        {
            let n = out[i + 1];
            b = [b[0], b[1].min(n[1]), n[2], b[3].max(n[3])];
            i += 1;
        }
        merged.push(b);
        i += 1;
    }
    merged
}

/// The box of the ink in columns `x0..x1` of the band `y0..y1` (its vertical extent inside
/// the band) and how many ink pixels it holds; `None` where there is none.
fn ink_box(
    bm: &vision::Bitmap,
    x0: usize,
    x1: usize,
    y0: usize,
    y1: usize,
) -> Option<([u32; 4], u32)> {
    let (ax, bx) = (x0 as u32, x1 as u32);
    let rows = bm.ink_per_row(ax, bx, y0 as u32, y1 as u32);
    let top = y0 as u32 + rows.iter().position(|&n| n > 0)? as u32;
    let bottom = y0 as u32 + rows.iter().rposition(|&n| n > 0)? as u32 + 1;
    Some(([ax, top, bx, bottom], rows.iter().sum()))
}

/// The span `a..z` of a column profile split at its widest blank run (of at least
/// `min_gap` columns), and each part again, until no part is wider than `widest` or has
/// such a run.
fn split_wide(
    cols: &[u32],
    a: usize,
    z: usize,
    min_gap: usize,
    widest: f32,
) -> Vec<(usize, usize)> {
    let mut spans = vec![(a, z)];
    let mut k = 0;
    while k < spans.len() {
        let (a, z) = spans[k];
        if ((z - a) as f32) <= widest {
            k += 1;
            continue;
        }
        // The widest blank run strictly inside.
        let (mut best, mut run_start) = (None::<(usize, usize)>, None::<usize>);
        for (x, &n) in cols.iter().enumerate().take(z).skip(a) {
            match (n == 0, run_start) {
                (true, None) => run_start = Some(x),
                (false, Some(s0)) => {
                    if x - s0 >= min_gap && best.is_none_or(|(p, q)| x - s0 > q - p) {
                        best = Some((s0, x));
                    }
                    run_start = None;
                }
                _ => {}
            }
        }
        match best {
            Some((p, q)) => {
                spans[k] = (a, p);
                spans.insert(k + 1, (q, z));
            }
            None => k += 1,
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Draws blocks standing for words: `lines` of (x, width) at rows of height 20, every 40 px.
    fn page(words: &[&[(u32, u32)]], w: u32) -> GrayImage {
        let mut g = GrayImage::from_pixel(w, 60 + 40 * words.len() as u32, image::Luma([245]));
        for (i, line) in words.iter().enumerate() {
            let y0 = 40 + 40 * i as u32;
            for &(x, ww) in line.iter() {
                for y in y0..y0 + 20 {
                    for xx in x..x + ww {
                        // Letters: vertical strokes 3 px wide every 6 px.
                        if (xx - x) % 6 < 3 {
                            g.put_pixel(xx, y, image::Luma([20]));
                        }
                    }
                }
            }
        }
        g
    }

    #[test]
    fn lines_and_words_in_two_columns() {
        let g = page(
            &[
                &[(20, 40), (80, 60), (400, 50)],
                &[(20, 90), (130, 30), (400, 80), (500, 40)],
            ],
            700,
        );
        let s = scan(&g, &[]);
        let shape: Vec<(usize, usize)> =
            s.lines.iter().map(|l| (l.column, l.words.len())).collect();
        assert_eq!(shape, [(0, 2), (0, 2), (1, 1), (1, 2)]);
        assert_eq!(s.lines[0].words[0][0], 20);
    }

    /// Words set close in a tight line (gaps under the usual word gap) make one box far
    /// wider than a move: it is split at its widest gaps until no part is over
    /// `WIDE_WORD` band heights. A long word of its own stays whole.
    #[test]
    fn a_tight_line_is_split_into_words() {
        let g = page(
            &[&[(20, 40), (65, 40), (110, 40), (155, 40)], &[(20, 90)]],
            400,
        );
        let s = scan(&g, &[]);
        assert_eq!(s.lines.len(), 2);
        let tight = &s.lines[0].words;
        assert!(tight.len() >= 3, "{tight:?}");
        assert_eq!((tight[0][0], tight[0][2]), (20, 59));
        let band = 20.0 * WIDE_WORD;
        assert!(
            tight.iter().all(|w| ((w[2] - w[0]) as f32) <= band + 2.0),
            "{tight:?}"
        );
        assert_eq!(s.lines[1].words.len(), 1);
    }

    #[test]
    fn excluded_boxes_and_blank_pages() {
        let g = page(&[&[(20, 40), (80, 60)]], 300);
        let s = scan(&g, &[[10.0, 30.0, 200.0, 70.0]]);
        assert!(s.lines.is_empty());
        let blank = GrayImage::from_pixel(300, 300, image::Luma([250]));
        assert!(scan(&blank, &[]).lines.is_empty());
    }
}
