//! The beam search behind [`super::decode`].
//!
//! States are (position, plies played, pending hidden plies, cost). Every input item
//! moves a state forward by one item (or two, for a move split over two tokens) through
//! one of these transitions:
//!
//! - **match**: the token is read as one legal move (status `ok` or `corrected`);
//! - **skip**: the token is stray text (kept in `Game::ignored`);
//! - **bad token**: the token stands for a ply, but no legal move is close — `illegal`
//!   when it looks like a move, `unreadable` otherwise; the ply is *pending*: which
//!   legal move was really played is decided together with the next token;
//! - **missing**: a ply left no token at all — a move number says we are behind, or the
//!   next token only makes sense one ply later; also pending;
//! - **merge / split**: two tokens read as one move, or one token as two moves.
//!
//! Pending plies are resolved by enumerating their legal moves and scoring the next
//! token in each resulting position, so a gap costs a fixed price and never shifts every
//! later move by one. Move numbers are anchors: a number that disagrees with the ply
//! count costs, a number ahead of it opens missing plies.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

use shakmaty::zobrist::Zobrist64;
use shakmaty::{Chess, EnPassantMode, Move, Position};

use super::scorer::{kind_index, kind_of, Scorer, CASTLE_KIND};
use super::{Costs, Item};
use crate::record::{GameResult, Status};
use crate::rules::{shapes, shapes_to, shapes_where, shapes_with_suffix, suffix_after, Shape};

const NONE: u32 = u32::MAX;

/// One ply as the engine decided it.
#[derive(Debug, Clone)]
pub struct PlyInfo {
    pub mv: Option<Move>,
    pub status: Status,
    /// Index of the input item read for this ply.
    pub item: Option<u32>,
    /// A second item merged into this ply.
    pub item2: Option<u32>,
    pub draw_offer: bool,
    /// What reading the token as this move cost (0 for a guessed ply).
    pub cost: f32,
}

#[derive(Debug, Clone)]
enum NodeKind {
    Ply(PlyInfo),
    Skip(u32),
}

#[derive(Debug, Clone)]
struct Node {
    parent: u32,
    kind: NodeKind,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Pending {
    status: Status,
    item: Option<u32>,
    draw_offer: bool,
}

#[derive(Debug, Clone)]
struct State {
    pos: Chess,
    /// The last move played (for the move prior).
    last: Option<Move>,
    ply: u32,
    cost: f32,
    node: u32,
    pending: Vec<Pending>,
    result: Option<GameResult>,
}

impl State {
    /// Ply index of the next ply to be written (pending plies included).
    fn next_ply(&self) -> u32 {
        self.ply + self.pending.len() as u32
    }
}

/// A successor before it is materialized.
#[derive(Debug, Clone)]
struct Child {
    /// (item index, state index) of the parent.
    from: (usize, usize),
    cost: f32,
    plies: Vec<PlyInfo>,
    pending: Option<Vec<Pending>>,
    skip: Option<u32>,
    result: Option<GameResult>,
}

/// A final hypothesis: the plies and total cost.
#[derive(Debug, Clone)]
pub struct Path {
    pub cost: f32,
    pub plies: Vec<PlyInfo>,
    pub skipped: Vec<u32>,
    pub result: Option<GameResult>,
}

/// The output of the search: final hypotheses, best first.
#[derive(Debug, Clone)]
pub struct Search {
    pub paths: Vec<Path>,
}

struct Engine<'a, S: Scorer> {
    items: &'a [Item<S::Reading>],
    scorer: &'a S,
    costs: &'a Costs,
    beam: usize,
    nodes: Vec<Node>,
    states: Vec<Vec<State>>,
    children: Vec<Vec<Child>>,
    memo: Memo,
    bounds: HashMap<u32, std::rc::Rc<Kinds>>,
    forced: &'a HashMap<u32, Move>,
    /// The first search's gate (the wider search opens recovery steps below it).
    base_gate: f32,
    /// Index of the last move item.
    last_move: Option<usize>,
    /// Per item: whether it sits between two move numbers that follow each other, inside
    /// the numbered move list ([`Costs::skip_numbered`]).
    numbered: Vec<bool>,
    /// The hinted moves of the current item ([`Wide::hints`]; empty outside wide items).
    hints: &'a [Move],
}

/// Which items sit inside the numbered move list: between a move number and the next,
/// where the next follows it (one more, or the same for a Black `N...`), give or take one
/// garbled digit (`13.` read as `18.`, `14.` as `1u.`). A token between `40.` and a `1.` or
/// `4.` (another game's text, a page's number) is outside, and so is a token that starts
/// with a digit 1–9 (`text`: the reading's text), a move number garbled (`1N.`, `5-`),
/// which no move spells.
fn numbered_items<R>(items: &[Item<R>], text: impl Fn(&R) -> String) -> Vec<bool> {
    fn follows(a: &str, b: &str) -> bool {
        let Ok(n) = a.parse::<u32>() else {
            return true;
        };
        if b == a {
            return true;
        }
        // A 1 after any number starts over (another game).
        if b == "1" {
            return false;
        }
        let want = (n + 1).to_string();
        want.len() == b.len() && want.chars().zip(b.chars()).filter(|(x, y)| x != y).count() <= 1
    }
    let mut out = vec![false; items.len()];
    let mut prev: Option<&str> = None;
    let mut since = Vec::new();
    for (i, it) in items.iter().enumerate() {
        match it {
            Item::Number { digits, .. } => {
                let inside = prev.is_some_and(|a| follows(a, digits));
                for &k in &since {
                    out[k] = inside;
                }
                since.clear();
                prev = Some(digits);
            }
            Item::Move { reading, .. }
                if text(reading).starts_with(|c: char| ('1'..='9').contains(&c)) => {}
            _ => since.push(i),
        }
    }
    out
}

/// A memo of scores: the positions in a beam share most of their legal moves, so the
/// same (reading, move spelling) pair comes up again and again.
pub type Memo = HashMap<(u32, u64), f32, BuildHasherDefault<FxHasher>>;

/// The `n`-th smallest of the values added so far (infinite until there are `n`): a
/// candidate costing more than it cannot be among the `n` cheapest.
struct Cutoff {
    n: usize,
    /// The `n` smallest values so far, as a max-heap.
    heap: std::collections::BinaryHeap<Total>,
}

/// An `f32` ordered by `total_cmp`.
#[derive(PartialEq)]
struct Total(f32);

impl Eq for Total {}

impl PartialOrd for Total {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Total {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

impl Cutoff {
    fn new(n: usize) -> Cutoff {
        Cutoff {
            n,
            heap: std::collections::BinaryHeap::with_capacity(n + 1),
        }
    }

    fn add(&mut self, v: f32) {
        if self.heap.len() < self.n {
            self.heap.push(Total(v));
        } else if self
            .heap
            .peek()
            .is_some_and(|top| v.total_cmp(&top.0).is_lt())
        {
            self.heap.pop();
            self.heap.push(Total(v));
        }
    }

