//! A move prior: how likely a player is to choose a move, before anything is read.
//!
//! Input: a position, the move before it and one legal move. Output: a score (logit);
//! a softmax over a position's legal moves gives P(move | position). It breaks ties the
//! readings leave open — `Vd` for any queen move to the d-file, a missing ply — in
//! favour of what players actually play: recaptures, captures of big pieces, castling,
//! not leaving a piece en prise.
//!
//! It is a conditional logit over a few cheap features, fitted on real games by
//! `cargo run --release --example train_prior -- datasets/games/malakhov_master.pgn`
//! (first 1,000 games; the weights below are its output, and its report gives the
//! held-out figures, quoted in `models/move-prior.md`).

use shakmaty::{attacks, Bitboard, Chess, Move, Piece, Position, Role};

/// Number of features.
pub const N_FEATURES: usize = 19;

/// Fitted weights (see the module docs for the command).
pub const WEIGHTS: [f32; N_FEATURES] = [
    0.0,
    1.0589732,
    4.755204,
    0.3545848,
    1.5823282,
    2.6838973,
    -0.28356624,
    -0.37285757,
    -0.49175957,
    -0.47387218,
    -0.44943467,
    -0.61240757,
    -6.0599394,
    2.730655,
    0.18094364,
    1.6669035,
    0.8650874,
    1.3380564,
    1.3244569,
];

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
    let mut v: Vec<(f32, &mut f32)> = scored.map(|(m, c)| (logit(pos, last, m), c)).collect();
    let best = v.iter().map(|x| x.0).fold(f32::NEG_INFINITY, f32::max);
    for (l, c) in &mut v {
        **c += weight * (best - *l);
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
pub fn features(pos: &Chess, last: Option<&Move>, mv: &Move) -> [f32; N_FEATURES] {
    let mut f = [0.0f32; N_FEATURES];
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
    if role != Role::King {
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
        if role != Role::King && board.attacks_to(fr, them, board.occupied()).any() {
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
    // A direct check by the moved piece (discovered checks are not looked for).
    if let Some(king) = board.king_of(them) {
        let piece = Piece {
            color: us,
            role: mv.promotion().unwrap_or(role),
        };
        if attacks::attacks(to, piece, occupied_after).contains(king) {
            f[17] = 1.0;
        }
    }
    // A pawn to the centre in the opening.
    if role == Role::Pawn
        && pos.fullmoves().get() <= 10
        && matches!(to.file().char(), 'c'..='f')
        && matches!(to.rank().char(), '4' | '5')
    {
        f[18] = 1.0;
    }
    f
}

/// The prior's logit of `mv`.
pub fn logit(pos: &Chess, last: Option<&Move>, mv: &Move) -> f32 {
    features(pos, last, mv)
        .iter()
        .zip(WEIGHTS.iter())
        .map(|(x, w)| x * w)
        .sum()
}
