//! An OCR-like noise generator for written move text, with a tiny seeded PRNG.
//!
//! Input: a game as legal moves (rendered by [`MoveText::render`] in any row of
//! [`crate::notation::LANGS`]) and a [`NoiseConfig`]. Output: [`Noisy`] — the corrupted
//! text plus exactly what was done to it (characters at risk, characters hit, plies
//! dropped, events by kind), so that an evaluation can state the noise it really applied.
//!
//! This module owns the noise model and nothing else: it does not know the repair engine
//! (its confusion model was written independently of the engine's scorer, so that an
//! evaluation against it is an honest test) and it does not judge legality.
//!
//! # The model
//!
//! The text is a sequence of *units* — move numbers (`12.`) and ply texts (`Axe5+`) —
//! separated by single spaces, then the result token. Every character of every unit is
//! *at risk*; each is hit independently with probability `rate`, so the realised rate
//! (hits / characters at risk) has expectation `rate`. The separators and the result token
//! are not at risk themselves (a lost space is an event on the character before it). A
//! hit on a character `c` is one of:
//!
//! | event | weight | what happens |
//! |---|---:|---|
//! | look-alike | 50 | `c` becomes a visually similar glyph or glyph pair ([`look_alikes`]: `0`→`O`, `1`→`l`, `Ş`→`$`, `d`→`cl`, `h`→`b`, …) |
//! | random | 8 | `c` becomes a uniformly random printable character |
//! | delete | 14 | `c` is lost (for `x`, `+`, `#`: weight 45 more — writers and OCR lose them most) |
//! | junk | 10 | a speck or stroke (`.`, `'`, `-`, `|`, `i`, …) is inserted before or after `c` |
//! | case flip | 6 | `e`→`E`, `F`→`f` (letters with a case only) |
//! | split | 5 | a space is inserted after `c` (not after a unit's last character) |
//! | merge | 12 | on a unit's last character only: `c` stays, the space after it is lost and the next unit runs on (`12.e4`, `e4e5`) |
//!
//! A character without look-alikes gets a random substitution in their place. No event ever yields the character it replaces, so every hit changes the
//! text. Structural PGN characters (`{ } ( ) [ ] ;`) are never produced: they would make a
//! lexer drop whole stretches of text, which is a different failure from OCR noise.
//!
//! Independently of `rate`, each ply's text is dropped whole with probability `drop` ("the
//! odd ply dropped": a skipped cell, a line lost by layout); its move number stays. A
//! dropped ply's characters are not at risk.
//!
//! Everything is deterministic given the [`SplitMix64`] seed.
//!
//! Apart from the ink, [`render_with_slips`] writes some plies as a player slipping would
//! ([`SlipKind`]: a rank or file off by one, another piece's letter, the piece letter left
//! off, another square, the other castling), for measuring what the repair engine makes
//! of real scoresheets, where such slips are common: in the HCS labels
//! (`../shared/data/hcs-labels`) only 10 of 202 scoresheets replay as legal chess.
//!
//! ```
//! use hamle::eval::noise::{corrupt, MoveText, NoiseConfig, SplitMix64};
//! use hamle::notation::turkish;
//! use hamle::record::GameResult;
//! use shakmaty::{Chess, Position, san::San};
//!
//! let mut pos = Chess::default();
//! let mut moves = Vec::new();
//! for s in ["e4", "e5", "Nf3", "Nc6", "Bb5"] {
//!     let m = s.parse::<San>().unwrap().to_move(&pos).unwrap();
//!     pos.play_unchecked(m);
//!     moves.push(m);
//! }
//! let text = MoveText::render(&Chess::default(), &moves, turkish(), GameResult::Unknown).unwrap();
//! assert_eq!(text.to_text(), "1. e4 e5 2. Af3 Ac6 3. Fb5 *");
//! let noisy = corrupt(&text, &NoiseConfig::new(0.1, 0.0).unwrap(), &mut SplitMix64::new(7));
//! let again = corrupt(&text, &NoiseConfig::new(0.1, 0.0).unwrap(), &mut SplitMix64::new(7));
//! assert_eq!(noisy.text, again.text);
//! ```

use serde::Serialize;
use shakmaty::san::{San, SanPlus};
use shakmaty::{Chess, Color, File, Move, Position, Rank, Role, Square};

use crate::notation::format::san_string;
use crate::notation::Lang;
use crate::record::GameResult;

// ---------------------------------------------------------------------------------------
// PRNG
// ---------------------------------------------------------------------------------------

