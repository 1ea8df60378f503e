//! Orientation from printed coordinates: the file letters and rank digits that books print
//! beside a diagram and that screens draw in the corners of the edge squares.
//!
//! Input: a grey image and the located board's corners. Output: [`CoordReading`] — which
//! side is at the bottom, when the glyphs read there say so clearly, and what was read — or
//! `None` (no coordinates, or not clear). A reading that the glyphs do not settle is left to
//! the pieces ([`super::orientation_of`]); a wrong flip costs a whole board, so the bar is
//! high.
//!
//! 64 crops ([`SITES`] × 8) are cut through the board's homography, in square units of the
//! board as displayed, so a board photographed at a slant or turned still gives upright
//! glyphs. `models/coords.onnx` (`models/coords.md`) reads each as a file letter, a rank
//! digit or nothing. White at the bottom puts a..h left to right and 8..1 top to bottom;
//! Black at the bottom the reverse.

use image::GrayImage;
use imageproc::geometric_transformations::Projection;
use serde::Serialize;

use super::Orientation;
use crate::model::{CoordModel, COORD_BATCH, COORD_CLASSES, COORD_S};

/// Where coordinates are looked for, in units of the board's squares as displayed (x to the
/// right, y down, the board spanning 0..8): each site gives 8 crops, one per file or rank.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Site {
    /// Name in [`CoordReading::sites`].
    pub name: &'static str,
    /// Files (a crop per column, left to right) or ranks (a crop per row, top to bottom).
    pub files: bool,
    /// The crop of index 0: left, top, right, bottom (square units).
    pub first: [f32; 4],
}

/// Outside crops are 0.8 square, 0.02 square off the board's edge; inside crops are the
/// 0.4-square corner of an edge square. `scripts/train_coords.py` makes its training crops
/// to these measures.
pub const SITES: [Site; 8] = [
    Site {
        name: "below",
        files: true,
        first: [0.1, 8.02, 0.9, 8.82],
    },
    Site {
        name: "above",
        files: true,
        first: [0.1, -0.82, 0.9, -0.02],
    },
    Site {
        name: "left",
        files: false,
        first: [-0.82, 0.1, -0.02, 0.9],
    },
    Site {
        name: "right",
        files: false,
        first: [8.02, 0.1, 8.82, 0.9],
    },
    Site {
        name: "inside left",
        files: false,
        first: [0.0, 0.0, 0.4, 0.4],
    },
    Site {
        name: "inside right",
        files: false,
        first: [7.6, 0.0, 8.0, 0.4],
    },
    Site {
        name: "inside bottom right",
        files: true,
        first: [0.6, 7.6, 1.0, 8.0],
    },
    Site {
        name: "inside bottom left",
        files: true,
        first: [0.0, 7.6, 0.4, 8.0],
    },
];

/// A crop is left out when more than this share of it falls outside the image (the part
/// outside takes the crop's median: printed coordinates often sit right at the image's edge).
pub const MAX_OUTSIDE: f32 = 0.6;
/// Samples per output pixel and axis at most (more for larger crops, up to this).
pub const MAX_SUPERSAMPLE: usize = 2;
/// A glyph counts when the model gives "no coordinate" less than this.
pub const GLYPH_BELOW_NONE: f32 = 0.5;
/// A site is clear when at least this many of its glyphs read as one orientation's
/// coordinates (and more than its other glyphs together).
pub const MIN_AGREE: usize = 3;

/// What the coordinates said.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CoordReading {
    /// The side at the bottom they show.
    pub orientation: Orientation,
    /// Glyphs of the clear sites read as the coordinates that orientation puts there.
    pub agree: usize,
    /// The same for the other orientation (a clear site saying the other side settles
    /// nothing, so this is 0 in a reading; kept for the report).
    pub dissent: usize,
    /// What each site with a glyph read, e.g. `below: abcdefgh`, `left: 8765432?` (`?`
    /// for a crop without a clear glyph, `-` for one outside the image).
    pub sites: Vec<String>,
}

/// The class a crop shows: 0 none, 1..=8 files a..h, 9..=16 ranks 1..8.
fn class_char(k: usize) -> char {
    match k {
        1..=8 => (b'a' + (k - 1) as u8) as char,
        9..=16 => (b'1' + (k - 9) as u8) as char,
        _ => '?',
    }
}

