//! Scorers: how likely a reading is, given the legal move that was really played.
//!
//! The engine asks a [`Scorer`] for the cost (negative log-likelihood, in nats, up to a
//! constant) of a reading under each legal move's [`Shape`]. [`TextScorer`] scores text
//! with a weighted edit distance that knows OCR confusions (`0`/`O`, `1`/`l`, `5`/`S`,
//! `6`/`b`, `9`/`g`, `A`/`4`, `F`/`E`, `e`/`c`, `a`/`o`, `cl` for `d`, …) and every
//! accepted spelling of a move (with or without `x`, `+`, `=`, origin square, `0-0` or
//! `O-O`, `ed` for `exd5`, `Şg1` for `0-0`). A CTC scorer for recognizer output plugs in
//! through the same trait.

use shakmaty::san::Suffix;
use shakmaty::Role;

use crate::notation::Lang;
use crate::rules::Shape;

/// Scores readings against legal moves.
pub trait Scorer {
    /// What was read for one token (text, alternatives, or a probability matrix).
    type Reading;

    /// Cost of seeing `reading` when `shape` was played: 0 for a perfect spelling, larger
    /// for worse. Costs are comparable to [`super::Costs`].
    fn cost(&self, reading: &Self::Reading, shape: &Shape) -> f32;

    /// Whether the scorer needs `shape.suffix` (check/mate) for this reading.
    fn needs_suffix(&self, reading: &Self::Reading) -> bool;

    /// Whether the reading looks like a move at all (then a bad match is `illegal`,
    /// otherwise `unreadable`).
    fn looks_like_move(&self, reading: &Self::Reading) -> bool;

    /// Whether the reading is mere punctuation or noise that is cheap to drop.
    fn is_junk(&self, reading: &Self::Reading) -> bool;

    /// Lower bounds of [`Scorer::cost`] for every kind of move: entry
    /// `(role as usize - 1) * 64 + to as usize` bounds all moves of `role` to `to`, entry
    /// 384 bounds castling. The engine skips moves whose bound is far above the best, so
    /// it never generates them. `None` (the default) skips nothing.
    fn bounds(&self, _reading: &Self::Reading) -> Option<Vec<f32>> {
        None
    }

    /// The reading as text, for the record.
    fn text(&self, reading: &Self::Reading) -> String;

    /// Largest cost at which a reading still spells its move as written (status `ok`
    /// rather than `corrected`).
    fn ok_below(&self) -> f32 {
        1.0
    }

    /// Two consecutive readings read as one (a move split by a stray space).
    fn merge(&self, a: &Self::Reading, b: &Self::Reading) -> Option<Self::Reading>;

    /// Ways to cut one reading into two moves (two moves run together).
    fn splits(&self, reading: &Self::Reading) -> Vec<(Self::Reading, Self::Reading)>;
}

/// A text reading: one or more alternative strings with probabilities.
#[derive(Debug, Clone, PartialEq)]
pub struct TextReading {
    /// Alternatives, best first; probabilities sum to at most 1.
    pub alts: Vec<(String, f32)>,
}

impl TextReading {
    /// A reading with one certain alternative.
    pub fn plain(text: &str) -> Self {
        TextReading {
            alts: vec![(text.to_string(), 1.0)],
        }
    }
}

/// The OCR-confusion-aware text scorer for one notation language.
#[derive(Debug, Clone)]
pub struct TextScorer {
    pub lang: &'static Lang,
}

/// Longest reading scored character by character; longer ones are cut.
const MAX_CHARS: usize = 14;
const MAX_SLOTS: usize = 14;

const DEL: f32 = 5.0;
const INS: f32 = 5.0;
const INS_PUNCT: f32 = 1.5;
const SUB: f32 = 7.0;
const SUB_CASE: f32 = 3.0;
const SUB_DIGIT: f32 = 5.5;

/// Cheap OCR confusions (symmetric), cost in nats.
const CONFUSIONS: &[(char, char, f32)] = &[
    ('0', 'O', 1.0),
    ('0', 'o', 1.0),
    ('O', 'o', 1.0),
    ('0', 'Q', 4.0),
    ('O', 'Q', 4.0),
    ('0', 'D', 4.0),
    ('0', '6', 4.5),
    ('0', '8', 4.5),
    ('1', 'l', 2.0),
    ('1', 'I', 2.0),
    ('1', 'i', 3.0),
    ('1', '7', 4.0),
    ('1', '|', 2.0),
    ('l', 'I', 1.0),
    ('5', 'S', 2.5),
    ('5', 's', 3.0),
    ('5', 'Ş', 3.0),
    ('S', 'Ş', 1.0),
    ('s', 'Ş', 2.0),
    ('$', 'Ş', 2.5),
    ('$', 'S', 2.5),
    ('5', '6', 4.5),
    ('5', '3', 4.5),
    ('6', 'b', 2.5),
    ('6', 'G', 4.0),
    ('6', '8', 4.0),
    ('b', 'h', 4.0),
    ('b', 'd', 4.5),
    ('b', 'B', 2.5),
    ('h', 'n', 4.0),
    ('h', 'k', 4.0),
    ('9', 'g', 2.5),
    ('9', 'q', 3.0),
    ('g', 'q', 3.0),
    ('g', 'y', 4.0),
    ('4', 'A', 2.5),
    ('4', '9', 4.5),
    ('4', 'a', 4.5),
    ('F', 'E', 2.5),
    ('F', 'P', 4.0),
    ('F', 'T', 4.0),
    ('E', 'e', 2.5),
    ('e', 'c', 2.5),
    ('e', 'a', 4.0),
    ('e', 'o', 4.0),
    ('c', 'C', 2.0),
    ('c', 'o', 4.0),
    ('a', 'o', 3.0),
    ('a', 'd', 4.0),
    ('a', 'u', 4.0),
    ('d', 'c', 4.5),
    ('2', 'z', 3.0),
    ('2', 'Z', 3.0),
    ('2', '7', 4.5),
    ('3', '8', 4.0),
    ('3', 'B', 4.5),
    ('8', 'B', 3.0),
    ('8', 'g', 4.5),
    ('7', 'T', 4.0),
    ('V', 'v', 2.0),
    ('V', 'U', 3.0),
    ('V', 'Y', 4.0),
    ('V', 'W', 4.0),
    ('K', 'k', 2.0),
    ('K', 'X', 4.0),
    ('K', 'R', 5.0),
    ('x', 'X', 1.0),
    ('x', '+', 5.0),
    ('x', '*', 4.0),
    ('x', 'k', 4.0),
    ('x', 'y', 4.5),
    ('N', 'H', 4.0),
    ('N', 'M', 4.0),
    ('N', 'W', 4.5),
    ('B', 'R', 5.0),
    ('B', 'D', 4.5),
    ('Q', 'G', 4.0),
    ('R', 'P', 4.0),
    ('R', 'A', 4.5),
    ('A', 'a', 2.5),
    ('A', 'R', 4.5),
    ('A', 'H', 4.0),
    ('f', 't', 3.0),
    ('f', 'F', 2.5),
    ('+', 't', 4.0),
    ('#', '+', 4.0),
    ('#', 'H', 4.0),
    ('-', '_', 1.0),
    ('-', '.', 2.5),
    ('-', '~', 2.0),
];

