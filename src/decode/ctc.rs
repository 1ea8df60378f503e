//! The CTC scorer: how well a recognized cell's frame probabilities fit each legal move.
//!
//! Every accepted spelling of a move (with or without `x` and `+`, `0-0` or `O-O`, `g8V` or
//! `g8=V`, `e.p.`, a trailing draw-offer `=`) is scored by the CTC forward log-likelihood
//! under the cell's frames; the cost is how far the best spelling falls below the cell's own
//! best reading, scaled by [`CtcScorer::weight`] (the network is over-confident), plus a small
//! price for unusual spellings. Spellings the list does not cover (`Ngf3` for `Nf3`, `ed` for
//! `exd5`) are caught by the text scorer on the greedy reading, at a price.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use shakmaty::san::Suffix;
use shakmaty::{CastlingSide, Role};

use super::scorer::{text_looks_like_move, Scorer, TextScorer};
use crate::model::{CellFrames, CELL_ALPHABET};
use crate::notation::Lang;
use crate::rules::Shape;

/// One recognized cell.
#[derive(Debug, Clone)]
pub struct CtcReading {
    pub frames: Arc<CellFrames>,
    /// The greedy reading.
    pub text: String,
    /// CTC log-likelihood of `text` (the reference the costs are measured from).
    reference: f32,
    /// Cost per move (see [`shape_key`]), filled as the engine asks.
    memo: RefCell<HashMap<u64, f32>>,
}

/// What a move's cost depends on: piece, squares, disambiguation, promotion, suffix.
fn shape_key(s: &Shape) -> u64 {
    let suffix = match s.suffix {
        None => 0u64,
        Some(Suffix::Check) => 1,
        Some(Suffix::Checkmate) => 2,
    };
    (s.role as u64)
        | (s.from as u64) << 3
        | (s.to as u64) << 9
        | (s.promotion.map_or(0, |r| r as u64)) << 15
        | suffix << 18
        | (s.capture as u64) << 20
        | (s.need_file as u64) << 21
        | (s.need_rank as u64) << 22
        | (s.en_passant as u64) << 23
        | (s.castle.map_or(0, |c| c as u64 + 1)) << 24
}

impl CtcReading {
    pub fn new(frames: Arc<CellFrames>) -> Self {
        let text = frames.greedy();
        let reference = ctc_logp(&frames, &encode(&text).unwrap_or_default());
        CtcReading {
            frames,
            text,
            reference,
            memo: RefCell::new(HashMap::new()),
        }
    }

    /// CTC log-likelihood of a text (−∞ for characters outside the alphabet).
    pub fn logp(&self, text: &str) -> f32 {
        match encode(text) {
            Some(labels) => ctc_logp(&self.frames, &labels),
            None => f32::NEG_INFINITY,
        }
    }
}

/// Class indices (1-based; 0 is the blank) of a text's characters.
fn encode(text: &str) -> Option<Vec<usize>> {
    text.chars()
        .map(|c| CELL_ALPHABET.chars().position(|a| a == c).map(|i| i + 1))
        .collect()
}

#[inline]
fn logaddexp(a: f32, b: f32) -> f32 {
    if a == f32::NEG_INFINITY {
        return b;
    }
    if b == f32::NEG_INFINITY {
        return a;
    }
    let m = a.max(b);
    m + ((a - m).exp() + (b - m).exp()).ln()
}