/// SplitMix64 (Steele, Lea, Flood 2014): a tiny, fast, well-mixed 64-bit generator.
/// Not for cryptography; here only so that every noisy text can be rebuilt from its seed.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator seeded with `seed` (any value, zero included).
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(self.state)
    }

    /// A uniform float in `[0, 1)` (53 random bits).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// `true` with probability `p` (clamped to `0..=1`).
    pub fn chance(&mut self, p: f64) -> bool {
        self.next_f64() < p
    }

    /// A uniform index in `0..n`; `0` when `n` is 0.
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        // Multiply-shift: unbiased enough for tables of a few dozen entries.
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// A uniform element of `xs`, `None` when it is empty.
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> Option<&'a T> {
        if xs.is_empty() {
            None
        } else {
            xs.get(self.below(xs.len()))
        }
    }

    /// An index drawn with probability proportional to `weights` (`None` if all are 0).
    pub fn weighted(&mut self, weights: &[u32]) -> Option<usize> {
        let total: u64 = weights.iter().map(|&w| u64::from(w)).sum();
        if total == 0 {
            return None;
        }
        let mut r = (self.next_f64() * total as f64) as u64;
        for (i, &w) in weights.iter().enumerate() {
            if r < u64::from(w) {
                return Some(i);
            }
            r -= u64::from(w);
        }
        weights.iter().rposition(|&w| w > 0)
    }
}

/// The SplitMix64 finaliser: a bijective 64-bit mixer.
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Combines seed parts into one seed, order-sensitively (for per-game streams derived
/// from a run seed, a noise level, a file name and a game index).
pub fn derive_seed(parts: &[u64]) -> u64 {
    parts
        .iter()
        .fold(0x6A09_E667_F3BC_C909, |acc, &p| mix64(acc ^ mix64(p)))
}

/// FNV-1a of a string: a stable seed part for names (not `std`'s randomised hasher).
pub fn str_seed(s: &str) -> u64 {
    s.bytes().fold(0xCBF2_9CE4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3)
    })
}

// ---------------------------------------------------------------------------------------
// Rendering
// ---------------------------------------------------------------------------------------

/// One piece of written move text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Unit {
    /// A move number as written (`12.` or `12...`).
    Number { text: String },
    /// The text of one ply; `index` is 0-based (0 = the first ply of the game).
    Ply { index: usize, text: String },
}

impl Unit {
    fn text(&self) -> &str {
        match self {
            Unit::Number { text } | Unit::Ply { text, .. } => text,
        }
    }
}

/// A game as written move text: units in order, then the result token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MoveText {
    pub units: Vec<Unit>,
    /// The result token (`1-0`, `0-1`, `1/2-1/2`, `*`).
    pub result: String,
}

/// A move that is not legal where a game record puts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IllegalMoveError {
    /// 0-based index of the offending ply.
    pub ply_index: usize,
}

impl std::fmt::Display for IllegalMoveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ply {} is not legal in its position", self.ply_index + 1)
    }
}

impl std::error::Error for IllegalMoveError {}

impl MoveText {
    /// Writes `moves` from `start` as `lang` writes them: `N.` before White's moves
    /// (`N...` when the game starts with Black), check marks, the language's castling,
    /// promotion and en passant spellings (Turkish: `0-0`, `g8V`, `dxc6 e.p.`).
    ///
    /// # Errors
    ///
    /// [`IllegalMoveError`] when a move is not legal in its position.
    pub fn render(
        start: &Chess,
        moves: &[Move],
        lang: &Lang,
        result: GameResult,
    ) -> Result<MoveText, IllegalMoveError> {
        let mut pos = start.clone();
        let mut units = Vec::with_capacity(moves.len() * 3 / 2 + 1);
        for (i, &m) in moves.iter().enumerate() {
            if !pos.is_legal(m) {
                return Err(IllegalMoveError { ply_index: i });
            }
            let number = pos.fullmoves().get();
            match pos.turn() {
                Color::White => units.push(Unit::Number {
                    text: format!("{number}."),
                }),
                Color::Black if i == 0 => units.push(Unit::Number {
                    text: format!("{number}..."),
                }),
                Color::Black => {}
            }
            let ep = m.is_en_passant();
            let san = SanPlus::from_move_and_play_unchecked(&mut pos, m);
            units.push(Unit::Ply {
                index: i,
                text: san_string(&san, lang, ep),
            });
        }
        Ok(MoveText {
            units,
            result: result.as_pgn().to_string(),
        })
    }

