//! The importance-sampling oracle of Jitkrittum et al. 2015, eq. (2), for the logistic factor
//! (authors' code `ISGaussianLogisticOpIns`): proposal `r(z) = N(0, 200)`, `M` particles
//! `z_l ~ r`, `p_l = σ(z_l)`, self-normalised weights
//! `w_l = Beta(p_l; α, β) N(z_l; μ, s²) / r(z_l)` (log space; the Beta normaliser cancels), and
//! the moments of z and p under the weights (Σw in the denominator, as the code).
//!
//! Common random numbers: the particles are drawn once per oracle from its seed and reused by
//! every call. They are kept sorted, so a call only visits the window `|z − μ| ≤ δ` outside
//! which every weight is below `e^{−60}` times the weight at `z = μ` (δ solves
//! `δ²/(2s²) − (2|μ|δ + δ²)/400 = 60 + L`, with `L` the log tilt at μ; see [`window`]); the
//! skipped mass is below `1e-20` of the total for any M ≤ 1e7.
//!
//! Cost: O(M log M) once; per call O(M_window) (rayon over fixed chunks, summed in order so
//! the result does not depend on the thread count).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};
use rayon::prelude::*;

use super::messages::{Beta, Gaussian, LogisticTuple, ProjectedBeliefs, log_sigmoid, sigmoid};
use crate::error::{Error, Result};

/// The proposal variance of the authors' code.
pub const PROPOSAL_VAR: f64 = 200.0;

/// Answers carried by fewer effective particles are not used: with a handful of particles the
/// variance estimate can be near zero, which gives an EP site of unbounded precision (seen on
/// the UCI blood set, where sampling-EP then diverged). Such answers are skipped and counted,
/// as improper outputs are (an improper message is never a training target).
pub const MIN_EFFECTIVE_SAMPLES: f64 = 10.0;

/// Particles per parallel chunk (fixed, so sums are reproducible).
const CHUNK: usize = 8192;

/// What one oracle call returns: the projected beliefs and the effective sample size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OracleEstimate {
    pub beliefs: ProjectedBeliefs,
    /// `(Σw)² / Σw²`.
    pub effective_sample_size: f64,
}

/// The importance sampler with its frozen particles.
#[derive(Debug, Clone)]
pub struct ImportanceOracle {
    /// Sorted `z_l`.
    z: Vec<f64>,
    /// `log σ(z_l)` and `log σ(−z_l)`.
    log_p: Vec<f64>,
    log_q: Vec<f64>,
    /// `σ(z_l)`, so a call needs one exp per particle.
    p: Vec<f64>,
}

