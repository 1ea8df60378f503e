//! Fits the move prior of `src/decode/prior.rs` on real games and writes its weights.
//!
//! `cargo run --release --example train_prior -- datasets/games/malakhov_master.pgn [TRAIN_GAMES] [EXTRA...]`
//!
//! The first TRAIN_GAMES games (default 1000) of the file train, except the games that
//! `hamle eval repair datasets/games --games N` evaluates for N in 40, 60, 100 and 300
//! (the file is `malakhov_master.pgn`, which follows the 95 games of
//! `lichess_classical.pgn` in that corpus); the rest of the file is held out. Further
//! arguments (files, or folders of `*.pgn` / `*.moves.txt`) are evaluated as a second
//! held-out set, e.g. `../shared/data/sheets/dev`. The weights are written to
//! `src/decode/prior_weights.rs`.
//!
//! The fit: a conditional logit (softmax over each position's legal moves), full-batch
//! Adam, 300 steps, L2 on the piece-square weights; deterministic.

use hamle::decode::prior::{features, Features, N_DENSE, N_FEATURES};
use hamle::decode::{repair_text, DecodeConfig};
use hamle::notation::english;
use rayon::prelude::*;
use shakmaty::{Chess, Move, Position};

/// Games of the evaluation corpus that come before the training file.
const CORPUS_OFFSET: usize = 95;
/// Size of the evaluation corpus (`datasets/games`).
const CORPUS_LEN: usize = 1864;
/// The `--games N` samples of `hamle eval repair` kept out of training.
const EVAL_SAMPLES: [usize; 4] = [40, 60, 100, 300];

struct Sample {
    feats: Vec<Features>,
    played: usize,
}

fn samples(games: &[Vec<Move>]) -> Vec<Sample> {
    let mut out = Vec::new();
    for g in games {
        let mut pos = Chess::default();
        let mut last: Option<Move> = None;
        for m in g {
            let moves = pos.legal_moves();
            let Some(played) = moves.iter().position(|x| x == m) else {
                break;
            };
            let feats = moves
                .iter()
                .map(|x| features(&pos, last.as_ref(), x))
                .collect();
            out.push(Sample { feats, played });
            pos.play_unchecked(*m);
            last = Some(*m);
        }
    }
    out
}

