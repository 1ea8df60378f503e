//! Move text in any notation language, in the style of a notation book.
//!
//! Input: a [`Game`] and a row of [`crate::notation::LANGS`]. Output: text on an
//! [`io::Write`], as seed 001 writes its sample game (there in Turkish):
//!
//! ```text
//! 1. d4 Af6 2. c4 e6 3. Af3 Fb4+ … 10. Fe2 0-0-0 11. 0-0 Khf8 =
//! ```
//!
//! - **The moves line** is one line: move numbers before White's moves only (`40...` when
//!   the game starts with Black), each move in the language's letters, castling, promotion
//!   and `e.p.` suffix (from the row, so Turkish castles `0-0` as the seed's legend does),
//!   `+`/`#`, a ` =` after a move that offered a draw, and the result (`1-0`, `0-1`,
//!   `1/2-1/2`) at the end when it is known. The moves stay clean: nothing else is inline.
//! - **Doubt goes on trailing lines** that start with `;` (a line comment, so the text
//!   reads back through `hamle repair` unchanged):
//!   `; kontrol edilmeli: 2. c4 (düzeltildi, okunan "c5"), 9. e3 (eksik)` — each flagged ply
//!   with its status and what was read, and each `ok` ply read with a confidence under
//!   [`crate::record::UNSURE_BELOW`] (`12. Vd2 (emin değil 0.74, okunan "Vd2", belki Vd3)`).
//!   The labels are Turkish for Turkish and English for every other language (`; check:
//!   2. c4 (corrected, read "c5"), 9. e3 (missing)`).
//! - **A ply without a move** ends the moves line; a trailing line says where and keeps the
//!   rest of what was read: `; kayıt burada kesiliyor: 12... "Şe9" (kurala aykırı); sonra
//!   okunan: 13. "Af3"`.
//! - A game that does not start from the standard position gets a first line
//!   `; FEN: …`; game notes and input text that was not used get a `;` line each.
//!
//! PGN headers are not written (the seed's style has none); use PGN or JSON to keep them.

use std::io::{self, Write};

use shakmaty::Color;

use crate::notation::format::san_string;
use crate::notation::Lang;
use crate::record::{Game, GameResult, PlyRecord, Status};

use super::{clean, custom_start_fen, is_en_passant, playable, quoted, Numbering};

/// The words of the trailing lines in one language.
struct Labels {
    fen: &'static str,
    check: &'static str,
    read: &'static str,
    draw_offer: &'static str,
    stops: &'static str,
    read_after: &'static str,
    note: &'static str,
    not_used: &'static str,
    corrected: &'static str,
    illegal: &'static str,
    unreadable: &'static str,
    missing: &'static str,
    unsure: &'static str,
    or: &'static str,
}

const TURKISH: Labels = Labels {
    fen: "başlangıç konumu (FEN)",
    check: "kontrol edilmeli",
    read: "okunan",
    draw_offer: "beraberlik teklifi",
    stops: "kayıt burada kesiliyor",
    read_after: "sonra okunan",
    note: "not",
    not_used: "kullanılmayan metin",
    corrected: "düzeltildi",
    illegal: "kurala aykırı",
    unreadable: "okunamadı",
    missing: "eksik",
    unsure: "emin değil",
    or: "belki",
};

const ENGLISH: Labels = Labels {
    fen: "FEN",
    check: "check",
    read: "read",
    draw_offer: "draw offer",
    stops: "the record stops at",
    read_after: "read after it",
    note: "note",
    not_used: "not used",
    corrected: "corrected",
    illegal: "illegal as written",
    unreadable: "unreadable",
    missing: "missing",
    unsure: "unsure",
    or: "or",
};

impl Labels {
    fn of(lang: &Lang) -> &'static Labels {
        if lang.code == "tr" {
            &TURKISH
        } else {
            &ENGLISH
        }
    }

    fn status(&self, s: Status) -> &'static str {
        match s {
            Status::Ok => "ok",
            Status::Corrected => self.corrected,
            Status::Illegal => self.illegal,
            Status::Unreadable => self.unreadable,
            Status::Missing => self.missing,
        }
    }
}

