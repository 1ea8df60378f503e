//! PGN export: a [`Game`] as a standard PGN game that any chess program loads.
//!
//! Input: a [`Game`]. Output: one PGN game on an [`io::Write`]: the tags, a blank line, the
//! movetext wrapped at 79 columns, a newline. A blank line between games is the caller's
//! (see [`super::Format::write_game`]).
//!
//! - **Tags.** The Seven Tag Roster first (`Event`, `Site`, `Date`, `Round`, `White`,
//!   `Black`, `Result`), from the input's headers where present, else `?` (`????.??.??` for
//!   the date). `Result` is always the record's result, so tag and movetext agree. Then
//!   `SetUp`/`FEN` when the game does not start from the standard position (these two are
//!   always written from [`Game::start`], never copied), then every other input header in
//!   input order. Tag names are reduced to PGN symbol characters; values are escaped.
//! - **Moves** in English SAN with move numbers (`12...` again after a comment).
//! - **Doubt** as a comment after the ply whose status is not ok:
//!   `{corrected: read "Af4"}`, `{illegal as written: "Ke9"; guessed Kf1}`,
//!   `{unreadable: read "~~"; guessed Nf3}`, `{missing: guessed e3}`, and after an `ok` ply
//!   read with a confidence under [`crate::record::UNSURE_BELOW`]:
//!   `{unsure: 0.74, read "Vd2"; or Qd3}` (the runner-up, when there is one). A draw offer (`=` on
//!   a scoresheet, which PGN has no sign for) is `{draw offer}`, joined to the same comment.
//! - **A ply without a move** (the engine had no guess) cannot be written as movetext: the
//!   movetext stops before it and a comment keeps what was read from there on:
//!   `{12... illegal as written: "Ke9"; no legal move fits; the record stops here; read
//!   after it: 13. "Nf3" 13... "e5"}`.
//! - Game notes and input text that was not used go into comments after the last move,
//!   then the result token.
//!
//! Comments never contain `}` (input braces become parentheses), and no continuation line
//! starts with `%` or `;` (the PGN escape and line-comment characters).

use std::io::{self, Write};

use crate::notation::english;
use crate::notation::format::san_string;
use crate::record::{Game, PlyRecord, Status};

use super::{clean, custom_start_fen, playable, quoted, Numbering};

/// Longest movetext line written, in characters (PGN export format: under 80).
pub const LINE_WIDTH: usize = 79;

/// The Seven Tag Roster, with the value written when the input has none.
const ROSTER: [(&str, &str); 7] = [
    ("Event", "?"),
    ("Site", "?"),
    ("Date", "????.??.??"),
    ("Round", "?"),
    ("White", "?"),
    ("Black", "?"),
    ("Result", "*"),
];

/// Tags hamle writes itself and never copies from the input.
const OWN_TAGS: [&str; 2] = ["SetUp", "FEN"];

/// Writes `game` as one PGN game.
///
/// # Errors
///
/// Whatever `w` returns.
pub fn write(game: &Game, w: &mut impl Write) -> io::Result<()> {
    write_tags(game, w)?;
    writeln!(w)?;
    let words = movetext_words(game);
    write_wrapped(&words, LINE_WIDTH, w)
}

/// Writes a position without moves (a board read from an image) as one PGN game: the Seven
/// Tag Roster with unknown values, `SetUp` and `FEN`, then `comment` (cleaned like every
/// comment) and `*`.
///
/// # Errors
///
/// Whatever `w` returns.
pub fn write_position(fen: &str, comment: &str, w: &mut impl Write) -> io::Result<()> {
    for (name, default) in ROSTER {
        write_tag(name, default, w)?;
    }
    write_tag("SetUp", "1", w)?;
    write_tag("FEN", fen, w)?;
    writeln!(w)?;
    let mut words = Vec::new();
    if !comment.trim().is_empty() {
        push_comment(&mut words, comment);
    }
    words.push("*".to_string());
    write_wrapped(&words, LINE_WIDTH, w)
}

