//! Printed books: a born-digital PDF's pages → its games (from the text layer, through the
//! repair engine) and its diagrams (through the board reader), each diagram checked against
//! the position its game reached where it is printed.
//!
//! Input: a [`Document`] that [`is_book`] accepts. Output: a
//! [`Book`] — plain data: the games in order, the diagrams with their page, place and what
//! the check against the game found.
//!
//! Steps:
//! 1. per page (in parallel): the page drawn for the board reader, every diagram on it found
//!    (the largest board, then the next with that one masked, up to [`MAX_DIAGRAMS`]); the
//!    text layer's glyphs outside the diagrams grouped into columns and lines ([`text`]);
//! 2. over the whole book, in reading order: each line is move text or not (a heading, a
//!    caption, prose); a game starts where move numbers start again at 1 or after a result,
//!    and the non-move lines just before it are its heading (`White – Black` gives the
//!    players); each game's move text goes through [`crate::decode::repair_text`];
//! 3. each diagram belongs to the move text printed before it: its game, and the ply that
//!    text reached. The position the game reached there is compared with the diagram's.
//!
//! Scanned books (pages that are images) have no text layer: their words are found on the
//! page ([`scan`]) and read by the printed-word recognizer (`models/words.onnx`), then go
//! the same way. [`is_book`] tells a book from scoresheets and loose boards.

pub mod scan;
pub mod text;

use rayon::prelude::*;
use serde::Serialize;
use shakmaty::{Chess, Position};

use crate::board::{BoardConfig, BoardReading};
use crate::decode::{repair_text, scorer, DecodeConfig};
use crate::pages::{Document, PageError};
use crate::record::{Game, Status};
pub use text::{Glyph, Line};

/// Scanned lines whose words' mean confidence is lower than this are not move text.
pub const MIN_LINE_CONFIDENCE: f32 = 0.65;

/// A diagram whose least sure square is below this is checked against the text under it.
const UNSURE_DIAGRAM: f64 = 0.3;
/// Move words inside an unsure diagram's area that make it text.
const MOVE_WORDS_IN_TEXT: usize = 6;

/// The most diagrams looked for on one page.
pub const MAX_DIAGRAMS: usize = 4;

/// A diagram of the book.
#[derive(Debug, Clone)]
pub struct Diagram {
    /// 0-based page.
    pub page: usize,
    pub board: BoardReading,
    /// Its box in the page's pixels: left, top, right, bottom.
    pub rect: [f32; 4],
    /// The game printed before it (index into [`Book::games`]) and the plies that game's
    /// text had reached there.
    pub after: Option<(usize, usize)>,
    /// What the comparison with that game found.
    pub check: DiagramCheck,
}

/// A diagram compared with the position of its game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "result", content = "ply")]
pub enum DiagramCheck {
    /// No game text before it.
    NoGame,
    /// Same placement as the game after this ply.
    Matches(usize),
    /// Same placement as the game a ply or two from where it is printed.
    MatchesNear(usize),
    /// No position of the game near there has this placement: the diagram or the moves
    /// are misread (or the book prints a variation).
    Differs(usize),
}

/// A book read.
#[derive(Debug, Clone, Default)]
pub struct Book {
    pub games: Vec<Game>,
    /// 0-based page of each game's first move text.
    pub game_pages: Vec<usize>,
    pub diagrams: Vec<Diagram>,
    /// Pages with nothing read (no move text, no diagram).
    pub empty_pages: Vec<usize>,
}

/// How to read a book.
#[derive(Debug, Clone, Default)]
pub struct BookConfig {
    pub decode: DecodeConfig,
    pub board: BoardConfig,
}

/// Whether the document's text layer holds move text: at least 40 move-like words on its
/// first pages (up to 6).
pub fn has_move_text(doc: &Document) -> bool {
    let mut n = 0;
    for i in 0..doc.pages().min(6) {
        let Ok(Some(glyphs)) = doc.glyphs(i) else {
            continue;
        };
        n += count_move_words(&text::lines(&glyphs, 1e6));
        if n >= 40 {
            return true;
        }
    }
    false
}

