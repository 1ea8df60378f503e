//! Scoresheets end to end: the layout on the real dev sheets, and the whole pipeline on the
//! bundled synthetic Turkish sample. Tests that need `../shared/data` skip when it is missing.

use std::path::{Path, PathBuf};

use hamle::sheet::{self, layout, SheetConfig, Side};

fn dev_dir() -> Option<PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/sheets/dev");
    if d.is_dir() {
        Some(d)
    } else {
        eprintln!("skipped: {} is missing", d.display());
        None
    }
}

/// Every dev sheet's grid is found: 2 blocks of 25 rows, move 1 top left, move 26 top right.
#[test]
fn dev_sheet_layouts() {
    let Some(dir) = dev_dir() else { return };
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) != Some("png") {
            continue;
        }
        let (gray, scale) = hamle::vision::load_gray(&p).unwrap();
        let l = layout::find(&gray, scale).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert_eq!((l.blocks, l.rows), (2, 25), "{}", p.display());
        let first = l.cells[0];
        let c26 = l
            .cells
            .iter()
            .find(|c| c.number == 26 && c.side == Side::White)
            .unwrap();
        assert!(
            c26.x0 > first.x1 && (c26.y0 - first.y0).abs() < 10.0,
            "{}",
            p.display()
        );
        n += 1;
    }
    assert!(n >= 20, "only {n} dev sheets");
}

/// The bundled sample: a synthetic Turkish sheet (fonts the recognizer never saw) reads with
/// most moves right, and its cells keep their boxes. A regression floor (80 %), not the
/// target: the README gives the measured figures.
#[test]
fn bundled_turkish_sample() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/sheet-tr.jpg");
    let r = sheet::read_file(&p, &SheetConfig::default()).expect("sample reads");
    let truth = std::fs::read_to_string(p.with_extension("moves.txt")).unwrap();
    let want = hamle::decode::repair_text(&truth, &Default::default()).unwrap();
    let want = &want[0].plies;
    let right = want
        .iter()
        .zip(&r.game.plies)
        .filter(|(a, b)| a.mv.is_some() && a.mv == b.mv)
        .count();
    assert!(
        right * 10 >= want.len() * 8,
        "{right} of {} plies right",
        want.len()
    );
    assert_eq!(r.game.lang.code, "tr");
    assert_eq!(r.cells.len(), r.game.plies.len());
    assert!(r
        .cells
        .iter()
        .all(|c| c.rect[2] > c.rect[0] && c.rect[3] > c.rect[1]));
}

/// Two copies decode together; with the same copy twice, the game is the one copy's game.
#[test]
fn second_copy_decodes_jointly() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/sheet-tr.jpg");
    let one = sheet::read_file(&p, &SheetConfig::default()).unwrap();
    let two = sheet::read_pair(&p, &p, &SheetConfig::default()).unwrap();
    let moves = |r: &sheet::SheetReading| r.game.plies.iter().map(|p| p.mv).collect::<Vec<_>>();
    assert_eq!(moves(&one), moves(&two));
    assert_eq!(two.second_cells.len(), two.cells.len());
    assert!(two
        .game
        .plies
        .iter()
        .all(|p| p.read.as_deref().is_some_and(|r| !r.contains(" / "))));
}
