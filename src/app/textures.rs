//! GPU textures made from `viz` images, uploaded once and replaced only when their source data
//! changes (not every frame). [`AsyncTexture`] draws the replacement image of a source that
//! changes while running (a live flow field) on a short-lived thread, so the window's thread
//! only uploads it: colour-coding a 584 x 388 flow costs it 20-30 ms, most of a 30 fps frame.
//! The sources drawn that way are the ones that change every iteration: the flow and EPE panes,
//! denoise's estimate and error panes, and the debugger's residual map. One drawing is in
//! flight per texture, and the last image stays until the new one is uploaded.

use std::any::Any;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, TryRecvError, channel};

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

/// A texture whose image is redrawn off the window's thread when its source changes: the
/// texture shows the last finished image until the newest one is ready (a frame or two later),
/// and only one drawing per texture runs at a time (a source that changes meanwhile is drawn
/// next, skipping those in between). The first image is drawn at once, so a pane is never
/// empty.
#[derive(Default)]
pub struct AsyncTexture {
    shown: CachedTexture,
    pending: Option<(Source, Receiver<ColorImage>)>,
}

impl AsyncTexture {
    /// The texture for `source` (or the last one drawn while it is being redrawn).
    pub fn get(
        &mut self,
        ctx: &egui::Context,
        name: &str,
        source: Source,
        make: impl FnOnce() -> RgbaImage + Send + 'static,
    ) -> &TextureHandle {
        self.collect_finished();
        if self.shown.handle.is_none() {
            return self.shown.get(ctx, name, source, make);
        }
        let up_to_date = self.shown.source.as_ref() == Some(&source);
        let drawing_it = self.pending.as_ref().is_some_and(|(s, _)| *s == source);
        if !up_to_date && !drawing_it && self.pending.is_none() {
            let (send, receive) = channel();
            let repaint = ctx.clone();
            let job = move || {
                // The receiver may be gone (the room closed); nothing is lost then.
                let _ = send.send(to_color_image(&make()));
                repaint.request_repaint();
            };
            // Without a thread to be had, the old texture stays until the next change.
            if std::thread::Builder::new()
                .name("texture".into())
                .spawn(job)
                .is_ok()
            {
                self.pending = Some((source, receive));
            }
        } else if !up_to_date && !drawing_it {
            // A newer source waits for the drawing in flight; come back for it.
            ctx.request_repaint();
        }
        self.shown.handle.as_ref().expect("texture was made above")
    }

    /// Uploads a finished drawing.
    fn collect_finished(&mut self) {
        let Some((_, receive)) = &self.pending else {
            return;
        };
        match receive.try_recv() {
            Ok(image) => {
                let (source, _) = self.pending.take().expect("checked above");
                if let Some(h) = &mut self.shown.handle {
                    h.set(image, TextureOptions::NEAREST);
                    self.shown.source = Some(source);
                }
            }
            Err(TryRecvError::Empty) => {}
            Err(TryRecvError::Disconnected) => self.pending = None,
        }
    }

    /// The source of the image on screen (None before the first).
    pub fn shown_source(&self) -> Option<&Source> {
        self.shown.source.as_ref()
    }
}

/// Converts a `viz` image (straight alpha) into an egui image.
pub fn to_color_image(image: &RgbaImage) -> ColorImage {
    ColorImage::from_rgba_unmultiplied(
        [image.width() as usize, image.height() as usize],
        image.as_raw(),
    )
}
