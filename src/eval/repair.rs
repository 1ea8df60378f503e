//! `hamle eval repair`: how well the repair engine recovers real games from noisy text.
//!
//! Input: [`RepairEvalOptions`] — PGN files or `*.moves.txt` labels (or folders of them),
//! noise levels, a ply-drop rate and a seed. Output: [`RepairEvalReport`], printable as a
//! plain-text table ([`std::fmt::Display`]) or as one JSON object ([`serde::Serialize`]).
//!
//! For every game: replay the labelled moves (a label written by hand may hold an illegal
//! move: only the prefix that replays legally is kept, and the cut is reported), write the
//! game in Turkish notation ([`MoveText::render`]), corrupt it at each noise level
//! ([`super::noise`]), run [`repair_text`] with `lang: Some(turkish())` on every game and
//! with `lang: None` (auto-detection) on every game when `auto_lang` is set, else on every
//! tenth, then compare ply by ply with the truth.
//!
//! A ply is *right* when the decoded move at that ply index is the true move, whatever its
//! status (a `missing` ply whose best guess is right counts, and is also counted apart).
//! A game is *fully right* when every true ply is right and no extra ply was decoded.
//!
//! The noisy text of a game depends only on (seed, noise level, file name, game index), so
//! the Turkish and the auto runs see the same text, and results do not depend on the
//! number of threads. Work runs on `HAMLE_EVAL_THREADS` threads (default: all cores);
//! timings are wall-clock per `repair_text` call under that load (set it to 1 for an
//! unloaded machine).
//!
//! This module reads files and measures; the CLI prints the report. The one exception is a
//! diagnostic: with `HAMLE_EVAL_DUMP` set, every game with a wrong ply goes to stderr with
//! its noisy text, the wrong plies, and whether the beam lost the true path (and where).

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use anyhow::{bail, Context};
use serde::Serialize;
use shakmaty::san::San;
use shakmaty::{Chess, Move, Position};

use super::noise::{
    corrupt, derive_seed, render_with_slips, str_seed, EventCounts, MoveText, NoiseConfig, Slip,
    SplitMix64,
};
use crate::decode::{repair_text, CalWeights, Calibration as DecodeCalibration, DecodeConfig};
use crate::notation::lexer::{lex, LexedGame, TokenKind};
use crate::notation::turkish;
use crate::record::{Evidence, Game, GameResult, Status};

/// What to evaluate and how.
#[derive(Debug, Clone, PartialEq)]
pub struct RepairEvalOptions {
    /// PGN files, `*.moves.txt` label files, or folders (their `*.pgn` and `*.moves.txt`).
    pub paths: Vec<PathBuf>,
    /// Character noise rates, one report level each (e.g. `0.05`, `0.10`).
    pub noise: Vec<f32>,
    /// Probability that a ply's text is dropped whole.
    pub drop: f32,
    /// Probability that a ply is written as a slip of the pen (a wrong move: see
    /// [`super::noise::SlipKind`]) before the character noise; the truth stays the move
    /// played. The same plies slip at every noise level.
    pub slips: f32,
    pub seed: u64,
    /// Evaluate this many games, evenly spaced over the corpus (all when `None`).
    pub games: Option<usize>,
    /// Run auto-detection (`lang: None`) on every game, not only on every tenth.
    pub auto_lang: bool,
    /// Decode with raw (uncalibrated) confidences and fit the per-status calibration on
    /// them; the report then carries the fitted triples.
    pub fit_calibration: bool,
    /// Decode with [`DecodeCalibration::handwritten`] (ignored with `fit_calibration`).
    pub hand: bool,
    /// Beam width of the decoder (its default when `None`).
    pub beam: Option<usize>,
    /// Decoder costs to override (`Costs::set` names), for tuning.
    pub costs: Vec<(String, f32)>,
}

impl Default for RepairEvalOptions {
    fn default() -> Self {
        RepairEvalOptions {
            paths: Vec::new(),
            noise: vec![0.05, 0.10],
            drop: 0.005,
            slips: 0.0,
            seed: 1,
            games: None,
            auto_lang: false,
            fit_calibration: false,
            hand: false,
            beam: None,
            costs: Vec::new(),
        }
    }
}

/// What became of the plies written as slips of the pen.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SlipReport {
    /// Slipped plies (those the decoder returned no ply for count as wrong).
    pub plies: usize,
    /// Of them, slips that spell another legal move where they stand.
    pub legal: usize,
    /// Read as the move played, over all slips and over the legal ones.
    pub right: usize,
    pub legal_right: usize,
    /// Wrong and given a confidence of 0.9 or more (a wrong move stated with confidence),
    /// over all slips and over the legal ones.
    pub wrong_confident: usize,
    pub legal_wrong_confident: usize,
    /// Wrong and not flagged (status `ok`).
    pub wrong_ok: usize,
    /// The status each slipped ply got.
    pub status: Vec<StatusRow>,
    /// Plies that did not slip but lie within 3 plies of one, and how many were right.
    pub near: usize,
    pub near_right: usize,
}

/// One input file as read.
#[derive(Debug, Clone, Serialize)]
pub struct SourceSummary {
    pub path: String,
    /// Games kept (at least one legal ply, standard start).
    pub games: usize,
    /// Plies kept.
    pub plies: usize,
    /// Games whose moves stop replaying legally somewhere (kept up to that point).
    pub cut_games: usize,
    /// Move tokens dropped at and after the first illegal one.
    pub cut_plies: usize,
    /// Games skipped: a `FEN`/`SetUp` start, or no legal ply at all.
    pub skipped: usize,
}

/// One status: how many decoded plies had it and how many of those were right.
#[derive(Debug, Clone, Serialize)]
pub struct StatusRow {
    pub status: Status,
    pub count: usize,
    pub right: usize,
}

/// The noise a level really applied.
#[derive(Debug, Clone, Serialize)]
pub struct NoiseApplied {
    /// Characters at risk.
    pub chars: usize,
    /// Characters hit.
    pub corrupted: usize,
    pub realised_rate: f64,
    pub events: EventCounts,
}

/// What became of the plies whose text the noise dropped.
#[derive(Debug, Clone, Serialize)]
pub struct DroppedReport {
    pub plies: usize,
    /// Decoded with status `missing` at that ply.
    pub reported_missing: usize,
    /// Decoded right (any status).
    pub right: usize,
    /// Decoded right with status `missing`.
    pub missing_and_right: usize,
    /// The status each dropped ply got (no row for a ply that was not decoded at all).
    pub status: Vec<StatusRow>,
}

/// One confidence bin of the reliability table.
#[derive(Debug, Clone, Serialize)]
pub struct CalibrationBin {
    pub lo: f32,
    pub hi: f32,
    pub count: usize,
    pub right: usize,
    pub mean_confidence: Option<f64>,
    pub accuracy: Option<f64>,
}