/// The printed lines of a scanned page (no text layer), read word by word by the word
/// model; `exclude` are its diagrams. Empty when the model cannot be loaded.
pub fn scanned_lines(page: &image::GrayImage, exclude: &[[f32; 4]]) -> Vec<Line> {
    let Ok(model) = crate::model::WordModel::get() else {
        return Vec::new();
    };
    let s = scan::scan(page, exclude);
    let (w, h) = (s.gray.width(), s.gray.height());
    let mut crops = Vec::new();
    for l in &s.lines {
        for b in &l.words {
            let x0 = b[0].saturating_sub(2);
            let y0 = b[1].saturating_sub(2);
            let x1 = (b[2] + 2).min(w);
            let y1 = (b[3] + 2).min(h);
            crops.push(image::imageops::crop_imm(&s.gray, x0, y0, x1 - x0, y1 - y0).to_image());
        }
    }
    let mut texts = model.read(&crops).into_iter();
    let debug = std::env::var_os("HAMLE_DEBUG_WORDS").is_some();
    s.lines
        .iter()
        .map(|l| {
            let read: Vec<(String, f32)> = l
                .words
                .iter()
                .filter_map(|_| texts.next().and_then(Result::ok))
                .filter(|(t, _)| !t.is_empty())
                .collect();
            let confidence = if read.is_empty() {
                0.0
            } else {
                read.iter().map(|(_, c)| c).sum::<f32>() / read.len() as f32
            };
            // A figurine set in its own font stands apart from its square (`♗ g5`): a lone
            // piece letter joins the word after it.
            let mut words: Vec<String> = Vec::new();
            for (t, c) in read {
                let t = if debug { format!("{t}@{c:.2}") } else { t };
                match words.last_mut() {
                    Some(prev)
                        if is_piece_letter(prev)
                            && t.starts_with(|ch: char| matches!(ch, 'a'..='h' | 'x')) =>
                    {
                        prev.push_str(&t)
                    }
                    _ => words.push(t),
                }
            }
            Line {
                text: words.join(" "),
                rect: l.rect.map(|v| v as f32),
                column: l.column,
                size: (l.rect[3] - l.rect[1]) as f32,
                confidence,
            }
        })
        .collect()
}

/// Whether a document is a book: its text layer holds move text ([`has_move_text`]), or,
/// scanned (a PDF or a multi-page TIFF), the words read on its first pages (up to 3)
/// include at least 30 moves. A page with a scoresheet's ruled move grid ends the question:
/// not a book. A single image is never taken for a book page.
pub fn is_book(doc: &Document) -> bool {
    if doc.text().is_some() {
        return false;
    }
    if doc.kind() == crate::pages::Kind::Pdf && has_move_text(doc) {
        return true;
    }
    // One image is a scoresheet or a board photo far more often than a book page; reading
    // its words to find out would slow every sheet down.
    if doc.pages() == 1 && doc.kind() != crate::pages::Kind::Pdf {
        return false;
    }
    let probe: Vec<crate::pages::Page> = (0..doc.pages().min(3))
        .filter_map(|i| doc.page(i).ok())
        .collect();
    if probe
        .iter()
        .any(|p| crate::sheet::layout::find(&p.gray, p.scale).is_ok())
    {
        return false;
    }
    let mut n = 0;
    for page in &probe {
        let rects: Vec<[f32; 4]> =
            crate::board::read_all(&page.gray, &BoardConfig::default(), MAX_DIAGRAMS)
                .unwrap_or_default()
                .iter()
                .map(|b| crate::board::bounds(&b.corners))
                .collect();
        n += count_move_words(&scanned_lines(&page.gray, &rects));
        if n >= 30 {
            return true;
        }
    }
    false
}

/// A piece letter alone (English, Turkish), or one with a number before it (`12.B`).
fn is_piece_letter(w: &str) -> bool {
    let rest = w
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .trim_start_matches('.');
    matches!(rest, "K" | "Q" | "R" | "B" | "N" | "Ş" | "V" | "F" | "A")
}

/// Move-like words in lines.
fn count_move_words<'a>(lines: impl IntoIterator<Item = &'a Line>) -> usize {
    lines
        .into_iter()
        .map(|l| {
            l.text
                .split_whitespace()
                .filter(|w| is_move_word(w))
                .count()
        })
        .sum()
}

