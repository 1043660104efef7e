//! beliefscope
