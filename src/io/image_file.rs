//! Gray-scale image loading through the `image` crate (any format it decodes) with a size limit,
//! and PNG writing. Cost O(width · height).

use std::path::Path;

use image::{GrayImage as ImgGray, ImageReader, RgbaImage};

use crate::error::{Error, Result};

/// Largest accepted width or height, in pixels.
pub const MAX_IMAGE_SIDE: u32 = 4096;

pub use crate::model::image::GrayImage;

/// The width and height an image file declares, read from its header only (no pixels decoded),
/// checked like [`load_gray`] checks them. Used to size a run before anything is loaded.
pub fn image_size(path: &Path) -> Result<(usize, usize)> {
    let fail = |reason: String| Error::Image {
        path: path.display().to_string(),
        reason,
    };
    let reader = ImageReader::open(path)
        .map_err(|e| fail(e.to_string()))?
        .with_guessed_format()
        .map_err(|e| fail(e.to_string()))?;
    if reader.format().is_none() {
        return Err(fail("not a recognised image format".into()));
    }
    let (w, h) = reader
        .into_dimensions()
        .map_err(|e| fail(format!("corrupt or unsupported image ({e})")))?;
    check_side(w, h).map_err(fail)?;
    Ok((w as usize, h as usize))
}

/// The declared size against [`MAX_IMAGE_SIDE`] and the empty image.
fn check_side(w: u32, h: u32) -> std::result::Result<(), String> {
    if w > MAX_IMAGE_SIDE || h > MAX_IMAGE_SIDE {
        return Err(format!(
            "image is {w} x {h}; the largest accepted is {MAX_IMAGE_SIDE} x {MAX_IMAGE_SIDE}"
        ));
    }
    if w == 0 || h == 0 {
        return Err("image has no pixels".into());
    }
    Ok(())
}

/// Loads any image the `image` crate reads and converts it to 8-bit gray (luma). Refuses files
/// over [`MAX_IMAGE_SIDE`] on a side before decoding the pixels, and decoders that would
/// allocate more than the memory budget (`image::Limits`).
pub fn load_gray(path: &Path) -> Result<GrayImage> {
    let fail = |reason: String| Error::Image {
        path: path.display().to_string(),
        reason,
    };
    let reader = ImageReader::open(path)
        .map_err(|e| fail(e.to_string()))?
        .with_guessed_format()
        .map_err(|e| fail(e.to_string()))?;
    if reader.format().is_none() {
        return Err(fail("not a recognised image format".into()));
    }
    let (w, h) = reader
        .into_dimensions()
        .map_err(|e| fail(format!("corrupt or unsupported image ({e})")))?;
    check_side(w, h).map_err(fail)?;
    let mut reader = ImageReader::open(path)
        .map_err(|e| fail(e.to_string()))?
        .with_guessed_format()
        .map_err(|e| fail(e.to_string()))?;
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_IMAGE_SIDE);
    limits.max_image_height = Some(MAX_IMAGE_SIDE);
    limits.max_alloc = Some(crate::run::budget::budget());
    reader.limits(limits);
    let decoded = reader
        .decode()
        .map_err(|e| fail(format!("corrupt or unsupported image ({e})")))?;
    let gray = decoded.to_luma8();
    Ok(GrayImage {
        width: gray.width() as usize,
        height: gray.height() as usize,
        pixels: gray.pixels().map(|p| p.0[0] as f64).collect(),
    })
}

/// Writes values as an 8-bit gray PNG, clamping to 0..255 and rounding.
pub fn save_gray_png(path: &Path, width: usize, height: usize, values: &[f64]) -> Result<()> {
    let bytes: Vec<u8> = values
        .iter()
        .map(|v| v.round().clamp(0.0, 255.0) as u8)
        .collect();
    let img = ImgGray::from_raw(width as u32, height as u32, bytes).ok_or_else(|| {
        Error::Io(format!(
            "{}: pixel count does not match size",
            path.display()
        ))
    })?;
    img.save(path)
        .map_err(|e| Error::Io(format!("cannot write {}: {e}", path.display())))
}

/// Writes an RGBA image as PNG.
pub fn save_rgba_png(path: &Path, image: &RgbaImage) -> Result<()> {
    image
        .save(path)
        .map_err(|e| Error::Io(format!("cannot write {}: {e}", path.display())))
}

/// Encodes `rgba` (row-major, `width * height * 4` bytes) as PNG and writes it atomically.
pub fn write_png_atomic(path: &Path, width: u32, height: u32, rgba: &[u8]) -> Result<()> {
    let mut png = Vec::new();
    image::ImageEncoder::write_image(
        image::codecs::png::PngEncoder::new(&mut png),
        rgba,
        width,
        height,
        image::ExtendedColorType::Rgba8,
    )
    .map_err(|e| Error::Io(format!("cannot encode {}: {e}", path.display())))?;
    super::write_atomic(path, &png)
}
