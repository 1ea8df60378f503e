//! A lenient lexer for written move text: PGN, book text, OCR output.
//!
//! Input: `&str`. Output: [`LexedGame`]s — PGN tags and a flat list of [`Token`]s
//! (move numbers, move texts, results). Nothing here knows the board: a token is only
//! *syntax*, and a noisy one stays a [`TokenKind::Move`] for `decode` to judge.
//!
//! What it strips or folds: PGN comments `{…}` and `;…`, variations `(…)`, NAGs `$n`,
//! `!`/`?` glyphs; `=` or `(=)` after a move becomes a draw offer on that move; `e.p.`/`ep`
//! marks the move before it; `×` and `:` read as `x`; long dashes as `-`.

use std::ops::Range;

use crate::record::GameResult;

/// One lexed token with its byte span in the input.
#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Range<usize>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TokenKind {
    /// A move number: `9.`, `9`, `9...`, or digits run together such as `910`.
    Number {
        /// The digits as written (OCR may have merged two numbers).
        digits: String,
        /// Written with `...`: the next move is Black's.
        black: bool,
    },
    /// Text in a move's place, as read (annotation glyphs removed).
    Move {
        text: String,
        /// `=` followed the move: a draw offer.
        draw_offer: bool,
        /// `e.p.` followed the move.
        en_passant: bool,
    },
    /// A game result.
    Result(GameResult),
}

/// The tags and tokens of one game.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LexedGame {
    pub headers: Vec<(String, String)>,
    pub tokens: Vec<Token>,
}

/// Splits `text` into games and lexes each. A new game starts at a PGN tag section that
/// follows movetext, and after a result token that is followed by more tokens.
pub fn lex(text: &str) -> Vec<LexedGame> {
    let mut games = Vec::new();
    let mut cur = LexedGame::default();
    let mut words: Vec<(usize, usize)> = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut depth_paren = 0usize;

    // First pass: cut the text into words, handling tags, comments and variations.
    let flush_words =
        |words: &mut Vec<(usize, usize)>, cur: &mut LexedGame, games: &mut Vec<LexedGame>| {
            for (s, e) in words.drain(..) {
                lex_word(text, s, e, cur, games);
            }
        };
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'[' if depth_paren == 0 && at_line_start(bytes, i) => {
                let end = find_byte(bytes, i, b'\n').unwrap_or(bytes.len());
                let line = &text[i..end];
                if let Some((k, v)) = parse_tag(line) {
                    flush_words(&mut words, &mut cur, &mut games);
                    if !cur.tokens.is_empty() {
                        games.push(std::mem::take(&mut cur));
                    }
                    cur.headers.push((k, v));
                } else {
                    words.extend(split_words(text, i, end));
                }
                i = end;
            }
            b'{' => {
                i = find_byte(bytes, i, b'}').map_or(bytes.len(), |e| e + 1);
            }
            b';' if depth_paren == 0 => {
                i = find_byte(bytes, i, b'\n').unwrap_or(bytes.len());
            }
            b'(' => {
                // `(=)` is a draw offer, not a variation.
                if text[i..].starts_with("(=)") && depth_paren == 0 {
                    words.push((i + 1, i + 2));
                    i += 3;
                } else {
                    depth_paren += 1;
                    i += 1;
                }
            }
            b')' => {
                depth_paren = depth_paren.saturating_sub(1);
                i += 1;
            }
            _ if depth_paren > 0 => i += 1,
            _ => {
                let start = i;
                while i < bytes.len() && !is_break(bytes[i]) {
                    i += 1;
                }
                if i == start {
                    i += 1;
                } else {
                    words.push((start, i));
                }
            }
        }
    }
    flush_words(&mut words, &mut cur, &mut games);
    if !cur.tokens.is_empty() || !cur.headers.is_empty() {
        games.push(cur);
    }
    games
}

fn is_break(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\n' | b'\r' | b',' | b'{' | b'(' | b')' | b'[' | b']' | b';'
    )
}

fn at_line_start(bytes: &[u8], i: usize) -> bool {
    bytes[..i]
        .iter()
        .rev()
        .take_while(|&&b| b != b'\n')
        .all(|b| b.is_ascii_whitespace())
}

fn find_byte(bytes: &[u8], from: usize, b: u8) -> Option<usize> {
    bytes[from..].iter().position(|&x| x == b).map(|p| p + from)
}

fn split_words(text: &str, s: usize, e: usize) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = s;
    while i < e {
        while i < e && is_break(bytes[i]) {
            i += 1;
        }
        let st = i;
        while i < e && !is_break(bytes[i]) {
            i += 1;
        }
        if i > st {
            out.push((st, i));
        }
    }
    out
}