/// log P(labels | frames) by the CTC forward algorithm.
pub fn ctc_logp(f: &CellFrames, labels: &[usize]) -> f32 {
    let t_max = f.frames;
    let s_len = 2 * labels.len() + 1;
    if t_max == 0 || labels.len() > t_max {
        return f32::NEG_INFINITY;
    }
    let ext = |s: usize| if s % 2 == 0 { 0 } else { labels[s / 2] };
    let mut alpha = vec![f32::NEG_INFINITY; s_len];
    let mut next = vec![f32::NEG_INFINITY; s_len];
    alpha[0] = f.at(0, 0);
    if s_len > 1 {
        alpha[1] = f.at(0, ext(1));
    }
    for t in 1..t_max {
        // Only states that can still reach the end matter; all are kept (lengths are tiny).
        for s in 0..s_len {
            let mut a = alpha[s];
            if s >= 1 {
                a = logaddexp(a, alpha[s - 1]);
            }
            if s >= 2 && ext(s) != 0 && ext(s) != ext(s - 2) {
                a = logaddexp(a, alpha[s - 2]);
            }
            next[s] = if a == f32::NEG_INFINITY {
                a
            } else {
                a + f.at(t, ext(s))
            };
        }
        std::mem::swap(&mut alpha, &mut next);
    }
    if s_len > 1 {
        logaddexp(alpha[s_len - 1], alpha[s_len - 2])
    } else {
        alpha[0]
    }
}

/// Scores CTC cell readings against legal moves in one notation language.
#[derive(Debug, Clone)]
pub struct CtcScorer {
    pub lang: &'static Lang,
    /// Scale from CTC log-likelihood ratios to the engine's nats.
    pub weight: f32,
    /// Extra price of falling back on the text scorer.
    pub text_price: f32,
    text: TextScorer,
    /// Tells this scorer's entries in a reading's memo from another language's.
    tag: u64,
}

impl CtcScorer {
    pub fn new(lang: &'static Lang) -> Self {
        CtcScorer {
            lang,
            weight: 0.5,
            text_price: 1.0,
            text: TextScorer::new(lang),
            tag: (crate::notation::LANGS
                .iter()
                .position(|l| std::ptr::eq(l, lang))
                .unwrap_or(63) as u64)
                << 32,
        }
    }
}

/// Every spelling of a move in a language with its price in nats.
pub fn spellings(shape: &Shape, lang: &Lang) -> Vec<(String, f32)> {
    let mut bases: Vec<(String, f32)> = Vec::new();
    match shape.castle {
        Some(side) => {
            let (o, z) = match side {
                CastlingSide::KingSide => ("O-O", "0-0"),
                CastlingSide::QueenSide => ("O-O-O", "0-0-0"),
            };
            bases.push((o.to_string(), 0.0));
            bases.push((z.to_string(), 0.0));
            bases.push((o.replace('-', ""), 1.0));
            bases.push((z.replace('-', ""), 1.0));
        }
        None => {
            let mut squares = String::new();
            if shape.need_file || (shape.role == Role::Pawn && shape.capture) {
                squares.push(shape.from.file().char());
            }
            if shape.need_rank {
                squares.push(shape.from.rank().char());
            }
            // The piece letter, and the other letters the language accepts for it
            // (`S` for `Ş`), at a small price.
            let mut heads: Vec<(String, f32)> = Vec::new();
            match lang.letter(shape.role) {
                Some(l) => {
                    heads.push((format!("{l}{squares}"), 0.0));
                    for &(c, role) in lang.also {
                        if role == shape.role {
                            heads.push((format!("{c}{squares}"), 0.3));
                        }
                    }
                }
                None => heads.push((squares, 0.0)),
            }
            let tail_sq = shape.to.to_string();
            let mut tails: Vec<(String, f32)> = Vec::new();
            match shape.promotion.and_then(|p| lang.letter(p)) {
                Some(p) => {
                    tails.push((format!("{tail_sq}={p}"), 0.0));
                    tails.push((format!("{tail_sq}{p}"), 0.0));
                }
                None => tails.push((tail_sq, 0.0)),
            }
            for (head, hp) in &heads {
                for (t, tp) in &tails {
                    if shape.capture {
                        bases.push((format!("{head}x{t}"), hp + tp));
                        bases.push((format!("{head}{t}"), hp + tp + 0.7));
                    } else {
                        bases.push((format!("{head}{t}"), hp + tp));
                    }
                }
            }
            if shape.en_passant {
                let extra: Vec<(String, f32)> = bases
                    .iter()
                    .flat_map(|(b, p)| [(format!("{b}e.p."), *p), (format!("{b}ep"), *p + 0.3)])
                    .collect();
                bases.extend(extra);
            }
        }
    }
    let mut out = Vec::with_capacity(bases.len() * 3);
    for (b, p) in bases {
        match shape.suffix {
            Some(Suffix::Check) => {
                out.push((format!("{b}+"), p));
                out.push((b.clone(), p + 0.4));
            }
            Some(Suffix::Checkmate) => {
                out.push((format!("{b}#"), p));
                out.push((format!("{b}++"), p));
                out.push((format!("{b}+"), p + 0.3));
                out.push((b.clone(), p + 0.6));
            }
            None => out.push((b.clone(), p)),
        }
    }
    let offers: Vec<(String, f32)> = out
        .iter()
        .map(|(s, p)| (format!("{s}="), p + 0.5))
        .collect();
    out.extend(offers);
    out
}