/// Is the confidence a probability?
#[derive(Debug, Clone, Serialize)]
pub struct Calibration {
    pub bins: Vec<CalibrationBin>,
    /// The same table for the plies with status `corrected` alone.
    pub corrected_bins: Vec<CalibrationBin>,
    /// The same table for the plies with status `ok` alone (where the wrong ones are the
    /// worst outcome: a move stated as read).
    pub ok_bins: Vec<CalibrationBin>,
    /// Expected calibration error over `bins`: Σ n_b/N · |accuracy_b − mean confidence_b|.
    pub ece: f64,
    /// Plies with status `ok`, and how many of them were right (target ≥ 99 %).
    pub ok_plies: usize,
    pub ok_right: usize,
    pub ok_accuracy: Option<f64>,
    /// Wrong plies (true plies with no decoded ply included), and how many of them were
    /// decoded with a status other than `ok` (caught for a reviewer).
    pub wrong_plies: usize,
    pub wrong_flagged: usize,
    /// Wrong decoded plies given at least [`crate::record::UNSURE_BELOW`] (any status): a
    /// wrong move stated with confidence, the worst outcome.
    pub wrong_confident: usize,
}

/// Time per `repair_text` call.
#[derive(Debug, Clone, Serialize)]
pub struct Timing {
    pub calls: usize,
    pub mean_ms_per_game: f64,
    pub p95_ms_per_game: f64,
    pub max_ms_per_game: f64,
    pub mean_ms_per_100_plies: f64,
    pub p95_ms_per_100_plies: f64,
}

/// One noise level in one language mode.
#[derive(Debug, Clone, Serialize)]
pub struct LevelReport {
    pub noise: f32,
    /// `tr` (the language given) or `auto` (detected).
    pub lang: String,
    pub games: usize,
    /// True plies.
    pub plies: usize,
    pub applied: NoiseApplied,
    pub plies_right: usize,
    pub plies_right_pct: f64,
    /// Right plies whose status was `missing` (a gap the engine filled correctly).
    pub right_as_missing: usize,
    pub games_fully_right: usize,
    pub games_fully_right_pct: f64,
    /// True plies with no decoded ply at their index (the decoded game is shorter).
    pub plies_not_decoded: usize,
    /// Decoded plies past the end of the true game.
    pub plies_extra: usize,
    /// Calls that returned an error (counted as all plies wrong).
    pub failed: usize,
    /// Calls that panicked (counted as all plies wrong, not timed).
    pub panicked: usize,
    /// Calls that returned more than one game (only the first is compared).
    pub split: usize,
    /// Language of the first decoded game, by code.
    pub detected_lang: BTreeMap<String, usize>,
    pub dropped: DroppedReport,
    /// Slips of the pen (all zero unless `--slips`).
    pub slips: SlipReport,
    /// Status of the decoded plies at true ply indices.
    pub status: Vec<StatusRow>,
    pub calibration: Calibration,
    pub timing: Timing,
}

/// Everything `hamle eval repair` measured.
#[derive(Debug, Clone, Serialize)]
pub struct RepairEvalReport {
    /// With `fit_calibration`: the fitted per-status triples (the tables below then show
    /// raw confidences).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub calibration: Option<FittedCalibration>,
    pub seed: u64,
    pub drop: f32,
    /// Probability of a slip of the pen per ply.
    pub slips: f32,
    pub threads: usize,
    pub sources: Vec<SourceSummary>,
    /// Games and plies evaluated (after `games` sampling).
    pub games: usize,
    pub plies: usize,
    pub levels: Vec<LevelReport>,
}

/// Per-status calibration weights as fitted ([`crate::decode::features`] order), in the
/// layout of [`crate::decode::Calibration::Logistic`].
#[derive(Debug, Clone, Serialize)]
pub struct FittedCalibration {
    pub ok: CalWeights,
    pub corrected: CalWeights,
    pub illegal: CalWeights,
    pub unreadable: CalWeights,
    pub missing: CalWeights,
}

impl From<DecodeCalibration> for FittedCalibration {
    fn from(c: DecodeCalibration) -> Self {
        let w = |st: Status| c.weights(st).copied().unwrap_or_default();
        FittedCalibration {
            ok: w(Status::Ok),
            corrected: w(Status::Corrected),
            illegal: w(Status::Illegal),
            unreadable: w(Status::Unreadable),
            missing: w(Status::Missing),
        }
    }
}

/// A labelled game.
#[derive(Debug, Clone)]
struct Truth {
    source: String,
    index: usize,
    moves: Vec<Move>,
    result: GameResult,
}