/// Writes `game` as move text in `lang`, then its trailing `;` lines, each line ending
/// in a newline.
///
/// # Errors
///
/// Whatever `w` returns.
pub fn write(game: &Game, lang: &Lang, w: &mut impl Write) -> io::Result<()> {
    let labels = Labels::of(lang);
    let numbering = Numbering::new(&game.start);
    if let Some(fen) = custom_start_fen(game) {
        writeln!(w, "; {}: {fen}", labels.fen)?;
    }

    let mut words: Vec<String> = Vec::new();
    let mut flagged: Vec<String> = Vec::new();
    let mut stop: Option<usize> = None;
    for (i, p) in game.plies.iter().enumerate() {
        let Some(san) = playable(p) else {
            stop = Some(i);
            break;
        };
        let label = numbering.label(i);
        if i == 0 || numbering.at(i).1 == Color::White {
            words.push(label.clone());
        }
        let text = san_string(san, lang, is_en_passant(p));
        if p.status.is_flagged() {
            flagged.push(format!("{label} {text} ({})", why(p, labels)));
        } else if p.is_unsure() {
            flagged.push(format!("{label} {text} ({})", unsure(p, lang, labels)));
        }
        words.push(text);
        if p.draw_offer {
            words.push("=".to_string());
        }
    }
    if game.result != GameResult::Unknown {
        words.push(game.result.as_pgn().to_string());
    }
    writeln!(w, "{}", words.join(" "))?;

    if !flagged.is_empty() {
        writeln!(w, "; {}: {}", labels.check, flagged.join(", "))?;
    }
    if let Some(i) = stop {
        write_stop(game, i, labels, numbering, w)?;
    }
    for note in &game.notes {
        writeln!(w, "; {}: {}", labels.note, clean(note))?;
    }
    if !game.ignored.is_empty() {
        let parts: Vec<String> = game.ignored.iter().map(|s| quoted(s)).collect();
        writeln!(w, "; {}: {}", labels.not_used, parts.join(" "))?;
    }
    Ok(())
}

/// `düzeltildi, okunan "c5"`: the status, what was read, the draw offer.
fn why(p: &PlyRecord, labels: &Labels) -> String {
    let mut s = labels.status(p.status).to_string();
    if let Some(r) = p.read.as_deref().filter(|_| p.status != Status::Missing) {
        s.push_str(&format!(", {} {}", labels.read, quoted(r)));
    }
    if p.draw_offer {
        s.push_str(", ");
        s.push_str(labels.draw_offer);
    }
    s
}

/// `emin değil 0.74, okunan "Vd2", belki Vd3`: an `ok` ply read with little confidence.
fn unsure(p: &PlyRecord, lang: &Lang, labels: &Labels) -> String {
    let mut s = format!("{} {:.2}", labels.unsure, p.confidence);
    if let Some(r) = p.read.as_deref() {
        s.push_str(&format!(", {} {}", labels.read, quoted(r)));
    }
    if let Some(alt) = p.alternatives.first() {
        s.push_str(&format!(
            ", {} {}",
            labels.or,
            san_string(&alt.san, lang, false)
        ));
    }
    if p.draw_offer {
        s.push_str(", ");
        s.push_str(labels.draw_offer);
    }
    s
}

fn write_stop(
    game: &Game,
    index: usize,
    labels: &Labels,
    numbering: Numbering,
    w: &mut impl Write,
) -> io::Result<()> {
    let Some(p) = game.plies.get(index) else {
        return Ok(());
    };
    let read = p.read.as_deref().map_or_else(|| "-".to_string(), quoted);
    let mut status = labels.status(p.status).to_string();
    if p.draw_offer {
        status.push_str(", ");
        status.push_str(labels.draw_offer);
    }
    write!(
        w,
        "; {}: {} {read} ({status})",
        labels.stops,
        numbering.label(index)
    )?;
    let rest = super::reads_after(game, index, numbering);
    if !rest.is_empty() {
        write!(w, "; {}: {}", labels.read_after, rest.join(" "))?;
    }
    writeln!(w)
}

