//! The text layer of a born-digital PDF page: every glyph with its Unicode text and place,
//! then grouped into columns and lines.
//!
//! Input: a `hayro` page and the scale it is drawn at (so glyph places are in the pixels of
//! [`crate::pages::Page`]). Output: [`Line`]s in reading order (column by column, top to
//! bottom), each with its text (words joined by one space) and its box.
//!
//! The glyphs come from interpreting the page with a `hayro_interpret::Device` that draws
//! nothing and keeps each glyph run; a glyph's text is its `ToUnicode` or glyph-name mapping.
//! A scanned page has no text layer: no lines.

use hayro::hayro_interpret::font::{Glyph as PdfGlyph, GlyphRun};
use hayro::hayro_interpret::hayro_cmap::BfString;
use hayro::hayro_interpret::kurbo::{Affine, BezPath, Point, Rect, Shape};
use hayro::hayro_interpret::{
    interpret_page, BlendMode, ClipPath, Context, Device, DrawMode, DrawProps, Image,
    ImageDrawProps, InterpreterCache, InterpreterSettings, SoftMask, TransformExt,
};
use hayro::hayro_syntax::page::Page as PdfPage;

/// One glyph on the page, in page pixels (y down).
#[derive(Debug, Clone, PartialEq)]
pub struct Glyph {
    pub text: String,
    /// Left, top, right, bottom of its ink (or of an estimate for glyphs without an outline).
    pub rect: [f32; 4],
    /// Baseline y.
    pub baseline: f32,
    /// Where the glyph starts (its origin) and where the next one would start (origin plus
    /// advance; the ink's right edge when the font gives no advance).
    pub x: f32,
    pub end: f32,
    /// Whether `rect` and `end` come from the glyph's outline and advance (a Type 3 glyph
    /// has neither; its extent is a guess, and only space glyphs separate its words).
    pub measured: bool,
    /// Font size in pixels.
    pub size: f32,
}

/// A line of text.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub text: String,
    /// Left, top, right, bottom.
    pub rect: [f32; 4],
    /// Index of its column, left to right.
    pub column: usize,
    /// Font size (median of its glyphs), pixels.
    pub size: f32,
    /// How sure the reading is: 1 for a text layer; for a scanned line, the mean of its
    /// words' confidences.
    pub confidence: f32,
}

struct Collector {
    glyphs: Vec<Glyph>,
}