/// The class that crop `i` of a site holds when `white` is at the bottom (or Black).
fn expected(site: &Site, i: usize, white: bool) -> usize {
    if site.files {
        1 + if white { i } else { 7 - i }
    } else {
        // rows top to bottom: 8..1 with White at the bottom
        9 + if white { 7 - i } else { i }
    }
}

/// The 64 crops (`COORD_S`², ink dark, crop after crop) and whether each lies in the image.
pub fn cut(img: &GrayImage, corners: &[[f32; 2]; 4]) -> Option<(Vec<f32>, Vec<bool>)> {
    let from = [(0.0, 0.0), (8.0, 0.0), (8.0, 8.0), (0.0, 8.0)];
    let to = corners.map(|c| (c[0], c[1]));
    let h = Projection::from_control_points(from, to)?;
    let n = COORD_S;
    let mut px = vec![1.0f32; COORD_BATCH * n * n];
    let mut ok = vec![false; COORD_BATCH];
    let (w, hgt) = (img.width() as f32, img.height() as f32);
    // supersampling per output pixel, from the crop's size in image pixels
    let side = ((corners[1][0] - corners[0][0]).hypot(corners[1][1] - corners[0][1])
        + (corners[3][0] - corners[0][0]).hypot(corners[3][1] - corners[0][1]))
        / 16.0;
    for (si, site) in SITES.iter().enumerate() {
        let span = (site.first[2] - site.first[0]) * side;
        let ss = ((span / n as f32).ceil() as usize).clamp(1, MAX_SUPERSAMPLE);
        for i in 0..8 {
            let k = si * 8 + i;
            let (dx, dy) = if site.files {
                (i as f32, 0.0)
            } else {
                (0.0, i as f32)
            };
            let [u0, v0, u1, v1] = site.first;
            let (u0, u1, v0, v1) = (u0 + dx, u1 + dx, v0 + dy, v1 + dy);
            let out = &mut px[k * n * n..(k + 1) * n * n];
            let mut outside = 0usize;
            // The crop's corners in the image; inside a crop (under a square) the
            // homography is taken as bilinear between them.
            let [p00, p10, p01, p11] = [(u0, v0), (u1, v0), (u0, v1), (u1, v1)].map(|q| h * q);
            for oy in 0..n {
                for ox in 0..n {
                    let mut acc = 0.0;
                    let mut cnt = 0usize;
                    for sy in 0..ss {
                        for sx in 0..ss {
                            let fu = (ox as f32 + (sx as f32 + 0.5) / ss as f32) / n as f32;
                            let fv = (oy as f32 + (sy as f32 + 0.5) / ss as f32) / n as f32;
                            let lerp = |a: f32, b: f32, c: f32, d: f32| {
                                (a * (1.0 - fu) + b * fu) * (1.0 - fv)
                                    + (c * (1.0 - fu) + d * fu) * fv
                            };
                            let x = lerp(p00.0, p10.0, p01.0, p11.0);
                            let y = lerp(p00.1, p10.1, p01.1, p11.1);
                            if x.is_finite()
                                && y.is_finite()
                                && x >= 0.0
                                && y >= 0.0
                                && x < w
                                && y < hgt
                            {
                                acc += bilinear(img, x, y);
                                cnt += 1;
                            }
                        }
                    }
                    if cnt == 0 {
                        outside += 1;
                        out[oy * n + ox] = f32::NAN;
                    } else {
                        out[oy * n + ox] = acc / cnt as f32;
                    }
                }
            }
            ok[k] = (outside as f32) <= MAX_OUTSIDE * (n * n) as f32;
            // pixels outside the image take the crop's median, then the crop is normalised
            let mut inside: Vec<f32> = out.iter().copied().filter(|v| v.is_finite()).collect();
            let fill = median(&mut inside).unwrap_or(1.0);
            for v in out.iter_mut() {
                if !v.is_finite() {
                    *v = fill;
                }
            }
            normalise(out);
        }
    }
    Some((px, ok))
}