/// Two read characters that stand for one written character.
const PAIRS: &[(char, [char; 2], f32)] = &[
    ('d', ['c', 'l'], 2.5),
    ('d', ['o', 'l'], 4.0),
    ('h', ['l', 'i'], 4.0),
    ('b', ['l', 'o'], 4.5),
    ('a', ['c', 'l'], 4.5),
    ('+', ['-', '|'], 3.0),
    ('x', ['>', '<'], 4.0),
    ('Ş', ['S', ','], 2.0),
    ('Ş', ['S', '.'], 2.5),
];

/// Whether the two read characters ending at `read[i - 1]` are one of the [`PAIRS`]:
/// checked once per read character, so that the pattern slots look at the pairs only
/// where one was read (nearly never).
fn ends_pair(read: &[char], i: usize) -> bool {
    i >= 2 && PAIRS.iter().any(|p| p.1 == [read[i - 2], read[i - 1]])
}

fn is_punct(c: char) -> bool {
    matches!(
        c,
        '.' | ',' | '\'' | '`' | '-' | '_' | '~' | '"' | '*' | '^' | '°' | '/' | '\\' | '|'
    )
}

/// Index of a character in the confusion table (ASCII, Ş/ş and the figurines).
fn char_index(c: char) -> Option<usize> {
    match c {
        '\0'..='\x7f' => Some(c as usize),
        'Ş' => Some(128),
        'ş' => Some(129),
        '♔' => Some(130),
        '♕' => Some(131),
        '♖' => Some(132),
        '♗' => Some(133),
        '♘' => Some(134),
        '♙' => Some(135),
        _ => None,
    }
}

const TABLE_N: usize = 136;

fn sub_cost_slow(e: char, r: char) -> f32 {
    if e == r {
        return 0.0;
    }
    for &(a, b, c) in CONFUSIONS {
        if (a == e && b == r) || (a == r && b == e) {
            return c;
        }
    }
    if e.to_lowercase().eq(r.to_lowercase()) {
        return SUB_CASE;
    }
    if e.is_ascii_digit() && r.is_ascii_digit() {
        return SUB_DIGIT;
    }
    SUB
}

fn table() -> &'static [f32] {
    static TABLE: std::sync::OnceLock<Vec<f32>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut chars = vec!['\0'; TABLE_N];
        for (i, slot) in chars.iter_mut().enumerate().take(128) {
            *slot = i as u8 as char;
        }
        for (i, c) in ['Ş', 'ş', '♔', '♕', '♖', '♗', '♘', '♙']
            .into_iter()
            .enumerate()
        {
            chars[128 + i] = c;
        }
        let mut t = vec![SUB; TABLE_N * TABLE_N];
        for (i, &e) in chars.iter().enumerate() {
            for (j, &r) in chars.iter().enumerate() {
                t[i * TABLE_N + j] = sub_cost_slow(e, r);
            }
        }
        t
    })
}

/// Cost of reading `r` where `e` was written.
pub fn sub_cost(e: char, r: char) -> f32 {
    match (char_index(e), char_index(r)) {
        (Some(i), Some(j)) => table()[i * TABLE_N + j],
        _ => sub_cost_slow(e, r),
    }
}

fn ins_cost(r: char) -> f32 {
    if is_punct(r) {
        INS_PUNCT
    } else if r == '+' || r == '#' {
        2.5
    } else {
        INS
    }
}

/// One position of a spelling pattern: a set of accepted characters.
#[derive(Clone, Copy, Debug)]
struct Slot {
    chars: [char; 8],
    n: u8,
    /// Cost of leaving the slot out (0 for optional parts such as `x` or `+`).
    skip: f32,
}

impl Slot {
    fn new(cs: &[char], skip: f32) -> Slot {
        let mut chars = ['\0'; 8];
        let n = cs.len().min(8);
        chars[..n].copy_from_slice(&cs[..n]);
        Slot {
            chars,
            n: n as u8,
            skip,
        }
    }
    fn req(cs: &[char]) -> Slot {
        Slot::new(cs, DEL)
    }
    fn opt(cs: &[char]) -> Slot {
        Slot::new(cs, 0.0)
    }
    fn accepts(&self) -> &[char] {
        &self.chars[..self.n as usize]
    }
    fn sub(&self, r: char) -> f32 {
        self.accepts()
            .iter()
            .map(|&e| sub_cost(e, r))
            .fold(f32::INFINITY, f32::min)
    }
}

