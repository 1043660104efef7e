//! Numbers to pixels and plot points, with no GUI dependency: colour maps and image encodings.

pub mod colormap;

pub use colormap::{gray_rgba, heat_color, heat_rgba};
