//! Where a headless run's results go; shared by every `run` subcommand's flags.

use std::path::PathBuf;

use clap::Args;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::params::{self, Param};
use crate::error::Result;
use crate::run::budget;

#[derive(Debug, Clone, Default, Args)]
pub struct OutputArgs {
    /// Write results.json, images and CSVs into this folder (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print results.json to stdout.
    #[arg(long)]
    pub json: bool,
    /// Set any parameter by its results.json name, e.g. --set kbp.lambda=1e-4 (repeatable;
    /// applied after the other flags).
    #[arg(long = "set", value_name = "KEY=VALUE", allow_hyphen_values = true)]
    pub set: Vec<String>,
    /// Refuse runs whose estimated peak memory is above this, e.g. 12G or 800M (default: half
    /// of physical memory).
    #[arg(long, value_name = "SIZE", value_parser = budget::parse_size)]
    pub max_memory: Option<u64>,
}

impl OutputArgs {
    /// Makes `--max-memory` (or the default) the process's memory budget.
    pub fn apply_budget(&self) {
        budget::set_budget(self.max_memory);
    }

    /// `config` with every `--set key=value` applied, in order (ranges from `table`).
    pub fn apply_sets<C: Serialize + DeserializeOwned>(
        &self,
        config: C,
        table: &[Param],
    ) -> Result<C> {
        self.set.iter().try_fold(config, |c, assignment| {
            let (key, value) = params::split_assignment(assignment)?;
            #[cfg(test)]
            SETS_APPLIED.with(|n| n.set(n.get() + 1));
            params::set(&c, key, value, table)
        })
    }
}

#[cfg(test)]
thread_local! {
    /// How many `--set` assignments [`OutputArgs::apply_sets`] applied on this thread (tests
    /// count that a run applies each once).
    pub static SETS_APPLIED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Draws `panels` (see [`crate::viz::figures`]) and writes them as a PNG, atomically.
pub fn write_figure(
    path: &std::path::Path,
    panels: &[crate::viz::figures::Panel],
    columns: usize,
    width: u32,
    height: u32,
) -> Result<()> {
    let rgba = crate::viz::figures::render_rgba(panels, columns, width, height)?;
    crate::io::write_png_atomic(path, width, height, &rgba)
}