/// A word that is a move, a move number, or both (`12.Nf3`).
fn is_move_word(w: &str) -> bool {
    let t = w.trim_end_matches([',', ';', '!', '?']);
    if is_result(t) {
        return true;
    }
    if leading_number(t).is_none() && scorer::text_looks_like_move(&figurine_to_letters(t)) {
        // A move, castling `0-0` included (whose leading 0 is no move number).
        return true;
    }
    let rest = t.trim_start_matches(|c: char| c.is_ascii_digit());
    let rest = rest.trim_start_matches('.');
    let numbered = rest.len() < t.len();
    if rest.is_empty() {
        return numbered && t.ends_with('.');
    }
    scorer::text_looks_like_move(&figurine_to_letters(rest))
}

/// A result, or a part of one a line break left (`1/2-` then `1/2`).
fn is_result(w: &str) -> bool {
    matches!(
        w,
        "1-0" | "0-1" | "1/2-1/2" | "½-½" | "*" | "1/2" | "½" | "1/2-" | "½-" | "1-" | "0-"
    )
}

/// Figurines (♔♕♖♗♘, either colour) as English piece letters.
pub fn figurine_to_letters(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '♔' | '♚' => 'K',
            '♕' | '♛' => 'Q',
            '♖' | '♜' => 'R',
            '♗' | '♝' => 'B',
            '♘' | '♞' => 'N',
            c => c,
        })
        .collect()
}

/// One page's findings.
struct PageRead {
    lines: Vec<Line>,
    diagrams: Vec<(BoardReading, [f32; 4])>,
}

/// Reads every page of a book with a text layer.
///
/// # Errors
///
/// A page that cannot be drawn fails the book (its text would be missing from a game).
pub fn read(doc: &Document, cfg: &BookConfig) -> Result<Book, PageError> {
    let pages: Vec<Result<PageRead, PageError>> = (0..doc.pages())
        .into_par_iter()
        .map(|i| read_page(doc, i, cfg))
        .collect();
    let mut reads = Vec::with_capacity(pages.len());
    for p in pages {
        reads.push(p?);
    }
    Ok(assemble(&reads, cfg))
}

fn read_page(doc: &Document, i: usize, cfg: &BookConfig) -> Result<PageRead, PageError> {
    let page = doc.page(i)?;
    // A model failure reads as no diagram here; the page's text still counts.
    let mut diagrams: Vec<(BoardReading, [f32; 4])> =
        crate::board::read_all(&page.gray, &cfg.board, MAX_DIAGRAMS)
            .unwrap_or_default()
            .into_iter()
            .map(|b| {
                let r = crate::board::bounds(&b.corners);
                (b, r)
            })
            .collect();
    let width = page.gray.width() as f32;
    let glyphs = doc.glyphs(i)?.unwrap_or_default();
    // The page's lines with the areas of `rects` left out.
    let lines_outside = |rects: &[[f32; 4]]| -> Vec<Line> {
        if glyphs.is_empty() {
            // No text layer (a scanned page): find the words and read them.
            return scanned_lines(&page.gray, rects);
        }
        let kept: Vec<Glyph> = glyphs
            .iter()
            .filter(|g| {
                let (cx, cy) = ((g.rect[0] + g.rect[2]) / 2.0, (g.rect[1] + g.rect[3]) / 2.0);
                !rects.iter().any(|r| {
                    let m = (r[2] - r[0]) * 0.01;
                    cx >= r[0] - m && cx <= r[2] + m && cy >= r[1] - m && cy <= r[3] + m
                })
            })
            .cloned()
            .collect();
        text::lines(&kept, width)
    };
    // A block of regular text lines can pass for a board's lattice. A board whose least
    // sure square is unsure and whose area reads as move text is that text, not a
    // diagram (scanned seed-9 test book: a false board over the left half of a game's
    // lines cut every line of it short).
    let mut read = None;
    if diagrams.iter().any(|(b, _)| b.confidence < UNSURE_DIAGRAM) {
        let sure: Vec<[f32; 4]> = diagrams
            .iter()
            .filter(|(b, _)| b.confidence >= UNSURE_DIAGRAM)
            .map(|(_, r)| *r)
            .collect();
        let lines = lines_outside(&sure);
        diagrams.retain(|(b, r)| {
            b.confidence >= UNSURE_DIAGRAM
                || count_move_words(lines.iter().filter(|l| {
                    let cy = (l.rect[1] + l.rect[3]) / 2.0;
                    cy >= r[1] && cy <= r[3] && l.rect[0] < r[2] && l.rect[2] > r[0]
                })) < MOVE_WORDS_IN_TEXT
        });
        // Every unsure one was text: these lines are the page's (no second scan).
        if diagrams.len() == sure.len() {
            read = Some(lines);
        }
    }
    let lines = read.unwrap_or_else(|| {
        let rects: Vec<[f32; 4]> = diagrams.iter().map(|(_, r)| *r).collect();
        lines_outside(&rects)
    });
    Ok(PageRead { lines, diagrams })
}

