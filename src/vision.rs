//! Image utilities for the layout stages: loading, grey levels, binarization, deskew, ruled lines
//! and crops. Plain functions over [`image::GrayImage`] and a small [`Bitmap`] of ink pixels.

use std::path::Path;

use crate::geometry::Homography;
use image::imageops::FilterType;
use image::{DynamicImage, GrayImage, ImageBuffer, Luma, Pixel, RgbImage};

/// Why an image could not be used.
#[derive(Debug)]
pub enum VisionError {
    /// The file could not be read or decoded as an image.
    Decode(String),
    /// The image is over the size caps.
    TooLarge(String),
}

impl std::fmt::Display for VisionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            VisionError::Decode(e) => write!(f, "cannot decode the image: {e}"),
            VisionError::TooLarge(e) => write!(f, "image too large: {e}"),
        }
    }
}

impl std::error::Error for VisionError {}

/// The longest side an image is worked at; larger photos are scaled down first.
pub const MAX_SIDE: u32 = 3000;

/// The longest side of an image that is decoded at all, in pixels.
pub const MAX_IMAGE_SIDE: u32 = 20_000;
/// The most memory one decoded image may take, in bytes.
pub const MAX_IMAGE_BYTES: u64 = 768 * 1024 * 1024;

/// Loads an image as grey levels (transparent parts read as white paper), scaled down so its
/// longer side is at most [`MAX_SIDE`]. Returns the image and the scale applied (≤ 1).
///
/// Images over [`MAX_IMAGE_SIDE`] or [`MAX_IMAGE_BYTES`] are refused before decoding, and a
/// JPEG without its end marker is refused as cut short (the decoder would fill it with grey).
///
/// # Errors
///
/// [`VisionError::Decode`] or [`VisionError::TooLarge`].
pub fn load_gray(path: &Path) -> Result<(GrayImage, f32), VisionError> {
    Ok(gray_of(decode(path)?))
}

/// Grey levels of a decoded image, scaled to [`MAX_SIDE`] (see [`load_gray`]).
pub fn gray_of(img: DynamicImage) -> (GrayImage, f32) {
    match srgb8_gray(&img) {
        Some(g) => scaled(g),
        None if img.color().has_alpha() => to_gray_scaled(&img),
        // Owned and opaque: grey levels without another copy of a possibly huge page.
        None => scaled(img.into_luma8()),
    }
}

/// The sRGB luminance weights the `image` crate derives (through `moxcms`) for its grey
/// conversion, bit for bit ([`SrgbLuma`] reproduces its result with them).
const SRGB_LUMA: [f32; 3] = [
    f32::from_bits(0x3e59_c05b), // 0.212_647_84
    f32::from_bits(0x3f37_15fc), // 0.715_179_2
    f32::from_bits(0x3d93_cf75), // 0.072_173_04
];

/// Whether the `image` crate's colour conversions fuse their multiply-adds (FMA) on this
/// target.
const FUSED: bool = cfg!(any(
    all(
        any(target_arch = "x86", target_arch = "x86_64"),
        target_feature = "fma"
    ),
    all(target_arch = "aarch64", target_feature = "neon")
));

/// Grey levels of 8-bit sRGB colours, the same as `image`'s `to_luma8` gives, without its
/// detour through buffers of f32 and a call to `roundf` per pixel (a dev scan on one core:
/// 70–158 ms that way, 17–27 ms this way, `examples/load_speed.rs`).
///
/// `image` sums `c / 255 × weight` over the channels in f32, left to right, and rounds the sum
/// times 255. Unfused, each product is rounded on its own, so a table of the products per
/// channel value gives the same sums; fused, they are computed as `image` does. The values
/// are under 2^23 and never negative, so adding one half and truncating rounds as `round`
/// does. The test over all colours checks the whole.
struct SrgbLuma {
    terms: [[f32; 256]; 3],
}

impl SrgbLuma {
    const TO_UNIT: f32 = 1.0 / 255.0;

    fn new() -> SrgbLuma {
        let mut terms = [[0.0; 256]; 3];
        for (t, k) in terms.iter_mut().zip(SRGB_LUMA) {
            for (v, x) in t.iter_mut().enumerate() {
                *x = v as f32 * Self::TO_UNIT * k;
            }
        }
        SrgbLuma { terms }
    }

    #[inline(always)]
    fn luma(&self, r: u8, g: u8, b: u8) -> u8 {
        let l = if FUSED {
            let mut l = 0.0f32;
            for (c, k) in [r, g, b].into_iter().zip(SRGB_LUMA) {
                l = (c as f32 * Self::TO_UNIT).mul_add(k, l);
            }
            l
        } else {
            self.terms[0][r as usize] + self.terms[1][g as usize] + self.terms[2][b as usize]
        };
        (l * 255.0 + 0.5) as u8
    }
}

/// Grey levels of an 8-bit RGB or RGBA image in sRGB (transparent parts over white), the
/// same as `image`'s conversion followed by [`to_gray_scaled`]'s compositing, but faster;
/// `None` for other layouts and colour spaces, which `image` converts.
fn srgb8_gray(img: &DynamicImage) -> Option<GrayImage> {
    if img.color_space() != image::metadata::Cicp::SRGB {
        return None;
    }
    let table = SrgbLuma::new();
    let px: Vec<u8> = match img {
        DynamicImage::ImageRgb8(rgb) => rgb
            .as_raw()
            .chunks_exact(3)
            .map(|p| table.luma(p[0], p[1], p[2]))
            .collect(),
        DynamicImage::ImageRgba8(rgba) => rgba
            .as_raw()
            .chunks_exact(4)
            .map(|p| {
                let l = table.luma(p[0], p[1], p[2]);
                match p[3] {
                    255 => l,
                    a => ((l as u32 * a as u32 + 255 * (255 - a as u32)) / 255) as u8,
                }
            })
            .collect(),
        _ => return None,
    };
    GrayImage::from_raw(img.width(), img.height(), px)
}

/// Loads an image in colour (transparent parts over white), scaled down so its longer side
/// is at most `max_side`. Returns the image and the scale applied (≤ 1). The same checks as
/// [`load_gray`].
///
/// # Errors
///
/// [`VisionError::Decode`] or [`VisionError::TooLarge`].
pub fn load_rgb(path: &Path, max_side: u32) -> Result<(RgbImage, f32), VisionError> {
    Ok(rgb_of(decode(path)?, max_side))
}

/// Colour of a decoded image, transparent parts over white, scaled so its longer side is at
/// most `max_side` (see [`load_rgb`]).
pub fn rgb_of(img: DynamicImage, max_side: u32) -> (RgbImage, f32) {
    let rgb = if img.color().has_alpha() {
        let a = img.to_rgba8();
        let mut out = RgbImage::new(a.width(), a.height());
        for (o, p) in out.pixels_mut().zip(a.pixels()) {
            let al = p[3] as u32;
            for k in 0..3 {
                o[k] = ((p[k] as u32 * al + 255 * (255 - al)) / 255) as u8;
            }
        }
        out
    } else {
        img.into_rgb8()
    };
    scaled_to(rgb, max_side)
}

/// Decodes an image file within the size limits (see [`load_gray`]).
///
/// # Errors
///
/// [`VisionError::Decode`] or [`VisionError::TooLarge`].
pub fn decode(path: &Path) -> Result<DynamicImage, VisionError> {
    let err = |e: &dyn std::fmt::Display| VisionError::Decode(format!("{}: {e}", path.display()));
    let mut reader = image::ImageReader::open(path)
        .map_err(|e| err(&e))?
        .with_guessed_format()
        .map_err(|e| err(&e))?;
    if reader.format() == Some(image::ImageFormat::Jpeg)
        && !jpeg_has_end(path).map_err(|e| err(&e))?
    {
        return Err(err(&"the JPEG is cut short (no end-of-image marker)"));
    }
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_IMAGE_SIDE);
    limits.max_image_height = Some(MAX_IMAGE_SIDE);
    limits.max_alloc = Some(MAX_IMAGE_BYTES);
    reader.limits(limits);
    reader.decode().map_err(|e| match e {
        image::ImageError::Limits(l) => VisionError::TooLarge(format!("{}: {l}", path.display())),
        e => err(&e),
    })
}

