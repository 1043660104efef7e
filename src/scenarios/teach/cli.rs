//! `beliefscope run teach` flags.

use clap::Args;

use super::config::{MessageKind, TeachConfig, TeachGraph};
use crate::error::{Error, Result};
use crate::inference::Schedule;
use crate::scenarios::{OutputArgs, RunFlags};

#[derive(Debug, Clone, Args)]
pub struct TeachArgs {
    #[arg(long)]
    pub graph: Option<String>,
    #[arg(long)]
    pub messages: Option<String>,
    #[arg(long)]
    pub schedule: Option<String>,
    #[arg(long)]
    pub damping: Option<f64>,
    /// The same as --max-messages.
    #[arg(long)]
    pub steps: Option<usize>,
    #[arg(long)]
    pub states: Option<usize>,
    #[arg(long)]
    pub coupling: Option<f64>,
    #[arg(long)]
    pub samples: Option<usize>,
    #[arg(long)]
    pub coefficients: Option<usize>,
    #[arg(long)]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl RunFlags for TeachArgs {
    type Config = TeachConfig;

    fn output(&self) -> &OutputArgs {
        &self.output
    }

    fn into_config(self) -> Result<TeachConfig> {
        let d = TeachConfig::default();
        let graph: TeachGraph = match &self.graph {
            Some(g) => g.parse().map_err(|e: String| Error::param("graph", e))?,
            None => d.graph,
        };
        let messages: MessageKind = match &self.messages {
            Some(m) => m.parse().map_err(|e: String| Error::param("messages", e))?,
            None => d.messages,
        };
        let schedule: Schedule = match &self.schedule {
            Some(s) => s.parse().map_err(|e: String| Error::param("schedule", e))?,
            None => d.schedule,
        };
        let config = TeachConfig {
            graph,
            messages,
            schedule,
            damping: self.damping.unwrap_or(d.damping),
            max_messages: self.steps.unwrap_or(d.max_messages),
            states: self.states.unwrap_or(d.states),
            coupling: self.coupling.unwrap_or(d.coupling),
            seed: self.seed.unwrap_or(d.seed),
            samples: self.samples.unwrap_or(d.samples),
            coefficients: self.coefficients.unwrap_or(d.coefficients),
            ..d
        };
        Ok(config)
    }
}