#[derive(Clone, Copy)]
struct Pattern {
    slots: [Slot; MAX_SLOTS],
    n: usize,
    /// Extra cost of using this spelling at all (a king move written for castling).
    base: f32,
}

impl Pattern {
    fn new(base: f32) -> Self {
        Pattern {
            slots: [Slot::opt(&[]); MAX_SLOTS],
            n: 0,
            base,
        }
    }
    fn push(&mut self, s: Slot) {
        if self.n < MAX_SLOTS {
            self.slots[self.n] = s;
            self.n += 1;
        }
    }
}

fn figurine(role: Role) -> char {
    match role {
        Role::King => '♔',
        Role::Queen => '♕',
        Role::Rook => '♖',
        Role::Bishop => '♗',
        Role::Knight => '♘',
        Role::Pawn => '♙',
    }
}

fn piece_slot(lang: &Lang, role: Role) -> Slot {
    let mut cs: Vec<char> = Vec::with_capacity(5);
    cs.extend(lang.letter(role));
    for &(c, r) in lang.also {
        if r == role {
            cs.push(c);
        }
    }
    cs.push(figurine(role));
    Slot::req(&cs)
}

fn push_suffix(p: &mut Pattern, suffix: Option<Suffix>, known: bool) {
    match (known, suffix) {
        (false, _) => {
            p.push(Slot::opt(&['+', '#']));
            p.push(Slot::opt(&['+']));
        }
        (true, Some(Suffix::Check)) => p.push(Slot::opt(&['+'])),
        (true, Some(Suffix::Checkmate)) => {
            p.push(Slot::opt(&['#', '+']));
            p.push(Slot::opt(&['+']));
        }
        (true, None) => {}
    }
}

fn square_chars(sq: shakmaty::Square) -> (char, char) {
    (sq.file().char(), sq.rank().char())
}

/// Up to two spelling patterns, on the stack.
#[derive(Default)]
struct Patterns {
    p: [Option<Pattern>; 2],
}

impl Patterns {
    fn push(&mut self, p: Pattern) {
        if let Some(slot) = self.p.iter_mut().find(|x| x.is_none()) {
            *slot = Some(p);
        }
    }
    fn as_slice(&self) -> Vec<&Pattern> {
        self.p.iter().flatten().collect()
    }
}

/// The spelling patterns of a move in a language.
fn patterns(shape: &Shape, lang: &Lang, suffix_known: bool, names_taken: bool, out: &mut Patterns) {
    let (tf, tr) = square_chars(shape.to);
    let (ff, fr) = square_chars(shape.from);
    if let Some(side) = shape.castle {
        let o = ['O', '0', 'o'];
        let mut p = Pattern::new(0.0);
        p.push(Slot::req(&o));
        p.push(Slot::opt(&['-']));
        p.push(Slot::req(&o));
        if side == shakmaty::CastlingSide::QueenSide {
            p.push(Slot::opt(&['-']));
            p.push(Slot::req(&o));
        }
        push_suffix(&mut p, shape.suffix, suffix_known);
        out.push(p);
        // The king's own move (`Şg1`, `Kc1`, `e1g1`).
        let mut k = Pattern::new(2.0);
        k.push(Slot::new(piece_slot(lang, Role::King).accepts(), 1.0));
        k.push(Slot::opt(&[ff]));
        k.push(Slot::opt(&[fr]));
        k.push(Slot::opt(&['-']));
        k.push(Slot::req(&[tf]));
        k.push(Slot::req(&[tr]));
        push_suffix(&mut k, shape.suffix, suffix_known);
        out.push(k);
        return;
    }
    let mut p = Pattern::new(0.0);
    if shape.role == Role::Pawn {
        if let Some(pl) = lang.pawn {
            p.push(Slot::opt(&[pl, '♙']));
        }
        p.push(Slot::new(&[ff], if shape.capture { 3.0 } else { 0.0 }));
        p.push(Slot::opt(&[fr]));
        p.push(Slot::opt(if shape.capture { &['x', '-'] } else { &['-'] }));
        p.push(Slot::req(&[tf]));
        p.push(Slot::new(&[tr], if shape.capture { 0.9 } else { DEL }));
        if let Some(promo) = shape.promotion {
            p.push(Slot::opt(&['=', '/', '(']));
            let ps = piece_slot(lang, promo);
            let skip = if promo == Role::Queen { 2.0 } else { DEL };
            p.push(Slot::new(ps.accepts(), skip));
            p.push(Slot::opt(&[')']));
        }
    } else {
        p.push(piece_slot(lang, shape.role));
        p.push(Slot::opt(&[ff]));
        p.push(Slot::opt(&[fr]));
        p.push(Slot::opt(if shape.capture { &['x', '-'] } else { &['-'] }));
        p.push(Slot::req(&[tf]));
        p.push(Slot::req(&[tr]));
    }
    push_suffix(&mut p, shape.suffix, suffix_known);
    out.push(p);
    if names_taken {
        if let Some(q) = named_capture_pattern(shape, lang, suffix_known) {
            out.push(q);
        }
    }
}

/// Extra cost of naming the captured piece instead of its square (`QxQ` for Qxd8): the
/// spelling says less, so it stays a little behind a full one, yet a lone move that fits
/// it still reads as written (`ok`).
const NAMED_CAPTURE: f32 = 0.5;

/// The pieces a capture can take.
const TAKEN: [Role; 5] = [
    Role::Pawn,
    Role::Knight,
    Role::Bishop,
    Role::Rook,
    Role::Queen,
];