/// Runs the evaluation.
///
/// # Errors
///
/// A path that cannot be read, no games at all, a noise level outside `0..=1`, or an
/// engine that panics on every one of the first calls (it is not finished).
pub fn run(opts: &RepairEvalOptions) -> anyhow::Result<RepairEvalReport> {
    if opts.paths.is_empty() {
        bail!("no input paths given");
    }
    let configs: Vec<NoiseConfig> = opts
        .noise
        .iter()
        .map(|&r| {
            NoiseConfig::new(f64::from(r), f64::from(opts.drop))
                .with_context(|| format!("noise {r} and drop {} must both lie in 0..=1", opts.drop))
        })
        .collect::<anyhow::Result<_>>()?;
    let (truths, sources) = load_paths(&opts.paths)?;
    if truths.is_empty() {
        bail!("no games found in the given paths");
    }
    let truths = sample(truths, opts.games);
    let plies: usize = truths.iter().map(|t| t.moves.len()).sum();

    // Jobs: (level, game, auto?). The auto subset is every tenth game unless asked for all.
    let mut jobs = Vec::new();
    for li in 0..configs.len() {
        for gi in 0..truths.len() {
            jobs.push(Job {
                level: li,
                game: gi,
                auto: false,
            });
        }
        for gi in 0..truths.len() {
            if opts.auto_lang || gi % 10 == 0 {
                jobs.push(Job {
                    level: li,
                    game: gi,
                    auto: true,
                });
            }
        }
    }
    let threads = std::env::var("HAMLE_EVAL_THREADS")
        .ok()
        .and_then(|s| s.parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .min(jobs.len().max(1));
    let mut base = DecodeConfig::default();
    if opts.fit_calibration {
        base.costs.calibration = DecodeCalibration::Raw;
    } else if opts.hand {
        base.costs.calibration = DecodeCalibration::handwritten();
    }
    if let Some(b) = opts.beam {
        base.beam = b.max(1);
    }
    for (name, value) in &opts.costs {
        base.costs.set(name, *value).map_err(anyhow::Error::msg)?;
    }
    let outcomes = run_jobs(&jobs, &truths, &configs, opts, &base, threads)?;

    if let Some(path) = std::env::var_os("HAMLE_EVAL_EVIDENCE") {
        write_evidence(std::path::Path::new(&path), &jobs, &outcomes, opts)?;
    }
    let calibration = opts.fit_calibration.then(|| {
        let samples: Vec<(Status, Evidence, bool)> = jobs
            .iter()
            .zip(&outcomes)
            .filter(|(j, _)| !j.auto)
            .flat_map(|(_, o)| match &o.decoded {
                Decoded::Games { plies, .. } => plies
                    .iter()
                    .map(|p| (p.status, p.evidence, p.right))
                    .collect::<Vec<_>>(),
                _ => Vec::new(),
            })
            .collect();
        FittedCalibration::from(DecodeCalibration::fit(&samples))
    });
    let mut levels = Vec::new();
    for li in 0..configs.len() {
        for auto in [false, true] {
            let sel: Vec<&Outcome> = jobs
                .iter()
                .zip(&outcomes)
                .filter(|(j, _)| j.level == li && j.auto == auto)
                .map(|(_, o)| o)
                .collect();
            if sel.is_empty() {
                continue;
            }
            levels.push(level_report(opts.noise[li], auto, &sel));
        }
    }
    Ok(RepairEvalReport {
        calibration,
        seed: opts.seed,
        drop: opts.drop,
        slips: opts.slips,
        threads,
        sources,
        games: truths.len(),
        plies,
        levels,
    })
}

/// A diagnostic: with `HAMLE_EVAL_EVIDENCE=FILE`, every decoded ply at a true ply index
/// goes to FILE as a tab-separated line (noise level, auto, status, the parts of its raw
/// confidence, the confidence given, right), to study and fit the calibration.
fn write_evidence(
    path: &std::path::Path,
    jobs: &[Job],
    outcomes: &[Outcome],
    opts: &RepairEvalOptions,
) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(
        std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?,
    );
    writeln!(
        out,
        "noise\tauto\tgame\tstatus\tbeam\tlocal\tcost\tneighbours\tconfidence\tright"
    )?;
    for (j, o) in jobs.iter().zip(outcomes) {
        if let Decoded::Games { plies, .. } = &o.decoded {
            for p in plies {
                let e = p.evidence;
                writeln!(
                    out,
                    "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
                    opts.noise[j.level],
                    u8::from(j.auto),
                    j.game,
                    p.status.as_str(),
                    e.beam,
                    e.local,
                    e.cost,
                    e.neighbours,
                    p.confidence,
                    u8::from(p.right)
                )?;
            }
        }
    }
    out.flush()?;
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------------------

fn load_paths(paths: &[PathBuf]) -> anyhow::Result<(Vec<Truth>, Vec<SourceSummary>)> {
    let mut files = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(p)
                .with_context(|| format!("reading folder {}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| {
                    let name = f.file_name().and_then(|n| n.to_str()).unwrap_or("");
                    f.is_file() && (name.ends_with(".pgn") || name.ends_with(".moves.txt"))
                })
                .collect();
            found.sort();
            files.extend(found);
        } else {
            files.push(p.clone());
        }
    }
    let mut truths = Vec::new();
    let mut sources = Vec::new();
    for f in &files {
        let text =
            std::fs::read_to_string(f).with_context(|| format!("reading {}", f.display()))?;
        let name = f
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        let (games, summary) = read_labels(&text, &f.display().to_string());
        for (index, (moves, result)) in games.into_iter().enumerate() {
            truths.push(Truth {
                source: name.clone(),
                index,
                moves,
                result,
            });
        }
        sources.push(summary);
    }
    Ok((truths, sources))
}

/// Replays every game of a label file (English SAN, as in PGN), keeping the legal prefix.
pub(crate) fn read_labels(text: &str, path: &str) -> (Vec<(Vec<Move>, GameResult)>, SourceSummary) {
    let mut out = Vec::new();
    let mut s = SourceSummary {
        path: path.to_string(),
        games: 0,
        plies: 0,
        cut_games: 0,
        cut_plies: 0,
        skipped: 0,
    };
    for g in lex(text) {
        if g.headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("FEN") || k.eq_ignore_ascii_case("SetUp"))
        {
            s.skipped += 1;
            continue;
        }
        let (moves, result, cut) = replay_legal_prefix(&g);
        if cut > 0 {
            s.cut_games += 1;
            s.cut_plies += cut;
        }
        if moves.is_empty() {
            s.skipped += 1;
            continue;
        }
        s.games += 1;
        s.plies += moves.len();
        out.push((moves, result));
    }
    (out, s)
}

/// The moves of `g` up to its first move that is not legal SAN in its position, the
/// result, and the number of move tokens cut.
fn replay_legal_prefix(g: &LexedGame) -> (Vec<Move>, GameResult, usize) {
    let mut pos = Chess::default();
    let mut moves = Vec::new();
    let mut cut = 0;
    let mut result =
        g.headers
            .iter()
            .find(|(k, _)| k == "Result")
            .map_or(GameResult::Unknown, |(_, v)| match v.as_str() {
                "1-0" => GameResult::WhiteWins,
                "0-1" => GameResult::BlackWins,
                "1/2-1/2" => GameResult::Draw,
                _ => GameResult::Unknown,
            });
    for t in &g.tokens {
        match &t.kind {
            TokenKind::Result(r) => result = *r,
            TokenKind::Number { .. } => {}
            TokenKind::Move { text, .. } => {
                if cut > 0 {
                    cut += 1;
                    continue;
                }
                match parse_san(text).and_then(|san| san.to_move(&pos).ok()) {
                    Some(m) => {
                        pos.play_unchecked(m);
                        moves.push(m);
                    }
                    None => cut = 1,
                }
            }
        }
    }
    (moves, result, cut)
}

/// English SAN as people write it in labels: `0-0` for `O-O`, `++` for `#`.
fn parse_san(text: &str) -> Option<San> {
    let t = text.trim_end_matches(['+', '#']);
    let t = if !t.is_empty() && t.chars().all(|c| matches!(c, '0' | 'O' | 'o' | '-')) {
        t.replace(['0', 'o'], "O")
    } else {
        t.to_string()
    };
    San::from_ascii(t.as_bytes()).ok()
}

/// `n` games evenly spaced over `all` (all of them when `n` is `None` or too large).
fn sample(all: Vec<Truth>, n: Option<usize>) -> Vec<Truth> {
    match n {
        Some(n) if n < all.len() => {
            let len = all.len();
            let picks: Vec<usize> = (0..n).map(|i| i * len / n).collect();
            all.into_iter()
                .enumerate()
                .filter(|(i, _)| picks.binary_search(i).is_ok())
                .map(|(_, t)| t)
                .collect()
        }
        _ => all,
    }
}

// ---------------------------------------------------------------------------------------
// Running
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy)]
struct Job {
    level: usize,
    game: usize,
    auto: bool,
}

/// What one decoded ply at a true ply index was.
#[derive(Debug, Clone, Copy)]
struct PlyOutcome {
    status: Status,
    right: bool,
    confidence: f32,
    evidence: Evidence,
}

