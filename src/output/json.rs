//! JSON Lines: one game as one JSON object on one line.
//!
//! Input: a [`Game`] and the name of the input it came from. Output: one line of JSON and a
//! newline on an [`io::Write`].
//!
//! The field names are defined here and nowhere else: they are the fields of the view
//! structs below, listed in [`GAME_FIELDS`], [`MOVE_FIELDS`] and [`ALTERNATIVE_FIELDS`]
//! (a test keeps the lists and the structs in step). DESIGN.md fixes the names; new fields
//! may be added, none renamed.
//!
//! | field | value |
//! |---|---|
//! | `file` | the input's path, `-` for stdin |
//! | `lang` | code of the notation the moves were read in (`tr`, `en`, …) |
//! | `moves` | the plies in order (below) |
//! | `pgn` | the whole game as [`super::pgn`] writes it |
//! | `result` | `1-0`, `0-1`, `1/2-1/2` or `*` |
//! | `termination` | `checkmate`, `stalemate`, `threefold_repetition`, `fifty_moves`, `insufficient_material`, `result_given`, `unterminated` |
//! | `flagged` | number of plies whose status is not `ok` |
//! | `unsure` | number of `ok` plies under [`crate::record::UNSURE_BELOW`] confidence (written as unsure in PGN) |
//! | `headers` | the input's PGN tags as an object, in input order (the first of a repeated tag) |
//! | `ignored` | input text that was not used for any ply |
//! | `notes` | notes on game-level events |
//!
//! Each move: `ply` (1-based), `san` (English SAN or `null`), `tr` (Turkish, or `null`),
//! `uci` (`e2e4`, or `null`), `read` (the text read, `null` for a missing ply),
//! `confidence` (0..1, 3 decimals), `status` (`ok`, `corrected`, `illegal`, `unreadable`,
//! `missing`), `draw_offer` (bool), `alternatives` (runner-ups, best first: `san`, `tr`,
//! `prob`).

use std::io::{self, Write};

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;
use shakmaty::CastlingMode;

use crate::notation::format::san_string;
use crate::notation::{english, turkish};
use crate::record::{Alternative, Game, GameResult, PlyRecord, Status, Termination};

use super::{is_en_passant, pgn};

/// The fields of a game object, in the order they are written.
pub const GAME_FIELDS: &[&str] = &[
    "file",
    "lang",
    "moves",
    "pgn",
    "result",
    "termination",
    "flagged",
    "unsure",
    "headers",
    "ignored",
    "notes",
];

/// The fields of each entry of `moves`, in the order they are written.
pub const MOVE_FIELDS: &[&str] = &[
    "ply",
    "san",
    "tr",
    "uci",
    "read",
    "confidence",
    "status",
    "draw_offer",
    "alternatives",
];

/// The fields of each entry of `alternatives`, in the order they are written.
pub const ALTERNATIVE_FIELDS: &[&str] = &["san", "tr", "prob"];

#[derive(Debug, Serialize)]
struct GameView<'a> {
    file: &'a str,
    lang: &'static str,
    moves: Vec<MoveView<'a>>,
    pgn: String,
    result: GameResult,
    termination: Termination,
    flagged: usize,
    unsure: usize,
    headers: HeadersView<'a>,
    ignored: &'a [String],
    notes: &'a [String],
}

#[derive(Debug, Serialize)]
struct MoveView<'a> {
    ply: u32,
    san: Option<String>,
    tr: Option<String>,
    uci: Option<String>,
    read: Option<&'a str>,
    confidence: f64,
    status: Status,
    draw_offer: bool,
    alternatives: Vec<AlternativeView>,
}

#[derive(Debug, Serialize)]
struct AlternativeView {
    san: String,
    tr: String,
    prob: f64,
}

/// PGN tags as a JSON object in input order; a repeated tag keeps its first value.
#[derive(Debug)]
struct HeadersView<'a>(&'a [(String, String)]);