/// [`write()`] into a `String`.
pub fn to_string(game: &Game) -> String {
    let mut buf = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = write(game, &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

fn write_tags(game: &Game, w: &mut impl Write) -> io::Result<()> {
    let header = |name: &str| {
        game.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    for (name, default) in ROSTER {
        let value = if name == "Result" {
            game.result.as_pgn()
        } else {
            header(name)
                .filter(|v| !v.trim().is_empty())
                .unwrap_or(default)
        };
        write_tag(name, value, w)?;
    }
    if let Some(fen) = custom_start_fen(game) {
        write_tag("SetUp", "1", w)?;
        write_tag("FEN", &fen, w)?;
    }
    let mut written: Vec<String> = Vec::new();
    for (name, value) in &game.headers {
        let name = tag_name(name);
        if name.is_empty()
            || ROSTER.iter().any(|(r, _)| *r == name)
            || OWN_TAGS.contains(&name.as_str())
            || written.contains(&name)
        {
            continue;
        }
        write_tag(&name, value, w)?;
        written.push(name);
    }
    Ok(())
}

/// A tag name made of PGN symbol characters: letters, digits and `_` (others become `_`),
/// starting with a letter or digit; empty when nothing is left.
fn tag_name(name: &str) -> String {
    let s: String = name
        .trim()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    s.trim_start_matches('_').to_string()
}

fn write_tag(name: &str, value: &str, w: &mut impl Write) -> io::Result<()> {
    let mut v = String::with_capacity(value.len());
    for c in clean(value).chars() {
        if c == '\\' || c == '"' {
            v.push('\\');
        }
        v.push(c);
    }
    writeln!(w, "[{name} \"{v}\"]")
}

/// The movetext as words (comments split into words so that they wrap too).
fn movetext_words(game: &Game) -> Vec<String> {
    let numbering = Numbering::new(&game.start);
    let mut words = Vec::new();
    let mut need_number = true;
    for (i, p) in game.plies.iter().enumerate() {
        let Some(san) = playable(p) else {
            push_comment(&mut words, &stop_comment(game, i));
            break;
        };
        let (_, color) = numbering.at(i);
        if color == shakmaty::Color::White || need_number {
            words.push(numbering.label(i));
        }
        let written = san_string(san, english(), false);
        let comment = ply_comment(p, &written);
        words.push(written);
        need_number = !comment.is_empty();
        push_comment(&mut words, &comment);
    }
    for note in &game.notes {
        push_comment(&mut words, &format!("note: {}", clean(note)));
    }
    if !game.ignored.is_empty() {
        let parts: Vec<String> = game.ignored.iter().map(|s| quoted(s)).collect();
        push_comment(&mut words, &format!("not used: {}", parts.join(" ")));
    }
    words.push(game.result.as_pgn().to_string());
    words
}

/// The comment after a ply that has a move: why it is doubtful, and the draw offer.
fn ply_comment(p: &PlyRecord, guessed: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    let read = p.read.as_deref().map(quoted);
    match (p.status, read) {
        (Status::Ok, read) if p.is_unsure() => {
            let mut unsure = format!("unsure: {:.2}", p.confidence);
            if let Some(r) = read {
                unsure.push_str(&format!(", read {r}"));
            }
            if let Some(alt) = p.alternatives.first() {
                unsure.push_str(&format!("; or {}", san_string(&alt.san, english(), false)));
            }
            parts.push(unsure);
        }
        (Status::Ok, _) => {}
        (Status::Corrected, Some(r)) => parts.push(format!("corrected: read {r}")),
        (Status::Corrected, None) => parts.push("corrected".to_string()),
        (Status::Illegal, Some(r)) => {
            parts.push(format!("illegal as written: {r}; guessed {guessed}"));
        }
        (Status::Illegal, None) => parts.push(format!("illegal as written; guessed {guessed}")),
        (Status::Unreadable, Some(r)) => {
            parts.push(format!("unreadable: read {r}; guessed {guessed}"));
        }
        (Status::Unreadable, None) => parts.push(format!("unreadable; guessed {guessed}")),
        (Status::Missing, _) => parts.push(format!("missing: guessed {guessed}")),
    }
    if p.draw_offer {
        parts.push("draw offer".to_string());
    }
    parts.join("; ")
}

/// The comment where the movetext stops: the ply at `index` has no move.
fn stop_comment(game: &Game, index: usize) -> String {
    let numbering = Numbering::new(&game.start);
    let Some(p) = game.plies.get(index) else {
        return String::new();
    };
    let label = numbering.label(index);
    let read = p.read.as_deref().map(quoted);
    let what = match (p.status, read) {
        (Status::Illegal, Some(r)) => format!("illegal as written: {r}; no legal move fits"),
        (Status::Unreadable, Some(r)) => format!("unreadable: read {r}"),
        (Status::Missing, _) => "missing".to_string(),
        (s, Some(r)) => format!("{}: read {r}; no move", s.as_str()),
        (s, None) => format!("{}; no move", s.as_str()),
    };
    let mut out = format!("{label} {what}");
    if p.draw_offer {
        out.push_str("; draw offer");
    }
    out.push_str("; the record stops here");
    let rest = super::reads_after(game, index, numbering);
    if !rest.is_empty() {
        out.push_str("; read after it: ");
        out.push_str(&rest.join(" "));
    }
    out
}

/// Adds `{text}` as words; nothing for an empty text.
fn push_comment(words: &mut Vec<String>, text: &str) {
    let inner = clean(text);
    if inner.is_empty() {
        return;
    }
    let mut parts: Vec<String> = inner.split(' ').map(str::to_string).collect();
    if let Some(first) = parts.first_mut() {
        first.insert(0, '{');
    }
    if let Some(last) = parts.last_mut() {
        last.push('}');
    }
    words.extend(parts);
}

/// Joins `words` with spaces into lines of at most `width` characters (a longer word gets
/// a line of its own). A word starting with `%` or `;` is never put first on a line.
fn write_wrapped(words: &[String], width: usize, w: &mut impl Write) -> io::Result<()> {
    let mut line_len = 0usize;
    for word in words {
        let len = word.chars().count();
        let may_start_line = !word.starts_with(['%', ';']);
        if line_len > 0 && line_len + 1 + len > width && may_start_line {
            writeln!(w)?;
            line_len = 0;
        }
        if line_len > 0 {
            write!(w, " ")?;
            line_len += 1;
        }
        write!(w, "{word}")?;
        line_len += len;
    }
    writeln!(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::testutil::{game, plies_from, unsure_game, SEED_001};
    use crate::record::{GameResult, Termination};
    use shakmaty::fen::Fen;
    use shakmaty::{CastlingMode, Chess};

    fn movetext(pgn: &str) -> String {
        let (_, body) = pgn.split_once("\n\n").unwrap();
        body.replace('\n', " ").trim().to_string()
    }

    #[test]
    fn seven_tag_roster_defaults_and_input_headers() {
        let mut g = game(&["e4", "e5"], GameResult::Unknown);
        g.headers = vec![
            ("White".into(), "Kasparov, \"Garry\"".into()),
            ("Annotator".into(), "a\\b".into()),
            ("Result".into(), "1-0".into()),
            ("FEN".into(), "bogus".into()),
            ("bad name!".into(), "x".into()),
            ("Annotator".into(), "again".into()),
        ];
        let pgn = to_string(&g);
        let tags: Vec<&str> = pgn.lines().take_while(|l| !l.is_empty()).collect();
        assert_eq!(
            tags,
            [
                "[Event \"?\"]",
                "[Site \"?\"]",
                "[Date \"????.??.??\"]",
                "[Round \"?\"]",
                "[White \"Kasparov, \\\"Garry\\\"\"]",
                "[Black \"?\"]",
                "[Result \"*\"]",
                "[Annotator \"a\\\\b\"]",
                "[bad_name_ \"x\"]",
            ]
        );
        assert_eq!(movetext(&pgn), "1. e4 e5 *");
    }

    #[test]
    fn an_unsure_ok_ply_gets_a_comment() {
        let mut g = unsure_game();
        assert_eq!(
            movetext(&to_string(&g)),
            "1. e4 e5 2. Nf3 {unsure: 0.62, read \"Af3\"; or Nc3} *"
        );
        // At the threshold it is written plain.
        g.plies[2].confidence = crate::record::UNSURE_BELOW;
        assert_eq!(movetext(&to_string(&g)), "1. e4 e5 2. Nf3 *");
    }

    #[test]
    fn corrected_ply_and_draw_offer() {
        let mut g = game(SEED_001, GameResult::Draw);
        g.plies[2].status = Status::Corrected;
        g.plies[2].read = Some("c5".into());
        g.plies[21].draw_offer = true;
        let pgn = to_string(&g);
        let mt = movetext(&pgn);
        assert!(
            mt.starts_with("1. d4 Nf6 2. c4 {corrected: read \"c5\"} 2... e6 3. Nf3 Bb4+"),
            "{mt}"
        );
        assert!(
            mt.ends_with("10. Be2 O-O-O 11. O-O Rhf8 {draw offer} 1/2-1/2"),
            "{mt}"
        );
        assert!(pgn.contains("[Result \"1/2-1/2\"]"));
    }

    #[test]
    fn statuses_each_have_a_comment() {
        let mut g = game(&["e4", "e5", "Nf3", "Nc6"], GameResult::Unknown);
        g.plies[0].status = Status::Illegal;
        g.plies[0].read = Some("Ke9".into());
        g.plies[1].status = Status::Unreadable;
        g.plies[1].read = Some("~~}".into());
        g.plies[2].status = Status::Missing;
        g.plies[2].read = None;
        g.plies[3].status = Status::Corrected;
        g.plies[3].read = Some("Ac7".into());
        g.plies[3].draw_offer = true;
        assert_eq!(
            movetext(&to_string(&g)),
            "1. e4 {illegal as written: \"Ke9\"; guessed e4} 1... e5 {unreadable: read \"~~)\"; \
             guessed e5} 2. Nf3 {missing: guessed Nf3} 2... Nc6 {corrected: read \"Ac7\"; \
             draw offer} *"
        );
    }

    #[test]
    fn a_ply_without_a_move_stops_the_movetext() {
        let mut g = game(&["e4", "e5", "Nf3"], GameResult::WhiteWins);
        let mut last = g.plies[2].clone();
        last.ply = 4;
        last.mv = None;
        last.san = None;
        last.status = Status::Illegal;
        last.read = Some("Ke9".into());
        g.plies.push(last.clone());
        last.ply = 5;
        last.read = Some("Bb5 {x}".into());
        last.status = Status::Unreadable;
        g.plies.push(last.clone());
        last.ply = 6;
        last.read = None;
        last.status = Status::Missing;
        g.plies.push(last);
        let mt = movetext(&to_string(&g));
        assert_eq!(
            mt,
            "1. e4 e5 2. Nf3 {2... illegal as written: \"Ke9\"; no legal move fits; the \
             record stops here; read after it: 3. \"Bb5 (x)\" 3... -} 1-0"
        );
    }

    #[test]
    fn checkmate_keeps_the_mate_sign() {
        let g = game(&["f3", "e5", "g4", "Qh4#"], GameResult::BlackWins);
        let mut g = g;
        g.termination = Termination::Checkmate;
        assert_eq!(movetext(&to_string(&g)), "1. f3 e5 2. g4 Qh4# 0-1");
    }

    #[test]
    fn custom_start_writes_setup_and_fen_and_black_numbers() {
        let start: Chess = "4k3/8/8/8/8/8/4P3/4K3 b - - 3 40"
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        let (plies, _) = plies_from(&start, &["Kd7", "e4", "Ke6"]);
        let mut g = game(&[], GameResult::Unknown);
        g.start = start;
        g.plies = plies;
        let pgn = to_string(&g);
        assert!(pgn.contains("[SetUp \"1\"]\n[FEN \"4k3/8/8/8/8/8/4P3/4K3 b - - 3 40\"]\n"));
        assert_eq!(movetext(&pgn), "40... Kd7 41. e4 Ke6 *");
    }

    #[test]
    fn notes_and_unused_text_and_wrapping() {
        let mut g = game(SEED_001, GameResult::Unknown);
        g.notes = vec!["threefold repetition after ply 40;\nplay continued".into()];
        g.ignored = vec!["%junk".into(), "}{".into()];
        let pgn = to_string(&g);
        let (_, body) = pgn.split_once("\n\n").unwrap();
        for line in body.lines() {
            assert!(line.chars().count() <= LINE_WIDTH, "{line:?}");
            assert!(!line.starts_with(['%', ';']), "{line:?}");
        }
        assert!(body.lines().count() > 1);
        assert!(movetext(&pgn).ends_with(
            "{note: threefold repetition after ply 40; play continued} \
             {not used: \"%junk\" \")(\"} *"
        ));
    }

    #[test]
    fn empty_game() {
        let g = game(&[], GameResult::Unknown);
        assert_eq!(movetext(&to_string(&g)), "*");
    }

    #[test]
    fn wrap_never_starts_a_line_with_percent() {
        let words: Vec<String> = ["aaaa", "%bb", "cc"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut out = Vec::new();
        write_wrapped(&words, 5, &mut out).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "aaaa %bb\ncc\n");
    }
}