/// [`decode`], at a reduced size where that is cheaper: a JPEG at least twice `min_side`
/// on its longer side is decoded at the smallest of 1/2, 1/4 and 1/8 of its size that keeps
/// that side at least `min_side` (the inverse DCT at the smaller size: a 5130 × 3410 photo
/// for a 1280-pixel reading decodes in a fraction of the time). Returns the image and the
/// scale it was decoded at (≤ 1: pixel coordinates in it divided by the scale are the
/// file's). Other files, and JPEGs whose frame is not 8-bit grey or colour, are decoded as
/// [`decode`] does, at scale 1.
///
/// # Errors
///
/// [`VisionError::Decode`] or [`VisionError::TooLarge`].
pub fn decode_at_least(path: &Path, min_side: u32) -> Result<(DynamicImage, f32), VisionError> {
    use std::io::Read;
    let full = || decode(path).map(|img| (img, 1.0));
    let err = |e: &dyn std::fmt::Display| VisionError::Decode(format!("{}: {e}", path.display()));
    // The frame header comes before the scan, after at most a few large APP segments
    // (EXIF, ICC): the file's head tells whether it is worth reading whole here.
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(JPEG_HEAD).read_to_end(&mut head))
        .map_err(|e| err(&e))?;
    let Some((w, h)) = jpeg_frame(&head) else {
        return full();
    };
    let side = w.max(h);
    if u32::from(side) < 2 * min_side || u32::from(side) > MAX_IMAGE_SIDE {
        return full();
    }
    if !jpeg_has_end(path).map_err(|e| err(&e))? {
        return Err(err(&"the JPEG is cut short (no end-of-image marker)"));
    }
    let bytes = std::fs::read(path).map_err(|e| err(&e))?;
    let want = |v: u16| {
        let scaled = (f64::from(v) * f64::from(min_side) / f64::from(side)).ceil();
        scaled.clamp(1.0, f64::from(v)) as u16
    };
    let mut dec = jpeg_decoder::Decoder::new(bytes.as_slice());
    let Ok((sw, sh)) = dec.scale(want(w), want(h)) else {
        return full();
    };
    let Ok(pixels) = dec.decode() else {
        return full();
    };
    let Some(info) = dec.info() else {
        return full();
    };
    let img = match info.pixel_format {
        jpeg_decoder::PixelFormat::RGB24 => {
            RgbImage::from_raw(u32::from(sw), u32::from(sh), pixels).map(DynamicImage::ImageRgb8)
        }
        jpeg_decoder::PixelFormat::L8 => {
            GrayImage::from_raw(u32::from(sw), u32::from(sh), pixels).map(DynamicImage::ImageLuma8)
        }
        _ => None,
    };
    match img {
        Some(img) => Ok((img, f32::from(sw) / f32::from(w))),
        None => full(),
    }
}

/// How much of a file [`decode_at_least`] reads to find a JPEG's frame header.
const JPEG_HEAD: u64 = 256 * 1024;

/// The size of a JPEG's frame when it is one that [`decode_at_least`] hands to
/// `jpeg_decoder` (8-bit samples, 1 or 3 components: the decoder panics on some frames its
/// parser lets through); `None` for anything else, and when `bytes` (the file's head)
/// end before the frame header.
fn jpeg_frame(bytes: &[u8]) -> Option<(u16, u16)> {
    if bytes.get(..2)? != [0xFF, 0xD8] {
        return None;
    }
    let mut i = 2;
    loop {
        // markers may be padded with 0xFF
        while *bytes.get(i)? == 0xFF && *bytes.get(i + 1)? == 0xFF {
            i += 1;
        }
        if *bytes.get(i)? != 0xFF {
            return None;
        }
        let marker = *bytes.get(i + 1)?;
        let len = usize::from(u16::from_be_bytes([*bytes.get(i + 2)?, *bytes.get(i + 3)?]));
        match marker {
            // SOF0-2: baseline, extended and progressive Huffman DCT
            0xC0..=0xC2 => {
                let seg = bytes.get(i + 4..i + 2 + len)?;
                let (precision, h, w, comps) = (
                    seg.first()?,
                    u16::from_be_bytes([*seg.get(1)?, *seg.get(2)?]),
                    u16::from_be_bytes([*seg.get(3)?, *seg.get(4)?]),
                    *seg.get(5)?,
                );
                return (*precision == 8 && (comps == 1 || comps == 3) && w > 0 && h > 0)
                    .then_some((w, h));
            }
            // any other frame kind, or the scan before a frame
            0xC3 | 0xC5..=0xC7 | 0xC9..=0xCB | 0xCD..=0xCF | 0xDA | 0xD9 => return None,
            _ => i += 2 + len,
        }
    }
}

/// Whether a JPEG file ends with its end-of-image marker (`FF D9`) within its last 4 KiB
/// (some writers pad or append a little after it).
fn jpeg_has_end(path: &Path) -> std::io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::File::open(path)?;
    let len = f.seek(SeekFrom::End(0))?;
    let tail = len.min(4096);
    f.seek(SeekFrom::Start(len - tail))?;
    let mut buf = Vec::with_capacity(tail as usize);
    f.read_to_end(&mut buf)?;
    Ok(buf.windows(2).any(|w| w == [0xFF, 0xD9]))
}

/// Grey levels of a decoded image, alpha composited over white, scaled to [`MAX_SIDE`].
pub fn to_gray_scaled(img: &DynamicImage) -> (GrayImage, f32) {
    let g = if let Some(g) = srgb8_gray(img) {
        g
    } else if img.color().has_alpha() {
        let la = img.to_luma_alpha8();
        let mut g = GrayImage::new(la.width(), la.height());
        for (o, p) in g.pixels_mut().zip(la.pixels()) {
            let a = p[1] as u32;
            o[0] = ((p[0] as u32 * a + 255 * (255 - a)) / 255) as u8;
        }
        g
    } else {
        img.to_luma8()
    };
    scaled(g)
}

/// `g` scaled down so its longer side is at most [`MAX_SIDE`], and the scale applied.
pub fn scaled(g: GrayImage) -> (GrayImage, f32) {
    scaled_to(g, MAX_SIDE)
}

/// `img` scaled down (triangle filter) so its longer side is at most `max_side`, and the
/// scale applied (1 when it already fits).
fn scaled_to<P>(img: ImageBuffer<P, Vec<u8>>, max_side: u32) -> (ImageBuffer<P, Vec<u8>>, f32)
where
    P: Pixel<Subpixel = u8> + 'static,
{
    let side = img.width().max(img.height());
    if side > max_side {
        let s = max_side as f32 / side as f32;
        let w = ((img.width() as f32 * s).round() as u32).max(1);
        let h = ((img.height() as f32 * s).round() as u32).max(1);
        (resize(&img, w, h), s)
    } else {
        (img, 1.0)
    }
}

/// `img` resized to `w × h` with a triangle (bilinear) filter widened by the scale when
/// shrinking, so each output pixel averages its whole footprint: what
/// `image::imageops::resize(.., FilterType::Triangle)` computes, to within one grey level,
/// by `fast_image_resize`'s SIMD convolution. On one core it shrank a 1024 × 1365 grey
/// photo to 384 × 512 in 0.7 ms against 13 ms, and a 2099 × 2968 scoresheet to 128 × 128
/// in 0.7 ms against 17 ms.
pub fn resize<P>(img: &ImageBuffer<P, Vec<u8>>, w: u32, h: u32) -> ImageBuffer<P, Vec<u8>>
where
    P: Pixel<Subpixel = u8> + 'static,
{
    use fast_image_resize as fr;
    let pixel_type = match P::CHANNEL_COUNT {
        1 => Some(fr::PixelType::U8),
        2 => Some(fr::PixelType::U8x2),
        3 => Some(fr::PixelType::U8x3),
        4 => Some(fr::PixelType::U8x4),
        _ => None,
    };
    let fast = pixel_type.filter(|_| w > 0 && h > 0).and_then(|pt| {
        let src = fr::images::ImageRef::new(img.width(), img.height(), img.as_raw(), pt).ok()?;
        let mut dst = fr::images::Image::new(w, h, pt);
        let options = fr::ResizeOptions::new()
            .resize_alg(fr::ResizeAlg::Convolution(fr::FilterType::Bilinear));
        fr::Resizer::new().resize(&src, &mut dst, &options).ok()?;
        ImageBuffer::from_raw(w, h, dst.into_vec())
    });
    // Not reached for the images hamle makes (an empty one, say); kept so that no input can
    // panic here.
    fast.unwrap_or_else(|| image::imageops::resize(img, w, h, FilterType::Triangle))
}

