//! Reading and writing files: images, curves, results. Errors name the file and the problem.

pub mod csv;
pub mod image_file;
pub mod results;

pub use image_file::{GrayImage, MAX_IMAGE_SIDE, load_gray, save_gray_png, save_rgba_png};
