//! Output: a decoded [`Game`] written as PGN, as move text in any notation language, or
//! as one JSON line.
//!
//! Input: a [`Game`] (from `decode`, or built by hand). Output: bytes on an
//! [`io::Write`]. Nothing here decides anything about the game: every move, status and
//! result comes from the record; this module only spells it. It writes to the writer it is
//! given and never prints by itself; choosing stdout or a file is the caller's business.
//!
//! - [`pgn`]: standard PGN (English SAN, Seven Tag Roster, comments on doubtful plies);
//! - [`lang_text`]: move text in any row of [`crate::notation::LANGS`], in the style of a
//!   notation book (`1. d4 Af6 2. c4 e6 …`), doubtful plies listed on trailing `;` lines;
//! - [`tr`]: [`lang_text`] in Turkish, the project's home notation;
//! - [`json`]: one JSON object per game on one line (JSON Lines), the field names of
//!   DESIGN.md defined in that module only.
//!
//! [`Format`] names these for a caller that picks one at run time (the CLI).
//!
//! ```
//! use hamle::output::Format;
//! assert_eq!(Format::parse("pgn"), Some(Format::Pgn));
//! assert!(matches!(Format::parse("tr"), Some(Format::Text(Some(l))) if l.code == "tr"));
//! assert_eq!(Format::parse("fen"), None);
//! ```

pub mod json;
pub mod lang_text;
pub mod pgn;
pub mod tr;

use std::io::{self, Write};

use shakmaty::fen::Fen;
use shakmaty::{Chess, Color, EnPassantMode, Position};

use crate::notation::{lang, Lang};
use crate::record::{Game, PlyRecord};

/// How a game is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Standard PGN, see [`pgn`].
    Pgn,
    /// One JSON line per game, see [`json`].
    Json,
    /// Move text in a notation language, see [`lang_text`]; `None` writes each game in
    /// the language it was read in.
    Text(Option<&'static Lang>),
}

impl Format {
    /// Reads a format name: `pgn`, `json`, `text` (the language the game was read in) or
    /// any language code of [`crate::notation::LANGS`] (`tr`, `en`, `de`, …). Case is
    /// ignored. `None` for anything else.
    pub fn parse(name: &str) -> Option<Format> {
        match name.to_ascii_lowercase().as_str() {
            "pgn" => Some(Format::Pgn),
            "json" | "jsonl" => Some(Format::Json),
            "text" | "txt" => Some(Format::Text(None)),
            other => lang(other).map(|l| Format::Text(Some(l))),
        }
    }

    /// Writes one game followed by what separates it from the next one: a blank line
    /// after PGN and text, nothing after a JSON line. `file` names the input in JSON.
    ///
    /// # Errors
    ///
    /// Whatever `w` returns.
    pub fn write_game(self, game: &Game, file: &str, w: &mut impl Write) -> io::Result<()> {
        match self {
            Format::Pgn => {
                pgn::write(game, w)?;
                writeln!(w)
            }
            Format::Json => json::write(game, file, w),
            Format::Text(l) => {
                lang_text::write(game, l.unwrap_or(game.lang), w)?;
                writeln!(w)
            }
        }
    }
}

/// The standard starting position in FEN, with its move counters.
pub(crate) const STARTING_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// The start of `game` as FEN, or `None` when it is the standard starting position
/// (move counters included).
pub(crate) fn custom_start_fen(game: &Game) -> Option<String> {
    let fen = Fen::from_position(&game.start, EnPassantMode::Legal).to_string();
    (fen != STARTING_FEN).then_some(fen)
}

/// Move numbers and sides, counted from a start position.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Numbering {
    first_number: u32,
    black_first: bool,
}

impl Numbering {
    pub(crate) fn new(start: &Chess) -> Self {
        Numbering {
            first_number: start.fullmoves().get(),
            black_first: start.turn() == Color::Black,
        }
    }

    /// Move number and side of the ply at `index` (0 = the first ply of the record).
    pub(crate) fn at(self, index: usize) -> (u32, Color) {
        let k = index.saturating_add(usize::from(self.black_first));
        let number = u32::try_from(k / 2)
            .unwrap_or(u32::MAX)
            .saturating_add(self.first_number);
        let color = if k % 2 == 0 {
            Color::White
        } else {
            Color::Black
        };
        (number, color)
    }

    /// `12.` for White, `12...` for Black.
    pub(crate) fn label(self, index: usize) -> String {
        match self.at(index) {
            (n, Color::White) => format!("{n}."),
            (n, Color::Black) => format!("{n}..."),
        }
    }
}

/// Whether the ply can be written as a move: it has both a move and its SAN.
pub(crate) fn playable(p: &PlyRecord) -> Option<&shakmaty::san::SanPlus> {
    p.mv.as_ref().and(p.san.as_ref())
}

/// Whether the ply's move is an en passant capture (for the `e.p.` suffix).
pub(crate) fn is_en_passant(p: &PlyRecord) -> bool {
    p.mv.as_ref().is_some_and(|m| m.is_en_passant())
}

/// Text from the input made safe for a one-line comment: control characters (newlines
/// included) become spaces, braces become parentheses (a `}` would end a PGN comment),
/// and runs of spaces collapse to one.
pub(crate) fn clean(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut space = false;
    for c in s.chars() {
        let c = match c {
            '{' => '(',
            '}' => ')',
            c if c.is_control() || c.is_whitespace() => ' ',
            c => c,
        };
        if c == ' ' {
            if !space && !out.is_empty() {
                out.push(' ');
            }
            space = true;
        } else {
            out.push(c);
            space = false;
        }
    }
    if out.ends_with(' ') {
        out.pop();
    }
    out
}