/// `[Key "Value"]` → (Key, Value).
fn parse_tag(line: &str) -> Option<(String, String)> {
    let inner = line.trim().strip_prefix('[')?.strip_suffix(']')?;
    let (k, rest) = inner.split_once(char::is_whitespace)?;
    let v = rest.trim().strip_prefix('"')?.strip_suffix('"')?;
    if k.is_empty() || !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    Some((k.to_string(), v.replace("\\\"", "\"")))
}

/// Folds typographic variants into the characters the scorer knows.
fn normalize(word: &str) -> String {
    word.chars()
        .filter_map(|c| match c {
            '×' | ':' => Some('x'),
            '–' | '—' | '−' | '‐' => Some('-'),
            '!' | '?' | '‼' | '⁇' | '⁈' | '⁉' | '\u{feff}' | '"' | '\'' | '´' | '`' => {
                None
            }
            c => Some(c),
        })
        .collect()
}

fn result_of(w: &str) -> Option<GameResult> {
    match w {
        "1-0" => Some(GameResult::WhiteWins),
        "0-1" => Some(GameResult::BlackWins),
        "1/2-1/2" | "½-½" | "1/2" | "½" | "=-=" | "0.5-0.5" => Some(GameResult::Draw),
        "*" => Some(GameResult::Unknown),
        _ => None,
    }
}

fn is_ep_mark(w: &str) -> bool {
    matches!(
        w.to_ascii_lowercase().as_str(),
        "e.p." | "e.p" | "ep" | "ep." | "(ep)" | "a.p." | "i.p."
    )
}

fn push(cur: &mut LexedGame, games: &mut Vec<LexedGame>, kind: TokenKind, span: Range<usize>) {
    // A result followed by a move number 1 starts the next game. A result followed by
    // anything else is more likely a misread (`0-1` for `0-0`): it stays a move reading.
    let n = cur.tokens.len();
    if n > 0 {
        if let TokenKind::Result(r) = cur.tokens[n - 1].kind {
            let restart = matches!(&kind, TokenKind::Number { digits, .. } if digits == "1");
            if restart {
                games.push(std::mem::take(cur));
            } else if !matches!(kind, TokenKind::Result(_)) {
                if r == GameResult::Unknown {
                    cur.tokens.pop();
                } else {
                    cur.tokens[n - 1].kind = TokenKind::Move {
                        text: r.as_pgn().to_string(),
                        draw_offer: false,
                        en_passant: false,
                    };
                }
            }
        }
    }
    cur.tokens.push(Token { kind, span });
}

/// Marks the last move token (if the previous token is one).
fn mark_last(cur: &mut LexedGame, f: impl FnOnce(&mut bool, &mut bool)) -> bool {
    if let Some(Token {
        kind:
            TokenKind::Move {
                draw_offer,
                en_passant,
                ..
            },
        ..
    }) = cur.tokens.last_mut()
    {
        f(draw_offer, en_passant);
        true
    } else {
        false
    }
}

fn lex_word(text: &str, s: usize, e: usize, cur: &mut LexedGame, games: &mut Vec<LexedGame>) {
    let raw = &text[s..e];
    let w = normalize(raw);
    if w.is_empty() || (w.starts_with('$') && w[1..].bytes().all(|b| b.is_ascii_digit())) {
        return;
    }
    if let Some(r) = result_of(&w) {
        push(cur, games, TokenKind::Result(r), s..e);
        return;
    }
    if w == "=" {
        mark_last(cur, |d, _| *d = true);
        return;
    }
    if is_ep_mark(&w) {
        mark_last(cur, |_, ep| *ep = true);
        return;
    }
    if w == "+" || w == "#" || w == "++" {
        if let Some(Token {
            kind: TokenKind::Move { text, .. },
            ..
        }) = cur.tokens.last_mut()
        {
            text.push_str(&w);
        }
        return;
    }
    // A move number misread by OCR (`l5.` for 15., `2O.`, `Z0.`): digits and digit
    // look-alikes, then dots.
    if let Some((digits, black)) = misread_number(&w) {
        push(cur, games, TokenKind::Number { digits, black }, s..e);
        return;
    }
    // Leading move number: `12.`, `12...`, `12.e4`, `12...Af6`, `12…`.
    let digits: String = w.chars().take_while(|c| c.is_ascii_digit()).collect();
    let after = &w[digits.len()..];
    // Move numbers never start with 0: `00`, `000` are castling.
    if !digits.is_empty() && !digits.starts_with('0') {
        let dots = after
            .chars()
            .take_while(|&c| c == '.' || c == '…')
            .collect::<String>();
        if after.is_empty() || !dots.is_empty() {
            let black = dots.chars().count() >= 2 || dots.contains('…');
            push(
                cur,
                games,
                TokenKind::Number {
                    digits: digits.clone(),
                    black,
                },
                s..e,
            );
            let rest = &after[dots.len()..];
            if !rest.is_empty() {
                push_move(cur, games, rest, s..e);
            }
            return;
        }
    }
    // A move with the next move number glued to it (`Af610.`, `Fxf2+4.`, `a620...`).
    if let Some((mv, digits, black)) = glued_number(&w) {
        push_move(cur, games, mv, s..e);
        push(cur, games, TokenKind::Number { digits, black }, s..e);
        return;
    }
    push_move(cur, games, &w, s..e);
}

