//! `beliefscope run kjit` flags.

use clap::Args;

use crate::error::Result;
use crate::scenarios::OutputArgs;
use crate::scenarios::kjit::{Experiment, KjitConfig, PARAMS};

#[derive(Debug, Clone, Args)]
pub struct KjitArgs {
    /// Which experiment of spec K.2 [default: logistic (Exp. 3)].
    #[arg(long, value_enum)]
    pub experiment: Option<Experiment>,
    /// Seed of w, data, test points, particles and features [default: 1].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Problems in sequence [default: 30].
    #[arg(long)]
    pub problems: Option<usize>,
    /// Oracle threshold τ on the log predictive variance [default: -8.5].
    #[arg(long, allow_hyphen_values = true)]
    pub tau: Option<f64>,
    /// Importance-sampling particles M [default: 50000; paper 500000].
    #[arg(long)]
    pub particles: Option<usize>,
    /// First-stage random features [default: 300].
    #[arg(long)]
    pub din: Option<usize>,
    /// Second-stage random features [default: 500].
    #[arg(long)]
    pub dout: Option<usize>,
    /// γ² = factor × median distance [default: 0.5 as the authors' code; 1 as Supp A].
    #[arg(long)]
    pub median_factor: Option<f64>,
    /// Use the paper's particle count (M = 5e5) unless --particles is given.
    #[arg(long)]
    pub paper: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl KjitArgs {
    pub fn into_config(self) -> Result<KjitConfig> {
        let d = KjitConfig::default();
        let particles = match (self.particles, self.paper) {
            (Some(m), _) => m,
            (None, true) => 500_000,
            (None, false) => d.particles,
        };
        let config = KjitConfig {
            experiment: self.experiment.unwrap_or(d.experiment),
            seed: self.seed.unwrap_or(d.seed),
            problems: self.problems.unwrap_or(d.problems),
            tau: self.tau.unwrap_or(d.tau),
            particles,
            d_in: self.din.unwrap_or(d.d_in),
            d_out: self.dout.unwrap_or(d.d_out),
            median_factor: self.median_factor.unwrap_or(d.median_factor),
            ..d
        };
        let config = self.output.apply_sets(config, PARAMS)?;
        config.check()?;
        Ok(config)
    }
}
