//! A move prior: how likely a player is to choose a move, before anything is read.
//!
//! Input: a position, the move before it and one legal move. Output: a score (logit);
//! a softmax over a position's legal moves gives P(move | position). It breaks ties the
//! readings leave open — `Vd` for any queen move to the d-file, a missing ply — in
//! favour of what players actually play: recaptures, captures of big pieces, castling,
//! not leaving a piece en prise.
//!
//! It is a conditional logit over cheap features of the move and piece-square tables,
//! fitted on real games by
//! `cargo run --release --example train_prior -- datasets/games/malakhov_master.pgn`
//! (the weights are its output, in `prior_weights.rs`; `models/move-prior.md` has the
//! data and the held-out figures).

use shakmaty::{
    attacks, Bitboard, CastlingSide, Chess, Color, Move, Piece, Position, Role, Square,
};

/// Dense features (each move has all of them).
pub const N_DENSE: usize = 29;
/// Piece-square features: for the moving piece, its target and its origin square (seen
/// from the mover's side), each in an opening and an endgame table, blended by the
/// material left on the board.
pub const N_SQUARES: usize = 4 * 6 * 64;
/// Number of weights.
pub const N_FEATURES: usize = N_DENSE + N_SQUARES;

/// A move's features: the dense ones and up to four piece-square ones.
#[derive(Debug, Clone, Copy)]
pub struct Features {
    pub dense: [f32; N_DENSE],
    /// (weight index, value); unused entries have value 0.
    pub sparse: [(u16, f32); 4],
}

impl Features {
    /// Every non-zero feature as (weight index, value).
    pub fn iter(&self) -> impl Iterator<Item = (usize, f32)> + '_ {
        self.dense
            .iter()
            .enumerate()
            .filter(|x| *x.1 != 0.0)
            .map(|(k, v)| (k, *v))
            .chain(
                self.sparse
                    .iter()
                    .filter(|x| x.1 != 0.0)
                    .map(|(k, v)| (*k as usize, *v)),
            )
    }

    /// The dot product with `w`.
    pub fn dot(&self, w: &[f32]) -> f32 {
        let dense: f32 = self.dense.iter().zip(w).map(|(x, y)| x * y).sum();
        dense
            + self
                .sparse
                .iter()
                .map(|&(k, v)| w[k as usize] * v)
                .sum::<f32>()
    }
}

pub use super::prior_weights::WEIGHTS;

/// Adds `weight × (best logit − logit)` to each move's cost: 0 for the move the prior
/// likes best, more for less likely ones.
pub fn add_costs<'a>(
    pos: &Chess,
    last: Option<&Move>,
    weight: f32,
    scored: impl Iterator<Item = (&'a Move, &'a mut f32)>,
) {
    if weight <= 0.0 {
        return;
    }
    let scored: Vec<(&Move, &mut f32)> = scored.collect();
    // Each move's cost is its logit's distance to the best one's: a lone move costs 0.
    if scored.len() < 2 {
        return;
    }
    let ctx = Context::new(pos);
    let mut v: Vec<(f32, &mut f32)> = scored
        .into_iter()
        .map(|(m, c)| (features_in(&ctx, pos, last, m).dot(&WEIGHTS), c))
        .collect();
    let best = v.iter().map(|x| x.0).fold(f32::NEG_INFINITY, f32::max);
    for (l, c) in &mut v {
        **c += weight * (best - *l);
    }
}

/// What the features of all moves of one position share.
pub struct Context {
    /// Squares the opponent attacks now.
    their_attacks: Bitboard,
    /// Pieces left (both sides, no pawns) as a share of the starting 62 points, at most 1.
    opening: f32,
}

impl Context {
    pub fn new(pos: &Chess) -> Context {
        let board = pos.board();
        let their_attacks = attacked_by(board, !pos.turn(), board.occupied());
        let material = (board.knights() | board.bishops()).count() as f32 * 3.0
            + board.rooks().count() as f32 * 5.0
            + board.queens().count() as f32 * 9.0;
        Context {
            their_attacks,
            opening: (material / 62.0).min(1.0),
        }
    }
}

fn value(role: Role) -> f32 {
    match role {
        Role::Pawn => 1.0,
        Role::Knight | Role::Bishop => 3.0,
        Role::Rook => 5.0,
        Role::Queen => 9.0,
        Role::King => 0.0,
    }
}