    fn bound(&self) -> f32 {
        if self.heap.len() < self.n {
            return f32::INFINITY;
        }
        self.heap.peek().map_or(f32::NEG_INFINITY, |t| t.0)
    }
}

/// A small multiplicative hasher for the memo's integer keys (SipHash is overkill here).
#[derive(Default)]
pub struct FxHasher(u64);

impl Hasher for FxHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(u64::from(i));
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

fn shape_key(s: &Shape) -> u64 {
    let role = s.role as u64;
    let promo = s.promotion.map_or(0, |r| r as u64);
    let castle = s.castle.map_or(0, |c| c as u64 + 1);
    let suffix = match s.suffix {
        None => 0,
        Some(shakmaty::san::Suffix::Check) => 1,
        Some(shakmaty::san::Suffix::Checkmate) => 2,
    };
    // The captured piece too: a capture written by the piece it takes (`NxN`) costs
    // differently for the same move shape in positions where another piece stands there.
    let taken = s.mv.capture().map_or(0, |r| r as u64);
    u64::from(s.from as u8)
        | u64::from(s.to as u8) << 8
        | role << 16
        | promo << 20
        | castle << 24
        | u64::from(s.capture) << 28
        | u64::from(s.need_file) << 29
        | u64::from(s.need_rank) << 30
        | suffix << 32
        | taken << 36
}

/// Scored legal moves of a position for one reading, best first. `memo` caches scores
/// of input item `key` (pass `None` for a reading that is not an input item).
fn rank<S: Scorer>(
    scorer: &S,
    reading: &S::Reading,
    pos: &Chess,
    memo: Option<(&mut Memo, u32)>,
) -> Vec<(Shape, f32)> {
    rank_prior(scorer, reading, pos, memo, None, 0.0)
}

/// [`rank`] with the move prior added at `weight` (`last`: the move before `pos`).
fn rank_prior<S: Scorer>(
    scorer: &S,
    reading: &S::Reading,
    pos: &Chess,
    memo: Option<(&mut Memo, u32)>,
    last: Option<&Move>,
    weight: f32,
) -> Vec<(Shape, f32)> {
    let sh = if scorer.needs_suffix(reading) {
        shapes_with_suffix(pos)
    } else {
        shapes(pos)
    };
    let mut v: Vec<(Shape, f32)> = match memo {
        Some((memo, item)) => sh
            .into_iter()
            .map(|s| {
                let c = cached_cost(scorer, reading, &s, (&mut *memo, item));
                (s, c)
            })
            .collect(),
        None => sh
            .into_iter()
            .map(|s| {
                let c = scorer.cost(reading, &s);
                (s, c)
            })
            .collect(),
    };
    super::prior::add_costs(pos, last, weight, v.iter_mut().map(|(s, c)| (&s.mv, c)));
    v.sort_by(|a, b| a.1.total_cmp(&b.1));
    v
}

/// Every legal move of `pos` as the hidden ply there, with its cost: a hidden ply that
/// had a reading (`hint`: illegal or unreadable) leans a little towards moves that
/// resemble it; one without (missing) goes by the prior alone.
fn hidden_candidates<S: Scorer>(
    scorer: &S,
    memo: &mut Memo,
    c: &Costs,
    pos: &Chess,
    last: Option<&Move>,
    hint: Option<(&S::Reading, u32)>,
) -> Vec<(Move, f32)> {
    match hint {
        Some((r, k)) => rank_prior(scorer, r, pos, Some((memo, k)), last, c.prior_weight)
            .into_iter()
            .map(|(sh, x)| (sh.mv, (c.hidden_text_weight * x).min(c.hidden_text_cap)))
            .collect(),
        None => {
            let mut v: Vec<(Move, f32)> = pos.legal_moves().into_iter().map(|m| (m, 0.0)).collect();
            super::prior::add_costs(
                pos,
                last,
                c.hidden_prior_weight,
                v.iter_mut().map(|(m, x)| (&*m, x)),
            );
            v
        }
    }
}

/// The kinds of move (piece, target square) worth scoring for one item, and whether
/// castling is: those whose lower bound is within reach of the best bound.
#[derive(Debug, Clone)]
struct Kinds {
    /// Indexed like [`Scorer::bounds`]: (role - 1) * 64 + square, 384 for castling.
    /// `mask[0]`: within `reach` (for enumerating hidden plies); `mask[1]`: within
    /// `direct_reach` (for reading a token in one position).
    mask: [Vec<bool>; 2],
    /// The kinds of each mask, where there are at most [`LISTED_KINDS`].
    lists: [Option<Vec<usize>>; 2],
    /// No bounds known: score every legal move.
    all: bool,
    /// The kinds of `mask[0]` as (bound, index), cheapest first.
    cheapest: Vec<(f32, usize)>,
}

impl Kinds {
    /// A lower bound of the cost of reading the item in `pos` over the kinds of
    /// `mask[0]` ([`rank_kinds`] with `direct` false): the bound of the cheapest kind
    /// some piece of the side to move could play, ignoring pins and checks (infinite when
    /// none could, so that reading finds no move).
    fn floor(&self, pos: &Chess) -> f32 {
        if self.all {
            return 0.0;
        }
        self.cheapest
            .iter()
            .find(|&&(_, k)| could_play(pos, k))
            .map_or(f32::INFINITY, |&(b, _)| b)
    }
}

/// Masks with at most this many kinds also keep them as a list.
const LISTED_KINDS: usize = 64;

/// At most this many playable kinds: their moves are generated one kind at a time
/// ([`shapes_to`]) instead of from every legal move.
const FEW_KINDS: usize = 8;

/// The legal moves of `pos` of the given kinds (indexed like [`Scorer::bounds`]), as shapes
/// ([`shapes_to`]).
fn shapes_of_kinds(pos: &Chess, kinds: &[usize]) -> Vec<Shape> {
    shapes_to(
        pos,
        kinds.iter().filter_map(|&k| kind_of(k)),
        kinds.contains(&CASTLE_KIND),
    )
}

/// Whether the side to move in `pos` has a piece that might play a move of kind `k`
/// (indexed like [`Scorer::bounds`]): true for every kind a legal move has, and for some
/// others (pins, checks, blocked pawns and castling through check are not looked at).
fn could_play(pos: &Chess, k: usize) -> bool {
    use shakmaty::{attacks, CastlingSide, Piece, Role};
    let us = pos.turn();
    let board = pos.board();
    if k == CASTLE_KIND {
        return [CastlingSide::KingSide, CastlingSide::QueenSide]
            .into_iter()
            .any(|side| {
                pos.castles().has(us, side)
                    && (pos.castles().path(us, side) & board.occupied()).is_empty()
            });
    }
    let Some((role, to)) = kind_of(k) else {
        return false;
    };
    if board.by_color(us).contains(to) {
        return false;
    }
    let pieces = board.by_piece(Piece { color: us, role });
    match role {
        Role::Pawn => {
            let forward: i32 = if us.is_white() { 8 } else { -8 };
            let from = |steps: i32| to.offset(-forward * steps);
            let double_rank = if us.is_white() { 3 } else { 4 };
            (attacks::pawn_attacks(!us, to) & pieces).any()
                || from(1).is_some_and(|f| pieces.contains(f))
                || (to.rank() as u32 == double_rank && from(2).is_some_and(|f| pieces.contains(f)))
        }
        _ => (attacks::attacks(to, Piece { color: us, role }, board.occupied()) & pieces).any(),
    }
}

/// Like [`rank`], but only over the moves of the given kinds: for enumerating many
/// positions cheaply.
fn rank_kinds<S: Scorer>(
    scorer: &S,
    reading: &S::Reading,
    pos: &Chess,
    (memo, item): (&mut Memo, u32),
    kinds: &Kinds,
    direct: bool,
    prior: (Option<&Move>, f32),
) -> Vec<(Shape, f32)> {
    if kinds.all {
        return rank_prior(scorer, reading, pos, Some((memo, item)), prior.0, prior.1);
    }
    let mask = &kinds.mask[usize::from(direct)];
    // Few kinds that a piece could play: their moves alone are generated.
    let few = kinds.lists[usize::from(direct)].as_ref().and_then(|list| {
        let few: Vec<usize> = list
            .iter()
            .copied()
            .filter(|&k| could_play(pos, k))
            .take(FEW_KINDS + 1)
            .collect();
        (few.len() <= FEW_KINDS).then_some(few)
    });
    let mut sh = match few {
        Some(few) => shapes_of_kinds(pos, &few),
        None => shapes_where(pos, |role, to, castle| {
            mask.get(kind_index(role, to, castle.is_some()))
                .copied()
                .unwrap_or(true)
        }),
    };
    if scorer.needs_suffix(reading) {
        for s in &mut sh {
            s.suffix = suffix_after(pos, &s.mv);
        }
    }
    let mut v: Vec<(Shape, f32)> = sh
        .into_iter()
        .map(|s| {
            let c = cached_cost(scorer, reading, &s, (&mut *memo, item));
            (s, c)
        })
        .collect();
    super::prior::add_costs(pos, prior.0, prior.1, v.iter_mut().map(|(s, c)| (&s.mv, c)));
    v.sort_by(|a, b| a.1.total_cmp(&b.1));
    v
}

fn status_for(cost: f32) -> Status {
    if cost < 1.0 {
        Status::Ok
    } else {
        Status::Corrected
    }
}

/// Runs the beam search over `items` from `start`.
pub fn search<S: Scorer>(
    items: &[Item<S::Reading>],
    scorer: &S,
    costs: &Costs,
    beam: usize,
    start: &Chess,
) -> Search {
    search_forced(items, scorer, costs, beam, start, &HashMap::new())
}

/// [`search`] where the plies at the given ply indices (0-based) may only be the given
/// moves.
pub fn search_forced<S: Scorer>(
    items: &[Item<S::Reading>],
    scorer: &S,
    costs: &Costs,
    beam: usize,
    start: &Chess,
    forced: &HashMap<u32, Move>,
) -> Search {
    run(items, scorer, costs, beam, start, forced, None, None, None).0
}

/// Where a search widens: the items marked in `items` are expanded with `costs` and their
/// successors keep up to `beam` states.
#[derive(Debug, Clone, Copy)]
pub struct Wide<'a> {
    pub costs: &'a Costs,
    pub beam: usize,
    pub items: &'a [bool],
    /// Moves the first search guessed for hidden plies (missing, illegal, unreadable).
    /// At the wide items, hidden plies made only of such moves (same piece, from and to)
    /// go on besides the `max_hidden_children` best (at most [`Costs::wide_hints`]): the
    /// first search often found the right hidden moves at the wrong place, a few plies
    /// after the gap, where a later move number or an unreadable token made it open one.
    pub hints: &'a [Move],
}

/// Whether `m` is the hinted move `h` (the same piece from the same square to the same
/// square; a capture or not may differ with the time it is played).
fn same_move(m: &Move, h: &Move) -> bool {
    m.role() == h.role()
        && m.from() == h.from()
        && m.to() == h.to()
        && m.promotion() == h.promotion()
}

/// [`search_forced`], wider at the items `wide` marks.
pub fn search_wide<S: Scorer>(
    items: &[Item<S::Reading>],
    scorer: &S,
    costs: &Costs,
    beam: usize,
    start: &Chess,
    forced: &HashMap<u32, Move>,
    wide: &Wide,
) -> Search {
    search_resumed(items, scorer, costs, beam, start, forced, Some(wide), None)
}

/// What a search went through: every item's beam, and its caches. A later search of the
/// same items with the same scorer, costs, beam and start does the same work up to the
/// first item where it differs (a wider item, a forced ply), so it starts from there.
pub struct History {
    states: Vec<Vec<State>>,
    /// `nodes[..marks[i]]` are the nodes of `states[..=i]`.
    marks: Vec<usize>,
    nodes: Vec<Node>,
    /// Before item `i` is expanded, the successors already waiting for item `i + 1` (a
    /// merge of items `i - 1` and `i`).
    waiting: Vec<Vec<Child>>,
    memo: Memo,
    bounds: HashMap<u32, std::rc::Rc<Kinds>>,
}

/// [`search`], also returning its [`History`].
pub fn search_recorded<S: Scorer>(
    items: &[Item<S::Reading>],
    scorer: &S,
    costs: &Costs,
    beam: usize,
    start: &Chess,
) -> (Search, History) {
    let (s, h) = run(
        items,
        scorer,
        costs,
        beam,
        start,
        &HashMap::new(),
        None,
        None,
        None,
    );
    (s, h.expect("a recording run returns its history"))
}

/// [`search_wide`] or (with no `wide`) [`search_forced`], resumed from `history` if
/// given: the search that recorded it must have had the same items, scorer, costs, beam
/// and start, and no forced plies and no wider items.
#[allow(clippy::too_many_arguments)]
pub fn search_resumed<S: Scorer>(
    items: &[Item<S::Reading>],
    scorer: &S,
    costs: &Costs,
    beam: usize,
    start: &Chess,
    forced: &HashMap<u32, Move>,
    wide: Option<&Wide>,
    history: Option<&History>,
) -> Search {
    run(
        items, scorer, costs, beam, start, forced, None, wide, history,
    )
    .0
}

/// The first item whose expansion may differ from the recorded one: a wider item, or a
/// state reaching a forced ply.
fn resume_point(history: &History, forced: &HashMap<u32, Move>, wide: Option<&Wide>) -> usize {
    let mut r = history.states.len().saturating_sub(1);
    if let Some(w) = wide {
        if let Some(k) = w.items.iter().position(|&x| x) {
            r = r.min(k);
        }
    }
    if let Some(first) = forced.keys().min() {
        if let Some(k) = history
            .states
            .iter()
            .position(|b| b.iter().any(|s| s.next_ply() >= *first))
        {
            r = r.min(k);
        }
    }
    r
}

#[allow(clippy::too_many_arguments)]
fn run<'a, S: Scorer>(
    items: &'a [Item<S::Reading>],
    scorer: &'a S,
    costs: &'a Costs,
    beam: usize,
    start: &Chess,
    forced: &'a HashMap<u32, Move>,
    trace: Option<&mut Trace>,
    wide: Option<&Wide<'a>>,
    resume: Option<&History>,
) -> (Search, Option<History>) {
    let n = items.len();
    let mut e = Engine {
        items,
        scorer,
        costs,
        beam: beam.max(1),
        nodes: Vec::new(),
        states: Vec::with_capacity(n + 1),
        children: (0..n + 2).map(|_| Vec::new()).collect(),
        memo: Memo::default(),
        bounds: HashMap::new(),
        forced,
        base_gate: costs.gate,
        last_move: items.iter().rposition(|it| matches!(it, Item::Move { .. })),
        numbered: numbered_items(items, |r| scorer.text(r)),
        hints: &[],
    };
    let record = resume.is_none() && wide.is_none() && forced.is_empty() && trace.is_none();
    let mut marks = Vec::new();
    let mut waiting = Vec::new();
    let from = match resume {
        Some(h) => {
            let r = resume_point(h, forced, wide);
            // Only the beams of items r - 1 (parents of a merge waiting for item r + 1) and
            // r are looked at again; the earlier ones stay empty.
            let keep = r.saturating_sub(1);
            e.states.resize_with(keep, Vec::new);
            e.states.extend(h.states[keep..=r].iter().cloned());
            e.nodes.extend_from_slice(&h.nodes[..h.marks[r]]);
            if let (Some(w), Some(c)) = (h.waiting.get(r), e.children.get_mut(r + 1)) {
                c.clone_from(w);
            }
            e.memo.clone_from(&h.memo);
            e.bounds.clone_from(&h.bounds);
            r
        }
        None => {
            e.states.push(vec![State {
                pos: start.clone(),
                last: None,
                ply: 0,
                cost: 0.0,
                node: NONE,
                pending: Vec::new(),
                result: None,
            }]);
            marks.push(0);
            0
        }
    };
    for i in from..n {
        let w = wide.filter(|w| w.items.get(i).copied().unwrap_or(false));
        e.costs = w.map_or(costs, |w| w.costs);
        e.beam = w.map_or(beam, |w| w.beam).max(1);
        e.hints = w.map_or(&[], |w| w.hints);
        if record {
            waiting.push(e.children[i + 1].clone());
        }
        let count = e.states[i].len();
        for si in 0..count {
            e.expand(i, si);
        }
        let next = e.materialize(i + 1);
        e.states.push(next);
        marks.push(e.nodes.len());
    }
    e.costs = costs;
    if let Some(t) = trace {
        *t = e
            .states
            .iter()
            .map(|b| {
                b.iter()
                    .map(|s| {
                        (
                            s.pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0,
                            s.ply,
                            s.pending.len(),
                            s.cost,
                        )
                    })
                    .collect()
            })
            .collect();
    }
    let search = e.finish_paths();
    let history = record.then(|| History {
        states: std::mem::take(&mut e.states),
        marks,
        nodes: std::mem::take(&mut e.nodes),
        waiting,
        memo: std::mem::take(&mut e.memo),
        bounds: std::mem::take(&mut e.bounds),
    });
    (search, history)
}

