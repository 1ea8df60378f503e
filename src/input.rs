//! Text input: bytes from a file or a pipe into a `String` the repair engine can read.
//!
//! Input: bytes (`&[u8]`, or an [`io::Read`] read up to a cap). Output: [`Text`], the
//! decoded string and the [`Encoding`] it was found in. This module owns the size cap and
//! the choice of encoding; opening files and naming them in messages is the caller's.
//!
//! Encodings, tried in this order:
//! 1. UTF-16 with a byte-order mark (`FF FE` / `FE FF`, as Windows Notepad saves it);
//! 2. UTF-8 (a leading byte-order mark is dropped); a NUL byte means the bytes are not text;
//! 3. Windows-1254, the Turkish code page (`0xDE` Ş, `0xFE` ş, `0xDD` İ, `0xFD` ı, `0xD0` Ğ,
//!    `0xF0` ğ, `0x80..=0x9F` punctuation, the rest as Latin-1) — only when the bytes hold
//!    no control character other than whitespace and no byte the code page leaves undefined.
//!
//! Anything else is [`InputError::NotText`], naming the first byte that is not UTF-8.
//!
//! ```
//! use hamle::input::{decode_text, Encoding};
//! let t = decode_text(b"1. e4 e5 2. \xDEe2").unwrap();
//! assert_eq!(t.text, "1. e4 e5 2. Şe2");
//! assert_eq!(t.encoding, Encoding::Windows1254);
//! ```

use std::fmt;
use std::io::{self, Read};

/// The default cap on one input: 16 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 16 * 1024 * 1024;

/// The encoding an input was read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Encoding {
    Utf8,
    Utf16Le,
    Utf16Be,
    /// The Turkish Windows code page.
    Windows1254,
}

impl Encoding {
    /// The encoding's usual name.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Utf8 => "UTF-8",
            Encoding::Utf16Le => "UTF-16LE",
            Encoding::Utf16Be => "UTF-16BE",
            Encoding::Windows1254 => "Windows-1254",
        }
    }
}

/// Decoded input text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Text {
    pub text: String,
    pub encoding: Encoding,
}

/// Why bytes could not be read as text.
#[derive(Debug)]
#[non_exhaustive]
pub enum InputError {
    /// The input is longer than the cap.
    TooLarge { max_bytes: u64 },
    /// The bytes are not text in any encoding tried; `byte` is the offset of the first
    /// byte that is not valid UTF-8 (or of the NUL byte).
    NotText { byte: usize, nul: bool },
    /// A UTF-16 byte-order mark, then bytes that are not UTF-16.
    BadUtf16 { byte: usize },
    /// Reading failed.
    Io(io::Error),
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::TooLarge { max_bytes } => write!(
                f,
                "input too large: more than {max_bytes} bytes ({} MiB) is not read",
                max_bytes / (1024 * 1024)
            ),
            InputError::NotText { byte, nul: true } => {
                write!(f, "not text: NUL byte at byte {byte}")
            }
            InputError::NotText { byte, nul: false } => {
                write!(f, "not text: invalid UTF-8 at byte {byte}")
            }
            InputError::BadUtf16 { byte } => write!(f, "not text: invalid UTF-16 at byte {byte}"),
            InputError::Io(e) => write!(f, "read error: {e}"),
        }
    }
}

impl std::error::Error for InputError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            InputError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for InputError {
    fn from(e: io::Error) -> Self {
        InputError::Io(e)
    }
}

/// Reads at most `max_bytes` from `r` and decodes them with [`decode_text`].
///
/// # Errors
///
/// [`InputError::TooLarge`] when `r` holds more than `max_bytes`, [`InputError::Io`] when
/// reading fails, and the errors of [`decode_text`].
pub fn read_text(r: impl Read, max_bytes: u64) -> Result<Text, InputError> {
    let mut bytes = Vec::new();
    r.take(max_bytes.saturating_add(1))
        .read_to_end(&mut bytes)?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > max_bytes {
        return Err(InputError::TooLarge { max_bytes });
    }
    decode_text(&bytes)
}

/// Decodes input bytes as text (see the module doc for the encodings tried).
///
/// # Errors
///
/// [`InputError::NotText`] when the bytes are neither UTF-8 nor plausible Windows-1254
/// text, [`InputError::BadUtf16`] when a UTF-16 byte-order mark is followed by bytes that
/// are not UTF-16.
pub fn decode_text(bytes: &[u8]) -> Result<Text, InputError> {
    if let Some(rest) = bytes.strip_prefix(&[0xFF, 0xFE]) {
        return utf16(rest, u16::from_le_bytes).map(|text| Text {
            text,
            encoding: Encoding::Utf16Le,
        });
    }
    if let Some(rest) = bytes.strip_prefix(&[0xFE, 0xFF]) {
        return utf16(rest, u16::from_be_bytes).map(|text| Text {
            text,
            encoding: Encoding::Utf16Be,
        });
    }
    let body = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF]).unwrap_or(bytes);
    let bom = bytes.len() - body.len();
    match std::str::from_utf8(body) {
        Ok(s) => match s.bytes().position(|b| b == 0) {
            Some(at) => Err(InputError::NotText {
                byte: at + bom,
                nul: true,
            }),
            None => Ok(Text {
                text: s.to_string(),
                encoding: Encoding::Utf8,
            }),
        },
        Err(e) => {
            let not_text = InputError::NotText {
                byte: e.valid_up_to() + bom,
                nul: false,
            };
            windows_1254(body)
                .map(|text| Text {
                    text,
                    encoding: Encoding::Windows1254,
                })
                .ok_or(not_text)
        }
    }
}

