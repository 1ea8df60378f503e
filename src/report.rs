//! The review report: one self-contained HTML file where a human checks what hamle was unsure of.
//!
//! Input: per input file, its records as `hamle batch` wrote them (`NAME.json`: the JSON
//! objects of [`crate::read::Content::values`]) and the file itself, re-opened for crops.
//! Output: HTML on an [`io::Write`] — no external file, script or font: crops are PNG data
//! URIs, boards inline SVG.
//!
//! For each game: every move's cell crop (for scoresheets) beside what was read, what hamle
//! decided, its status and confidence and the runner-ups; flagged moves highlighted, each
//! followed by an SVG board of the position after it. For each board: the crop of the image
//! beside the board as read, unsure squares outlined. Inputs with flagged records come first,
//! then the rest; failures (from `errors.jsonl`) are listed at the top.
//!
//! Only reading: the records and the input files are never changed. A source file that can
//! no longer be opened gives a report without its crops, and says so.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;

use base64::Engine as _;
use image::GrayImage;
use serde_json::Value;
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Position};

use crate::pages::{self, Document, Page};

/// Height of a cell crop in the report, in pixels.
pub const CROP_HEIGHT: u32 = 34;
/// Longest side of a board crop in the report, in pixels.
pub const BOARD_CROP: u32 = 240;

/// One input's part of the report.
#[derive(Debug, Clone)]
pub struct Section {
    /// The input as shown.
    pub display: String,
    /// Its output name (the anchor of its section).
    pub name: String,
    /// Number of flagged records (flagged plies and boards with doubt).
    pub flagged: usize,
    /// The HTML of the section.
    pub html: String,
}

/// Builds an input's section from its records, cropping from `path` (re-opened here).
pub fn section(display: &str, name: &str, path: &Path, records: &[Value]) -> Section {
    let doc = pages::open(path).ok();
    let mut html = String::new();
    let mut flagged = 0;
    let _ = write!(
        html,
        "<section id=\"{}\"><h2>{}</h2>",
        esc(&anchor(name)),
        esc(display)
    );
    if doc.is_none() {
        html.push_str("<p class=note>The input can no longer be opened: no crops.</p>");
    }
    // Records come page by page; one page image at a time is kept.
    let mut page: Option<Page> = None;
    for r in records {
        let p = r["page"]
            .as_u64()
            .map_or(0, |p| p.saturating_sub(1) as usize);
        let kind = r["kind"].as_str().unwrap_or("");
        if matches!(kind, "sheet" | "board") && page.as_ref().is_none_or(|pg| pg.index != p) {
            page = doc.as_ref().and_then(|d| load_page(d, p));
        }
        match kind {
            "sheet" | "text" | "game" => {
                let (h, f) = game_html(r, page.as_ref().filter(|_| kind == "sheet"));
                flagged += f;
                html.push_str(&h);
            }
            "board" => {
                let (h, f) = board_html(r, page.as_ref());
                flagged += f;
                html.push_str(&h);
            }
            _ => {
                let _ = write!(
                    html,
                    "<p class=none>{}: {}</p>",
                    page_label(r),
                    esc(r["error"].as_str().unwrap_or("nothing read"))
                );
            }
        }
    }
    html.push_str("</section>\n");
    Section {
        display: display.to_string(),
        name: name.to_string(),
        flagged,
        html,
    }
}

fn load_page(doc: &Document, index: usize) -> Option<Page> {
    if doc.text().is_some() {
        return None;
    }
    doc.page(index).ok()
}

