//! Chess notation: the letters of each language, a lenient lexer for written move text,
//! and a formatter that writes SAN in any language.
//!
//! Input: text (`&str`). Output: [`lexer::Token`]s (syntax only, no board), and strings
//! written from shakmaty's [`SanPlus`](shakmaty::san::SanPlus) by [`format::write_san`].
//!
//! This module knows nothing about legality: `rules` resolves a move against a position
//! and `decode` decides which legal move a noisy reading means. Languages are rows of the
//! [`LANGS`] table, not code: adding German means adding a row.
//!
//! ```
//! use hamle::notation::{lang, format::san_string};
//! use shakmaty::{Chess, Position, san::SanPlus};
//! let pos = Chess::default();
//! let m = pos.legal_moves().into_iter().find(|m| m.to() == shakmaty::Square::F3 && m.role() == shakmaty::Role::Knight).unwrap();
//! let san = SanPlus::from_move(pos, m);
//! assert_eq!(san_string(&san, lang("tr").unwrap(), false), "Af3");
//! assert_eq!(san_string(&san, lang("en").unwrap(), false), "Nf3");
//! ```

pub mod format;
pub mod lexer;

use shakmaty::Role;

/// The notation letters of one language.
#[derive(Debug, PartialEq, Eq)]
pub struct Lang {
    /// ISO 639-1 code: `tr`, `en`, …
    pub code: &'static str,
    /// English name of the language.
    pub name: &'static str,
    /// The letter written for King, Queen, Rook, Bishop, Knight (in that order).
    pub pieces: [char; 5],
    /// The pawn letter some writers add (`Pe4`), if the language has one.
    pub pawn: Option<char>,
    /// Further letters accepted when reading, with the piece they stand for
    /// (`S` for `Ş` in Turkish, where keyboards and OCR lose the cedilla).
    pub also: &'static [(char, Role)],
    /// Castling as this language writes it (kingside, queenside).
    pub castles: (&'static str, &'static str),
    /// Whether promotion is written with `=` (`e8=Q`) or without (`g8V`).
    pub promotion_eq: bool,
    /// Suffix written after an en passant capture (`e.p.`), if the language writes one.
    pub en_passant: Option<&'static str>,
}

impl Lang {
    /// The letter for a piece, `None` for a pawn.
    pub fn letter(&self, role: Role) -> Option<char> {
        match role {
            Role::King => Some(self.pieces[0]),
            Role::Queen => Some(self.pieces[1]),
            Role::Rook => Some(self.pieces[2]),
            Role::Bishop => Some(self.pieces[3]),
            Role::Knight => Some(self.pieces[4]),
            Role::Pawn => None,
        }
    }

    /// The piece a letter stands for in this language (canonical or accepted variant).
    pub fn role_of(&self, c: char) -> Option<Role> {
        const ROLES: [Role; 5] = [
            Role::King,
            Role::Queen,
            Role::Rook,
            Role::Bishop,
            Role::Knight,
        ];
        if let Some(i) = self.pieces.iter().position(|&p| p == c) {
            return Some(ROLES[i]);
        }
        if self.pawn == Some(c) {
            return Some(Role::Pawn);
        }
        self.also.iter().find(|(a, _)| *a == c).map(|(_, r)| *r)
    }

    /// Every letter this language reads as a piece (canonical first, then variants).
    pub fn all_letters(&self) -> impl Iterator<Item = char> + '_ {
        self.pieces
            .iter()
            .copied()
            .chain(self.pawn)
            .chain(self.also.iter().map(|(c, _)| *c))
    }
}

/// The languages hamle reads and writes. Turkish first: it is the project's home notation.
pub static LANGS: &[Lang] = &[
    Lang {
        code: "tr",
        name: "Turkish",
        pieces: ['Ş', 'V', 'K', 'F', 'A'],
        pawn: None,
        also: &[('S', Role::King), ('ş', Role::King)],
        castles: ("0-0", "0-0-0"),
        promotion_eq: false,
        en_passant: Some("e.p."),
    },
    Lang {
        code: "en",
        name: "English",
        pieces: ['K', 'Q', 'R', 'B', 'N'],
        pawn: Some('P'),
        also: &[],
        castles: ("O-O", "O-O-O"),
        promotion_eq: true,
        en_passant: None,
    },
    Lang {
        code: "de",
        name: "German",
        pieces: ['K', 'D', 'T', 'L', 'S'],
        pawn: Some('B'),
        also: &[],
        castles: ("0-0", "0-0-0"),
        promotion_eq: false,
        en_passant: Some("e.p."),
    },
    Lang {
        code: "fr",
        name: "French",
        pieces: ['R', 'D', 'T', 'F', 'C'],
        pawn: Some('P'),
        also: &[],
        castles: ("0-0", "0-0-0"),
        promotion_eq: true,
        en_passant: Some("e.p."),
    },
    Lang {
        code: "es",
        name: "Spanish",
        pieces: ['R', 'D', 'T', 'A', 'C'],
        pawn: Some('P'),
        also: &[],
        castles: ("0-0", "0-0-0"),
        promotion_eq: true,
        en_passant: Some("a.p."),
    },
    Lang {
        code: "it",
        name: "Italian",
        pieces: ['R', 'D', 'T', 'A', 'C'],
        pawn: Some('P'),
        also: &[],
        castles: ("0-0", "0-0-0"),
        promotion_eq: true,
        en_passant: Some("e.p."),
    },
    Lang {
        code: "nl",
        name: "Dutch",
        pieces: ['K', 'D', 'T', 'L', 'P'],
        pawn: None,
        also: &[],
        castles: ("0-0", "0-0-0"),
        promotion_eq: true,
        en_passant: Some("e.p."),
    },
];

/// Looks a language up by its code (`tr`, `en`, …).
pub fn lang(code: &str) -> Option<&'static Lang> {
    LANGS.iter().find(|l| l.code.eq_ignore_ascii_case(code))
}

/// The Turkish row of [`LANGS`].
pub fn turkish() -> &'static Lang {
    &LANGS[0]
}

/// The English row of [`LANGS`].
pub fn english() -> &'static Lang {
    &LANGS[1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_language_has_distinct_piece_letters() {
        for l in LANGS {
            let mut seen: Vec<char> = l.pieces.to_vec();
            seen.extend(l.pawn);
            let n = seen.len();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), n, "{}", l.code);
            for r in [
                Role::King,
                Role::Queen,
                Role::Rook,
                Role::Bishop,
                Role::Knight,
            ] {
                assert_eq!(l.role_of(l.letter(r).unwrap()), Some(r), "{}", l.code);
            }
        }
    }

    #[test]
    fn turkish_reads_plain_s_as_king() {
        assert_eq!(turkish().role_of('S'), Some(Role::King));
        assert_eq!(turkish().role_of('Ş'), Some(Role::King));
        assert_eq!(turkish().role_of('K'), Some(Role::Rook));
        assert_eq!(english().role_of('K'), Some(Role::King));
    }
}
