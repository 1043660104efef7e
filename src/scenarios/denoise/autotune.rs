//! Auto-tune for kernel BP on the denoise scenario: a grid search over λ × bandwidth multiplier,
//! each pair scored by the RMSE that kernel BP reaches on a held-out noisy copy of the training
//! image (noise seed `seed + VALIDATION_SEED_OFFSET`; the test image's noise is never looked
//! at). Cost: grid size × (set-up + iterations) of the chosen update.

use serde::{Deserialize, Serialize};

use super::config::{DenoiseAlgorithm, DenoiseConfig, VALIDATION_SEED_OFFSET};
use super::data::DenoiseData;
use super::{build_run, sunset};
use crate::error::{Error, Result};
use crate::scenarios::CancelFlag;
use crate::scenarios::ScenarioParams;

/// The grid and how long each candidate runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AutotuneSpec {
    /// λ values (Gram form), ascending.
    pub lambdas: Vec<f64>,
    /// Bandwidth multipliers, ascending.
    pub multipliers: Vec<f64>,
    /// Iterations per candidate.
    pub iterations: usize,
}

impl Default for AutotuneSpec {
    fn default() -> Self {
        AutotuneSpec {
            lambdas: vec![1e-5, 1e-4, 1e-3, 1e-2, 1e-1],
            multipliers: vec![0.025, 0.05, 0.1, 0.2, 0.4],
            iterations: 15,
        }
    }
}

/// The scored grid: `rmse[i][j]` for `lambdas[i]`, `multipliers[j]` (NaN where a candidate
/// failed, e.g. diverged).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AutotuneResult {
    pub spec: AutotuneSpec,
    pub rmse: Vec<Vec<f64>>,
    pub best_lambda: f64,
    pub best_multiplier: f64,
    pub best_rmse: f64,
    /// RMSE of the validation copy itself, for scale.
    pub noisy_rmse: f64,
}

/// The auto-tune grid as a job for the worker.
#[derive(Debug, Clone)]
pub struct AutotuneTask {
    pub config: DenoiseConfig,
    pub spec: AutotuneSpec,
}

impl crate::scenarios::ScenarioTask for AutotuneTask {
    type Output = AutotuneResult;

    fn label(&self) -> &'static str {
        "auto-tune"
    }

    fn run(&self, cancel: &CancelFlag, progress: &dyn Fn(usize, usize)) -> Result<AutotuneResult> {
        autotune(&self.config, &self.spec, cancel, progress)
    }
}

/// Runs the grid search for `config`'s kernel-BP settings. `progress(done, total)` is called
/// after every candidate; `cancel` stops between candidates and inside set-ups.
pub fn autotune(
    config: &DenoiseConfig,
    spec: &AutotuneSpec,
    cancel: &CancelFlag,
    progress: &dyn Fn(usize, usize),
) -> Result<AutotuneResult> {
    if spec.lambdas.is_empty() || spec.multipliers.is_empty() || spec.iterations == 0 {
        return Err(Error::param(
            "auto-tune grid",
            "needs at least one lambda, one multiplier and one iteration",
        ));
    }
    let mut data = DenoiseData::generate(config)?;
    let mut config = config.clone();
    data.resolve_sigma(&mut config)?;
    let config = &config;
    // Score on the training image (never the test image): it becomes the "test" here.
    data.width = data.train.width;
    data.height = data.train.height;
    let clean = data.train.clean.clone();
    data.indices = data.train.indices.clone();
    data.clean = Some(clean.clone());
    data.noisy = sunset::add_noise(
        &clean,
        config.noise,
        config.seed.wrapping_add(VALIDATION_SEED_OFFSET),
    );
    let noisy_rmse = sunset::rmse(&data.noisy, &clean);
    let total = spec.lambdas.len() * spec.multipliers.len();
    let mut rmse = vec![vec![f64::NAN; spec.multipliers.len()]; spec.lambdas.len()];
    let mut best: Option<(f64, f64, f64)> = None;
    for (i, &lambda) in spec.lambdas.iter().enumerate() {
        for (j, &multiplier) in spec.multipliers.iter().enumerate() {
            cancel.check()?;
            let mut candidate = config.clone();
            candidate.algorithm = DenoiseAlgorithm::Kbp;
            candidate.kbp.lambda = lambda;
            candidate.kbp.multiplier = multiplier;
            let score = (|| -> Result<f64> {
                candidate.check()?;
                let mut run = build_run(candidate.primary(), &data, &candidate, cancel)?;
                let engine = run.engine_mut();
                for _ in 0..spec.iterations {
                    engine.step()?;
                }
                let estimate = engine.estimates(candidate.estimate).values;
                Ok(sunset::rmse(&estimate, &clean))
            })();
            match score {
                Ok(r) => {
                    rmse[i][j] = r;
                    if best.is_none_or(|b| r < b.2) {
                        best = Some((lambda, multiplier, r));
                    }
                }
                Err(Error::Cancelled) => return Err(Error::Cancelled),
                Err(_) => {}
            }
            progress(i * spec.multipliers.len() + j + 1, total);
        }
    }
    let (best_lambda, best_multiplier, best_rmse) = best.ok_or_else(|| {
        Error::Other("auto-tune: every candidate failed (diverged or invalid)".into())
    })?;
    Ok(AutotuneResult {
        spec: spec.clone(),
        rmse,
        best_lambda,
        best_multiplier,
        best_rmse,
        noisy_rmse,
    })
}
