//! Chess rules over `shakmaty`: the legal moves of a position as *shapes* that a scorer
//! can spell in any language, SAN for the record, and how a game ends.
//!
//! Input: a [`Chess`] position or a list of moves. Output: [`Shape`]s (one per legal
//! move), [`SanPlus`] and an [`Ending`]. Spelling a shape as text is `decode`'s job (it
//! knows the language and the noise); this module only states facts about moves.
//!
//! Game end follows `../shared/seeds/002_*`: mate, stalemate, threefold repetition and the
//! fifty-move rule end the game (the last two automatically, as the seed says), and so does
//! insufficient material.

use std::collections::HashMap;

use shakmaty::san::{San, SanPlus, Suffix};
use shakmaty::zobrist::Zobrist64;
use shakmaty::{CastlingSide, Chess, EnPassantMode, Move, Position, Role, Square};

use crate::record::{GameResult, Termination};

/// A legal move with the facts needed to spell it.
#[derive(Debug, Clone)]
pub struct Shape {
    pub mv: Move,
    pub role: Role,
    pub from: Square,
    pub to: Square,
    pub capture: bool,
    pub promotion: Option<Role>,
    pub castle: Option<CastlingSide>,
    pub en_passant: bool,
    /// SAN must name the origin file (another piece of the same kind reaches `to`).
    pub need_file: bool,
    /// SAN must name the origin rank.
    pub need_rank: bool,
    /// `+` or `#` after the move, when known (see [`shapes_with_suffix`]).
    pub suffix: Option<Suffix>,
}

impl Shape {
    /// The move in SAN (without suffix).
    pub fn san(&self) -> San {
        match self.castle {
            Some(side) => San::Castle(side),
            None => San::Normal {
                role: self.role,
                file: self.need_file.then(|| self.from.file()),
                rank: self.need_rank.then(|| self.from.rank()),
                capture: self.capture,
                to: self.to,
                promotion: self.promotion,
            },
        }
    }

    /// The move in SAN with its suffix.
    pub fn san_plus(&self) -> SanPlus {
        SanPlus {
            san: self.san(),
            suffix: self.suffix,
        }
    }
}

/// All legal moves of `pos` as shapes, without check suffixes (cheap).
pub fn shapes(pos: &Chess) -> Vec<Shape> {
    shapes_where(pos, |_, _, _| true)
}

/// The legal moves of `pos` that `keep(role, to, castle)` accepts, as shapes.
/// Disambiguation is still worked out against all legal moves.
pub fn shapes_where(
    pos: &Chess,
    keep: impl Fn(Role, Square, Option<CastlingSide>) -> bool,
) -> Vec<Shape> {
    shapes_among(&pos.legal_moves(), keep)
}

/// The legal moves of `pos` of the given kinds, as shapes: `(role, to)` pairs, and
/// castling when `castle` is set. The same shapes as [`shapes_where`] keeping exactly those
/// kinds (in another order), without generating every legal move: for a handful of kinds
/// this is several times cheaper.
pub fn shapes_to(
    pos: &Chess,
    kinds: impl Iterator<Item = (Role, Square)>,
    castle: bool,
) -> Vec<Shape> {
    let mut moves = shakmaty::MoveList::new();
    for (role, to) in kinds {
        moves.extend(pos.san_candidates(role, to));
    }
    if castle {
        moves.extend(pos.castling_moves(CastlingSide::KingSide));
        moves.extend(pos.castling_moves(CastlingSide::QueenSide));
    }
    // Every legal move of a (role, to) pair is in `moves`, so disambiguation comes out
    // as against all legal moves.
    shapes_among(&moves, |_, _, _| true)
}

