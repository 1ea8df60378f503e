//! Integration tests that run the real `hamle` binary.
//!
//! stop before it (usage errors, input errors, commands not there yet). The PGN checks run
//! `scripts/check_pgn.py` (python-chess) and skip when `python3 -c "import chess"` fails.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// The seed 001 sample game, as the seed writes it.
const SEED_001: &str = "1. d4 Af6 2. c4 e6 3. Af3 Fb4+ 4. Abd2 b6 5. a3 Fxd2+ 6. Fxd2 Fb7 \
                        7. b4 d6 8. Fg5 Abd7 9. e3 Ve7 10. Fe2 O-O-O 11. O-O Khf8 =\n";

const ENGLISH_PGN: &str = "[Event \"Test\"]\n[Site \"Ankara\"]\n[White \"A\"]\n[Black \"B\"]\n\
                           [Result \"1-0\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O \
                           Be7 6. Re1 b5 7. Bb3 d6 8. c3 O-O 1-0\n";

fn hamle(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_hamle"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run hamle");
    let mut pipe = child.stdin.take().expect("stdin");
    // hamle may exit before reading everything (a usage error); ignore a closed pipe.
    let _ = pipe.write_all(stdin);
    drop(pipe);
    child.wait_with_output().expect("wait for hamle")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("stdout is UTF-8")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A fresh file under cargo's temporary folder for integration tests.
fn temp_file(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli");
    std::fs::create_dir_all(&dir).expect("temp dir");
    // Tests run in parallel threads of one process: a counter keeps their files apart.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("{}_{n}_{name}", std::process::id()));
    std::fs::write(&path, bytes).expect("write temp file");
    path
}

fn no_panic(o: &Output) {
    let err = stderr(o);
    assert!(!err.contains("panicked"), "hamle panicked: {err}");
    assert!(
        o.status.code().is_some(),
        "killed by a signal: {:?}",
        o.status
    );
}

fn check_pgn_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/check_pgn.py")
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

/// Runs scripts/check_pgn.py on `pgn`, expecting `plies` mainline plies per game.
fn assert_python_chess_loads(pgn: &str, plies: &str) {
    let path = temp_file("check.pgn", pgn.as_bytes());
    let o = Command::new("python3")
        .arg(check_pgn_script())
        .arg(&path)
        .args(["--plies", plies])
        .output()
        .expect("run check_pgn.py");
    assert!(
        o.status.success(),
        "check_pgn.py failed:\n{}\n{}\n--- PGN ---\n{pgn}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn json_lines(o: &Output) -> Vec<Value> {
    stdout(o)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect()
}

// ---------------------------------------------------------------- without the engine

#[test]
fn empty_input_is_an_error() {
    for input in [&b""[..], b"   \n\t\r\n"] {
        let o = hamle(&["repair"], input);
        no_panic(&o);
        assert_eq!(o.status.code(), Some(1));
        assert!(o.stdout.is_empty());
        assert!(
            stderr(&o).contains("hamle: -: empty input"),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn binary_garbage_is_not_text() {
    // Deterministic garbage with control bytes: neither UTF-8 nor Windows-1254 text.
    let mut x: u32 = 12345;
    let garbage: Vec<u8> = (0..4096)
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (x >> 16) as u8
        })
        .chain([0xFF, 0x00, 0x01])
        .collect();
    let o = hamle(&["repair", "--format", "json"], &garbage);
    no_panic(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    let err = stderr(&o);
    assert!(err.contains("not text: invalid UTF-8 at byte "), "{err}");
}

#[test]
fn oversized_input_is_refused() {
    let o = hamle(&["repair", "--max-bytes", "10"], SEED_001.as_bytes());
    no_panic(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("input too large"), "{}", stderr(&o));
}

#[test]
fn missing_files_are_reported_each() {
    let o = hamle(&["repair", "no/such/a.txt", "no/such/b.txt"], b"");
    no_panic(&o);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("hamle: no/such/a.txt: "), "{err}");
    assert!(err.contains("hamle: no/such/b.txt: "), "{err}");
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["repair", "--lang", "xx"][..],
        &["repair", "--format", "fen"],
        &["repair", "--beam", "0"],
        &["repair", "--beam", "many"],
        &["nosuchcommand"],
        &[],
    ] {
        let o = hamle(args, b"");
        no_panic(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn help_and_version_exit_0() {
    let o = hamle(&["--help"], b"");
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("repair"));
    let o = hamle(&["repair", "--help"], b"");
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("--format"));
    let o = hamle(&["--version"], b"");
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).starts_with("hamle "));
}

