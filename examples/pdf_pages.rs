//! Writes every page of a document as a PNG, drawn as hamle reads it (PDFs at 200 dpi):
//! `cargo run --release --example pdf_pages -- book.pdf OUTDIR`. Used by
//! `scripts/make_test_book.py --scanned` to make a scanned-looking copy of a test book.

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(path), Some(out)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: pdf_pages FILE OUTDIR");
        std::process::exit(2);
    };
    let doc = match hamle::pages::open(std::path::Path::new(path)) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    let out = std::path::Path::new(out);
    if let Err(e) = std::fs::create_dir_all(out) {
        eprintln!("{}: {e}", out.display());
        std::process::exit(1);
    }
    for i in 0..doc.pages() {
        match doc.page(i) {
            Ok(p) => {
                let file = out.join(format!("page-{:04}.png", i + 1));
                if let Err(e) = p.gray.save(&file) {
                    eprintln!("{}: {e}", file.display());
                    std::process::exit(1);
                }
            }
            Err(e) => {
                eprintln!("page {}: {e}", i + 1);
                std::process::exit(1);
            }
        }
    }
}