    /// The clean text: units and result joined by single spaces.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        for u in &self.units {
            s.push_str(u.text());
            s.push(' ');
        }
        s.push_str(&self.result);
        s
    }

    /// Number of ply units.
    pub fn plies(&self) -> usize {
        self.units
            .iter()
            .filter(|u| matches!(u, Unit::Ply { .. }))
            .count()
    }
}

// ---------------------------------------------------------------------------------------
// Noise
// ---------------------------------------------------------------------------------------

/// How much noise to apply.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct NoiseConfig {
    rate: f64,
    drop: f64,
}

impl NoiseConfig {
    /// `rate`: expected fraction of at-risk characters hit; `drop`: probability that a
    /// ply's text is dropped whole. `None` unless both are finite and in `0..=1`.
    pub fn new(rate: f64, drop: f64) -> Option<Self> {
        let ok = |x: f64| x.is_finite() && (0.0..=1.0).contains(&x);
        (ok(rate) && ok(drop)).then_some(NoiseConfig { rate, drop })
    }

    pub fn rate(&self) -> f64 {
        self.rate
    }

    pub fn drop(&self) -> f64 {
        self.drop
    }
}

/// How many hits of each kind a text received.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct EventCounts {
    pub look_alike: usize,
    pub random: usize,
    pub deleted: usize,
    pub junk: usize,
    pub case_flip: usize,
    pub split: usize,
    /// Spaces lost after a unit (two units merged).
    pub merged: usize,
}

impl EventCounts {
    /// Adds `other` into `self`.
    pub fn add(&mut self, other: &EventCounts) {
        self.look_alike += other.look_alike;
        self.random += other.random;
        self.deleted += other.deleted;
        self.junk += other.junk;
        self.case_flip += other.case_flip;
        self.split += other.split;
        self.merged += other.merged;
    }

    /// All hits.
    pub fn total(&self) -> usize {
        self.look_alike
            + self.random
            + self.deleted
            + self.junk
            + self.case_flip
            + self.split
            + self.merged
    }
}

/// A corrupted move text and the record of what was done to it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Noisy {
    pub text: String,
    /// Characters at risk (the characters of the surviving units).
    pub chars: usize,
    /// Characters hit (each hit changes the text).
    pub corrupted: usize,
    /// 0-based indices of the plies whose text was dropped, in order.
    pub dropped: Vec<usize>,
    pub events: EventCounts,
}

impl Noisy {
    /// `corrupted / chars` (0 for an empty text).
    pub fn realised_rate(&self) -> f64 {
        if self.chars == 0 {
            0.0
        } else {
            self.corrupted as f64 / self.chars as f64
        }
    }
}

/// Visually similar glyphs (or glyph pairs) that OCR or a hurried hand gives for `c`.
/// Never contains `c` itself, a space, or a structural PGN character.
pub fn look_alikes(c: char) -> &'static [&'static str] {
    match c {
        // digits
        '0' => &["O", "o", "D", "Q"],
        '1' => &["l", "I", "7", "i", "|"],
        '2' => &["z", "Z", "7"],
        '3' => &["8", "B", "5"],
        '4' => &["A", "h", "9", "u"],
        '5' => &["S", "s", "6", "$"],
        '6' => &["b", "G", "5", "8"],
        '7' => &["1", "T", "/"],
        '8' => &["3", "B", "6", "0"],
        '9' => &["g", "q", "4"],
        // files and other lower case
        'a' => &["o", "d", "q", "e"],
        'b' => &["6", "h", "lo"],
        'c' => &["e", "o"],
        'd' => &["cl", "a", "ol", "J"],
        'e' => &["c", "o", "a", "l"],
        'f' => &["t", "F", "l", "j"],
        'g' => &["9", "q", "y", "8"],
        'h' => &["b", "n", "li", "k"],
        'i' => &["l", "1", "j"],
        'l' => &["1", "I", "i"],
        'o' => &["0", "O", "a"],
        'x' => &["X", "+", "k", "y", "%"],
        // piece letters (Turkish, English and the other tables) and their confusions
        'Ş' => &["S", "$", "5", "s", "Ṣ"],
        'ş' => &["s", "S", "$"],
        'S' => &["5", "$", "s", "8"],
        'V' => &["v", "U", "Y", "W", "\\/"],
        'K' => &["k", "X", "R", "H", "lc"],
        'F' => &["E", "P", "f", "T"],
        'A' => &["4", "a", "R", "H"],
        'E' => &["F", "e", "B"],
        'P' => &["F", "R", "p", "D"],
        'Q' => &["O", "0", "G", "a"],
        'R' => &["K", "P", "B", "k"],
        'B' => &["8", "3", "R", "b"],
        'N' => &["H", "M", "W", "n"],
        'D' => &["0", "O", "P"],
        'T' => &["7", "I", "F"],
        'L' => &["1", "l", "I"],
        'C' => &["c", "G"],
        'O' => &["0", "o", "Q", "D"],
        'X' => &["x", "K", "+"],
        'I' => &["1", "l"],
        // marks
        '+' => &["t", "x", "4", "±", "-"],
        '#' => &["+", "H", "++", "4"],
        '-' => &["_", "~", ".", "="],
        '.' => &[",", "-", "'"],
        '=' => &["-", "~", "z"],
        _ => &[],
    }
}

