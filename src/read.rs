//! What a page holds, read: the stage behind `hamle read` and `hamle batch`.
//!
//! Input: a [`Page`] (or the text of a text file). Output: [`Content`] — a scoresheet's game,
//! a board's position, or the games in move text — or a [`ReadError`] that says why the page
//! gave nothing (for a page that is no chess at all: what each reader found lacking).
//!
//! The page is tried as a scoresheet first (the sheet layout needs a ruled move grid, and
//! fails within milliseconds on anything else: all 63 dev board images are refused), then as
//! a board, as `hamle board --kind auto` reads one: diagrams first, and an image file in
//! which none is found, or one only unsurely, also as a photo of a physical set (from its
//! colour; pages of PDFs and TIFFs are kept grey and read as diagrams). Printed book
//! pages (columns of move text beside diagrams) are read as boards only: their text needs
//! the printed-line recognizer, which hamle does not have yet.
//!
//! This module owns the choice of reader and the records written for each page ([`Content::values`],
//! [`Content::pgn`]); the readers are [`crate::sheet`], [`crate::board`] and
//! [`crate::decode::repair_text`].

use std::fmt;

use serde_json::Value;

use crate::board::{BoardConfig, BoardError, BoardKind, BoardReading};
use crate::decode::{repair_text, DecodeConfig};
use crate::output::{json, pgn};
use crate::pages::{Page, PageError};
use crate::record::Game;
use crate::sheet::{SheetConfig, SheetError, SheetReading};

/// How to read pages.
#[derive(Debug, Clone, Default)]
pub struct ReadConfig {
    pub sheet: SheetConfig,
    pub board: BoardConfig,
    /// For move text.
    pub text: DecodeConfig,
}

/// What one page held.
#[derive(Debug, Clone)]
pub enum Content {
    /// A scoresheet and the game written on it.
    Sheet(Box<SheetReading>),
    /// A board (a diagram, a screenshot, a photo).
    Board(Box<BoardReading>),
    /// Several boards on one page (a book page with two diagrams), largest first.
    Boards(Vec<BoardReading>),
    /// Move text and the games in it.
    Games(Vec<Game>),
    /// A born-digital book: its games and diagrams (the whole document at once).
    Book(Box<crate::book::Book>),
}

/// Why a page gave nothing.
#[derive(Debug)]
#[non_exhaustive]
pub enum ReadError {
    /// The page could not be opened or decoded.
    Page(PageError),
    /// A scoresheet whose move grid holds no writing.
    BlankSheet,
    /// Neither a scoresheet nor a board: what each reader said.
    NotChess { sheet: String, board: String },
    /// Text without a game in it.
    NoGame(String),
    /// A model failed (not the page's fault).
    Model(String),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReadError::Page(e) => e.fmt(f),
            ReadError::BlankSheet => write!(f, "a scoresheet with nothing written in its grid"),
            ReadError::NotChess { sheet, board } => write!(
                f,
                "no scoresheet or board found (scoresheet: {sheet}; board: {board})"
            ),
            ReadError::NoGame(e) => write!(f, "no game in the text: {e}"),
            ReadError::Model(e) => write!(f, "model failure: {e}"),
        }
    }
}

impl std::error::Error for ReadError {}

impl ReadError {
    /// A short name of the reason, for reports (`unreadable`, `blank`, `not_chess`,
    /// `no_game`, `model`).
    pub fn reason(&self) -> &'static str {
        match self {
            ReadError::Page(_) => "unreadable",
            ReadError::BlankSheet => "blank",
            ReadError::NotChess { .. } => "not_chess",
            ReadError::NoGame(_) => "no_game",
            ReadError::Model(_) => "model",
        }
    }
}

/// Reads one page: a scoresheet if it has a move grid, else a board.
///
/// # Errors
///
/// [`ReadError::BlankSheet`], [`ReadError::NotChess`] or [`ReadError::Model`].
pub fn read_page(page: &Page, cfg: &ReadConfig) -> Result<Content, ReadError> {
    read_page_in_colour(page, cfg, || None)
}

