//! Gray-scale image loading through the `image` crate (any format it decodes) with a size limit,
//! and PNG writing. Cost O(width · height).

use std::path::Path;

use image::{GrayImage as ImgGray, ImageReader, RgbaImage};

use crate::error::{Error, Result};

/// Largest accepted width or height, in pixels.
pub const MAX_IMAGE_SIDE: u32 = 4096;

pub use crate::model::image::GrayImage;

/// Loads any image the `image` crate reads and converts it to 8-bit gray (luma). Refuses files
/// over [`MAX_IMAGE_SIDE`] on a side before decoding the pixels.
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
    if w > MAX_IMAGE_SIDE || h > MAX_IMAGE_SIDE {
        return Err(fail(format!(
            "image is {w} x {h}; the largest accepted is {MAX_IMAGE_SIDE} x {MAX_IMAGE_SIDE}"
        )));
    }
    if w == 0 || h == 0 {
        return Err(fail("image has no pixels".into()));
    }
    let decoded = ImageReader::open(path)
        .map_err(|e| fail(e.to_string()))?
        .with_guessed_format()
        .map_err(|e| fail(e.to_string()))?
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