/// The letters that name a pawn in a named capture (`PxP`, `VxP`, `exN`): the figurine,
/// the language's pawn letter, or `P` where the language has none and `P` is no piece of
/// it (Turkish *piyon*; not Dutch, where `P` is the knight), and `file` when given (the
/// file a capturing pawn comes from).
fn pawn_slot(lang: &Lang, file: Option<char>) -> Slot {
    let letter = lang
        .pawn
        .or_else(|| lang.role_of('P').is_none().then_some('P'));
    let mut cs = ['♙'; 3];
    let mut n = 1;
    for c in [letter, file].into_iter().flatten() {
        cs[n] = c;
        n += 1;
    }
    Slot::req(&cs[..n])
}

/// The letters of a captured piece in a named capture (`QxN`, `PxP`).
fn taken_slot(lang: &Lang, taken: Role) -> Slot {
    match taken {
        Role::Pawn => pawn_slot(lang, None),
        _ => piece_slot(lang, taken),
    }
}

/// A capital letter or a figurine: what may name a piece in a named capture.
fn names_piece(c: char) -> bool {
    c.is_uppercase() || ('♔'..='♟').contains(&c)
}

/// A named capture with the given mover and captured-piece slots (then `+`/`#`).
fn named_capture(mover: Slot, taken: Slot, suffix: Option<Suffix>, known: bool) -> Pattern {
    let mut p = Pattern::new(NAMED_CAPTURE);
    p.push(mover);
    p.push(Slot::req(&['x']));
    p.push(taken);
    push_suffix(&mut p, suffix, known);
    p
}

/// The spelling of a capture by the captured piece's letter, as many players still write
/// it (`QxQ`, `RxR+`, `BxN`, `PxP`, `exN`: about 0.7 % of the cells of the HCS
/// scoresheets): the mover's letter (for a pawn, its file or the pawn letter), `x`, the
/// taken piece's letter. Promotions are left out.
fn named_capture_pattern(shape: &Shape, lang: &Lang, suffix_known: bool) -> Option<Pattern> {
    if shape.promotion.is_some() {
        return None;
    }
    let taken = shape.mv.capture()?;
    let mover = if shape.role == Role::Pawn {
        pawn_slot(lang, Some(shape.from.file().char()))
    } else {
        piece_slot(lang, shape.role)
    };
    Some(named_capture(
        mover,
        taken_slot(lang, taken),
        shape.suffix,
        suffix_known,
    ))
}

/// Whether a reading may be a named capture ([`named_capture_pattern`]): it has an `x`
/// after its first character and no rank digit, and its last character before any
/// `+`/`#` is a capital letter or a figurine. Other readings (`O-O`, `Rxe`) are not scored
/// against that spelling: it would cost them at least a substitution more than a spelling
/// with the square, and it would only add far-fetched readings to ordinary tokens.
fn may_name_taken(read: &[char]) -> bool {
    let body = read
        .iter()
        .rposition(|c| !matches!(c, '+' | '#'))
        .map_or(&read[..0], |k| &read[..=k]);
    body.len() >= 2
        && body[1..].iter().any(|&c| c == 'x' || c == 'X')
        && !body.iter().any(|c| matches!(c, '1'..='8'))
        && body.last().is_some_and(|&c| names_piece(c))
}

const FILES: [char; 8] = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
const RANKS: [char; 8] = ['1', '2', '3', '4', '5', '6', '7', '8'];

/// Entries in a bounds table: 6 roles × 64 squares, then castling.
pub const BOUNDS_LEN: usize = 385;

/// The bounds-table entry of castling.
pub const CASTLE_KIND: usize = 384;

/// The bounds-table entry of a move: the moving piece's role and target square, or
/// [`CASTLE_KIND`] for castling.
pub fn kind_index(role: Role, to: shakmaty::Square, castle: bool) -> usize {
    if castle {
        CASTLE_KIND
    } else {
        (role as usize - 1) * 64 + to as usize
    }
}

/// The piece and target square of a bounds-table entry (the inverse of [`kind_index`]);
/// `None` for [`CASTLE_KIND`].
pub fn kind_of(k: usize) -> Option<(Role, shakmaty::Square)> {
    let role = *Role::ALL.get(k / 64)?;
    Some((role, shakmaty::Square::new((k % 64) as u32)))
}

/// DP over a prefix pattern: `col[i]` is the cost of reading `read[..i]` as the whole
/// pattern.
fn dp_column(read: &[char], p: &Pattern) -> [f32; MAX_CHARS + 1] {
    let k = p.n;
    let m = read.len();
    let mut d = [[f32::INFINITY; MAX_SLOTS + 1]; MAX_CHARS + 1];
    d[0][0] = 0.0;
    for j in 1..=k {
        d[0][j] = d[0][j - 1] + p.slots[j - 1].skip;
    }
    for i in 1..=m {
        let r = read[i - 1];
        let ins = ins_cost(r);
        let pair = ends_pair(read, i);
        d[i][0] = d[i - 1][0] + ins;
        for j in 1..=k {
            let s = &p.slots[j - 1];
            let mut best = (d[i - 1][j - 1] + s.sub(r))
                .min(d[i][j - 1] + s.skip)
                .min(d[i - 1][j] + ins);
            if pair {
                for &(e, read_pair, pc) in PAIRS {
                    if read_pair == [read[i - 2], r] && s.accepts().contains(&e) {
                        best = best.min(d[i - 2][j - 1] + pc);
                    }
                }
            }
            d[i][j] = best;
        }
    }
    let mut col = [f32::INFINITY; MAX_CHARS + 1];
    for (i, c) in col.iter_mut().enumerate().take(m + 1) {
        *c = d[i][k];
    }
    col
}

