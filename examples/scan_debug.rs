//! Draws the lines and words hamle finds on a scanned page (a debugging aid for the book
//! reader): `cargo run --release --example scan_debug -- FILE PAGE OUT.png`.

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(page), Some(out)) = (args.get(1), args.get(2), args.get(3)) else {
        eprintln!("usage: scan_debug FILE PAGE OUT.png");
        std::process::exit(2);
    };
    let doc = hamle::pages::open(std::path::Path::new(path)).expect("open");
    let p: usize = page.parse().expect("page number");
    let page = doc.page(p - 1).expect("page");
    let boards = hamle::board::read_all(&page.gray, &Default::default(), 4).unwrap_or_default();
    let exclude: Vec<[f32; 4]> = boards
        .iter()
        .map(|b| hamle::board::bounds(&b.corners))
        .collect();
    let s = hamle::book::scan::scan(&page.gray, &exclude);
    println!("skew {:.2}°, {} lines", s.skew, s.lines.len());
    let mut img = image::DynamicImage::ImageLuma8(s.gray.clone()).to_rgb8();
    for l in &s.lines {
        for w in &l.words {
            for x in w[0]..w[2] {
                img.put_pixel(x, w[1], image::Rgb([255, 0, 0]));
                img.put_pixel(x, w[3].saturating_sub(1), image::Rgb([255, 0, 0]));
            }
            for y in w[1]..w[3] {
                img.put_pixel(w[0], y, image::Rgb([0, 0, 255]));
                img.put_pixel(w[2].saturating_sub(1), y, image::Rgb([0, 0, 255]));
            }
        }
        println!("c{} y{} {} words", l.column, l.rect[1], l.words.len());
    }
    img.save(out).expect("save");
}
