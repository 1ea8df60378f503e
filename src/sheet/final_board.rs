//! The final-position check (issue #6): a game read from a scoresheet against a photo of the
//! board when the game ended (arbiters photograph each board at the end of a round).
//!
//! Input: the [`Game`] and the [`BoardReading`] of the photo. Output: [`FinalBoardCheck`] —
//! whether the game's last position is the one photographed, and where not, the squares that
//! differ and the plies that last touched them (the moves that would have to change). The
//! photo's orientation is taken as the one of the four that agrees best with the game: the
//! game says where White sat better than the pieces of an endgame do.
//!
//! Where they disagree, [`target`] turns the photo into a [`FinalTarget`] for the decoder,
//! which then prefers a reading of the sheet that ends in the photographed position
//! ([`crate::sheet::read_file`] does both when [`crate::sheet::SheetConfig::final_board`]
//! is set); the plies that reading changed are listed in [`FinalBoardCheck::changed`].

use std::path::Path;

use serde::Serialize;
use shakmaty::{Chess, Move, Piece, Position, Square};

use crate::board::{
    best_turns, parse_placement, placement, turn, BoardConfig, BoardError, BoardKind, BoardReading,
};
use crate::decode::FinalTarget;
use crate::record::Game;

/// What the photo says about the game read from the sheet.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FinalBoardCheck {
    /// The photo's file name, as given.
    pub file: String,
    /// The position read in the photo (FEN placement), turned the way that agrees best with
    /// the game.
    pub placement: String,
    /// The game's last position (FEN placement), after its last ply with a move.
    pub game_placement: String,
    /// Squares that agree, of 64.
    pub agreeing_squares: usize,
    /// Whether all 64 agree.
    pub agrees: bool,
    /// Each differing square: `e4: game P, photo -`.
    pub differs: Vec<String>,
    /// Plies that last moved a piece to or from a differing square, ascending: the moves a
    /// reviewer should look at first.
    pub plies: Vec<u32>,
    /// Whether the photo had to be turned from the orientation its reading chose.
    pub turned: bool,
    /// How the photo was read: `diagram` or `physical` (a photo of a set); `auto` where the
    /// check was made from a placement alone ([`check_placement`]).
    pub read_as: BoardKind,
    /// Plies (1-based) whose move changed when the sheet was read again to end in the
    /// photographed position; empty when the first reading agreed or nothing changed.
    pub changed: Vec<u32>,
}

/// Compares the game's last position with the photographed one.
pub fn check(game: &Game, photo: &BoardReading, file: &str) -> FinalBoardCheck {
    FinalBoardCheck {
        read_as: photo.kind,
        ..check_placement(game, &photo.placement, file)
    }
}

/// Reads a final-position photo as `kind` shows it. For [`BoardKind::Auto`] it is read
/// both as a diagram and as a photo of a set (each crop also mirrored), and both readings
/// are returned, the set's first: [`choose`] then keeps the one that agrees better with the
/// game read from the sheet. (`hamle board --kind auto` decides from the image alone, and
/// takes 9 of the 23 rendered final positions of the dev sheets for diagrams: 76.7 % of
/// their squares right, against 83.7 % as sets.) An error only when no reading succeeds.
pub fn read_photo(path: &Path, kind: BoardKind) -> Result<Vec<BoardReading>, BoardError> {
    let as_kind = |kind| BoardConfig {
        kind,
        ..BoardConfig::default()
    };
    if kind != BoardKind::Auto {
        return crate::board::read_file(path, &as_kind(kind)).map(|r| vec![r]);
    }
    // Decoded once for both readings.
    let img = crate::vision::decode(path).map_err(BoardError::Decode)?;
    let set = crate::board::read_decoded(img.clone(), &as_kind(BoardKind::Physical));
    let diagram = crate::board::read_decoded(img, &as_kind(BoardKind::Diagram));
    match (set, diagram) {
        (Ok(a), Ok(b)) => Ok(vec![a, b]),
        (Ok(a), Err(_)) | (Err(_), Ok(a)) => Ok(vec![a]),
        (Err(e), Err(_)) => Err(e),
    }
}

