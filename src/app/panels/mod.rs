//! The window's fixed panels: menu bar, parameters and run controls, status bar.

pub mod controls;
pub mod denoise_params;
pub mod flow_params;
pub mod menu;
pub mod sosmp_params;
pub mod status;
pub mod tree_params;