/// Specks and strokes that OCR reads on a dirty page or between letters.
const JUNK: &[char] = &[
    '.', ',', '\'', '`', '-', '~', '|', '_', '/', 'i', 'l', 'r', '1', 'o', '^', '"',
];

/// The alphabet of uniformly random substitutions: every printable glyph OCR commonly
/// returns on move text, chess letters or not.
const RANDOM: &[char] = &[
    'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n', 'o', 'p', 'q', 'r', 's',
    't', 'u', 'v', 'w', 'x', 'y', 'z', 'A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'L',
    'M', 'N', 'O', 'P', 'Q', 'R', 'S', 'T', 'U', 'V', 'W', 'X', 'Y', 'Z', '0', '1', '2', '3', '4',
    '5', '6', '7', '8', '9', '+', '-', '=', '#', '.', 'Ş', 'Ç', 'Ö', 'Ü', 'İ', 'ı', '/', '*', '&',
    '%', '@',
];

const EV_LOOK: usize = 0;
const EV_RANDOM: usize = 1;
const EV_DELETE: usize = 2;
const EV_JUNK: usize = 3;
const EV_CASE: usize = 4;
const EV_SPLIT: usize = 5;
const EV_MERGE: usize = 6;

fn case_flipped(c: char) -> Option<char> {
    let mut up = c.to_uppercase();
    let mut lo = c.to_lowercase();
    let (u, l) = (up.next()?, lo.next()?);
    if up.next().is_some() || lo.next().is_some() || u == l {
        return None;
    }
    if c == u {
        Some(l)
    } else {
        Some(u)
    }
}

/// Where a character stands in its unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Inside,
    /// The unit's last character, with another unit after it.
    LastBeforeUnit,
    /// The last character of the last unit.
    LastOfText,
}

/// Event weights for a hit on `c`.
fn weights(c: char, place: Place) -> [u32; 7] {
    let mut w = [50, 8, 14, 10, 6, 5, 12];
    if look_alikes(c).is_empty() {
        w[EV_RANDOM] += w[EV_LOOK];
        w[EV_LOOK] = 0;
    }
    if matches!(c, 'x' | '+' | '#') {
        w[EV_DELETE] += 45;
    }
    if case_flipped(c).is_none() {
        w[EV_CASE] = 0;
    }
    if place != Place::Inside {
        w[EV_SPLIT] = 0;
    }
    if place != Place::LastBeforeUnit {
        w[EV_MERGE] = 0;
    }
    w
}

/// Applies one hit on `c` to `out`; `true` when the space after `c` is lost.
fn hit(
    c: char,
    place: Place,
    rng: &mut SplitMix64,
    out: &mut String,
    ev: &mut EventCounts,
) -> bool {
    match rng.weighted(&weights(c, place)) {
        Some(EV_LOOK) => {
            let s = rng.pick(look_alikes(c)).copied().unwrap_or("?");
            out.push_str(s);
            ev.look_alike += 1;
        }
        Some(EV_DELETE) => ev.deleted += 1,
        Some(EV_JUNK) => {
            let j = rng.pick(JUNK).copied().unwrap_or('.');
            if rng.chance(0.5) {
                out.push(j);
                out.push(c);
            } else {
                out.push(c);
                out.push(j);
            }
            ev.junk += 1;
        }
        Some(EV_CASE) => {
            out.push(case_flipped(c).unwrap_or('?'));
            ev.case_flip += 1;
        }
        Some(EV_SPLIT) => {
            out.push(c);
            out.push(' ');
            ev.split += 1;
        }
        Some(EV_MERGE) => {
            out.push(c);
            ev.merged += 1;
            return true;
        }
        // EV_RANDOM, and the impossible "no event".
        _ => {
            let mut r = rng.pick(RANDOM).copied().unwrap_or('?');
            while r == c {
                r = rng.pick(RANDOM).copied().unwrap_or('?');
            }
            out.push(r);
            ev.random += 1;
        }
    }
    false
}

