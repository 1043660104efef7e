//! Reading and writing files: images, Middlebury `.flo` flow fields, curves, results. Errors name the file and the problem.

pub mod atomic;
pub mod csv;
pub mod flo;
pub mod image_file;
pub mod results;
pub mod uci;

pub use atomic::write_atomic;
pub use flo::{FlowField, read_flo, write_flo};
pub use image_file::{
    GrayImage, MAX_IMAGE_SIDE, image_size, load_gray, save_gray_png, save_rgba_png,
    write_png_atomic,
};