/// Ink pixels of an image (`true` = ink), row-major.
#[derive(Debug, Clone)]
pub struct Bitmap {
    pub width: u32,
    pub height: u32,
    pub ink: Vec<bool>,
}

impl Bitmap {
    #[inline]
    pub fn get(&self, x: u32, y: u32) -> bool {
        self.ink[(y * self.width + x) as usize]
    }

    /// Number of ink pixels in the rectangle `[x0, x1) × [y0, y1)` (clipped to the image).
    pub fn count(&self, x0: u32, y0: u32, x1: u32, y1: u32) -> u32 {
        let (x1, y1) = (x1.min(self.width), y1.min(self.height));
        let mut n = 0;
        for y in y0..y1 {
            let row = &self.ink[(y * self.width) as usize..((y + 1) * self.width) as usize];
            n += row[x0.min(x1) as usize..x1 as usize]
                .iter()
                .filter(|&&b| b)
                .count() as u32;
        }
        n
    }
}

/// Binarizes with a local mean: a pixel is ink when it is darker than the mean of its
/// neighbourhood (a square of side `2 * radius + 1`) by more than a margin. Robust to uneven
/// lighting and grey shading, unlike one global threshold.
pub fn binarize(img: &GrayImage, radius: u32) -> Bitmap {
    binarize_with(img, radius, 0.06, 10.0)
}

/// The neighbourhood radius [`ruled_lines`] takes on a page: 1/80 of its longer side, at
/// least 8 pixels.
pub fn rule_radius(img: &GrayImage) -> u32 {
    (img.width().max(img.height()) / 80).max(8)
}

/// A page's printed rules as ink: [`binarize_with`] at a small margin, which keeps the faint
/// rules a light scan leaves a few grey levels under the paper.
pub fn ruled_lines(img: &GrayImage, radius: u32) -> Bitmap {
    binarize_with(img, radius, 0.02, 5.0)
}

/// [`binarize`] with its margin: ink is darker than the local mean by more than
/// `max(rel * mean, abs)`. A small margin finds faint printed rules (a light scan leaves them
/// a few grey levels under the paper); a larger one keeps only real ink.
pub fn binarize_with(img: &GrayImage, radius: u32, rel: f32, abs: f32) -> Bitmap {
    let (w, h) = (img.width() as usize, img.height() as usize);
    let raw = img.as_raw();
    let r = radius as usize;
    // The box sums come from running column sums (rows y0..y1 of each column, moved down
    // one row at a time) and a prefix sum along each row: the same integers as an integral
    // image, in memory for two rows instead of the page (a page-sized u64 table was 50 MB
    // of fresh pages per call).
    let mut colsum = vec![0u32; w];
    let mut prefix = vec![0u32; w + 1];
    let (mut y0, mut y1) = (0usize, 0usize);
    let mut ink = vec![false; w * h];
    let dark = |p: u8, mean: f32| (p as f32) < mean - (rel * mean).max(abs);
    for y in 0..h {
        let (want0, want1) = (y.saturating_sub(r), (y + r + 1).min(h));
        while y1 < want1 {
            for (c, &p) in colsum.iter_mut().zip(&raw[y1 * w..(y1 + 1) * w]) {
                *c = c.wrapping_add(u32::from(p));
            }
            y1 += 1;
        }
        while y0 < want0 {
            for (c, &p) in colsum.iter_mut().zip(&raw[y0 * w..(y0 + 1) * w]) {
                *c = c.wrapping_sub(u32::from(p));
            }
            y0 += 1;
        }
        // Wrapping: sums may pass 2^32 on a huge image; the differences (a box's sum, under
        // 2^32 for any radius under 2,000) come out right regardless.
        let mut run = 0u32;
        for (x, &c) in colsum.iter().enumerate() {
            run = run.wrapping_add(c);
            prefix[x + 1] = run;
        }
        let rows = (y1 - y0) as u32;
        let src = &raw[y * w..(y + 1) * w];
        let out = &mut ink[y * w..(y + 1) * w];
        let edge = |x: usize| {
            let (x0, x1) = (x.saturating_sub(r), (x + r + 1).min(w));
            let sum = prefix[x1].wrapping_sub(prefix[x0]);
            dark(src[x], sum as f32 / (rows * (x1 - x0) as u32) as f32)
        };
        // Inside, every box is whole: the same sums over one area, in a loop the compiler
        // can vectorize (sums below 2^31 convert as i32, the same f32 value).
        let (lo, hi) = (r.min(w), w.saturating_sub(r).max(r.min(w)));
        let area = (rows as u64) * (2 * r as u64 + 1);
        if hi > lo && area * 255 < 1 << 31 {
            let area = area as f32;
            let sums = prefix[lo + r + 1..hi + r + 1]
                .iter()
                .zip(&prefix[lo - r..hi - r])
                .map(|(b, a)| b.wrapping_sub(*a) as i32);
            for ((o, &p), sum) in out[lo..hi].iter_mut().zip(&src[lo..hi]).zip(sums) {
                *o = dark(p, sum as f32 / area);
            }
            for x in (0..lo).chain(hi..w) {
                out[x] = edge(x);
            }
        } else {
            for (x, o) in out.iter_mut().enumerate() {
                *o = edge(x);
            }
        }
    }
    Bitmap {
        width: w as u32,
        height: h as u32,
        ink,
    }
}

/// The skew of a page's ruled lines and text rows, in degrees (positive: the right end of a
/// horizontal line is lower), searched within ±`max_deg`.
pub fn skew_degrees(bm: &Bitmap, max_deg: f32) -> f32 {
    try_skew_degrees(bm, max_deg).unwrap_or(0.0)
}

/// [`skew_degrees`], `None` where the bitmap holds too little ink to tell.
pub fn try_skew_degrees(bm: &Bitmap, max_deg: f32) -> Option<f32> {
    SkewPoints::of_rows(bm, 0, bm.height).skew(max_deg)
}

/// The ink a skew is measured on: every row of a sparse grid of about 400 columns (at most),
/// kept column by column. Rows `y0..y1` of a bitmap, or columns `x0..x1` mirrored about the
/// diagonal as `Bitmap::columns` makes them, gathered without making either bitmap.
struct SkewPoints {
    width: u32,
    height: u32,
    /// Each sampled column's x and where its rows start in `ys` (the last: `ys.len()`).
    xs: Vec<f32>,
    starts: Vec<usize>,
    ys: Vec<f32>,
}

impl SkewPoints {
    /// The points of rows `y0..y1` of `bm`.
    fn of_rows(bm: &Bitmap, y0: u32, y1: u32) -> SkewPoints {
        let y1 = y1.min(bm.height);
        let y0 = y0.min(y1);
        let w = bm.width as usize;
        let step = (bm.width / 400).max(1) as usize;
        let cols: Vec<usize> = (0..w).step_by(step).collect();
        // Count each column's ink first, then place it: one pass along the rows each.
        let mut counts = vec![0usize; cols.len()];
        for y in y0..y1 {
            let row = &bm.ink[y as usize * w..][..w];
            for (n, &x) in counts.iter_mut().zip(&cols) {
                *n += usize::from(row[x]);
            }
        }
        let mut starts = Vec::with_capacity(cols.len() + 1);
        let mut at = 0;
        for n in &counts {
            starts.push(at);
            at += n;
        }
        starts.push(at);
        let mut ys = vec![0.0f32; at];
        let mut fill = starts.clone();
        for y in y0..y1 {
            let row = &bm.ink[y as usize * w..][..w];
            for (f, &x) in fill.iter_mut().zip(&cols) {
                if row[x] {
                    ys[*f] = (y - y0) as f32;
                    *f += 1;
                }
            }
        }
        SkewPoints {
            width: bm.width,
            height: y1 - y0,
            xs: cols.iter().map(|&x| x as f32).collect(),
            starts,
            ys,
        }
    }