/// Corrupts `text` as the [module docs](self) describe. Deterministic in `rng`'s state.
pub fn corrupt(text: &MoveText, cfg: &NoiseConfig, rng: &mut SplitMix64) -> Noisy {
    let mut out = String::with_capacity(text.to_text().len() + 16);
    let mut ev = EventCounts::default();
    let (mut chars, mut corrupted) = (0usize, 0usize);
    let mut dropped = Vec::new();
    let mut first = true;
    let mut merge = false;
    let last_unit = text.units.len().saturating_sub(1);
    for (ui, unit) in text.units.iter().enumerate() {
        // Decide the drop before anything else so that the drop stream does not depend on
        // the character noise (the same plies drop at every rate for one seed).
        let drop_draw = rng.next_f64();
        if let Unit::Ply { index, .. } = unit {
            if drop_draw < cfg.drop {
                dropped.push(*index);
                continue;
            }
        }
        if !first && !merge {
            out.push(' ');
        }
        first = false;
        merge = false;
        let s = unit.text();
        let n = s.chars().count();
        for (k, c) in s.chars().enumerate() {
            chars += 1;
            if rng.chance(cfg.rate) {
                corrupted += 1;
                let place = match (k + 1 == n, ui == last_unit) {
                    (false, _) => Place::Inside,
                    (true, false) => Place::LastBeforeUnit,
                    (true, true) => Place::LastOfText,
                };
                merge |= hit(c, place, rng, &mut out, &mut ev);
            } else {
                out.push(c);
            }
        }
    }
    if !first {
        out.push(' ');
    }
    out.push_str(&text.result);
    Noisy {
        text: out,
        chars,
        corrupted,
        dropped,
        events: ev,
    }
}

// ---------------------------------------------------------------------------------------
// Slips of the pen
// ---------------------------------------------------------------------------------------

/// A slip of the pen: what a player wrote instead of the move played.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SlipKind {
    /// The target's rank off by one (`Re3` for Re1).
    Rank,
    /// The target's file off by one (`Nd4` for Nc4).
    File,
    /// Another piece's letter (`Bxg6` for Nxg6).
    Piece,
    /// The piece letter left off (`d7` for Qd7).
    NoPiece,
    /// Another target square altogether.
    Square,
    /// The other castling.
    Castle,
}

/// One slipped ply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Slip {
    /// 0-based index of the ply.
    pub index: usize,
    pub kind: SlipKind,
    /// Whether what was written is itself a legal move in that position (then no reader
    /// can tell it from the move played, until a later move no longer fits).
    pub legal: bool,
}

const SLIP_KINDS: [SlipKind; 6] = [
    SlipKind::Rank,
    SlipKind::File,
    SlipKind::Piece,
    SlipKind::NoPiece,
    SlipKind::Square,
    SlipKind::Castle,
];
const SLIP_WEIGHTS: [u32; 6] = [30, 20, 15, 10, 10, 5];

fn offset_square(sq: Square, df: i32, dr: i32) -> Option<Square> {
    let f = sq.file() as i32 + df;
    let r = sq.rank() as i32 + dr;
    ((0..8).contains(&f) && (0..8).contains(&r))
        .then(|| Square::from_coords(File::new(f as u32), Rank::new(r as u32)))
}

/// What a player slipping on `san` might write instead, or `None` where the drawn kinds
/// do not apply (a few tries).
fn slip_san(san: &San, rng: &mut SplitMix64) -> Option<(San, SlipKind)> {
    for _ in 0..20 {
        let kind = SLIP_KINDS[rng.weighted(&SLIP_WEIGHTS)?];
        let mut out = *san;
        match (&mut out, kind) {
            (San::Castle(side), SlipKind::Castle) => *side = side.other(),
            (San::Castle(_), _) | (_, SlipKind::Castle) => continue,
            (
                San::Normal {
                    role,
                    file,
                    rank,
                    capture,
                    to,
                    ..
                },
                kind,
            ) => {
                // Drawn for every kind, so that each kind sees the same stream.
                let step = if rng.chance(0.5) { 1 } else { -1 };
                match kind {
                    SlipKind::Rank | SlipKind::File => {
                        let (df, dr) = if kind == SlipKind::File {
                            (step, 0)
                        } else {
                            (0, step)
                        };
                        let Some(t) = offset_square(*to, df, dr) else {
                            continue;
                        };
                        *to = t;
                    }
                    SlipKind::Piece => {
                        if matches!(*role, Role::Pawn | Role::King) {
                            continue;
                        }
                        let others: Vec<Role> =
                            [Role::Queen, Role::Rook, Role::Bishop, Role::Knight]
                                .into_iter()
                                .filter(|r| r != role)
                                .collect();
                        let Some(&r) = rng.pick(&others) else {
                            continue;
                        };
                        *role = r;
                    }
                    SlipKind::NoPiece => {
                        if *role == Role::Pawn || *capture {
                            continue;
                        }
                        (*role, *file, *rank) = (Role::Pawn, None, None);
                    }
                    SlipKind::Square => {
                        let t = Square::new(rng.below(64) as u32);
                        if t == *to {
                            continue;
                        }
                        *to = t;
                    }
                    SlipKind::Castle => continue,
                }
            }
            _ => continue,
        }
        if out != *san {
            return Some((out, kind));
        }
    }
    None
}