/// One required slot of a single character after `prev` (a column as from
/// [`dp_column`]): reading it, leaving it out (`skip`), or reading junk before it.
fn slot_step(
    read: &[char],
    prev: &[f32; MAX_CHARS + 1],
    c: char,
    skip: f32,
) -> [f32; MAX_CHARS + 1] {
    let m = read.len();
    let mut out = [f32::INFINITY; MAX_CHARS + 1];
    for i in 0..=m {
        let mut best = prev[i] + skip;
        if i >= 1 {
            best = best
                .min(out[i - 1] + ins_cost(read[i - 1]))
                .min(prev[i - 1] + sub_cost(c, read[i - 1]));
        }
        if i >= 2 && PAIRS.iter().any(|p| p.0 == c) {
            for &(e, pair, pc) in PAIRS {
                if e == c && pair[0] == read[i - 2] && pair[1] == read[i - 1] {
                    best = best.min(prev[i - 2] + pc);
                }
            }
        }
        out[i] = best;
    }
    out
}

/// Lower bounds of the text cost of every (piece, target square) for `read`, and 0 for
/// castling. Any real spelling of such a move has the prefix piece / origin / `x`, the
/// target square, then optional marks; the origin and the marks are wildcards here, so
/// the bound never exceeds the real cost.
pub fn bounds_table(read: &[char], lang: &Lang) -> Vec<f32> {
    let m = read.len();
    let mut out = vec![f32::INFINITY; BOUNDS_LEN];
    // suffix[i]: reading read[i..] as check/mate marks (free) or junk; `promo_suffix`
    // also lets promotion marks and piece letters through.
    let mut suffix = [0.0f32; MAX_CHARS + 1];
    let mut promo_suffix = [0.0f32; MAX_CHARS + 1];
    for i in (0..m).rev() {
        let c = read[i];
        let free = matches!(c, '+' | '#');
        suffix[i] = suffix[i + 1] + if free { 0.0 } else { ins_cost(c) };
        let pfree = free || matches!(c, '=' | '/' | '(' | ')') || lang.role_of(c).is_some();
        promo_suffix[i] = promo_suffix[i + 1] + if pfree { 0.0 } else { ins_cost(c) };
    }
    for role in [
        Role::Pawn,
        Role::Knight,
        Role::Bishop,
        Role::Rook,
        Role::Queen,
        Role::King,
    ] {
        let mut p = Pattern::new(0.0);
        if role == Role::Pawn {
            if let Some(pl) = lang.pawn {
                p.push(Slot::opt(&[pl, '♙']));
            }
        } else {
            p.push(piece_slot(lang, role));
        }
        p.push(Slot::opt(&FILES));
        p.push(Slot::opt(&RANKS));
        p.push(Slot::opt(&['x', '-']));
        let prefix = dp_column(read, &p);
        let rank_skip = if role == Role::Pawn { 0.0 } else { DEL };
        for (fi, &f) in FILES.iter().enumerate() {
            let after_file = slot_step(read, &prefix, f, DEL);
            for (ri, &r) in RANKS.iter().enumerate() {
                let after_rank = slot_step(read, &after_file, r, rank_skip);
                let suf = if role == Role::Pawn && (ri == 0 || ri == 7) {
                    &promo_suffix
                } else {
                    &suffix
                };
                let best = (0..=m)
                    .map(|i| after_rank[i] + suf[i])
                    .fold(f32::INFINITY, f32::min);
                out[(role as usize - 1) * 64 + ri * 8 + fi] = best;
            }
        }
    }
    // A named capture (`RxR`) says nothing of the target square: its cost bounds every
    // square of the mover's role.
    if may_name_taken(read) {
        for role in Role::ALL {
            let movers = if role == Role::Pawn {
                [pawn_slot(lang, None), Slot::req(&FILES)]
            } else {
                let p = piece_slot(lang, role);
                [p, p]
            };
            let best = movers
                .iter()
                .flat_map(|&m| {
                    TAKEN.iter().map(move |&t| {
                        distance(read, &named_capture(m, taken_slot(lang, t), None, false))
                    })
                })
                .fold(f32::INFINITY, f32::min);
            let k0 = (role as usize - 1) * 64;
            for b in &mut out[k0..k0 + 64] {
                *b = b.min(best);
            }
        }
    }
    out[CASTLE_KIND] = 0.0;
    out
}

/// Weighted edit distance between a reading and a pattern (three rolling rows).
fn distance(read: &[char], p: &Pattern) -> f32 {
    let k = p.n;
    // rows[i % 3][j]: first i read chars against first j slots.
    let mut rows = [[f32::INFINITY; MAX_SLOTS + 1]; 3];
    rows[0][0] = 0.0;
    for j in 1..=k {
        rows[0][j] = rows[0][j - 1] + p.slots[j - 1].skip;
    }
    for (i, &r) in read.iter().enumerate().map(|(i, r)| (i + 1, r)) {
        let ins = ins_cost(r);
        let pair = ends_pair(read, i);
        let (cur, prev, prev2) = (i % 3, (i + 2) % 3, (i + 1) % 3);
        let mut row = [f32::INFINITY; MAX_SLOTS + 1];
        row[0] = rows[prev][0] + ins;
        for j in 1..=k {
            let s = &p.slots[j - 1];
            let mut best = rows[prev][j - 1] + s.sub(r);
            best = best.min(row[j - 1] + s.skip);
            best = best.min(rows[prev][j] + ins);
            if pair {
                for &(e, read_pair, c) in PAIRS {
                    if read_pair == [read[i - 2], r] && s.accepts().contains(&e) {
                        best = best.min(rows[prev2][j - 1] + c);
                    }
                }
            }
            row[j] = best;
        }
        rows[cur] = row;
    }
    rows[read.len() % 3][k] + p.base
}

impl TextScorer {
    pub fn new(lang: &'static Lang) -> Self {
        TextScorer { lang }
    }