#[derive(Debug, Clone)]
enum Decoded {
    Games {
        /// One entry per true ply that has a decoded ply at its index.
        plies: Vec<PlyOutcome>,
        /// Confidences of decoded plies past the end of the true game.
        extra: Vec<f32>,
        games: usize,
        lang: &'static str,
    },
    Failed,
    Panicked,
}

#[derive(Debug, Clone)]
struct Outcome {
    truth_plies: usize,
    chars: usize,
    corrupted: usize,
    events: EventCounts,
    dropped: Vec<usize>,
    slips: Vec<Slip>,
    decoded: Decoded,
    /// Milliseconds in `repair_text` (`None` when it panicked).
    ms: Option<f64>,
}

/// After this many panics without one successful call the engine is taken as unfinished.
const PANICS_BEFORE_GIVING_UP: usize = 16;

fn run_jobs(
    jobs: &[Job],
    truths: &[Truth],
    configs: &[NoiseConfig],
    opts: &RepairEvalOptions,
    base: &DecodeConfig,
    threads: usize,
) -> anyhow::Result<Vec<Outcome>> {
    let next = AtomicUsize::new(0);
    let successes = AtomicUsize::new(0);
    let panics = AtomicUsize::new(0);
    let abort = AtomicBool::new(false);
    let results: Mutex<Vec<(usize, Outcome)>> = Mutex::new(Vec::with_capacity(jobs.len()));
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| {
                let mut local = Vec::new();
                loop {
                    if abort.load(Ordering::Relaxed) {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    let (Some(truth), Some(cfg)) = (truths.get(job.game), configs.get(job.level))
                    else {
                        continue;
                    };
                    let o = evaluate(truth, cfg, opts, job.level, job.auto, base);
                    if matches!(o.decoded, Decoded::Panicked) {
                        let p = panics.fetch_add(1, Ordering::Relaxed) + 1;
                        if p >= PANICS_BEFORE_GIVING_UP && successes.load(Ordering::Relaxed) == 0 {
                            abort.store(true, Ordering::Relaxed);
                        }
                    } else {
                        successes.fetch_add(1, Ordering::Relaxed);
                    }
                    local.push((i, o));
                }
                if let Ok(mut r) = results.lock() {
                    r.extend(local);
                }
            });
        }
    });
    if abort.load(Ordering::Relaxed) {
        bail!(
            "repair_text panicked on its first {} calls and never returned: the decode engine is not usable",
            panics.load(Ordering::Relaxed)
        );
    }
    let mut results = results
        .into_inner()
        .map_err(|_| anyhow::anyhow!("a worker thread panicked"))?;
    results.sort_by_key(|(i, _)| *i);
    if results.len() != jobs.len() {
        bail!(
            "{} of {} evaluations did not run",
            jobs.len() - results.len(),
            jobs.len()
        );
    }
    Ok(results.into_iter().map(|(_, o)| o).collect())
}

/// Renders, corrupts, repairs and compares one game.
fn evaluate(
    truth: &Truth,
    cfg: &NoiseConfig,
    opts: &RepairEvalOptions,
    level_index: usize,
    auto: bool,
    base: &DecodeConfig,
) -> Outcome {
    let (level, seed) = (opts.noise[level_index], opts.seed);
    // The slips are drawn from their own stream, which does not depend on the noise
    // level: the same plies slip at every level.
    let mut slip_rng = SplitMix64::new(derive_seed(&[
        seed,
        str_seed("slips"),
        str_seed(&truth.source),
        truth.index as u64,
    ]));
    let (text, slips) = render_with_slips(
        &Chess::default(),
        &truth.moves,
        turkish(),
        truth.result,
        f64::from(opts.slips),
        &mut slip_rng,
    )
    .unwrap_or_else(|_| {
        let empty = MoveText {
            units: Vec::new(),
            result: String::new(),
        };
        (empty, Vec::new())
    });
    let mut rng = SplitMix64::new(derive_seed(&[
        seed,
        u64::from(level.to_bits()),
        str_seed(&truth.source),
        truth.index as u64,
    ]));
    let noisy = corrupt(&text, cfg, &mut rng);
    let dcfg = DecodeConfig {
        lang: if auto { None } else { Some(turkish()) },
        ..base.clone()
    };
    let t0 = Instant::now();
    let got = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        repair_text(&noisy.text, &dcfg)
    }));
    let ms = t0.elapsed().as_secs_f64() * 1000.0;
    let (decoded, ms) = match got {
        Ok(Ok(games)) => {
            if std::env::var_os("HAMLE_EVAL_DUMP").is_some() {
                dump_errors(truth, &noisy.text, &games, level, &dcfg, &slips);
            }
            (compare(&truth.moves, &games), Some(ms))
        }
        Ok(Err(_)) => (Decoded::Failed, Some(ms)),
        Err(_) => (Decoded::Panicked, None),
    };
    Outcome {
        truth_plies: truth.moves.len(),
        chars: noisy.chars,
        corrupted: noisy.corrupted,
        events: noisy.events,
        dropped: noisy.dropped,
        slips,
        decoded,
        ms,
    }
}

/// With `HAMLE_EVAL_DUMP` set, prints each game with a wrong ply to stderr: the noisy
/// text, the true moves, per wrong ply what was decided and the text it was read from,
/// and whether the beam lost the true path (a search error) and where.
fn dump_errors(
    truth: &Truth,
    noisy: &str,
    games: &[Game],
    level: f32,
    dcfg: &DecodeConfig,
    slips: &[Slip],
) {
    use shakmaty::san::SanPlus;
    let Some(g) = games.first() else { return };
    let mut pos = Chess::default();
    let mut lines = Vec::new();
    let mut sans = Vec::new();
    for (i, t) in truth.moves.iter().enumerate() {
        let want = SanPlus::from_move(pos.clone(), *t).to_string();
        sans.push(want.clone());
        match g.plies.get(i) {
            Some(p) if p.mv.as_ref() == Some(t) => {}
            Some(p) => lines.push(format!(
                "  ply {:>3} want {:<8} got {:<8} {:?} conf {:.2} read {:?}{}",
                i + 1,
                want,
                p.san.as_ref().map(|s| s.to_string()).unwrap_or_default(),
                p.status,
                p.confidence,
                p.read.as_deref().unwrap_or(""),
                slips
                    .iter()
                    .find(|x| x.index == i)
                    .map(|x| format!(
                        " (slip: {:?}{})",
                        x.kind,
                        if x.legal { ", legal" } else { "" }
                    ))
                    .unwrap_or_default()
            )),
            None => lines.push(format!("  ply {:>3} want {want:<8} (no ply)", i + 1)),
        }
        pos.play_unchecked(*t);
    }
    if !lines.is_empty() {
        let (found, true_cost, lost) =
            crate::decode::search_vs_truth(noisy, dcfg, turkish(), &truth.moves).unwrap_or((
                f32::NAN,
                f32::NAN,
                None,
            ));
        eprintln!(
            "== {} #{} noise {level}: search cost {found:.2}, the true moves' {true_cost:.2}\n{noisy}\nTRUTH {}\n{}",
            truth.source,
            truth.index,
            sans.join(" "),
            lines.join("\n")
        );
        if let Some(l) = lost {
            eprintln!("  search error: {l}");
        }
    }
}