/// Writes `moves` as [`MoveText::render`] does, except that each ply is, with
/// probability `rate`, replaced by a slip of the pen ([`SlipKind`]): a rank or file off
/// by one, another piece's letter, the piece letter left off, another square, the
/// other castling. The slipped text is what a player would have written for the slip in
/// `lang` (its check mark is the played move's). Returns the text and the slips.
///
/// # Errors
///
/// [`IllegalMoveError`] when a move is not legal in its position.
pub fn render_with_slips(
    start: &Chess,
    moves: &[Move],
    lang: &Lang,
    result: GameResult,
    rate: f64,
    rng: &mut SplitMix64,
) -> Result<(MoveText, Vec<Slip>), IllegalMoveError> {
    let mut text = MoveText::render(start, moves, lang, result)?;
    let mut slips = Vec::new();
    if rate <= 0.0 {
        return Ok((text, slips));
    }
    let mut pos = start.clone();
    let mut at = 0;
    for (i, &m) in moves.iter().enumerate() {
        let draw = rng.next_f64();
        let slip = (draw < rate)
            .then(|| slip_san(&San::from_move(&pos, m), rng))
            .flatten()
            .map(|(san, kind)| (san, kind, san.to_move(&pos).is_ok()));
        // Plays the move; its check mark is what the slip is written with.
        let played = SanPlus::from_move_and_play_unchecked(&mut pos, m);
        if let Some((san, kind, legal)) = slip {
            let written = SanPlus {
                san,
                suffix: played.suffix,
            };
            while at < text.units.len() {
                if let Unit::Ply { index, text: t } = &mut text.units[at] {
                    if *index == i {
                        *t = san_string(&written, lang, false);
                        break;
                    }
                }
                at += 1;
            }
            slips.push(Slip {
                index: i,
                kind,
                legal,
            });
        }
    }
    Ok((text, slips))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::{english, turkish};
    use shakmaty::san::San;

    /// A random legal game of up to `plies` plies.
    fn random_game(rng: &mut SplitMix64, plies: usize) -> Vec<Move> {
        let mut pos = Chess::default();
        let mut out = Vec::new();
        for _ in 0..plies {
            let legal = pos.legal_moves();
            let Some(&m) = rng.pick(&legal) else { break };
            pos.play_unchecked(m);
            out.push(m);
        }
        out
    }

    fn moves(sans: &[&str]) -> Vec<Move> {
        let mut pos = Chess::default();
        sans.iter()
            .map(|s| {
                let m = s.parse::<San>().unwrap().to_move(&pos).unwrap();
                pos.play_unchecked(m);
                m
            })
            .collect()
    }

    #[test]
    fn splitmix_reference_values() {
        // First outputs for seed 1234567 from the reference implementation (Vigna).
        let mut r = SplitMix64::new(1234567);
        assert_eq!(r.next_u64(), 6457827717110365317);
        assert_eq!(r.next_u64(), 3203168211198807973);
        assert_eq!(r.next_u64(), 9817491932198370423);
    }

    #[test]
    fn slips_write_another_move_and_say_whether_it_is_legal() {
        let mut rng = SplitMix64::new(3);
        for g in 0..20 {
            let ms = random_game(&mut rng, 80);
            let lang = if g % 2 == 0 { turkish() } else { english() };
            let clean =
                MoveText::render(&Chess::default(), &ms, lang, GameResult::Unknown).unwrap();
            let none = render_with_slips(
                &Chess::default(),
                &ms,
                lang,
                GameResult::Unknown,
                0.0,
                &mut rng,
            )
            .unwrap();
            assert_eq!(none, (clean.clone(), Vec::new()));
            let mut r1 = SplitMix64::new(g);
            let (text, slips) = render_with_slips(
                &Chess::default(),
                &ms,
                lang,
                GameResult::Unknown,
                1.0,
                &mut r1,
            )
            .unwrap();
            let mut r2 = SplitMix64::new(g);
            let again = render_with_slips(
                &Chess::default(),
                &ms,
                lang,
                GameResult::Unknown,
                1.0,
                &mut r2,
            )
            .unwrap();
            assert_eq!((text.clone(), slips.clone()), again);
            // Nearly every ply slips at rate 1 (a king's or castling move may find none).
            assert!(
                slips.len() * 10 >= ms.len() * 8,
                "{} of {}",
                slips.len(),
                ms.len()
            );
            let mut pos = Chess::default();
            let plies: Vec<(&Unit, &Unit)> = clean
                .units
                .iter()
                .zip(&text.units)
                .filter(|(u, _)| matches!(u, Unit::Ply { .. }))
                .collect();
            assert_eq!(text.units.len(), clean.units.len());
            for (i, (a, b)) in plies.iter().enumerate() {
                let slip = slips.iter().find(|x| x.index == i);
                assert_eq!(
                    slip.is_some(),
                    a.text() != b.text(),
                    "ply {i}: {} {}",
                    a.text(),
                    b.text()
                );
                if let (Some(x), 1) = (slip, g % 2) {
                    // Read back as English SAN, the slip is legal exactly when said.
                    let san = b.text().trim_end_matches(['+', '#']);
                    let legal = San::from_ascii(san.as_bytes())
                        .ok()
                        .and_then(|san| san.to_move(&pos).ok())
                        .is_some();
                    assert_eq!(legal, x.legal, "ply {i}: {} for {}", b.text(), a.text());
                }
                pos.play_unchecked(ms[i]);
            }
        }
    }

    #[test]
    fn renders_turkish_with_numbers_castling_and_ep() {
        let ms = moves(&[
            "e4", "Nf6", "e5", "d5", "exd6", "Qxd6", "Nf3", "Bg4", "Be2", "Nc6", "O-O", "O-O-O",
        ]);
        let t = MoveText::render(&Chess::default(), &ms, turkish(), GameResult::Draw).unwrap();
        assert_eq!(
            t.to_text(),
            "1. e4 Af6 2. e5 d5 3. exd6 e.p. Vxd6 4. Af3 Fg4 5. Fe2 Ac6 6. 0-0 0-0-0 1/2-1/2"
        );
        assert_eq!(t.plies(), 12);
        let e = MoveText::render(&Chess::default(), &ms, english(), GameResult::Draw).unwrap();
        assert!(e.to_text().starts_with("1. e4 Nf6 2. e5 d5 3. exd6 Qxd6"));
    }

    #[test]
    fn render_rejects_illegal_moves() {
        let mut ms = moves(&["e4", "e5"]);
        ms.push(ms[0]);
        let err = MoveText::render(&Chess::default(), &ms, turkish(), GameResult::Unknown);
        assert_eq!(err, Err(IllegalMoveError { ply_index: 2 }));
    }

    #[test]
    fn no_noise_is_the_identity() {
        let mut rng = SplitMix64::new(3);
        let g = random_game(&mut rng, 80);
        let t = MoveText::render(&Chess::default(), &g, turkish(), GameResult::Unknown).unwrap();
        let n = corrupt(&t, &NoiseConfig::new(0.0, 0.0).unwrap(), &mut rng);
        assert_eq!(n.text, t.to_text());
        assert_eq!(n.corrupted, 0);
        assert_eq!(n.events.total(), 0);
        assert!(n.dropped.is_empty());
    }

    #[test]
    fn same_seed_same_text_other_seed_other_text() {
        let g = random_game(&mut SplitMix64::new(11), 100);
        let t = MoveText::render(&Chess::default(), &g, turkish(), GameResult::Unknown).unwrap();
        let cfg = NoiseConfig::new(0.1, 0.02).unwrap();
        let a = corrupt(&t, &cfg, &mut SplitMix64::new(42));
        let b = corrupt(&t, &cfg, &mut SplitMix64::new(42));
        let c = corrupt(&t, &cfg, &mut SplitMix64::new(43));
        assert_eq!(a, b);
        assert_ne!(a.text, c.text);
    }

    #[test]
    fn realised_rate_matches_requested_rate() {
        let mut games = SplitMix64::new(5);
        let texts: Vec<MoveText> = (0..150)
            .map(|_| {
                let g = random_game(&mut games, 90);
                MoveText::render(&Chess::default(), &g, turkish(), GameResult::Unknown).unwrap()
            })
            .collect();
        for rate in [0.02, 0.05, 0.10, 0.25] {
            let cfg = NoiseConfig::new(rate, 0.0).unwrap();
            let mut rng = SplitMix64::new(derive_seed(&[9, rate.to_bits()]));
            let (mut chars, mut hit, mut events) = (0, 0, 0);
            for t in &texts {
                let n = corrupt(t, &cfg, &mut rng);
                chars += n.chars;
                hit += n.corrupted;
                events += n.events.total();
                assert!(n.text.ends_with('*'));
            }
            assert_eq!(hit, events);
            let realised = hit as f64 / chars as f64;
            // ~50k characters: the binomial standard deviation is below 0.002.
            assert!(
                (realised - rate).abs() < 0.006,
                "rate {rate}: realised {realised} over {chars} chars"
            );
        }
    }

    #[test]
    fn drop_rate_matches_and_keeps_move_numbers() {
        let mut games = SplitMix64::new(8);
        let cfg = NoiseConfig::new(0.0, 0.05).unwrap();
        let mut rng = SplitMix64::new(1);
        let (mut plies, mut dropped) = (0usize, 0usize);
        for _ in 0..100 {
            let g = random_game(&mut games, 80);
            let t =
                MoveText::render(&Chess::default(), &g, turkish(), GameResult::Unknown).unwrap();
            let n = corrupt(&t, &cfg, &mut rng);
            plies += t.plies();
            dropped += n.dropped.len();
            // Without character noise the text is the clean one minus the dropped plies.
            let words: Vec<&str> = n.text.split(' ').collect();
            let numbers = t
                .units
                .iter()
                .filter(|u| matches!(u, Unit::Number { .. }))
                .count();
            // `e.p.` adds a word to its ply.
            let ep = t
                .units
                .iter()
                .filter(|u| matches!(u, Unit::Ply { index, text } if text.ends_with("e.p.") && !n.dropped.contains(index)))
                .count();
            assert_eq!(words.len(), numbers + t.plies() - n.dropped.len() + ep + 1);
        }
        let r = dropped as f64 / plies as f64;
        assert!((r - 0.05).abs() < 0.01, "drop rate {r}");
    }

    #[test]
    fn look_alike_tables_are_clean() {
        let all = "0123456789abcdefghiloxŞşSVKFAEPQRBNDTLCOXI+#-.=";
        for c in all.chars() {
            for s in look_alikes(c) {
                assert!(!s.is_empty());
                assert_ne!(*s, c.to_string(), "{c}");
                assert!(
                    !s.chars()
                        .any(|x| x.is_whitespace() || "{}()[];".contains(x)),
                    "{c} -> {s}"
                );
            }
        }
        for c in JUNK.iter().chain(RANDOM) {
            assert!(!"{}()[]; ".contains(*c));
        }
    }

    #[test]
    fn every_event_kind_occurs_at_high_rate() {
        let g = random_game(&mut SplitMix64::new(2), 200);
        let t = MoveText::render(&Chess::default(), &g, turkish(), GameResult::Unknown).unwrap();
        let mut total = EventCounts::default();
        let mut rng = SplitMix64::new(77);
        for _ in 0..10 {
            let n = corrupt(&t, &NoiseConfig::new(0.3, 0.0).unwrap(), &mut rng);
            total.add(&n.events);
        }
        for (name, v) in [
            ("look_alike", total.look_alike),
            ("random", total.random),
            ("deleted", total.deleted),
            ("junk", total.junk),
            ("case_flip", total.case_flip),
            ("split", total.split),
            ("merged", total.merged),
        ] {
            assert!(v > 0, "{name} never happened");
        }
        assert!(total.look_alike > total.random);
    }

    #[test]
    fn config_guards_its_range() {
        assert!(NoiseConfig::new(0.05, 0.005).is_some());
        assert!(NoiseConfig::new(-0.1, 0.0).is_none());
        assert!(NoiseConfig::new(0.1, 1.5).is_none());
        assert!(NoiseConfig::new(f64::NAN, 0.0).is_none());
    }

    #[test]
    fn derived_seeds_differ() {
        let a = derive_seed(&[1, 2, str_seed("a.pgn"), 0]);
        let b = derive_seed(&[1, 2, str_seed("a.pgn"), 1]);
        let c = derive_seed(&[1, 2, str_seed("b.pgn"), 0]);
        assert!(a != b && a != c && b != c);
        assert_eq!(a, derive_seed(&[1, 2, str_seed("a.pgn"), 0]));
    }
}