/// A game being collected from lines.
#[derive(Default)]
struct Pending {
    heading: Vec<String>,
    moves: String,
    page: usize,
    /// Highest move number seen.
    max_number: u32,
    ended: bool,
    /// A scanned `*` was read (a result only if a new game follows).
    maybe_ended: bool,
}

/// Where a diagram stands in the text flow.
struct Placed {
    diagram: (usize, BoardReading, [f32; 4]),
    /// Index of the game being written and the move text before it.
    game: Option<usize>,
    text_before: String,
}

fn assemble(pages: &[PageRead], cfg: &BookConfig) -> Book {
    let mut finished: Vec<Pending> = Vec::new();
    let mut cur = Pending::default();
    let mut heading: Vec<String> = Vec::new();
    let mut placed: Vec<Placed> = Vec::new();
    let mut empty_pages = Vec::new();
    // Every line's move numbers, in reading order: a `1.` starts a new game only when
    // the numbers after it go on from 1 (a speck read as `1...` beside a diagram split
    // a game of the scanned seed-9 book in two).
    let lines: Vec<&Line> = pages.iter().flat_map(|p| &p.lines).collect();
    let numbers: Vec<Vec<u32>> = lines
        .iter()
        .map(|l| {
            l.text
                .split_whitespace()
                .filter_map(leading_number)
                .collect()
        })
        .collect();
    let next_number = |g: usize| -> Option<u32> {
        numbers[g]
            .iter()
            .skip(1)
            .chain(numbers[g + 1..].iter().flatten())
            .next()
            .copied()
    };
    // Line `g` starting with `1.` starts a game when the numbers after it go on from 1.
    let starts_game = |g: usize| next_number(g).is_none_or(|n| n <= 3);
    let next_line_starts_game = |g: usize| {
        lines
            .get(g + 1)
            .and_then(|l| l.text.split_whitespace().next())
            .and_then(leading_number)
            == Some(1)
            && starts_game(g + 1)
    };
    let mut g = 0usize;
    for (pi, p) in pages.iter().enumerate() {
        let mut any = !p.diagrams.is_empty();
        // Diagrams go into the flow after the last line above them in their column.
        let mut pending_diagrams: Vec<&(BoardReading, [f32; 4])> = p.diagrams.iter().collect();
        let column_of = |r: &[f32; 4]| {
            let cx = (r[0] + r[2]) / 2.0;
            p.lines
                .iter()
                .filter(|l| l.rect[0] <= cx && cx <= l.rect[2] + 1.0)
                .map(|l| l.column)
                .next()
        };
        let mut flush_diagrams =
            |upto: Option<(usize, f32)>, cur: &Pending, finished: &Vec<Pending>| {
                pending_diagrams.retain(|(b, r)| {
                    let due = match upto {
                        // Before a line of column `c` at top `y`: diagrams of that column
                        // above it, or of an earlier column.
                        Some((c, y)) => match column_of(r) {
                            Some(dc) => dc < c || (dc == c && r[3] <= y),
                            None => r[3] <= y,
                        },
                        None => true,
                    };
                    if due {
                        let game = if cur.moves.trim().is_empty() {
                            finished.len().checked_sub(1)
                        } else {
                            Some(finished.len())
                        };
                        placed.push(Placed {
                            diagram: (pi, b.clone(), *r),
                            game,
                            text_before: if cur.moves.trim().is_empty() {
                                finished.last().map(|g| g.moves.clone()).unwrap_or_default()
                            } else {
                                cur.moves.clone()
                            },
                        });
                    }
                    !due
                });
            };
        for l in &p.lines {
            let line_index = g;
            g += 1;
            flush_diagrams(Some((l.column, l.rect[1])), &cur, &finished);
            let words: Vec<&str> = l.text.split_whitespace().collect();
            if words.is_empty() {
                continue;
            }
            let movelike = words.iter().filter(|w| is_move_word(w)).count();
            // A scanned line read with little confidence is prose (a heading, a caption,
            // names) that the word model forced into chess letters.
            let unsure = l.confidence < MIN_LINE_CONFIDENCE;
            // The rest of a word broken at a hyphen (`1-` / `0`, `O-` / `O`) continues it.
            let continuation = cur.moves.ends_with('-') && words.len() <= 2;
            // A game starts at a line with a move number; move-like lines before that are
            // headings (names and places read as chess letters). Inside a game an unsure
            // line still counts when it holds a move number: dropping a line of moves derails
            // the rest of the game, while the headings after a game's end hold none.
            let numbered = words.iter().any(|w| leading_number(w).is_some());
            let starts = cur.moves.trim().is_empty() || cur.ended;
            let is_moves = continuation
                || (movelike * 2 >= words.len()
                    && movelike > 0
                    && if starts {
                        numbered && !unsure
                    } else {
                        numbered || !unsure
                    });
            // After a scanned `*`, a line just before a `1.` is the next game's heading
            // (names forced into chess letters), not the end of this game.
            let first_number = words.first().and_then(|w| leading_number(w));
            let heading_before_game =
                cur.maybe_ended && first_number != Some(1) && next_line_starts_game(line_index);
            if !is_moves || heading_before_game {
                heading.push(l.text.clone());
                continue;
            }
            any = true;
            let restart = first_number == Some(1) && cur.max_number > 1 && starts_game(line_index);
            // A game whose `1.` was lost in the scan (and the game before it has no result
            // read): the numbers fall back to 2 or 3 well into a game, after no more words
            // than the moves before that number, and the next number follows on (a heading
            // read as `2.` just before the next game's `1.` does not count).
            let lost_one = first_number != Some(1)
                && cur.max_number >= 10
                && numbers[line_index].first().is_some_and(|&n| {
                    let before = words.iter().take_while(|w| leading_number(w).is_none());
                    (2..=3).contains(&n)
                        && before.count() <= 2 * (n as usize - 1)
                        && next_number(line_index) == Some(n + 1)
                });
            let restart = restart || lost_one;
            if (restart || cur.ended) && !cur.moves.trim().is_empty() {
                finished.push(std::mem::take(&mut cur));
            }
            if cur.moves.trim().is_empty() {
                cur.heading = std::mem::take(&mut heading);
                cur.page = pi;
            } else {
                // Captions and comments inside a game are not its heading.
                heading.clear();
            }
            for w in &words {
                if let Some(n) = leading_number(w) {
                    cur.max_number = cur.max_number.max(n);
                }
                // `*` ends a game only in a text layer: a scanned dot can read as one.
                if is_result(w) && !w.ends_with('-') && (*w != "*" || l.confidence >= 1.0) {
                    cur.ended = true;
                }
                if *w == "*" {
                    cur.maybe_ended = true;
                }
            }
            // A line broken at a hyphen (`O-` / `O`) joins without a space.
            if !cur.moves.ends_with('-') {
                cur.moves.push(' ');
            }
            cur.moves.push_str(&figurine_to_letters(&l.text));
        }
        flush_diagrams(None, &cur, &finished);
        if !any {
            empty_pages.push(pi);
        }
    }
    if !cur.moves.trim().is_empty() {
        finished.push(cur);
    }
    let decoded: Vec<Option<Game>> = finished
        .par_iter()
        .map(|g| {
            let mut games = repair_text(&g.moves, &cfg.decode).ok()?;
            let mut game = games.drain(..).next()?;
            // Text none of whose words reads as a legal move (a diagram's coordinates,
            // a smudge) is not a game.
            if !game
                .plies
                .iter()
                .any(|p| matches!(p.status, Status::Ok | Status::Corrected))
            {
                return None;
            }
            for (k, v) in players(&g.heading) {
                if !game.headers.iter().any(|(h, _)| h == k) {
                    game.headers.push((k.to_string(), v));
                }
            }
            Some(game)
        })
        .collect();
    // Keep the games that decoded; renumber the diagrams' game indices.
    let mut index = vec![None; decoded.len()];
    let mut book = Book {
        empty_pages,
        ..Book::default()
    };
    for (i, (g, p)) in decoded.into_iter().zip(&finished).enumerate() {
        if let Some(g) = g {
            index[i] = Some(book.games.len());
            book.games.push(g);
            book.game_pages.push(p.page);
        }
    }
    for pl in placed {
        let (page, board, rect) = pl.diagram;
        let game = pl.game.and_then(|g| index.get(g).copied().flatten());
        let plies = count_plies(&pl.text_before);
        let (after, check) = match game {
            Some(g) => (Some((g, plies)), check(&book.games[g], plies, &board)),
            None => (None, DiagramCheck::NoGame),
        };
        book.diagrams.push(Diagram {
            page,
            board,
            rect,
            after,
            check,
        });
    }
    book
}

