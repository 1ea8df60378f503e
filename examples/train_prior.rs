//! Fits the move prior of `src/decode/prior.rs` on real games and prints its weights and
//! held-out figures.
//!
//! `cargo run --release --example train_prior -- datasets/games/malakhov_master.pgn [TRAIN_GAMES]`
//!
//! The first TRAIN_GAMES games (default 1000) train; the rest are held out. Further
//! arguments (files, or folders of `*.pgn` / `*.moves.txt`) are evaluated as a second
//! held-out set, e.g. `../shared/data/sheets/dev`.

use hamle::decode::prior::{features, N_FEATURES};
use hamle::decode::{repair_text, DecodeConfig};
use hamle::notation::english;
use shakmaty::{Chess, Move, Position};

struct Sample {
    feats: Vec<[f32; N_FEATURES]>,
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
fn evaluate(w: &[f32; N_FEATURES], data: &[Sample]) -> (f64, f64) {
    let (mut nll, mut top) = (0.0f64, 0usize);
    for s in data {
        let logits: Vec<f32> = s
            .feats
            .iter()
            .map(|f| f.iter().zip(w).map(|(a, b)| a * b).sum())
            .collect();
        let mx = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let z: f32 = logits.iter().map(|l| (l - mx).exp()).sum();
        nll += f64::from(z.ln() + mx - logits[s.played]);
        let best = logits
            .iter()
            .enumerate()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .map(|x| x.0);
        top += usize::from(best == Some(s.played));
    }
    (nll / data.len() as f64, top as f64 / data.len() as f64)
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
fn report(label: &str, w: &[f32; N_FEATURES], data: &[Sample]) {
    let uniform = data
        .iter()
        .map(|s| (s.feats.len() as f64).ln())
        .sum::<f64>()
        / data.len() as f64;
    let (nll, top) = evaluate(w, data);
    println!(
        "{label}: nll {nll:.4} (uniform {uniform:.4}), top-1 {:.2}%",
        100.0 * top
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).expect("PGN file");
    let n_train: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(1000);
    let pgn = std::fs::read_to_string(path).expect("read PGN");
    let games = read_games(&pgn);
    let (train, test) = games.split_at(n_train.min(games.len()));
    let train = samples(train);
    let test = samples(test);
    let mut w = [0.0f32; N_FEATURES];
    let lr = 3.0f32;
    for epoch in 0..200 {
        let mut grad = [0.0f64; N_FEATURES];
        for s in &train {
            let logits: Vec<f32> = s
                .feats
                .iter()
                .map(|f| f.iter().zip(&w).map(|(a, b)| a * b).sum())
                .collect();
            let mx = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let e: Vec<f32> = logits.iter().map(|l| (l - mx).exp()).collect();
            let z: f32 = e.iter().sum();
            for (f, p) in s.feats.iter().zip(&e) {
                for (g, x) in grad.iter_mut().zip(f) {
                    *g += f64::from(x * p / z);
                }
            }
            for (g, x) in grad.iter_mut().zip(&s.feats[s.played]) {
                *g -= f64::from(*x);
            }
        }
        for (wk, g) in w.iter_mut().zip(&grad) {
            *wk -= lr * (g / train.len() as f64) as f32;
        }
        if epoch % 50 == 49 {
            let (nll, top) = evaluate(&w, &train);
            eprintln!("epoch {epoch}: train nll {nll:.4} top1 {top:.4}");
        }
    }
    println!(
        "train positions {}, held-out positions {}",
        train.len(),
        test.len()
    );
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
    }
    if !extra.is_empty() {
        let extra = samples(&extra);
        report(
            &format!("extra held-out ({} positions)", extra.len()),
            &w,
            &extra,
        );
    }
    println!("pub const WEIGHTS: [f32; N_FEATURES] = {w:?};");
}