/// The moves of `moves` that `keep` accepts, as shapes, disambiguated against `moves`.
fn shapes_among(
    moves: &[Move],
    keep: impl Fn(Role, Square, Option<CastlingSide>) -> bool,
) -> Vec<Shape> {
    // Pieces of one kind reaching one square: (role, to) → count.
    let mut count = [0u8; 6 * 64];
    let key = |role: Role, to: Square| (role as usize - 1) * 64 + to as usize;
    for m in moves {
        if let Move::Normal { role, to, .. } = *m {
            if role != Role::Pawn {
                count[key(role, to)] = count[key(role, to)].saturating_add(1);
            }
        }
    }
    let mut out: Vec<Shape> = Vec::with_capacity(moves.len());
    for m in moves {
        let (role, from, to, capture, promotion, castle, ep) = match *m {
            Move::Normal {
                role,
                from,
                capture,
                to,
                promotion,
            } => (role, from, to, capture.is_some(), promotion, None, false),
            Move::EnPassant { from, to } => (Role::Pawn, from, to, true, None, None, true),
            Move::Castle { king, rook } => {
                let side = CastlingSide::from_queen_side(rook < king);
                let to = Square::from_coords(side.king_to_file(), king.rank());
                (Role::King, king, to, false, None, Some(side), false)
            }
            Move::Put { .. } => continue,
        };
        if !keep(role, to, castle) {
            continue;
        }
        let (mut need_file, mut need_rank) = (role == Role::Pawn && capture, false);
        if role != Role::Pawn && castle.is_none() && count[key(role, to)] > 1 {
            // SAN disambiguation: name what differs from the other candidates.
            let (mut same_file, mut same_rank) = (false, false);
            for o in moves {
                if let Move::Normal {
                    role: r2,
                    from: f2,
                    to: t2,
                    ..
                } = *o
                {
                    if r2 == role && t2 == to && f2 != from {
                        same_file |= f2.file() == from.file();
                        same_rank |= f2.rank() == from.rank();
                    }
                }
            }
            (need_file, need_rank) = if !same_file {
                (true, false)
            } else if !same_rank {
                (false, true)
            } else {
                (true, true)
            };
        }
        out.push(Shape {
            mv: *m,
            role,
            from,
            to,
            capture,
            promotion,
            castle,
            en_passant: ep,
            need_file,
            need_rank,
            suffix: None,
        });
    }
    out
}

/// [`shapes`] with the `+`/`#` suffix of each move filled in.
pub fn shapes_with_suffix(pos: &Chess) -> Vec<Shape> {
    let mut out = shapes(pos);
    for s in &mut out {
        s.suffix = suffix_after(pos, &s.mv);
    }
    out
}

/// The check suffix a move earns.
///
/// The same as `Suffix::from_position` of the position after the move, whose outcome test
/// generates every legal reply even when the move gives no check; here the replies are
/// generated only after a check. On scoresheets, where each move's spelling is scored with
/// its suffix, that test was about a tenth of a sheet's time.
pub fn suffix_after(pos: &Chess, mv: &Move) -> Option<Suffix> {
    let mut after = pos.clone();
    after.play_unchecked(*mv);
    if !after.is_check() {
        None
    } else if after.legal_moves().is_empty() {
        Some(Suffix::Checkmate)
    } else {
        Some(Suffix::Check)
    }
}

/// The SAN (with suffix) of a legal move.
pub fn san_plus(pos: &Chess, mv: &Move) -> SanPlus {
    SanPlus::from_move(pos.clone(), *mv)
}

/// How a sequence of legal moves ends, per the rules of seed 002.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ending {
    pub termination: Termination,
    pub result: GameResult,
    /// Index into the moves after which the game ended (0-based ply index).
    pub after_ply: usize,
}