/// Mean negative log-likelihood and top-1 accuracy.
fn evaluate(w: &[f32], data: &[Sample]) -> (f64, f64) {
    let (nll, top) = data
        .par_iter()
        .map(|s| {
            let logits: Vec<f32> = s.feats.iter().map(|f| f.dot(w)).collect();
            let mx = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let z: f32 = logits.iter().map(|l| (l - mx).exp()).sum();
            let best = logits
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(b.1))
                .map(|x| x.0);
            (
                f64::from(z.ln() + mx - logits[s.played]),
                usize::from(best == Some(s.played)),
            )
        })
        .reduce(|| (0.0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    (nll / data.len() as f64, top as f64 / data.len() as f64)
}

/// The gradient of the mean NLL.
fn gradient(w: &[f32], data: &[Sample]) -> Vec<f64> {
    let mut grad = data
        .par_chunks(2048)
        .map(|chunk| {
            let mut g = vec![0.0f64; N_FEATURES];
            for s in chunk {
                let logits: Vec<f32> = s.feats.iter().map(|f| f.dot(w)).collect();
                let mx = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let e: Vec<f32> = logits.iter().map(|l| (l - mx).exp()).collect();
                let z: f32 = e.iter().sum();
                for (f, p) in s.feats.iter().zip(&e) {
                    let p = f64::from(p / z);
                    for (k, v) in f.iter() {
                        g[k] += p * f64::from(v);
                    }
                }
                for (k, v) in s.feats[s.played].iter() {
                    g[k] -= f64::from(v);
                }
            }
            g
        })
        .reduce(
            || vec![0.0f64; N_FEATURES],
            |mut a, b| {
                for (x, y) in a.iter_mut().zip(b) {
                    *x += y;
                }
                a
            },
        );
    for g in &mut grad {
        *g /= data.len() as f64;
    }
    grad
}

/// The games in a PGN or movetext file, as move lists.
fn read_games(text: &str) -> Vec<Vec<Move>> {
    let cfg = DecodeConfig {
        lang: Some(english()),
        ..Default::default()
    };
    repair_text(text, &cfg)
        .map(|gs| {
            gs.iter()
                .map(|g| g.plies.iter().map_while(|p| p.mv).collect())
                .collect()
        })
        .unwrap_or_default()
}

/// Prints NLL against the uniform baseline, and top-1 accuracy, on `data`.
fn report(label: &str, w: &[f32], data: &[Sample]) {
    let uniform = data
        .iter()
        .map(|s| (s.feats.len() as f64).ln())
        .sum::<f64>()
        / data.len() as f64;
    let (nll, top) = evaluate(w, data);
    println!(
        "{label} ({} positions): nll {nll:.4} (uniform {uniform:.4}), top-1 {:.2}%",
        data.len(),
        100.0 * top
    );
}

/// Whether game `j` of the training file is in one of the evaluation samples.
fn evaluated(j: usize) -> bool {
    let i = CORPUS_OFFSET + j;
    EVAL_SAMPLES
        .iter()
        .any(|&n| (0..n).any(|k| k * CORPUS_LEN / n == i))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("PGN file");
    let n_train: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let pgn = std::fs::read_to_string(path).expect("read PGN");
    let games = read_games(&pgn);
    let n_train = n_train.min(games.len());
    let train_games: Vec<Vec<Move>> = games[..n_train]
        .iter()
        .enumerate()
        .filter(|(j, _)| !evaluated(*j))
        .map(|(_, g)| g.clone())
        .collect();
    let train = samples(&train_games);
    let test = samples(&games[n_train..]);
    println!(
        "train: {} games ({} of the first {n_train} kept out as evaluation games)",
        train_games.len(),
        n_train - train_games.len()
    );
    // Full-batch Adam; L2 on the piece-square weights only.
    let (lr, l2, steps) = (0.05f64, 2e-4f64, 300);
    let (b1, b2, eps) = (0.9f64, 0.999f64, 1e-8f64);
    let mut w = vec![0.0f32; N_FEATURES];
    let mut m = vec![0.0f64; N_FEATURES];
    let mut v = vec![0.0f64; N_FEATURES];
    for step in 1..=steps {
        let mut g = gradient(&w, &train);
        for (k, gk) in g.iter_mut().enumerate().skip(N_DENSE) {
            *gk += l2 * f64::from(w[k]);
        }
        for k in 0..N_FEATURES {
            m[k] = b1 * m[k] + (1.0 - b1) * g[k];
            v[k] = b2 * v[k] + (1.0 - b2) * g[k] * g[k];
            let mh = m[k] / (1.0 - b1.powi(step));
            let vh = v[k] / (1.0 - b2.powi(step));
            w[k] -= (lr * mh / (vh.sqrt() + eps)) as f32;
        }
        if step % 50 == 0 {
            let (nll, top) = evaluate(&w, &train);
            eprintln!("step {step}: train nll {nll:.4} top-1 {:.2}%", 100.0 * top);
        }
    }
    report("train", &w, &train);
    report("held-out", &w, &test);
    let mut extra: Vec<Vec<Move>> = Vec::new();
    for a in args.iter().skip(3) {
        let path = std::path::Path::new(a);
        let files: Vec<std::path::PathBuf> = if path.is_dir() {
            let mut v: Vec<_> = std::fs::read_dir(path)
                .expect("read folder")
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    let n = p.to_string_lossy();
                    n.ends_with(".pgn") || n.ends_with(".moves.txt")
                })
                .collect();
            v.sort();
            v
        } else {
            vec![path.to_path_buf()]
        };
        for f in files {
            if let Ok(t) = std::fs::read_to_string(&f) {
                extra.extend(read_games(&t));
            }
        }
        if !extra.is_empty() {
            report(&format!("held-out {a}"), &w, &samples(&extra));
            extra.clear();
        }
    }
    let lines: Vec<String> = w
        .chunks(8)
        .map(|c| {
            let xs: Vec<String> = c.iter().map(|x| format!("{x:?}")).collect();
            format!("    {},", xs.join(", "))
        })
        .collect();
    let out = format!(
        "//! The move prior's fitted weights, written by\n\
         //! `cargo run --release --example train_prior` (see `models/move-prior.md`).\n\n\
         use super::prior::N_FEATURES;\n\n\
         /// Dense weights first, then the piece-square tables (see [`super::prior::features`]).\n\
         #[rustfmt::skip]\n\
         pub const WEIGHTS: [f32; N_FEATURES] = [\n{}\n];\n",
        lines.join("\n")
    );
    std::fs::write("src/decode/prior_weights.rs", out).expect("write src/decode/prior_weights.rs");
    println!("wrote src/decode/prior_weights.rs");
}
