//! The game record: what the repair engine hands to the output stage.
//!
//! Input: nothing (plain data). Output: [`Game`], a list of [`PlyRecord`]s with their
//! status and confidence, the result and how the game ended. Every stage after `decode`
//! (PGN, Turkish text, JSON, review reports) reads this type and nothing else.
//!
//! Doubt is data: a ply that could not be read, that is missing from the input or that
//! was illegal as written is a [`Status`] on its record, never an error.

use serde::Serialize;
use shakmaty::san::SanPlus;
use shakmaty::{Chess, Move};

use crate::notation::Lang;

/// How sure the engine is about one ply, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// What was read spells this legal move (allowing the notation's own variants:
    /// `0-0`/`O-O`, a missing `x` or `+`, `Ş`/`S`).
    Ok,
    /// What was read needed character-level corrections to become this move.
    Corrected,
    /// What was read is a move, but no legal move is close to it. The reading is kept;
    /// the move shown is the engine's guess from the rest of the game (or none).
    Illegal,
    /// Something was there but it does not read as a move; the move shown is a guess.
    Unreadable,
    /// Nothing was read for this ply (a gap in the input); the move shown is a guess.
    Missing,
}

impl Status {
    /// The lowercase name used in JSON and comments.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Corrected => "corrected",
            Status::Illegal => "illegal",
            Status::Unreadable => "unreadable",
            Status::Missing => "missing",
        }
    }

    /// Whether the ply's move is the engine's guess rather than a reading of its text
    /// (missing, illegal, unreadable).
    pub fn is_guess(self) -> bool {
        matches!(self, Status::Missing | Status::Illegal | Status::Unreadable)
    }

    /// Whether a human should look at this ply.
    pub fn is_flagged(self) -> bool {
        !matches!(self, Status::Ok)
    }
}

/// A runner-up reading of one ply.
#[derive(Debug, Clone)]
pub struct Alternative {
    /// The move, legal in the position before the ply.
    pub mv: Move,
    /// Its English SAN (with check suffix).
    pub san: SanPlus,
    /// Posterior probability (0..1) of this alternative.
    pub prob: f32,
}

/// One half-move of the decoded game.
#[derive(Debug, Clone)]
pub struct PlyRecord {
    /// 1-based ply number (1 = White's first move).
    pub ply: u32,
    /// The move the engine settled on. `None` only when it has no basis for a guess
    /// (an illegal last move, say); then the game ends here in PGN.
    pub mv: Option<Move>,
    /// English SAN of `mv` in its position, with `+`/`#`.
    pub san: Option<SanPlus>,
    /// The text that was read for this ply (`None` for a missing ply).
    pub read: Option<String>,
    /// Probability (0..1) that `mv` is the move played.
    pub confidence: f32,
    pub status: Status,
    /// The player offered a draw with this move (`=` after it).
    pub draw_offer: bool,
    /// Runner-up moves, best first.
    pub alternatives: Vec<Alternative>,
    /// What `confidence` was made of, before calibration (for fitting and checking the
    /// calibration; not written out).
    pub evidence: Evidence,
}

/// The parts of a ply's raw confidence: plain numbers the calibration maps to a
/// probability.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Evidence {
    /// Share of the final beam (weighted by path cost) that plays this move here.
    pub beam: f32,
    /// The move's share among all legal moves for the reading alone (1 for a ply with
    /// no reading of its own to weigh).
    pub local: f32,
    /// Correction cost of the reading, in nats (0 for a spelling as written).
    pub cost: f32,
    /// Plies within the engine's health window on either side that are not `ok`.
    pub neighbours: u8,
}

/// Below this confidence an `ok` ply is written out as unsure (a PGN comment, a line of
/// the move text's check list): its text reads as the move, but the plies around it leave
/// room for another reading. Calibrated confidences mean what they say: on the README's
/// noisy sample (session 35) `ok` plies under 0.9 were right about 70 % of the time.
pub const UNSURE_BELOW: f32 = 0.9;

impl PlyRecord {
    /// An `ok` ply the engine is not sure of ([`UNSURE_BELOW`]); other statuses are
    /// flagged already.
    pub fn is_unsure(&self) -> bool {
        self.status == Status::Ok && self.confidence < UNSURE_BELOW
    }
}

/// Why the game ended, as far as the record shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Termination {
    Checkmate,
    Stalemate,
    ThreefoldRepetition,
    FiftyMoves,
    InsufficientMaterial,
    /// A result token (`1-0`, `½-½`, …) ended the game without a rule ending it.
    ResultGiven,
    /// No end is recorded (`*`).
    Unterminated,
}

/// The result in PGN terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum GameResult {
    #[serde(rename = "1-0")]
    WhiteWins,
    #[serde(rename = "0-1")]
    BlackWins,
    #[serde(rename = "1/2-1/2")]
    Draw,
    #[serde(rename = "*")]
    Unknown,
}

impl GameResult {
    pub fn as_pgn(self) -> &'static str {
        match self {
            GameResult::WhiteWins => "1-0",
            GameResult::BlackWins => "0-1",
            GameResult::Draw => "1/2-1/2",
            GameResult::Unknown => "*",
        }
    }
}

/// A decoded game.
#[derive(Debug, Clone)]
pub struct Game {
    /// PGN tags found in the input (`Event`, `White`, …), in input order.
    pub headers: Vec<(String, String)>,
    /// The notation language the moves were read in.
    pub lang: &'static Lang,
    /// The position before the first ply.
    pub start: Chess,
    /// The plies, in order.
    pub plies: Vec<PlyRecord>,
    pub result: GameResult,
    pub termination: Termination,
    /// Text of the input that was not used for any ply (stray tokens), for the reviewer.
    pub ignored: Vec<String>,
    /// Notes on game-level events (e.g. "threefold repetition after ply 40; play continued").
    pub notes: Vec<String>,
}

impl Game {
    /// Number of plies whose status asks for a human.
    pub fn flagged(&self) -> usize {
        self.plies.iter().filter(|p| p.status.is_flagged()).count()
    }

    /// Number of `ok` plies the engine is not sure of ([`PlyRecord::is_unsure`]).
    pub fn unsure(&self) -> usize {
        self.plies.iter().filter(|p| p.is_unsure()).count()
    }

    /// Number of plies a reviewer should look at: flagged, or `ok` but unsure.
    pub fn to_check(&self) -> usize {
        self.flagged() + self.unsure()
    }
}