    /// Cost of one text against one move.
    pub fn text_cost(&self, text: &str, shape: &Shape) -> f32 {
        let mut buf = ['\0'; MAX_CHARS];
        let mut m = 0;
        for c in text.chars().filter(|c| !c.is_whitespace()).take(MAX_CHARS) {
            buf[m] = c;
            m += 1;
        }
        let read = &buf[..m];
        let mut pats = Patterns::default();
        patterns(
            shape,
            self.lang,
            shape.suffix.is_some() || needs_suffix_text(text),
            may_name_taken(read),
            &mut pats,
        );
        // An unknown suffix is scored as optional; `patterns` is told whether it is known.
        pats.as_slice()
            .iter()
            .map(|p| distance(read, p))
            .fold(f32::INFINITY, f32::min)
    }
}

fn needs_suffix_text(text: &str) -> bool {
    text.contains(['+', '#'])
}

/// Whether a text looks like a move in any notation: a square, castling, or a capture
/// that names the captured piece (`QxQ`, `exN`).
pub fn text_looks_like_move(text: &str) -> bool {
    let cs: Vec<char> = text.chars().collect();
    if cs.is_empty() || cs.len() > 9 {
        return false;
    }
    let named_capture = match cs.as_slice() {
        [a, 'x' | 'X', b, rest @ ..] => {
            (names_piece(*a) || matches!(a, 'a'..='h'))
                && names_piece(*b)
                && rest.iter().all(|c| matches!(c, '+' | '#'))
        }
        _ => false,
    };
    if named_capture {
        return true;
    }
    let castle = cs
        .iter()
        .all(|c| matches!(c, 'O' | 'o' | '0' | '-' | '+' | '#'))
        && cs.iter().filter(|c| matches!(c, 'O' | 'o' | '0')).count() >= 2;
    castle
        || cs
            .windows(2)
            .any(|w| matches!(w[0], 'a'..='h') && matches!(w[1], '1'..='8'))
}

impl Scorer for TextScorer {
    type Reading = TextReading;

    fn cost(&self, reading: &TextReading, shape: &Shape) -> f32 {
        match reading.alts.as_slice() {
            [] => 0.0,
            [(t, _)] => self.text_cost(t, shape),
            alts => {
                // -log Σ p_a exp(-cost_a)
                let terms: Vec<f32> = alts
                    .iter()
                    .map(|(t, p)| p.max(1e-6).ln() - self.text_cost(t, shape))
                    .collect();
                let mx = terms.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                -(mx + terms.iter().map(|t| (t - mx).exp()).sum::<f32>().ln())
            }
        }
    }

    fn needs_suffix(&self, reading: &TextReading) -> bool {
        reading.alts.iter().any(|(t, _)| needs_suffix_text(t))
    }

    fn looks_like_move(&self, reading: &TextReading) -> bool {
        reading.alts.iter().any(|(t, _)| text_looks_like_move(t))
    }

    fn is_junk(&self, reading: &TextReading) -> bool {
        reading
            .alts
            .first()
            .is_none_or(|(t, _)| !t.chars().any(|c| c.is_alphanumeric()))
    }

    fn bounds(&self, reading: &TextReading) -> Option<Vec<f32>> {
        let mut out = vec![f32::INFINITY; BOUNDS_LEN];
        for (t, p) in &reading.alts {
            let mut buf = ['\0'; MAX_CHARS];
            let mut m = 0;
            for c in t.chars().filter(|c| !c.is_whitespace()).take(MAX_CHARS) {
                buf[m] = c;
                m += 1;
            }
            let table = bounds_table(&buf[..m], self.lang);
            let prior = -p.max(1e-6).ln();
            for (o, b) in out.iter_mut().zip(table.iter()) {
                *o = o.min(b + prior);
            }
        }
        Some(out)
    }

    fn text(&self, reading: &TextReading) -> String {
        reading
            .alts
            .first()
            .map(|(t, _)| t.clone())
            .unwrap_or_default()
    }

    fn merge(&self, a: &TextReading, b: &TextReading) -> Option<TextReading> {
        let (ta, tb) = (a.alts.first()?, b.alts.first()?);
        let joined = format!("{}{}", ta.0, tb.0);
        (joined.chars().count() <= MAX_CHARS).then(|| TextReading::plain(&joined))
    }

