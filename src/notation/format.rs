//! Writes a move in a language's notation, from shakmaty's [`SanPlus`].

use shakmaty::san::{San, SanPlus, Suffix};
use shakmaty::CastlingSide;

use super::Lang;

/// Appends `san` as `lang` writes it. `en_passant` adds the language's e.p. suffix
/// (Turkish `dxc6 e.p.`) when the move is an en passant capture.
pub fn write_san(out: &mut String, san: &SanPlus, lang: &Lang, en_passant: bool) {
    match san.san {
        San::Normal {
            role,
            file,
            rank,
            capture,
            to,
            promotion,
        } => {
            out.extend(lang.letter(role));
            if let Some(f) = file {
                out.push(f.char());
            }
            if let Some(r) = rank {
                out.push(r.char());
            }
            if capture {
                out.push('x');
            }
            out.push_str(&to.to_string());
            if let Some(p) = promotion {
                if lang.promotion_eq {
                    out.push('=');
                }
                out.extend(lang.letter(p));
            }
        }
        San::Castle(CastlingSide::KingSide) => out.push_str(lang.castles.0),
        San::Castle(CastlingSide::QueenSide) => out.push_str(lang.castles.1),
        San::Put { role, to } => {
            out.extend(lang.letter(role));
            out.push('@');
            out.push_str(&to.to_string());
        }
        San::Null => out.push_str("--"),
    }
    match san.suffix {
        Some(Suffix::Check) => out.push('+'),
        Some(Suffix::Checkmate) => out.push('#'),
        None => {}
    }
    if en_passant {
        if let Some(ep) = lang.en_passant {
            out.push(' ');
            out.push_str(ep);
        }
    }
}

/// [`write_san`] into a new string.
pub fn san_string(san: &SanPlus, lang: &Lang, en_passant: bool) -> String {
    let mut s = String::new();
    write_san(&mut s, san, lang, en_passant);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::{english, turkish};
    use shakmaty::fen::Fen;
    use shakmaty::{CastlingMode, Chess};

    fn san_in(fen: &str, uci: &str, lang: &Lang) -> String {
        let pos: Chess = fen
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        let m = uci
            .parse::<shakmaty::uci::UciMove>()
            .unwrap()
            .to_move(&pos)
            .unwrap();
        let ep = m.is_en_passant();
        san_string(&SanPlus::from_move(pos, m), lang, ep)
    }

    #[test]
    fn seed_001_examples_in_turkish() {
        let tr = turkish();
        // Kad1: rooks on a1 and h1.
        assert_eq!(
            san_in("4k3/8/8/8/8/8/4K3/R6R w - - 0 1", "a1d1", tr),
            "Kad1"
        );
        // A5b3: knights on a1 and a5.
        assert_eq!(
            san_in("4k3/8/8/N7/8/8/8/N3K3 w - - 0 1", "a5b3", tr),
            "A5b3"
        );
        // Aab3 / Adb3: knights on a1 and d2.
        assert_eq!(
            san_in("4k3/8/8/8/8/8/3N4/N3K3 w - - 0 1", "a1b3", tr),
            "Aab3"
        );
        assert_eq!(
            san_in("4k3/8/8/8/8/8/3N4/N3K3 w - - 0 1", "d2b3", tr),
            "Adb3"
        );
        // dxc6 e.p.
        assert_eq!(
            san_in("4k3/8/8/2pP4/8/8/8/4K3 w - c6 0 1", "d5c6", tr),
            "dxc6 e.p."
        );
        // g8V
        assert_eq!(
            san_in("4k3/6P1/8/8/8/8/8/4K3 w - - 0 1", "g7g8q", tr),
            "g8V+"
        );
        // 0-0, 0-0-0
        assert_eq!(
            san_in("4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1", "e1g1", tr),
            "0-0"
        );
        assert_eq!(
            san_in("4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1", "e1c1", tr),
            "0-0-0"
        );
        assert_eq!(
            san_in("4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1", "e1c1", english()),
            "O-O-O"
        );
        assert_eq!(
            san_in("4k3/6P1/8/8/8/8/8/4K3 w - - 0 1", "g7g8n", english()),
            "g8=N"
        );
    }
}
