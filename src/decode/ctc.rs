//! The CTC scorer: how well a recognized cell's frame probabilities fit each legal move.
//!
//! All accepted spellings of a move (with or without `x` and `+`, `0-0` or `O-O`, `g8V` or
//! `g8=V`, `e.p.`, a trailing draw-offer `=`) form one graph of [`Slot`]s, some optional; the
//! CTC forward pass over that graph gives log P(cell | move) summed over the spellings. The
//! cost is how far that falls below the cell's own best reading, scaled by
//! [`CtcScorer::weight`] (the network is over-confident). Spellings the list does not cover (`Ngf3` for `Nf3`, `ed` for
//! `exd5`) are caught by the text scorer on the greedy reading, at a price.

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
    /// Frame probabilities (exp of the log-probabilities), for the graph forward pass.
    probs: Vec<f32>,
    /// The same cell read from another crop (zoomed on small writing); a move costs what it
    /// costs in the view it fits better.
    view: Option<Arc<CtcReading>>,
}

impl CtcReading {
    pub fn new(frames: Arc<CellFrames>) -> Self {
        let text = frames.greedy();
        let reference = ctc_logp(&frames, &encode(&text).unwrap_or_default());
        let probs = frames.logp.iter().map(|v| v.exp()).collect();
        CtcReading {
            frames,
            text,
            reference,
            probs,
            view: None,
        }
    }

    /// Adds a second view of the same cell. The surer of the two greedy readings (the
    /// likelier path) comes first and gives the text.
    pub fn add_view(&mut self, other: CtcReading) {
        let second = if other.reference > self.reference {
            std::mem::replace(self, other)
        } else {
            other
        };
        self.view = Some(Arc::new(second));
    }

    /// Probability of the greedy reading (of the surer view).
    pub fn sureness(&self) -> f32 {
        self.reference.exp()
    }

    /// Greedy readings of every view, the first one's first.
    pub fn texts(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.text.as_str()).chain(self.view.as_deref().map(|v| v.text.as_str()))
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
    let ext = |s: usize| {
        if s.is_multiple_of(2) {
            0
        } else {
            labels[s / 2]
        }
    };
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

/// One position of a move's spelling graph: the classes it may show (1-based class
/// indices; usually one) and whether it may be left out.
#[derive(Debug, Clone, Copy)]
pub struct Slot {
    classes: [u8; 2],
    n: u8,
    optional: bool,
}

impl Slot {
    fn one(c: char, optional: bool) -> Option<Slot> {
        let i = class_of(c)?;
        Some(Slot {
            classes: [i, 0],
            n: 1,
            optional,
        })
    }

    fn either(a: char, b: char, optional: bool) -> Option<Slot> {
        match (class_of(a), class_of(b)) {
            (Some(x), Some(y)) => Some(Slot {
                classes: [x, y],
                n: 2,
                optional,
            }),
            (Some(_), None) => Slot::one(a, optional),
            (None, Some(_)) => Slot::one(b, optional),
            (None, None) => None,
        }
    }

    #[inline]
    fn emit(&self, row: &[f32]) -> f32 {
        let mut p = row[self.classes[0] as usize];
        if self.n == 2 {
            p += row[self.classes[1] as usize];
        }
        p
    }