    /// The points of `bm.columns(x0, x1)`: its sampled columns are `bm`'s rows.
    fn of_columns(bm: &Bitmap, x0: u32, x1: u32) -> SkewPoints {
        let x1 = x1.min(bm.width);
        let x0 = x0.min(x1);
        let step = (bm.height / 400).max(1) as usize;
        let (mut xs, mut starts, mut ys) = (Vec::new(), Vec::new(), Vec::new());
        for y in (0..bm.height as usize).step_by(step) {
            xs.push(y as f32);
            starts.push(ys.len());
            let row = &bm.ink[y * bm.width as usize..][x0 as usize..x1 as usize];
            ys.extend(
                row.iter()
                    .enumerate()
                    .filter(|(_, &b)| b)
                    .map(|(x, _)| x as f32),
            );
        }
        starts.push(ys.len());
        SkewPoints {
            width: bm.height,
            height: x1 - x0,
            xs,
            starts,
            ys,
        }
    }

    /// The angle within ±`max_deg` whose projection profile (rows two pixels high) is
    /// sharpest, in steps of 0.25° refined to 0.05°; `None` under 100 points.
    fn skew(&self, max_deg: f32) -> Option<f32> {
        if self.ys.len() < 100 {
            return None;
        }
        // Four histograms taking turns, summed at the end: neighbouring points mostly fall
        // in one bin, and one histogram would make each count wait for the one before.
        let mut hist: Vec<[u32; 4]> = Vec::new();
        let score = |deg: f32| -> f64 {
            let t = deg.to_radians().tan();
            let off = self.width as f32 * t.abs();
            let n = (self.height as f32 + 2.0 * off) as usize / 2 + 2;
            hist.clear();
            hist.resize(n, [0; 4]);
            let hist = hist.as_mut_slice();
            for (c, &x) in self.xs.iter().enumerate() {
                let xt = x * t;
                let ys = &self.ys[self.starts[c]..self.starts[c + 1]];
                let mut count = |y: f32, k: usize| {
                    if let Some(h) = hist.get_mut(((y - xt + off) / 2.0) as usize) {
                        h[k] += 1;
                    }
                };
                // In fours, so that each of the four histograms takes one of them.
                let mut quads = ys.chunks_exact(4);
                for q in &mut quads {
                    for (k, &y) in q.iter().enumerate() {
                        count(y, k);
                    }
                }
                for &y in quads.remainder() {
                    count(y, 0);
                }
            }
            hist.iter()
                .map(|h| {
                    let c = h.iter().sum::<u32>() as f64;
                    c * c
                })
                .sum()
        };
        Some(sharpest_angle(max_deg, score))
    }
}

/// The angle within ±`max_deg` that `score` rates highest: every 0.25° (0 first, which wins
/// ties), then every 0.05° within 0.25° of the best. The skew search's angle steps, shared
/// with its plain reference in the tests and `examples/skew_speed.rs`.
pub fn sharpest_angle(max_deg: f32, mut score: impl FnMut(f32) -> f64) -> f32 {
    let mut best = (0.0f32, score(0.0));
    let mut deg = -max_deg;
    while deg <= max_deg + 1e-3 {
        let s = score(deg);
        if s > best.1 {
            best = (deg, s);
        }
        deg += 0.25;
    }
    let centre = best.0;
    let mut d = centre - 0.25;
    while d <= centre + 0.25 + 1e-3 {
        let s = score(d);
        if s > best.1 {
            best = (d, s);
        }
        d += 0.05;
    }
    best.0
}

/// A skew under this many degrees is left as it is by [`rotate`].
pub const MIN_ROTATION_DEG: f32 = 0.05;

/// The map [`rotate`] makes of a `width` × `height` image for a skew of `deg` degrees (the
/// identity under [`MIN_ROTATION_DEG`], as there `rotate` copies), for folding the turn into
/// a later warp so that the page is resampled once.
pub fn rotation(width: u32, height: u32, deg: f32) -> Homography {
    if deg.abs() < MIN_ROTATION_DEG {
        return Homography::IDENTITY;
    }
    // `rotate` samples the image at [[c, −s], [s, c]] (p − centre) + centre for page pixel p;
    // this is the inverse.
    let (s, c) = (deg as f64).to_radians().sin_cos();
    let (cx, cy) = (width as f64 / 2.0, height as f64 / 2.0);
    Homography([
        [c, s, cx - c * cx - s * cy],
        [-s, c, cy + s * cx - c * cy],
        [0.0, 0.0, 1.0],
    ])
}

/// Rotates an image about its centre so that a skew of `deg` degrees is undone; new corners
/// are white. A skew under [`MIN_ROTATION_DEG`] gives a copy.
///
/// Bilinear, as imageproc's `rotate_about_center` (the same pre-image of each pixel, white
/// where it falls outside), but in fixed point: source coordinates with 32 fractional bits
/// stepped along each row and weights in 1/256ths, where imageproc maps each pixel through
/// its projection in f32 (both truncate each of the three blends to a grey level). A
/// page's rotation takes about a quarter of the time; grey levels differ by up to two, 0.15
/// on average (the test bounds it).
pub fn rotate(img: &GrayImage, deg: f32) -> GrayImage {
    use rayon::prelude::*;
    if deg.abs() < MIN_ROTATION_DEG {
        return img.clone();
    }
    let (w, h) = (img.width() as usize, img.height() as usize);
    let mut out = GrayImage::new(img.width(), img.height());
    if w < 2 || h < 2 {
        out.fill(255);
        return out;
    }
    // The output pixel (x, y) samples the source at R(-θ)((x, y) − c) + c, θ = −deg.
    let (s, c) = (-(deg as f64).to_radians()).sin_cos();
    let (cx, cy) = (w as f64 / 2.0, h as f64 / 2.0);
    const FRAC: u32 = 32;
    let fixed = |v: f64| (v * (1u64 << FRAC) as f64).round() as i64;
    let (step_x, step_y) = (fixed(c), fixed(-s));
    let src = img.as_raw();
    out.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
        let dy = y as f64 - cy;
        let mut sx = fixed(-c * cx + s * dy + cx);
        let mut sy = fixed(s * cx + c * dy + cy);
        for o in row.iter_mut() {
            // floor (an arithmetic shift), then imageproc's bounds: both neighbours inside
            let (ix, iy) = (sx >> FRAC, sy >> FRAC);
            *o = if ix >= 0 && iy >= 0 && ix + 1 < w as i64 && iy + 1 < h as i64 {
                let fx = ((sx >> (FRAC - 8)) & 0xFF) as u32;
                let fy = ((sy >> (FRAC - 8)) & 0xFF) as u32;
                let i = iy as usize * w + ix as usize;
                let px = |k: usize| src[k] as u32;
                // each blend truncated, as imageproc's are
                let top = (px(i) * (256 - fx) + px(i + 1) * fx) >> 8;
                let bottom = (px(i + w) * (256 - fx) + px(i + w + 1) * fx) >> 8;
                ((top * (256 - fy) + bottom * fy) >> 8) as u8
            } else {
                255
            };
            sx += step_x;
            sy += step_y;
        }
    });
    out
}

impl Bitmap {
    /// Rows `y0..y1` as a bitmap of their own (the skew search's plain reference in tests).
    #[cfg(test)]
    pub fn rows(&self, y0: u32, y1: u32) -> Bitmap {
        let (y0, y1) = (y0.min(self.height), y1.min(self.height));
        Bitmap {
            width: self.width,
            height: y1 - y0,
            ink: self.ink[(y0 * self.width) as usize..(y1 * self.width) as usize].to_vec(),
        }
    }

    /// Columns `x0..x1` mirrored about the diagonal, as a bitmap of their own: its rows are
    /// those columns, so row tools like [`skew_degrees`] see vertical lines as horizontal
    /// (the skew search's plain reference in tests; `SkewPoints` gathers the same points
    /// without the copy).
    #[cfg(test)]
    pub fn columns(&self, x0: u32, x1: u32) -> Bitmap {
        let (x0, x1) = (x0.min(self.width), x1.min(self.width));
        let (w, h) = ((x1 - x0) as usize, self.height as usize);
        let mut ink = vec![false; w * h];
        for y in 0..h {
            let row = &self.ink[y * self.width as usize..][x0 as usize..x1 as usize];
            for (x, &b) in row.iter().enumerate() {
                ink[x * h + y] = b;
            }
        }
        Bitmap {
            width: self.height,
            height: x1 - x0,
            ink,
        }
    }