/// Per item, the beam's states as (position hash, plies played, plies pending, cost).
pub type Trace = Vec<Vec<(u64, u32, usize, f32)>>;

/// [`search_forced`], also returning the beam after each item (for diagnostics).
#[doc(hidden)]
pub fn search_traced<S: Scorer>(
    items: &[Item<S::Reading>],
    scorer: &S,
    costs: &Costs,
    beam: usize,
    start: &Chess,
    forced: &HashMap<u32, Move>,
) -> (Search, Trace) {
    let mut t = Vec::new();
    let (s, _) = run(
        items,
        scorer,
        costs,
        beam,
        start,
        forced,
        Some(&mut t),
        None,
        None,
    );
    (s, t)
}

impl<S: Scorer> Engine<'_, S> {
    /// The move kinds worth scoring for item `k`.
    fn kinds_of(&mut self, k: u32, reading: &S::Reading) -> std::rc::Rc<Kinds> {
        if let Some(b) = self.bounds.get(&k) {
            return b.clone();
        }
        let kinds = match self.scorer.bounds(reading) {
            Some(t) => {
                let min = t.iter().copied().fold(f32::INFINITY, f32::min);
                let within = |reach: f32| t.iter().map(|b| *b <= min + reach).collect();
                let mut cheapest: Vec<(f32, usize)> = t
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| **b <= min + self.costs.reach)
                    .map(|(k, b)| (*b, k))
                    .collect();
                cheapest.sort_by(|a, b| a.0.total_cmp(&b.0));
                let mask: [Vec<bool>; 2] =
                    [within(self.costs.reach), within(self.costs.direct_reach)];
                let list = |m: &Vec<bool>| {
                    let v: Vec<usize> = (0..m.len()).filter(|&k| m[k]).collect();
                    (v.len() <= LISTED_KINDS).then_some(v)
                };
                Kinds {
                    lists: [list(&mask[0]), list(&mask[1])],
                    mask,
                    all: false,
                    cheapest,
                }
            }
            None => Kinds {
                mask: [Vec::new(), Vec::new()],
                lists: [None, None],
                all: true,
                cheapest: Vec::new(),
            },
        };
        let kinds = std::rc::Rc::new(kinds);
        self.bounds.insert(k, kinds.clone());
        kinds
    }

    fn push(&mut self, target: usize, child: Child) {
        if let Some(v) = self.children.get_mut(target) {
            v.push(child);
        }
    }

    fn materialize(&mut self, i: usize) -> Vec<State> {
        let mut kids = std::mem::take(&mut self.children[i]);
        kids.sort_by(|a, b| a.cost.total_cmp(&b.cost));
        let best = kids.first().map_or(0.0, |k| k.cost);
        let mut seen: HashSet<(u64, u32, usize, bool)> = HashSet::new();
        let mut out: Vec<State> = Vec::new();
        // The best hypothesis of each alignment (plies played, plies pending) keeps a
        // place even when cheaper variants of another alignment fill the beam: a gap's
        // price is paid at once, the price of not assuming it only later.
        let mut aligned: Vec<(u32, usize)> = Vec::new();
        let mut reserved = Vec::new();
        let mut rest = Vec::new();
        for k in kids {
            if k.cost > best + self.costs.prune {
                break;
            }
            let parent = &self.states[k.from.0][k.from.1];
            let plies = k.plies.len() as u32;
            let pend = k.pending.as_ref().map_or(parent.pending.len(), |p| p.len());
            let key = (parent.ply + plies, pend);
            if !aligned.contains(&key) && aligned.len() < 6 {
                aligned.push(key);
                reserved.push(k);
            } else {
                rest.push(k);
            }
        }
        let mut kids = reserved;
        kids.extend(rest);
        for k in kids {
            if out.len() >= self.beam {
                break;
            }
            let parent = &self.states[k.from.0][k.from.1];
            let mut s = State {
                pos: parent.pos.clone(),
                last: parent.last,
                ply: parent.ply,
                cost: k.cost,
                node: parent.node,
                pending: parent.pending.clone(),
                result: parent.result.or(k.result),
            };
            if let Some(p) = k.pending {
                s.pending = p;
            }
            if let Some(item) = k.skip {
                self.nodes.push(Node {
                    parent: s.node,
                    kind: NodeKind::Skip(item),
                });
                s.node = (self.nodes.len() - 1) as u32;
            }
            for p in k.plies {
                if let Some(m) = p.mv {
                    s.pos.play_unchecked(m);
                    s.last = Some(m);
                }
                s.ply += 1;
                self.nodes.push(Node {
                    parent: s.node,
                    kind: NodeKind::Ply(p),
                });
                s.node = (self.nodes.len() - 1) as u32;
            }
            let key = (
                s.pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0,
                s.ply,
                s.pending.len(),
                s.result.is_some(),
            );
            if seen.insert(key) {
                out.push(s);
            }
        }
        out
    }

    /// Whether state `si` of item `i` may take recovery steps (bad token, missing plies,
    /// merge, split): they are costly to expand, so only hypotheses close to the best, or
    /// among the first `recovery_top` of the beam and within `recovery_margin`, do.
    fn may_recover(&self, i: usize, si: usize, s: &State) -> bool {
        let c = self.costs;
        let best = self.states[i].first().map_or(s.cost, |b| b.cost);
        s.cost <= best + c.recovery_near
            || (si < c.recovery_top && s.cost <= best + c.recovery_margin)
    }

    fn expand(&mut self, i: usize, si: usize) {
        let s = self.states[i][si].clone();
        let from = (i, si);
        let c = self.costs;
        match &self.items[i] {
            Item::Result(r) => {
                let r = *r;
                self.push(
                    i + 1,
                    Child {
                        from,
                        cost: s.cost,
                        plies: Vec::new(),
                        pending: None,
                        skip: None,
                        result: Some(r),
                    },
                );
            }
            Item::Number { digits, black } => self.expand_number(&s, from, digits, *black),
            Item::Move {
                reading,
                draw_offer,
            } => {
                let draw = *draw_offer;
                let junk = self.scorer.is_junk(reading);
                let skip_cost = if junk {
                    c.skip_junk
                } else if self.numbered.get(i).copied().unwrap_or(false) {
                    c.skip_numbered
                } else {
                    c.skip
                };
                if s.result.is_some() {
                    let over = s.pending.is_empty() && s.pos.legal_moves().is_empty();
                    let sc = if over { c.skip_after_end } else { skip_cost };
                    self.push_skip(i, from, s.cost + sc);
                    return;
                }
                if !s.pending.is_empty() {
                    let read = self.expand_pending(&s, from, i, reading, draw);
                    let near_best = self.may_recover(i, si, &s);
                    // As for a state with nothing pending: the token is taken as bad too
                    // only when no hidden moves make it read well. At the last move token
                    // the wider search keeps that gate too: a ply still pending at the end
                    // gets its guess for free, so a legible last token taken as bad would
                    // cost less than reading it after the hidden moves it needs (`7. Fb3
                    // Ke3 8. c3` came back with c3 `illegal`).
                    let gate = if self.last_move == Some(i) {
                        c.gate.max(self.base_gate)
                    } else {
                        c.gate
                    };
                    if s.pending.len() < c.max_pending && !junk && near_best && read > gate {
                        self.push_bad(&s, from, i, reading, draw);
                    }
                    self.push_skip(i, from, s.cost + skip_cost);
                    return;
                }
                let kinds = self.kinds_of(i as u32, reading);
                let ranked = rank_kinds(
                    self.scorer,
                    reading,
                    &s.pos,
                    (&mut self.memo, i as u32),
                    &kinds,
                    true,
                    (s.last.as_ref(), c.prior_weight),
                );
                // Nothing to read here: only a finished game (mate, stalemate) has no
                // legal move at all; the move list is generated again only in that case.
                if ranked.is_empty() && s.pos.legal_moves().is_empty() {
                    self.push_skip(i, from, s.cost + c.skip_after_end);
                    return;
                }
                let best = ranked.first().map_or(f32::INFINITY, |r| r.1);
                let force = self.forced.get(&s.ply).copied();
                for (shape, cost) in ranked
                    .iter()
                    .filter(|(sh, _)| force.is_none_or(|f| f == sh.mv))
                    .take(c.max_children)
                {
                    if *cost > best + c.prune {
                        break;
                    }
                    self.push(
                        i + 1,
                        Child {
                            from,
                            cost: s.cost + cost,
                            plies: vec![PlyInfo {
                                mv: Some(shape.mv),
                                status: status_for(*cost),
                                item: Some(i as u32),
                                item2: None,
                                draw_offer: draw,
                                cost: *cost,
                            }],
                            pending: None,
                            skip: None,
                            result: None,
                        },
                    );
                }
                if best > c.gate_skip || junk {
                    self.push_skip(i, from, s.cost + skip_cost);
                }
                let near_best = self.may_recover(i, si, &s);
                if best > c.gate && !junk && near_best {
                    self.push_bad(&s, from, i, reading, draw);
                    // One ply missing just before this token.
                    let mut s1 = s.clone();
                    s1.pending.push(Pending {
                        status: Status::Missing,
                        item: None,
                        draw_offer: false,
                    });
                    s1.cost += c.missing;
                    self.expand_pending(&s1, from, i, reading, draw);
                    self.expand_merge(&s, from, i, reading, draw);
                    self.expand_split(&s, from, i, reading, draw);
                }
            }
        }
    }

    fn push_skip(&mut self, i: usize, from: (usize, usize), cost: f32) {
        self.push(
            i + 1,
            Child {
                from,
                cost,
                plies: Vec::new(),
                pending: None,
                skip: Some(i as u32),
                result: None,
            },
        );
    }

    fn push_bad(&mut self, s: &State, from: (usize, usize), i: usize, r: &S::Reading, draw: bool) {
        let movelike = self.scorer.looks_like_move(r);
        let (status, cost) = if movelike {
            (Status::Illegal, self.costs.illegal)
        } else {
            (Status::Unreadable, self.costs.unreadable)
        };
        let mut pending = s.pending.clone();
        pending.push(Pending {
            status,
            item: Some(i as u32),
            draw_offer: draw,
        });
        self.push_pending(i, from, s.cost + cost, pending);
    }

    /// A successor at item `i + 1` that only changes the pending plies.
    fn push_pending(&mut self, i: usize, from: (usize, usize), cost: f32, pending: Vec<Pending>) {
        self.push(
            i + 1,
            Child {
                from,
                cost,
                plies: Vec::new(),
                pending: Some(pending),
                skip: None,
                result: None,
            },
        );
    }

    /// Resolves the pending hidden plies of `s` by enumeration, then reads item `i`.
    ///
    /// A hidden ply that had a reading (illegal/unreadable) still leans a little towards
    /// moves that resemble it; the next move token after `i` breaks ties between
    /// hypotheses that read item `i` equally well (it only orders them, it adds no cost).
    /// Returns the cost of item `i`'s best reading after any hidden moves (infinite when
    /// there is none).
    fn expand_pending(
        &mut self,
        s: &State,
        from: (usize, usize),
        i: usize,
        reading: &S::Reading,
        draw: bool,
    ) -> f32 {
        let c = self.costs;
        // (cost so far, position, hidden moves)
        let mut seqs: Vec<(f32, Chess, Vec<Move>)> = vec![(0.0, s.pos.clone(), Vec::new())];
        for (t, pend) in s.pending.iter().enumerate() {
            let force = self.forced.get(&(s.ply + t as u32)).copied();
            let hint = pend.item.and_then(|k| match self.items.get(k as usize) {
                Some(Item::Move { reading, .. }) => Some((reading, k)),
                _ => None,
            });
            let mut next = Vec::new();
            for (cost, p, ms) in &seqs {
                let last = ms.last().or(s.last.as_ref());
                let scored = hidden_candidates(self.scorer, &mut self.memo, c, p, last, hint);
                for (m, x) in scored {
                    if force.is_some_and(|f| f != m) {
                        continue;
                    }
                    let mut q = p.clone();
                    q.play_unchecked(m);
                    let mut ms2 = ms.clone();
                    ms2.push(m);
                    next.push((cost + x, q, ms2));
                }
            }
            seqs = next;
        }
        // Each hidden sequence reads item `i` in its own position. Only the
        // `max_lookahead` cheapest readings (within `prune` of the best) go on, and a
        // reading costs at least its sequence's hidden cost (scores are never negative),
        // so sequences are read cheapest first and the rest are cut off once they cannot
        // make the cut: the same readings as reading them all, in a fraction of the time
        // (two hidden plies are ~1,000 sequences).
        let kinds = self.kinds_of(i as u32, reading);
        let force = self.forced.get(&(s.ply + s.pending.len() as u32)).copied();
        let mut order: Vec<usize> = (0..seqs.len()).collect();
        order.sort_by(|&a, &b| seqs[a].0.total_cmp(&seqs[b].0).then(a.cmp(&b)));
        // (cost, sequence, move, reading cost, rank in the sequence)
        let mut found: Vec<(f32, usize, Move, f32, usize)> = Vec::new();
        let mut cut = Cutoff::new(c.max_lookahead);
        let mut best = f32::INFINITY;
        // In wide items: which sequences are made only of hinted moves, and which the loop
        // below reads (empty elsewhere).
        let hinting = !self.hints.is_empty() && c.wide_hints > 0;
        let hinted: Vec<bool> = if hinting {
            seqs.iter().map(|q| self.all_hinted(&q.2)).collect()
        } else {
            Vec::new()
        };
        let mut was_read = vec![false; hinted.len()];
        for k in order {
            let (hc, p, ms) = &seqs[k];
            let bound = cut.bound().min(best + c.prune);
            if *hc > bound {
                break;
            }
            // Most sequences leave the token reading as badly as before them.
            if *hc + kinds.floor(p) > bound {
                continue;
            }
            if let Some(w) = was_read.get_mut(k) {
                *w = true;
            }
            let last = ms.last().or(s.last.as_ref());
            for (j, (mv, cost)) in self
                .two_readings(reading, p, last, i, &kinds, force)
                .into_iter()
                .enumerate()
            {
                let total = hc + cost;
                cut.add(total);
                best = best.min(total);
                found.push((total, k, mv, cost, j));
            }
        }
        // Hidden sequences made only of hinted moves are read even where the cut-off
        // above stopped before them.
        for k in (0..hinted.len()).filter(|&k| hinted[k] && !was_read[k]) {
            let (hc, p, ms) = &seqs[k];
            let last = ms.last().or(s.last.as_ref());
            for (j, (mv, cost)) in self
                .two_readings(reading, p, last, i, &kinds, force)
                .into_iter()
                .enumerate()
            {
                found.push((hc + cost, k, mv, cost, j));
            }
        }
        found.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)).then(a.4.cmp(&b.4)));
        let Some(best) = found.first().map(|f| f.0) else {
            return f32::INFINITY;
        };
        let read = found.iter().map(|f| f.3).fold(f32::INFINITY, f32::min);
        // The hinted readings within `prune` of the best, whatever their rank.
        let extra: Vec<(f32, usize, Move, f32, usize)> = if hinting {
            found
                .iter()
                .filter(|f| f.0 <= best + c.prune && hinted[f.1])
                .take(c.wide_hints)
                .copied()
                .collect()
        } else {
            Vec::new()
        };
        found.retain(|f| f.0 <= best + c.prune);
        found.truncate(c.max_lookahead);
        // Order by what the next move token says about each hypothesis. That adds at
        // least nothing to a hypothesis' cost, so once the cost alone is past the
        // `max_hidden_children`-th best key, no later one can make the cut.
        let next_reading = self.items[i + 1..]
            .iter()
            .enumerate()
            .find_map(|(d, it)| match it {
                Item::Move { reading, .. } => Some((reading, (i + 1 + d) as u32)),
                _ => None,
            });
        let next_kinds = next_reading.map(|(r, j)| self.kinds_of(j, r));
        let mut keyed: Vec<(f32, usize)> = Vec::with_capacity(found.len());
        let mut cut = Cutoff::new(c.max_hidden_children);
        for (n, (cost, k, mv, ..)) in found.iter().enumerate() {
            if *cost > cut.bound() {
                break;
            }
            let la = match (next_reading, &next_kinds) {
                (Some((r, j)), Some(kinds)) => {
                    let mut q = seqs[*k].1.clone();
                    q.play_unchecked(*mv);
                    if cost + kinds.floor(&q).min(c.illegal) > cut.bound() {
                        continue;
                    }
                    rank_kinds(
                        self.scorer,
                        r,
                        &q,
                        (&mut self.memo, j),
                        kinds,
                        false,
                        (Some(mv), c.prior_weight),
                    )
                    .first()
                    .map_or(c.illegal, |x| x.1.min(c.illegal))
                }
                _ => 0.0,
            };
            cut.add(cost + la);
            keyed.push((cost + la, n));
        }
        keyed.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut chosen: Vec<(f32, usize, Move, f32, usize)> = keyed
            .iter()
            .take(c.max_hidden_children)
            .map(|&(_, n)| found[n])
            .collect();
        for f in extra {
            if !chosen.iter().any(|g| g.1 == f.1 && g.2 == f.2) {
                chosen.push(f);
            }
        }
        for (cost, k, mv, mcost, _) in chosen {
            let hidden = &seqs[k].2;
            let mut plies: Vec<PlyInfo> = s
                .pending
                .iter()
                .zip(hidden)
                .map(|(p, m)| PlyInfo {
                    mv: Some(*m),
                    status: p.status,
                    item: p.item,
                    item2: None,
                    draw_offer: p.draw_offer,
                    cost: 0.0,
                })
                .collect();
            plies.push(PlyInfo {
                mv: Some(mv),
                status: status_for(mcost),
                item: Some(i as u32),
                item2: None,
                draw_offer: draw,
                cost: mcost,
            });
            self.push(
                i + 1,
                Child {
                    from,
                    cost: s.cost + cost,
                    plies,
                    pending: Some(Vec::new()),
                    skip: None,
                    result: None,
                },
            );
        }
        read
    }

    /// Whether a hidden sequence is made only of hinted moves ([`Wide::hints`]).
    fn all_hinted(&self, hidden: &[Move]) -> bool {
        !hidden.is_empty()
            && hidden
                .iter()
                .all(|m| self.hints.iter().any(|h| same_move(m, h)))
    }

    /// The two cheapest readings of item `i` in `pos` after `last` (only `force`, when
    /// given), as [`Self::expand_pending`] reads a token after hidden plies.
    fn two_readings(
        &mut self,
        reading: &S::Reading,
        pos: &Chess,
        last: Option<&Move>,
        i: usize,
        kinds: &Kinds,
        force: Option<Move>,
    ) -> Vec<(Move, f32)> {
        rank_kinds(
            self.scorer,
            reading,
            pos,
            (&mut self.memo, i as u32),
            kinds,
            false,
            (last, self.costs.prior_weight),
        )
        .into_iter()
        .filter(|(sh, _)| force.is_none_or(|f| f == sh.mv))
        .take(2)
        .map(|(sh, cost)| (sh.mv, cost))
        .collect()
    }

    fn expand_merge(
        &mut self,
        s: &State,
        from: (usize, usize),
        i: usize,
        r: &S::Reading,
        draw: bool,
    ) {
        let Some(Item::Move {
            reading: r2,
            draw_offer: d2,
        }) = self.items.get(i + 1)
        else {
            return;
        };
        let Some(joined) = self.scorer.merge(r, r2) else {
            return;
        };
        let ranked = rank(self.scorer, &joined, &s.pos, None);
        if let Some((shape, cost)) = ranked.first() {
            let status = if *cost < 0.9 {
                Status::Corrected
            } else {
                status_for(*cost)
            };
            self.push(
                i + 2,
                Child {
                    from,
                    cost: s.cost + cost + self.costs.merge,
                    plies: vec![PlyInfo {
                        mv: Some(shape.mv),
                        status,
                        item: Some(i as u32),
                        item2: Some(i as u32 + 1),
                        draw_offer: draw || *d2,
                        cost: *cost,
                    }],
                    pending: None,
                    skip: None,
                    result: None,
                },
            );
        }
    }

    fn expand_split(
        &mut self,
        s: &State,
        from: (usize, usize),
        i: usize,
        r: &S::Reading,
        draw: bool,
    ) {
        let mut best: Option<(f32, Move, Move)> = None;
        for (a, b) in self.scorer.splits(r) {
            let ra = rank(self.scorer, &a, &s.pos, None);
            for (sa, ca) in ra.iter().take(2) {
                if *ca > 3.0 {
                    break;
                }
                let mut p = s.pos.clone();
                p.play_unchecked(sa.mv);
                if let Some((sb, cb)) = rank(self.scorer, &b, &p, None).first() {
                    let total = ca + cb;
                    if best.as_ref().is_none_or(|x| total < x.0) {
                        best = Some((total, sa.mv, sb.mv));
                    }
                }
            }
        }
        if let Some((cost, m1, m2)) = best {
            let ply = |mv, d| PlyInfo {
                mv: Some(mv),
                status: Status::Corrected,
                item: Some(i as u32),
                item2: None,
                draw_offer: d,
                cost: 0.0,
            };
            self.push(
                i + 1,
                Child {
                    from,
                    cost: s.cost + cost + self.costs.split,
                    plies: vec![ply(m1, false), ply(m2, draw)],
                    pending: None,
                    skip: None,
                    result: None,
                },
            );
        }
    }

    fn expand_number(&mut self, s: &State, from: (usize, usize), digits: &str, black: bool) {
        let c = self.costs;
        let i = from.0;
        let p = s.next_ply();
        let agrees_now = number_cost(digits, p / 2 + 1) == 0.0 && black == (p % 2 == 1);
        let near_best = self.may_recover(i, from.1, s);
        // d = number of plies the number says are missing before the next token.
        for d in 0..=(c.max_pending.saturating_sub(s.pending.len())) as u32 {
            let target = p + d;
            let number = target / 2 + 1;
            let side_black = target % 2 == 1;
            let mut cost = number_cost(digits, number).min(c.number_mismatch);
            if black != side_black {
                cost += c.number_side;
            }
            if d > 0 {
                // Only open a gap when the number really says so: it disagrees with the
                // ply count and agrees with the count after the gap.
                if agrees_now || !near_best || number_cost(digits, number) > 0.5 {
                    continue;
                }
                cost += c.missing * d as f32;
            }
            let mut pending = s.pending.clone();
            for _ in 0..d {
                pending.push(Pending {
                    status: Status::Missing,
                    item: None,
                    draw_offer: false,
                });
            }
            self.push_pending(i, from, s.cost + cost, pending);
        }
    }

    /// The best guess for a hidden ply that no later move anchors: the move its reading
    /// (if any) resembles most, weighted as for any hidden ply, ties broken by the prior.
    fn guess(
        &mut self,
        pos: &Chess,
        last: Option<&Move>,
        item: Option<u32>,
        force: Option<Move>,
    ) -> Option<Move> {
        let c = self.costs;
        let reading = item.and_then(|k| match self.items.get(k as usize) {
            Some(Item::Move { reading, .. }) => Some((reading, k)),
            _ => None,
        });
        hidden_candidates(self.scorer, &mut self.memo, c, pos, last, reading)
            .into_iter()
            .filter(|(m, _)| force.is_none_or(|f| f == *m))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(m, _)| m)
    }

    /// The final hypotheses: the last beam's states with their pending plies settled.
    fn finish_paths(&mut self) -> Search {
        let n = self.items.len();
        let last = self.states[n].clone();
        let mut paths: Vec<Path> = last
            .into_iter()
            .map(|s| {
                let mut plies = Vec::new();
                let mut skipped = Vec::new();
                let mut node = s.node;
                while node != NONE {
                    let nd = &self.nodes[node as usize];
                    match &nd.kind {
                        NodeKind::Ply(p) => plies.push(p.clone()),
                        NodeKind::Skip(i) => skipped.push(*i),
                    }
                    node = nd.parent;
                }
                plies.reverse();
                skipped.reverse();
                let mut cost = s.cost;
                // Pending plies at the end: missing plies after the last reading are
                // unobservable and dropped; the others keep their status and get a best
                // guess (the reading's look-alikes, then the prior), as they would have
                // had a later move anchored them.
                let kept = s
                    .pending
                    .iter()
                    .rposition(|p| p.status != Status::Missing)
                    .map_or(0, |k| k + 1);
                cost -= self.costs.missing * (s.pending.len() - kept) as f32;
                let mut pos = (kept > 0).then(|| s.pos.clone());
                let mut last = s.last;
                for (t, p) in s.pending[..kept].iter().enumerate() {
                    let force = self.forced.get(&(s.ply + t as u32)).copied();
                    let mv = pos
                        .as_ref()
                        .and_then(|q| self.guess(q, last.as_ref(), p.item, force));
                    match (&mut pos, mv) {
                        (Some(q), Some(m)) => q.play_unchecked(m),
                        _ => pos = None,
                    }
                    last = mv;
                    plies.push(PlyInfo {
                        mv,
                        status: p.status,
                        item: p.item,
                        item2: None,
                        draw_offer: p.draw_offer,
                        cost: 0.0,
                    });
                }
                Path {
                    cost,
                    plies,
                    skipped,
                    result: s.result,
                }
            })
            .collect();
        paths.sort_by(|a, b| a.cost.total_cmp(&b.cost));
        Search { paths }
    }
}