    fn same(&self, o: &Slot) -> bool {
        self.classes[..self.n as usize]
            .iter()
            .any(|c| o.classes[..o.n as usize].contains(c))
    }
}

fn class_of(c: char) -> Option<u8> {
    CELL_ALPHABET
        .chars()
        .position(|a| a == c)
        .map(|i| i as u8 + 1)
}

/// The spelling graph of a move: every accepted way of writing it (piece letter or its
/// variant, origin, optional `x`, square, optional `=` and promotion letter, optional
/// `+`/`#`/`++`, optional `e.p.`, an optional draw-offer `=`) as one sequence of slots.
pub fn slots(shape: &Shape, lang: &Lang) -> Vec<Slot> {
    let mut v: Vec<Option<Slot>> = Vec::with_capacity(12);
    match shape.castle {
        Some(side) => {
            v.push(Slot::either('O', '0', false));
            v.push(Slot::one('-', true));
            v.push(Slot::either('O', '0', false));
            if side == CastlingSide::QueenSide {
                v.push(Slot::one('-', true));
                v.push(Slot::either('O', '0', false));
            }
        }
        None => {
            if let Some(l) = lang.letter(shape.role) {
                let alt = lang
                    .also
                    .iter()
                    .find(|(_, r)| *r == shape.role)
                    .map(|(c, _)| *c);
                v.push(match alt {
                    Some(a) => Slot::either(l, a, false),
                    None => Slot::one(l, false),
                });
            }
            if shape.need_file || (shape.role == Role::Pawn && shape.capture) {
                v.push(Slot::one(shape.from.file().char(), false));
            }
            if shape.need_rank {
                v.push(Slot::one(shape.from.rank().char(), false));
            }
            if shape.capture {
                v.push(Slot::one('x', true));
            }
            v.push(Slot::one(shape.to.file().char(), false));
            v.push(Slot::one(shape.to.rank().char(), false));
            if let Some(p) = shape.promotion.and_then(|p| lang.letter(p)) {
                v.push(Slot::one('=', true));
                v.push(Slot::one(p, false));
            }
        }
    }
    match shape.suffix {
        Some(Suffix::Check) => v.push(Slot::one('+', true)),
        Some(Suffix::Checkmate) => {
            v.push(Slot::either('#', '+', true));
            v.push(Slot::one('+', true));
        }
        None => {}
    }
    if shape.en_passant {
        for c in ['e', '.', 'p', '.'] {
            v.push(Slot::one(c, true));
        }
    }
    v.push(Slot::one('=', true));
    // A letter outside the alphabet cannot be read: that slot is dropped (it costs nothing
    // here; the text fallback still sees the whole move).
    v.into_iter().flatten().collect()
}

/// log P(any spelling of the graph | frames): the CTC forward algorithm over slots that may
/// be skipped, in probability space with per-frame rescaling (no logarithms in the loop).
pub fn graph_logp(probs: &[f32], frames: usize, classes: usize, slots: &[Slot]) -> f32 {
    let n = slots.len();
    if n == 0 || frames == 0 {
        return f32::NEG_INFINITY;
    }
    // States: 2k = blank before slot k (k = 0..=n), 2k+1 = slot k.
    let s_len = 2 * n + 1;
    // must_after[k]: the first slot at or after k that is not optional (n if none).
    let mut must_after = vec![n; n + 1];
    for k in (0..n).rev() {
        must_after[k] = if slots[k].optional {
            must_after[k + 1]
        } else {
            k
        };
    }
    let mut alpha = vec![0.0f32; s_len];
    let mut next = vec![0.0f32; s_len];
    let row0 = &probs[..classes];
    alpha[0] = row0[0];
    // Slots reachable at t = 0: the first, and those after leading optional slots.
    for k in 0..=must_after[0].min(n - 1) {
        alpha[2 * k + 1] = slots[k].emit(row0);
    }
    let mut log_scale = 0.0f64;
    for t in 1..frames {
        let row = &probs[t * classes..(t + 1) * classes];
        for s in 0..s_len {
            let mut a = alpha[s];
            if s % 2 == 0 {
                // A blank: from itself or from the slot just before it.
                if s >= 1 {
                    a += alpha[s - 1];
                }
                next[s] = a * row[0];
            } else {
                let k = s / 2;
                // From the blank just before, from earlier blanks over optional slots, and
                // from earlier slots directly (over optional slots) unless the same letter.
                let mut j = k;
                loop {
                    a += alpha[2 * j];
                    if j > 0 && !slots[j - 1].same(&slots[k]) {
                        a += alpha[2 * (j - 1) + 1];
                    }
                    if j == 0 || !slots[j - 1].optional {
                        break;
                    }
                    j -= 1;
                }
                // `a` included alpha[s] (stay) once already.
                next[s] = a * slots[k].emit(row);
            }
        }
        let total: f32 = next.iter().sum();
        if total <= 0.0 {
            return f32::NEG_INFINITY;
        }
        let inv = 1.0 / total;
        for v in next.iter_mut() {
            *v *= inv;
        }
        log_scale += (total as f64).ln();
        std::mem::swap(&mut alpha, &mut next);
    }
    // End: a blank or a slot after which every slot is optional.
    let mut end = 0.0f32;
    for k in 0..=n {
        if must_after[k] == n {
            end += alpha[2 * k];
        }
        if k < n && must_after[k + 1] == n {
            end += alpha[2 * k + 1];
        }
    }
    if end <= 0.0 {
        return f32::NEG_INFINITY;
    }
    (log_scale + (end as f64).ln()) as f32
}

/// Scores CTC cell readings against legal moves in one notation language.
#[derive(Debug, Clone)]
pub struct CtcScorer {
    pub lang: &'static Lang,
    /// Scale from CTC log-likelihood ratios to the engine's nats.
    pub weight: f32,
    /// Extra price of falling back on the text scorer.
    pub text_price: f32,
    /// Largest cost still read as `ok` (see [`Scorer::ok_below`]).
    pub ok_below: f32,
    text: TextScorer,
}

impl CtcScorer {
    pub fn new(lang: &'static Lang) -> Self {
        CtcScorer {
            lang,
            weight: 0.5,
            text_price: 1.0,
            ok_below: 1.0,
            text: TextScorer::new(lang),
        }
    }
}

impl CtcScorer {
    fn cost_uncached(&self, r: &CtcReading, shape: &Shape) -> f32 {
        let own = self.view_cost(r, shape);
        match &r.view {
            Some(v) => own.min(self.view_cost(v, shape)),
            None => own,
        }
    }