/// [`read_page`], with the page in colour at hand (`colour`, asked for only when needed):
/// with `--kind auto` (the default), a page in which no diagram is found, or only one
/// read with little confidence, is also read as a photo of a physical set, as
/// `hamle board` reads it ([`crate::board::auto_after_diagram`]). A page with two or more
/// diagrams is a book's.
///
/// # Errors
///
/// As [`read_page`].
pub fn read_page_in_colour(
    page: &Page,
    cfg: &ReadConfig,
    colour: impl FnOnce() -> Option<image::DynamicImage>,
) -> Result<Content, ReadError> {
    let sheet_err = match crate::sheet::read_gray(&page.gray, page.scale, &cfg.sheet) {
        Ok(r) => return Ok(Content::Sheet(Box::new(r))),
        Err(SheetError::Blank) => return Err(ReadError::BlankSheet),
        Err(SheetError::Model(e)) => return Err(ReadError::Model(e)),
        Err(e) => e.to_string(),
    };
    let found = crate::board::read_all(&page.gray, &cfg.board, crate::book::MAX_DIAGRAMS).map(
        |mut boards| {
            for b in &mut boards {
                b.unscale(page.scale);
            }
            boards
        },
    );
    let auto = |r| crate::board::auto_after_diagram(r, &page.gray, colour, &cfg.board);
    let found = match found {
        _ if cfg.board.kind != BoardKind::Auto => found,
        Ok(mut boards) if boards.len() == 1 => auto(Ok(boards.remove(0))).map(|b| vec![b]),
        Ok(boards) => Ok(boards),
        Err(e) => auto(Err(e)).map(|b| vec![b]),
    };
    match found {
        Ok(mut boards) => Ok(if boards.len() == 1 {
            Content::Board(Box::new(boards.remove(0)))
        } else {
            Content::Boards(boards)
        }),
        Err(BoardError::Model(e)) => Err(ReadError::Model(e)),
        Err(e) => Err(ReadError::NotChess {
            sheet: sheet_err,
            board: e.to_string(),
        }),
    }
}

/// Reads page `index` of a document: its text, or its image by [`read_page`].
///
/// # Errors
///
/// As [`read_page`] and [`read_text`], or [`ReadError::Page`] when the page cannot be drawn.
pub fn read_document_page(
    doc: &crate::pages::Document,
    index: usize,
    cfg: &ReadConfig,
) -> Result<Content, ReadError> {
    match doc.text() {
        Some(text) => read_text(text, cfg),
        // An image file is decoded once, kept in colour for the set reader.
        None => doc
            .page_in_colour(index)
            .map_err(ReadError::Page)
            .and_then(|(p, img)| read_page_in_colour(&p, cfg, || img)),
    }
}

/// Reads move text: the games in it.
///
/// # Errors
///
/// [`ReadError::NoGame`] when the text holds no game.
pub fn read_text(text: &str, cfg: &ReadConfig) -> Result<Content, ReadError> {
    if text.trim().is_empty() {
        return Err(ReadError::NoGame("the file is empty".into()));
    }
    match repair_text(text, &cfg.text) {
        Ok(games) if !games.is_empty() => Ok(Content::Games(games)),
        Ok(_) => Err(ReadError::NoGame("no moves found".into())),
        Err(e) => Err(ReadError::NoGame(e.to_string())),
    }
}