fn compare(truth: &[Move], games: &[Game]) -> Decoded {
    let Some(g) = games.first() else {
        return Decoded::Games {
            plies: Vec::new(),
            extra: Vec::new(),
            games: 0,
            lang: "none",
        };
    };
    let plies = g
        .plies
        .iter()
        .zip(truth)
        .map(|(p, t)| PlyOutcome {
            status: p.status,
            right: p.mv.as_ref() == Some(t),
            confidence: p.confidence,
            evidence: p.evidence,
        })
        .collect();
    let extra = g
        .plies
        .iter()
        .skip(truth.len())
        .map(|p| p.confidence)
        .collect();
    Decoded::Games {
        plies,
        extra,
        games: games.len(),
        lang: g.lang.code,
    }
}

// ---------------------------------------------------------------------------------------
// Aggregating
// ---------------------------------------------------------------------------------------

const STATUSES: [Status; 5] = [
    Status::Ok,
    Status::Corrected,
    Status::Illegal,
    Status::Unreadable,
    Status::Missing,
];

/// Upper edges of the reliability bins (the first starts at 0; the last includes 1).
const BIN_EDGES: [f32; 7] = [0.0, 0.5, 0.7, 0.9, 0.97, 0.99, 1.0];

fn bin_of(conf: f32) -> usize {
    let c = if conf.is_finite() {
        conf.clamp(0.0, 1.0)
    } else {
        0.0
    };
    (1..BIN_EDGES.len() - 1)
        .take_while(|&i| c >= BIN_EDGES[i])
        .count()
}

/// Counts one ply given `conf` in its bin of (plies, right plies, summed confidence).
fn tally(bins: &mut [(usize, usize, f64)], conf: f32, right: bool) {
    let b = &mut bins[bin_of(conf)];
    b.0 += 1;
    b.1 += usize::from(right);
    b.2 += f64::from(conf);
}

/// The reliability table of per-bin (plies, right plies, summed confidence), and its
/// expected calibration error.
fn reliability(bins: &[(usize, usize, f64)]) -> (Vec<CalibrationBin>, f64) {
    let total: usize = bins.iter().map(|b| b.0).sum();
    let mut ece = 0.0;
    let table = bins
        .iter()
        .enumerate()
        .map(|(i, &(count, r, sum))| {
            let (mean, acc) = if count > 0 {
                (Some(sum / count as f64), Some(r as f64 / count as f64))
            } else {
                (None, None)
            };
            if let (Some(m), Some(a)) = (mean, acc) {
                ece += count as f64 / total as f64 * (a - m).abs();
            }
            CalibrationBin {
                lo: BIN_EDGES[i],
                hi: BIN_EDGES[i + 1],
                count,
                right: r,
                mean_confidence: mean,
                accuracy: acc,
            }
        })
        .collect();
    (table, ece)
}

/// One row per bin of a reliability table.
fn write_bins(f: &mut fmt::Formatter<'_>, bins: &[CalibrationBin]) -> fmt::Result {
    for b in bins {
        writeln!(
            f,
            "    {:.2}–{:<6.2} {:>8} {:>10} {:>9}",
            b.lo,
            b.hi,
            b.count,
            b.mean_confidence
                .map_or_else(|| "-".to_string(), |m| format!("{m:.4}")),
            opt_pct(b.accuracy)
        )?;
    }
    Ok(())
}

fn pct(n: usize, d: usize) -> f64 {
    if d == 0 {
        0.0
    } else {
        100.0 * n as f64 / d as f64
    }
}

fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    // Nearest rank.
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn status_rows(counts: &[(usize, usize); 5]) -> Vec<StatusRow> {
    STATUSES
        .iter()
        .zip(counts)
        .map(|(&status, &(count, right))| StatusRow {
            status,
            count,
            right,
        })
        .collect()
}

fn status_index(s: Status) -> usize {
    STATUSES.iter().position(|&x| x == s).unwrap_or(0)
}