/// Replays `moves` from `start` and reports the first rule that ends the game, if any.
/// Moves after that point are not replayed (the caller decides what to do with them).
/// A move that is illegal in its position stops the replay (returns `None`).
pub fn ending<'a>(start: &Chess, moves: impl IntoIterator<Item = &'a Move>) -> Option<Ending> {
    let mut pos = start.clone();
    let mut seen: HashMap<u64, u32> = HashMap::new();
    let key = |p: &Chess| -> u64 { p.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0 };
    *seen.entry(key(&pos)).or_default() += 1;
    for (i, m) in moves.into_iter().enumerate() {
        if !pos.is_legal(*m) {
            return None;
        }
        pos.play_unchecked(*m);
        let end = |termination, result| {
            Some(Ending {
                termination,
                result,
                after_ply: i,
            })
        };
        if pos.is_checkmate() {
            let winner = if pos.turn().is_white() {
                GameResult::BlackWins
            } else {
                GameResult::WhiteWins
            };
            return end(Termination::Checkmate, winner);
        }
        if pos.is_stalemate() {
            return end(Termination::Stalemate, GameResult::Draw);
        }
        if pos.is_insufficient_material() {
            return end(Termination::InsufficientMaterial, GameResult::Draw);
        }
        let n = seen.entry(key(&pos)).or_default();
        *n += 1;
        if *n >= 3 {
            return end(Termination::ThreefoldRepetition, GameResult::Draw);
        }
        if pos.halfmoves() >= 100 {
            return end(Termination::FiftyMoves, GameResult::Draw);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;
    use shakmaty::CastlingMode;

    fn pos(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    /// Every legal move's suffix, along random games and in mating positions, is the one
    /// shakmaty's SAN gives.
    #[test]
    fn suffixes_are_shakmatys() {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut starts = vec![
            Chess::default(),
            pos("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1"), // back-rank mate
            pos("r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4"), // Qxf7#
            pos("7k/5Q2/6K1/8/8/8/8/8 w - - 0 1"),       // mates and a stalemate
        ];
        let mut checks = 0;
        let mut mates = 0;
        for start in starts.drain(..) {
            for _ in 0..20 {
                let mut p = start.clone();
                for _ in 0..80 {
                    let moves = p.legal_moves();
                    if moves.is_empty() {
                        break;
                    }
                    for m in &moves {
                        let mut after = p.clone();
                        after.play_unchecked(*m);
                        let want = Suffix::from_position(&after);
                        assert_eq!(
                            suffix_after(&p, m),
                            want,
                            "{m:?} in {}",
                            Fen::from_position(&p, EnPassantMode::Legal)
                        );
                        checks += usize::from(want == Some(Suffix::Check));
                        mates += usize::from(want == Some(Suffix::Checkmate));
                    }
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    p.play_unchecked(moves[(rng % moves.len() as u64) as usize]);
                }
            }
        }
        assert!(checks > 100 && mates > 0, "{checks} checks, {mates} mates");
    }

    fn play(sans: &[&str]) -> (Chess, Vec<Move>) {
        let mut p = Chess::default();
        let mut ms = Vec::new();
        for s in sans {
            let m = s.parse::<San>().unwrap().to_move(&p).unwrap();
            p.play_unchecked(m);
            ms.push(m);
        }
        (p, ms)
    }

    #[test]
    fn shapes_agree_with_shakmaty_san() {
        for fen in [
            "4k3/8/8/N7/8/8/3N4/N3K2R w K - 0 1",
            "r3k2r/pPpp1ppp/8/3Pp3/8/8/PPP2PPP/R3K2R w KQkq e6 0 1",
            "1k6/8/8/8/8/8/8/R3K2R w KQ - 0 1",
            "7k/8/8/3Q1Q2/8/3Q1Q2/8/K7 w - - 0 1",
        ] {
            let p = pos(fen);
            for s in shapes_with_suffix(&p) {
                assert_eq!(s.san_plus(), san_plus(&p, &s.mv), "{fen} {:?}", s.mv);
            }
        }
    }

    #[test]
    fn fools_mate_is_checkmate() {
        let (_, ms) = play(&["f3", "e5", "g4", "Qh4"]);
        let e = ending(&Chess::default(), &ms).unwrap();
        assert_eq!(e.termination, Termination::Checkmate);
        assert_eq!(e.result, GameResult::BlackWins);
        assert_eq!(e.after_ply, 3);
    }

    #[test]
    fn threefold_repetition_ends_the_game() {
        let (_, ms) = play(&["Nf3", "Nf6", "Ng1", "Ng8", "Nf3", "Nf6", "Ng1", "Ng8"]);
        let e = ending(&Chess::default(), &ms).unwrap();
        assert_eq!(e.termination, Termination::ThreefoldRepetition);
        assert_eq!(e.after_ply, 7);
    }

    #[test]
    fn stalemate_and_insufficient_material() {
        let p = pos("k7/8/1K6/8/8/8/8/2Q5 w - - 0 1");
        let quiet = San::from_ascii(b"Qc2").unwrap().to_move(&p).unwrap();
        assert_eq!(ending(&p, [&quiet]), None);
        let stale = San::from_ascii(b"Qc7").unwrap().to_move(&p).unwrap();
        assert_eq!(
            ending(&p, [&stale]).unwrap().termination,
            Termination::Stalemate
        );
        let p = pos("7k/8/8/8/8/8/6r1/7K w - - 0 1");
        let kxg2 = San::from_ascii(b"Kxg2").unwrap().to_move(&p).unwrap();
        assert_eq!(
            ending(&p, [&kxg2]).unwrap().termination,
            Termination::InsufficientMaterial
        );
    }

    #[test]
    fn fifty_moves() {
        let mut p = pos("7k/8/8/8/8/8/8/R6K w - - 98 80");
        let a = San::from_ascii(b"Ra2").unwrap().to_move(&p).unwrap();
        p.play_unchecked(a);
        let b = San::from_ascii(b"Kg8").unwrap().to_move(&p).unwrap();
        let start = pos("7k/8/8/8/8/8/8/R6K w - - 98 80");
        assert_eq!(
            ending(&start, [&a, &b]).unwrap().termination,
            Termination::FiftyMoves
        );
    }
}
