//! Input files into pages: what `hamle read` and `hamle batch` open before they look at a page.
//!
//! Input: a path. Output: a [`Document`] that knows its [`Kind`] and page count and hands out
//! one [`Page`] (grey levels, at most [`vision::MAX_SIDE`] pixels on a side) at a time, so a
//! 500-page PDF is never held as 500 rasters. What a page holds (a scoresheet, a board, …) is
//! the `read` stage's question, not this module's.
//!
//! Kinds, told by the file's first bytes (never by its name):
//! - images: PNG, JPEG, WebP (one page), decoded by `image` under [`image::Limits`];
//! - TIFF, every page (multi-page scans, fax-compressed ones included), by the `tiff` crate;
//! - PDF, every page rasterized in pure Rust by `hayro` at [`PDF_DPI`] (capped so the longer
//!   side is at most [`vision::MAX_SIDE`]); a scanned PDF's page is its embedded image, drawn;
//! - text (UTF-8, UTF-16, Windows-1254, as [`crate::input`] reads it): one page of move text.
//!
//! Caps: at most [`MAX_PAGES`] pages per document, [`MAX_IMAGE_SIDE`] pixels per side and
//! [`MAX_IMAGE_BYTES`] per decoded image; beyond them the page or file is an error, not an
//! out-of-memory kill.
//!
//! ```no_run
//! let doc = hamle::pages::open(std::path::Path::new("book.pdf"))?;
//! for i in 0..doc.pages() {
//!     let page = doc.page(i)?;
//!     println!("page {}: {}×{}", i + 1, page.gray.width(), page.gray.height());
//! }
//! # Ok::<(), hamle::pages::PageError>(())
//! ```

use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use image::{GrayImage, ImageFormat};
use serde::Serialize;

use crate::input::{decode_text, InputError, DEFAULT_MAX_BYTES};
use crate::vision;

/// Resolution PDF pages are drawn at, in dots per inch (before the [`vision::MAX_SIDE`] cap).
pub const PDF_DPI: f32 = 200.0;
/// The most pages read from one document.
pub const MAX_PAGES: usize = 5000;
pub use crate::vision::{MAX_IMAGE_BYTES, MAX_IMAGE_SIDE};

/// What a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// PNG, JPEG or WebP: one page.
    Image,
    /// TIFF: one page per image in the file.
    Tiff,
    /// PDF: one page per page.
    Pdf,
    /// Move text: one page.
    Text,
}

impl Kind {
    /// The kind's name as JSON writes it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Image => "image",
            Kind::Tiff => "tiff",
            Kind::Pdf => "pdf",
            Kind::Text => "text",
        }
    }
}

/// One page as grey levels.
#[derive(Debug, Clone)]
pub struct Page {
    /// 0-based page index in its document.
    pub index: usize,
    /// The page, scaled so its longer side is at most [`vision::MAX_SIDE`].
    pub gray: GrayImage,
    /// Pixels of `gray` per pixel of the page as stored (for a PDF: per pixel at [`PDF_DPI`]).
    pub scale: f32,
}

/// Why a file or a page could not be opened.
#[derive(Debug)]
#[non_exhaustive]
pub enum PageError {
    /// The file could not be read.
    Io(io::Error),
    /// The file is none of the kinds hamle reads; `what` says what it looks like.
    Unsupported { what: String },
    /// An image (or a TIFF page) that cannot be decoded.
    Decode(String),
    /// An image over the caps.
    TooLarge(String),
    /// A PDF that cannot be parsed (damaged, or encrypted).
    Pdf(String),
    /// A document with more pages than [`MAX_PAGES`].
    TooManyPages { pages: usize },
    /// A document without pages.
    NoPages,
    /// A page index past the end.
    NoSuchPage { index: usize, pages: usize },
    /// Text that cannot be read.
    Text(InputError),
}