fn level_report(noise: f32, auto: bool, outs: &[&Outcome]) -> LevelReport {
    let mut plies = 0;
    let mut right = 0;
    let mut right_as_missing = 0;
    let mut fully = 0;
    let mut not_decoded = 0;
    let mut extra_n = 0;
    let (mut failed, mut panicked, mut split) = (0, 0, 0);
    let mut langs: BTreeMap<String, usize> = BTreeMap::new();
    let mut status = [(0usize, 0usize); 5];
    let mut dropped_status = [(0usize, 0usize); 5];
    let (mut dropped_n, mut dropped_right, mut dropped_missing, mut dropped_missing_right) =
        (0, 0, 0, 0);
    let mut bins = [(0usize, 0usize, 0f64); 6];
    let mut corrected_bins = [(0usize, 0usize, 0f64); 6];
    let mut ok_bins = [(0usize, 0usize, 0f64); 6];
    let mut slip = SlipReport::default();
    let mut slip_status = [(0usize, 0usize); 5];
    let (mut wrong, mut wrong_flagged, mut wrong_confident) = (0, 0, 0);
    let (mut chars, mut corrupted) = (0, 0);
    let mut events = EventCounts::default();
    let mut ms_game = Vec::new();
    let mut ms_100 = Vec::new();

    for o in outs {
        plies += o.truth_plies;
        chars += o.chars;
        corrupted += o.corrupted;
        events.add(&o.events);
        dropped_n += o.dropped.len();
        slip.plies += o.slips.len();
        slip.legal += o.slips.iter().filter(|x| x.legal).count();
        if let Some(ms) = o.ms {
            ms_game.push(ms);
            ms_100.push(ms * 100.0 / o.truth_plies.max(1) as f64);
        }
        match &o.decoded {
            Decoded::Failed => {
                failed += 1;
                not_decoded += o.truth_plies;
                wrong += o.truth_plies;
            }
            Decoded::Panicked => {
                panicked += 1;
                not_decoded += o.truth_plies;
                wrong += o.truth_plies;
            }
            Decoded::Games {
                plies: ps,
                extra,
                games,
                lang,
            } => {
                if *games > 1 {
                    split += 1;
                }
                *langs.entry((*lang).to_string()).or_default() += 1;
                let r = ps.iter().filter(|p| p.right).count();
                right += r;
                not_decoded += o.truth_plies - ps.len();
                wrong += o.truth_plies - ps.len();
                extra_n += extra.len();
                if r == o.truth_plies && extra.is_empty() {
                    fully += 1;
                }
                for p in ps {
                    let si = status_index(p.status);
                    status[si].0 += 1;
                    status[si].1 += usize::from(p.right);
                    if p.right && p.status == Status::Missing {
                        right_as_missing += 1;
                    }
                    if !p.right {
                        wrong += 1;
                        wrong_flagged += usize::from(p.status.is_flagged());
                        wrong_confident += usize::from(p.confidence >= crate::record::UNSURE_BELOW);
                    }
                    tally(&mut bins, p.confidence, p.right);
                    match p.status {
                        Status::Corrected => tally(&mut corrected_bins, p.confidence, p.right),
                        Status::Ok => tally(&mut ok_bins, p.confidence, p.right),
                        _ => {}
                    }
                }
                for &c in extra {
                    tally(&mut bins, c, false);
                }
                for x in &o.slips {
                    let Some(p) = ps.get(x.index) else { continue };
                    let si = status_index(p.status);
                    slip_status[si].0 += 1;
                    slip_status[si].1 += usize::from(p.right);
                    slip.right += usize::from(p.right);
                    slip.legal_right += usize::from(p.right && x.legal);
                    if !p.right && p.confidence >= 0.9 {
                        slip.wrong_confident += 1;
                        slip.legal_wrong_confident += usize::from(x.legal);
                    }
                    slip.wrong_ok += usize::from(!p.right && p.status == Status::Ok);
                }
                let slipped = |i: usize| o.slips.iter().any(|x| x.index == i);
                for (i, p) in ps.iter().enumerate() {
                    let near = o.slips.iter().any(|x| x.index.abs_diff(i) <= 3);
                    if near && !slipped(i) {
                        slip.near += 1;
                        slip.near_right += usize::from(p.right);
                    }
                }
                for &d in &o.dropped {
                    if let Some(p) = ps.get(d) {
                        let si = status_index(p.status);
                        dropped_status[si].0 += 1;
                        dropped_status[si].1 += usize::from(p.right);
                        dropped_right += usize::from(p.right);
                        if p.status == Status::Missing {
                            dropped_missing += 1;
                            dropped_missing_right += usize::from(p.right);
                        }
                    }
                }
            }
        }
    }

    let (cal_bins, ece) = reliability(&bins);
    let (corrected_bins, _) = reliability(&corrected_bins);
    let (ok_bins, _) = reliability(&ok_bins);
    let (ok_plies, ok_right) = status[0];

    ms_game.sort_by(f64::total_cmp);
    ms_100.sort_by(f64::total_cmp);
    let mean = |v: &[f64]| {
        if v.is_empty() {
            0.0
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        }
    };

    LevelReport {
        noise,
        lang: if auto { "auto" } else { "tr" }.to_string(),
        games: outs.len(),
        plies,
        applied: NoiseApplied {
            chars,
            corrupted,
            realised_rate: if chars == 0 {
                0.0
            } else {
                corrupted as f64 / chars as f64
            },
            events,
        },
        plies_right: right,
        plies_right_pct: pct(right, plies),
        right_as_missing,
        games_fully_right: fully,
        games_fully_right_pct: pct(fully, outs.len()),
        plies_not_decoded: not_decoded,
        plies_extra: extra_n,
        failed,
        panicked,
        split,
        detected_lang: langs,
        dropped: DroppedReport {
            plies: dropped_n,
            reported_missing: dropped_missing,
            right: dropped_right,
            missing_and_right: dropped_missing_right,
            status: status_rows(&dropped_status),
        },
        slips: SlipReport {
            status: status_rows(&slip_status),
            ..slip
        },
        status: status_rows(&status),
        calibration: Calibration {
            bins: cal_bins,
            corrected_bins,
            ok_bins,
            ece,
            ok_plies,
            ok_right,
            ok_accuracy: (ok_plies > 0).then(|| ok_right as f64 / ok_plies as f64),
            wrong_plies: wrong,
            wrong_flagged,
            wrong_confident,
        },
        timing: Timing {
            calls: ms_game.len(),
            mean_ms_per_game: mean(&ms_game),
            p95_ms_per_game: percentile(&ms_game, 0.95),
            max_ms_per_game: ms_game.last().copied().unwrap_or(0.0),
            mean_ms_per_100_plies: mean(&ms_100),
            p95_ms_per_100_plies: percentile(&ms_100, 0.95),
        },
    }
}

// ---------------------------------------------------------------------------------------
// Display
// ---------------------------------------------------------------------------------------

fn opt_pct(x: Option<f64>) -> String {
    x.map_or_else(|| "-".to_string(), |v| format!("{:.2}%", 100.0 * v))
}

/// Sources for display: more than three files from one folder become one line.
fn grouped_sources(sources: &[SourceSummary]) -> Vec<SourceSummary> {
    let parent = |p: &str| {
        std::path::Path::new(p)
            .parent()
            .map(|d| d.display().to_string())
            .unwrap_or_default()
    };
    let mut out: Vec<SourceSummary> = Vec::new();
    let mut i = 0;
    while let Some(first) = sources.get(i) {
        let dir = parent(&first.path);
        let group = &sources[i..];
        let run = group.iter().take_while(|s| parent(&s.path) == dir).count();
        let group = &group[..run];
        if run > 3 {
            let mut g = SourceSummary {
                path: format!("{dir}/ ({run} files)"),
                games: 0,
                plies: 0,
                cut_games: 0,
                cut_plies: 0,
                skipped: 0,
            };
            for s in group {
                g.games += s.games;
                g.plies += s.plies;
                g.cut_games += s.cut_games;
                g.cut_plies += s.cut_plies;
                g.skipped += s.skipped;
            }
            out.push(g);
        } else {
            out.extend(group.iter().cloned());
        }
        i += run;
    }
    out
}