    /// Ink pixels in each row `y0..y1` of the rectangle `[x0, x1) × [y0, y1)`.
    pub fn ink_per_row(&self, x0: u32, x1: u32, y0: u32, y1: u32) -> Vec<u32> {
        (y0..y1).map(|y| self.count(x0, y, x1, y + 1)).collect()
    }

    /// Ink pixels in each column `x0..x1` of the rectangle `[x0, x1) × [y0, y1)`.
    pub fn ink_per_column(&self, x0: u32, x1: u32, y0: u32, y1: u32) -> Vec<u32> {
        let (x1, y1) = (x1.min(self.width), y1.min(self.height));
        let mut cols = vec![0u32; x1.saturating_sub(x0) as usize];
        for y in y0..y1 {
            let row = &self.ink[(y * self.width) as usize..][x0.min(x1) as usize..x1 as usize];
            for (c, &b) in cols.iter_mut().zip(row) {
                *c += b as u32;
            }
        }
        cols
    }
}

/// A page photographed at a slant: where the ruled lines' directions differ between the top
/// and the bottom third (horizontals, fitted through bands by [`banded_skews`]) or the left
/// and the right third (verticals, each third measured whole) by at least `min_deg`, or the
/// verticals lean by that much on average, the projective map that makes them parallel and
/// upright again; `None` where they already are. The lines through the middle of each third
/// keep their places. `bm` is the page's binarized lines, measured before the page was
/// turned by [`rotate`] to undo a skew of `turned` degrees (0 for none): measured so, the
/// lines lie within the search's ±8° on more photos, and the edges of the turned page's
/// blank corners do not count as lines.
pub fn rectifying(bm: &Bitmap, min_deg: f32, turned: f32) -> Option<Homography> {
    let (w, h) = (bm.width, bm.height);
    let [top, bottom] = banded_skews(bm).map(|d| d - turned);
    let column_skew = |x0, x1| SkewPoints::of_columns(bm, x0, x1).skew(8.0).unwrap_or(0.0);
    let left = column_skew(0, w / 3) + turned;
    let right = column_skew(2 * w / 3, w) + turned;
    // Lines that converge, or vertical lines all leaning the same way while the horizontal
    // ones are level (a page photographed from a corner: a shear).
    if (top - bottom).abs() < min_deg
        && (left - right).abs() < min_deg
        && (left + right).abs() / 2.0 < min_deg
    {
        return None;
    }
    let (wf, hf) = (w as f32, h as f32);
    // Horizontal lines y = y0 + (x - w/2) tan(a); vertical lines x = x0 + (y - h/2) tan(b).
    let corner = |y0: f32, a: f32, x0: f32, b: f32| {
        let (ta, tb) = (a.to_radians().tan(), b.to_radians().tan());
        let y = (y0 + (x0 - hf / 2.0 * tb - wf / 2.0) * ta) / (1.0 - ta * tb);
        (x0 + (y - hf / 2.0) * tb, y)
    };
    let (yt, yb, xl, xr) = (hf / 6.0, 5.0 * hf / 6.0, wf / 6.0, 5.0 * wf / 6.0);
    let from = [
        corner(yt, top, xl, left),
        corner(yt, top, xr, right),
        corner(yb, bottom, xr, right),
        corner(yb, bottom, xl, left),
    ];
    let to = [(xl, yt), (xr, yt), (xr, yb), (xl, yb)];
    let f64s = |p: [(f32, f32); 4]| p.map(|(x, y)| [f64::from(x), f64::from(y)]);
    Homography::from_points(&f64s(from), &f64s(to))
}

/// `img` warped by the projective map `h` (from `img` to the result, the same size);
/// what falls outside `img` is white.
///
/// Bilinear, as imageproc's `warp` (each pixel's pre-image through the same map, white where
/// either neighbour falls outside), but the pre-image is stepped along each row in `f64` (one
/// division a pixel) and the weights are in 1/256ths, each blend truncated to a grey level
/// as imageproc's are: about twice as fast (`examples/warp_speed.rs`, one core: 43.5 against
/// 104.8 ms on a 1720 × 2432 photo), within a grey level or two of imageproc's (the test
/// bounds it).
pub fn warp_page(img: &GrayImage, h: &Homography) -> GrayImage {
    use rayon::prelude::*;
    let (w, ht) = (img.width() as usize, img.height() as usize);
    let mut out = GrayImage::from_pixel(img.width(), img.height(), Luma([255]));
    let Some(back) = h.inverse() else {
        return out;
    };
    let m = back.0;
    let src = img.as_raw();
    let (xmax, ymax) = (w as f64 - 1.0, ht as f64 - 1.0);
    out.par_chunks_mut(w.max(1))
        .enumerate()
        .for_each(|(y, row)| {
            let y = y as f64;
            let (mut nx, mut ny, mut d) = (
                m[0][1] * y + m[0][2],
                m[1][1] * y + m[1][2],
                m[2][1] * y + m[2][2],
            );
            for o in row.iter_mut() {
                let (sx, sy) = (nx / d, ny / d);
                // both neighbours inside (NaN fails too); truncation is the floor there
                if sx >= 0.0 && sx < xmax && sy >= 0.0 && sy < ymax {
                    let (ix, iy) = (sx as usize, sy as usize);
                    let fx = ((sx - ix as f64) * 256.0) as u32;
                    let fy = ((sy - iy as f64) * 256.0) as u32;
                    let i = iy * w + ix;
                    let px = |k: usize| src[k] as u32;
                    let top = (px(i) * (256 - fx) + px(i + 1) * fx) >> 8;
                    let bottom = (px(i + w) * (256 - fx) + px(i + w + 1) * fx) >> 8;
                    *o = ((top * (256 - fy) + bottom * fy) >> 8) as u8;
                }
                nx += m[0][0];
                ny += m[1][0];
                d += m[2][0];
            }
        });
    out
}

/// Bands across the page in which [`banded_skews`] measures the lines' direction.
const SKEW_BANDS: u32 = 8;

/// The direction of the page's horizontal lines through the middle of its top and its
/// bottom third. In a photo at a slant it changes steadily down the page, so it is measured
/// in [`SKEW_BANDS`] bands of rows and a straight line is fitted through them by Theil–Sen
/// (the median of the pairwise slopes). (Not for vertical lines: a band of columns holds
/// one or two of them, and its noise can line up with the pixel grid.)
pub fn banded_skews(bm: &Bitmap) -> [f32; 2] {
    let len = bm.height;
    let pts: Vec<(f32, f32)> = (0..SKEW_BANDS)
        .filter_map(|i| {
            let (a, b) = (i * len / SKEW_BANDS, (i + 1) * len / SKEW_BANDS);
            let deg = SkewPoints::of_rows(bm, a, b).skew(8.0)?;
            Some(((a + b) as f32 / 2.0 / len as f32, deg))
        })
        .collect();
    match pts.len() {
        0 => return [0.0; 2],
        1 => return [pts[0].1; 2],
        _ => {}
    }
    let median = |mut v: Vec<f32>| {
        v.sort_by(f32::total_cmp);
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    };
    let mut slopes = Vec::new();
    for (i, p) in pts.iter().enumerate() {
        for q in &pts[i + 1..] {
            slopes.push((q.1 - p.1) / (q.0 - p.0));
        }
    }
    let slope = median(slopes);
    let at = median(pts.iter().map(|p| p.1 - slope * p.0).collect());
    [at + slope / 6.0, at + slope * 5.0 / 6.0]
}

/// A straight ruled line: its centre coordinate across the line, thickness, and extent along it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    pub at: f32,
    pub thickness: u32,
    pub start: u32,
    pub end: u32,
}