impl fmt::Display for PageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PageError::Io(e) => write!(f, "cannot read the file: {e}"),
            PageError::Unsupported { what } => write!(
                f,
                "not an image, PDF or text file hamle reads ({what}); it reads PNG, JPEG, \
                 TIFF, WebP, PDF and move text"
            ),
            PageError::Decode(e) => write!(f, "cannot decode the image: {e}"),
            PageError::TooLarge(e) => write!(f, "image too large: {e}"),
            PageError::Pdf(e) => write!(f, "cannot open the PDF: {e}"),
            PageError::TooManyPages { pages } => write!(
                f,
                "{pages} pages: more than the {MAX_PAGES} read from one document"
            ),
            PageError::NoPages => write!(f, "the document has no pages"),
            PageError::NoSuchPage { index, pages } => {
                write!(f, "no page {} (the document has {pages})", index + 1)
            }
            PageError::Text(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for PageError {}

impl From<io::Error> for PageError {
    fn from(e: io::Error) -> Self {
        PageError::Io(e)
    }
}

/// An opened input file.
pub struct Document {
    path: PathBuf,
    kind: Kind,
    pages: usize,
    inner: Inner,
}

enum Inner {
    Image,
    Tiff,
    Pdf(Arc<hayro::hayro_syntax::Pdf>),
    Text(String),
}

impl fmt::Debug for Document {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Document")
            .field("path", &self.path)
            .field("kind", &self.kind)
            .field("pages", &self.pages)
            .finish()
    }
}

/// Opens a file: tells its kind from its first bytes and counts its pages.
///
/// # Errors
///
/// The file cannot be read, is of no kind hamle reads, is a damaged or encrypted PDF, has no
/// pages or more than [`MAX_PAGES`], or is text in no encoding [`crate::input`] knows.
pub fn open(path: &Path) -> Result<Document, PageError> {
    let mut head = [0u8; 16];
    let n = {
        let mut f = File::open(path)?;
        read_up_to(&mut f, &mut head)?
    };
    if n == 0 {
        return Err(PageError::Unsupported {
            what: "an empty file".into(),
        });
    }
    let head = &head[..n];
    let (kind, pages, inner) = match sniff(head) {
        Sniffed::Image => (Kind::Image, 1, Inner::Image),
        Sniffed::Tiff => (Kind::Tiff, tiff_pages(path)?, Inner::Tiff),
        Sniffed::Pdf => {
            let pdf = open_pdf(path)?;
            let pages = pdf.pages().len();
            (Kind::Pdf, pages, Inner::Pdf(Arc::new(pdf)))
        }
        Sniffed::Other(what) => return Err(PageError::Unsupported { what }),
        Sniffed::Maybe => {
            let text = read_text_file(path)?;
            (Kind::Text, 1, Inner::Text(text))
        }
    };
    if pages == 0 {
        return Err(PageError::NoPages);
    }
    if pages > MAX_PAGES {
        return Err(PageError::TooManyPages { pages });
    }
    Ok(Document {
        path: path.to_path_buf(),
        kind,
        pages,
        inner,
    })
}

impl Document {
    /// What the file is.
    pub fn kind(&self) -> Kind {
        self.kind
    }

    /// Its number of pages (1 for an image or text).
    pub fn pages(&self) -> usize {
        self.pages
    }

    /// The path it was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The text of a text file; `None` for an image or PDF.
    pub fn text(&self) -> Option<&str> {
        match &self.inner {
            Inner::Text(t) => Some(t),
            _ => None,
        }
    }

    /// The text layer of page `index`: every glyph with a Unicode mapping, in the pixels of
    /// [`Document::page`]'s image. `None` for a document that is not a PDF.
    ///
    /// # Errors
    ///
    /// No such page, or a page without a size.
    pub fn glyphs(&self, index: usize) -> Result<Option<Vec<crate::book::Glyph>>, PageError> {
        let Inner::Pdf(pdf) = &self.inner else {
            return Ok(None);
        };
        let page = pdf.pages().get(index).ok_or(PageError::NoSuchPage {
            index,
            pages: self.pages,
        })?;
        let scale = pdf_scale(page, index)?;
        Ok(Some(crate::book::text::glyphs(page, scale)))
    }

