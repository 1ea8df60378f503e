//! Time of each stage of the board pipeline on a folder of images (one core, one image at a
//! time): decoding, locating (with the slant fit), cutting the squares (with the warp of a
//! slanted board), the square model (with the second look at unsure squares), the printed
//! coordinates (cut and read); as `hamle board --kind diagram`.
//!
//! `cargo run --release --example board_speed -- ../shared/data/boards/dev`
//!
//! With `--physical` (photos of sets): decoding, the corner model and lattice fit, the camera
//! and the 64 piece crops, the piece model (each crop read as it is and mirrored).
//!
//! `cargo run --release --example board_speed -- work-tmp/r3d/test --physical`

use std::time::Instant;

use hamle::board::physical::{cut_pieces, find_lattice, WORK_SIDE};
use hamle::board::pose::Camera;
use hamle::board::{cut_squares, second_look, Found};
use hamle::model::{PieceModel, SquareModel};

fn main() {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "../shared/data/boards/dev".into());
    let physical = std::env::args().any(|a| a == "--physical");
    let model = SquareModel::get().expect("model loads");
    hamle::model::CoordModel::get().expect("coordinate model loads");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            matches!(
                p.extension().and_then(|x| x.to_str()),
                Some("png" | "jpg" | "jpeg")
            )
        })
        .collect();
    files.sort();
    if physical {
        return photos(&files);
    }
    let mut sums = [0.0f64; 5];
    let mut n = 0;
    for p in &files {
        let t = Instant::now();
        let Ok((gray, _)) = hamle::vision::load_gray(p) else {
            continue;
        };
        let t_load = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let Ok(found) = Found::find(&gray, true) else {
            continue;
        };
        let t_locate = t.elapsed().as_secs_f64();
        let t = Instant::now();
        // A slanted board is warped square first, as `hamle board` does.
        let (img, bx) = found.board(&gray);
        let px = cut_squares(img, &bx);
        let t_cut = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let mut logits = model.run_board(&px).expect("model runs");
        second_look(model, img, &bx, &mut logits).expect("model runs");
        let t_model = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let _ = hamle::board::coords::read(&gray, &found.corners()).expect("model runs");
        let t_coords = t.elapsed().as_secs_f64();
        for (s, v) in sums
            .iter_mut()
            .zip([t_load, t_locate, t_cut, t_model, t_coords])
        {
            *s += v;
        }
        n += 1;
    }
    print_means(
        "image",
        n,
        &sums,
        ["load", "locate", "cut", "model", "coordinates"],
    );
}

fn photos(files: &[std::path::PathBuf]) {
    let pieces = PieceModel::get().expect("piece model loads");
    hamle::model::CornerModel::get().expect("corner model loads");
    let mut sums = [0.0f64; 4];
    let mut n = 0;
    for p in files {
        let t = Instant::now();
        let Ok((img, _)) = hamle::vision::load_rgb(p, WORK_SIDE) else {
            continue;
        };
        let t_load = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let Ok(lat) = find_lattice(&img) else {
            continue;
        };
        let t_locate = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let Some(cam) = Camera::from_homography(&lat.homography, img.width(), img.height()) else {
            continue;
        };
        let px = cut_pieces(&img, &cam);
        let t_cut = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let _ = pieces.read_board(&px).expect("model runs");
        let t_model = t.elapsed().as_secs_f64();
        for (s, v) in sums.iter_mut().zip([t_load, t_locate, t_cut, t_model]) {
            *s += v;
        }
        n += 1;
    }
    print_means(
        "photo",
        n,
        &sums,
        ["load", "corners + lattice", "camera + crops", "piece model"],
    );
}

/// `N {what}s; ms per {what}: stage t, ...` from the summed seconds of each stage.
fn print_means<const K: usize>(what: &str, n: usize, sums: &[f64; K], stages: [&str; K]) {
    let n = n.max(1) as f64;
    let parts: Vec<String> = stages
        .iter()
        .zip(sums)
        .map(|(s, t)| format!("{s} {:.1}", 1e3 * t / n))
        .collect();
    println!("{n} {what}s; ms per {what}: {}", parts.join(", "));
}