fn bilinear(img: &GrayImage, x: f32, y: f32) -> f32 {
    let (w, h) = (img.width() as usize, img.height() as usize);
    let raw = img.as_raw();
    let (fx, fy) = ((x - 0.5).max(0.0), (y - 0.5).max(0.0));
    let (x0, y0) = (fx as usize, fy as usize);
    let (ax, ay) = (fx - x0 as f32, fy - y0 as f32);
    let (x0, y0) = (x0.min(w - 1), y0.min(h - 1));
    let (x1, y1) = ((x0 + 1).min(w - 1), (y0 + 1).min(h - 1));
    let at = |x: usize, y: usize| raw[y * w + x] as f32;
    let top = at(x0, y0) * (1.0 - ax) + at(x1, y0) * ax;
    let bot = at(x0, y1) * (1.0 - ax) + at(x1, y1) * ax;
    (top * (1.0 - ay) + bot * ay) / 255.0
}

fn median(v: &mut [f32]) -> Option<f32> {
    if v.is_empty() {
        return None;
    }
    let m = v.len() / 2;
    v.select_nth_unstable_by(m, f32::total_cmp);
    Some(v[m])
}

/// Stretches a crop to 0..1 and turns it so that its background (the median) is light, as
/// `scripts/train_coords.py` (`normalise`) does.
pub fn normalise(a: &mut [f32]) {
    let (lo, hi) = a
        .iter()
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(l, h), &v| {
            (l.min(v), h.max(v))
        });
    let span = (hi - lo).max(1e-3);
    for v in a.iter_mut() {
        *v = (*v - lo) / span;
    }
    let mut s = a.to_vec();
    if median(&mut s).is_some_and(|m| m < 0.5) {
        for v in a.iter_mut() {
            *v = 1.0 - *v;
        }
    }
}

/// Decides the orientation from the model's logits for the 64 crops (`ok`: the crops in the
/// image). Only a *clear* site counts: at least [`MIN_AGREE`] of its glyphs read as one
/// orientation's coordinates, more than all its other glyphs together (scattered false
/// glyphs, e.g. in hatched squares, never line up along a row). `None` unless some site is
/// clear and no clear site says the other side.
pub fn decide(logits: &[[f32; COORD_CLASSES]], ok: &[bool]) -> Option<CoordReading> {
    let (mut white, mut black) = (0usize, 0usize);
    let mut sites = Vec::new();
    for (si, site) in SITES.iter().enumerate() {
        let mut text = String::new();
        let (mut w, mut b, mut other) = (0usize, 0usize, 0usize);
        for i in 0..8 {
            let k = si * 8 + i;
            if !ok[k] {
                text.push('-');
                continue;
            }
            let p = softmax(&logits[k]);
            // a glyph of the kind this site holds (letters or digits), and surely not none
            let best = best_class(&p);
            let kind = if site.files { 1..=8 } else { 9..=16 };
            if p[0] >= GLYPH_BELOW_NONE || !kind.contains(&best) {
                text.push('?');
                continue;
            }
            text.push(class_char(best));
            if best == expected(site, i, true) {
                w += 1;
            } else if best == expected(site, i, false) {
                b += 1;
            } else {
                other += 1;
            }
        }
        if w + b + other > 0 {
            sites.push(format!("{}: {text}", site.name));
        }
        if w >= MIN_AGREE && w > b + other {
            white += w;
        } else if b >= MIN_AGREE && b > w + other {
            black += b;
        }
    }
    let (agree, dissent, orientation) = if white >= black {
        (white, black, Orientation::White)
    } else {
        (black, white, Orientation::Black)
    };
    (agree >= MIN_AGREE && dissent == 0).then_some(CoordReading {
        orientation,
        agree,
        dissent,
        sites,
    })
}

/// The most probable class.
fn best_class(p: &[f32; COORD_CLASSES]) -> usize {
    (0..COORD_CLASSES)
        .max_by(|&a, &b| p[a].total_cmp(&p[b]))
        .unwrap_or(0)
}

fn softmax(l: &[f32; COORD_CLASSES]) -> [f32; COORD_CLASSES] {
    let m = l.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut p = l.map(|v| (v - m).exp());
    let s: f32 = p.iter().sum();
    for v in &mut p {
        *v /= s;
    }
    p
}