/// The features of `mv` in `pos`; `last` is the move that led to `pos`.
pub fn features(pos: &Chess, last: Option<&Move>, mv: &Move) -> Features {
    features_in(&Context::new(pos), pos, last, mv)
}

/// [`features`] with the position's shared part computed once.
pub fn features_in(ctx: &Context, pos: &Chess, last: Option<&Move>, mv: &Move) -> Features {
    let mut f = [0.0f32; N_DENSE];
    let board = pos.board();
    let us = pos.turn();
    let them = !us;
    let role = mv.role();
    let to = mv.to();
    let from = mv.from();
    let captured = mv.capture();
    f[0] = 1.0; // bias (cancels in the softmax; kept for a clean layout)
    if let Some(c) = captured {
        f[1] = 1.0;
        f[2] = value(c) / 9.0;
        // Taking with a cheaper piece than the one taken.
        f[3] = ((value(c) - value(role)).max(0.0)) / 9.0;
    }
    if let Some(l) = last {
        if l.is_capture() && l.to() == to && captured.is_some() {
            f[4] = 1.0; // recapture
        }
    }
    if mv.is_castle() {
        f[5] = 1.0;
    }
    match role {
        Role::Pawn => f[6] = 1.0,
        Role::Knight => f[7] = 1.0,
        Role::Bishop => f[8] = 1.0,
        Role::Rook => f[9] = 1.0,
        Role::Queen => f[10] = 1.0,
        Role::King if !mv.is_castle() => f[11] = 1.0,
        Role::King => {}
    }
    let occupied_after = (board.occupied() ^ from.map_or(Bitboard::EMPTY, Bitboard::from_square))
        | Bitboard::from_square(to);
    // The piece lands where the opponent attacks it and nothing of ours defends it.
    // (Squares the opponent does not attack now are taken as safe: a line opened by the
    // move itself is not looked for.)
    if role != Role::King && ctx.their_attacks.contains(to) {
        let attackers = board.attacks_to(to, them, occupied_after) & !Bitboard::from_square(to);
        if attackers.any() {
            let defenders = board.attacks_to(to, us, occupied_after)
                & !from.map_or(Bitboard::EMPTY, Bitboard::from_square);
            let cheaper = attackers
                .into_iter()
                .any(|sq| board.role_at(sq).is_some_and(|r| value(r) < value(role)));
            if defenders.is_empty() || cheaper {
                f[12] = value(role) / 9.0;
            }
        }
    }
    // The piece was attacked where it stood: moving it away saves it.
    if let Some(fr) = from {
        if role != Role::King && ctx.their_attacks.contains(fr) {
            f[13] = value(role) / 9.0;
        }
    }
    if mv.promotion() == Some(Role::Queen) {
        f[14] = 1.0;
    }
    // A piece moving back to where it just came from (the same side's previous move is
    // not known here; this catches the opponent's piece being chased back).
    if pos.fullmoves().get() <= 12
        && matches!(role, Role::Knight | Role::Bishop)
        && from.is_some_and(|fr| fr.rank() == us.backrank())
    {
        f[15] = 1.0; // developing a minor piece early
    }
    // Taking the piece that just moved.
    if captured.is_some() && last.is_some_and(|l| l.to() == to) {
        f[16] = 1.0;
    }
    let piece_after = Piece {
        color: us,
        role: mv.promotion().unwrap_or(role),
    };
    let attacks_after = attacks::attacks(to, piece_after, occupied_after);
    // A direct check by the moved piece (discovered checks are not looked for).
    if board
        .king_of(them)
        .is_some_and(|king| attacks_after.contains(king))
    {
        f[17] = 1.0;
    }
    // A pawn to the centre in the opening.
    if role == Role::Pawn
        && pos.fullmoves().get() <= 10
        && matches!(to.file().char(), 'c'..='f')
        && matches!(to.rank().char(), '4' | '5')
    {
        f[18] = 1.0;
    }
    // A threat: the moved piece now attacks an enemy piece that is worth more, or that
    // nothing defends (now).
    let mut threat = 0.0f32;
    for sq in attacks_after & board.by_color(them) & !Bitboard::from_square(to) {
        let Some(r) = board.role_at(sq) else { continue };
        if r == Role::King {
            continue;
        }
        let defended = ctx.their_attacks.contains(sq);
        if value(r) > value(piece_after.role) || !defended {
            threat = threat.max(value(r));
        }
    }
    f[19] = threat / 9.0;
    // Taking a piece that nothing defends.
    if let Some(c) = captured {
        if !ctx.their_attacks.contains(to) {
            f[20] = value(c) / 9.0;
        }
    }
    let rights = pos.castles();
    if role == Role::King && !mv.is_castle() && rights.has_color(us) {
        f[21] = 1.0; // giving up castling with the king
    }
    if role == Role::Rook
        && from.is_some_and(|fr| {
            [CastlingSide::KingSide, CastlingSide::QueenSide]
                .iter()
                .any(|&side| rights.rook(us, side) == Some(fr))
        })
    {
        f[22] = 1.0; // giving up castling on one side with the rook
    }
    if role == Role::Queen && pos.fullmoves().get() <= 8 {
        f[23] = 1.0; // an early queen move
    }
    // Mate: players rarely miss a mate in one (only direct checks are tried).
    if f[17] > 0.0 {
        let mut after = pos.clone();
        after.play_unchecked(*mv);
        if after.is_checkmate() {
            f[24] = 1.0;
        }
    }
    // Moving the piece that the opponent's last move attacked.
    if let (Some(l), Some(fr)) = (last, from) {
        if role != Role::King {
            if let Some(p) = board.piece_at(l.to()) {
                if attacks::attacks(l.to(), p, board.occupied()).contains(fr) {
                    f[25] = value(role) / 9.0;
                }
            }
        }
    }
    // What the move wins or loses: what it takes (or promotes to), less the opponent's
    // best capture afterwards by static exchange (the moved piece or another one left
    // hanging), in pawns, capped at ±9.
    // A mate in one counts as the most.
    let delta = if f[24] > 0.0 {
        9.0
    } else {
        (material_swing(pos, mv) as f32 / 100.0).clamp(-9.0, 9.0)
    };
    f[26] = delta / 9.0;
    f[27] = delta.min(0.0) / 9.0;
    if delta <= -2.0 {
        f[28] = 1.0;
    }
    let mut sparse = [(0u16, 0.0f32); 4];
    if let (Some(fr), false) = (from, mv.is_castle()) {
        // Material left (both sides, pieces only) blends opening and endgame tables.
        let opening = ctx.opening;
        let endgame = 1.0 - opening;
        let rel = |sq: Square| {
            let sq = if us == Color::White {
                sq
            } else {
                sq.flip_vertical()
            };
            u16::from(sq)
        };
        let base = (N_DENSE + (role as usize - 1) * 64) as u16;
        let table = 6 * 64;
        sparse = [
            (base + rel(to), opening),
            (base + table + rel(to), endgame),
            (base + 2 * table + rel(fr), opening),
            (base + 3 * table + rel(fr), endgame),
        ];
    }
    Features { dense: f, sparse }
}