/// The number at the start of a word (`12.`, `12...Nf3`), if it is followed by a dot.
fn leading_number(w: &str) -> Option<u32> {
    let digits: String = w.chars().take_while(|c| c.is_ascii_digit()).collect();
    if digits.is_empty() || !w[digits.len()..].starts_with('.') {
        return None;
    }
    digits.parse().ok()
}

/// Plies written in move text: move-like words, numbers aside.
fn count_plies(text: &str) -> usize {
    text.split_whitespace()
        .filter(|w| {
            let rest = w
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .trim_start_matches('.');
            !rest.is_empty() && is_move_word(w)
        })
        .count()
}

/// `White – Black` in a heading line (en dash, em dash or a spaced hyphen).
fn players(heading: &[String]) -> Vec<(&'static str, String)> {
    for l in heading.iter().rev() {
        for sep in [" – ", " — ", " - "] {
            if let Some((w, b)) = l.split_once(sep) {
                let (w, b) = (w.trim(), b.trim());
                if !w.is_empty() && !b.is_empty() && w.len() < 60 && b.len() < 60 {
                    return vec![("White", w.to_string()), ("Black", b.to_string())];
                }
            }
        }
    }
    Vec::new()
}

/// Compares a diagram with its game after `plies` plies (and one or two either side).
fn check(game: &Game, plies: usize, board: &BoardReading) -> DiagramCheck {
    let positions = positions(game);
    let same = |k: usize| {
        positions.get(k).is_some_and(|p| {
            shakmaty::fen::Fen::from_position(p, shakmaty::EnPassantMode::Legal)
                .to_string()
                .split(' ')
                .next()
                == Some(board.placement.as_str())
        })
    };
    if same(plies) {
        return DiagramCheck::Matches(plies);
    }
    for d in [1usize, 2] {
        for k in [plies.checked_sub(d), Some(plies + d)]
            .into_iter()
            .flatten()
        {
            if same(k) {
                return DiagramCheck::MatchesNear(k);
            }
        }
    }
    DiagramCheck::Differs(plies)
}