/// Reads the coordinates around the board with these corners (top left, top right, bottom
/// right, bottom left of the board as displayed, in `img`'s pixels).
///
/// # Errors
///
/// The coordinate model fails to load or run.
pub fn read(img: &GrayImage, corners: &[[f32; 2]; 4]) -> Result<Option<CoordReading>, String> {
    let Some((px, ok)) = cut(img, corners) else {
        return Ok(None);
    };
    if !ok.iter().any(|&b| b) {
        return Ok(None);
    }
    let model = CoordModel::get()?;
    let logits = model.run(&px).map_err(|e| format!("{e:#}"))?;
    if let Some(path) = std::env::var_os("HAMLE_COORD_DUMP") {
        dump(&px, &logits, std::path::Path::new(&path));
    }
    Ok(decide(&logits, &ok))
}

/// With `HAMLE_COORD_DUMP=FILE.png` (a diagnostic): the 64 crops as a mosaic, a site per
/// row, and each crop's best class on stderr.
fn dump(px: &[f32], logits: &[[f32; COORD_CLASSES]], path: &std::path::Path) {
    let n = COORD_S;
    let mut img = GrayImage::new((8 * n) as u32, (SITES.len() * n) as u32);
    for (k, crop) in px.chunks_exact(n * n).enumerate() {
        for (j, v) in crop.iter().enumerate() {
            let (x, y) = ((k % 8) * n + j % n, (k / 8) * n + j / n);
            img.put_pixel(x as u32, y as u32, image::Luma([(v * 255.0).round() as u8]));
        }
    }
    let _ = img.save(path);
    for (si, site) in SITES.iter().enumerate() {
        let row: Vec<String> = (0..8)
            .map(|i| {
                let p = softmax(&logits[si * 8 + i]);
                let best = best_class(&p);
                format!("{}{:.2}", class_char(best), p[best])
            })
            .collect();
        eprintln!("{:>20}: {}", site.name, row.join(" "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_hot(k: usize) -> [f32; COORD_CLASSES] {
        let mut l = [0.0; COORD_CLASSES];
        l[k] = 10.0;
        l
    }

    /// Letters a..h below the board read as White at the bottom, h..a as Black; digits on
    /// the left 1..8 top to bottom as Black.
    #[test]
    fn decides_from_the_order_of_the_glyphs() {
        let mut l = vec![one_hot(0); 64];
        for (i, row) in l.iter_mut().take(8).enumerate() {
            *row = one_hot(1 + i); // below: a..h
        }
        let r = decide(&l, &[true; 64]).unwrap();
        assert_eq!(r.orientation, Orientation::White);
        assert_eq!((r.agree, r.dissent), (8, 0));
        assert_eq!(r.sites, vec!["below: abcdefgh".to_string()]);
        let mut l = vec![one_hot(0); 64];
        for i in 0..8 {
            l[16 + i] = one_hot(9 + i); // left: 1..8 top to bottom
        }
        assert_eq!(
            decide(&l, &[true; 64]).unwrap().orientation,
            Orientation::Black
        );
    }

    /// Too few glyphs, glyphs scattered over the sites, or sites that contradict each other
    /// settle nothing; crops outside the image do not count.
    #[test]
    fn unclear_glyphs_settle_nothing() {
        let mut l = vec![one_hot(0); 64];
        l[0] = one_hot(1);
        l[1] = one_hot(2);
        assert_eq!(decide(&l, &[true; 64]), None);
        // three glyphs that fit White, one per site: not a row of coordinates
        let mut s = vec![one_hot(0); 64];
        s[0] = one_hot(1);
        s[8 + 1] = one_hot(2);
        s[56 + 2] = one_hot(3);
        assert_eq!(decide(&s, &[true; 64]), None);
        // a row with three right glyphs and three others is not clear either
        let mut m = vec![one_hot(0); 64];
        for (i, k) in [1, 2, 3, 1, 1, 1].iter().enumerate() {
            m[i] = one_hot(*k);
        }
        assert_eq!(decide(&m, &[true; 64]), None);
        for i in 0..8 {
            l[i] = one_hot(1 + i);
            l[8 + i] = one_hot(8 - i); // above: h..a, the other way
        }
        assert_eq!(decide(&l, &[true; 64]), None);
        let mut ok = [true; 64];
        ok[8..16].fill(false);
        assert_eq!(decide(&l, &ok).unwrap().orientation, Orientation::White);
    }
}
