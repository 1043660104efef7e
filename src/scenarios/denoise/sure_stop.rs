//! Stopping without the clean image: Monte-Carlo SURE (Ramani, Blu, Unser, "Monte-Carlo SURE:
//! a black-box optimization of regularization parameters for general denoising algorithms",
//! IEEE TIP 2008, eqs. 6-8). For Gaussian noise of known sigma, Stein's unbiased risk estimate
//! of an estimate f(y)'s mean squared error is
//!
//! `SURE = ||f(y) - y||² / N - σ² + 2 σ² div f(y) / N`,
//!
//! and the divergence of a black-box f is estimated with one random probe b (entries ±1):
//! `div f(y) ≈ bᵀ (f(y + ε b) - f(y)) / ε`. Each algorithm runs a second copy of itself on
//! `y + ε b` in lockstep; after every iteration the SURE of its current estimate is known, with
//! no clean image. Two rules use it ([`SureRule`]):
//! * **guard** (default): a step that raises SURE is taken back. Both copies return to the
//!   messages of lowest SURE and take half the step from there on (`damping` d becomes
//!   `1 - (1 - d) / 2^k` after k rejected steps). Every kept step lowers SURE, the steps shrink
//!   geometrically once no full step helps, so the messages settle (the residual goes to 0)
//!   where SURE is lowest along the way: a convergent schedule steered by SURE, a backtracking
//!   line search on an unbiased risk estimate. Where plain loopy BP has a good fixed point it
//!   reaches it with full steps; where its iterates drift past their best (kernel BP on a grid,
//!   README "Denoising") the guard stops the drift. The settled messages need not be a BP fixed
//!   point; results.json records each iteration's step scale (`step_scale`).
//! * **stop**: keeps the estimate of lowest SURE and stops once SURE has not improved for
//!   [`PATIENCE`] iterations.
//!
//! Cost: the algorithm's iterations twice, plus O(pixels) per iteration; the guard also keeps
//! a copy of both copies' messages at their lowest SURE.

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Added to the test seed for the probe direction b, so it never shares a stream with the noise.
pub const SURE_SEED_OFFSET: u64 = 3_000_009;

/// The probe step ε as a fraction of the noise sigma (Ramani et al. use ε of the order of
/// σ/100; the estimate is smooth in y, so the finite difference is accurate there).
pub const EPSILON_PER_SIGMA: f64 = 0.01;

/// Iterations without a lower SURE before the stop rule stops.
pub const PATIENCE: usize = 2;

/// The guard stops once its step scale falls below this: the messages no longer move (a step
/// of 2^-20 of the damped step changes a unit message by about 1e-6).
pub const MIN_STEP_SCALE: f64 = 1.0 / 1_048_576.0;

/// What the SURE rule does when an iteration does not lower SURE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SureRule {
    /// Take the step back and halve the step size (the messages settle at low SURE).
    #[default]
    Guard,
    /// Stop after [`PATIENCE`] iterations without a lower SURE; keep the best estimate.
    Stop,
}

impl SureRule {
    pub const ALL: [SureRule; 2] = [SureRule::Guard, SureRule::Stop];

    pub fn label(self) -> &'static str {
        match self {
            SureRule::Guard => "guard",
            SureRule::Stop => "stop",
        }
    }

    /// The rule in a sentence, for results.json.
    pub fn description(self) -> &'static str {
        match self {
            SureRule::Guard => {
                "Monte-Carlo SURE (Ramani et al. 2008) guards every step: a step that does not \
                 lower SURE is taken back and the next is half as long; the estimate is that of \
                 lowest SURE"
            }
            SureRule::Stop => {
                "Monte-Carlo SURE (Ramani et al. 2008): keep the estimate of lowest SURE, stop \
                 after 2 iterations without a lower one"
            }
        }
    }
}

impl std::str::FromStr for SureRule {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        SureRule::ALL
            .into_iter()
            .find(|r| r.label() == s)
            .ok_or_else(|| format!("unknown SURE rule '{s}' (expected guard or stop)"))
    }
}

/// The probe direction b (±1 per pixel), seeded.
pub fn probe_direction(len: usize, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed.wrapping_add(SURE_SEED_OFFSET));
    (0..len)
        .map(|_| if rng.random::<bool>() { 1.0 } else { -1.0 })
        .collect()
}

/// `y + ε b`.
pub fn perturbed(noisy: &[f64], direction: &[f64], epsilon: f64) -> Vec<f64> {
    noisy
        .iter()
        .zip(direction)
        .map(|(y, b)| y + epsilon * b)
        .collect()
}

/// Monte-Carlo SURE of `estimate` = f(y), given `probe_estimate` = f(y + ε b): an unbiased
/// estimate of the mean squared error against the (unknown) clean image.
pub fn sure_mse(
    estimate: &[f64],
    probe_estimate: &[f64],
    noisy: &[f64],
    direction: &[f64],
    epsilon: f64,
    sigma: f64,
) -> f64 {
    let n = estimate.len().max(1) as f64;
    let fit: f64 = estimate
        .iter()
        .zip(noisy)
        .map(|(f, y)| (f - y).powi(2))
        .sum::<f64>()
        / n;
    let divergence: f64 = direction
        .iter()
        .zip(probe_estimate.iter().zip(estimate))
        .map(|(b, (p, f))| b * (p - f))
        .sum::<f64>()
        / (epsilon * n);
    fit - sigma * sigma + 2.0 * sigma * sigma * divergence
}

