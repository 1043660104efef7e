//! The palette of `viz::palette` as egui colours (one colour per method, in the window and in
//! the figures the CLI writes).

use eframe::egui::Color32;

use crate::viz::palette::{self, Method, Rgb};

/// An sRGB triple as an egui colour.
pub const fn rgb(c: Rgb) -> Color32 {
    Color32::from_rgb(c[0], c[1], c[2])
}

/// The colour of `method`.
pub const fn method(m: Method) -> Color32 {
    rgb(m.color())
}

/// The colour of the `k`-th overlaid series (sweeps, metrics).
pub fn series(k: usize) -> Color32 {
    rgb(palette::series(k))
}