/// Piece values for the static exchange; the king's is large so that the exchange
/// never gives it up (a king takes only where nothing takes it back).
fn centipawns(role: Role) -> i32 {
    match role {
        Role::Pawn => 100,
        Role::Knight => 320,
        Role::Bishop => 330,
        Role::Rook => 500,
        Role::Queen => 900,
        Role::King => 10_000,
    }
}

/// The material `mv` wins for the side to move, less the most the opponent can then win
/// by one exchange on a square (static exchange; pins and checks are ignored), in
/// centipawns.
fn material_swing(pos: &Chess, mv: &Move) -> i32 {
    let us = pos.turn();
    let them = !us;
    let mut gain = mv.capture().map_or(0, centipawns);
    if let Some(p) = mv.promotion() {
        gain += centipawns(p) - centipawns(Role::Pawn);
    }
    let board = &board_after(pos.board(), us, mv);
    let hanging = board.by_color(us) & attacked_by(board, them, board.occupied());
    // Dearest first: an exchange never wins more than the piece it starts on, so once the
    // threat found is worth that piece, cheaper ones cannot raise it.
    let mut threat = 0;
    for role in [
        Role::Queen,
        Role::Rook,
        Role::Bishop,
        Role::Knight,
        Role::Pawn,
    ] {
        if centipawns(role) <= threat {
            break;
        }
        for sq in hanging & board.by_role(role) {
            threat = threat.max(see(board, sq, them));
        }
    }
    gain - threat
}