impl ImportanceOracle {
    /// `particles` draws from `N(0, 200)` with `ChaCha8Rng::seed_from_u64(seed)`.
    pub fn new(particles: usize, seed: u64) -> Result<ImportanceOracle> {
        if particles < 2 {
            return Err(Error::param(
                "particles",
                format!("the importance sampler needs at least 2 particles, got {particles}"),
            ));
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let normal = Normal::new(0.0, PROPOSAL_VAR.sqrt()).expect("positive variance");
        let mut z: Vec<f64> = (0..particles).map(|_| normal.sample(&mut rng)).collect();
        z.sort_by(f64::total_cmp);
        let log_p = z.iter().map(|&v| log_sigmoid(v)).collect();
        let log_q = z.iter().map(|&v| log_sigmoid(-v)).collect();
        let p = z.iter().map(|&v| sigmoid(v)).collect();
        Ok(ImportanceOracle { z, log_p, log_q, p })
    }

    pub fn particles(&self) -> usize {
        self.z.len()
    }

    /// The estimate over every particle (no window), for tests of the window.
    pub fn estimate_full(&self, tuple: &LogisticTuple) -> Result<OracleEstimate> {
        self.estimate_range(tuple, 0, self.z.len())
    }

    /// The estimate of eq. (2) for `tuple`.
    pub fn estimate(&self, tuple: &LogisticTuple) -> Result<OracleEstimate> {
        let (lo, hi) = window(tuple);
        let start = self.z.partition_point(|&v| v < lo);
        let end = self.z.partition_point(|&v| v <= hi);
        self.estimate_range(tuple, start, end)
    }

    /// [`Self::estimate`], or `None` when the weights vanish or fewer than
    /// [`MIN_EFFECTIVE_SAMPLES`] effective particles carry the answer. Errors only on an
    /// improper incoming message.
    pub fn reliable(&self, tuple: &LogisticTuple) -> Result<Option<OracleEstimate>> {
        if !tuple.z.is_proper() || !tuple.p.is_proper() {
            return self.estimate(tuple).map(Some);
        }
        Ok(self
            .estimate(tuple)
            .ok()
            .filter(|e| e.effective_sample_size >= MIN_EFFECTIVE_SAMPLES))
    }

    fn estimate_range(
        &self,
        tuple: &LogisticTuple,
        start: usize,
        end: usize,
    ) -> Result<OracleEstimate> {
        let Gaussian { mean, var } = tuple.z;
        let Beta { alpha, beta } = tuple.p;
        if !tuple.z.is_proper() || !tuple.p.is_proper() {
            return Err(Error::Other(format!(
                "importance sampler: improper incoming message {tuple:?}"
            )));
        }
        let (a1, b1) = (alpha - 1.0, beta - 1.0);
        let inv_2v = 0.5 / var;
        let log_w = |i: usize| {
            let z = self.z[i];
            a1 * self.log_p[i] + b1 * self.log_q[i] - (z - mean) * (z - mean) * inv_2v
                + z * z / (2.0 * PROPOSAL_VAR)
        };
        // A shift so no exp overflows: with α, β ≥ 1 the tilt is ≤ 0, so every log-weight is at
        // most the proposal term at the range's ends; otherwise the exact largest log-weight.
        let shift = if end <= start {
            0.0
        } else if a1 >= 0.0 && b1 >= 0.0 {
            let edge = |i: usize| self.z[i] * self.z[i] / (2.0 * PROPOSAL_VAR);
            edge(start).max(edge(end - 1))
        } else {
            (start..end)
                .step_by(CHUNK)
                .collect::<Vec<_>>()
                .par_iter()
                .map(|&c| {
                    (c..(c + CHUNK).min(end))
                        .map(log_w)
                        .fold(f64::NEG_INFINITY, f64::max)
                })
                .reduce(|| f64::NEG_INFINITY, f64::max)
        };
        let chunks: Vec<[f64; 6]> = (start..end)
            .step_by(CHUNK)
            .collect::<Vec<_>>()
            .par_iter()
            .map(|&c| {
                let mut s = [0.0; 6];
                for i in c..(c + CHUNK).min(end) {
                    let w = (log_w(i) - shift).exp();
                    let z = self.z[i];
                    let p = self.p[i];
                    s[0] += w;
                    s[1] += w * z;
                    s[2] += w * z * z;
                    s[3] += w * p;
                    s[4] += w * p * p;
                    s[5] += w * w;
                }
                s
            })
            .collect();
        let mut s = [0.0; 6];
        for c in &chunks {
            for k in 0..6 {
                s[k] += c[k];
            }
        }
        if s[0].is_nan() || s[0] <= 0.0 || s[0].is_infinite() {
            return Err(Error::Other(format!(
                "importance sampler: all weights vanish for {tuple:?} (too few particles near the cavity)"
            )));
        }
        let z_mean = s[1] / s[0];
        let z_var = s[2] / s[0] - z_mean * z_mean;
        let p_mean = s[3] / s[0];
        let p_var = s[4] / s[0] - p_mean * p_mean;
        Ok(OracleEstimate {
            beliefs: ProjectedBeliefs {
                z: Gaussian::new(z_mean, z_var.max(f64::MIN_POSITIVE)),
                p: Beta::from_moments(p_mean, p_var),
            },
            effective_sample_size: s[0] * s[0] / s[5],
        })
    }
}

/// The window `[μ − δ, μ + δ]` outside which every weight is below `e^{−60}` of the weight at
/// μ (module docs). The whole line when `s² ≥ 200` or α or β is below 1.
pub fn window(tuple: &LogisticTuple) -> (f64, f64) {
    let Gaussian { mean, var } = tuple.z;
    let a = 0.5 / var - 0.5 / PROPOSAL_VAR;
    // The bound needs a tilt ≤ 0 (α, β ≥ 1); otherwise visit every particle.
    if a <= 0.0 || tuple.p.alpha < 1.0 || tuple.p.beta < 1.0 {
        return (f64::NEG_INFINITY, f64::INFINITY);
    }
    let tilt_at_mean = ((tuple.p.alpha - 1.0) * log_sigmoid(mean)).abs()
        + ((tuple.p.beta - 1.0) * log_sigmoid(-mean)).abs();
    let b = mean.abs() / PROPOSAL_VAR;
    let c = 60.0 + tilt_at_mean;
    let delta = (b + (b * b + 4.0 * a * c).sqrt()) / (2.0 * a);
    (mean - delta, mean + delta)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kjit_window_changes_nothing() {
        let oracle = ImportanceOracle::new(200_000, 3).unwrap();
        for (m, v, y) in [(0.0, 1.0, true), (-6.0, 0.3, true), (3.0, 25.0, false)] {
            let t = LogisticTuple {
                z: Gaussian::new(m, v),
                p: Beta::from_label(y),
            };
            let a = oracle.estimate(&t).unwrap().beliefs.z;
            let b = oracle.estimate_full(&t).unwrap().beliefs.z;
            assert!((a.mean - b.mean).abs() < 1e-12 * (1.0 + b.mean.abs()));
            assert!((a.var - b.var).abs() < 1e-12 * (1.0 + b.var));
        }
    }

    #[test]
    fn kjit_oracle_refuses_bad_input() {
        assert!(ImportanceOracle::new(1, 0).is_err());
        let oracle = ImportanceOracle::new(100, 0).unwrap();
        let t = LogisticTuple {
            z: Gaussian::new(0.0, -1.0),
            p: Beta::from_label(true),
        };
        assert!(oracle.estimate(&t).is_err());
    }
}
