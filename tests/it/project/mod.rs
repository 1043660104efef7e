//! The project as a whole: the command line, config echo, hardening, fuzzed loaders, the floors, the registry, sweeps, the named enums.

mod cancel;
mod cli;
mod config_echo;
mod estimates;
mod fuzz_loaders;
mod hardening;
mod labels;
mod layers;
mod registry;
mod sweep_plan;