impl fmt::Display for RepairEvalReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "repair eval: {} games, {} plies; Turkish move text; seed {}; ply drop {}; {} thread(s)",
            self.games, self.plies, self.seed, self.drop, self.threads
        )?;
        if self.slips > 0.0 {
            writeln!(f, "slips of the pen: {} per ply", self.slips)?;
        }
        for s in &grouped_sources(&self.sources) {
            write!(
                f,
                "  {:<48} {:>5} games {:>7} plies",
                s.path, s.games, s.plies
            )?;
            if s.cut_games > 0 {
                write!(
                    f,
                    "  ({} games cut at their first illegal move, {} move tokens dropped)",
                    s.cut_games, s.cut_plies
                )?;
            }
            if s.skipped > 0 {
                write!(f, "  ({} skipped)", s.skipped)?;
            }
            writeln!(f)?;
        }
        writeln!(f)?;
        if let Some(c) = &self.calibration {
            writeln!(
                f,
                "fitted calibration (weights over decode::features; the tables below show raw confidences):\n  Calibration::Logistic {{ ok: {:?}, corrected: {:?}, illegal: {:?}, unreadable: {:?}, missing: {:?} }}\n",
                c.ok, c.corrected, c.illegal, c.unreadable, c.missing
            )?;
        }
        writeln!(
            f,
            "{:>5} {:<4} {:>5} {:>6} {:>11} {:>11} {:>9} {:>6} {:>17} {:>17}",
            "noise",
            "lang",
            "games",
            "hit%",
            "plies right",
            "games right",
            "ok right",
            "ECE",
            "ms/game mean p95",
            "ms/100ply mean p95"
        )?;
        for l in &self.levels {
            writeln!(
                f,
                "{:>5.2} {:<4} {:>5} {:>6.2} {:>10.2}% {:>10.2}% {:>9} {:>6.3} {:>8.1} {:>8.1} {:>8.1} {:>8.1}",
                l.noise,
                l.lang,
                l.games,
                100.0 * l.applied.realised_rate,
                l.plies_right_pct,
                l.games_fully_right_pct,
                opt_pct(l.calibration.ok_accuracy),
                l.calibration.ece,
                l.timing.mean_ms_per_game,
                l.timing.p95_ms_per_game,
                l.timing.mean_ms_per_100_plies,
                l.timing.p95_ms_per_100_plies,
            )?;
        }
        for l in &self.levels {
            writeln!(f)?;
            writeln!(
                f,
                "noise {:.2}, lang {}: {} games, {} plies, {} of {} characters hit ({:.2}%)",
                l.noise,
                l.lang,
                l.games,
                l.plies,
                l.applied.corrupted,
                l.applied.chars,
                100.0 * l.applied.realised_rate
            )?;
            writeln!(
                f,
                "  plies right {} ({:.2}%; {} of them as `missing` with the right guess); games fully right {} ({:.2}%)",
                l.plies_right, l.plies_right_pct, l.right_as_missing, l.games_fully_right, l.games_fully_right_pct
            )?;
            write!(f, "  status:")?;
            for r in &l.status {
                write!(
                    f,
                    "  {} {} ({} right)",
                    r.status.as_str(),
                    r.count,
                    opt_pct((r.count > 0).then(|| r.right as f64 / r.count as f64))
                )?;
            }
            writeln!(f)?;
            let d = &l.dropped;
            write!(
                f,
                "  dropped plies {}: reported missing {} (guess right {}); right in any status {}; status:",
                d.plies, d.reported_missing, d.missing_and_right, d.right
            )?;
            for r in d.status.iter().filter(|r| r.count > 0) {
                write!(f, " {} {}", r.status.as_str(), r.count)?;
            }
            writeln!(f)?;
            let x = &l.slips;
            if x.plies > 0 {
                write!(
                    f,
                    "  slips of the pen {} ({} spell another legal move): read as played {} \
                     ({} of the legal ones); wrong at confidence >= 0.9 {} ({}); wrong and ok {}; \
                     plies within 3 of a slip right {}/{}; status:",
                    x.plies,
                    x.legal,
                    x.right,
                    x.legal_right,
                    x.wrong_confident,
                    x.legal_wrong_confident,
                    x.wrong_ok,
                    x.near_right,
                    x.near
                )?;
                for r in x.status.iter().filter(|r| r.count > 0) {
                    write!(f, " {} {}", r.status.as_str(), r.count)?;
                }
                writeln!(f)?;
            }
            writeln!(
                f,
                "  plies not decoded {}; extra plies {}; failed calls {}; panicked {}; split into several games {}",
                l.plies_not_decoded, l.plies_extra, l.failed, l.panicked, l.split
            )?;
            if l.lang == "auto" {
                write!(f, "  detected language:")?;
                for (k, v) in &l.detected_lang {
                    write!(f, " {k} {v}")?;
                }
                writeln!(f)?;
            }
            let c = &l.calibration;
            writeln!(
                f,
                "  calibration: ECE {:.4}; ok plies {} right {} ({}); wrong plies {} of which flagged {} ({}), given >= {} {}",
                c.ece,
                c.ok_plies,
                c.ok_right,
                opt_pct(c.ok_accuracy),
                c.wrong_plies,
                c.wrong_flagged,
                opt_pct((c.wrong_plies > 0).then(|| c.wrong_flagged as f64 / c.wrong_plies as f64)),
                crate::record::UNSURE_BELOW,
                c.wrong_confident
            )?;
            writeln!(
                f,
                "    {:<11} {:>8} {:>10} {:>9}",
                "confidence", "plies", "mean conf", "accuracy"
            )?;
            write_bins(f, &c.bins)?;
            writeln!(f, "    `corrected` plies alone:")?;
            write_bins(f, &c.corrected_bins)?;
            writeln!(f, "    `ok` plies alone:")?;
            write_bins(f, &c.ok_bins)?;
            writeln!(
                f,
                "  timing: {} calls, {:.2} ms/game mean, {:.2} p95, {:.2} max; {:.2} ms/100 plies mean, {:.2} p95",
                l.timing.calls,
                l.timing.mean_ms_per_game,
                l.timing.p95_ms_per_game,
                l.timing.max_ms_per_game,
                l.timing.mean_ms_per_100_plies,
                l.timing.p95_ms_per_100_plies
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_keep_the_legal_prefix() {
        let text = "1. e4 e5\n2. Nf3 Nc6\n3. Bc4 Bc5\n4. 0-0 Nf6\n5. Ng5 O-O\n6. Nxf7 Rxf7\n7. Bxf7+ Kxf7\n";
        let (games, s) = read_labels(text, "x");
        assert_eq!(games.len(), 1);
        assert_eq!(games[0].0.len(), 14);
        assert_eq!((s.games, s.plies, s.cut_games), (1, 14, 0));
        let (games, _) = read_labels("1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7++ 1-0", "m");
        assert_eq!(games[0].0.len(), 7);
        assert_eq!(games[0].1, GameResult::WhiteWins);

        let text = "1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. Nxe5 Nxe5 5. Qh5 Qe9 6. Qxe5+ Kf8";
        let (games, s) = read_labels(text, "y");
        assert_eq!(games[0].0.len(), 9);
        assert_eq!((s.cut_games, s.cut_plies), (1, 3));
    }

    #[test]
    fn fen_games_and_empty_games_are_skipped() {
        let text =
            "[FEN \"8/8/8/8/8/8/8/K6k w - - 0 1\"]\n\n1. Kb1 *\n\n[Event \"x\"]\n\n1. Qh5 *\n";
        let (games, s) = read_labels(text, "z");
        assert!(games.is_empty());
        assert_eq!(s.skipped, 2);
        assert_eq!(s.cut_plies, 1);
    }

    #[test]
    fn sampling_is_even_and_stable() {
        let all: Vec<Truth> = (0..10)
            .map(|i| Truth {
                source: "a".into(),
                index: i,
                moves: Vec::new(),
                result: GameResult::Unknown,
            })
            .collect();
        let picked: Vec<usize> = sample(all.clone(), Some(4))
            .iter()
            .map(|t| t.index)
            .collect();
        assert_eq!(picked, vec![0, 2, 5, 7]);
        assert_eq!(sample(all, None).len(), 10);
    }

    #[test]
    fn bins_cover_zero_to_one() {
        assert_eq!(bin_of(0.0), 0);
        assert_eq!(bin_of(0.49), 0);
        assert_eq!(bin_of(0.5), 1);
        assert_eq!(bin_of(0.95), 3);
        assert_eq!(bin_of(0.98), 4);
        assert_eq!(bin_of(0.99), 5);
        assert_eq!(bin_of(1.0), 5);
        assert_eq!(bin_of(f32::NAN), 0);
        assert_eq!(bin_of(7.0), 5);
    }

    #[test]
    fn percentile_is_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.95), 95.0);
        assert_eq!(percentile(&[3.0], 0.95), 3.0);
        assert_eq!(percentile(&[], 0.95), 0.0);
    }

    fn ply(status: Status, right: bool, confidence: f32) -> PlyOutcome {
        PlyOutcome {
            status,
            right,
            confidence,
            evidence: Evidence::default(),
        }
    }

    #[test]
    fn level_report_counts_and_calibrates() {
        let a = Outcome {
            truth_plies: 4,
            chars: 100,
            corrupted: 5,
            events: EventCounts::default(),
            dropped: vec![2],
            slips: vec![Slip {
                index: 1,
                kind: super::super::noise::SlipKind::Rank,
                legal: true,
            }],
            decoded: Decoded::Games {
                plies: vec![
                    ply(Status::Ok, true, 0.995),
                    ply(Status::Ok, false, 0.995),
                    ply(Status::Missing, true, 0.6),
                    ply(Status::Corrected, true, 0.8),
                ],
                extra: vec![0.3],
                games: 1,
                lang: "tr",
            },
            ms: Some(10.0),
        };
        let b = Outcome {
            truth_plies: 2,
            chars: 50,
            corrupted: 5,
            events: EventCounts::default(),
            dropped: vec![],
            slips: Vec::new(),
            decoded: Decoded::Games {
                plies: vec![ply(Status::Ok, true, 1.0), ply(Status::Ok, true, 0.999)],
                extra: vec![],
                games: 1,
                lang: "tr",
            },
            ms: Some(20.0),
        };
        let c = Outcome {
            truth_plies: 3,
            chars: 0,
            corrupted: 0,
            events: EventCounts::default(),
            dropped: vec![],
            slips: Vec::new(),
            decoded: Decoded::Failed,
            ms: Some(1.0),
        };
        let r = level_report(0.05, false, &[&a, &b, &c]);
        assert_eq!(r.plies, 9);
        assert_eq!(r.plies_right, 5);
        assert_eq!(r.right_as_missing, 1);
        assert_eq!(r.games_fully_right, 1);
        assert_eq!(r.plies_extra, 1);
        assert_eq!(r.plies_not_decoded, 3);
        assert_eq!(r.failed, 1);
        assert!((r.applied.realised_rate - 10.0 / 150.0).abs() < 1e-12);
        assert_eq!(r.dropped.plies, 1);
        assert_eq!(r.dropped.reported_missing, 1);
        assert_eq!(r.dropped.missing_and_right, 1);
        let x = &r.slips;
        assert_eq!((x.plies, x.legal, x.right, x.legal_right), (1, 1, 0, 0));
        assert_eq!(
            (x.wrong_confident, x.legal_wrong_confident, x.wrong_ok),
            (1, 1, 1)
        );
        assert_eq!((x.near, x.near_right), (3, 3));
        assert_eq!(r.calibration.ok_plies, 4);
        assert_eq!(r.calibration.ok_right, 3);
        assert_eq!(r.calibration.wrong_plies, 4); // 1 decoded wrong + 3 of the failed call
        assert_eq!(r.calibration.wrong_flagged, 0);
        assert_eq!(r.calibration.wrong_confident, 1);
        let top = &r.calibration.bins[5];
        assert_eq!((top.count, top.right), (4, 3));
        // The corrected plies alone: one, right, at 0.8.
        let counts: Vec<(usize, usize)> = r
            .calibration
            .corrected_bins
            .iter()
            .map(|b| (b.count, b.right))
            .collect();
        assert_eq!(counts, vec![(0, 0), (0, 0), (1, 1), (0, 0), (0, 0), (0, 0)]);
        // The ok plies alone: the four at the top.
        let counts: Vec<(usize, usize)> = r
            .calibration
            .ok_bins
            .iter()
            .map(|b| (b.count, b.right))
            .collect();
        assert_eq!(counts, vec![(0, 0), (0, 0), (0, 0), (0, 0), (0, 0), (4, 3)]);
        // Bins: [0,.5): 1 extra wrong @0.3; [.5,.7): 1 right @0.6; [.7,.9): 1 right @0.8;
        // [.99,1]: 4 plies, 3 right, mean 0.99725.
        let expected = (0.3 + 0.4 + 0.2 + 4.0 * (0.99725f64 - 0.75).abs()) / 7.0;
        assert!(
            (r.calibration.ece - expected).abs() < 1e-6,
            "{}",
            r.calibration.ece
        );
        assert_eq!(r.timing.calls, 3);
        assert!((r.timing.mean_ms_per_game - 31.0 / 3.0).abs() < 1e-9);
        let shown = RepairEvalReport {
            calibration: None,
            seed: 1,
            drop: 0.005,
            slips: 0.0,
            threads: 1,
            sources: Vec::new(),
            games: 3,
            plies: 9,
            levels: vec![r],
        }
        .to_string();
        assert!(shown.contains("noise 0.05, lang tr"), "{shown}");
    }

    #[test]
    fn bad_options_are_errors() {
        let mut o = RepairEvalOptions::default();
        assert!(run(&o).is_err());
        o.paths = vec![PathBuf::from("/nonexistent/hamle/x.pgn")];
        assert!(run(&o).is_err());
        o.noise = vec![1.5];
        assert!(run(&o).is_err());
    }

    #[test]
    fn an_unknown_cost_name_is_an_error() {
        let dir = std::env::temp_dir().join(format!("hamle-eval-costs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pgn = dir.join("g.pgn");
        std::fs::write(&pgn, "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 1-0\n").unwrap();
        let mut o = RepairEvalOptions {
            paths: vec![pgn],
            noise: vec![0.05],
            ..Default::default()
        };
        o.costs = vec![("recovery_margin".into(), 3.0)];
        assert!(run(&o).is_ok());
        o.costs = vec![("no_such_cost".into(), 3.0)];
        let e = run(&o).unwrap_err().to_string();
        assert!(e.contains("no_such_cost"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