    /// Page `index` (0-based) as grey levels. Each call decodes or draws the page anew, so
    /// pages can be read from several threads at once and none is kept.
    ///
    /// # Errors
    ///
    /// No such page, a text file, or the page cannot be decoded or is over the caps.
    pub fn page(&self, index: usize) -> Result<Page, PageError> {
        if index >= self.pages {
            return Err(PageError::NoSuchPage {
                index,
                pages: self.pages,
            });
        }
        let (gray, scale) = match &self.inner {
            Inner::Image => decode_image(&self.path)?,
            Inner::Tiff => tiff_page(&self.path, index)?,
            Inner::Pdf(pdf) => pdf_page(pdf, index)?,
            Inner::Text(_) => {
                return Err(PageError::Unsupported {
                    what: "text has no image".into(),
                })
            }
        };
        Ok(Page { index, gray, scale })
    }

    /// [`Self::page`], and for an image file the image as decoded too (in colour, for
    /// the reader of photos of sets), from one decoding. Pages of TIFFs and PDFs come
    /// without it.
    ///
    /// # Errors
    ///
    /// As [`Self::page`].
    pub fn page_in_colour(
        &self,
        index: usize,
    ) -> Result<(Page, Option<image::DynamicImage>), PageError> {
        if !matches!(self.inner, Inner::Image) || index >= self.pages {
            return self.page(index).map(|p| (p, None));
        }
        let img = vision::decode(&self.path).map_err(vision_error)?;
        let (gray, scale) = vision::to_gray_scaled(&img);
        Ok((Page { index, gray, scale }, Some(img)))
    }
}

enum Sniffed {
    Image,
    Tiff,
    Pdf,
    /// Not a kind hamle reads.
    Other(String),
    /// No known signature: maybe text.
    Maybe,
}

fn sniff(head: &[u8]) -> Sniffed {
    if head.starts_with(b"%PDF") {
        return Sniffed::Pdf;
    }
    if head.starts_with(b"II*\0") || head.starts_with(b"MM\0*") {
        return Sniffed::Tiff;
    }
    match image::guess_format(head) {
        Ok(ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::WebP) => Sniffed::Image,
        Ok(f) => Sniffed::Other(format!("a {f:?} image")),
        Err(_) if head.starts_with(b"PK\x03\x04") => Sniffed::Other("a ZIP archive".into()),
        Err(_) => Sniffed::Maybe,
    }
}