/// Writes the whole report: a header with the counts, the failures, an index, the sections
/// (flagged first, each group in input order).
///
/// # Errors
///
/// Whatever `w` returns.
pub fn write(
    title: &str,
    sections: &[Section],
    failures: &[Value],
    w: &mut impl Write,
) -> io::Result<()> {
    let flagged_inputs = sections.iter().filter(|s| s.flagged > 0).count();
    writeln!(w, "<!doctype html><html lang=en><head><meta charset=utf-8>")?;
    writeln!(
        w,
        "<title>{}</title><style>{STYLE}</style></head><body>",
        esc(title)
    )?;
    writeln!(w, "<h1>{}</h1>", esc(title))?;
    writeln!(
        w,
        "<p>{} inputs read; {} with something to check; {} failures.</p>",
        sections.len(),
        flagged_inputs,
        failures.len()
    )?;
    if !failures.is_empty() {
        writeln!(w, "<h2>Failures</h2><table class=fail><tr><th>file</th><th>page</th><th>reason</th><th>error</th></tr>")?;
        for f in failures {
            writeln!(
                w,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(f["file"].as_str().unwrap_or("")),
                f["page"].as_u64().map_or(String::new(), |p| p.to_string()),
                esc(f["reason"].as_str().unwrap_or("")),
                esc(f["error"].as_str().unwrap_or(""))
            )?;
        }
        writeln!(w, "</table>")?;
    }
    let order: Vec<&Section> = sections
        .iter()
        .filter(|s| s.flagged > 0)
        .chain(sections.iter().filter(|s| s.flagged == 0))
        .collect();
    writeln!(w, "<h2>Inputs</h2><ul class=index>")?;
    for s in &order {
        writeln!(
            w,
            "<li><a href=\"#{}\">{}</a>{}</li>",
            esc(&anchor(&s.name)),
            esc(&s.display),
            if s.flagged > 0 {
                format!(" <span class=flag>{} to check</span>", s.flagged)
            } else {
                String::new()
            }
        )?;
    }
    writeln!(w, "</ul>")?;
    for s in order {
        w.write_all(s.html.as_bytes())?;
    }
    writeln!(w, "</body></html>")
}

const STYLE: &str = "body{font-family:sans-serif;margin:1.5em;color:#222}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;vertical-align:middle}\
tr.ok td{color:#444}tr.corrected td,tr.unreadable td{background:#fff3c4}\
tr.illegal td,tr.missing td{background:#ffd6d6}td.crop img{display:block}\
.flag{color:#a00;font-weight:bold}.note,.none{color:#777}section{border-top:2px solid #888;margin-top:1.5em}\
.board{display:flex;gap:1.5em;align-items:flex-start}.pos{margin:.3em 0 .6em 2em}\
td.alt{color:#666;font-size:90%}h3{margin-bottom:.2em}";

fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