/// The squares `color`'s pieces on `board` attack with `occupied` blocking the sliders:
/// `sq` is in it exactly when `board.attacks_to(sq, color, occupied)` is not empty
/// (attacks are symmetric), in one pass over `color`'s pieces instead of one look per
/// square.
fn attacked_by(board: &shakmaty::Board, color: Color, occupied: Bitboard) -> Bitboard {
    let ours = board.by_color(color);
    let mut a = Bitboard::EMPTY;
    for sq in ours & board.pawns() {
        a |= attacks::pawn_attacks(color, sq);
    }
    for sq in ours & board.knights() {
        a |= attacks::knight_attacks(sq);
    }
    for sq in ours & board.bishops_and_queens() {
        a |= attacks::bishop_attacks(sq, occupied);
    }
    for sq in ours & board.rooks_and_queens() {
        a |= attacks::rook_attacks(sq, occupied);
    }
    for sq in ours & board.kings() {
        a |= attacks::king_attacks(sq);
    }
    a
}

/// The board after `mv` (only the pieces; nothing else of the position).
fn board_after(board: &shakmaty::Board, us: Color, mv: &Move) -> shakmaty::Board {
    let mut b = board.clone();
    match *mv {
        Move::Normal {
            role,
            from,
            to,
            promotion,
            ..
        } => {
            b.discard_piece_at(from);
            b.set_piece_at(
                to,
                Piece {
                    color: us,
                    role: promotion.unwrap_or(role),
                },
            );
        }
        Move::EnPassant { from, to } => {
            b.discard_piece_at(from);
            b.discard_piece_at(Square::from_coords(to.file(), from.rank()));
            b.set_piece_at(to, us.pawn());
        }
        Move::Castle { king, rook } => {
            let side = CastlingSide::from_queen_side(rook < king);
            b.discard_piece_at(king);
            b.discard_piece_at(rook);
            b.set_piece_at(side.king_to(us), us.king());
            b.set_piece_at(side.rook_to(us), us.rook());
        }
        Move::Put { role, to } => b.set_piece_at(to, Piece { color: us, role }),
    }
    b
}