#[test]
fn read_and_batch_usage_errors_exit_2() {
    for args in [
        &["read"][..],
        &["batch", "in"],
        &["batch", "-o", "out"],
        &["batch", "in", "-o", "out", "--jobs", "0"],
        &["read", "x.png", "--format", "xml"],
    ] {
        let o = hamle(args, b"");
        no_panic(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
    }
}

/// Writes a grey image to a temporary file.
fn temp_image(name: &str, w: u32, h: u32, fill: u8) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("hamle-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    image::GrayImage::from_pixel(w, h, image::Luma([fill]))
        .save(&p)
        .unwrap();
    p
}

#[test]
fn sheet_inputs_that_are_not_scoresheets_get_clear_messages() {
    let blank = temp_image("blank.png", 1000, 1400, 250);
    let tiny = temp_image("tiny.png", 40, 60, 250);
    let not_image = std::env::temp_dir().join(format!("hamle-cli-{}-x.png", std::process::id()));
    std::fs::write(&not_image, "1. e4 e5").unwrap();
    for (path, want) in [
        (blank.to_str().unwrap(), "no scoresheet move grid found"),
        (tiny.to_str().unwrap(), "too small"),
        (not_image.to_str().unwrap(), "cannot decode the image"),
        ("no/such/sheet.png", "cannot decode the image"),
    ] {
        let o = hamle(&["sheet", path], b"");
        no_panic(&o);
        assert_eq!(o.status.code(), Some(1), "{path}: {}", stderr(&o));
        assert!(stderr(&o).contains(want), "{path}: {}", stderr(&o));
        assert!(stdout(&o).is_empty());
    }
}

#[test]
fn eval_sheets_on_a_folder_without_labels_fails() {
    let dir = std::env::temp_dir().join(format!("hamle-cli-empty-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let o = hamle(&["eval", "sheets", dir.to_str().unwrap()], b"");
    no_panic(&o);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("no labelled sheets"), "{}", stderr(&o));
}

#[test]
fn eval_repair_on_a_missing_path_fails() {
    let o = hamle(&["eval", "repair", "no/such/dir"], b"");
    no_panic(&o);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).starts_with("hamle: "), "{}", stderr(&o));
}

// ---------------------------------------------------------------- with the engine

#[test]
fn eval_repair_reports_as_json() {
    let file = temp_file(
        "eval.pgn",
        format!("{ENGLISH_PGN}\n{ENGLISH_PGN}").as_bytes(),
    );
    let file = file.to_str().expect("UTF-8 temp path");
    let o = hamle(
        &[
            "eval", "repair", file, "--noise", "0.02", "--seed", "3", "--json",
        ],
        b"",
    );
    no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let reports = json_lines(&o);
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0]["games"], 2);
    assert_eq!(reports[0]["seed"], 3);
    let o = hamle(&["eval", "repair", file, "--noise", "0.02"], b"");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stdout(&o).is_empty());
}

#[test]
fn seed_001_in_turkish_to_json() {
    let o = hamle(&["repair", "--format", "json"], SEED_001.as_bytes());
    no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let games = json_lines(&o);
    assert_eq!(games.len(), 1);
    let g = &games[0];
    assert_eq!(g["file"], "-");
    assert_eq!(g["lang"], "tr");
    assert_eq!(g["flagged"], 0);
    let moves = g["moves"].as_array().expect("moves");
    assert_eq!(moves.len(), 22);
    for (i, m) in moves.iter().enumerate() {
        assert_eq!(m["ply"], i + 1);
        assert_eq!(m["status"], "ok", "ply {}: {m}", i + 1);
        assert_eq!(m["draw_offer"], i == 21, "ply {}", i + 1);
        let c = m["confidence"].as_f64().expect("confidence");
        assert!((0.0..=1.0).contains(&c));
    }
    assert_eq!(moves[21]["san"], "Rhf8");
    assert_eq!(moves[21]["tr"], "Khf8");
    assert_eq!(moves[19]["san"], "O-O-O");
    assert_eq!(moves[0]["read"], "d4");
    let pgn = g["pgn"].as_str().expect("pgn");
    assert!(pgn.contains("11. O-O Rhf8 {draw offer}"), "{pgn}");
}

#[test]
fn turkish_text_to_pgn_loads_in_python_chess() {
    let o = hamle(
        &["repair", "--format", "pgn", "--lang", "tr"],
        SEED_001.as_bytes(),
    );
    no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let pgn = stdout(&o);
    assert!(pgn.starts_with("[Event \"?\"]\n"), "{pgn}");
    assert!(pgn.contains("1. d4 Nf6 2. c4 e6 3. Nf3 Bb4+"), "{pgn}");
    if python_chess_available() {
        assert_python_chess_loads(&pgn, "22");
    }
}

