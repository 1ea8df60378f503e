//! Prints the text lines hamle finds in a PDF's text layer (or reads on a scanned page), page by page (a debugging aid for
//! the book reader): `cargo run --release --example book_text -- book.pdf [PAGE]`.

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: book_text FILE.pdf [PAGE]");
        std::process::exit(2);
    };
    let doc = match hamle::pages::open(std::path::Path::new(path)) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    let only: Option<usize> = args.get(2).and_then(|p| p.parse().ok());
    for i in 0..doc.pages() {
        if only.is_some_and(|p| p != i + 1) {
            continue;
        }
        let glyphs = doc.glyphs(i).ok().flatten().unwrap_or_default();
        if std::env::var_os("GLYPHS").is_some() {
            for g in glyphs.iter().take(60) {
                println!(
                    "{:?} x{:.1} end{:.1} ink{:.1}-{:.1} s{:.1}",
                    g.text, g.x, g.end, g.rect[0], g.rect[2], g.size
                );
            }
        }
        let width = glyphs.iter().map(|g| g.rect[2]).fold(0.0f32, f32::max) + 10.0;
        println!("--- page {} ({} glyphs)", i + 1, glyphs.len());
        let lines = if glyphs.is_empty() {
            // A scanned page: the words as the word model reads them.
            let Ok(page) = doc.page(i) else { continue };
            let boards =
                hamle::board::read_all(&page.gray, &Default::default(), 4).unwrap_or_default();
            let rects: Vec<[f32; 4]> = boards
                .iter()
                .map(|b| hamle::board::bounds(&b.corners))
                .collect();
            hamle::book::scanned_lines(&page.gray, &rects)
        } else {
            hamle::book::text::lines(&glyphs, width)
        };
        for l in lines {
            println!(
                "[c{} y{:.0} s{:.0}] {}",
                l.column, l.rect[1], l.size, l.text
            );
        }
    }
}
