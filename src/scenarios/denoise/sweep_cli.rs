//! `beliefscope sweep denoise` with the paper's flags: RMSE and time per iteration over
//! gray-level counts, algorithms, updates and tolerances, repeated over seeds, translated into
//! the generic sweep (`--vary colors=... --vary algorithm=... --seeds N` on a fixed iteration
//! count without SURE), so it resumes, runs in parallel and plans for a cluster like any sweep.
//! Writes `summary.csv` (one row per run), `summary_by_setting.csv` (mean and standard
//! deviation per setting) and `figure1.png`. Reproduces Song et al. 2011, Fig. 1(c, d)
//! (`--colors 10,25,50,...,250 --algorithms discrete,kbp`) and the Appendix 3 study
//! (`--width 50 --height 50 --colors 100 --updates full,linear,constant
//! --epsilon 1e-1,1e-2,1e-3`).

use clap::Args;

use crate::error::{Error, Result};
use crate::inference::kbp::KbpUpdate;
use crate::scenarios::denoise::{DenoiseAlgorithm, DenoiseConfig};
use crate::scenarios::registry::kind;
use crate::scenarios::sweep::{self, Points, SweepArgs, spec};
use crate::scenarios::{ScenarioConfig, ScenarioDef};

#[derive(Debug, Clone, Args)]
pub struct DenoiseSweepArgs {
    /// Gray-level counts C, comma separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "10,25,50,100,150,200,250"
    )]
    pub colors: Vec<usize>,
    /// Algorithms: discrete and/or kbp.
    #[arg(long, value_delimiter = ',', default_value = "discrete,kbp")]
    pub algorithms: Vec<DenoiseAlgorithm>,
    /// Kernel-BP updates to run for `kbp`.
    #[arg(long, value_delimiter = ',', default_value = "constant")]
    pub updates: Vec<KbpUpdate>,
    /// Incomplete-Cholesky tolerances to run for the low-rank updates.
    #[arg(long, value_delimiter = ',', default_value = "1e-3")]
    pub epsilon: Vec<f64>,
    /// Repeats per setting (noise seeds seed, seed + 1, ...; the generic sweep's --seeds).
    #[arg(long, default_value_t = 10)]
    pub repeats: usize,
    /// Iterations per run.
    #[arg(long, default_value_t = 30)]
    pub iters: usize,
    #[arg(long, default_value_t = 100)]
    pub width: usize,
    #[arg(long, default_value_t = 100)]
    pub height: usize,
    /// Noise standard deviation in gray levels.
    #[arg(long, default_value_t = 30.0)]
    pub noise: f64,
    /// First noise seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Kernel-BP lambda (Gram form); default: the denoise default.
    #[arg(long)]
    pub lambda: Option<f64>,
    /// Kernel-BP bandwidth multiplier; default: the denoise default.
    #[arg(long)]
    pub bandwidth_multiplier: Option<f64>,
}

impl DenoiseSweepArgs {
    /// The base config and the points: C outermost, then the algorithm, then (for kernel BP,
    /// where more than one is asked for) the update and its tolerance.
    fn points(&self) -> Result<(DenoiseConfig, Points)> {
        let mut base = DenoiseConfig {
            width: self.width,
            height: self.height,
            noise: self.noise,
            max_iters: self.iters,
            tolerance: 0.0,
            // The paper's protocol: a fixed number of iterations, timed without a SURE probe
            // running beside them.
            sure_stop: false,
            seed: self.seed,
            ..DenoiseConfig::default()
        };
        if let Some(l) = self.lambda {
            base.kbp.lambda = l;
        }
        if let Some(m) = self.bandwidth_multiplier {
            base.kbp.multiplier = m;
        }
        for (flag, empty) in [
            ("colors", self.colors.is_empty()),
            ("algorithms", self.algorithms.is_empty()),
            ("updates", self.updates.is_empty()),
            ("epsilon", self.epsilon.is_empty()),
        ] {
            if empty {
                return Err(Error::Other(format!("--{flag} needs at least one value")));
            }
        }
        let vary_update = self.updates.len() > 1;
        let vary_epsilon = self.epsilon.len() > 1;
        if !vary_update {
            base.kbp.update = self.updates[0];
        }
        if !vary_epsilon {
            base.kbp.epsilon = self.epsilon[0];
        }
        let mut keys = vec!["colors".to_string(), "algorithm".to_string()];
        if vary_update {
            keys.push("kbp.update".into());
        }
        if vary_epsilon {
            keys.push("kbp.epsilon".into());
        }
        let mut rows = Vec::new();
        for &colors in &self.colors {
            for &algorithm in &self.algorithms {
                let label = match algorithm {
                    DenoiseAlgorithm::Discrete => "discrete",
                    DenoiseAlgorithm::Kbp => "kbp",
                };
                let mut row = vec![colors.to_string(), label.to_string()];
                if algorithm == DenoiseAlgorithm::Discrete {
                    row.extend(keys[2..].iter().map(|_| String::new()));
                    rows.push(row);
                    continue;
                }
                for &update in &self.updates {
                    // The full update has no tolerance.
                    let epsilons: Vec<String> = if !vary_epsilon {
                        vec![]
                    } else if update == KbpUpdate::Full {
                        vec![String::new()]
                    } else {
                        self.epsilon.iter().map(|e| e.to_string()).collect()
                    };
                    let mut r = row.clone();
                    if vary_update {
                        r.push(update.label().to_string());
                    }
                    if epsilons.is_empty() {
                        rows.push(r);
                        continue;
                    }
                    for e in epsilons {
                        let mut with = r.clone();
                        with.push(e);
                        rows.push(with);
                    }
                }
            }
        }
        Ok((base, Points { keys, rows }))
    }
}

/// Runs the paper's sweep through the generic one (`--set`, `--plan`, `--jobs` and `--out` as
/// every sweep takes them).
pub fn run(args: DenoiseSweepArgs, generic: SweepArgs) -> Result<()> {
    if args.repeats == 0 || args.iters == 0 {
        return Err(Error::param("repeats/iters", "must be at least 1"));
    }
    if generic.seeds.is_some() || generic.zip {
        return Err(Error::Other(
            "--seeds and --zip go with --vary; the gray-level sweep repeats with --repeats".into(),
        ));
    }
    let (base, points) = args.points()?;
    let kind = kind(super::Denoise::NAME)
        .ok_or_else(|| Error::Other("the denoise scenario is not registered".into()))?;
    generic.output.apply_budget();
    let base = generic
        .output
        .set
        .iter()
        .try_fold(ScenarioConfig::from(base), |c, text| {
            let (key, value) = crate::scenarios::params::split_assignment(text)?;
            spec::assign(&c, key, value)
        })?;
    sweep::sweep(kind, &base, &points, Some(args.repeats), &generic)
}