impl Content {
    /// The kind as JSON writes it: `sheet`, `board` or `text`.
    pub fn kind(&self) -> &'static str {
        match self {
            Content::Sheet(_) => "sheet",
            Content::Board(_) | Content::Boards(_) => "board",
            Content::Games(_) => "text",
            Content::Book(_) => "book",
        }
    }

    /// The games found (none for a board).
    pub fn games(&self) -> Vec<&Game> {
        match self {
            Content::Sheet(r) => vec![&r.game],
            Content::Board(_) | Content::Boards(_) => Vec::new(),
            Content::Games(g) => g.iter().collect(),
            Content::Book(b) => b.games.iter().collect(),
        }
    }

    /// Number of positions found (1 for a board).
    pub fn positions(&self) -> usize {
        match self {
            Content::Board(_) => 1,
            Content::Boards(b) => b.len(),
            Content::Book(b) => b.diagrams.len(),
            _ => 0,
        }
    }

    /// Number of records that ask for a human: flagged plies and unsure `ok` ones, plus a
    /// board with rule flags or low-confidence squares.
    pub fn flagged(&self) -> usize {
        let board_doubt =
            |b: &BoardReading| usize::from(!b.flags.is_empty() || !b.low_confidence.is_empty());
        match self {
            Content::Board(b) => board_doubt(b),
            Content::Boards(bs) => bs.iter().map(&board_doubt).sum(),
            Content::Book(book) => {
                let games: usize = book.games.iter().map(|g| g.to_check()).sum();
                let diagrams = book
                    .diagrams
                    .iter()
                    .filter(|d| {
                        board_doubt(&d.board) > 0
                            || matches!(d.check, crate::book::DiagramCheck::Differs(_))
                    })
                    .count();
                games + diagrams
            }
            _ => self.games().iter().map(|g| g.to_check()).sum(),
        }
    }

    /// One JSON object per record (a game or a position) with `file`, `page` (1-based; `null`
    /// for a one-page input) and `kind` added to the fields of `hamle sheet|board|repair
    /// --format json`.
    ///
    /// # Errors
    ///
    /// A [`serde_json::Error`] only if serialization fails.
    pub fn values(&self, file: &str, page: Option<usize>) -> serde_json::Result<Vec<Value>> {
        let mut out = match self {
            Content::Sheet(r) => vec![json::sheet_value(r, file)?],
            Content::Board(b) => vec![json::board_value(b, file)?],
            Content::Boards(bs) => bs
                .iter()
                .map(|b| json::board_value(b, file))
                .collect::<Result<_, _>>()?,
            Content::Games(gs) => gs
                .iter()
                .map(|g| json::to_value(g, file))
                .collect::<Result<_, _>>()?,
            Content::Book(b) => return book_values(b, file),
        };
        for v in &mut out {
            if let Some(o) = v.as_object_mut() {
                o.insert("page".into(), page.map_or(Value::Null, |p| (p + 1).into()));
                // A board's own `kind` (the reader: `diagram` or `physical`) stays as
                // `board_kind`; `kind` says what the page held.
                if let Some(k) = o.insert("kind".into(), self.kind().into()) {
                    if matches!(self, Content::Board(_) | Content::Boards(_)) {
                        o.insert("board_kind".into(), k);
                    }
                }
            }
        }
        Ok(out)
    }

    /// The records as PGN games, a blank line after each: games as [`pgn::write`] writes
    /// them with a `Source` tag naming the file (and page); a board as a position with its
    /// FEN and a comment on its doubt.
    pub fn pgn(&self, file: &str, page: Option<usize>) -> String {
        let source = match page {
            Some(p) => format!("{file}, page {}", p + 1),
            None => file.to_string(),
        };
        let mut buf = Vec::new();
        match self {
            Content::Board(b) => board_pgn(b, &source, &mut buf),
            Content::Boards(bs) => {
                for b in bs {
                    board_pgn(b, &source, &mut buf);
                }
            }
            Content::Book(book) => {
                for (i, g) in book.games.iter().enumerate() {
                    let mut g = g.clone();
                    let page = book.game_pages.get(i).map_or(0, |p| p + 1);
                    g.headers
                        .push(("Source".into(), format!("{file}, page {page}")));
                    let _ = pgn::write(&g, &mut buf);
                    buf.push(b'\n');
                }
                for d in &book.diagrams {
                    let mut note = format!(
                        "diagram on {file}, page {}; confidence {:.2}",
                        d.page + 1,
                        d.board.confidence
                    );
                    if let Some((g, ply)) = d.after {
                        note.push_str(&format!(
                            "; printed after ply {ply} of game {}: {}",
                            g + 1,
                            check_words(d.check)
                        ));
                    }
                    let _ = pgn::write_position(&d.board.fen, &note, &mut buf);
                    buf.push(b'\n');
                }
            }
            _ => {
                for g in self.games() {
                    let mut g = g.clone();
                    if !g.headers.iter().any(|(k, _)| k == "Source") {
                        g.headers.push(("Source".into(), source.clone()));
                    }
                    let _ = pgn::write(&g, &mut buf);
                    buf.push(b'\n');
                }
            }
        }
        String::from_utf8_lossy(&buf).into_owned()
    }
}

