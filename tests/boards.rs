//! Boards end to end: the real dev boards (skipped when `../shared/data` is missing) and inputs
//! that are not boards, through the library and the real `hamle` binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use hamle::board::{self, BoardConfig, BoardError, BoardKind};
use hamle::eval::boards;
use hamle::eval::noise::SplitMix64;

fn dev_dir() -> Option<PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/boards/dev");
    if d.is_dir() {
        Some(d)
    } else {
        eprintln!("skipped: {} is missing", d.display());
        None
    }
}

fn hamle(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hamle"))
        .args(args)
        .output()
        .expect("run hamle")
}

/// Runs hamle, which must succeed, and parses what it printed as one JSON value.
fn hamle_json(args: &[&str]) -> serde_json::Value {
    let o = hamle(args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

fn temp_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("hamle-boards-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// An empty drawn board (light 235, dark 110) inside a white margin.
fn drawn_board(sq: u32, margin: u32) -> image::GrayImage {
    let side = 8 * sq + 2 * margin;
    image::GrayImage::from_fn(side, side, |x, y| {
        let inside =
            (margin..margin + 8 * sq).contains(&x) && (margin..margin + 8 * sq).contains(&y);
        let dark = inside && ((x - margin) / sq + (y - margin) / sq) % 2 == 1;
        image::Luma([if dark {
            110
        } else if inside {
            235
        } else {
            250
        }])
    })
}

/// `--format fen` prints the FEN alone on stdout and the reading's flags on stderr: an empty
/// drawn board has no kings.
#[test]
fn fen_output_tells_its_flags_on_stderr() {
    let dir = temp_dir();
    let path = dir.join("flags-empty.png");
    drawn_board(36, 20).save(&path).unwrap();
    let o = hamle(&["board", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.starts_with("8/8/8/8/8/8/8/8 "), "{out}");
    assert_eq!(out.lines().count(), 1, "{out}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("flags-empty.png") && err.contains("king"),
        "{err}"
    );
}

/// The dev boards read at least this well. Floors well below the figures measured when
/// this was written (book 35/37 exact, photo 11/13, mixed 8/13, squares 95.6 %; see the
/// report of `hamle eval boards`), to catch regressions, not to tune to 63 images.
#[test]
fn dev_boards_floor() {
    let Some(dir) = dev_dir() else { return };
    let r = boards::run(&dir, &BoardConfig::default()).unwrap();
    eprintln!("{r}");
    assert!(r.all.images >= 60, "only {} dev boards", r.all.images);
    let book = &r.by_prefix["book"];
    assert!(
        book.exact as f64 >= 0.80 * book.images as f64,
        "book exact {}",
        book.exact
    );
    let photo = &r.by_prefix["photo"];
    assert!(
        photo.exact as f64 >= 0.60 * photo.images as f64,
        "photo exact {}",
        photo.exact
    );
    let mixed = &r.by_prefix["mixed"];
    assert!(
        mixed.exact as f64 >= 0.35 * mixed.images as f64,
        "mixed exact {}",
        mixed.exact
    );
    assert!(
        r.all.square_accuracy >= 0.90,
        "squares {}",
        r.all.square_accuracy
    );
    assert!(r.all.failures <= 5, "{} without a board", r.all.failures);
}

/// A book diagram through the binary: a FEN line, and JSON with DESIGN.md's fields.
#[test]
fn dev_board_through_the_binary() {
    let Some(dir) = dev_dir() else { return };
    let img = dir.join("book-081a5ff01e.png");
    if !img.is_file() {
        eprintln!("skipped: {} is missing", img.display());
        return;
    }
    let want = std::fs::read_to_string(img.with_extension("fen")).unwrap();
    let o = hamle(&["board", img.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let line = String::from_utf8(o.stdout).unwrap();
    assert!(line.starts_with(want.trim()), "{line}");
    let o = hamle(&[
        "board",
        "--format",
        "json",
        "--side",
        "b",
        img.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for field in [
        "file",
        "placement",
        "fen",
        "orientation",
        "confidence",
        "squares",
        "corners",
        "flags",
        "low_confidence",
        "seconds",
        "side_given",
    ] {
        assert!(v.get(field).is_some(), "no {field}: {v}");
    }
    assert_eq!(v["placement"], want.trim());
    assert_eq!(v["orientation"], "white");
    assert_eq!(v["side_given"], true);
    assert_eq!(v["side_from"], "given");
    assert!(v["fen"].as_str().unwrap().contains(" b "));
    assert_eq!(v["squares"].as_array().unwrap().len(), 64);
    assert_eq!(v["corners"].as_array().unwrap().len(), 4);
}

/// The library on a drawn empty board: found, read as (mostly) empty, flagged.
#[test]
fn drawn_board_through_the_library() {
    let p = temp_dir().join("drawn.png");
    drawn_board(40, 30).save(&p).unwrap();
    let r = board::read_file(&p, &BoardConfig::default()).unwrap();
    assert!((r.corners[0][0] - 30.0).abs() <= 2.0, "{:?}", r.corners);
    assert!((r.corners[2][1] - 350.0).abs() <= 2.0, "{:?}", r.corners);
    assert!(
        r.flags.iter().any(|f| f.contains("no white king")),
        "{:?}",
        r.flags
    );
}

/// `--kind auto` decodes a large JPEG at a reduced size (here 1/2: 3,000 pixels, at least
/// 2 × 1,280) and gives its corners in the file's own pixels, as `--kind diagram` does
/// from the whole image.
#[test]
fn a_large_jpeg_read_as_auto_keeps_its_pixels() {
    let p = temp_dir().join("drawn-large.jpg");
    drawn_board(340, 140).save(&p).unwrap();
    let (lo, hi) = (140.0, 140.0 + 8.0 * 340.0);
    for kind in [BoardKind::Auto, BoardKind::Diagram] {
        let cfg = BoardConfig {
            kind,
            ..BoardConfig::default()
        };
        let r = board::read_file(&p, &cfg).unwrap();
        let want = [[lo, lo], [hi, lo], [hi, hi], [lo, hi]];
        for (c, w) in r.corners.iter().zip(want) {
            assert!(
                (c[0] - w[0]).abs() <= 12.0 && (c[1] - w[1]).abs() <= 12.0,
                "{kind:?}: {:?}",
                r.corners
            );
        }
    }
}

/// Inputs that are not boards: a clear message, exit code 1, no panic; good inputs beside
/// them are still printed.
#[test]
fn bad_inputs_fail_cleanly() {
    let dir = temp_dir();
    let not_image = dir.join("text.png");
    std::fs::write(&not_image, "1. e4 e5").unwrap();
    let empty = dir.join("empty.png");
    std::fs::write(&empty, b"").unwrap();
    let tiny = dir.join("tiny.png");
    image::GrayImage::from_pixel(12, 12, image::Luma([200]))
        .save(&tiny)
        .unwrap();
    let blank = dir.join("blank.png");
    image::GrayImage::from_pixel(400, 300, image::Luma([250]))
        .save(&blank)
        .unwrap();
    // Blurred colour noise (a fixed generator): until session 43 such noise could read as
    // a photo of a set (an empty board with a rook and a pawn, confidence 0.45).
    let noise = dir.join("noise.png");
    let mut rng = SplitMix64::new(43);
    let raw = image::RgbImage::from_fn(800, 600, |_, _| {
        image::Rgb(std::array::from_fn(|_| (rng.next_u64() >> 56) as u8))
    });
    imageproc::filter::gaussian_blur_f32(&raw, 3.0)
        .save(&noise)
        .unwrap();
    // Not small, but too narrow once scaled to the working size: named at its own size.
    let strip = dir.join("strip.png");
    image::GrayImage::from_pixel(5000, 40, image::Luma([128]))
        .save(&strip)
        .unwrap();
    let good = dir.join("good.png");
    drawn_board(32, 10).save(&good).unwrap();
    for (p, want) in [
        (&noise, "no board"),
        (&strip, "too narrow for a board (5000×40 px"),
        (&not_image, "cannot decode"),
        (&empty, "cannot decode"),
        (&tiny, "too small"),
        (&blank, "no board"),
    ] {
        match board::read_file(p, &BoardConfig::default()) {
            Err(e) => assert!(e.to_string().contains(want), "{}: {e}", p.display()),
            Ok(r) => panic!("{}: read {}", p.display(), r.fen),
        }
        let o = hamle(&["board", p.to_str().unwrap(), good.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{}: {err}", p.display());
        assert!(err.contains(want) && !err.contains("panicked"), "{err}");
        assert_eq!(String::from_utf8_lossy(&o.stdout).lines().count(), 1);
    }
    assert!(matches!(
        board::read_file(&blank, &BoardConfig::default()),
        Err(BoardError::Locate(_))
    ));
    let o = hamle(&["board", good.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    let o = hamle(&["board", "--format", "pgn", good.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
}

/// `eval boards` on a folder made here: the report and its JSON.
#[test]
fn eval_boards_on_a_made_folder() {
    let dir = temp_dir().join("eval");
    std::fs::create_dir_all(&dir).unwrap();
    drawn_board(36, 20)
        .save(dir.join("book-empty.png"))
        .unwrap();
    std::fs::write(dir.join("book-empty.fen"), "8/8/8/8/8/8/8/8\n").unwrap();
    let o = hamle(&["eval", "boards", dir.to_str().unwrap(), "--json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["all"]["images"], 1);
    assert!(v["by_prefix"]["book"].is_object());
    let o = hamle(&[
        "eval",
        "boards",
        temp_dir().join("nothing-here").to_str().unwrap(),
    ]);
    assert_ne!(o.status.code(), Some(0));
}

/// `hamle board samples/NAME.png ARGS…` through the real binary, which must succeed: its
/// stdout and the sample's label (`NAME.fen`).
fn board_sample(name: &str, args: &[&str]) -> (String, String) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let want = std::fs::read_to_string(dir.join(format!("{name}.fen"))).unwrap();
    let img = dir.join(format!("{name}.png"));
    let mut all = vec!["board", img.to_str().unwrap()];
    all.extend_from_slice(args);
    let o = hamle(&all);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    (String::from_utf8_lossy(&o.stdout).into_owned(), want)
}

/// The bundled sample (a python-chess diagram on a page beside text; made by
/// `scripts/make_board_sample.py`) reads as its label through the real binary.
#[test]
fn bundled_sample_reads_exactly() {
    let (got, want) = board_sample("board-page", &["--format", "fen"]);
    assert_eq!(got.split_whitespace().next(), Some(want.trim()), "{got}");
    // The game ended with White's queen checking Black's king: Black is to move.
    assert_eq!(got.split_whitespace().nth(1), Some("b"), "{got}");
    let (json, _) = board_sample("board-page", &["--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["side_from"], "check");
    assert!(v["flags"].as_array().unwrap().is_empty(), "{v}");
}

/// A diagram printed from Black's side whose kings and pawns stand as White's would with
/// White at the bottom: its printed coordinates (h..a, 1..8 downwards) settle the side, the
/// JSON says so, and without them the pieces get it wrong.
#[test]
fn printed_coordinates_turn_a_board_shown_from_blacks_side() {
    let (json, want) = board_sample("board-flipped", &["--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["placement"], want.trim(), "{v}");
    assert_eq!(v["orientation"], "black", "{v}");
    assert_eq!(v["orientation_from"], "coordinates", "{v}");
    assert!(v["coordinates"]["agree"].as_u64().unwrap() >= 8, "{v}");
    let (json, _) = board_sample("board-flipped", &["--format", "json", "--no-coordinates"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["orientation_from"], "pieces", "{v}");
    assert_eq!(v["orientation"], "white", "{v}");
}

/// Two boards on one page: the larger one is read.
#[test]
fn of_two_boards_the_larger_is_read() {
    let big = drawn_board(40, 0);
    let small = drawn_board(24, 0);
    let mut page = image::GrayImage::from_pixel(
        big.width() + small.width() + 120,
        big.height() + 80,
        image::Luma([250]),
    );
    image::imageops::replace(&mut page, &small, 30, 40);
    image::imageops::replace(&mut page, &big, (small.width() + 90) as i64, 40);
    let r = board::read_gray(&page, &BoardConfig::default()).unwrap();
    let x0 = r.corners[0][0];
    let width = r.corners[1][0] - x0;
    assert!((width - 320.0).abs() <= 4.0, "{:?}", r.corners);
    assert!(
        (x0 - (small.width() + 90) as f32).abs() <= 3.0,
        "{:?}",
        r.corners
    );
}

/// Two real diagrams on one page, the smaller one a crisper lattice (it scores higher):
/// still the larger one is read.
#[test]
fn of_two_dev_diagrams_the_larger_is_read() {
    let Some(dir) = dev_dir() else { return };
    let (Ok(a), Ok(b)) = (
        image::open(dir.join("book-081a5ff01e.png")),
        image::open(dir.join("book-1931e99a9a.png")),
    ) else {
        eprintln!("skipped: the two dev diagrams are missing");
        return;
    };
    let a = a.to_luma8();
    let b = b.to_luma8();
    let b = image::imageops::resize(
        &b,
        b.width() * 6 / 10,
        b.height() * 6 / 10,
        image::imageops::FilterType::Triangle,
    );
    let mut page = image::GrayImage::from_pixel(
        a.width() + b.width() + 60,
        a.height().max(b.height()) + 40,
        image::Luma([255]),
    );
    image::imageops::replace(&mut page, &a, 20, 20);
    image::imageops::replace(&mut page, &b, i64::from(a.width() + 40), 20);
    let r = board::read_gray(&page, &BoardConfig::default()).unwrap();
    let want = std::fs::read_to_string(dir.join("book-081a5ff01e.fen")).unwrap();
    assert_eq!(r.placement, want.trim());
}

/// The bundled render of a physical set (held-out piece set, board and light; made by
/// `scripts/render_3d.py --split test`, the first test scene's second view): read as a
/// photo of a set, most squares right, and its JSON says which pipeline read it. A floor
/// below what the shipped models read (61/64 turned, 63/64 with the first piece model), to
/// catch regressions.
#[test]
fn bundled_photo_of_a_set() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let want = board::parse_placement(&std::fs::read_to_string(dir.join("board-set.fen")).unwrap())
        .unwrap();
    let img = dir.join("board-set.jpg");
    let v = hamle_json(&[
        "board",
        img.to_str().unwrap(),
        "--kind",
        "physical",
        "--format",
        "json",
    ]);
    assert_eq!(v["kind"], "physical");
    assert_eq!(v["corners"].as_array().unwrap().len(), 4);
    // The floor is on the squares as read (this endgame's rooks stand in the other camp:
    // piece votes turned it 180° until session 40, the square prior's fit does not), and
    // in the best of the four orientations (orientation is measured on the whole test set
    // by `hamle eval boards`, see the README).
    let got = board::parse_placement(v["placement"].as_str().unwrap()).unwrap();
    let right = (0..64)
        .filter(|&i| got[i / 8][i % 8] == want[i / 8][i % 8])
        .count();
    assert!(right >= 56, "{right}/64 squares right: {}", v["placement"]);
    let (_, right) = board::best_turns(&got, &want);
    assert!(right >= 56, "{right}/64 squares right: {}", v["placement"]);
    // auto: no diagram in it, so it is read as a set too (looking at each crop once, where
    // `--kind physical` also looks at its mirror image: the readings may differ slightly)
    let o = hamle(&["board", img.to_str().unwrap(), "--format", "json"]);
    let a: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(a["kind"], "physical");
    let got = board::parse_placement(a["placement"].as_str().unwrap()).unwrap();
    let (_, right) = board::best_turns(&got, &want);
    assert!(
        right >= 56,
        "auto: {right}/64 squares right: {}",
        a["placement"]
    );
}

/// `hamle sheet samples/sheet-tr.jpg --final-board samples/PHOTO --format json`, which must
/// succeed.
fn sheet_with_final_board(photo: &str) -> serde_json::Value {
    sheet_with_final_board_as(photo, "auto")
}

/// [`sheet_with_final_board`] with `--final-board-kind KIND`.
fn sheet_with_final_board_as(photo: &str, kind: &str) -> serde_json::Value {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let sheet = dir.join("sheet-tr.jpg");
    let photo = dir.join(photo);
    hamle_json(&[
        "sheet",
        sheet.to_str().unwrap(),
        "--final-board",
        photo.to_str().unwrap(),
        "--final-board-kind",
        kind,
        "--format",
        "json",
    ])
}

/// `hamle sheet --final-board` with a diagram of the game's own final position
/// (`scripts/final_boards.py samples --diagrams`): confirmed, nothing changed.
#[test]
fn final_board_check_confirms_the_same_position() {
    let v = sheet_with_final_board("sheet-tr-final.png");
    let fb = &v["final_board"];
    assert_eq!(fb["agrees"], true, "{fb}");
    assert_eq!(fb["agreeing_squares"], 64);
    // read both ways (`auto`), the diagram's reading is the one that agrees
    assert_eq!(fb["read_as"], "diagram", "{fb}");
    assert!(fb["changed"].as_array().unwrap().is_empty());
    assert!(v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("confirmed by the photo")));
}

/// `hamle sheet --final-board`: a game checked against a photo of another position is
/// flagged, with the squares that differ, in a note and in the JSON.
#[test]
fn final_board_check_flags_a_different_position() {
    let v = sheet_with_final_board("board-set.jpg");
    let fb = &v["final_board"];
    assert_eq!(fb["agrees"], false, "{fb}");
    assert!(fb["agreeing_squares"].as_u64().unwrap() < 64);
    assert!(!fb["differs"].as_array().unwrap().is_empty());
    assert!(v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("differs from the photo")));
    // told what the photo shows, it is read that way only: the diagram as a set does not
    // find the sheet's final position
    let fb = &sheet_with_final_board_as("board-set.jpg", "physical")["final_board"];
    assert_eq!(fb["read_as"], "physical", "{fb}");
    let fb = &sheet_with_final_board_as("sheet-tr-final.png", "physical")["final_board"];
    assert_eq!(fb["read_as"], "physical", "{fb}");
    assert!(fb["agreeing_squares"].as_u64().unwrap() < 64, "{fb}");
    // two sheets and one photo: refused with a message (as `--second` is)
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let (sheet, photo) = (dir.join("sheet-tr.jpg"), dir.join("board-set.jpg"));
    let o = hamle(&[
        "sheet",
        sheet.to_str().unwrap(),
        sheet.to_str().unwrap(),
        "--final-board",
        photo.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--final-board"));
}

/// The diagram corner model (`models/corners2d.onnx`) checks the lattice search's board
/// but must not take a ruled scoresheet for one (it sees a lattice there too): the bundled
/// sheet is no board, as a diagram or as anything. And on a plain drawn board, which the
/// lattice search finds exactly, the check leaves the box where it is.
#[test]
fn the_corner_check_takes_no_scoresheet_and_keeps_a_right_box() {
    let sheet = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/sheet-tr.jpg");
    for kind in [board::BoardKind::Diagram, board::BoardKind::Auto] {
        let cfg = BoardConfig {
            kind,
            ..BoardConfig::default()
        };
        match board::read_file(&sheet, &cfg) {
            Err(e) => assert!(e.to_string().contains("no board"), "{kind:?}: {e}"),
            Ok(r) => panic!("{kind:?}: the scoresheet read as the board {}", r.fen),
        }
    }
    let img = drawn_board(30, 24);
    let with = board::Found::find_with(&img, true, true).unwrap();
    let without = board::Found::find_with(&img, true, false).unwrap();
    assert_eq!(with.corners(), without.corners());
}

/// The held-out photos still held out (sets 3 to 6 of `datasets/boards-heldout`, 125
/// hand-typed corners-3lc photos) read at least this well. A floor below what the shipped
/// models read (104/125 exact as `auto`: 77/94 on sets 3-5, 27/31 on set 6; README) and
/// above session 11's 68/94 on sets 3-5, to catch regressions. Skipped without
/// `../shared/data`.
#[test]
fn held_out_photos_floor() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let images = root.join("../shared/data/boards/train/corners-3lc/images");
    if !images.is_dir() {
        eprintln!("skipped: {} is missing", images.display());
        return;
    }
    let dir = temp_dir().join("held-out");
    std::fs::create_dir_all(&dir).unwrap();
    let labels = std::fs::read_to_string(root.join("datasets/boards-heldout/labels.tsv")).unwrap();
    let mut n = 0;
    for line in labels.lines().filter(|l| !l.starts_with('#')) {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() < 3 || f[1] == "-" || !matches!(f[2], "3" | "4" | "5" | "6") {
            continue;
        }
        let stem = f[0].rsplit_once('.').map_or(f[0], |s| s.0);
        std::fs::copy(images.join(f[0]), dir.join(format!("photo-{stem}.jpg"))).unwrap();
        std::fs::write(dir.join(format!("photo-{stem}.fen")), f[1]).unwrap();
        n += 1;
    }
    assert_eq!(n, 125);
    let r = boards::run(&dir, &BoardConfig::default()).unwrap();
    eprintln!("{r}");
    assert_eq!(r.all.images, 125);
    assert!(
        r.all.exact >= 96,
        "{} of 125 held-out photos exact",
        r.all.exact
    );
    assert!(r.all.square_accuracy >= 0.97, "{}", r.all.square_accuracy);
}
