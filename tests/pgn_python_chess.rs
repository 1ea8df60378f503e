//! The PGN writer checked by an independent reader: games built by hand (doubtful plies,
//! draw offers, a ply without a move, checkmate, en passant, promotion, a custom start,
//! hostile text in comments and tags) are written with `hamle::output::pgn` and loaded
//! by python-chess through `scripts/check_pgn.py`. Skips when python-chess is missing.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use hamle::notation::english;
use hamle::output::pgn;
use hamle::record::{Game, GameResult, PlyRecord, Status, Termination};
use shakmaty::fen::Fen;
use shakmaty::san::{San, SanPlus};
use shakmaty::{CastlingMode, Chess};

fn plies(start: &Chess, sans: &[&str]) -> Vec<PlyRecord> {
    let mut pos = start.clone();
    sans.iter()
        .enumerate()
        .map(|(i, s)| {
            let m = s.parse::<San>().unwrap().to_move(&pos).unwrap();
            let san = SanPlus::from_move_and_play_unchecked(&mut pos, m);
            PlyRecord {
                ply: u32::try_from(i + 1).unwrap(),
                mv: Some(m),
                san: Some(san),
                read: Some((*s).to_string()),
                confidence: 0.9,
                status: Status::Ok,
                draw_offer: false,
                alternatives: Vec::new(),
                evidence: Default::default(),
            }
        })
        .collect()
}

fn game(start: Chess, sans: &[&str], result: GameResult) -> Game {
    Game {
        headers: Vec::new(),
        lang: english(),
        plies: plies(&start, sans),
        start,
        result,
        termination: Termination::ResultGiven,
        ignored: Vec::new(),
        notes: Vec::new(),
    }
}

fn python_chess_available() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import chess.pgn"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: python3 with python-chess not available");
    }
    ok
}

/// Writes the games into one PGN file and checks it with scripts/check_pgn.py.
fn check(name: &str, games: &[Game], plies: &str) {
    if !python_chess_available() {
        return;
    }
    let mut buf = Vec::new();
    for g in games {
        pgn::write(g, &mut buf).unwrap();
        buf.push(b'\n');
    }
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pgn_python_chess");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{}_{name}.pgn", std::process::id()));
    std::fs::write(&path, &buf).unwrap();
    let o = Command::new("python3")
        .arg(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/check_pgn.py"))
        .arg(&path)
        .args(["--plies", plies, "--games", &games.len().to_string()])
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}\n{}\n--- PGN ---\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
        String::from_utf8_lossy(&buf)
    );
}

const SEED_001: &[&str] = &[
    "d4", "Nf6", "c4", "e6", "Nf3", "Bb4+", "Nbd2", "b6", "a3", "Bxd2+", "Bxd2", "Bb7", "b4", "d6",
    "Bg5", "Nbd7", "e3", "Qe7", "Be2", "O-O-O", "O-O", "Rhf8",
];

#[test]
fn doubtful_plies_and_draw_offer() {
    let mut g = game(Chess::default(), SEED_001, GameResult::Draw);
    g.headers = vec![
        ("Event".into(), "Kulüp \"şampiyonası\" \\ 2024".into()),
        ("White".into(), "Ayşe\nYılmaz".into()),
        ("Annotator".into(), "hamle".into()),
    ];
    g.plies[4].status = Status::Corrected;
    g.plies[4].read = Some("Af4}".into());
    g.plies[9].status = Status::Illegal;
    g.plies[9].read = Some("Fxd9+".into());
    g.plies[12].status = Status::Unreadable;
    g.plies[12].read = Some("~~ {1. e4} ; %x".into());
    g.plies[16].status = Status::Missing;
    g.plies[16].read = None;
    g.plies[21].draw_offer = true;
    g.notes.push("a note; with 1. e4 e5 in it".into());
    g.ignored = vec!["%junk".into(), "1-0".into(), ";".into()];
    check("doubtful", &[g], "22");
}

#[test]
fn a_ply_without_a_move_ends_the_movetext() {
    let mut g = game(
        Chess::default(),
        &["e4", "e5", "Nf3"],
        GameResult::WhiteWins,
    );
    let mut bad = g.plies[2].clone();
    bad.ply = 4;
    bad.mv = None;
    bad.san = None;
    bad.status = Status::Illegal;
    bad.read = Some("Ke9".into());
    g.plies.push(bad.clone());
    bad.ply = 5;
    bad.read = Some("Bb5 } 2. d4".into());
    g.plies.push(bad);
    check("stop", &[g], "3");
}

#[test]
fn checkmate_en_passant_promotion_and_a_custom_start() {
    let mate = game(
        Chess::default(),
        &["e4", "e5", "Bc4", "Nc6", "Qh5", "Nf6", "Qxf7#"],
        GameResult::WhiteWins,
    );
    let ep = game(
        Chess::default(),
        &["e4", "Nf6", "e5", "d5", "exd6", "cxd6"],
        GameResult::Unknown,
    );
    let start: Chess = "8/1P4k1/8/8/8/8/5K2/8 b - - 12 57"
        .parse::<Fen>()
        .unwrap()
        .into_position(CastlingMode::Standard)
        .unwrap();
    let promo = game(
        start,
        &["Kf7", "b8=Q", "Ke7", "Qb7+"],
        GameResult::WhiteWins,
    );
    let long = game(Chess::default(), SEED_001, GameResult::Unknown);
    check("mixed", &[mate, ep, promo, long], "7,6,4,22");
}

#[test]
fn an_empty_game() {
    check(
        "empty",
        &[game(Chess::default(), &[], GameResult::Unknown)],
        "0",
    );
}
