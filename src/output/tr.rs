//! Turkish move text, as seed 001 writes it: `1. d4 Af6 2. c4 e6 … 11. 0-0 Khf8 =`.
//!
//! Input: a [`Game`]. Output: text on an [`io::Write`]. This is [`super::lang_text`] with
//! the Turkish row of [`crate::notation::LANGS`]: letters Ş V K F A, castling `0-0` /
//! `0-0-0` (the seed's legend; its sample game writes `O-O`, which hamle reads but does
//! not write), promotion `g8V`, `e.p.` after an en passant capture, ` =` after a move that
//! offered a draw, the result at the end when known. Flagged plies are listed on a
//! trailing `; kontrol edilmeli: …` line, the moves line stays clean; see
//! [`super::lang_text`] for the trailing lines.

use std::io::{self, Write};

use crate::notation::turkish;
use crate::record::Game;

use super::lang_text;

/// Writes `game` in Turkish notation.
///
/// # Errors
///
/// Whatever `w` returns.
pub fn write(game: &Game, w: &mut impl Write) -> io::Result<()> {
    lang_text::write(game, turkish(), w)
}

/// [`write()`] into a `String`.
pub fn to_string(game: &Game) -> String {
    lang_text::to_string(game, turkish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::testutil::{game, SEED_001};
    use crate::record::GameResult;

    #[test]
    fn seed_001_sample_game() {
        let mut g = game(SEED_001, GameResult::Unknown);
        g.plies[21].draw_offer = true;
        assert_eq!(
            to_string(&g),
            "1. d4 Af6 2. c4 e6 3. Af3 Fb4+ 4. Abd2 b6 5. a3 Fxd2+ 6. Fxd2 Fb7 7. b4 d6 \
             8. Fg5 Abd7 9. e3 Ve7 10. Fe2 0-0-0 11. 0-0 Khf8 =\n"
        );
    }

    #[test]
    fn writes_to_any_writer() {
        let g = game(&["e4"], GameResult::WhiteWins);
        let mut out = Vec::new();
        write(&g, &mut out).unwrap();
        assert_eq!(out, b"1. e4 1-0\n");
    }
}