/// An HTML id from an output name.
fn anchor(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

fn page_label(r: &Value) -> String {
    match r["page"].as_u64() {
        Some(p) => format!("page {p}"),
        None => "the file".into(),
    }
}

/// A grey crop as a PNG data URI, scaled to `height` pixels (never up).
fn crop_uri(page: &GrayImage, rect: [f64; 4], height: u32) -> Option<String> {
    let (w, h) = (page.width() as f64, page.height() as f64);
    let x0 = rect[0].clamp(0.0, w);
    let y0 = rect[1].clamp(0.0, h);
    let x1 = rect[2].clamp(0.0, w);
    let y1 = rect[3].clamp(0.0, h);
    if !(x1 - x0 >= 2.0 && y1 - y0 >= 2.0) {
        return None;
    }
    let crop = image::imageops::crop_imm(
        page,
        x0 as u32,
        y0 as u32,
        (x1 - x0) as u32,
        (y1 - y0) as u32,
    )
    .to_image();
    let crop = if crop.height() > height {
        let nw =
            ((crop.width() as f64 * height as f64 / crop.height() as f64).round() as u32).max(1);
        crate::vision::resize(&crop, nw, height)
    } else {
        crop
    };
    let mut png = Vec::new();
    crop.write_to(&mut io::Cursor::new(&mut png), image::ImageFormat::Png)
        .ok()?;
    Some(format!(
        "data:image/png;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(png)
    ))
}

/// A box from the JSON (`[l, t, r, b]` in the input's pixels) in the page's pixels.
fn scaled_box(v: &Value, scale: f32) -> Option<[f64; 4]> {
    let a = v.as_array()?;
    let mut r = [0.0; 4];
    for (o, x) in r.iter_mut().zip(a) {
        *o = x.as_f64()? * scale as f64;
    }
    Some(r)
}

/// A game's table; returns the HTML and its number of plies to check (flagged, or `ok`
/// but unsure).
fn game_html(r: &Value, page: Option<&Page>) -> (String, usize) {
    let mut h = String::new();
    let moves = r["moves"].as_array().cloned().unwrap_or_default();
    let flagged = moves
        .iter()
        .filter(|m| {
            m["status"].as_str() != Some("ok")
                || m["confidence"]
                    .as_f64()
                    .is_some_and(|c| c < f64::from(crate::record::UNSURE_BELOW))
        })
        .count();
    let _ = write!(
        h,
        "<h3>{}: {} — result {}, {} plies, {}</h3>",
        page_label(r),
        esc(r["kind"].as_str().unwrap_or("")),
        esc(r["result"].as_str().unwrap_or("*")),
        moves.len(),
        if flagged > 0 {
            format!("<span class=flag>{flagged} to check</span>")
        } else {
            "none flagged".into()
        }
    );
    let start = start_position(r);
    let mut pos = start.clone();
    let mut playable = pos.is_some();
    h.push_str("<table class=moves><tr><th>move</th><th>cell</th><th>read</th><th>decided</th><th>status</th><th>confidence</th><th>runner-ups</th></tr>");
    for m in &moves {
        let ply = m["ply"].as_u64().unwrap_or(0);
        let status = m["status"].as_str().unwrap_or("ok");
        let number = format!(
            "{}{}",
            ply.div_ceil(2),
            if ply % 2 == 1 { "." } else { "…" }
        );
        let crop = page
            .and_then(|p| {
                scaled_box(&m["box"], p.scale).and_then(|b| crop_uri(&p.gray, b, CROP_HEIGHT))
            })
            .map_or(String::new(), |u| format!("<img alt=\"cell\" src=\"{u}\">"));
        let alts: Vec<String> = m["alternatives"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter(|x| x["prob"].as_f64().unwrap_or(0.0) >= 0.005)
                    .take(3)
                    .map(|x| {
                        format!(
                            "{} {:.2}",
                            x["san"].as_str().unwrap_or(""),
                            x["prob"].as_f64().unwrap_or(0.0)
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        let _ = write!(
            h,
            "<tr class={status}><td>{number}</td><td class=crop>{crop}</td><td>{}</td><td><b>{}</b></td><td>{status}</td><td>{:.2}</td><td class=alt>{}</td></tr>",
            esc(m["read"].as_str().unwrap_or("—")),
            esc(m["san"].as_str().unwrap_or("—")),
            m["confidence"].as_f64().unwrap_or(0.0),
            esc(&alts.join(", "))
        );
        // Play the move on; after a flagged one, show the board.
        if playable {
            let next = pos.as_ref().and_then(|p| {
                let uci = m["uci"].as_str()?;
                let mv = UciMove::from_ascii(uci.as_bytes()).ok()?.to_move(p).ok()?;
                p.clone().play(mv).ok()
            });
            playable = next.is_some();
            pos = next;
        }
        if status != "ok" {
            if let Some(p) = pos.as_ref().filter(|_| playable) {
                let fen = Fen::from_position(p, shakmaty::EnPassantMode::Legal).to_string();
                let placement = fen.split(' ').next().unwrap_or("");
                let _ = write!(
                    h,
                    "<tr class=posrow><td></td><td colspan=6><div class=pos>{}<br><small>after {} {}</small></div></td></tr>",
                    svg_board(placement, &[], 22),
                    number,
                    esc(m["san"].as_str().unwrap_or(""))
                );
            }
        }
    }
    h.push_str("</table>");
    (h, flagged)
}

/// The game's start: the `FEN` header when there is one, else the initial position.
fn start_position(r: &Value) -> Option<Chess> {
    match r["headers"]["FEN"].as_str() {
        Some(f) => f
            .parse::<Fen>()
            .ok()?
            .into_position(CastlingMode::Standard)
            .ok(),
        None => Some(Chess::default()),
    }
}

/// A board's crop beside the board as read; returns the HTML and 1 when it has doubt.
fn board_html(r: &Value, page: Option<&Page>) -> (String, usize) {
    let flags: Vec<&str> = r["flags"]
        .as_array()
        .map(|a| a.iter().filter_map(|f| f.as_str()).collect())
        .unwrap_or_default();
    let low: Vec<&str> = r["low_confidence"]
        .as_array()
        .map(|a| a.iter().filter_map(|f| f.as_str()).collect())
        .unwrap_or_default();
    let check = r["check"]["result"].as_str();
    let differs = check == Some("differs");
    let doubt = usize::from(!flags.is_empty() || !low.is_empty() || differs);
    let crop = page.and_then(|p| {
        let c = r["corners"].as_array()?;
        let xs: Vec<f64> = c.iter().filter_map(|p| p[0].as_f64()).collect();
        let ys: Vec<f64> = c.iter().filter_map(|p| p[1].as_f64()).collect();
        let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
        let max = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let s = p.scale as f64;
        let b = [min(&xs) * s, min(&ys) * s, max(&xs) * s, max(&ys) * s];
        crop_uri(&p.gray, b, BOARD_CROP)
    });
    let mut h = String::new();
    let _ = write!(
        h,
        "<h3>{}: board — confidence {:.2}{}</h3><div class=board>",
        page_label(r),
        r["confidence"].as_f64().unwrap_or(0.0),
        if doubt > 0 {
            " <span class=flag>to check</span>"
        } else {
            ""
        }
    );
    if let Some(u) = crop {
        let _ = write!(h, "<img alt=\"board as printed\" src=\"{u}\">");
    }
    h.push_str(&svg_board(r["placement"].as_str().unwrap_or(""), &low, 30));
    let _ = write!(
        h,
        "<div><p><code>{}</code></p><p>orientation {}, side to move {} ({})</p>",
        esc(r["fen"].as_str().unwrap_or("")),
        esc(r["orientation"].as_str().unwrap_or("?")),
        esc(r["side_to_move"].as_str().unwrap_or("?")),
        esc(r["side_from"].as_str().unwrap_or("?"))
    );
    if let (Some(c), Some(g)) = (check, r["game"].as_u64()) {
        let ply = r["ply"].as_u64().unwrap_or(0);
        let words = match c {
            "matches" => "matches its game".to_string(),
            "matches_near" => format!(
                "matches its game after ply {}",
                r["check"]["ply"].as_u64().unwrap_or(0)
            ),
            _ => "does not match its game".to_string(),
        };
        let _ = write!(
            h,
            "<p{}>printed after ply {ply} of game {g}: {words}</p>",
            if differs { " class=flag" } else { "" }
        );
    }
    if !flags.is_empty() {
        let _ = write!(h, "<p class=flag>{}</p>", esc(&flags.join("; ")));
    }
    if !low.is_empty() {
        let _ = write!(
            h,
            "<p>unsure squares (outlined): {}</p>",
            esc(&low.join(" "))
        );
    }
    if let Some(f) = r["rule_fixes"].as_array().filter(|a| !a.is_empty()) {
        let fixes: Vec<&str> = f.iter().filter_map(|x| x.as_str()).collect();
        let _ = write!(h, "<p>rule fixes: {}</p>", esc(&fixes.join("; ")));
    }
    h.push_str("</div></div>");
    (h, doubt)
}

/// A board as inline SVG from a FEN placement (rank 8 at the top), squares `sq` pixels,
/// the squares named in `marked` outlined in red. Pieces are Unicode chess symbols.
pub fn svg_board(placement: &str, marked: &[&str], sq: u32) -> String {
    let side = 8 * sq;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{side}\" height=\"{side}\" viewBox=\"0 0 {side} {side}\">"
    );
    for r in 0..8u32 {
        for c in 0..8u32 {
            let fill = if (r + c) % 2 == 0 {
                "#f0d9b5"
            } else {
                "#b58863"
            };
            let _ = write!(
                s,
                "<rect x=\"{}\" y=\"{}\" width=\"{sq}\" height=\"{sq}\" fill=\"{fill}\"/>",
                c * sq,
                r * sq
            );
        }
    }
    for (r, row) in placement.split('/').take(8).enumerate() {
        let mut c = 0u32;
        for ch in row.chars() {
            if let Some(d) = ch.to_digit(10) {
                c += d;
                continue;
            }
            let glyph = match ch {
                'K' => '♔',
                'Q' => '♕',
                'R' => '♖',
                'B' => '♗',
                'N' => '♘',
                'P' => '♙',
                'k' => '♚',
                'q' => '♛',
                'r' => '♜',
                'b' => '♝',
                'n' => '♞',
                'p' => '♟',
                _ => '?',
            };
            if c < 8 {
                let _ = write!(
                    s,
                    "<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"middle\" dominant-baseline=\"central\">{glyph}</text>",
                    c * sq + sq / 2,
                    r as u32 * sq + sq / 2,
                    sq * 85 / 100
                );
            }
            c += 1;
        }
    }
    for m in marked {
        let b = m.as_bytes();
        if b.len() == 2 && (b'a'..=b'h').contains(&b[0]) && (b'1'..=b'8').contains(&b[1]) {
            let c = (b[0] - b'a') as u32;
            let r = (b'8' - b[1]) as u32;
            let _ = write!(
                s,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#d00\" stroke-width=\"3\"/>",
                c * sq + 1,
                r * sq + 1,
                sq - 2,
                sq - 2
            );
        }
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_board_has_the_pieces() {
        let s = svg_board("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR", &["e4"], 20);
        assert_eq!(s.matches("<text").count(), 32);
        assert!(s.contains("♔") && s.contains("♚"));
        assert_eq!(s.matches("stroke=\"#d00\"").count(), 1);
        // Garbage placements draw what they can, never panic.
        let s = svg_board("9999/xx/", &["z9", ""], 20);
        assert!(s.starts_with("<svg"));
    }

    #[test]
    fn escapes_and_anchors() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
        assert_eq!(anchor("round 2/board1"), "round-2-board1");
    }

    #[test]
    fn text_game_section_shows_flagged_moves_with_a_board() {
        let cfg = crate::read::ReadConfig::default();
        let c = crate::read::read_text(
            "1. e4 e5 2. Af3 Ac6 3. Fb5 a6 4. Fa5 Af6 5. 0-0 Fe7 6. Ke1 b5 7. Fb3 d6",
            &cfg,
        )
        .unwrap();
        let recs = c.values("g.txt", None).unwrap();
        let s = section("g.txt", "g", Path::new("/no/such/file"), &recs);
        assert!(s.html.contains("no crops"));
        // `Fa5` is no legal move: flagged, and a board follows it.
        assert!(s.flagged >= 1);
        assert!(s.html.contains("posrow") && s.html.contains("<svg"));
        let rows = s.html.matches("<tr class=").count() - s.html.matches("posrow").count();
        assert_eq!(rows, 14);
        let mut out = Vec::new();
        write("review", &[s], &[], &mut out).unwrap();
        let html = String::from_utf8(out).unwrap();
        assert!(html.starts_with("<!doctype html>") && html.trim_end().ends_with("</html>"));
        assert!(!html.contains("<script"));
    }
}