/// UTF-16 code units from byte pairs; the offset in errors counts the 2-byte mark.
fn utf16(bytes: &[u8], unit: fn([u8; 2]) -> u16) -> Result<String, InputError> {
    if !bytes.len().is_multiple_of(2) {
        return Err(InputError::BadUtf16 {
            byte: bytes.len() + 1,
        });
    }
    let units = bytes.chunks_exact(2).map(|c| unit([c[0], c[1]]));
    let mut out = String::with_capacity(bytes.len() / 2);
    for (i, c) in char::decode_utf16(units).enumerate() {
        match c {
            Ok('\0') | Err(_) => return Err(InputError::BadUtf16 { byte: 2 + 2 * i }),
            Ok(c) => out.push(c),
        }
    }
    Ok(out)
}

/// Bytes `0x80..=0x9F` of Windows-1254; `None` where the code page defines no character.
const CP1254_HIGH: [Option<char>; 32] = [
    Some('€'),
    None,
    Some('‚'),
    Some('ƒ'),
    Some('„'),
    Some('…'),
    Some('†'),
    Some('‡'),
    Some('ˆ'),
    Some('‰'),
    Some('Š'),
    Some('‹'),
    Some('Œ'),
    None,
    None,
    None,
    None,
    Some('‘'),
    Some('’'),
    Some('“'),
    Some('”'),
    Some('•'),
    Some('–'),
    Some('—'),
    Some('˜'),
    Some('™'),
    Some('š'),
    Some('›'),
    Some('œ'),
    None,
    None,
    Some('Ÿ'),
];

/// One Windows-1254 byte; `None` for a control character (other than whitespace) or an
/// undefined byte.
fn cp1254_char(b: u8) -> Option<char> {
    match b {
        b'\t' | b'\n' | b'\r' | 0x0B | 0x0C => Some(char::from(b)),
        0x00..=0x1F | 0x7F => None,
        0x80..=0x9F => CP1254_HIGH.get(usize::from(b - 0x80)).copied().flatten(),
        0xD0 => Some('Ğ'),
        0xDD => Some('İ'),
        0xDE => Some('Ş'),
        0xF0 => Some('ğ'),
        0xFD => Some('ı'),
        0xFE => Some('ş'),
        _ => Some(char::from(b)),
    }
}

/// The bytes as Windows-1254 text, or `None` when they do not look like text in it.
fn windows_1254(bytes: &[u8]) -> Option<String> {
    bytes.iter().map(|&b| cp1254_char(b)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf8_passes_and_loses_its_bom() {
        let t = decode_text("1. d4 Af6 2. c4 e6 ... Şe2".as_bytes()).unwrap();
        assert_eq!(t.encoding, Encoding::Utf8);
        assert_eq!(t.text, "1. d4 Af6 2. c4 e6 ... Şe2");
        let t = decode_text(b"\xEF\xBB\xBF1. e4").unwrap();
        assert_eq!(t.text, "1. e4");
        assert_eq!(decode_text(b"").unwrap().text, "");
    }

    #[test]
    fn turkish_code_page() {
        let t = decode_text(b"\xDE \xFE \xDD \xFD \xD0 \xF0 \xE7 \xC7 \xF6 \xFC \x93x\x94\r\n")
            .unwrap();
        assert_eq!(t.encoding, Encoding::Windows1254);
        assert_eq!(t.text, "Ş ş İ ı Ğ ğ ç Ç ö ü “x”\r\n");
    }

    #[test]
    fn binary_is_not_text() {
        let err = decode_text(b"1. e4 \xFF\x00\x01").unwrap_err();
        assert!(
            matches!(
                err,
                InputError::NotText {
                    byte: 6,
                    nul: false
                }
            ),
            "{err:?}"
        );
        assert_eq!(err.to_string(), "not text: invalid UTF-8 at byte 6");
        // An undefined byte of the code page.
        assert!(matches!(
            decode_text(b"ab\x81"),
            Err(InputError::NotText { byte: 2, .. })
        ));
        let err = decode_text(b"1. e4\0").unwrap_err();
        assert_eq!(err.to_string(), "not text: NUL byte at byte 5");
        // A PNG header.
        assert!(decode_text(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").is_err());
    }

    #[test]
    fn utf16_with_bom() {
        let mut le = vec![0xFF, 0xFE];
        let mut be = vec![0xFE, 0xFF];
        for u in "1. e4 Şe2".encode_utf16() {
            le.extend(u.to_le_bytes());
            be.extend(u.to_be_bytes());
        }
        assert_eq!(decode_text(&le).unwrap().text, "1. e4 Şe2");
        assert_eq!(decode_text(&be).unwrap().encoding, Encoding::Utf16Be);
        le.push(0);
        assert!(matches!(decode_text(&le), Err(InputError::BadUtf16 { .. })));
        assert!(matches!(
            decode_text(&[0xFF, 0xFE, 0x00, 0xD8, 0x41, 0x00]),
            Err(InputError::BadUtf16 { byte: 2 })
        ));
    }

    #[test]
    fn size_cap() {
        let data = [b'a'; 100];
        assert_eq!(read_text(&data[..], 100).unwrap().text.len(), 100);
        let err = read_text(&data[..], 99).unwrap_err();
        assert!(matches!(err, InputError::TooLarge { max_bytes: 99 }));
        assert!(err.to_string().starts_with("input too large"));
    }

    #[test]
    fn every_byte_string_decodes_or_errs() {
        // No panic on any short byte string.
        for a in 0..=255u8 {
            for b in [0u8, 0x41, 0x80, 0xC3, 0xDE, 0xFF] {
                let _ = decode_text(&[a, b]);
                let _ = decode_text(&[0xFF, 0xFE, a, b, a]);
            }
        }
    }
}