/// Horizontal ruled lines: rows where ink runs of at least `min_run` pixels (gaps of up to
/// 2 pixels bridged) cover at least `min_cover` of the width, grouped into lines.
pub fn horizontal_rules(bm: &Bitmap, min_run: u32, min_cover: f32) -> Vec<Rule> {
    let w = bm.width;
    let mut rows: Vec<Option<(u32, u32, u32)>> = Vec::with_capacity(bm.height as usize);
    for y in 0..bm.height {
        let (mut total, mut first, mut last) = (0u32, u32::MAX, 0u32);
        let mut run_start: Option<u32> = None;
        let mut gap = 0u32;
        for x in 0..=w {
            let ink = x < w && bm.get(x, y);
            match (ink, run_start) {
                (true, None) => {
                    run_start = Some(x);
                    gap = 0;
                }
                (true, Some(_)) => gap = 0,
                (false, Some(s)) => {
                    gap += 1;
                    if gap > 2 || x == w {
                        let e = x + 1 - gap;
                        if e - s >= min_run {
                            total += e - s;
                            first = first.min(s);
                            last = last.max(e);
                        }
                        run_start = None;
                    }
                }
                (false, None) => {}
            }
        }
        rows.push((total as f32 >= min_cover * w as f32).then_some((total, first, last)));
    }
    group_rules(&rows)
}

/// Vertical ruled lines inside a horizontal band `[y0, y1)`: columns inked over at least
/// `min_fill` of the band's height, grouped.
pub fn vertical_rules_in_band(bm: &Bitmap, y0: u32, y1: u32, min_fill: f32) -> Vec<Rule> {
    let h = y1.saturating_sub(y0);
    if h == 0 {
        return Vec::new();
    }
    let mut cols: Vec<Option<(u32, u32, u32)>> = Vec::with_capacity(bm.width as usize);
    for x in 0..bm.width {
        let mut n = 0;
        for y in y0..y1 {
            n += bm.get(x, y) as u32;
        }
        cols.push((n as f32 >= min_fill * h as f32).then_some((n, y0, y1)));
    }
    group_rules(&cols)
}

fn group_rules(lines: &[Option<(u32, u32, u32)>]) -> Vec<Rule> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].is_none() {
            i += 1;
            continue;
        }
        let s = i;
        let (mut weight, mut wsum) = (0f64, 0f64);
        let (mut start, mut end) = (u32::MAX, 0);
        while i < lines.len() {
            let Some((n, a, b)) = lines[i] else { break };
            weight += n as f64;
            wsum += n as f64 * i as f64;
            start = start.min(a);
            end = end.max(b);
            i += 1;
        }
        let at = if weight > 0.0 {
            (wsum / weight) as f32
        } else {
            (s + i - 1) as f32 / 2.0
        };
        out.push(Rule {
            at,
            thickness: (i - s) as u32,
            start,
            end,
        });
    }
    out
}