impl<'a> Device<'a> for Collector {
    fn draw_path(&mut self, _: &BezPath, _: DrawProps<'a>, _: &DrawMode) {}
    fn push_clip_path(&mut self, _: &ClipPath) {}
    fn push_transparency_group(&mut self, _: f32, _: Option<SoftMask<'a>>, _: BlendMode) {}
    fn draw_glyph_run(&mut self, run: &GlyphRun<'_, 'a>, props: DrawProps<'a>, _: &DrawMode) {
        for g in run.glyphs() {
            let Some(text) = g.as_unicode().map(|u| match u {
                BfString::Char(c) => unligature(c.to_string()),
                BfString::String(s) => unligature(s),
            }) else {
                continue;
            };
            let t: Affine = props.transform * g.transform();
            // The em square: glyph space is 1000 units per em in hayro.
            let origin = t * Point::new(0.0, 0.0);
            let up = t * Point::new(0.0, 1000.0);
            let size = ((up - origin).hypot()) as f32;
            if !(size.is_finite() && size > 0.5) {
                continue;
            }
            let ink = match &**g {
                PdfGlyph::Outline(o) => {
                    let b = o.outline().bounding_box();
                    (b.width() > 0.0 || b.height() > 0.0).then(|| t.transform_rect_bbox(b))
                }
                PdfGlyph::Type3(_) => None,
            };
            let advance = match &**g {
                PdfGlyph::Outline(o) => o.advance_width(),
                PdfGlyph::Type3(_) => None,
            };
            let measured = ink.is_some();
            let rect = ink.unwrap_or_else(|| {
                Rect::new(
                    origin.x,
                    origin.y - 0.7 * size as f64,
                    origin.x + 0.5 * size as f64,
                    origin.y,
                )
            });
            self.glyphs.push(Glyph {
                text,
                rect: [
                    rect.x0 as f32,
                    rect.y0 as f32,
                    rect.x1 as f32,
                    rect.y1 as f32,
                ],
                baseline: origin.y as f32,
                x: origin.x as f32,
                // The advance, or the ink's right edge where that is further (some fonts'
                // advances come out short, which would read as spaces inside words).
                end: advance
                    .filter(|a| a.is_finite() && *a > 0.0)
                    .map_or(rect.x1 as f32, |a| {
                        ((t * Point::new(a as f64, 0.0)).x as f32).max(rect.x1 as f32)
                    }),
                size,
                measured,
            });
        }
    }
    fn draw_image(&mut self, _: Image<'a, '_>, _: ImageDrawProps<'a>) {}
    fn pop_clip(&mut self) {}
    fn pop_transparency_group(&mut self) {}
}

/// Typographic ligatures as their letters (`ﬀ` → `ff`; a move like `Rff2` is printed so).
fn unligature(s: String) -> String {
    if !s.chars().any(|c| ('\u{FB00}'..='\u{FB06}').contains(&c)) {
        return s;
    }
    s.chars()
        .map(|c| match c {
            '\u{FB00}' => "ff".to_string(),
            '\u{FB01}' => "fi".to_string(),
            '\u{FB02}' => "fl".to_string(),
            '\u{FB03}' => "ffi".to_string(),
            '\u{FB04}' => "ffl".to_string(),
            '\u{FB05}' | '\u{FB06}' => "st".to_string(),
            c => c.to_string(),
        })
        .collect()
}

/// Every glyph with a Unicode mapping on `page`, in the pixels of the page drawn at `scale`
/// pixels per point.
pub fn glyphs(page: &PdfPage<'_>, scale: f32) -> Vec<Glyph> {
    let cache = InterpreterCache::new();
    let (w, h) = page.render_dimensions();
    let transform = Affine::scale(scale as f64) * page.initial_transform(true).to_kurbo();
    let mut ctx = Context::new(
        transform,
        Rect::new(0.0, 0.0, (w * scale) as f64, (h * scale) as f64),
        &cache,
        page.xref(),
        InterpreterSettings::default(),
    );
    let mut dev = Collector { glyphs: Vec::new() };
    interpret_page(page, &mut ctx, &mut dev);
    dev.glyphs
}

/// Groups glyphs into lines in reading order. Columns are found from the vertical gutters
/// that no glyph crosses; inside a column, glyphs on one baseline form a line, and a gap
/// wider than 0.15 of the font size between one glyph's advance and the next glyph is a
/// space.
pub fn lines(glyphs: &[Glyph], page_width: f32) -> Vec<Line> {
    if glyphs.is_empty() {
        return Vec::new();
    }
    let columns = columns(glyphs, page_width);
    let col_of = |g: &Glyph| {
        let cx = (g.rect[0] + g.rect[2]) / 2.0;
        columns.iter().rposition(|&x| cx >= x).unwrap_or(0)
    };
    let mut by_col: Vec<Vec<&Glyph>> = vec![Vec::new(); columns.len()];
    for g in glyphs {
        by_col[col_of(g)].push(g);
    }
    let mut out = Vec::new();
    for (ci, mut gs) in by_col.into_iter().enumerate() {
        gs.sort_by(|a, b| a.baseline.total_cmp(&b.baseline));
        // Baseline clusters: a glyph joins the current line when its baseline is within a
        // third of its size of the line's first glyph.
        let mut rows: Vec<Vec<&Glyph>> = Vec::new();
        for g in gs {
            match rows.last_mut() {
                Some(r) if (g.baseline - r[0].baseline).abs() <= g.size / 3.0 => r.push(g),
                _ => rows.push(vec![g]),
            }
        }
        for mut r in rows {
            r.sort_by(|a, b| a.x.total_cmp(&b.x));
            let mut sizes: Vec<f32> = r.iter().map(|g| g.size).collect();
            sizes.sort_by(f32::total_cmp);
            let size = sizes[sizes.len() / 2];
            let mut text = String::new();
            r.retain(|g| !g.text.is_empty());
            let Some(first_glyph) = r.iter().find(|g| !g.text.trim().is_empty()) else {
                continue;
            };
            let mut rect = first_glyph.rect;
            let mut prev_end: Option<f32> = None;
            let mut space = false;
            let mut first = true;
            let mut prev_x: Option<f32> = None;
            for g in &r {
                if g.text.trim().is_empty() {
                    // A space glyph: a word ends here, whatever the metrics say.
                    space = true;
                    continue;
                }
                let gap = prev_end.is_some_and(|pe| g.measured && g.x - pe > size * 0.15)
                    // Two unmeasured glyphs: a step longer than any letter's advance.
                    || prev_x.is_some_and(|px| !g.measured && g.x - px > size * 1.1);
                if !first && (space || gap) {
                    text.push(' ');
                }
                space = false;
                first = false;
                text.push_str(&g.text);
                prev_end = Some(prev_end.map_or(g.end, |p| p.max(g.end)));
                if g.measured {
                    prev_x = None;
                } else {
                    // No advance known: the next glyph's gap is judged from origins only.
                    prev_end = None;
                    prev_x = Some(g.x);
                }
                rect = [
                    rect[0].min(g.rect[0]),
                    rect[1].min(g.rect[1]),
                    rect[2].max(g.rect[2]),
                    rect[3].max(g.rect[3]),
                ];
            }
            out.push(Line {
                text,
                rect,
                column: ci,
                size,
                confidence: 1.0,
            });
        }
    }
    out
}

/// Left edges of the columns: 0, then the middle of every gutter (an x range no glyph
/// covers, at least 2 % of the page wide, with text on both sides).
fn columns(glyphs: &[Glyph], page_width: f32) -> Vec<f32> {
    let bins = 400usize;
    let w = page_width.max(1.0);
    let mut cover = vec![0u32; bins];
    for g in glyphs {
        let a = ((g.rect[0] / w) * bins as f32)
            .floor()
            .clamp(0.0, bins as f32 - 1.0) as usize;
        let b = ((g.rect[2] / w) * bins as f32)
            .ceil()
            .clamp(0.0, bins as f32 - 1.0) as usize;
        for c in cover.iter_mut().take(b + 1).skip(a) {
            *c += 1;
        }
    }
    let first = cover.iter().position(|&c| c > 0).unwrap_or(0);
    let last = cover.iter().rposition(|&c| c > 0).unwrap_or(bins - 1);
    let min_gap = (bins as f32 * 0.02).ceil() as usize;
    let mut edges = vec![0.0];
    let mut i = first;
    while i <= last {
        if cover[i] == 0 {
            let start = i;
            while i <= last && cover[i] == 0 {
                i += 1;
            }
            if i - start >= min_gap {
                edges.push((start + i) as f32 / 2.0 / bins as f32 * w);
            }
        } else {
            i += 1;
        }
    }
    edges
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(text: &str, x: f32, baseline: f32) -> Glyph {
        Glyph {
            text: text.into(),
            rect: [x + 1.0, baseline - 10.0, x + 7.0, baseline],
            baseline,
            x,
            end: x + 8.0,
            size: 14.0,
            measured: true,
        }
    }

    #[test]
    fn ligatures_split() {
        assert_eq!(unligature("R\u{FB00}2".into()), "Rff2");
        assert_eq!(unligature("Nf3".into()), "Nf3");
    }

    #[test]
    fn words_lines_and_columns() {
        let mut gs = Vec::new();
        // Column 1: "1. e4 e5" on two lines; column 2 at x 500.
        for (i, c) in "1.".chars().enumerate() {
            gs.push(g(&c.to_string(), 10.0 + 8.0 * i as f32, 100.0));
        }
        gs.push(g("e", 40.0, 100.0));
        gs.push(g("4", 48.0, 100.5));
        gs.push(g("e", 10.0, 130.0));
        gs.push(g("5", 18.0, 130.0));
        gs.push(g("x", 500.0, 90.0));
        gs.push(g("y", 500.0, 140.0));
        // An unmeasured glyph (Type 3) joins its word; a space glyph separates.
        gs.push(Glyph {
            measured: false,
            ..g("x", 512.0, 140.0)
        });
        gs.push(g(" ", 520.0, 140.0));
        gs.push(g("z", 526.0, 140.0));
        let ls = lines(&gs, 1000.0);
        let texts: Vec<(&str, usize)> = ls.iter().map(|l| (l.text.as_str(), l.column)).collect();
        assert_eq!(texts, [("1. e4", 0), ("e5", 0), ("x", 1), ("yx z", 1)]);
        assert!(lines(&[], 100.0).is_empty());
    }
}