/// `Af610.` → (`Af6`, `10`, White): a move, then a move number with its dots, written
/// without the space between them. The square's rank takes the first digit after a
/// file letter; the rest (1–3 digits, not starting with 0) is the number.
fn glued_number(w: &str) -> Option<(&str, String, bool)> {
    let body = w.trim_end_matches(['.', '…']);
    let dots = &w[body.len()..];
    if dots.is_empty() {
        return None;
    }
    let head = body.trim_end_matches(|c: char| c.is_ascii_digit());
    let tail = &body[head.len()..];
    let last = head.chars().last()?;
    let number = if ('a'..='h').contains(&last) {
        tail.get(1..)?
    } else if matches!(last, '+' | '#') || (last.is_alphabetic() && head.chars().count() >= 3) {
        // `Fxf2+4.`, a promotion `g8V12.`
        tail
    } else {
        return None;
    };
    // (Number 1 would start a new game: never read it off the end of a move.)
    if number.is_empty() || number.len() > 3 || number.starts_with('0') || number == "1" {
        return None;
    }
    let mv = &body[..body.len() - number.len()];
    if !mv.chars().any(|c| c.is_ascii_digit()) {
        return None;
    }
    let black = dots.chars().count() >= 2 || dots.contains('…');
    Some((mv, number.to_string(), black))
}

/// The digit a look-alike character is most often misread from.
fn digit_like(c: char) -> Option<char> {
    match c {
        '0'..='9' => Some(c),
        'l' | 'I' | 'i' | '|' | '!' => Some('1'),
        'O' | 'o' | 'D' => Some('0'),
        'Z' | 'z' => Some('2'),
        'S' | 's' | '$' => Some('5'),
        'B' => Some('8'),
        'q' => Some('9'),
        'G' => Some('6'),
        _ => None,
    }
}

/// `l5.`, `2O.`, `1|...` → the digits they most likely are, when at least one real
/// digit is there and every other character is a digit look-alike.
fn misread_number(w: &str) -> Option<(String, bool)> {
    let body = w.trim_end_matches(['.', '…']);
    let dots = &w[body.len()..];
    if dots.is_empty() || body.is_empty() || body.chars().count() > 3 {
        return None;
    }
    if body.chars().all(|c| c.is_ascii_digit()) {
        return None; // a plain number: the regular path handles it
    }
    if !body.chars().any(|c| c.is_ascii_digit()) {
        return None;
    }
    let digits: Option<String> = body.chars().map(digit_like).collect();
    let black = dots.chars().count() >= 2 || dots.contains('…');
    digits.map(|d| (d, black))
}