/// Of several readings of one photo, the one whose position agrees with the game's last
/// position on most squares (each turned the way that agrees best); a tie keeps the
/// earlier one. A misread photo rarely agrees with the game better than a right reading,
/// since its errors fall anywhere.
pub fn choose<'a>(game: &Game, readings: &'a [BoardReading]) -> Option<&'a BoardReading> {
    let mut best: Option<(usize, &BoardReading)> = None;
    for r in readings {
        let n = check_placement(game, &r.placement, "").agreeing_squares;
        if best.is_none_or(|b| n > b.0) {
            best = Some((n, r));
        }
    }
    best.map(|b| b.1)
}

/// The game's last position (up to its first ply without a legal move) and, per ply, the
/// squares it touched.
fn last_position(game: &Game) -> (Chess, Vec<(u32, Vec<Square>)>) {
    let mut pos = game.start.clone();
    let mut touched: Vec<(u32, Vec<Square>)> = Vec::new();
    for p in &game.plies {
        let Some(mv) = &p.mv else { break };
        if !pos.is_legal(*mv) {
            break;
        }
        touched.push((p.ply, squares_of(mv, pos.turn())));
        pos.play_unchecked(*mv);
    }
    (pos, touched)
}

/// The photo as the decoder's target: turned the way that agrees best with `game` (the
/// first reading of the sheet), each square weighted by the confidence of its reading, but
/// no square more than the share of squares on which the photo and that reading agree: a
/// photo that disagrees with the sheet on a third of the board is mostly misread, however
/// sure its squares say they are, and may only break near-ties.
pub fn target(game: &Game, photo: &BoardReading) -> FinalTarget {
    let (pos, _) = last_position(game);
    let game_grid = parse_placement(&pos.board().to_string()).unwrap_or([[None; 8]; 8]);
    // The photo's squares, canonical order (a8 first), with their confidences.
    let mut read: [[(Option<Piece>, f32); 8]; 8] = [[(None, 0.0); 8]; 8];
    for (i, sq) in photo.squares.iter().enumerate().take(64) {
        let piece = sq.piece.and_then(Piece::from_char);
        read[i / 8][i % 8] = (piece, sq.confidence as f32);
    }
    let pieces = read.map(|row| row.map(|(p, _)| p));
    let (k, agree) = best_turns(&pieces, &game_grid);
    let share = agree as f32 / 64.0;
    let read = turn(&read, k).map(|row| row.map(|(p, c)| (p, c.min(share))));
    let mut squares = [(None, 0.0f32); 64];
    for (r, row) in read.iter().enumerate() {
        for (c, cell) in row.iter().enumerate() {
            let sq = Square::from_coords(
                shakmaty::File::new(c as u32),
                shakmaty::Rank::new(7 - r as u32),
            );
            squares[usize::from(sq)] = *cell;
        }
    }
    FinalTarget::from_reading(squares)
}

/// [`check`] with the photo's reading as a FEN placement.
pub fn check_placement(game: &Game, photo_placement: &str, file: &str) -> FinalBoardCheck {
    let (pos, touched) = last_position(game);
    let game_grid = parse_placement(&pos.board().to_string()).unwrap_or([[None; 8]; 8]);
    let photo_grid = parse_placement(photo_placement).unwrap_or([[None; 8]; 8]);
    let (k, n) = best_turns(&photo_grid, &game_grid);
    let (grid, turned) = (turn(&photo_grid, k), k > 0);
    let mut differs = Vec::new();
    let mut plies = Vec::new();
    for (r, (row_g, row_p)) in game_grid.iter().zip(grid.iter()).enumerate() {
        for (c, (a, b)) in row_g.iter().zip(row_p.iter()).enumerate() {
            if a == b {
                continue;
            }
            let sq = Square::from_coords(
                shakmaty::File::new(c as u32),
                shakmaty::Rank::new(7 - r as u32),
            );
            let ch = |p: &Option<shakmaty::Piece>| p.map_or('-', |p| p.char());
            differs.push(format!("{sq}: game {}, photo {}", ch(a), ch(b)));
            if let Some((ply, _)) = touched.iter().rev().find(|(_, s)| s.contains(&sq)) {
                plies.push(*ply);
            }
        }
    }
    plies.sort_unstable();
    plies.dedup();
    FinalBoardCheck {
        file: file.to_string(),
        placement: placement(&grid),
        game_placement: placement(&game_grid),
        agreeing_squares: n,
        agrees: n == 64,
        differs,
        plies,
        turned,
        read_as: BoardKind::Auto,
        changed: Vec::new(),
    }
}