/// The common case first: when every move token spells exactly one legal move (and no
/// other move comes close), every move number agrees with the ply count and a result
/// comes only last, the game is what it says and no search is needed. Returns `None` as
/// soon as anything is doubtful; the beam search then reads the game.
///
/// The text costs it computes go into `memo` (by item and shape, as the search keeps
/// them), for the confidences to use again ([`cached_cost`]).
pub fn clean_path<S: Scorer>(
    items: &[Item<S::Reading>],
    scorer: &S,
    start: &Chess,
    margin: f32,
    memo: &mut Memo,
) -> Option<Path> {
    let mut pos = start.clone();
    let mut plies = Vec::new();
    let mut result = None;
    for (i, it) in items.iter().enumerate() {
        if result.is_some() {
            return None;
        }
        match it {
            Item::Result(r) => result = Some(*r),
            Item::Number { digits, black } => {
                let p = plies.len() as u32;
                if number_cost(digits, p / 2 + 1) != 0.0 || *black != (p % 2 == 1) {
                    return None;
                }
            }
            Item::Move {
                reading,
                draw_offer,
            } => {
                let ranked = rank(scorer, reading, &pos, Some((&mut *memo, i as u32)));
                let (shape, cost) = ranked.first()?;
                if *cost >= 1.0 || ranked.get(1).is_some_and(|r| r.1 < cost + margin) {
                    return None;
                }
                pos.play_unchecked(shape.mv);
                plies.push(PlyInfo {
                    mv: Some(shape.mv),
                    status: Status::Ok,
                    item: Some(i as u32),
                    item2: None,
                    draw_offer: *draw_offer,
                    cost: 0.0,
                });
            }
        }
    }
    Some(Path {
        cost: 0.0,
        plies,
        skipped: Vec::new(),
        result,
    })
}

