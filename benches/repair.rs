//! Criterion benchmark of the repair engine on real games (datasets/games): Turkish move
//! text of games of 90–110 plies, clean and with 5% and 10% OCR-like noise.
//!
//! Run: `cargo bench --bench repair`.

use criterion::{criterion_group, criterion_main, Criterion};
use hamle::decode::{repair_text, DecodeConfig};
use hamle::eval::noise::{corrupt, MoveText, NoiseConfig, SplitMix64};
use hamle::notation::{english, turkish};
use hamle::record::GameResult;
use shakmaty::Chess;

/// Turkish texts of up to `n` real games of 90–110 plies.
fn games(n: usize) -> Vec<MoveText> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/datasets/games/malakhov_master.pgn"
    );
    let pgn = std::fs::read_to_string(path).expect("datasets/games is part of the repo");
    let cfg = DecodeConfig {
        lang: Some(english()),
        ..Default::default()
    };
    let mut out = Vec::new();
    for chunk in pgn.split("\n\n[Event ") {
        let Ok(gs) = repair_text(chunk, &cfg) else {
            continue;
        };
        for g in gs {
            let moves: Vec<_> = g.plies.iter().map_while(|p| p.mv).collect();
            if (90..=110).contains(&moves.len()) {
                if let Ok(t) =
                    MoveText::render(&Chess::default(), &moves, turkish(), GameResult::Unknown)
                {
                    out.push(t);
                }
            }
        }
        if out.len() >= n {
            break;
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let texts = games(10);
    let cfg = DecodeConfig {
        lang: Some(turkish()),
        ..Default::default()
    };
    let mut group = c.benchmark_group("repair_100_plies");
    group.sample_size(20);
    let clean: Vec<String> = texts.iter().map(|t| t.to_text()).collect();
    group.bench_function("clean", |b| {
        b.iter(|| {
            for t in &clean {
                let _ = repair_text(t, &cfg);
            }
        })
    });
    for rate in [0.05, 0.10] {
        let mut rng = SplitMix64::new(7);
        let noise = NoiseConfig::new(rate, 0.005).expect("valid rates");
        let noisy: Vec<String> = texts
            .iter()
            .map(|t| corrupt(t, &noise, &mut rng).text)
            .collect();
        group.bench_function(format!("noise_{rate:.2}"), |b| {
            b.iter(|| {
                for t in &noisy {
                    let _ = repair_text(t, &cfg);
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