/// The game's positions: before the first ply, then after each playable ply.
fn positions(game: &Game) -> Vec<Chess> {
    let mut pos = game.start.clone();
    let mut out = vec![pos.clone()];
    for p in &game.plies {
        let Some(m) = &p.mv else { break };
        let Ok(next) = pos.clone().play(*m) else {
            break;
        };
        pos = next;
        out.push(pos.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn move_words() {
        for w in [
            "12.", "12.Nf3", "Nf3", "exd5", "O-O", "♘f3", "0-0-0", "Vxe7+", "23...Qd7",
        ] {
            assert!(is_move_word(w), "{w}");
        }
        assert!(is_move_word("1/2-") && is_move_word("1/2") && is_move_word("1-0"));
        for w in ["Diagram", "after", "Moscow", "1985", "Game"] {
            assert!(!is_move_word(w), "{w}");
        }
        assert_eq!(leading_number("12...Qd7"), Some(12));
        assert_eq!(leading_number("1985"), None);
        assert_eq!(count_plies("1. e4 e5 2. Nf3 3...Nc6"), 4);
        assert_eq!(count_plies("9. 0-0 0-0-0 10.O-O"), 3);
    }

    fn page(lines: &[&str]) -> PageRead {
        let lines = lines
            .iter()
            .enumerate()
            .map(|(k, t)| Line {
                text: t.to_string(),
                rect: [
                    100.0,
                    100.0 + 50.0 * k as f32,
                    1000.0,
                    140.0 + 50.0 * k as f32,
                ],
                column: 0,
                size: 30.0,
                confidence: 0.9,
            })
            .collect();
        PageRead {
            lines,
            diagrams: Vec::new(),
        }
    }

    #[test]
    fn a_stray_one_inside_a_game_does_not_start_another() {
        let pages = [
            page(&["1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6"]),
            // A speck read as `1...` above the game's next line (beside a diagram).
            page(&["1...", "5. O-O Be7 6. Re1 b5 7. Bb3 d6 8. c3 O-O *"]),
            page(&["1. d4 d5 2. c4 e6 3. Nc3 Nf6 *"]),
        ];
        let book = assemble(&pages, &BookConfig::default());
        let plies: Vec<usize> = book.games.iter().map(|g| g.plies.len()).collect();
        assert_eq!(plies, [16, 6]);
    }

    #[test]
    fn a_game_whose_first_number_is_lost_still_starts_a_new_game() {
        let pages = [
            page(&[
                "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 4. Ba4 Nf6 5. O-O Be7 6. Re1 b5",
                "7. Bb3 d6 8. c3 O-O 9. h3 Nb8 10. d4 Nbd7 11. Nbd2 Bb7",
            ]),
            // The next game: its `1.` and the previous game's result were not read.
            page(&["d4 d5 2. c4 e6 3. Nc3 Nf6 4. Bg5 Be7 *"]),
            // A misread number inside a game (`12.` as `2.`) does not start one.
            page(&[
                "1. e4 c5 2. Nf3 d6 3. d4 cxd4 4. Nxd4 Nf6 5. Nc3 a6 6. Be3 e5",
                "7. Nb3 Be6 8. f3 Be7 9. Qd2 O-O 10. O-O-O Nbd7 11. g4 b5",
                "2. g5 b4 13. Ne2 Ne8 *",
            ]),
        ];
        let book = assemble(&pages, &BookConfig::default());
        let plies: Vec<usize> = book.games.iter().map(|g| g.plies.len()).collect();
        assert_eq!(plies, [22, 8, 26]);
    }

    #[test]
    fn a_heading_after_a_scanned_star_and_before_a_new_game_is_not_moves() {
        // Scanned lines (confidence 0.9): the `*` may be a dot, so it does not end the game
        // by itself; the names line, forced into chess letters, comes right before a `1.`.
        let pages = [page(&[
            "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *",
            "2.Qhh1 Fc2 Qe1",
            "1. d4 d5 2. c4 e6 *",
        ])];
        let book = assemble(&pages, &BookConfig::default());
        let plies: Vec<usize> = book.games.iter().map(|g| g.plies.len()).collect();
        assert_eq!(plies, [6, 4]);
        assert!(
            book.games[0].ignored.is_empty(),
            "{:?}",
            book.games[0].ignored
        );
    }

    #[test]
    fn heading_players() {
        let h = vec!["Game 3".to_string(), "Tal – Botvinnik".to_string()];
        assert_eq!(
            players(&h),
            [
                ("White", "Tal".to_string()),
                ("Black", "Botvinnik".to_string())
            ]
        );
        assert!(players(&["Chapter 1".to_string()]).is_empty());
    }
}
