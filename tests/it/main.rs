//! The integration tests, linked as one binary (`cargo test --release` links it once instead of
//! once per file). One folder per scenario (its engine, command line and room), plus `app` (the
//! window as a whole), `kernel`, `debugger` and `project` (the floors, the registry, hardening);
//! `common` and `cli_common` hold the helpers for window tests (egui_kittest) and command-line
//! tests. Tests that read `../shared/data` are ignored by default, are named `shared_data`
//! and run with `cargo test --release -- --ignored shared_data` (CI runs them).

mod app;
mod cli_common;
mod common;
mod debugger;
mod denoise;
mod flow;
mod kernel;
mod kjit;
mod pbp;
mod project;
mod shared_data;
mod sosmp;
mod teach;
mod tree;
