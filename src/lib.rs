//! beliefscope: a desktop explorer for nonparametric message passing.
//!
//! Layers (imports point down only; see `../shared/DESIGN.md`):
//! `app` (egui window) and `cli` (headless) drive `runner` (worker thread), which runs a
//! `scenarios` entry (problem + data + metrics) built on `inference` (the algorithms), which
//! stands on `kernel` and `model`. `io` reads and writes files; `viz` turns numbers into pixels.
//! Nothing outside `app` uses egui.

pub mod app;
pub mod cli;
pub mod error;
pub mod inference;
pub mod io;
pub mod kernel;
pub mod model;
pub mod run;
pub mod runner;
pub mod scenarios;
pub mod viz;

pub use error::{Error, Result};