/// Squares a move changes: from and to, the rook's squares when castling, the captured
/// pawn's square en passant.
fn squares_of(mv: &Move, turn: shakmaty::Color) -> Vec<Square> {
    let mut v = vec![mv.from().unwrap_or(mv.to()), mv.to()];
    match mv {
        Move::Castle { king, rook } => {
            let side = shakmaty::CastlingSide::from_queen_side(rook < king);
            v = vec![*king, *rook, side.king_to(turn), side.rook_to(turn)];
        }
        Move::EnPassant { from, to } => {
            v.push(Square::from_coords(to.file(), from.rank()));
        }
        _ => {}
    }
    v
}

impl FinalBoardCheck {
    /// A one-line note for the game record.
    pub fn note(&self) -> String {
        let read_as = match self.read_as {
            BoardKind::Diagram => " (read as a diagram)",
            BoardKind::Physical => " (read as a set)",
            BoardKind::Auto => "",
        };
        let base = if self.agrees {
            format!(
                "final position confirmed by the photo {}{read_as} (all 64 squares agree)",
                self.file
            )
        } else {
            let plies = if self.plies.is_empty() {
                String::new()
            } else {
                format!("; plies to check: {}", join(&self.plies))
            };
            format!(
                "final position differs from the photo {}{read_as} on {} square{} ({}){plies}",
                self.file,
                self.differs.len(),
                if self.differs.len() == 1 { "" } else { "s" },
                self.differs.join("; ")
            )
        };
        if self.changed.is_empty() {
            base
        } else {
            format!(
                "{base}; read again to end in the photographed position, the sheet's reading changed at plies {}",
                join(&self.changed)
            )
        }
    }
}

fn join(plies: &[u32]) -> String {
    plies
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::testutil::game;
    use crate::record::GameResult;

    const AFTER: &str = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R";

    #[test]
    fn the_same_position_agrees_in_any_orientation() {
        let g = game(&["e4", "e5", "Nf3", "Nc6"], GameResult::Unknown);
        let c = check_placement(&g, AFTER, "end.jpg");
        assert!(c.agrees && !c.turned && c.differs.is_empty() && c.plies.is_empty());
        assert!(c.note().contains("confirmed"));
        // the photo read with Black at the bottom: turned back
        let upside = placement(&crate::board::turned(&parse_placement(AFTER).unwrap()));
        let c = check_placement(&g, &upside, "end.jpg");
        assert!(c.agrees && c.turned);
    }

    #[test]
    fn a_difference_names_its_squares_and_the_plies_that_touched_them() {
        let g = game(&["e4", "e5", "Nf3", "Nc6"], GameResult::Unknown);
        // the photo has the black knight on f6 instead of c6 (2... Nf6 on the board)
        let photo = "rnbqkb1r/pppp1ppp/5n2/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R";
        let c = check_placement(&g, photo, "end.jpg");
        assert!(!c.agrees);
        assert_eq!(c.agreeing_squares, 60);
        assert_eq!(c.plies, vec![4]);
        assert!(
            c.differs.iter().any(|d| d == "c6: game n, photo -"),
            "{:?}",
            c.differs
        );
        assert!(c.note().contains("plies to check: 4"));
    }

    #[test]
    fn castling_touches_the_rook_squares() {
        let g = game(
            &["e4", "e5", "Nf3", "Nc6", "Bc4", "Bc5", "O-O"],
            GameResult::Unknown,
        );
        // the photo has the rook still on h1 and nothing on f1
        let photo = "r1bqk1nr/pppp1ppp/2n5/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQ1K1R";
        let c = check_placement(&g, photo, "end.jpg");
        assert!(c.plies.contains(&7), "{:?} {:?}", c.plies, c.differs);
    }
}