/// The lowest SURE so far and the estimate that had it.
#[derive(Debug, Clone)]
pub struct SureTracker {
    pub direction: Vec<f64>,
    pub epsilon: f64,
    pub best_mse: f64,
    pub best_iteration: usize,
    pub best_estimate: Arc<Vec<f64>>,
    /// SURE of the latest iterate (NaN before the first).
    pub last_mse: f64,
    /// Fraction of the damped step the guard lets the next iteration take.
    pub step_scale: f64,
    rule: SureRule,
    since_best: usize,
}

/// What one SURE observation decided.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SureVerdict {
    /// Keep iterating.
    Continue,
    /// The latest iterate has the lowest SURE so far (the guard saves its messages).
    Improved,
    /// The guard takes the step back: return to the best messages, take `step_scale` steps.
    Revert,
    /// Stop: the best estimate so far is the answer.
    Stop,
}

impl SureTracker {
    pub fn new(direction: Vec<f64>, epsilon: f64, initial: Arc<Vec<f64>>, rule: SureRule) -> Self {
        SureTracker {
            direction,
            epsilon,
            best_mse: f64::INFINITY,
            best_iteration: 0,
            best_estimate: initial,
            last_mse: f64::NAN,
            step_scale: 1.0,
            rule,
            since_best: 0,
        }
    }

    pub fn rule(&self) -> SureRule {
        self.rule
    }

    /// Records the SURE `mse` of `estimate` at `iteration`.
    pub fn observe(&mut self, iteration: usize, mse: f64, estimate: &Arc<Vec<f64>>) -> SureVerdict {
        self.last_mse = mse;
        if mse < self.best_mse {
            self.best_mse = mse;
            self.best_iteration = iteration;
            self.best_estimate = Arc::clone(estimate);
            self.since_best = 0;
            SureVerdict::Improved
        } else if self.rule == SureRule::Guard {
            self.step_scale /= 2.0;
            if self.step_scale < MIN_STEP_SCALE {
                SureVerdict::Stop
            } else {
                SureVerdict::Revert
            }
        } else {
            self.since_best += 1;
            if self.since_best >= PATIENCE {
                SureVerdict::Stop
            } else {
                SureVerdict::Continue
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenarios::denoise::sunset;

    /// For a linear smoother f(y) = a y + (1 - a) c the divergence is exactly a N, so SURE
    /// must match the closed form; averaged over the noise it must match the true MSE.
    #[test]
    fn sure_of_a_linear_shrinkage_is_unbiased() {
        let n = 20_000;
        let clean: Vec<f64> = (0..n)
            .map(|i| 100.0 + 50.0 * ((i as f64) * 0.01).sin())
            .collect();
        let sigma = 30.0;
        let noisy = sunset::add_noise(&clean, sigma, 7);
        let shrink = |y: &[f64]| -> Vec<f64> { y.iter().map(|v| 0.6 * v + 0.4 * 100.0).collect() };
        let b = probe_direction(n, 7);
        let eps = EPSILON_PER_SIGMA * sigma;
        let f = shrink(&noisy);
        let fp = shrink(&perturbed(&noisy, &b, eps));
        let sure = sure_mse(&f, &fp, &noisy, &b, eps, sigma);
        let closed = f
            .iter()
            .zip(&noisy)
            .map(|(a, y)| (a - y).powi(2))
            .sum::<f64>()
            / n as f64
            - sigma * sigma
            + 2.0 * sigma * sigma * 0.6;
        assert!(
            (sure - closed).abs() < 1e-6 * closed.abs(),
            "{sure} vs {closed}"
        );
        let true_mse = sunset::rmse(&f, &clean).powi(2);
        assert!(
            (sure - true_mse).abs() < 0.05 * true_mse,
            "SURE {sure} against the true MSE {true_mse}"
        );
    }

    #[test]
    fn the_tracker_stops_after_patience_and_keeps_the_best() {
        let mut t = SureTracker::new(vec![1.0], 0.1, Arc::new(vec![0.0]), SureRule::Stop);
        let e = |v: f64| Arc::new(vec![v]);
        assert_eq!(t.observe(1, 5.0, &e(1.0)), SureVerdict::Improved);
        assert_eq!(t.observe(2, 4.0, &e(2.0)), SureVerdict::Improved);
        assert_eq!(t.observe(3, 4.5, &e(3.0)), SureVerdict::Continue);
        assert_eq!(t.observe(4, 4.2, &e(4.0)), SureVerdict::Stop);
        assert_eq!((t.best_iteration, t.best_estimate[0]), (2, 2.0));
    }

    #[test]
    fn the_guard_halves_the_step_on_every_rise_and_stops_when_it_is_negligible() {
        let mut t = SureTracker::new(vec![1.0], 0.1, Arc::new(vec![0.0]), SureRule::Guard);
        let e = |v: f64| Arc::new(vec![v]);
        assert_eq!(t.observe(1, 5.0, &e(1.0)), SureVerdict::Improved);
        assert_eq!(t.observe(2, 6.0, &e(2.0)), SureVerdict::Revert);
        assert_eq!(t.step_scale, 0.5);
        // A lower SURE at the smaller step is kept, and the step stays.
        assert_eq!(t.observe(3, 4.0, &e(3.0)), SureVerdict::Improved);
        assert_eq!(t.step_scale, 0.5);
        let mut rises = 1;
        while t.observe(3 + rises, 4.5, &e(0.0)) == SureVerdict::Revert {
            rises += 1;
        }
        // 0.5 / 2^19 is the last scale at or above 2^-20.
        assert_eq!(rises, 20);
        assert_eq!((t.best_iteration, t.best_estimate[0]), (3, 3.0));
    }
}
