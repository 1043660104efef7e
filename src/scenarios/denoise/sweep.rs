//! Batch measurements for the paper's figures: run one denoise config to the end and report
//! its RMSE and timings (Song et al. 2011, Fig. 1(c, d) and Appendix 3 are sweeps of these).

use serde::Serialize;

use super::Denoise;
use super::config::DenoiseConfig;
use crate::error::Result;
use crate::scenarios::{CancelFlag, Scenario};

/// What one run measured.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Measurement {
    pub rmse: f64,
    pub noisy_rmse: f64,
    /// Median seconds of one iteration of the algorithm (message updates only).
    pub seconds_per_iter: f64,
    pub setup_seconds: f64,
    pub iterations: usize,
}

/// Runs `config` until it finishes. Cost: set-up plus `max_iters` iterations.
pub fn measure(config: &DenoiseConfig, cancel: &CancelFlag) -> Result<Measurement> {
    let mut scenario = Denoise::new(config.clone(), cancel)?;
    while !scenario.finished() {
        cancel.check()?;
        scenario.step()?;
    }
    let mut seconds: Vec<f64> = scenario.history().iter().map(|r| r.seconds).collect();
    seconds.sort_by(f64::total_cmp);
    Ok(Measurement {
        rmse: scenario.rmse(),
        noisy_rmse: scenario.noisy_rmse(),
        seconds_per_iter: seconds.get(seconds.len() / 2).copied().unwrap_or(f64::NAN),
        setup_seconds: scenario.setup_seconds(),
        iterations: seconds.len(),
    })
}