/// `"text"`, cleaned with [`clean`].
/// What was read for the plies after `index`, labelled with their move numbers: the
/// rest of a game whose record stops at a ply without a move.
pub(crate) fn reads_after(game: &Game, index: usize, numbering: Numbering) -> Vec<String> {
    game.plies
        .iter()
        .enumerate()
        .skip(index + 1)
        .map(|(j, q)| {
            let text = q.read.as_deref().map_or_else(|| "-".to_string(), quoted);
            format!("{} {text}", numbering.label(j))
        })
        .collect()
}

pub(crate) fn quoted(s: &str) -> String {
    format!("\"{}\"", clean(s))
}

#[cfg(test)]
pub(crate) mod testutil {
    //! Games built by hand for the output tests.

    use shakmaty::san::SanPlus;
    use shakmaty::{Chess, Position};

    use crate::notation::{english, Lang};
    use crate::record::{Alternative, Game, GameResult, PlyRecord, Status, Termination};

    /// Replays English SAN from `start` into ok plies (read = the SAN itself).
    pub fn plies_from(start: &Chess, sans: &[&str]) -> (Vec<PlyRecord>, Chess) {
        let mut pos = start.clone();
        let mut out = Vec::new();
        for (i, s) in sans.iter().enumerate() {
            let m = s
                .parse::<shakmaty::san::San>()
                .unwrap()
                .to_move(&pos)
                .unwrap();
            let san = SanPlus::from_move_and_play_unchecked(&mut pos, m);
            out.push(PlyRecord {
                ply: u32::try_from(i + 1).unwrap(),
                mv: Some(m),
                san: Some(san),
                read: Some((*s).to_string()),
                confidence: 0.99,
                status: Status::Ok,
                draw_offer: false,
                alternatives: Vec::new(),
                evidence: Default::default(),
            });
        }
        (out, pos)
    }

    /// `1. e4 e5 2. Nf3`, with 2. Nf3 read as `Af3` at 0.62 and Nc3 its runner-up.
    pub fn unsure_game() -> Game {
        let mut g = game(&["e4", "e5", "Nf3"], GameResult::Unknown);
        let (other, _) = plies_from(&Chess::default(), &["e4", "e5", "Nc3"]);
        let p = &mut g.plies[2];
        p.confidence = 0.62;
        p.read = Some("Af3".into());
        p.alternatives = vec![Alternative {
            mv: other[2].mv.unwrap(),
            san: other[2].san.unwrap(),
            prob: 0.3,
        }];
        g
    }

    /// A game of ok plies from the standard start.
    pub fn game(sans: &[&str], result: GameResult) -> Game {
        game_in(english(), sans, result)
    }

    pub fn game_in(lang: &'static Lang, sans: &[&str], result: GameResult) -> Game {
        let start = Chess::default();
        let (plies, _) = plies_from(&start, sans);
        Game {
            headers: Vec::new(),
            lang,
            start,
            plies,
            result,
            termination: match result {
                GameResult::Unknown => Termination::Unterminated,
                _ => Termination::ResultGiven,
            },
            ignored: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// The runner-up `san` in the position before ply `index` of `game`.
    pub fn alternative(game: &Game, index: usize, san: &str, prob: f32) -> Alternative {
        let mut pos = game.start.clone();
        for p in &game.plies[..index] {
            pos.play_unchecked(p.mv.unwrap());
        }
        let m = san
            .parse::<shakmaty::san::San>()
            .unwrap()
            .to_move(&pos)
            .unwrap();
        Alternative {
            mv: m,
            san: SanPlus::from_move(pos, m),
            prob,
        }
    }

    /// The seed 001 sample game (22 plies, draw offer on the last).
    pub const SEED_001: &[&str] = &[
        "d4", "Nf6", "c4", "e6", "Nf3", "Bb4+", "Nbd2", "b6", "a3", "Bxd2+", "Bxd2", "Bb7", "b4",
        "d6", "Bg5", "Nbd7", "e3", "Qe7", "Be2", "O-O-O", "O-O", "Rhf8",
    ];
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;
    use shakmaty::CastlingMode;

    #[test]
    fn numbering_from_the_start_and_from_black() {
        let n = Numbering::new(&Chess::default());
        assert_eq!(n.label(0), "1.");
        assert_eq!(n.label(1), "1...");
        assert_eq!(n.label(2), "2.");
        let pos: Chess = "4k3/8/8/8/8/8/8/4K3 b - - 0 17"
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        let n = Numbering::new(&pos);
        assert_eq!(n.label(0), "17...");
        assert_eq!(n.label(1), "18.");
        assert_eq!(n.at(usize::MAX).0, u32::MAX);
    }

    #[test]
    fn clean_makes_one_safe_line() {
        assert_eq!(clean("  a}b{c\n\td \u{0}e  "), "a)b(c d e");
        assert_eq!(clean(""), "");
        assert_eq!(quoted("Af4}"), "\"Af4)\"");
    }

    #[test]
    fn format_names() {
        assert_eq!(Format::parse("PGN"), Some(Format::Pgn));
        assert_eq!(Format::parse("json"), Some(Format::Json));
        assert_eq!(Format::parse("text"), Some(Format::Text(None)));
        assert!(matches!(Format::parse("de"), Some(Format::Text(Some(l))) if l.code == "de"));
        assert_eq!(Format::parse("xx"), None);
    }
}
