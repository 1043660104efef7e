//! `beliefscope run retrieval` flags.

use clap::Args;

use crate::error::{Error, Result};
use crate::scenarios::retrieval::RetrievalConfig;
use crate::scenarios::{OutputArgs, RunFlags};

#[derive(Debug, Clone, Args)]
pub struct RetrievalArgs {
    #[arg(long)]
    pub lengths: Option<String>,
    #[arg(long)]
    pub repeats: Option<usize>,
    #[arg(long)]
    pub pool: Option<usize>,
    #[arg(long)]
    pub samples_per_edge: Option<usize>,
    #[arg(long)]
    pub max_k: Option<usize>,
    #[arg(long)]
    pub seed: Option<u64>,
    #[arg(long)]
    pub lambda: Option<f64>,
    #[arg(long)]
    pub multiplier: Option<f64>,
    #[command(flatten)]
    pub output: OutputArgs,
}

/// Parses "2..9" (inclusive) or "2,5,9".
pub fn parse_lengths(text: &str) -> Result<Vec<usize>> {
    let bad = || {
        Error::param(
            "lengths",
            format!("'{text}' is not a range 'A..B' or a list 'A,B,C'"),
        )
    };
    if let Some((a, b)) = text.split_once("..") {
        let a: usize = a.trim().parse().map_err(|_| bad())?;
        let b: usize = b
            .trim()
            .trim_start_matches('=')
            .parse()
            .map_err(|_| bad())?;
        if a > b {
            return Err(bad());
        }
        return Ok((a..=b).collect());
    }
    text.split(',')
        .map(|s| s.trim().parse::<usize>().map_err(|_| bad()))
        .collect()
}

impl RetrievalArgs {}

impl RunFlags for RetrievalArgs {
    type Config = RetrievalConfig;

    fn output(&self) -> &OutputArgs {
        &self.output
    }

    fn into_config(self) -> Result<RetrievalConfig> {
        let d = RetrievalConfig::default();
        let config = RetrievalConfig {
            lengths: match &self.lengths {
                Some(t) => parse_lengths(t)?,
                None => d.lengths,
            },
            repeats: self.repeats.unwrap_or(d.repeats),
            pool: self.pool.unwrap_or(d.pool),
            samples_per_edge: self.samples_per_edge.unwrap_or(d.samples_per_edge),
            max_k: self.max_k.unwrap_or(d.max_k),
            seed: self.seed.unwrap_or(d.seed),
            kernel: crate::inference::tree_kbp::NodeKernelSettings {
                lambda: self.lambda.unwrap_or(d.kernel.lambda),
                multiplier: self.multiplier.unwrap_or(d.kernel.multiplier),
                ..d.kernel
            },
        };
        Ok(config)
    }
}