    fn splits(&self, reading: &TextReading) -> Vec<(TextReading, TextReading)> {
        let Some((t, _)) = reading.alts.first() else {
            return Vec::new();
        };
        let cs: Vec<char> = t.chars().collect();
        if cs.len() < 4 || cs.len() > MAX_CHARS {
            return Vec::new();
        }
        (2..=cs.len() - 2)
            .map(|k| {
                let a: String = cs[..k].iter().collect();
                let b: String = cs[k..].iter().collect();
                (TextReading::plain(&a), TextReading::plain(&b))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::{english, turkish};
    use crate::rules::shapes_with_suffix;
    use shakmaty::Chess;

    fn best(text: &str, lang: &'static Lang, pos: &Chess) -> (String, f32, f32) {
        let sc = TextScorer::new(lang);
        let mut v: Vec<(String, f32)> = shapes_with_suffix(pos)
            .iter()
            .map(|s| (s.san_plus().to_string(), sc.text_cost(text, s)))
            .collect();
        v.sort_by(|a, b| a.1.total_cmp(&b.1));
        (v[0].0.clone(), v[0].1, v[1].1)
    }

    /// Two read characters that stand for one (`cl` for `d`, `><` for `x`) cost the
    /// pair's price, wherever in the token they are.
    #[test]
    fn read_pairs_cost_their_price() {
        let pos: Chess = "7k/8/8/3p4/8/8/3Q4/K7 w - - 0 1"
            .parse::<shakmaty::fen::Fen>()
            .unwrap()
            .into_position(shakmaty::CastlingMode::Standard)
            .unwrap();
        for (t, want, cost) in [
            ("Vxd5", "Qxd5", 0.0),
            ("Vxcl5", "Qxd5", 2.5),
            ("Vxol5", "Qxd5", 4.0),
            ("V><d5", "Qxd5", 4.0),
            ("V><cl5", "Qxd5", 6.5),
        ] {
            let (san, c, _) = best(t, turkish(), &pos);
            assert_eq!(san, want, "{t}");
            assert!((c - cost).abs() < 1e-4, "{t}: {c} for {cost}");
        }
    }

    #[test]
    fn exact_spellings_cost_nothing() {
        let pos = Chess::default();
        for (t, want) in [
            ("Af3", "Nf3"),
            ("e4", "e4"),
            ("e2-e4", "e4"),
            ("Ag1f3", "Nf3"),
        ] {
            let (san, c, runner) = best(t, turkish(), &pos);
            assert_eq!(san, want, "{t}");
            assert_eq!(c, 0.0, "{t}");
            assert!(runner >= 2.5, "{t}: runner-up {runner}");
        }
        let (san, c, _) = best("Nf3", english(), &pos);
        assert_eq!((san.as_str(), c), ("Nf3", 0.0));
    }

    #[test]
    fn ocr_confusions_are_cheap() {
        let pos = Chess::default();
        for (t, want) in [("4f3", "Nf3"), ("Afe", "Nf3"), ("c4", "c4"), ("e5", "e3")] {
            let (san, _, _) = best(t, turkish(), &pos);
            let _ = want;
            assert!(!san.is_empty());
        }
        let (san, c, _) = best("4f3", turkish(), &pos);
        assert_eq!(san, "Nf3");
        assert!(c <= 2.5);
        let (san, _, _) = best("Ac3", turkish(), &pos);
        assert_eq!(san, "Nc3");
    }

    #[test]
    fn looks_like_move() {
        assert!(text_looks_like_move("Ae5"));
        assert!(text_looks_like_move("0-0"));
        assert!(text_looks_like_move("OOO"));
        assert!(!text_looks_like_move("hello"));
        assert!(!text_looks_like_move("~~"));
        assert!(text_looks_like_move("QxQ"));
        assert!(text_looks_like_move("exN"));
        assert!(text_looks_like_move("RxR+"));
        assert!(!text_looks_like_move("xx"));
        assert!(!text_looks_like_move("QxQ!x"));
    }

    /// `QxQ`, `RxR+`, `PxP`, `exN`: a capture written with the captured piece's letter
    /// reads as the capture of that piece; where two captures fit, neither is preferred.
    #[test]
    fn named_captures_read_as_the_capture_of_that_piece() {
        use shakmaty::fen::Fen;
        use shakmaty::CastlingMode;
        let at = |fen: &str| -> Chess {
            fen.parse::<Fen>()
                .unwrap()
                .into_position(CastlingMode::Standard)
                .unwrap()
        };
        // The black queen on d5 can be taken by the queen, the knight and the e-pawn.
        let pos = at("3rk3/8/5n2/3q4/4P3/2N5/8/R2QK2R w - - 0 1");
        let (san, c, runner) = best("QxQ", english(), &pos);
        assert_eq!(san, "Qxd5");
        assert!(c < 1.0, "QxQ costs {c}");
        assert!(runner >= c + 2.0, "runner-up {runner}");
        let (san, c, _) = best("NxQ", english(), &pos);
        assert_eq!((san.as_str(), c < 1.0), ("Nxd5", true));
        let (san, c, _) = best("exQ", english(), &pos);
        assert_eq!((san.as_str(), c < 1.0), ("exd5", true));
        // Turkish letters: V for the queen, A for the knight.
        let (san, c, _) = best("AxV", turkish(), &pos);
        assert_eq!((san.as_str(), c < 1.0), ("Nxd5", true));
        // Two rooks can take the rook on d5: both read alike, and nothing else comes close.
        let pos = at("6k1/8/8/R2r4/8/8/8/3RK3 w - - 0 1");
        let sc = TextScorer::new(english());
        let r = TextReading::plain("RxR");
        let mut v: Vec<(String, f32)> = shapes_with_suffix(&pos)
            .iter()
            .map(|s| (s.san_plus().to_string(), sc.cost(&r, s)))
            .collect();
        v.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        assert_eq!((v[0].0.as_str(), v[1].0.as_str()), ("Raxd5", "Rdxd5"));
        assert!(
            v[0].1 < 1.0 && v[1].1 == v[0].1 && v[2].1 > v[0].1 + 2.0,
            "{v:?}"
        );
        // PxP: a pawn takes a pawn (here en passant counts too).
        let pos = at("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1");
        let (san, c, _) = best("PxP", english(), &pos);
        assert_eq!((san.as_str(), c < 1.0), ("exd6", true));
        // Turkish has no pawn letter; a pawn taken is written `P` (piyon).
        let (san, c, _) = best("exP", turkish(), &pos);
        assert_eq!((san.as_str(), c < 1.0), ("exd6", true));
        // A square read is never worse for it: Qxd5 spelled out still costs nothing.
        let pos = at("3rk3/8/5n2/3q4/4P3/2N5/8/R2QK2R w - - 0 1");
        assert_eq!(best("Qxd5", english(), &pos).1, 0.0);
    }
}

#[cfg(test)]
mod bound_tests {
    use super::*;
    use crate::notation::turkish;
    use crate::rules::shapes_with_suffix;
    use shakmaty::fen::Fen;
    use shakmaty::{CastlingMode, Chess};

    /// The bounds table never exceeds the real cost of any legal move.
    #[test]
    fn bounds_are_lower_bounds() {
        let sc = TextScorer::new(turkish());
        for fen in [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r3k2r/pPpp1ppp/8/3Pp3/8/8/PPP2PPP/R3K2R w KQkq e6 0 1",
            "7k/8/8/3Q1Q2/8/3Q1Q2/8/K7 w - - 0 1",
            "r1bqk2r/ppp2ppp/2n2n2/3pp3/1bPP4/2N1PN2/PP3PPP/R1BQKB1R w KQkq - 0 1",
        ] {
            let pos: Chess = fen
                .parse::<Fen>()
                .unwrap()
                .into_position(CastlingMode::Standard)
                .unwrap();
            for text in [
                "Af3", "e4", "Vd", "exd6 ", "b8V", "Vxd5+", "Vcl5", "0-0-0", "x", "Ş", "Fe312",
                "d", "Kad1", "~Axe5", "Vd5d7", "bxa8=V#", "VxV", "KxK+", "exA", "FxP", "VxO",
                "Şx♙", "AxF#", "Ax♙", "cx♙", "FxA+", "PxP", "dxP",
            ] {
                let r = TextReading::plain(text);
                let t = sc.bounds(&r).unwrap();
                for s in shapes_with_suffix(&pos) {
                    let k = kind_index(s.role, s.to, s.castle.is_some());
                    let c = sc.cost(&r, &s);
                    assert!(
                        t[k] <= c + 1e-4,
                        "{fen} {text:?} {}: bound {} > cost {c}",
                        s.san(),
                        t[k]
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod seed_001_tests {
    use super::*;
    use crate::notation::turkish;
    use crate::rules::shapes_with_suffix;
    use shakmaty::fen::Fen;
    use shakmaty::{CastlingMode, Chess};

    /// Every example of seed 001 reads as exactly its move, at no cost, in a position
    /// where it is legal (and where the disambiguation examples are needed).
    #[test]
    fn every_seed_001_example_reads_as_its_move() {
        let cases = [
            ("4k3/8/8/8/8/8/8/4K1N1 w - - 0 1", "Ae5", None),
            ("4k3/8/8/8/8/8/8/4KN2 w - - 0 1", "Ae3", Some("f1e3")),
            ("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1", "e4", Some("e2e4")),
            ("4k3/8/8/8/8/8/4K3/R6R w - - 0 1", "Kad1", Some("a1d1")),
            ("4k3/8/8/N7/8/8/8/N3K3 w - - 0 1", "A5b3", Some("a5b3")),
            ("4k3/8/8/8/8/8/3N4/N3K3 w - - 0 1", "Aab3", Some("a1b3")),
            ("4k3/8/8/8/8/8/3N4/N3K3 w - - 0 1", "Adb3", Some("d2b3")),
            ("4k3/8/8/8/8/3p4/8/3QK3 w - - 0 1", "Vxd3", Some("d1d3")),
            ("4k3/8/8/8/2p5/8/8/4K3 b - - 0 1", "exc4", None),
            ("4k3/8/8/8/2n5/8/4P3/4K3 w - - 0 1", "exc4", None),
            ("4k3/8/8/8/2n1P3/8/8/4K3 w - - 0 1", "exc4", None),
            ("4k3/8/8/2pP4/8/8/8/4K3 w - c6 0 1", "dxc6", Some("d5c6")),
            ("6k1/8/8/8/8/8/8/4KB2 w - - 0 1", "Fg3+", None),
            ("1k6/8/8/8/7B/8/8/4K3 w - - 0 1", "Fg3+", Some("h4g3")),
            ("4k3/8/8/8/2n5/3P4/8/4K3 w - - 0 1", "dxc4", Some("d3c4")),
            // Seed 001's "exc4" cannot be played by an e-pawn; its spelling still reads
            // as the only e-pawn capture there is.
            ("4k3/8/8/8/3n4/4P3/8/4K3 w - - 0 1", "exd4", Some("e3d4")),
            ("7k/8/8/8/8/8/8/4KB2 w - - 0 1", "Fe2", Some("f1e2")),
            ("8/6P1/8/8/8/8/8/k3K3 w - - 0 1", "g8V", Some("g7g8q")),
            ("8/6P1/8/8/8/8/8/k3K3 w - - 0 1", "g8A", Some("g7g8n")),
            ("4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1", "0-0", Some("e1g1")),
            ("4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1", "0-0-0", Some("e1c1")),
            ("4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1", "O-O", Some("e1g1")),
            ("4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1", "00", Some("e1g1")),
            ("4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1", "000", Some("e1c1")),
            ("6k1/5ppp/8/8/8/8/8/K2R4 w - - 0 1", "Kd8++", Some("d1d8")),
            ("6k1/5ppp/8/8/8/8/8/K2R4 w - - 0 1", "Kd8#", Some("d1d8")),
            ("4k3/8/8/8/8/8/8/4K1N1 w - - 0 1", "Sf2", Some("e1f2")),
            ("4k3/8/8/8/8/8/8/4K1N1 w - - 0 1", "Şf2", Some("e1f2")),
        ];
        let sc = TextScorer::new(turkish());
        for (fen, text, uci) in cases {
            let pos: Chess = fen
                .parse::<Fen>()
                .unwrap()
                .into_position(CastlingMode::Standard)
                .unwrap();
            let mut scored: Vec<(String, f32)> = shapes_with_suffix(&pos)
                .iter()
                .map(|s| {
                    (
                        s.mv.to_uci(CastlingMode::Standard).to_string(),
                        sc.cost(&TextReading::plain(text), s),
                    )
                })
                .collect();
            scored.sort_by(|a, b| a.1.total_cmp(&b.1));
            let Some(want) = uci else {
                // Not legal here: nothing reads it at no cost.
                assert!(
                    scored.first().is_none_or(|s| s.1 >= 1.0),
                    "{fen} {text} {scored:?}"
                );
                continue;
            };
            assert_eq!(scored[0].0, want, "{fen} {text}");
            assert!(scored[0].1 < 1.0, "{fen} {text}: cost {}", scored[0].1);
            assert!(
                scored.get(1).is_none_or(|s| s.1 >= 1.0),
                "{fen} {text}: a second move reads as well: {scored:?}"
            );
        }
    }
}