/// Static exchange on `sq`: what `side` wins by capturing there first and both sides
/// then recapturing with their cheapest piece while it pays (0 when it does not pay).
fn see(board: &shakmaty::Board, sq: Square, side: Color) -> i32 {
    let Some(target) = board.role_at(sq) else {
        return 0;
    };
    let cheapest = |color: Color, occupied: Bitboard| {
        let attackers = board.attacks_to(sq, color, occupied) & occupied;
        Role::ALL
            .into_iter()
            .find_map(|r| (attackers & board.by_role(r)).first().map(|s| (s, r)))
    };
    let mut occupied = board.occupied();
    let Some((mut from, mut role)) = cheapest(side, occupied) else {
        return 0;
    };
    // gain[k]: what the k-th capture nets its side if the exchange stopped there.
    let mut gain = [0i32; 34];
    gain[0] = centipawns(target);
    let mut color = side;
    let mut d = 0;
    loop {
        d += 1;
        if d + 1 >= gain.len() {
            break;
        }
        gain[d] = centipawns(role) - gain[d - 1];
        if (-gain[d - 1]).max(gain[d]) < 0 {
            break;
        }
        occupied ^= Bitboard::from_square(from);
        color = !color;
        match cheapest(color, occupied) {
            Some(next) => (from, role) = next,
            None => break,
        }
    }
    // Each side may stop recapturing.
    while d > 1 {
        d -= 1;
        gain[d - 1] = -(-gain[d - 1]).max(gain[d]);
    }
    gain[0].max(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;
    use shakmaty::CastlingMode;

    fn position(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    #[test]
    fn static_exchange_counts_defenders_and_x_rays() {
        // A knight on e5 that a pawn defends: taking it with the rook loses the exchange.
        let p = position("4k3/8/3p4/4n3/8/8/8/4R1K1 w - - 0 1");
        assert_eq!(see(p.board(), Square::E5, Color::White), 0);
        // Undefended: the rook takes it free.
        let p = position("4k3/8/8/4n3/8/8/8/4R1K1 w - - 0 1");
        assert_eq!(see(p.board(), Square::E5, Color::White), 320);
        // Two rooks in a line against one rook: Rxe5 Rxe5 Rxe5 wins the knight.
        let p = position("4r1k1/8/8/4n3/8/8/4R3/4R1K1 w - - 0 1");
        assert_eq!(see(p.board(), Square::E5, Color::White), 320);
    }

    #[test]
    fn a_move_that_leaves_a_piece_hanging_loses_it() {
        // The knight on d4 is attacked by the e5 pawn; moving the a-pawn leaves it.
        let p = position("4k3/8/8/4p3/3N4/8/P7/4K3 w - - 0 1");
        let moves = p.legal_moves();
        let a3 = moves.iter().find(|m| m.to() == Square::A3).unwrap();
        let away = moves.iter().find(|m| m.to() == Square::F3).unwrap();
        assert_eq!(material_swing(&p, a3), -320);
        assert_eq!(material_swing(&p, away), 0);
    }

    /// Seeded numbers below `n` (xorshift).
    fn xorshift(mut rng: u64) -> impl FnMut(usize) -> usize {
        move |n| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % n as u64) as usize
        }
    }

    /// The position after up to `max_plies` random legal moves from the start.
    fn random_position(next: &mut impl FnMut(usize) -> usize, max_plies: usize) -> Chess {
        let mut p = Chess::default();
        for _ in 0..next(max_plies) {
            let moves = p.legal_moves();
            if moves.is_empty() {
                break;
            }
            p.play_unchecked(moves[next(moves.len())]);
        }
        p
    }

    #[test]
    fn attacked_squares_are_those_with_attackers() {
        // Positions along seeded random games, both colours, with and without a square
        // emptied (as the static exchange does).
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        for _ in 0..200 {
            let p = random_position(&mut next, 120);
            let board = p.board();
            let hole = Square::new(next(64) as u32);
            for occupied in [
                board.occupied(),
                board.occupied() & !Bitboard::from_square(hole),
            ] {
                for color in [Color::White, Color::Black] {
                    let a = attacked_by(board, color, occupied);
                    for sq in Square::ALL {
                        assert_eq!(
                            a.contains(sq),
                            board.attacks_to(sq, color, occupied).any(),
                            "{} {sq:?} {color:?}",
                            shakmaty::fen::Fen::from_position(&p, shakmaty::EnPassantMode::Legal)
                        );
                    }
                }
            }
        }
    }

    /// [`material_swing`] as first written: every piece of the mover looked at, each with
    /// its own `attacks_to`.
    fn material_swing_one_by_one(pos: &Chess, mv: &Move) -> i32 {
        let us = pos.turn();
        let them = !us;
        let mut gain = mv.capture().map_or(0, centipawns);
        if let Some(p) = mv.promotion() {
            gain += centipawns(p) - centipawns(Role::Pawn);
        }
        let board = &board_after(pos.board(), us, mv);
        let occupied = board.occupied();
        let mut threat = 0;
        for sq in board.by_color(us) & !board.kings() {
            if board.attacks_to(sq, them, occupied).any() {
                threat = threat.max(see(board, sq, them));
            }
        }
        gain - threat
    }

    #[test]
    fn material_swing_looks_at_the_attacked_pieces_only() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let mut moves_seen = 0;
        for _ in 0..300 {
            let p = random_position(&mut next, 100);
            for m in &p.legal_moves() {
                assert_eq!(
                    material_swing(&p, m),
                    material_swing_one_by_one(&p, m),
                    "{m:?}"
                );
                moves_seen += 1;
            }
        }
        assert!(moves_seen > 5_000, "{moves_seen}");
    }

    #[test]
    fn the_board_after_a_move_is_the_one_shakmaty_plays() {
        let fens = [
            "r3k2r/pppq1ppp/2n2n2/3pp3/1b1PP1b1/2N2N2/PPPQBPPP/R3K2R w KQkq - 0 1",
            "r3k2r/pppq1ppp/2n2n2/3pp3/1b1PP1b1/2N2N2/PPPQBPPP/R3K2R b KQkq - 0 1",
            "4k3/1P6/8/3pP3/8/8/6p1/4K2R w K d6 0 1",
            "4k3/1P6/8/8/3pP3/8/6p1/R3K3 b Q e3 0 1",
        ];
        for fen in fens {
            let p = position(fen);
            for m in &p.legal_moves() {
                let mut q = p.clone();
                q.play_unchecked(*m);
                assert_eq!(
                    &board_after(p.board(), p.turn(), m),
                    q.board(),
                    "{fen} {m:?}"
                );
            }
        }
    }
}
