//! GPU textures made from `viz` images, uploaded once and replaced only when their source data
//! changes (not every frame).

use std::any::Any;
use std::sync::Arc;

use eframe::egui::{self, ColorImage, TextureHandle, TextureOptions};
use image::RgbaImage;

/// What a texture was made from: the data arrays (compared by identity, and kept alive so an
/// address is never reused while it is remembered) and any numeric parameters (e.g. a scale).
#[derive(Clone, Default)]
pub struct Source {
    arrays: Vec<Arc<dyn Any + Send + Sync>>,
    params: Vec<u64>,
}

impl Source {
    pub fn new(arrays: &[&Arc<Vec<f64>>], params: &[f64]) -> Source {
        Source {
            arrays: arrays
                .iter()
                .map(|a| Arc::clone(a) as Arc<dyn Any + Send + Sync>)
                .collect(),
            params: params.iter().map(|p| p.to_bits()).collect(),
        }
    }

    /// A source made of shared values of any type (a flow field, a frame), compared by
    /// identity like the arrays of [`Source::new`].
    pub fn shared(values: Vec<Arc<dyn Any + Send + Sync>>, params: &[f64]) -> Source {
        Source {
            arrays: values,
            params: params.iter().map(|p| p.to_bits()).collect(),
        }
    }
}

impl PartialEq for Source {
    fn eq(&self, other: &Self) -> bool {
        self.params == other.params
            && self.arrays.len() == other.arrays.len()
            && self
                .arrays
                .iter()
                .zip(&other.arrays)
                .all(|(a, b)| std::ptr::addr_eq(Arc::as_ptr(a), Arc::as_ptr(b)))
    }
}

/// One texture and the source it shows.
#[derive(Default)]
pub struct CachedTexture {
    handle: Option<TextureHandle>,
    source: Option<Source>,
}

impl CachedTexture {
    /// The texture for `source`, drawing it with `make` only if the source changed.
    pub fn get(
        &mut self,
        ctx: &egui::Context,
        name: &str,
        source: Source,
        make: impl FnOnce() -> RgbaImage,
    ) -> &TextureHandle {
        if self.source.as_ref() != Some(&source) || self.handle.is_none() {
            let image = to_color_image(&make());
            match &mut self.handle {
                Some(h) => h.set(image, TextureOptions::NEAREST),
                None => self.handle = Some(ctx.load_texture(name, image, TextureOptions::NEAREST)),
            }
            self.source = Some(source);
        }
        self.handle.as_ref().expect("texture was just made")
    }
}

/// Converts a `viz` image (straight alpha) into an egui image.
pub fn to_color_image(image: &RgbaImage) -> ColorImage {
    ColorImage::from_rgba_unmultiplied(
        [image.width() as usize, image.height() as usize],
        image.as_raw(),
    )
}
