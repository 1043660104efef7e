//! The window as a person drives it (egui_kittest): files, layout, paper figures.

mod files;
mod layout;
mod long_run;
mod noisy_image;
mod paper_figures;
mod ui;
