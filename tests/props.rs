//! Property tests: the lexer and the repair engine never panic on any text, and any
//! legal game written in Turkish or English reads back move for move.

use hamle::decode::{repair_text, DecodeConfig};
use hamle::notation::{english, format::san_string, lexer::lex, turkish, Lang};
use hamle::record::Status;
use proptest::prelude::*;
use shakmaty::san::SanPlus;
use shakmaty::{Chess, Position};

/// A legal game of up to `plies` plies, choosing each move by `picks`.
fn game(picks: &[u16]) -> Vec<shakmaty::Move> {
    let mut pos = Chess::default();
    let mut out = Vec::new();
    for &p in picks {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            break;
        }
        let m = moves[p as usize % moves.len()];
        pos.play_unchecked(m);
        out.push(m);
    }
    out
}

fn write(moves: &[shakmaty::Move], lang: &Lang) -> String {
    let mut pos = Chess::default();
    let mut s = String::new();
    for (i, m) in moves.iter().enumerate() {
        if i % 2 == 0 {
            s.push_str(&format!("{}. ", i / 2 + 1));
        }
        let ep = m.is_en_passant();
        let san = SanPlus::from_move_and_play_unchecked(&mut pos, *m);
        s.push_str(&san_string(&san, lang, ep));
        s.push(' ');
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn lexer_never_panics(text in "\\PC{0,300}") {
        let _ = lex(&text);
    }

    #[test]
    fn repair_never_panics_on_any_text(text in "\\PC{0,120}") {
        let _ = repair_text(&text, &DecodeConfig::default());
    }

    #[test]
    fn repair_never_panics_on_move_like_text(
        text in "([0-9]{1,3}\\.{0,3} )?([ŞVKFAQRBNSO0a-h1-8x+#=-]{1,6} ?){1,40}"
    ) {
        let _ = repair_text(&text, &DecodeConfig::default());
    }

    #[test]
    fn legal_games_read_back_in_both_languages(picks in proptest::collection::vec(any::<u16>(), 1..80)) {
        let moves = game(&picks);
        prop_assume!(!moves.is_empty());
        for lang in [turkish(), english()] {
            let text = write(&moves, lang);
            let cfg = DecodeConfig { lang: Some(lang), ..Default::default() };
            let games = repair_text(&text, &cfg).unwrap();
            prop_assert_eq!(games.len(), 1);
            let got: Vec<shakmaty::Move> = games[0].plies.iter().map_while(|p| p.mv).collect();
            prop_assert_eq!(&got, &moves, "{}", text);
            prop_assert!(games[0].plies.iter().all(|p| p.status == Status::Ok));
        }
    }
}

/// Real games (datasets/games): English PGN → Turkish text → English, move for move.
#[test]
fn real_games_round_trip_turkish_english() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/datasets/games/lichess_classical.pgn"
    );
    let pgn = std::fs::read_to_string(path).expect("datasets/games is in the repo");
    let en = DecodeConfig {
        lang: Some(english()),
        ..Default::default()
    };
    let games = repair_text(&pgn, &en).unwrap();
    assert!(games.len() >= 90, "{} games", games.len());
    for g in games.iter().take(40) {
        let moves: Vec<shakmaty::Move> = g.plies.iter().map_while(|p| p.mv).collect();
        assert_eq!(moves.len(), g.plies.len());
        let tr_text = hamle::output::tr::to_string(g);
        let back = repair_text(&tr_text, &DecodeConfig::default()).unwrap();
        assert_eq!(back[0].lang.code, "tr");
        let again: Vec<shakmaty::Move> = back[0].plies.iter().map_while(|p| p.mv).collect();
        assert_eq!(again, moves, "{tr_text}");
        let en_text = hamle::output::pgn::to_string(&back[0]);
        let third = repair_text(&en_text, &DecodeConfig::default()).unwrap();
        assert_eq!(third[0].lang.code, "en");
        let last: Vec<shakmaty::Move> = third[0].plies.iter().map_while(|p| p.mv).collect();
        assert_eq!(last, moves);
    }
}