    fn view_cost(&self, r: &CtcReading, shape: &Shape) -> f32 {
        let f = &r.frames;
        let lp = graph_logp(&r.probs, f.frames, f.classes, &slots(shape, self.lang));
        let mut best = if lp.is_finite() {
            self.weight * (r.reference - lp).max(0.0)
        } else {
            f32::INFINITY
        };
        if self.text_price.is_finite() {
            best = best.min(self.text.text_cost(&r.text, shape) + self.text_price);
        }
        best
    }
}

impl Scorer for CtcScorer {
    type Reading = CtcReading;

    fn cost(&self, r: &CtcReading, shape: &Shape) -> f32 {
        self.cost_uncached(r, shape)
    }

    fn ok_below(&self) -> f32 {
        self.ok_below
    }

    fn needs_suffix(&self, _r: &CtcReading) -> bool {
        true
    }

    fn looks_like_move(&self, r: &CtcReading) -> bool {
        r.texts()
            .any(|t| text_looks_like_move(t.trim_end_matches('=')))
    }

    fn is_junk(&self, r: &CtcReading) -> bool {
        r.texts().all(|t| !t.chars().any(|c| c.is_alphanumeric()))
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

    fn ok_below(&self) -> f32 {
        self.0.ok_below()
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
    use shakmaty::Chess;

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

    /// With no optional slots the graph pass is the plain CTC forward pass; optional slots
    /// add the probability of the shorter spellings.
    #[test]
    fn graph_forward_matches_plain_forward() {
        let f = frames_for("Nxf3+", 0.8);
        let probs: Vec<f32> = f.logp.iter().map(|v| v.exp()).collect();
        let fixed: Vec<Slot> = "Nxf3+"
            .chars()
            .map(|c| Slot::one(c, false).unwrap())
            .collect();
        let plain = ctc_logp(&f, &encode("Nxf3+").unwrap());
        let graph = graph_logp(&probs, f.frames, f.classes, &fixed);
        assert!((plain - graph).abs() < 1e-3, "{plain} vs {graph}");
        let mut opt = fixed.clone();
        opt[1].optional = true;
        opt[4].optional = true;
        let with_opt = graph_logp(&probs, f.frames, f.classes, &opt);
        let sum = ["Nxf3+", "Nf3+", "Nxf3", "Nf3"]
            .iter()
            .map(|s| ctc_logp(&f, &encode(s).unwrap()).exp())
            .sum::<f32>()
            .ln();
        assert!((with_opt - sum).abs() < 1e-3, "{with_opt} vs {sum}");
        // Repeated letters need a blank between them, skipped slots or not.
        let g = frames_for("e4", 0.9);
        let gp: Vec<f32> = g.logp.iter().map(|v| v.exp()).collect();
        let ee: Vec<Slot> = vec![
            Slot::one('e', false).unwrap(),
            Slot::one('x', true).unwrap(),
            Slot::one('e', false).unwrap(),
        ];
        let want = ctc_logp(&g, &encode("ee").unwrap()).exp()
            + ctc_logp(&g, &encode("exe").unwrap()).exp();
        let got = graph_logp(&gp, g.frames, g.classes, &ee).exp();
        assert!((got - want).abs() < 1e-6 + 1e-3 * want, "{got} vs {want}");
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

    /// A cell read twice (as cut and zoomed): a move costs what it costs in the view it fits
    /// better, and the surer view gives the text.
    #[test]
    fn a_move_costs_its_cost_in_the_better_view() {
        let pos = Chess::default();
        let shapes = shapes_with_suffix(&pos);
        let sc = CtcScorer::new(english());
        let cut = CtcReading::new(Arc::new(frames_for("e3", 0.6)));
        let zoom = CtcReading::new(Arc::new(frames_for("e4", 0.95)));
        let mut both = cut.clone();
        both.add_view(zoom.clone());
        assert_eq!(both.text, "e4");
        assert_eq!(both.texts().collect::<Vec<_>>(), ["e4", "e3"]);
        for sh in &shapes {
            let want = sc.cost(&cut, sh).min(sc.cost(&zoom, sh));
            let got = sc.cost(&both, sh);
            assert!(
                (got - want).abs() < 1e-6 || (got.is_infinite() && want.is_infinite()),
                "{sh:?}: {got} vs {want}"
            );
        }
        let junk = CtcReading::new(Arc::new(frames_for("-", 0.9)));
        assert!(sc.is_junk(&junk));
        let mut junk_and_move = junk.clone();
        junk_and_move.add_view(zoom);
        assert!(!sc.is_junk(&junk_and_move));
    }
}
