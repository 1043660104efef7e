//! `beliefscope sweep denoise`: RMSE and time per iteration over gray-level counts, algorithms,
//! updates and tolerances, repeated over seeds. Writes `sweep.csv` (one row per run) and
//! `summary.csv` (mean and standard deviation per setting). Reproduces Song et al. 2011,
//! Fig. 1(c, d) (`--colors 10,25,50,...,250 --algorithms discrete,kbp`) and the Appendix 3
//! study (`--width 50 --height 50 --colors 100 --updates full,linear,constant
//! --epsilon 1e-1,1e-2,1e-3`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;

use crate::error::{Error, Result};
use crate::inference::kbp::KbpUpdate;
use crate::io::write_atomic;
use crate::scenarios::CancelFlag;
use crate::scenarios::ScenarioParams;
use crate::scenarios::denoise::sweep::measure;
use crate::scenarios::denoise::{DenoiseAlgorithm, DenoiseConfig};

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
    /// Repeats per setting (noise seeds seed, seed + 1, ...).
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
    /// Output folder for sweep.csv and summary.csv.
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
}

/// One setting of the sweep.
#[derive(Debug, Clone)]
struct Setting {
    colors: usize,
    algorithm: &'static str,
    update: &'static str,
    epsilon: Option<f64>,
    config: DenoiseConfig,
}

impl DenoiseSweepArgs {
    fn settings(&self) -> Vec<Setting> {
        let base = DenoiseConfig::default();
        let mut out = Vec::new();
        for &colors in &self.colors {
            for &algorithm in &self.algorithms {
                let mut config = DenoiseConfig {
                    width: self.width,
                    height: self.height,
                    colors,
                    noise: self.noise,
                    algorithm,
                    max_iters: self.iters,
                    tolerance: 0.0,
                    // The paper's protocol: a fixed number of iterations, timed without a
                    // SURE probe running beside them.
                    sure_stop: false,
                    ..base.clone()
                };
                config.kbp.lambda = self.lambda.unwrap_or(base.kbp.lambda);
                config.kbp.multiplier = self.bandwidth_multiplier.unwrap_or(base.kbp.multiplier);
                match algorithm {
                    DenoiseAlgorithm::Discrete => out.push(Setting {
                        colors,
                        algorithm: "discrete",
                        update: "",
                        epsilon: None,
                        config,
                    }),
                    DenoiseAlgorithm::Kbp => {
                        for &update in &self.updates {
                            let epsilons: Vec<Option<f64>> = if update == KbpUpdate::Full {
                                vec![None]
                            } else {
                                self.epsilon.iter().map(|&e| Some(e)).collect()
                            };
                            for epsilon in epsilons {
                                let mut c = config.clone();
                                c.kbp.update = update;
                                if let Some(e) = epsilon {
                                    c.kbp.epsilon = e;
                                }
                                out.push(Setting {
                                    colors,
                                    algorithm: "kbp",
                                    update: update.label(),
                                    epsilon,
                                    config: c,
                                });
                            }
                        }
                    }
                }
            }
        }
        out
    }
}

fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (mean, var.sqrt())
}

pub fn run(args: DenoiseSweepArgs) -> Result<()> {
    if args.repeats == 0 || args.iters == 0 {
        return Err(Error::param("repeats/iters", "must be at least 1"));
    }
    let settings = args.settings();
    for s in &settings {
        s.config.check()?;
    }
    std::fs::create_dir_all(&args.out)
        .map_err(|e| Error::Io(format!("cannot create {}: {e}", args.out.display())))?;
    let cancel = CancelFlag::default();
    let mut rows = String::from(
        "colors,algorithm,update,epsilon,repeat,rmse,noisy_rmse,seconds_per_iter,setup_seconds\n",
    );
    let mut groups: BTreeMap<usize, Vec<[f64; 3]>> = BTreeMap::new();
    let total = settings.len() * args.repeats;
    let mut done = 0;
    for (k, s) in settings.iter().enumerate() {
        for repeat in 0..args.repeats {
            let mut config = s.config.clone();
            config.seed = args.seed + repeat as u64;
            let m = measure(&config, &cancel)?;
            done += 1;
            eprintln!(
                "[{done}/{total}] C={} {} {} eps={} repeat {repeat}: rmse {:.3} ({:.5} s/iter, set-up {:.3} s)",
                s.colors,
                s.algorithm,
                s.update,
                s.epsilon.map_or("-".into(), |e| e.to_string()),
                m.rmse,
                m.seconds_per_iter,
                m.setup_seconds
            );
            let _ = writeln!(
                rows,
                "{},{},{},{},{repeat},{},{},{},{}",
                s.colors,
                s.algorithm,
                s.update,
                s.epsilon.map_or(String::new(), |e| e.to_string()),
                m.rmse,
                m.noisy_rmse,
                m.seconds_per_iter,
                m.setup_seconds
            );
            groups
                .entry(k)
                .or_default()
                .push([m.rmse, m.seconds_per_iter, m.setup_seconds]);
        }
        // Written after every setting, so an interrupted sweep keeps what it measured.
        write_atomic(&args.out.join("sweep.csv"), rows.as_bytes())?;
    }
    let mut summary = String::from(
        "colors,algorithm,update,epsilon,repeats,rmse_mean,rmse_sd,seconds_per_iter_mean,seconds_per_iter_sd,setup_seconds_mean,setup_seconds_sd\n",
    );
    for (k, values) in &groups {
        let s = &settings[*k];
        let col = |i: usize| mean_sd(&values.iter().map(|v| v[i]).collect::<Vec<_>>());
        let ((rm, rs), (tm, ts), (sm, ss)) = (col(0), col(1), col(2));
        let _ = writeln!(
            summary,
            "{},{},{},{},{},{rm},{rs},{tm},{ts},{sm},{ss}",
            s.colors,
            s.algorithm,
            s.update,
            s.epsilon.map_or(String::new(), |e| e.to_string()),
            values.len()
        );
    }
    write_atomic(&args.out.join("summary.csv"), summary.as_bytes())?;
    eprintln!(
        "wrote {} and summary.csv",
        args.out.join("sweep.csv").display()
    );
    Ok(())
}