/// [`write()`] into a `String`.
pub fn to_string(game: &Game, lang: &Lang) -> String {
    let mut buf = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = write(game, lang, &mut buf);
    String::from_utf8_lossy(&buf).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::{english, lang, turkish};
    use crate::output::testutil::{game, plies_from, unsure_game, SEED_001};
    use shakmaty::fen::Fen;
    use shakmaty::{CastlingMode, Chess};

    #[test]
    fn english_and_german_rows() {
        let g = game(&["e4", "e5", "Nf3", "Nc6", "Bb5"], GameResult::Unknown);
        assert_eq!(to_string(&g, english()), "1. e4 e5 2. Nf3 Nc6 3. Bb5\n");
        assert_eq!(
            to_string(&g, lang("de").unwrap()),
            "1. e4 e5 2. Sf3 Sc6 3. Lb5\n"
        );
    }

    #[test]
    fn en_passant_promotion_and_mate() {
        let g = game(
            &["e4", "d5", "e5", "f5", "exf6", "gxf6", "d4", "Kf7"],
            GameResult::Unknown,
        );
        let text = to_string(&g, turkish());
        assert!(
            text.starts_with("1. e4 d5 2. e5 f5 3. exf6 e.p. gxf6 4. d4 Şf7"),
            "{text}"
        );
        let g = game(&["f3", "e5", "g4", "Qh4#"], GameResult::BlackWins);
        assert_eq!(to_string(&g, turkish()), "1. f3 e5 2. g4 Vh4# 0-1\n");
        let start: Chess = "4k3/1P6/8/8/8/8/8/4K3 w - - 0 1"
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        let (plies, _) = plies_from(&start, &["b8=N", "Kf7"]);
        let mut g = game(&[], GameResult::Unknown);
        g.start = start;
        g.plies = plies;
        assert_eq!(
            to_string(&g, turkish()),
            "; başlangıç konumu (FEN): 4k3/1P6/8/8/8/8/8/4K3 w - - 0 1\n1. b8A Şf7\n"
        );
    }

    #[test]
    fn flagged_plies_on_a_trailing_line() {
        let mut g = game(SEED_001, GameResult::Draw);
        g.plies[3].status = Status::Corrected;
        g.plies[3].read = Some("e5".into());
        g.plies[16].status = Status::Missing;
        g.plies[16].read = None;
        g.plies[21].draw_offer = true;
        assert_eq!(
            to_string(&g, turkish()),
            "1. d4 Af6 2. c4 e6 3. Af3 Fb4+ 4. Abd2 b6 5. a3 Fxd2+ 6. Fxd2 Fb7 7. b4 d6 \
             8. Fg5 Abd7 9. e3 Ve7 10. Fe2 0-0-0 11. 0-0 Khf8 = 1/2-1/2\n\
             ; kontrol edilmeli: 2... e6 (düzeltildi, okunan \"e5\"), 9. e3 (eksik)\n"
        );
        assert!(to_string(&g, english())
            .ends_with("; check: 2... e6 (corrected, read \"e5\"), 9. e3 (missing)\n"));
    }

    #[test]
    fn an_unsure_ok_ply_is_in_the_check_list() {
        let g = unsure_game();
        assert_eq!(
            to_string(&g, turkish()),
            "1. e4 e5 2. Af3\n; kontrol edilmeli: 2. Af3 (emin değil 0.62, okunan \"Af3\", belki Ac3)\n"
        );
        assert!(to_string(&g, english())
            .ends_with("; check: 2. Nf3 (unsure 0.62, read \"Af3\", or Nc3)\n"));
    }

    #[test]
    fn a_ply_without_a_move_ends_the_line() {
        let mut g = game(&["e4", "e5", "Nf3"], GameResult::Unknown);
        let mut bad = g.plies[2].clone();
        bad.mv = None;
        bad.san = None;
        bad.status = Status::Illegal;
        bad.read = Some("Şe9".into());
        bad.draw_offer = true;
        g.plies.insert(1, bad);
        g.notes.push("a note\nover two lines".into());
        g.ignored.push("xyz".into());
        assert_eq!(
            to_string(&g, turkish()),
            "1. e4\n\
             ; kayıt burada kesiliyor: 1... \"Şe9\" (kurala aykırı, beraberlik teklifi); \
             sonra okunan: 2. \"e5\" 2... \"Nf3\"\n\
             ; not: a note over two lines\n\
             ; kullanılmayan metin: \"xyz\"\n"
        );
    }

    #[test]
    fn empty_game_is_an_empty_line() {
        assert_eq!(to_string(&game(&[], GameResult::Unknown), turkish()), "\n");
        assert_eq!(
            to_string(&game(&[], GameResult::WhiteWins), turkish()),
            "1-0\n"
        );
    }
}
