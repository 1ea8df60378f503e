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

    /// A lower bound of [`Scorer::cost`] over every move of `role` to `to` (for castling,
    /// `castle` is set and `to` is the king's square). The engine uses it to skip
    /// hopeless moves when it enumerates hidden plies; the default, 0, skips nothing.
    fn lower_bound(
        &self,
        _reading: &Self::Reading,
        _role: Role,
        _to: shakmaty::Square,
        _castle: Option<shakmaty::CastlingSide>,
    ) -> f32 {
        0.0
    }

    /// The reading as text, for the record.
    fn text(&self, reading: &Self::Reading) -> String;

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
fn patterns(shape: &Shape, lang: &Lang, suffix_known: bool, out: &mut Patterns) {
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
}

const FILES: [char; 8] = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'];
const RANKS: [char; 8] = ['1', '2', '3', '4', '5', '6', '7', '8'];

/// A pattern no cheaper to match than any real spelling of a `role` move to `to`.
fn bound_pattern(lang: &Lang, role: Role, to: shakmaty::Square) -> Pattern {
    let (tf, tr) = square_chars(to);
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
    p.push(Slot::req(&[tf]));
    p.push(Slot::new(&[tr], if role == Role::Pawn { 0.0 } else { DEL }));
    if role == Role::Pawn && matches!(tr, '1' | '8') {
        p.push(Slot::opt(&['=', '/', '(']));
        p.push(Slot::opt(&['Q', 'R', 'B', 'N', 'V', 'K', 'F', 'A']));
        p.push(Slot::opt(&[')']));
    }
    push_suffix(&mut p, None, false);
    p
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
        let (cur, prev, prev2) = (i % 3, (i + 2) % 3, (i + 1) % 3);
        let mut row = [f32::INFINITY; MAX_SLOTS + 1];
        row[0] = rows[prev][0] + ins;
        for j in 1..=k {
            let s = &p.slots[j - 1];
            let mut best = rows[prev][j - 1] + s.sub(r);
            best = best.min(row[j - 1] + s.skip);
            best = best.min(rows[prev][j] + ins);
            if i >= 2 {
                let before = read[i - 2];
                for &(e, pair, c) in PAIRS {
                    if pair[0] == before && pair[1] == r && s.accepts().contains(&e) {
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

/// Whether a text looks like a move in any notation: a square, or castling.
pub fn text_looks_like_move(text: &str) -> bool {
    let cs: Vec<char> = text.chars().collect();
    if cs.is_empty() || cs.len() > 9 {
        return false;
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

    fn lower_bound(
        &self,
        reading: &TextReading,
        role: Role,
        to: shakmaty::Square,
        castle: Option<shakmaty::CastlingSide>,
    ) -> f32 {
        let pat = match castle {
            Some(_) => None,
            None => Some(bound_pattern(self.lang, role, to)),
        };
        reading
            .alts
            .iter()
            .map(|(t, p)| {
                let mut buf = ['\0'; MAX_CHARS];
                let mut m = 0;
                for c in t.chars().filter(|c| !c.is_whitespace()).take(MAX_CHARS) {
                    buf[m] = c;
                    m += 1;
                }
                let d = match &pat {
                    Some(pat) => distance(&buf[..m], pat),
                    // Castling has few spellings: bound it by the cheaper of them.
                    None => 0.0,
                };
                d - p.max(1e-6).ln()
            })
            .fold(f32::INFINITY, f32::min)
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
    }
}