impl Serialize for HeadersView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seen: Vec<&str> = Vec::new();
        let mut map = s.serialize_map(None)?;
        for (k, v) in self.0 {
            if seen.contains(&k.as_str()) {
                continue;
            }
            seen.push(k);
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// A probability rounded to 3 decimals, clamped to 0..=1 (0 when not a number).
fn prob3(p: f32) -> f64 {
    if p.is_nan() {
        return 0.0;
    }
    (f64::from(p.clamp(0.0, 1.0)) * 1000.0).round() / 1000.0
}

impl<'a> MoveView<'a> {
    fn new(p: &'a PlyRecord) -> Self {
        let san = p.mv.as_ref().and(p.san.as_ref());
        MoveView {
            ply: p.ply,
            san: san.map(|s| san_string(s, english(), false)),
            tr: san.map(|s| san_string(s, turkish(), is_en_passant(p))),
            uci: p
                .mv
                .as_ref()
                .map(|m| m.to_uci(CastlingMode::Standard).to_string()),
            read: p.read.as_deref(),
            confidence: prob3(p.confidence),
            status: p.status,
            draw_offer: p.draw_offer,
            alternatives: p.alternatives.iter().map(AlternativeView::new).collect(),
        }
    }
}

impl AlternativeView {
    fn new(a: &Alternative) -> Self {
        AlternativeView {
            san: san_string(&a.san, english(), false),
            tr: san_string(&a.san, turkish(), a.mv.is_en_passant()),
            prob: prob3(a.prob),
        }
    }
}

impl<'a> GameView<'a> {
    fn new(game: &'a Game, file: &'a str) -> Self {
        GameView {
            file,
            lang: game.lang.code,
            moves: game.plies.iter().map(MoveView::new).collect(),
            pgn: pgn::to_string(game),
            result: game.result,
            termination: game.termination,
            flagged: game.flagged(),
            unsure: game.unsure(),
            headers: HeadersView(&game.headers),
            ignored: &game.ignored,
            notes: &game.notes,
        }
    }
}

/// Writes `game` as one JSON line; `file` is the input's name (`-` for stdin).
///
/// # Errors
///
/// Whatever `w` returns.
pub fn write(game: &Game, file: &str, w: &mut impl Write) -> io::Result<()> {
    serde_json::to_writer(&mut *w, &GameView::new(game, file))?;
    writeln!(w)
}

/// The JSON object of [`write()`] as a [`serde_json::Value`] (for callers that merge it into
/// a larger report).
///
/// # Errors
///
/// A [`serde_json::Error`] only if serialization fails, which the view types do not do.
pub fn to_value(game: &Game, file: &str) -> serde_json::Result<serde_json::Value> {
    serde_json::to_value(GameView::new(game, file))
}

/// A scoresheet's JSON object: the game's ([`to_value`]) plus each move's cell `box`, every
/// used cell (`cells`, and `second_cells` for the opponent's copy), what the layout found
/// (`layout`: `blocks`, `rows`, `skew_degrees`, `turned`) and `seconds`.
///
/// # Errors
///
/// A [`serde_json::Error`] only if serialization fails.
pub fn sheet_value(
    r: &crate::sheet::SheetReading,
    file: &str,
) -> serde_json::Result<serde_json::Value> {
    let mut v = to_value(&r.game, file)?;
    if let Some(moves) = v.get_mut("moves").and_then(|m| m.as_array_mut()) {
        for (m, c) in moves.iter_mut().zip(&r.cells) {
            if let Some(o) = m.as_object_mut() {
                o.insert("box".into(), serde_json::to_value(c.rect)?);
            }
        }
    }
    if let Some(o) = v.as_object_mut() {
        o.insert("cells".into(), serde_json::to_value(&r.cells)?);
        if !r.second_cells.is_empty() {
            o.insert(
                "second_cells".into(),
                serde_json::to_value(&r.second_cells)?,
            );
        }
        o.insert(
            "layout".into(),
            serde_json::json!({
                "blocks": r.blocks,
                "rows": r.rows,
                "skew_degrees": (r.skew * 100.0).round() / 100.0,
                "turned": r.turned,
            }),
        );
        o.insert(
            "seconds".into(),
            serde_json::json!((r.seconds * 1000.0).round() / 1000.0),
        );
    }
    Ok(v)
}

/// A board's JSON object: [`crate::board::BoardReading`]'s fields plus `file`, with
/// `seconds` rounded to milliseconds.
///
/// # Errors
///
/// A [`serde_json::Error`] only if serialization fails.
pub fn board_value(
    r: &crate::board::BoardReading,
    file: &str,
) -> serde_json::Result<serde_json::Value> {
    let mut v = serde_json::to_value(r)?;
    if let Some(o) = v.as_object_mut() {
        o.insert("file".into(), serde_json::Value::String(file.into()));
        o.insert(
            "seconds".into(),
            serde_json::json!((r.seconds * 1000.0).round() / 1000.0),
        );
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::turkish;
    use crate::output::testutil::{alternative, game, game_in, SEED_001};
    use serde_json::Value;

    fn line(game: &Game, file: &str) -> (String, Value) {
        let mut out = Vec::new();
        write(game, file, &mut out).unwrap();
        let s = String::from_utf8(out).unwrap();
        let v: Value = serde_json::from_str(&s).unwrap();
        (s, v)
    }

    /// The keys of an object, sorted (serde_json may or may not keep their order).
    fn keys(v: &Value) -> Vec<String> {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    }

    #[test]
    fn field_lists_match_what_is_written() {
        let mut g = game(&["e4", "e5"], GameResult::Unknown);
        let alt = alternative(&g, 1, "e6", 0.1);
        g.plies[1].alternatives.push(alt);
        let (s, v) = line(&g, "x");
        let at: Vec<usize> = GAME_FIELDS
            .iter()
            .map(|f| s.find(&format!("\"{f}\":")).unwrap())
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{s}");
        let mut want: Vec<String> = GAME_FIELDS.iter().map(|s| s.to_string()).collect();
        want.sort();
        assert_eq!(keys(&v), want);
        let mut want: Vec<String> = MOVE_FIELDS.iter().map(|s| s.to_string()).collect();
        want.sort();
        assert_eq!(keys(&v["moves"][1]), want);
        let mut want: Vec<String> = ALTERNATIVE_FIELDS.iter().map(|s| s.to_string()).collect();
        want.sort();
        assert_eq!(keys(&v["moves"][1]["alternatives"][0]), want);
    }

    #[test]
    fn one_line_with_every_field() {
        let mut g = game_in(turkish(), SEED_001, GameResult::Draw);
        g.headers = vec![
            ("White".into(), "A".into()),
            ("Black".into(), "B\nC".into()),
            ("White".into(), "again".into()),
        ];
        g.plies[21].draw_offer = true;
        g.plies[4].status = Status::Corrected;
        g.plies[4].read = Some("Af4".into());
        g.plies[4].confidence = 0.123_456;
        g.plies[7].confidence = 0.62;
        let alt = alternative(&g, 4, "Nc3", 0.0444);
        g.plies[4].alternatives.push(alt);
        g.ignored.push("??".into());
        let (s, v) = line(&g, "games/x.txt");
        assert_eq!(s.matches('\n').count(), 1);
        assert!(s.ends_with("}\n"));
        assert_eq!(v["file"], "games/x.txt");
        assert_eq!(v["lang"], "tr");
        assert_eq!(v["result"], "1/2-1/2");
        assert_eq!(v["termination"], "result_given");
        assert_eq!(v["flagged"], 1);
        assert_eq!(v["unsure"], 1);
        assert_eq!(v["headers"]["White"], "A");
        assert_eq!(v["headers"]["Black"], "B\nC");
        assert_eq!(keys(&v["headers"]), ["Black", "White"]);
        assert_eq!(v["ignored"][0], "??");
        assert_eq!(v["notes"].as_array().unwrap().len(), 0);
        let moves = v["moves"].as_array().unwrap();
        assert_eq!(moves.len(), 22);
        let m = &moves[4];
        assert_eq!(m["ply"], 5);
        assert_eq!(m["san"], "Nf3");
        assert_eq!(m["tr"], "Af3");
        assert_eq!(m["uci"], "g1f3");
        assert_eq!(m["read"], "Af4");
        assert_eq!(m["confidence"], 0.123);
        assert_eq!(m["status"], "corrected");
        assert_eq!(m["draw_offer"], false);
        assert_eq!(m["alternatives"][0]["san"], "Nc3");
        assert_eq!(m["alternatives"][0]["tr"], "Ac3");
        assert_eq!(m["alternatives"][0]["prob"], 0.044);
        assert_eq!(moves[19]["tr"], "0-0-0");
        assert_eq!(moves[19]["san"], "O-O-O");
        assert_eq!(moves[21]["draw_offer"], true);
        assert_eq!(moves[21]["status"], "ok");
        assert_eq!(moves[20]["confidence"], 0.99);
        assert_eq!(v["pgn"], pgn::to_string(&g));
        assert!(v["pgn"]
            .as_str()
            .unwrap()
            .contains("{corrected: read \"Af4\"}"));
    }

    #[test]
    fn a_ply_without_a_move_is_null() {
        let mut g = game(&["e4"], GameResult::Unknown);
        let mut p = g.plies[0].clone();
        p.ply = 2;
        p.mv = None;
        p.san = None;
        p.read = None;
        p.status = Status::Missing;
        p.confidence = f32::NAN;
        g.plies.push(p);
        let (_, v) = line(&g, "-");
        let m = &v["moves"][1];
        assert_eq!(m["san"], Value::Null);
        assert_eq!(m["tr"], Value::Null);
        assert_eq!(m["uci"], Value::Null);
        assert_eq!(m["read"], Value::Null);
        assert_eq!(m["confidence"], 0.0);
        assert_eq!(m["status"], "missing");
    }

    #[test]
    fn en_passant_in_turkish_and_mate() {
        let g = game(&["e4", "d5", "e5", "f5", "exf6"], GameResult::Unknown);
        let (_, v) = line(&g, "-");
        assert_eq!(v["moves"][4]["san"], "exf6");
        assert_eq!(v["moves"][4]["tr"], "exf6 e.p.");
        assert_eq!(to_value(&g, "-").unwrap(), v);
        let g = game(&["f3", "e5", "g4", "Qh4#"], GameResult::BlackWins);
        let (_, v) = line(&g, "-");
        assert_eq!(v["moves"][3]["san"], "Qh4#");
        assert_eq!(v["moves"][3]["tr"], "Vh4#");
        assert_eq!(v["result"], "0-1");
    }
}