#[test]
fn english_pgn_to_turkish_text() {
    let file = temp_file("english.pgn", ENGLISH_PGN.as_bytes());
    let file = file.to_str().expect("UTF-8 temp path");
    let o = hamle(&["repair", "--format", "tr", file], b"");
    no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "1. e4 e5 2. Af3 Ac6 3. Fb5 a6 4. Fa4 Af6 5. 0-0 Fe7 6. Ke1 b5 7. Fb3 d6 8. c3 0-0 \
         1-0\n\n"
    );
}

#[test]
fn english_pgn_keeps_its_headers_with_lang_auto() {
    let file = temp_file("headers.pgn", ENGLISH_PGN.as_bytes());
    let file = file.to_str().expect("UTF-8 temp path");
    let o = hamle(&["repair", "--lang", "auto", "--format", "json", file], b"");
    no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let g = &json_lines(&o)[0];
    assert_eq!(g["file"], file);
    assert_eq!(g["lang"], "en");
    assert_eq!(g["result"], "1-0");
    assert_eq!(g["headers"]["Event"], "Test");
    assert_eq!(g["headers"]["White"], "A");
    assert_eq!(g["moves"].as_array().map(Vec::len), Some(16));
    assert_eq!(g["flagged"], 0);
    let pgn = g["pgn"].as_str().expect("pgn");
    assert!(
        pgn.contains("[Event \"Test\"]\n[Site \"Ankara\"]\n"),
        "{pgn}"
    );
    assert!(pgn.contains("[Result \"1-0\"]"), "{pgn}");
    if python_chess_available() {
        assert_python_chess_loads(pgn, "16");
    }
}

#[test]
fn windows_1254_turkish_game_decodes() {
    // "1. e4 e5 2. Şe2 şe7 3. Şe1 Şe8" in the Turkish Windows code page (Ş = 0xDE, ş = 0xFE).
    let bytes = b"1. e4 e5 2. \xDEe2 \xFEe7 3. \xDEe1 \xDEe8\n";
    let o = hamle(&["repair", "--format", "json", "--lang", "tr"], bytes);
    no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("Windows-1254"), "{}", stderr(&o));
    let g = &json_lines(&o)[0];
    let moves = g["moves"].as_array().expect("moves");
    let tr: Vec<&str> = moves.iter().filter_map(|m| m["tr"].as_str()).collect();
    assert_eq!(tr, ["e4", "e5", "Şe2", "Şe7", "Şe1", "Şe8"]);
    assert_eq!(moves[2]["san"], "Ke2");
    assert_eq!(moves[2]["read"], "Şe2");
}

#[test]
fn text_garbage_gives_an_error_or_a_game_never_a_panic() {
    // Windows-1254-plausible garbage (no control bytes) reaches the engine.
    let mut x: u32 = 777;
    let garbage: Vec<u8> = (0..2000)
        .map(|_| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            match (x >> 16) as u8 {
                b @ 0x20..=0x7E | b @ 0xA0..=0xFF => b,
                _ => b' ',
            }
        })
        .collect();
    for format in ["pgn", "tr", "json"] {
        let o = hamle(&["repair", "--format", format], &garbage);
        no_panic(&o);
        assert!(matches!(o.status.code(), Some(0 | 1)), "{format}");
        if o.status.code() == Some(1) {
            assert!(!stderr(&o).is_empty());
        }
    }
}

#[test]
fn a_failed_input_does_not_stop_the_others() {
    let good = temp_file("good.txt", SEED_001.as_bytes());
    let good = good.to_str().expect("UTF-8 temp path");
    let o = hamle(&["repair", "--format", "json", "no/such.txt", good], b"");
    no_panic(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("hamle: no/such.txt: "));
    let games = json_lines(&o);
    assert_eq!(games.len(), 1);
    assert_eq!(games[0]["file"], good);
}

#[test]
fn a_closed_stdout_is_not_a_failure() {
    // 150 short games: far more JSON than a pipe buffers, so writes meet the closed pipe.
    let input = "1. e4 e5 2. Af3 Ac6 *\n".repeat(150);
    let mut child = Command::new(env!("CARGO_BIN_EXE_hamle"))
        .args(["repair", "--format", "json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run hamle");
    let mut pipe = child.stdin.take().expect("stdin");
    pipe.write_all(input.as_bytes()).expect("write stdin");
    drop(pipe);
    let mut out = child.stdout.take().expect("stdout");
    let mut first = [0u8; 16];
    out.read_exact(&mut first).expect("some output");
    drop(out);
    let o = child.wait_with_output().expect("wait");
    no_panic(&o);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}