/// A board as a PGN position with a comment on its doubt, and a blank line.
fn board_pgn(b: &BoardReading, source: &str, buf: &mut Vec<u8>) {
    let mut notes = vec![format!(
        "position read from {source}; confidence {:.2}",
        b.confidence
    )];
    match b.side_from {
        crate::board::SideFrom::Assumed => {
            notes.push("side to move not known (White assumed)".into())
        }
        crate::board::SideFrom::Check => notes.push("Black to move (its king is in check)".into()),
        crate::board::SideFrom::Given => {}
    }
    if !b.flags.is_empty() {
        notes.push(format!("flags: {}", b.flags.join(", ")));
    }
    if !b.low_confidence.is_empty() {
        notes.push(format!("unsure squares: {}", b.low_confidence.join(" ")));
    }
    // Writing to a Vec cannot fail.
    let _ = pgn::write_position(&b.fen, &notes.join("; "), buf);
    buf.push(b'\n');
}

/// A book's records: its games (`kind` `game`, `page` of their first move text) and its
/// diagrams (`kind` `board`, with `game` (1-based), `ply` and `check`: `matches`,
/// `matches_near`, `differs` or `no_game`).
fn book_values(b: &crate::book::Book, file: &str) -> serde_json::Result<Vec<Value>> {
    let mut out = Vec::new();
    for (i, g) in b.games.iter().enumerate() {
        let mut v = json::to_value(g, file)?;
        if let Some(o) = v.as_object_mut() {
            let page = b.game_pages.get(i).map_or(Value::Null, |p| (p + 1).into());
            o.insert("page".into(), page);
            o.insert("kind".into(), "game".into());
            o.insert("game".into(), (i + 1).into());
        }
        out.push(v);
    }
    for d in &b.diagrams {
        let mut v = json::board_value(&d.board, file)?;
        if let Some(o) = v.as_object_mut() {
            o.insert("page".into(), (d.page + 1).into());
            o.insert("kind".into(), "board".into());
            o.insert(
                "game".into(),
                d.after.map_or(Value::Null, |(g, _)| (g + 1).into()),
            );
            o.insert("ply".into(), d.after.map_or(Value::Null, |(_, p)| p.into()));
            o.insert("check".into(), serde_json::to_value(d.check)?);
        }
        out.push(v);
    }
    Ok(out)
}

fn check_words(c: crate::book::DiagramCheck) -> String {
    use crate::book::DiagramCheck as D;
    match c {
        D::NoGame => "no game before it".into(),
        D::Matches(_) => "matches the game".into(),
        D::MatchesNear(p) => format!("matches the game after ply {p}"),
        D::Differs(_) => "differs from the game's position there".into(),
    }
}

/// Reads a PDF with move text in its text layer as a book.
///
/// # Errors
///
/// A page that cannot be drawn.
pub fn read_book(doc: &crate::pages::Document, cfg: &ReadConfig) -> Result<Content, ReadError> {
    let book_cfg = crate::book::BookConfig {
        decode: cfg.text.clone(),
        board: cfg.board.clone(),
    };
    let b = crate::book::read(doc, &book_cfg).map_err(ReadError::Page)?;
    if b.games.is_empty() && b.diagrams.is_empty() {
        return Err(ReadError::NoGame("no game or diagram in the book".into()));
    }
    Ok(Content::Book(Box::new(b)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::GrayImage;

    #[test]
    fn blank_page_is_not_chess() {
        let page = Page {
            index: 0,
            gray: GrayImage::from_pixel(800, 1000, image::Luma([250])),
            scale: 1.0,
        };
        let e = read_page(&page, &ReadConfig::default()).unwrap_err();
        assert_eq!(e.reason(), "not_chess");
        assert!(e.to_string().contains("no scoresheet or board"), "{e}");
    }

    #[test]
    fn text_pages() {
        let cfg = ReadConfig::default();
        let c = read_text("1. e4 e5 2. Af3 Ac6 3. Fb5 a6", &cfg).unwrap();
        assert_eq!(c.kind(), "text");
        assert_eq!(c.games().len(), 1);
        assert_eq!(c.games()[0].plies.len(), 6);
        let v = c.values("g.txt", None).unwrap();
        assert_eq!(v[0]["kind"], "text");
        assert_eq!(v[0]["page"], Value::Null);
        assert_eq!(v[0]["moves"][2]["san"], "Nf3");
        let p = c.pgn("g.txt", None);
        assert!(p.contains("[Source \"g.txt\"]"), "{p}");
        assert!(p.contains("3. Bb5 a6"), "{p}");
        assert_eq!(read_text("  \n", &cfg).unwrap_err().reason(), "no_game");
        assert_eq!(
            read_text("shopping list: milk, bread", &cfg)
                .unwrap_err()
                .reason(),
            "no_game"
        );
    }
}
