//! Prints what the layout stage sees on a page: ruled lines and the verticals of each band.
//! `cargo run --release --example layout_debug -- IMAGE`
use hamle::vision;

fn main() {
    let path = std::env::args().nth(1).expect("IMAGE");
    let (gray, _) = vision::load_gray(path.as_ref()).expect("image");
    let radius = vision::rule_radius(&gray);
    let bm = vision::ruled_lines(&gray, radius);
    let rules = vision::horizontal_rules(&bm, (bm.width / 30).max(20), 0.25);
    for w in rules.windows(2) {
        let (a, b) = (w[0], w[1]);
        let m = (b.at - a.at) * 0.12;
        let v: Vec<i32> =
            vision::vertical_rules_in_band(&bm, (a.at + m) as u32, (b.at - m) as u32, 0.92)
                .iter()
                .map(|r| r.at as i32)
                .collect();
        println!(
            "{:7.1} t{} [{}..{}] gap {:5.1} verts {:?}",
            a.at,
            a.thickness,
            a.start,
            a.end,
            b.at - a.at,
            v
        );
    }
}
