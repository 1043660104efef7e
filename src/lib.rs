//! beliefscope
pub mod kernel;
