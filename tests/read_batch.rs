//! `hamle read` and `hamle batch` end to end through the real binary: PDFs (a scanned-style
//! PDF written here from the bundled samples), multi-page TIFFs, folders with bad files in
//! them, resuming a batch and killing one half-way.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn sample(name: &str) -> PathBuf {
    root().join("samples").join(name)
}

fn hamle(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hamle"))
        .args(args)
        .output()
        .expect("run hamle")
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("hamle-rb-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

fn lines(s: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(s)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The sample sheet's labelled moves (English SAN).
fn sheet_truth() -> Vec<String> {
    fs::read_to_string(sample("sheet-tr.moves.txt"))
        .unwrap()
        .split_whitespace()
        .filter(|w| !w.ends_with('.'))
        .map(str::to_string)
        .collect()
}

fn sans(record: &Value) -> Vec<String> {
    record["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["san"].as_str().unwrap_or("").to_string())
        .collect()
}

/// Share of `truth` read right, ply by ply.
fn right_share(read: &[String], truth: &[String]) -> f64 {
    let right = read.iter().zip(truth).filter(|(a, b)| a == b).count();
    right as f64 / truth.len() as f64
}

/// One page image of a hand-written PDF: raw grey pixels, or JPEG bytes (`DCTDecode`).
enum PdfImage {
    Gray(image::GrayImage),
    Jpeg {
        bytes: Vec<u8>,
        w: u32,
        h: u32,
        comps: u8,
    },
    Blank,
}

/// A minimal PDF, one image per page drawn over the whole page at 150 dpi, the way scanners
/// and `img2pdf` write them.
fn pdf_of(pages: &[PdfImage]) -> Vec<u8> {
    let mut objs: Vec<Vec<u8>> = Vec::new();
    let n = pages.len();
    // 1 catalog, 2 pages, then per page: page, content, image.
    let kids: Vec<String> = (0..n).map(|i| format!("{} 0 R", 3 + 3 * i)).collect();
    objs.push(b"<< /Type /Catalog /Pages 2 0 R >>".to_vec());
    objs.push(format!("<< /Type /Pages /Kids [{}] /Count {n} >>", kids.join(" ")).into_bytes());
    for (i, p) in pages.iter().enumerate() {
        let (page, content, image) = (3 + 3 * i, 4 + 3 * i, 5 + 3 * i);
        let (w, h, dict, data) = match p {
            PdfImage::Gray(g) => (
                g.width(),
                g.height(),
                format!(
                    "/ColorSpace /DeviceGray /Width {} /Height {}",
                    g.width(),
                    g.height()
                ),
                g.as_raw().clone(),
            ),
            PdfImage::Jpeg { bytes, w, h, comps } => (
                *w,
                *h,
                format!(
                    "/ColorSpace /{} /Width {w} /Height {h} /Filter /DCTDecode",
                    if *comps == 1 {
                        "DeviceGray"
                    } else {
                        "DeviceRGB"
                    }
                ),
                bytes.clone(),
            ),
            PdfImage::Blank => (1240, 1754, String::new(), Vec::new()),
        };
        let (pw, ph) = (w as f32 * 72.0 / 150.0, h as f32 * 72.0 / 150.0);
        let draw = if matches!(p, PdfImage::Blank) {
            String::new()
        } else {
            format!("q {pw:.2} 0 0 {ph:.2} 0 0 cm /Im0 Do Q")
        };
        objs.push(
            format!(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {pw:.2} {ph:.2}] \
                 /Resources << /XObject << /Im0 {image} 0 R >> >> /Contents {content} 0 R >>"
            )
            .into_bytes(),
        );
        let mut c = format!("<< /Length {} >>\nstream\n", draw.len()).into_bytes();
        c.extend_from_slice(draw.as_bytes());
        c.extend_from_slice(b"\nendstream");
        objs.push(c);
        let mut im = if dict.is_empty() {
            b"<< /Type /XObject /Subtype /Image /Width 1 /Height 1 /ColorSpace /DeviceGray \
               /BitsPerComponent 8 /Length 1 >>\nstream\n\xff"
                .to_vec()
        } else {
            let mut v = format!(
                "<< /Type /XObject /Subtype /Image {dict} /BitsPerComponent 8 /Length {} >>\nstream\n",
                data.len()
            )
            .into_bytes();
            v.extend_from_slice(&data);
            v
        };
        im.extend_from_slice(b"\nendstream");
        objs.push(im);
        let _ = page;
    }
    let mut out = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::new();
    for (i, o) in objs.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(o);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(format!("xref\n0 {}\n0000000000 65535 f \n", objs.len() + 1).as_bytes());
    for off in offsets {
        out.extend_from_slice(format!("{off:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objs.len() + 1
        )
        .as_bytes(),
    );
    out
}

fn sheet_jpeg() -> PdfImage {
    let bytes = fs::read(sample("sheet-tr.jpg")).unwrap();
    let img = image::load_from_memory(&bytes).unwrap();
    PdfImage::Jpeg {
        w: img.width(),
        h: img.height(),
        comps: img.color().channel_count(),
        bytes,
    }
}

fn board_gray() -> image::GrayImage {
    image::open(sample("board-page.png")).unwrap().to_luma8()
}

fn board_truth() -> String {
    fs::read_to_string(sample("board-page.fen"))
        .unwrap()
        .trim()
        .to_string()
}

#[test]
fn read_a_scanned_pdf_page_by_page() {
    let dir = temp_dir("pdf");
    let pdf = dir.join("book.pdf");
    fs::write(
        &pdf,
        pdf_of(&[sheet_jpeg(), PdfImage::Gray(board_gray()), PdfImage::Blank]),
    )
    .unwrap();
    let o = hamle(&["read", pdf.to_str().unwrap(), "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let recs = lines(&o.stdout);
    assert_eq!(recs.len(), 2, "{recs:?}");
    assert_eq!(
        (recs[0]["page"].as_u64(), recs[0]["kind"].as_str()),
        (Some(1), Some("sheet"))
    );
    let share = right_share(&sans(&recs[0]), &sheet_truth());
    assert!(
        share >= 0.9,
        "sheet from the PDF: {share:.3} of plies right"
    );
    assert_eq!(
        (recs[1]["page"].as_u64(), recs[1]["kind"].as_str()),
        (Some(2), Some("board"))
    );
    assert_eq!(recs[1]["placement"], board_truth());
    // The blank page is named, and is not an error of the file.
    assert!(
        stderr(&o).contains("page 3: no scoresheet or board"),
        "{}",
        stderr(&o)
    );

    // PGN: the game with its source, the board as a position.
    let o = hamle(&["read", pdf.to_str().unwrap()]);
    let pgn = String::from_utf8_lossy(&o.stdout);
    assert!(pgn.contains("book.pdf, page 1\"]"), "{pgn}");
    assert!(pgn.contains(&format!("[FEN \"{}", board_truth())), "{pgn}");

    // A damaged PDF is a clear error.
    let bad = dir.join("bad.pdf");
    fs::write(&bad, b"%PDF-1.7\n1 0 obj << /Type /Catalog >>\n").unwrap();
    let o = hamle(&["read", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("cannot open the PDF"), "{}", stderr(&o));
    let _ = fs::remove_dir_all(dir);
}

#[test]
fn read_a_multi_page_tiff() {
    use tiff::encoder::{colortype, TiffEncoder};
    let dir = temp_dir("tiff");
    let path = dir.join("scans.tif");
    let sheet = image::open(sample("sheet-tr.jpg")).unwrap().to_luma8();
    let board = board_gray();
    {
        let f = fs::File::create(&path).unwrap();
        let mut enc = TiffEncoder::new(std::io::BufWriter::new(f)).unwrap();
        for g in [&board, &sheet] {
            enc.write_image::<colortype::Gray8>(g.width(), g.height(), g.as_raw())
                .unwrap();
        }
    }
    let o = hamle(&["read", path.to_str().unwrap(), "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let recs = lines(&o.stdout);
    let kinds: Vec<&str> = recs.iter().map(|r| r["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["board", "sheet"]);
    assert_eq!(recs[0]["placement"], board_truth());
    let share = right_share(&sans(&recs[1]), &sheet_truth());
    assert!(share >= 0.9, "sheet from the TIFF: {share:.3}");
    let _ = fs::remove_dir_all(dir);
}

/// `hamle CMD samples/NAME --format json`.
fn sample_json(cmd: &str, name: &str) -> Output {
    hamle(&[cmd, sample(name).to_str().unwrap(), "--format", "json"])
}

/// A photo of a physical set (the bundled render) read by `hamle read` as `hamle board`
/// reads it: no diagram is found in it, so the set reader reads it from the colour image
/// (`board_kind` physical, most squares right in the best of the four turns, as the
/// `hamle board` test asks); a diagram image says `board_kind` diagram.
#[test]
fn read_a_photo_of_a_set_as_board_does() {
    let o = sample_json("read", "board-set.jpg");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let recs = lines(&o.stdout);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0]["kind"], "board");
    assert_eq!(recs[0]["board_kind"], "physical");
    let want =
        hamle::board::parse_placement(fs::read_to_string(sample("board-set.fen")).unwrap().trim())
            .unwrap();
    let got = hamle::board::parse_placement(recs[0]["placement"].as_str().unwrap()).unwrap();
    let (_, right) = hamle::board::best_turns(&got, &want);
    assert!(
        right >= 56,
        "{right}/64 squares right: {}",
        recs[0]["placement"]
    );
    // the same reading as `hamle board`
    let b = sample_json("board", "board-set.jpg");
    let b: Value = serde_json::from_slice(&b.stdout).unwrap();
    assert_eq!(recs[0]["placement"], b["placement"]);
    let o = sample_json("read", "board-page.png");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(lines(&o.stdout)[0]["board_kind"], "diagram");
}

/// A book diagram whose squares the sheet layout took for a ruled move grid (until session
/// 36 `hamle read` gave a game of six "moves" read from its squares, some at 0.95): its
/// cells are half dark, so it is no scoresheet, and `read` gives the board. Skips when
/// `../shared/data` is missing.
#[test]
fn a_diagram_is_not_read_as_a_scoresheet() {
    let img = root().join("../shared/data/boards/dev/book-99fa50c509.png");
    if !img.exists() {
        eprintln!("skipped: {} is missing", img.display());
        return;
    }
    let o = hamle(&["sheet", img.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("half dark"), "{}", stderr(&o));
    let o = hamle(&["read", img.to_str().unwrap(), "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let recs = lines(&o.stdout);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0]["kind"], "board");
    let want = fs::read_to_string(img.with_extension("fen")).unwrap();
    assert_eq!(
        recs[0]["placement"],
        want.split_whitespace().next().unwrap()
    );
}

/// A folder like an arbiter's: sheets, a board, move text, a PDF, and bad files.
fn batch_folder(dir: &Path) -> PathBuf {
    let src = dir.join("in");
    fs::create_dir_all(src.join("round2")).unwrap();
    fs::copy(sample("sheet-tr.jpg"), src.join("board1.jpg")).unwrap();
    fs::copy(sample("sheet-tr.jpg"), src.join("round2/board1.jpg")).unwrap();
    fs::copy(sample("board-page.png"), src.join("diagram.png")).unwrap();
    fs::copy(sample("seed001.txt"), src.join("notes.txt")).unwrap();
    fs::write(
        src.join("book.pdf"),
        pdf_of(&[PdfImage::Blank, PdfImage::Gray(board_gray())]),
    )
    .unwrap();
    // Bad: a cut JPEG, an empty file, prose, an archive, a photo of nothing.
    let jpg = fs::read(sample("sheet-tr.jpg")).unwrap();
    fs::write(src.join("cut.jpg"), &jpg[..jpg.len() / 3]).unwrap();
    fs::write(src.join("empty.png"), b"").unwrap();
    fs::write(
        src.join("letter.txt"),
        "Dear arbiter, the hall opens at nine.",
    )
    .unwrap();
    fs::write(src.join("photos.zip"), b"PK\x03\x04\x14\0\0\0").unwrap();
    image::GrayImage::from_fn(900, 700, |x, y| {
        image::Luma([((x * 7 + y * 3) % 256) as u8])
    })
    .save(src.join("wall.png"))
    .unwrap();
    src
}

#[test]
fn batch_reads_good_files_lists_bad_ones_and_resumes() {
    let dir = temp_dir("batch");
    let src = batch_folder(&dir);
    let out = dir.join("out");
    let args = [
        "batch",
        src.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--jobs",
        "2",
    ];
    let o = hamle(&args);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let summary: Value =
        serde_json::from_slice(&fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["files"], 10);
    assert_eq!(summary["files_read"], 5);
    assert_eq!(summary["files_failed"], 5);
    // Two sheets, one text file, and the book: its page beside the diagram prints the game.
    assert_eq!(summary["games"], 4);
    assert_eq!(summary["positions"], 2);
    assert_eq!(summary["failures"], 5);

    // Every good input has its two files, named after its path below the folder.
    for name in ["board1", "round2/board1", "diagram", "notes", "book"] {
        assert!(out.join(format!("{name}.pgn")).is_file(), "{name}.pgn");
        assert!(out.join(format!("{name}.json")).is_file(), "{name}.json");
    }
    let sheet = lines(&fs::read(out.join("round2/board1.json")).unwrap());
    assert!(right_share(&sans(&sheet[0]), &sheet_truth()) >= 0.9);
    // The PDF's second page is the sample diagram beside its game's moves: a book page, read
    // through the word recognizer (its first page is blank).
    let book = lines(&fs::read(out.join("book.json")).unwrap());
    let kinds: Vec<&str> = book.iter().map(|r| r["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["game", "board"], "{book:?}");
    assert_eq!(book[1]["placement"], board_truth());
    let moves = book[0]["moves"].as_array().unwrap();
    assert!(moves.len() >= 20, "{} plies", moves.len());
    // The game ends in the diagram's mate — or the last ply says it is unsure.
    let last = moves.last().unwrap();
    assert!(last["san"] == "Qe8#" || last["status"] != "ok", "{last}");

    // Every bad file is listed once, with its reason.
    let errors = lines(&fs::read(out.join("errors.jsonl")).unwrap());
    let mut listed: Vec<(String, String)> = errors
        .iter()
        .map(|e| {
            let f = e["file"].as_str().unwrap();
            let name = Path::new(f)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (name, e["reason"].as_str().unwrap().to_string())
        })
        .collect();
    listed.sort();
    assert_eq!(
        listed,
        [
            ("cut.jpg".to_string(), "unreadable".to_string()),
            ("empty.png".into(), "unreadable".into()),
            ("letter.txt".into(), "no_game".into()),
            ("photos.zip".into(), "unreadable".into()),
            ("wall.png".into(), "not_chess".into()),
        ]
    );

    // The review report: every good input, the failures, crops and boards inline.
    let html = fs::read_to_string(out.join("report.html")).unwrap();
    for name in [
        "board1.jpg",
        "round2/board1.jpg",
        "diagram.png",
        "notes.txt",
        "book.pdf",
        "wall.png",
    ] {
        assert!(html.contains(name), "report lacks {name}");
    }
    assert!(html.contains("data:image/png;base64,") && html.contains("<svg"));
    assert!(!html.contains("src=\"http") && !html.contains("<script"));
    screenshot_if_chromium(&out.join("report.html"), &dir.join("report.png"));

    // Resume: nothing finished is read again; the failures are still listed.
    let pgn_time = fs::metadata(out.join("board1.pgn"))
        .unwrap()
        .modified()
        .unwrap();
    let mut resume = args.to_vec();
    resume.push("--resume");
    let o = hamle(&resume);
    assert_eq!(o.status.code(), Some(1));
    let s2: Value = serde_json::from_slice(&fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(
        (s2["files_resumed"].as_u64(), s2["files_read"].as_u64()),
        (Some(5), Some(0))
    );
    assert_eq!(
        (s2["games"].as_u64(), s2["failures"].as_u64()),
        (Some(4), Some(5))
    );
    assert_eq!(
        fs::metadata(out.join("board1.pgn"))
            .unwrap()
            .modified()
            .unwrap(),
        pgn_time
    );
    let _ = fs::remove_dir_all(dir);
}

/// Renders `html` in headless Chromium when it is installed (Debian `chromium`) and checks
/// the screenshot shows a page with content; skipped otherwise.
fn screenshot_if_chromium(html: &Path, png: &Path) {
    let Some(chromium) = ["chromium", "chromium-browser"].into_iter().find(|c| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    }) else {
        eprintln!("skipped: no chromium to render report.html");
        return;
    };
    let o = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            &format!("--screenshot={}", png.display()),
            "--window-size=1000,1600",
            &format!("file://{}", html.display()),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let shot = image::open(png).unwrap().to_luma8();
    let ink = shot.pixels().filter(|p| p[0] < 128).count();
    assert!(
        ink > 5_000,
        "the rendered report is nearly blank ({ink} dark pixels)"
    );
}

#[test]
fn killed_batch_loses_nothing_finished() {
    let dir = temp_dir("kill");
    let src = dir.join("in");
    fs::create_dir_all(&src).unwrap();
    for i in 0..6 {
        fs::copy(sample("sheet-tr.jpg"), src.join(format!("s{i}.jpg"))).unwrap();
    }
    let out = dir.join("out");
    let args = [
        "batch",
        src.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--jobs",
        "1",
    ];
    let mut child = Command::new(env!("CARGO_BIN_EXE_hamle"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it once the first input is finished (or let it end, on a very fast machine).
    let t0 = Instant::now();
    while !out.join(".hamle/done/s0.json").exists() && t0.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    let finished: Vec<String> = (0..6)
        .map(|i| format!("s{i}"))
        .filter(|n| out.join(format!(".hamle/done/{n}.json")).exists())
        .collect();
    assert!(!finished.is_empty());
    let before: Vec<_> = finished
        .iter()
        .map(|n| fs::read(out.join(format!("{n}.json"))).unwrap())
        .collect();
    // No half-written output: every output file present parses.
    for i in 0..6 {
        if let Ok(b) = fs::read(out.join(format!("s{i}.json"))) {
            assert_eq!(lines(&b).len(), 1);
        }
    }
    let mut resume = args.to_vec();
    resume.push("--resume");
    let o = hamle(&resume);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let s: Value = serde_json::from_slice(&fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["files_resumed"].as_u64(), Some(finished.len() as u64));
    assert_eq!(s["games"], 6);
    for (n, b) in finished.iter().zip(before) {
        assert_eq!(
            fs::read(out.join(format!("{n}.json"))).unwrap(),
            b,
            "{n} was redone"
        );
    }
    let _ = fs::remove_dir_all(dir);
}

/// The bundled book's truth and what `hamle read FILE --format json` gives for `file`.
fn read_sample_book(file: &str) -> (Value, Vec<Value>) {
    let truth: Value =
        serde_json::from_slice(&fs::read(sample("book.truth.json")).unwrap()).unwrap();
    let o = hamle(&["read", sample(file).to_str().unwrap(), "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    (truth, lines(&o.stdout))
}

/// A truth game's moves.
fn truth_sans(t: &Value) -> Vec<String> {
    t["sans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

/// The bundled test book (`scripts/make_test_book.py --games 6 --seed 4`: real games typeset
/// by Chromium with python-chess diagrams, truth beside it) reads exactly: every game, every
/// diagram, each diagram found where its game reached that position.
#[test]
fn bundled_book_reads_exactly() {
    let (truth, recs) = read_sample_book("book.pdf");
    let games: Vec<&Value> = recs.iter().filter(|r| r["kind"] == "game").collect();
    let boards: Vec<&Value> = recs.iter().filter(|r| r["kind"] == "board").collect();
    let want_games = truth["games"].as_array().unwrap();
    assert_eq!(games.len(), want_games.len());
    for (g, t) in games.iter().zip(want_games) {
        assert_eq!(sans(g), truth_sans(t), "game {}", g["game"]);
    }
    let want_boards = truth["diagrams"].as_array().unwrap();
    assert_eq!(boards.len(), want_boards.len());
    for (b, t) in boards.iter().zip(want_boards) {
        assert_eq!(b["placement"], t["fen"]);
        assert_eq!(b["game"].as_u64(), t["game"].as_u64().map(|g| g + 1));
        assert_eq!(b["ply"], t["ply"]);
        assert_eq!(b["check"]["result"], "matches", "{b}");
    }
    // The players come from the headings.
    assert_eq!(games[0]["headers"]["White"], want_games[0]["white"]);
    // `--format fen`: the diagrams.
    let o = hamle(&[
        "read",
        sample("book.pdf").to_str().unwrap(),
        "--format",
        "fen",
    ]);
    let fens: Vec<String> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| l.split(' ').next().unwrap_or("").to_string())
        .collect();
    let want: Vec<&str> = want_boards
        .iter()
        .map(|d| d["fen"].as_str().unwrap())
        .collect();
    assert_eq!(fens, want);
}

/// The scanned-looking copy of the bundled book (`make_test_book.py --games 6 --seed 4
/// --scanned`: pages drawn at 200 dpi, turned, blurred, grained, stored as JPEGs — no text
/// layer) is read through the word recognizer: all games found, at least 98 % of the plies
/// right (all 436 when this was written), every diagram exact.
#[test]
fn bundled_scanned_book_reads_nearly_all_moves() {
    let (truth, recs) = read_sample_book("book-scanned.pdf");
    let games: Vec<&Value> = recs.iter().filter(|r| r["kind"] == "game").collect();
    let want_games = truth["games"].as_array().unwrap();
    assert_eq!(games.len(), want_games.len());
    let (mut right, mut total) = (0, 0);
    for (g, t) in games.iter().zip(want_games) {
        let want = truth_sans(t);
        right += sans(g).iter().zip(&want).filter(|(a, b)| a == b).count();
        total += want.len();
    }
    let share = right as f64 / total as f64;
    assert!(share >= 0.98, "{right}/{total} plies right");
    let mut boards: Vec<&str> = recs
        .iter()
        .filter(|r| r["kind"] == "board")
        .map(|r| r["placement"].as_str().unwrap())
        .collect();
    let mut want: Vec<&str> = truth["diagrams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["fen"].as_str().unwrap())
        .collect();
    boards.sort_unstable();
    want.sort_unstable();
    assert_eq!(boards, want);
}