/// How well the move items from `from` on read as a game continuing from `pos`: the
/// summed cost of a greedy one-best reading of the next `window` move items (each capped
/// at `cap`). Used to choose a hidden ply's move by what follows, further than the beam's
/// one-token lookahead sees.
pub fn continuation_cost<S: Scorer>(
    items: &[Item<S::Reading>],
    scorer: &S,
    pos: &Chess,
    from: usize,
    window: usize,
    cap: f32,
    memo: &mut Memo,
) -> f32 {
    let mut q = pos.clone();
    let mut total = 0.0;
    let mut seen = 0;
    for (k, it) in items.iter().enumerate().skip(from) {
        if seen >= window {
            break;
        }
        let Item::Move { reading, .. } = it else {
            continue;
        };
        seen += 1;
        let ranked = rank(scorer, reading, &q, Some((memo, k as u32)));
        match ranked.first() {
            Some((sh, c)) if *c < cap => {
                total += c;
                q.play_unchecked(sh.mv);
            }
            _ => total += cap,
        }
        if q.legal_moves().is_empty() {
            break;
        }
    }
    total
}

/// What reading item `item` (`reading`) as `shape` costs, from `memo` when it holds it.
pub fn cached_cost<S: Scorer>(
    scorer: &S,
    reading: &S::Reading,
    shape: &Shape,
    (memo, item): (&mut Memo, u32),
) -> f32 {
    *memo
        .entry((item, shape_key(shape)))
        .or_insert_with(|| scorer.cost(reading, shape))
}

