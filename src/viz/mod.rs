//! Numbers to pixels and plot points, with no GUI dependency: colour maps, flow colour coding
//! and image encodings.

pub mod colormap;
pub mod figures;
pub mod fitted;
pub mod flow_color;
pub mod icon;
pub mod palette;
pub mod residual_map;
pub mod scale_bar;
pub mod ticks;

pub use colormap::{abs_diff_heat, gray_rgba, heat_bar, heat_color, heat_rgba};
pub use icon::app_icon;