impl CtcScorer {
    fn cost_uncached(&self, r: &CtcReading, shape: &Shape) -> f32 {
        let mut best = f32::INFINITY;
        for (s, price) in spellings(shape, self.lang) {
            let lp = r.logp(&s);
            if lp.is_finite() {
                best = best.min(price + self.weight * (r.reference - lp).max(0.0));
            }
        }
        let text = self.text.text_cost(&r.text, shape) + self.text_price;
        best.min(text)
    }
}

impl Scorer for CtcScorer {
    type Reading = CtcReading;

    fn cost(&self, r: &CtcReading, shape: &Shape) -> f32 {
        let key = shape_key(shape) | self.tag;
        if let Some(&c) = r.memo.borrow().get(&key) {
            return c;
        }
        let c = self.cost_uncached(r, shape);
        r.memo.borrow_mut().insert(key, c);
        c
    }

    fn needs_suffix(&self, _r: &CtcReading) -> bool {
        true
    }

    fn looks_like_move(&self, r: &CtcReading) -> bool {
        text_looks_like_move(r.text.trim_end_matches('='))
    }

    fn is_junk(&self, r: &CtcReading) -> bool {
        !r.text.chars().any(|c| c.is_alphanumeric())
    }

    fn text(&self, r: &CtcReading) -> String {
        r.text.clone()
    }

    fn merge(&self, _a: &CtcReading, _b: &CtcReading) -> Option<CtcReading> {
        None
    }

    fn splits(&self, _r: &CtcReading) -> Vec<(CtcReading, CtcReading)> {
        Vec::new()
    }
}

/// Several readings of the same ply (the two players' copies of a game), scored together:
/// the costs of the readings that hold something add up (their likelihoods multiply).
#[derive(Debug, Clone)]
pub struct Joint<S>(pub S);

impl<S: Scorer> Scorer for Joint<S> {
    type Reading = Vec<S::Reading>;

    fn cost(&self, rs: &Vec<S::Reading>, shape: &Shape) -> f32 {
        let mut sum = 0.0;
        let mut any = false;
        for r in rs.iter().filter(|r| !self.0.is_junk(r)) {
            sum += self.0.cost(r, shape);
            any = true;
        }
        if any {
            sum
        } else {
            rs.first().map_or(0.0, |r| self.0.cost(r, shape))
        }
    }

    fn needs_suffix(&self, rs: &Vec<S::Reading>) -> bool {
        rs.iter().any(|r| self.0.needs_suffix(r))
    }

    fn looks_like_move(&self, rs: &Vec<S::Reading>) -> bool {
        rs.iter().any(|r| self.0.looks_like_move(r))
    }

    fn is_junk(&self, rs: &Vec<S::Reading>) -> bool {
        rs.iter().all(|r| self.0.is_junk(r))
    }