fn read_up_to(r: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

fn read_text_file(path: &Path) -> Result<String, PageError> {
    let f = File::open(path)?;
    let mut bytes = Vec::new();
    f.take(DEFAULT_MAX_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > DEFAULT_MAX_BYTES {
        return Err(PageError::Text(InputError::TooLarge {
            max_bytes: DEFAULT_MAX_BYTES,
        }));
    }
    match decode_text(&bytes) {
        Ok(t) => Ok(t.text),
        Err(InputError::NotText { .. }) => Err(PageError::Unsupported {
            what: "binary data of no known format".into(),
        }),
        Err(e) => Err(PageError::Text(e)),
    }
}

fn decode_image(path: &Path) -> Result<(GrayImage, f32), PageError> {
    vision::load_gray(path).map_err(vision_error)
}

fn vision_error(e: vision::VisionError) -> PageError {
    match e {
        vision::VisionError::TooLarge(e) => PageError::TooLarge(e),
        vision::VisionError::Decode(e) => PageError::Decode(e),
    }
}

fn tiff_decoder(path: &Path) -> Result<tiff::decoder::Decoder<BufReader<File>>, PageError> {
    let mut limits = tiff::decoder::Limits::default();
    limits.decoding_buffer_size = MAX_IMAGE_BYTES as usize;
    limits.intermediate_buffer_size = MAX_IMAGE_BYTES as usize;
    tiff::decoder::Decoder::new(BufReader::new(File::open(path)?))
        .map(|d| d.with_limits(limits))
        .map_err(tiff_error)
}

fn tiff_error(e: tiff::TiffError) -> PageError {
    match e {
        tiff::TiffError::IoError(e) => PageError::Io(e),
        tiff::TiffError::LimitsExceeded => PageError::TooLarge("TIFF page over the limits".into()),
        e => PageError::Decode(format!("TIFF: {e}")),
    }
}

fn tiff_pages(path: &Path) -> Result<usize, PageError> {
    let mut d = tiff_decoder(path)?;
    let mut n = 1;
    while d.more_images() {
        if n > MAX_PAGES {
            return Err(PageError::TooManyPages { pages: n });
        }
        d.next_image().map_err(tiff_error)?;
        n += 1;
    }
    Ok(n)
}

fn tiff_page(path: &Path, index: usize) -> Result<(GrayImage, f32), PageError> {
    let mut d = tiff_decoder(path)?;
    d.seek_to_image(index).map_err(tiff_error)?;
    let (w, h) = d.dimensions().map_err(tiff_error)?;
    if w > MAX_IMAGE_SIDE || h > MAX_IMAGE_SIDE {
        return Err(PageError::TooLarge(format!(
            "{w}×{h} pixels, more than {MAX_IMAGE_SIDE} on a side"
        )));
    }
    let color = d.colortype().map_err(tiff_error)?;
    let data = d.read_image().map_err(tiff_error)?;
    let gray = tiff_gray(w, h, color, data)?;
    Ok(vision::scaled(gray))
}

/// Grey levels of a decoded TIFF page (alpha over white; CMYK without colour management).
fn tiff_gray(
    w: u32,
    h: u32,
    color: tiff::ColorType,
    data: tiff::decoder::DecodingResult,
) -> Result<GrayImage, PageError> {
    use tiff::decoder::DecodingResult as D;
    use tiff::ColorType as C;
    let unsupported = || PageError::Decode(format!("TIFF page of colour type {color:?}"));
    let (samples, bits) = match color {
        C::Gray(b) => (1, b),
        C::GrayA(b) => (2, b),
        C::RGB(b) => (3, b),
        C::RGBA(b) => (4, b),
        C::CMYK(b) => (4, b),
        _ => return Err(unsupported()),
    };
    // Every sample as 0..=255.
    let values: Vec<u8> = match (data, bits) {
        (D::U8(v), 8) => v,
        (D::U16(v), 16) => v.into_iter().map(|x| (x >> 8) as u8).collect(),
        (D::U8(v), b @ (1 | 2 | 4)) if samples == 1 => unpack_bits(&v, w, h, b),
        _ => return Err(unsupported()),
    };
    let (w_us, h_us) = (w as usize, h as usize);
    if values.len() < w_us * h_us * samples {
        return Err(PageError::Decode("TIFF page shorter than its size".into()));
    }
    let cmyk = matches!(color, C::CMYK(_));
    let mut g = GrayImage::new(w, h);
    for (o, px) in g.pixels_mut().zip(values.chunks_exact(samples)) {
        let v = match (samples, cmyk) {
            (1, _) => px[0] as u32,
            (2, _) => (px[0] as u32 * px[1] as u32 + 255 * (255 - px[1] as u32)) / 255,
            (4, true) => {
                let k = 255 - px[3] as u32;
                let c = |x: u8| (255 - x as u32) * k / 255;
                (299 * c(px[0]) + 587 * c(px[1]) + 114 * c(px[2])) / 1000
            }
            _ => {
                let l = (299 * px[0] as u32 + 587 * px[1] as u32 + 114 * px[2] as u32) / 1000;
                if samples == 4 {
                    let a = px[3] as u32;
                    (l * a + 255 * (255 - a)) / 255
                } else {
                    l
                }
            }
        };
        o[0] = v.min(255) as u8;
    }
    Ok(g)
}

/// 1, 2 or 4-bit grey samples (rows padded to whole bytes) as 0..=255.
fn unpack_bits(v: &[u8], w: u32, h: u32, bits: u8) -> Vec<u8> {
    let bits = bits as usize;
    let row_bytes = (w as usize * bits).div_ceil(8);
    let max = (1u32 << bits) - 1;
    let mut out = Vec::with_capacity(w as usize * h as usize);
    for row in v.chunks(row_bytes).take(h as usize) {
        for x in 0..w as usize {
            let bit = x * bits;
            let byte = row.get(bit / 8).copied().unwrap_or(0);
            let shift = 8 - bits - bit % 8;
            let s = (byte as u32 >> shift) & max;
            out.push((s * 255 / max) as u8);
        }
    }
    out
}

fn open_pdf(path: &Path) -> Result<hayro::hayro_syntax::Pdf, PageError> {
    let mut f = File::open(path)?;
    let len = f.seek(io::SeekFrom::End(0))?;
    f.seek(io::SeekFrom::Start(0))?;
    let mut bytes = Vec::with_capacity(len as usize);
    f.read_to_end(&mut bytes)?;
    hayro::hayro_syntax::Pdf::new(bytes).map_err(|e| {
        PageError::Pdf(match e {
            hayro::hayro_syntax::LoadPdfError::Decryption(_) => {
                "it is encrypted (password-protected PDFs are not read)".into()
            }
            _ => "damaged or not a PDF".into(),
        })
    })
}

/// Pixels per point a PDF page is drawn at: [`PDF_DPI`], less when the longer side would
/// pass [`vision::MAX_SIDE`].
fn pdf_scale(page: &hayro::hayro_syntax::page::Page<'_>, index: usize) -> Result<f32, PageError> {
    let (w, h) = page.render_dimensions();
    if !(w.is_finite() && h.is_finite() && w >= 1.0 && h >= 1.0) {
        return Err(PageError::Pdf(format!("page {} has no size", index + 1)));
    }
    let dpi_scale = PDF_DPI / 72.0;
    let fit = vision::MAX_SIDE as f32 / (w.max(h) * dpi_scale);
    Ok(dpi_scale * fit.min(1.0))
}

fn pdf_page(pdf: &hayro::hayro_syntax::Pdf, index: usize) -> Result<(GrayImage, f32), PageError> {
    let page = pdf.pages().get(index).ok_or(PageError::NoSuchPage {
        index,
        pages: pdf.pages().len(),
    })?;
    let scale = pdf_scale(page, index)?;
    let fit = scale / (PDF_DPI / 72.0);
    let settings = hayro::PixmapSettings {
        x_scale: scale,
        y_scale: scale,
        bg_color: hayro::vello_cpu::color::palette::css::WHITE,
    };
    let cache = hayro::RenderCache::new();
    let pixmap = hayro::render(
        page,
        &cache,
        &hayro::hayro_interpret::InterpreterSettings::default(),
        &hayro::RenderSettings::default(),
        &settings,
    );
    let (pw, ph) = (pixmap.width() as u32, pixmap.height() as u32);
    let mut g = GrayImage::new(pw, ph);
    // Premultiplied over an opaque white background: every pixel is opaque.
    for (o, p) in g.pixels_mut().zip(pixmap.data()) {
        o[0] = ((299 * p.r as u32 + 587 * p.g as u32 + 114 * p.b as u32) / 1000) as u8;
    }
    Ok((g, fit))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str, bytes: &[u8]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("hamle-pages-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    #[test]
    fn kinds_by_content_not_name() {
        let mut png = Vec::new();
        GrayImage::from_pixel(40, 30, image::Luma([200]))
            .write_to(&mut io::Cursor::new(&mut png), ImageFormat::Png)
            .unwrap();
        let p = temp("looks-like.txt", &png);
        let d = open(&p).unwrap();
        assert_eq!((d.kind(), d.pages()), (Kind::Image, 1));
        let page = d.page(0).unwrap();
        assert_eq!((page.gray.width(), page.gray.height()), (40, 30));
        assert_eq!(page.gray.get_pixel(3, 3)[0], 200);
        assert!(matches!(d.page(1), Err(PageError::NoSuchPage { .. })));

        let t = temp("moves.png", "1. e4 e5 2. Af3".as_bytes());
        let d = open(&t).unwrap();
        assert_eq!(d.kind(), Kind::Text);
        assert_eq!(d.text(), Some("1. e4 e5 2. Af3"));
        assert!(d.page(0).is_err());
    }

    #[test]
    fn bad_files_are_errors() {
        let zip = temp("a.zip", b"PK\x03\x04rest of an archive");
        assert!(matches!(open(&zip), Err(PageError::Unsupported { .. })));
        let bin = temp("a.bin", &[0u8, 1, 2, 3, 0, 0, 200, 255]);
        assert!(matches!(open(&bin), Err(PageError::Unsupported { .. })));
        let pdf = temp("a.pdf", b"%PDF-1.4\nnot really a pdf");
        assert!(matches!(open(&pdf), Err(PageError::Pdf(_))));
        let png = temp("cut.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
        let d = open(&png).unwrap();
        assert!(matches!(d.page(0), Err(PageError::Decode(_))));
        let mut jpg = Vec::new();
        GrayImage::from_pixel(64, 64, image::Luma([90]))
            .write_to(&mut io::Cursor::new(&mut jpg), ImageFormat::Jpeg)
            .unwrap();
        let whole = temp("whole.jpg", &jpg);
        assert!(open(&whole).unwrap().page(0).is_ok());
        let cut = temp("cut.jpg", &jpg[..jpg.len() - 40]);
        assert!(matches!(
            open(&cut).unwrap().page(0),
            Err(PageError::Decode(_))
        ));
        let tif = temp("cut.tif", b"II*\0\x08\0\0\0");
        assert!(open(&tif).is_err());
        assert!(matches!(
            open(Path::new("/no/such/file.png")),
            Err(PageError::Io(_))
        ));
    }

    #[test]
    fn huge_image_is_refused_before_decoding() {
        // A PNG header claiming 30000×30000 pixels.
        let mut png = Vec::new();
        GrayImage::new(1, 1)
            .write_to(&mut io::Cursor::new(&mut png), ImageFormat::Png)
            .unwrap();
        png[16..20].copy_from_slice(&30_000u32.to_be_bytes());
        png[20..24].copy_from_slice(&30_000u32.to_be_bytes());
        let crc = crc32(&png[12..29]);
        png[29..33].copy_from_slice(&crc.to_be_bytes());
        let p = temp("huge.png", &png);
        let d = open(&p).unwrap();
        assert!(matches!(d.page(0), Err(PageError::TooLarge(_))));
    }

    fn crc32(bytes: &[u8]) -> u32 {
        let mut c = !0u32;
        for &b in bytes {
            c ^= b as u32;
            for _ in 0..8 {
                c = if c & 1 == 1 {
                    (c >> 1) ^ 0xEDB8_8320
                } else {
                    c >> 1
                };
            }
        }
        !c
    }

    #[test]
    fn bits_unpack() {
        // 10 pixels of 1 bit: 1011001110 then padding.
        let v = unpack_bits(&[0b1011_0011, 0b1000_0000], 10, 1, 1);
        assert_eq!(v, [255, 0, 255, 255, 0, 0, 255, 255, 255, 0]);
        let v = unpack_bits(&[0b1110_0100], 2, 1, 4);
        assert_eq!(v, [238, 68]);
    }
}