fn push_move(cur: &mut LexedGame, games: &mut Vec<LexedGame>, w: &str, span: Range<usize>) {
    let mut text = w.to_string();
    let mut draw_offer = false;
    let mut en_passant = false;
    let lower = text.to_ascii_lowercase();
    for suffix in ["e.p.", "e.p", "ep.", "ep"] {
        if lower.len() > suffix.len() + 1 && lower.ends_with(suffix) {
            text.truncate(text.len() - suffix.len());
            en_passant = true;
            break;
        }
    }
    // A trailing `=` is a draw offer unless a promotion letter could follow (`e8=`).
    if text.len() > 1 && text.ends_with('=') {
        text.pop();
        draw_offer = true;
    }
    if text.is_empty() {
        return;
    }
    push(
        cur,
        games,
        TokenKind::Move {
            text,
            draw_offer,
            en_passant,
        },
        span,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<TokenKind> {
        lex(text)
            .into_iter()
            .flat_map(|g| g.tokens)
            .map(|t| t.kind)
            .collect()
    }

    fn mv(t: &str) -> TokenKind {
        TokenKind::Move {
            text: t.into(),
            draw_offer: false,
            en_passant: false,
        }
    }

    fn num(d: &str, black: bool) -> TokenKind {
        TokenKind::Number {
            digits: d.into(),
            black,
        }
    }

    #[test]
    fn numbers_with_and_without_dots() {
        assert_eq!(
            kinds("9. e3 Ve7 10.Fe2 10... O-O-O 11 OO"),
            vec![
                num("9", false),
                mv("e3"),
                mv("Ve7"),
                num("10", false),
                mv("Fe2"),
                num("10", true),
                mv("O-O-O"),
                num("11", false),
                mv("OO")
            ]
        );
    }

    #[test]
    fn draw_offer_and_en_passant() {
        let k = kinds("11. O-O Khf8 = 12. dxc6 e.p. Kf7= 13. exd6ep (=)");
        assert_eq!(
            k[2],
            TokenKind::Move {
                text: "Khf8".into(),
                draw_offer: true,
                en_passant: false
            }
        );
        assert_eq!(
            k[4],
            TokenKind::Move {
                text: "dxc6".into(),
                draw_offer: false,
                en_passant: true
            }
        );
        assert_eq!(
            k[5],
            TokenKind::Move {
                text: "Kf7".into(),
                draw_offer: true,
                en_passant: false
            }
        );
        assert_eq!(
            k[7],
            TokenKind::Move {
                text: "exd6".into(),
                draw_offer: true,
                en_passant: true
            }
        );
    }

    #[test]
    fn pgn_tags_comments_variations_and_games() {
        let text = "[Event \"Test\"]\n[White \"A\"]\n\n1. e4 {best} e5 (1... c5 2. Nf3) 2. Nf3! $1 Nc6?! 1-0\n\n[Event \"Two\"]\n1. d4 d5 *\n1. c4 0-1";
        let games = lex(text);
        assert_eq!(games.len(), 3);
        assert_eq!(games[0].headers[0], ("Event".into(), "Test".into()));
        assert_eq!(
            games[0].tokens.iter().map(|t| &t.kind).collect::<Vec<_>>(),
            vec![
                &num("1", false),
                &mv("e4"),
                &mv("e5"),
                &num("2", false),
                &mv("Nf3"),
                &mv("Nc6"),
                &TokenKind::Result(GameResult::WhiteWins)
            ]
        );
        assert_eq!(games[1].headers[0].1, "Two");
        assert_eq!(games[2].tokens.len(), 3);
        // A result in the middle of move text is a misread, not the end of a game.
        let games = lex("1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. 0-1 Nf6 5. d3 d6");
        assert_eq!(games.len(), 1);
        assert_eq!(games[0].tokens[10].kind, mv("0-1"));
    }

    #[test]
    fn misread_numbers_stay_numbers() {
        assert_eq!(kinds("l5."), vec![num("15", false)]);
        assert_eq!(kinds("2O."), vec![num("20", false)]);
        assert_eq!(kinds("1|..."), vec![num("11", true)]);
        // A move with a dot after it is not a number.
        assert_eq!(kinds("e4."), vec![mv("e4.")]);
        assert_eq!(kinds("Af3."), vec![mv("Af3.")]);
    }

    #[test]
    fn glued_move_numbers_are_split_off() {
        assert_eq!(
            kinds("Af610. f3"),
            vec![mv("Af6"), num("10", false), mv("f3")]
        );
        assert_eq!(kinds("a620..."), vec![mv("a6"), num("20", true)]);
        assert_eq!(kinds("Fxf2+4."), vec![mv("Fxf2+"), num("4", false)]);
        assert_eq!(kinds("g8V12."), vec![mv("g8V"), num("12", false)]);
        // Not a glued number: a dot after a move, castling, a lone number.
        assert_eq!(kinds("e4."), vec![mv("e4.")]);
        assert_eq!(kinds("Ae40."), vec![mv("Ae40.")]);
        assert_eq!(kinds("12."), vec![num("12", false)]);
    }

    #[test]
    fn zero_led_digits_are_castling_not_numbers() {
        assert_eq!(
            kinds("11. 00 000"),
            vec![num("11", false), mv("00"), mv("000")]
        );
    }

    #[test]
    fn typographic_variants_fold() {
        assert_eq!(
            kinds("Vxd3 V×d3 V:d3"),
            vec![mv("Vxd3"), mv("Vxd3"), mv("Vxd3")]
        );
        assert_eq!(kinds("0–0"), vec![mv("0-0")]);
    }

    #[test]
    fn garbage_does_not_panic() {
        for s in [
            "",
            "[",
            "{",
            "(((",
            "1...",
            "...",
            "=",
            "e.p.",
            "[Event",
            "½",
            "\u{0}\u{1}",
        ] {
            let _ = lex(s);
        }
    }
}
