//! The integration tests, linked as one binary (`cargo test --release` links it once instead of
//! once per file). Each module is one former test file; `common` and `cli_common` hold the
//! helpers for window tests (egui_kittest) and command-line tests.

mod app_files;
mod app_ui;
mod cli;
mod cli_common;
mod common;
mod config_echo;
mod convergence;
mod debugger_app;
mod denoise;
mod discrete_bp;
mod flow_app;
mod flow_cli;
mod flow_engine;
mod flow_io;
mod flow_reach;
mod fuzz_loaders;
mod hardening;
mod kbp;
mod kernel_bandwidth;
mod kernel_gram;
mod kernel_hsic;
mod kernel_lowrank;
mod kernel_solve;
mod kjit;
mod kjit_app;
mod layers;
mod paper_figures_app;
mod pbp;
mod pbp_app;
mod registry;
mod sosmp_app;
mod sosmp_diagnostics;
mod sosmp_gains;
mod sosmp_reference;
mod sosmp_sampler;
mod sosmp_scenario;
mod sosmp_update;
mod tree_app_ui;
mod tree_cli;
mod tree_kbp;
mod tree_scenario;
mod window_layout;