/// A crop of `img` (clipped to it), resized to `w × h`.
pub fn crop_resize(
    img: &GrayImage,
    x0: f32,
    y0: f32,
    x1: f32,
    y1: f32,
    w: u32,
    h: u32,
) -> GrayImage {
    let cx0 = x0.max(0.0).floor() as u32;
    let cy0 = y0.max(0.0).floor() as u32;
    let cx1 = (x1.ceil() as u32).min(img.width()).max(cx0 + 1);
    let cy1 = (y1.ceil() as u32).min(img.height()).max(cy0 + 1);
    // Cut out first: the filter must not reach past the crop's edges.
    let view = image::imageops::crop_imm(img, cx0, cy0, cx1 - cx0, cy1 - cy0).to_image();
    resize(&view, w, h)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Horizontal lines whose direction turns steadily down the page (a photo at a slant),
    /// with a thick straight line across the bottom band (a page edge over a table): the
    /// fit through the bands gives the lines' direction in the thirds, where the bottom
    /// third measured whole is pulled towards the edge.
    #[test]
    fn banded_skews_fit_through_a_stray_band() {
        let (w, h) = (1200u32, 1600u32);
        let mut ink = vec![false; (w * h) as usize];
        let deg_at = |y: f32| -2.0 + 4.0 * y / h as f32;
        for k in 0..40 {
            let y0 = 20.0 + k as f32 * 38.0;
            let t = deg_at(y0).to_radians().tan();
            for x in 0..w {
                let y = (y0 + (x as f32 - w as f32 / 2.0) * t).round();
                if (0.0..h as f32).contains(&y) {
                    ink[(y as u32 * w + x) as usize] = true;
                }
            }
        }
        for y in h - 120..h - 100 {
            for x in 0..w {
                ink[(y * w + x) as usize] = true;
            }
        }
        let bm = Bitmap {
            width: w,
            height: h,
            ink,
        };
        let [top, bottom] = banded_skews(&bm);
        let (want_top, want_bottom) = (deg_at(h as f32 / 6.0), deg_at(h as f32 * 5.0 / 6.0));
        assert!((top - want_top).abs() < 0.2, "{top} vs {want_top}");
        assert!(
            (bottom - want_bottom).abs() < 0.2,
            "{bottom} vs {want_bottom}"
        );
        let whole = skew_degrees(&bm.rows(2 * h / 3, h), 8.0);
        assert!((whole - want_bottom).abs() > 0.5, "{whole}");
    }

    /// [`binarize_with`] is the plain local-mean threshold, pixel by pixel.
    #[test]
    fn binarize_is_the_local_mean_threshold() {
        let plain = |img: &GrayImage, r: u32, rel: f32, abs: f32| -> Vec<bool> {
            let (w, h) = (img.width() as i64, img.height() as i64);
            let r = i64::from(r);
            let mut out = Vec::new();
            for y in 0..h {
                for x in 0..w {
                    let (mut sum, mut n) = (0u64, 0u64);
                    for yy in (y - r).max(0)..(y + r + 1).min(h) {
                        for xx in (x - r).max(0)..(x + r + 1).min(w) {
                            sum += u64::from(img.get_pixel(xx as u32, yy as u32)[0]);
                            n += 1;
                        }
                    }
                    let mean = sum as f32 / n as f32;
                    let p = img.get_pixel(x as u32, y as u32)[0] as f32;
                    out.push(p < mean - (rel * mean).max(abs));
                }
            }
            out
        };
        for (w, h) in [(1, 1), (5, 3), (37, 23), (64, 9)] {
            let img = GrayImage::from_fn(w, h, |x, y| {
                Luma([((x * 37 + y * 91 + x * y * 7) % 256) as u8])
            });
            for (r, rel, abs) in [(1, 0.06, 10.0), (4, 0.02, 5.0), (15, 0.25, 40.0)] {
                let bm = binarize_with(&img, r, rel, abs);
                assert_eq!(bm.ink, plain(&img, r, rel, abs), "{w}x{h} r {r}");
            }
        }
        let empty = binarize_with(&GrayImage::new(0, 0), 3, 0.06, 10.0);
        assert!(empty.ink.is_empty());
    }

    /// [`resize`] and [`crop_resize`] give what the models were trained on: `image`'s
    /// triangle filter on the crop (PIL's bilinear), to within a grey level, shrinking and
    /// enlarging, for crops inside the image and clipped at its edges.
    #[test]
    fn resize_matches_the_image_crates_triangle_filter() {
        let (w, h) = (301u32, 217u32);
        let img = GrayImage::from_fn(w, h, |x, y| {
            // stripes, a gradient and a fixed speckle: every scale has detail to average
            let v = (x * 7 + y * 3) % 97 + ((x / 5 + y / 9) % 2) * 90 + (x * x + y * 13) % 37;
            Luma([v.min(255) as u8])
        });
        let worst = |a: &GrayImage, b: &GrayImage| {
            assert_eq!(a.dimensions(), b.dimensions());
            a.as_raw()
                .iter()
                .zip(b.as_raw())
                .map(|(p, q)| p.abs_diff(*q))
                .max()
                .unwrap_or(0)
        };
        for (tw, th) in [(64, 48), (128, 32), (32, 32), (450, 300), (7, 90)] {
            let theirs = image::imageops::resize(&img, tw, th, FilterType::Triangle);
            let d = worst(&resize(&img, tw, th), &theirs);
            assert!(d <= 1, "{tw}x{th}: {d}");
        }
        for crop in [
            [10.0f32, 20.0, 120.0, 70.0],
            [0.0, 0.0, 40.5, 33.2],
            [250.3, 180.9, 320.0, 240.0],
            [-5.0, -8.0, 60.0, 50.0],
        ] {
            let [x0, y0, x1, y1] = crop;
            let (cx0, cy0) = (x0.max(0.0).floor() as u32, y0.max(0.0).floor() as u32);
            let cx1 = (x1.ceil() as u32).min(w).max(cx0 + 1);
            let cy1 = (y1.ceil() as u32).min(h).max(cy0 + 1);
            let view = image::imageops::crop_imm(&img, cx0, cy0, cx1 - cx0, cy1 - cy0).to_image();
            for (tw, th) in [(128, 32), (32, 32), (300, 200)] {
                let theirs = image::imageops::resize(&view, tw, th, FilterType::Triangle);
                let d = worst(&crop_resize(&img, x0, y0, x1, y1, tw, th), &theirs);
                assert!(d <= 1, "{crop:?} to {tw}x{th}: {d}");
            }
        }
        // colour photos (the corner models' input) go through the same filter per channel
        let rgb = RgbImage::from_fn(w, h, |x, y| {
            let v = img.get_pixel(x, y)[0];
            image::Rgb([v, v / 2 + (x % 50) as u8, 255 - v])
        });
        for (tw, th) in [(256, 256), (40, 70)] {
            let theirs = image::imageops::resize(&rgb, tw, th, FilterType::Triangle);
            let ours = resize(&rgb, tw, th);
            let d = ours
                .as_raw()
                .iter()
                .zip(theirs.as_raw())
                .map(|(p, q)| p.abs_diff(*q))
                .max();
            assert!(d.is_some_and(|d| d <= 1), "rgb {tw}x{th}: {d:?}");
        }
        // degenerate sizes give an image of the size asked, no panic
        assert_eq!(resize(&img, 0, 5).dimensions(), (0, 5));
        let empty = GrayImage::new(0, 0);
        assert_eq!(resize(&empty, 3, 3).dimensions(), (3, 3));
    }

    /// The row, column and transposed views of a bitmap agree with reading it pixel by
    /// pixel.
    #[test]
    fn bitmap_profiles_and_columns() {
        let (w, h) = (37u32, 23u32);
        let bm = Bitmap {
            width: w,
            height: h,
            ink: (0..w * h).map(|i| (i * 7919 % 13) < 5).collect(),
        };
        let rows = bm.ink_per_row(3, 30, 2, 20);
        let cols = bm.ink_per_column(3, 30, 2, 20);
        for (k, y) in (2..20).enumerate() {
            assert_eq!(rows[k], (3..30).filter(|&x| bm.get(x, y)).count() as u32);
        }
        for (k, x) in (3..30).enumerate() {
            assert_eq!(cols[k], (2..20).filter(|&y| bm.get(x, y)).count() as u32);
        }
        let t = bm.columns(5, 17);
        assert_eq!((t.width, t.height), (h, 12));
        for y in 0..h {
            for x in 5..17 {
                assert_eq!(t.get(y, x - 5), bm.get(x, y));
            }
        }
        let r = bm.rows(4, 9);
        assert_eq!((r.width, r.height), (w, 5));
        assert_eq!(r.get(6, 0), bm.get(6, 4));
    }

    fn page_with_lines(w: u32, h: u32, ys: &[u32], xs: &[u32]) -> GrayImage {
        let mut img = GrayImage::from_pixel(w, h, Luma([245]));
        for &y in ys {
            for x in 20..w - 20 {
                for t in 0..2 {
                    img.put_pixel(x, y + t, Luma([30]));
                }
            }
        }
        for &x in xs {
            for y in ys[0]..*ys.last().unwrap() {
                for t in 0..2 {
                    img.put_pixel(x + t, y, Luma([30]));
                }
            }
        }
        img
    }

    #[test]
    fn finds_ruled_lines() {
        let ys: Vec<u32> = (0..6).map(|i| 50 + i * 40).collect();
        let img = page_with_lines(600, 400, &ys, &[20, 100, 300, 500]);
        let bm = binarize(&img, 15);
        let rules = horizontal_rules(&bm, 60, 0.3);
        assert_eq!(rules.len(), 6, "{rules:?}");
        for (r, y) in rules.iter().zip(&ys) {
            assert!((r.at - (*y as f32 + 0.5)).abs() < 1.0, "{r:?} vs {y}");
        }
        let v = vertical_rules_in_band(&bm, 95, 125, 0.9);
        let at: Vec<u32> = v.iter().map(|r| r.at.round() as u32).collect();
        assert_eq!(at.len(), 4, "{v:?}");
    }

    /// The skew search gathers its points column by column and counts them in four
    /// histograms; it picks the same angle as the plain search over a bitmap made by
    /// [`Bitmap::rows`] or [`Bitmap::columns`] (point by point, one histogram, the same
    /// angles tried).
    #[test]
    fn skew_search_is_the_plain_one() {
        fn plain(bm: &Bitmap, max_deg: f32) -> Option<f32> {
            let mut pts: Vec<(f32, f32)> = Vec::new();
            let step = (bm.width / 400).max(1);
            for y in 0..bm.height {
                for x in (0..bm.width).step_by(step as usize) {
                    if bm.get(x, y) {
                        pts.push((x as f32, y as f32));
                    }
                }
            }
            if pts.len() < 100 {
                return None;
            }
            let score = |deg: f32| -> f64 {
                let t = deg.to_radians().tan();
                let off = bm.width as f32 * t.abs();
                let n = (bm.height as f32 + 2.0 * off) as usize / 2 + 2;
                let mut hist = vec![0u32; n];
                for &(x, y) in &pts {
                    let b = ((y - x * t + off) / 2.0) as usize;
                    if b < n {
                        hist[b] += 1;
                    }
                }
                hist.iter().map(|&c| (c as f64) * (c as f64)).sum()
            };
            Some(sharpest_angle(max_deg, score))
        }
        let mut seed = 7u64;
        let mut rand = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as u32
        };
        for (w, h) in [(1203u32, 917u32), (600, 1500), (97, 60)] {
            for deg in [-5.3f32, -0.6, 0.0, 0.35, 2.2, 7.1] {
                // Lines across and down at `deg`, and specks of noise.
                let t = deg.to_radians().tan();
                let mut ink = vec![false; (w * h) as usize];
                for x in 0..w {
                    for k in (0..h).step_by(37) {
                        let y = k as f32 + x as f32 * t;
                        if (0.0..h as f32).contains(&y) {
                            ink[(y as u32 * w + x) as usize] = true;
                        }
                    }
                }
                for y in 0..h {
                    for k in (0..w).step_by(53) {
                        let x = k as f32 - y as f32 * t;
                        if (0.0..w as f32).contains(&x) {
                            ink[(y * w + x as u32) as usize] = true;
                        }
                    }
                }
                for _ in 0..w * h / 50 {
                    ink[(rand() % (w * h)) as usize] = true;
                }
                let bm = Bitmap {
                    width: w,
                    height: h,
                    ink,
                };
                for max in [3.0, 8.0] {
                    assert_eq!(try_skew_degrees(&bm, max), plain(&bm, max), "{w}x{h} {deg}");
                    let (a, b) = (h / 5, h * 3 / 4);
                    assert_eq!(
                        SkewPoints::of_rows(&bm, a, b).skew(max),
                        plain(&bm.rows(a, b), max)
                    );
                    for (a, b) in [(0, w / 3), (2 * w / 3, w)] {
                        assert_eq!(
                            SkewPoints::of_columns(&bm, a, b).skew(max),
                            plain(&bm.columns(a, b), max)
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn measures_and_undoes_skew() {
        let ys: Vec<u32> = (0..10).map(|i| 60 + i * 30).collect();
        let img = page_with_lines(800, 420, &ys, &[]);
        let tilted = rotate(&img, -2.0); // rotate by +2°: the skew to find is 2°
        let bm = binarize(&tilted, 15);
        let s = skew_degrees(&bm, 6.0);
        assert!((s - 2.0).abs() < 0.2, "skew {s}");
        let back = rotate(&tilted, s);
        let rules = horizontal_rules(&binarize(&back, 15), 100, 0.4);
        assert!(rules.len() >= 9, "{rules:?}");
    }

    #[test]
    fn transparent_pixels_are_paper() {
        let img = DynamicImage::ImageRgba8(image::RgbaImage::from_pixel(
            4,
            4,
            image::Rgba([0, 0, 0, 0]),
        ));
        let (g, s) = to_gray_scaled(&img);
        assert_eq!(s, 1.0);
        assert!(g.pixels().all(|p| p[0] == 255));
    }

    /// The fast grey conversion gives what `image`'s own does, for every 8-bit colour, with
    /// and without transparency (alpha varied across the colours).
    #[test]
    fn grey_levels_match_the_image_crate_for_all_colours() {
        let mut rgba = image::RgbaImage::new(4096, 4096);
        for (i, p) in rgba.pixels_mut().enumerate() {
            let a = if i % 3 == 0 { 255 } else { (i * 7 % 256) as u8 };
            *p = image::Rgba([(i >> 16) as u8, (i >> 8) as u8, i as u8, a]);
        }
        let rgb = DynamicImage::ImageRgba8(rgba.clone()).to_rgb8();
        let rgba = DynamicImage::ImageRgba8(rgba);
        let la = rgba.to_luma_alpha8();
        let want_rgba = la.pixels().map(|p| {
            let a = p[1] as u32;
            ((p[0] as u32 * a + 255 * (255 - a)) / 255) as u8
        });
        let got = srgb8_gray(&rgba).expect("RGBA8 in sRGB");
        let wrong = got
            .as_raw()
            .iter()
            .zip(want_rgba)
            .filter(|(g, w)| *g != w)
            .count();
        assert_eq!(wrong, 0, "RGBA pixels that differ");
        let rgb = DynamicImage::ImageRgb8(rgb);
        let want_rgb = rgb.to_luma8();
        let got = srgb8_gray(&rgb).expect("RGB8 in sRGB");
        let wrong = got
            .as_raw()
            .iter()
            .zip(want_rgb.as_raw())
            .filter(|(g, w)| g != w)
            .count();
        assert_eq!(wrong, 0, "RGB pixels that differ");
        // other layouts are left to `image`
        assert!(srgb8_gray(&DynamicImage::ImageLuma8(GrayImage::new(2, 2))).is_none());
    }

    /// A 301 × 217 test page: smooth gradients in a checkerboard of noise patches.
    fn test_page(seed: u32) -> GrayImage {
        let mut state = seed;
        GrayImage::from_fn(301, 217, |x, y| {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let v = if (x / 40 + y / 30) % 2 == 0 {
                (x + 2 * y) % 256
            } else {
                state >> 24
            };
            Luma([v as u8])
        })
    }

    /// The largest and the mean difference in grey levels between two images of one size.
    fn level_diffs(a: &GrayImage, b: &GrayImage) -> (u8, f32) {
        let diffs: Vec<u8> = a
            .as_raw()
            .iter()
            .zip(b.as_raw())
            .map(|(a, b)| a.abs_diff(*b))
            .collect();
        let worst = diffs.iter().max().copied().unwrap_or(0);
        let mean = diffs.iter().map(|&d| d as f32).sum::<f32>() / diffs.len() as f32;
        (worst, mean)
    }

    /// The fixed-point rotation stays within two grey levels of imageproc's bilinear one
    /// (0.11–0.15 on average when written), with the same white corners, both ways and at
    /// large and tiny angles.
    #[test]
    fn rotation_close_to_imageproc() {
        use imageproc::geometric_transformations::{rotate_about_center, Interpolation};
        let img = test_page(12345);
        for deg in [-3.7f32, -0.06, 0.06, 0.5, 2.25, 45.0, 179.0] {
            let want = rotate_about_center(
                &img,
                -deg.to_radians(),
                Interpolation::Bilinear,
                Luma([255]),
            );
            let (worst, mean) = level_diffs(&rotate(&img, deg), &want);
            eprintln!("{deg}: worst {worst} mean {mean}");
            assert!(worst <= 3, "rotation by {deg}°: a pixel {worst} levels off");
            assert!(
                mean < 1.0,
                "rotation by {deg}°: {mean} levels off on average"
            );
        }
        // tiny images rotate without panicking
        let _ = rotate(&GrayImage::new(1, 1), 3.0);
        let _ = rotate(&GrayImage::new(0, 5), 3.0);
    }

    /// The page warp stays within two grey levels of imageproc's bilinear `warp` by the same
    /// map, with the same white outside, for slants like a photo's and a strong one.
    #[test]
    fn page_warp_close_to_imageproc() {
        use imageproc::geometric_transformations::{warp, Interpolation, Projection};
        let img = test_page(777);
        let square = [(0.0, 0.0), (300.0, 0.0), (300.0, 216.0), (0.0, 216.0)];
        for slant in [
            [(4.0, 2.0), (297.0, 6.0), (294.0, 212.0), (1.0, 215.0)],
            [(30.0, 10.0), (280.0, 25.0), (300.0, 200.0), (-10.0, 216.0)],
        ] {
            let p = Projection::from_control_points(slant, square).unwrap();
            let want = warp(&img, &p, Interpolation::Bilinear, Luma([255]));
            let f64s = |p: [(f32, f32); 4]| p.map(|(x, y)| [f64::from(x), f64::from(y)]);
            let hm = Homography::from_points(&f64s(slant), &f64s(square)).unwrap();
            let (worst, mean) = level_diffs(&warp_page(&img, &hm), &want);
            eprintln!("{slant:?}: worst {worst} mean {mean}");
            assert!(worst <= 3, "a pixel {worst} levels off");
            assert!(mean < 0.5, "{mean} levels off on average");
        }
        // tiny images warp without panicking
        let id = Homography::IDENTITY;
        let _ = warp_page(&GrayImage::new(1, 1), &id);
        let _ = warp_page(&GrayImage::new(0, 5), &id);
    }
}

#[cfg(test)]
mod scaled_decoding {
    use super::*;

    fn jpeg_bytes(w: u32, h: u32) -> Vec<u8> {
        let img = RgbImage::from_fn(w, h, |x, _| {
            if x < w / 2 {
                image::Rgb([200, 40, 40])
            } else {
                image::Rgb([30, 60, 220])
            }
        });
        let mut out = Vec::new();
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 90)
            .encode_image(&img)
            .unwrap();
        out
    }

    fn temp(name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("hamle-{}-{name}", std::process::id()));
        std::fs::write(&p, bytes).unwrap();
        p
    }

    #[test]
    fn a_large_jpeg_is_decoded_smaller_and_says_how_much() {
        let p = temp("large.jpg", &jpeg_bytes(2700, 120));
        // 2700 / 2 = 1350 ≥ 1280 > 2700 / 4
        let (img, scale) = decode_at_least(&p, 1280).unwrap();
        assert_eq!((img.width(), img.height(), scale), (1350, 60, 0.5));
        let rgb = img.to_rgb8();
        let (l, r) = (rgb.get_pixel(300, 30), rgb.get_pixel(1000, 30));
        assert!(l[0] > 150 && l[2] < 100, "{l:?}");
        assert!(r[2] > 150 && r[0] < 100, "{r:?}");
        // not twice the side asked for: decoded whole
        let (img, scale) = decode_at_least(&p, 2000).unwrap();
        assert_eq!((img.width(), scale), (2700, 1.0));
        // cut short: refused, as by `decode`
        let bytes = std::fs::read(&p).unwrap();
        let cut = temp("cut.jpg", &bytes[..bytes.len() / 2]);
        assert!(decode_at_least(&cut, 1280).is_err());
        std::fs::remove_file(p).ok();
        std::fs::remove_file(cut).ok();
    }

    #[test]
    fn only_plain_jpeg_frames_are_scaled() {
        let ok = jpeg_bytes(64, 32);
        assert_eq!(jpeg_frame(&ok), Some((64, 32)));
        assert_eq!(jpeg_frame(b"\x89PNG\r\n\x1a\n"), None);
        assert_eq!(jpeg_frame(&[]), None);
        assert_eq!(jpeg_frame(&ok[..10]), None);
        // the same frame with 2 components, or 12-bit samples, is left to `decode`
        let sof = ok.windows(2).position(|w| w == [0xFF, 0xC0]).unwrap();
        let mut two = ok.clone();
        two[sof + 9] = 2;
        assert_eq!(jpeg_frame(&two), None);
        let mut twelve = ok.clone();
        twelve[sof + 4] = 12;
        assert_eq!(jpeg_frame(&twelve), None);
    }
}