/// A fresh score memo ([`continuation_cost`], [`clean_path`], [`cached_cost`]).
pub fn new_memo() -> Memo {
    HashMap::default()
}

/// Cost of reading `digits` where the move number `n` was written: 0 when equal, cheap
/// when two consecutive numbers ran together (`910` for `9` `10`, then `n` = 10).
fn number_cost(digits: &str, n: u32) -> f32 {
    let want = n.to_string();
    if digits == want {
        return 0.0;
    }
    if digits.len() > want.len() && digits.ends_with(&want) {
        let head = &digits[..digits.len() - want.len()];
        if head.parse::<u32>().ok() == n.checked_sub(1) {
            return 0.3;
        }
    }
    // Plain edit distance on digits.
    let a: Vec<char> = digits.chars().collect();
    let b: Vec<char> = want.chars().collect();
    let mut prev: Vec<f32> = (0..=b.len()).map(|j| j as f32 * 4.0).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i as f32 * 4.0; b.len() + 1];
        for j in 1..=b.len() {
            let sub = if a[i - 1] == b[j - 1] { 0.0 } else { 4.0 };
            cur[j] = (prev[j - 1] + sub).min(prev[j] + 4.0).min(cur[j - 1] + 4.0);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seeded xorshift: each call picks an index below `n`.
    fn picker(mut rng: u64) -> impl FnMut(usize) -> usize {
        move |n| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            (rng % n as u64) as usize
        }
    }

    #[test]
    fn tokens_between_consecutive_move_numbers_are_inside_the_move_list() {
        let num = |d: &str| Item::<()>::Number {
            digits: d.into(),
            black: false,
        };
        let mv = || Item::<()>::Move {
            reading: (),
            draw_offer: false,
        };
        // head 1. a b 2. c d junk 1. e   (a second game's text after the first)
        let items = [
            mv(),
            num("1"),
            mv(),
            mv(),
            num("2"),
            mv(),
            mv(),
            mv(),
            num("1"),
            mv(),
        ];
        let got = numbered_items(&items, |_| String::new());
        assert_eq!(
            got,
            [false, false, true, true, false, false, false, false, false, false]
        );
        // One garbled digit keeps the tokens around a number inside; a page number does not.
        let items = [
            num("23"),
            mv(),
            mv(),
            num("2U"),
            mv(),
            num("29"),
            mv(),
            num("4"),
            mv(),
        ];
        assert_eq!(
            numbered_items(&items, |_| String::new()),
            [false, true, true, false, true, false, false, false, false]
        );
        // A garbled move number read as a token (`5-`) is not a ply to keep in step.
        let tok = |t: &'static str| Item::Move {
            reading: t,
            draw_offer: false,
        };
        let n = |d: &str| Item::<&str>::Number {
            digits: d.into(),
            black: false,
        };
        let items = [n("4"), tok("Af3"), tok("b6"), tok("5-"), tok("Fg2"), n("6")];
        assert_eq!(
            numbered_items(&items, |r| r.to_string()),
            [false, true, true, false, true, false]
        );
    }

    #[test]
    fn every_legal_move_is_a_kind_that_could_be_played() {
        // Every position of a few thousand random games (promotions, en passant, castling,
        // checks and pins come up): no legal move may be ruled out, or the search would
        // skip a reading it should have made.
        let mut next = picker(0x2545_f491_4f6c_dd1d);
        let mut ruled_out = 0;
        for _ in 0..2000 {
            let mut pos = Chess::default();
            for _ in 0..120 {
                let shapes = crate::rules::shapes(&pos);
                if shapes.is_empty() {
                    break;
                }
                let playable: Vec<bool> = (0..385).map(|k| could_play(&pos, k)).collect();
                for s in &shapes {
                    assert!(
                        playable[kind_index(s.role, s.to, s.castle.is_some())],
                        "{:?} in {}",
                        s.mv,
                        shakmaty::fen::Fen::from_position(&pos, EnPassantMode::Legal)
                    );
                }
                ruled_out += playable.iter().filter(|&&p| !p).count();
                pos.play_unchecked(shapes[next(shapes.len())].mv);
            }
        }
        // And it does rule out most kinds (it is worth calling).
        assert!(ruled_out > 0);
    }

    #[test]
    fn moves_generated_by_kind_are_those_of_all_legal_moves() {
        // `shapes_to` (used for a few kinds) must give exactly the shapes that filtering
        // every legal move gives, disambiguation included, on positions of random games.
        let mut next = picker(0x9e37_79b9_7f4a_7c15);
        let key = |s: &Shape| {
            (
                format!("{:?}", s.mv),
                s.san().to_string(),
                kind_index(s.role, s.to, s.castle.is_some()),
            )
        };
        let mut compared = 0;
        for _ in 0..300 {
            let mut pos = Chess::default();
            for _ in 0..150 {
                let all = crate::rules::shapes(&pos);
                if all.is_empty() {
                    break;
                }
                // The kinds of a few legal moves, a few random kinds, castling at times.
                let mut kinds = Vec::new();
                for _ in 0..3 {
                    let s = &all[next(all.len())];
                    kinds.push(kind_index(s.role, s.to, s.castle.is_some()));
                    kinds.push(next(385));
                }
                kinds.sort_unstable();
                kinds.dedup();
                let want: Vec<_> = {
                    let mut v: Vec<_> = crate::rules::shapes_where(&pos, |role, to, castle| {
                        kinds.contains(&kind_index(role, to, castle.is_some()))
                    })
                    .iter()
                    .map(key)
                    .collect();
                    v.sort();
                    v
                };
                let got: Vec<_> = {
                    let mut v: Vec<_> = shapes_of_kinds(&pos, &kinds).iter().map(key).collect();
                    v.sort();
                    v
                };
                assert_eq!(
                    got,
                    want,
                    "{}",
                    shakmaty::fen::Fen::from_position(&pos, EnPassantMode::Legal)
                );
                compared += want.len();
                pos.play_unchecked(all[next(all.len())].mv);
            }
        }
        assert!(compared > 1000);
    }

    #[test]
    fn could_play_rules_out_what_no_piece_can_reach() {
        let start = Chess::default();
        let k = |role: shakmaty::Role, sq: shakmaty::Square| kind_index(role, sq, false);
        use shakmaty::{Role, Square};
        assert!(could_play(&start, k(Role::Knight, Square::F3)));
        assert!(could_play(&start, k(Role::Pawn, Square::E4)));
        assert!(!could_play(&start, k(Role::Pawn, Square::E5)));
        assert!(!could_play(&start, k(Role::Bishop, Square::E5)));
        assert!(!could_play(&start, k(Role::Knight, Square::D2)));
        assert!(!could_play(&start, CASTLE_KIND));
    }

    #[test]
    fn cutoff_is_the_nth_smallest_so_far() {
        let mut c = Cutoff::new(3);
        assert_eq!(c.bound(), f32::INFINITY);
        for v in [5.0, 1.0, 9.0] {
            c.add(v);
        }
        assert_eq!(c.bound(), 9.0);
        c.add(2.0);
        assert_eq!(c.bound(), 5.0);
        c.add(7.0);
        assert_eq!(c.bound(), 5.0);
        c.add(0.5);
        assert_eq!(c.bound(), 2.0);
        let mut none = Cutoff::new(0);
        none.add(1.0);
        assert_eq!(none.bound(), f32::NEG_INFINITY);
    }

    /// The memo of reading costs is keyed by item and move shape; a named capture (`NxN`)
    /// costs differently for the same move taking another piece, so the taken piece is
    /// part of the key (without it, `NxN` read in one position reused the cost of the
    /// same knight move taking a pawn in another, and a game of named captures came back
    /// with two `illegal` plies).
    #[test]
    fn shape_keys_tell_apart_what_a_move_takes() {
        use shakmaty::fen::Fen;
        use shakmaty::CastlingMode;
        let key_of = |fen: &str| -> u64 {
            let pos: Chess = fen
                .parse::<Fen>()
                .unwrap()
                .into_position(CastlingMode::Standard)
                .unwrap();
            let s = crate::rules::shapes(&pos)
                .into_iter()
                .find(|s| s.from == shakmaty::Square::C6 && s.to == shakmaty::Square::D4)
                .unwrap();
            shape_key(&s)
        };
        let takes_knight = key_of("4k3/8/2n5/8/3N4/8/8/4K3 b - - 0 1");
        let takes_pawn = key_of("4k3/8/2n5/8/3P4/8/8/4K3 b - - 0 1");
        let quiet = key_of("4k3/8/2n5/8/8/8/8/4K3 b - - 0 1");
        assert_ne!(takes_knight, takes_pawn);
        assert_ne!(takes_knight, quiet);
        assert_ne!(takes_pawn, quiet);
    }

    #[test]
    fn number_costs() {
        assert_eq!(number_cost("9", 9), 0.0);
        assert_eq!(number_cost("910", 10), 0.3);
        assert!(number_cost("910", 9) >= 4.0);
        assert_eq!(number_cost("12", 13), 4.0);
    }
}
