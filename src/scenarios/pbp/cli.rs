//! `beliefscope run pbp`: the flags of a predictive-BP run.

use clap::Args;

use super::config::{PENDIGITS_LAMBDA1, PENDIGITS_SAMPLES, PbpConfig};
use crate::error::Result;
use crate::scenarios::{OutputArgs, RunFlags};

#[derive(Debug, Clone, Args)]
pub struct PbpArgs {
    #[arg(long)]
    pub model: Option<String>,
    #[arg(long)]
    pub samples: Option<usize>,
    #[arg(long)]
    pub seed: Option<u64>,
    #[arg(long)]
    pub rank: Option<usize>,
    #[arg(long)]
    pub lambda: Option<f64>,
    #[arg(long)]
    pub ridge2: Option<f64>,
    #[arg(long)]
    pub restarts: Option<usize>,
    #[arg(long)]
    pub no_em: bool,
    #[arg(long)]
    pub no_online_em: bool,
    #[arg(long)]
    pub query: Option<String>,
    #[arg(long, value_delimiter = ',')]
    pub evidence_vars: Option<Vec<String>>,
    #[arg(long)]
    pub root: Option<String>,
    #[arg(long)]
    pub states: Option<usize>,
    #[arg(long)]
    pub sigma: Option<f64>,
    #[arg(long)]
    pub dim: Option<usize>,
    #[arg(long)]
    pub digit: Option<usize>,
    #[arg(long)]
    pub data: Option<String>,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl RunFlags for PbpArgs {
    type Config = PbpConfig;

    fn output(&self) -> &OutputArgs {
        &self.output
    }

    fn into_config(self) -> Result<PbpConfig> {
        let d = PbpConfig::default();
        // A pendigits run defaults to the paper's 7000 digits and λ = 0.1.
        let pendigits = self.model.as_deref() == Some("pendigits");
        let d = PbpConfig {
            samples: if pendigits {
                PENDIGITS_SAMPLES
            } else {
                d.samples
            },
            lambda1: if pendigits {
                PENDIGITS_LAMBDA1
            } else {
                d.lambda1
            },
            ..d
        };
        let config = PbpConfig {
            model: self.model.unwrap_or(d.model),
            samples: self.samples.unwrap_or(d.samples),
            seed: self.seed.unwrap_or(d.seed),
            rank: self.rank.unwrap_or(d.rank),
            lambda1: self.lambda.unwrap_or(d.lambda1),
            ridge2: self.ridge2.unwrap_or(d.ridge2),
            em_restarts: self.restarts.unwrap_or(d.em_restarts),
            run_em: !self.no_em,
            // No online EM for the continuous pendigits chains (our pendigits baseline is EM).
            run_online_em: !self.no_online_em && !pendigits,
            query: self.query.unwrap_or(d.query),
            evidence_vars: self.evidence_vars.unwrap_or(d.evidence_vars),
            root: self.root.unwrap_or(d.root),
            states: self.states.unwrap_or(d.states),
            sigma: self.sigma.unwrap_or(d.sigma),
            feature_dim: self.dim.unwrap_or(d.feature_dim),
            digit: self.digit.unwrap_or(d.digit),
            data_dir: self.data.unwrap_or(d.data_dir),
            ..d
        };
        Ok(config)
    }
}
