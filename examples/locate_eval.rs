//! How well the diagram locator finds boards on corners-3lc (631 real photos, scans and
//! screenshots of 2D boards, 256 × 256, each with a board mask), which nothing in hamle
//! trains on.
//!
//! `cargo run --release --example locate_eval -- ../shared/data/boards/train/corners-3lc`
//!
//! The labelled corners are the mask's extreme points (top left = least x + y, and so on).
//! A box is *right* when each of its four corners is within half a square (1/16 of the
//! labelled board's side) of the labelled corner: close enough for every square crop to hold
//! its own square. The images are split by the parity of their place in name order, so that
//! a change can be made looking at one half (`even`) and judged on the other (`odd`).
//! `--list` prints each image's result; `--diagram` locates as `hamle board --kind diagram`
//! does (a stretched box, then the image turned straight, where no board is found);
//! `--no-slant` leaves out the slant fit; `--no-model` the diagram corner model's check
//! (`Found::corner_check`). That model trained on three quarters of the even half; the
//! `tune` row is the even quarter it never saw (every fourth even image), on which the
//! check's margin was chosen.

use std::path::Path;

use hamle::board::Found;

/// The mask's corners: top left, top right, bottom right, bottom left.
fn mask_corners(mask: &image::GrayImage) -> Option<[[f32; 2]; 4]> {
    let mut best = [(f32::MAX, [0.0, 0.0]); 4];
    let mut any = false;
    for (x, y, p) in mask.enumerate_pixels() {
        if p[0] < 128 {
            continue;
        }
        any = true;
        let (x, y) = (x as f32, y as f32);
        // Minimise: -(x+y) for BR, x+y for TL, -(x-y) for TR, (x-y) for BL.
        let keys = [x + y, -(x - y), -(x + y), x - y];
        for (b, k) in best.iter_mut().zip(keys) {
            if k < b.0 {
                *b = (k, [x, y]);
            }
        }
    }
    // Pixel centres to pixel edges on the outer side.
    let mut c = [best[0].1, best[1].1, best[2].1, best[3].1];
    c[1][0] += 1.0;
    c[2][0] += 1.0;
    c[2][1] += 1.0;
    c[3][1] += 1.0;
    any.then_some(c)
}

fn dist(a: [f32; 2], b: [f32; 2]) -> f32 {
    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2)).sqrt()
}

#[derive(Default)]
struct Tally {
    n: usize,
    found: usize,
    right: usize,
}

fn main() {
    let dir = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .unwrap_or_else(|| "../shared/data/boards/train/corners-3lc".into());
    let list = std::env::args().any(|a| a == "--list");
    let diagram = std::env::args().any(|a| a == "--diagram");
    let plain = std::env::args().any(|a| a == "--no-slant");
    let model = !std::env::args().any(|a| a == "--no-model");
    let dir = Path::new(&dir);
    let mut names: Vec<String> = std::fs::read_dir(dir.join("images"))
        .expect("images folder")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    names.sort();
    let mut halves = [Tally::default(), Tally::default()];
    let mut tune = Tally::default();
    let t0 = std::time::Instant::now();
    for (i, name) in names.iter().enumerate() {
        let stem = name.rsplit_once('.').map_or(name.as_str(), |s| s.0);
        let Ok(mask) = image::open(dir.join("masks").join(format!("{stem}.png"))) else {
            continue;
        };
        let Some(want) = mask_corners(&mask.to_luma8()) else {
            continue;
        };
        let Ok((gray, scale)) = hamle::vision::load_gray(&dir.join("images").join(name)) else {
            continue;
        };
        let t = &mut halves[i % 2];
        t.n += 1;
        tune.n += usize::from(i % 8 == 6);
        let side = (dist(want[0], want[1])
            + dist(want[1], want[2])
            + dist(want[2], want[3])
            + dist(want[3], want[0]))
            / 4.0;
        let mut boxed = String::new();
        let (status, err) = match Found::find_with(&gray, diagram, model) {
            Ok(mut found) => {
                t.found += 1;
                if plain {
                    found.slanted = None;
                }
                let got = found.corners().map(|p| [p[0] / scale, p[1] / scale]);
                boxed = format!(
                    "{:.0},{:.0},{:.0},{:.0}\t{}",
                    got[0][0],
                    got[0][1],
                    got[2][0],
                    got[2][1],
                    found
                        .turned
                        .as_ref()
                        .map_or(String::new(), |t| format!("turned {:.1}", t.degrees))
                );
                let err = got
                    .iter()
                    .zip(&want)
                    .map(|(g, w)| dist(*g, *w))
                    .fold(0.0f32, f32::max)
                    / (side / 8.0);
                if err <= 0.5 {
                    t.right += 1;
                }
                if i % 8 == 6 {
                    tune.found += 1;
                    tune.right += usize::from(err <= 0.5);
                }
                (if err <= 0.5 { "right" } else { "off" }, err)
            }
            Err(_) => ("none", f32::NAN),
        };
        if list {
            println!(
                "{name}\t{}\t{status}\t{err:.2}\t{boxed}",
                ["even", "odd"][i % 2]
            );
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    println!("half   images  found          right (corners within half a square)");
    for (label, t) in ["even", "odd", "tune"]
        .iter()
        .zip(halves.iter().chain(std::iter::once(&tune)))
    {
        let pct = |k: usize| 100.0 * k as f64 / t.n.max(1) as f64;
        println!(
            "{label:<6} {:>6}  {:>4} ({:5.1}%)  {:>4} ({:5.1}%)",
            t.n,
            t.found,
            pct(t.found),
            t.right,
            pct(t.right)
        );
    }
    let n: usize = halves.iter().map(|t| t.n).sum();
    println!("{n} images, {:.1} ms each", 1000.0 * secs / n.max(1) as f64);
}