    fn text(&self, rs: &Vec<S::Reading>) -> String {
        let texts: Vec<String> = rs
            .iter()
            .map(|r| self.0.text(r))
            .filter(|t| !t.is_empty())
            .collect();
        let mut uniq: Vec<String> = Vec::new();
        for t in texts {
            if !uniq.contains(&t) {
                uniq.push(t);
            }
        }
        uniq.join(" / ")
    }

    fn merge(&self, _a: &Vec<S::Reading>, _b: &Vec<S::Reading>) -> Option<Vec<S::Reading>> {
        None
    }

    fn splits(&self, _r: &Vec<S::Reading>) -> Vec<(Vec<S::Reading>, Vec<S::Reading>)> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notation::{english, turkish};
    use crate::rules::shapes_with_suffix;
    use shakmaty::{Chess, Position};

    /// Frames that spell `text` with the given confidence per frame (two frames per
    /// character, a blank between).
    fn frames_for(text: &str, p: f32) -> CellFrames {
        let classes = CELL_ALPHABET.chars().count() + 1;
        let labels = encode(text).unwrap();
        let frames = 32;
        let mut logp = vec![((1.0 - p) / (classes - 1) as f32).ln(); frames * classes];
        let mut t = 0;
        let mut put = |t: usize, c: usize| logp[t * classes + c] = p.ln();
        for &l in &labels {
            put(t, 0);
            put(t + 1, l);
            put(t + 2, l);
            t += 3;
        }
        for u in t..frames {
            put(u, 0);
        }
        CellFrames {
            frames,
            classes,
            logp,
        }
    }

    #[test]
    fn forward_agrees_with_brute_force_on_a_tiny_case() {
        // Two frames, one label: paths "a_", "_a", "aa".
        let classes = CELL_ALPHABET.chars().count() + 1;
        let mut logp = vec![-10.0; 2 * classes];
        logp[0] = 0.4f32.ln();
        logp[1] = 0.5f32.ln();
        logp[classes] = 0.3f32.ln();
        logp[classes + 1] = 0.6f32.ln();
        let f = CellFrames {
            frames: 2,
            classes,
            logp,
        };
        let got = ctc_logp(&f, &[1]).exp();
        let want = 0.5 * 0.3 + 0.4 * 0.6 + 0.5 * 0.6;
        assert!((got - want).abs() < 1e-5, "{got} vs {want}");
    }

    #[test]
    fn the_written_move_costs_least() {
        let pos = Chess::default();
        let shapes = shapes_with_suffix(&pos);
        for (lang, text, want) in [
            (english(), "Nf3", "g1f3"),
            (turkish(), "Af3", "g1f3"),
            (english(), "e4", "e2e4"),
        ] {
            let r = CtcReading::new(Arc::new(frames_for(text, 0.9)));
            let sc = CtcScorer::new(lang);
            let best = shapes
                .iter()
                .min_by(|a, b| sc.cost(&r, a).total_cmp(&sc.cost(&r, b)))
                .unwrap();
            assert_eq!(
                best.mv.to_uci(shakmaty::CastlingMode::Standard).to_string(),
                want
            );
            assert!(sc.cost(&r, best) < 0.5);
        }
    }

    #[test]
    fn spellings_cover_the_usual_forms() {
        let pos: Chess = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"
            .parse::<shakmaty::fen::Fen>()
            .unwrap()
            .into_position(shakmaty::CastlingMode::Standard)
            .unwrap();
        let shapes = shapes_with_suffix(&pos);
        let nxe5 = shapes
            .iter()
            .find(|s| s.capture && s.role == Role::Knight)
            .unwrap();
        let tr: Vec<String> = spellings(nxe5, turkish())
            .into_iter()
            .map(|s| s.0)
            .collect();
        assert!(
            tr.contains(&"Axe5".to_string()) && tr.contains(&"Ae5".to_string()),
            "{tr:?}"
        );
        assert!(pos.legal_moves().len() == shapes.len());
    }
}
