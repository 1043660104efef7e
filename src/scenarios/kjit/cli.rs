//! `beliefscope run kjit` flags.

use clap::Args;

use crate::error::{Error, Result};
use crate::inference::Schedule;
use crate::scenarios::kjit::sites::SiteOperator;
use crate::scenarios::kjit::{Experiment, KjitConfig};
use crate::scenarios::{OutputArgs, RunFlags};

#[derive(Debug, Clone, Args)]
pub struct KjitArgs {
    #[arg(long, value_enum)]
    pub experiment: Option<Experiment>,
    #[arg(long)]
    pub seed: Option<u64>,
    #[arg(long)]
    pub problems: Option<usize>,
    #[arg(long, allow_hyphen_values = true)]
    pub tau: Option<f64>,
    #[arg(long)]
    pub particles: Option<usize>,
    #[arg(long)]
    pub din: Option<usize>,
    #[arg(long)]
    pub dout: Option<usize>,
    #[arg(long)]
    pub median_factor: Option<f64>,
    #[arg(long)]
    pub uci_dir: Option<std::path::PathBuf>,
    /// Use the paper's particle count (M = 5e5) unless --particles is given.
    #[arg(long)]
    pub paper: bool,
    #[arg(long)]
    pub schedule: Option<Schedule>,
    #[arg(long)]
    pub damping: Option<f64>,
    #[arg(long, value_enum)]
    pub operator: Option<SiteOperator>,
    #[arg(long)]
    pub bias: Option<bool>,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl KjitArgs {}

impl RunFlags for KjitArgs {
    type Config = KjitConfig;

    fn output(&self) -> &OutputArgs {
        &self.output
    }

    fn into_config(self) -> Result<KjitConfig> {
        let d = KjitConfig::default();
        let particles = match (self.particles, self.paper) {
            (Some(m), _) => m,
            (None, true) => 500_000,
            (None, false) => d.particles,
        };
        let experiment = self.experiment.unwrap_or(d.experiment);
        let mut config = KjitConfig {
            experiment,
            seed: self.seed.unwrap_or(d.seed),
            particles,
            median_factor: self.median_factor.unwrap_or(d.median_factor),
            ..d
        };
        // --problems, --tau, --din and --dout set the selected experiment's own settings.
        match experiment {
            Experiment::CompoundGamma => {
                let g = &mut config.compound_gamma;
                g.problems = self.problems.unwrap_or(g.problems);
                g.tau = self.tau.unwrap_or(g.tau);
                g.d_in = self.din.unwrap_or(g.d_in);
                g.d_out = self.dout.unwrap_or(g.d_out);
            }
            Experiment::Uci => {
                let u = &mut config.uci;
                u.tau = self.tau.unwrap_or(u.tau);
                u.d_in = self.din.unwrap_or(u.d_in);
                u.d_out = self.dout.unwrap_or(u.d_out);
            }
            Experiment::Batch | Experiment::Uncertainty => {
                let b = &mut config.batch;
                b.d_in = self.din.unwrap_or(b.d_in);
                b.d_out = self.dout.unwrap_or(b.d_out);
                b.bias = self.bias.unwrap_or(b.bias);
            }
            Experiment::Teaching => {
                let t = &mut config.teaching;
                t.problems = self.problems.unwrap_or(t.problems);
                config.tau = self.tau.unwrap_or(config.tau);
                config.d_in = self.din.unwrap_or(config.d_in);
                config.d_out = self.dout.unwrap_or(config.d_out);
            }
            Experiment::Sites => {
                let s = &mut config.sites;
                s.schedule = self.schedule.unwrap_or(s.schedule);
                s.damping = self.damping.unwrap_or(s.damping);
                s.operator = self.operator.unwrap_or(s.operator);
                config.tau = self.tau.unwrap_or(config.tau);
                config.d_in = self.din.unwrap_or(config.d_in);
                config.d_out = self.dout.unwrap_or(config.d_out);
            }
            Experiment::Logistic | Experiment::Rff => {
                config.problems = self.problems.unwrap_or(config.problems);
                config.tau = self.tau.unwrap_or(config.tau);
                config.d_in = self.din.unwrap_or(config.d_in);
                config.d_out = self.dout.unwrap_or(config.d_out);
            }
        }
        if self.bias.is_some() && !matches!(experiment, Experiment::Batch | Experiment::Uncertainty)
        {
            return Err(Error::Other(format!(
                "--bias applies to --experiment batch and uncertainty, not {}",
                experiment.name()
            )));
        }
        if experiment != Experiment::Sites
            && (self.schedule.is_some() || self.damping.is_some() || self.operator.is_some())
        {
            return Err(Error::Other(format!(
                "--schedule, --damping and --operator apply to --experiment sites; the {} \
                 experiment runs the paper's EP schedule (first sweep parallel, then sequential, \
                 damping ρ = --set damping=...) and one iteration is a whole problem",
                experiment.name()
            )));
        }
        if let Some(dir) = self.uci_dir {
            config.uci.dir = dir;
        }
        Ok(config)
    }
}
