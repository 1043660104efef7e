//! Stopping without the clean image: Monte-Carlo SURE (Ramani, Blu, Unser, "Monte-Carlo SURE:
//! a black-box optimization of regularization parameters for general denoising algorithms",
//! IEEE TIP 2008, eqs. 6-8). For Gaussian noise of known sigma, Stein's unbiased risk estimate
//! of an estimate f(y)'s mean squared error is
//!
//! `SURE = ||f(y) - y||² / N - σ² + 2 σ² div f(y) / N`,
//!
//! and the divergence of a black-box f is estimated with random probes b (entries ±1):
//! `div f(y) ≈ bᵀ (f(y + ε b) - f(y)) / ε`, averaged over K of them ([`SureProbes`]: by
//! default as many as a small image needs). Each algorithm runs a copy of itself on every
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
//!
//!   Each change of SURE is recorded with its standard error ([`SureChange`], results.json
//!   `sure_change_z`). Tolerating changes within two standard errors for a few full steps was
//!   measured and not adopted (README "The SURE step guard").
//! * **stop**: keeps the estimate of lowest SURE and stops once SURE has not improved for
//!   [`PATIENCE`] iterations.
//!
//! Cost: the algorithm's iterations twice, plus O(pixels) per iteration; the guard also keeps
//! a copy of both copies' messages at their lowest SURE.

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::error::labels::{Labelled, unknown};

/// Added to the test seed for the probe direction b, so it never shares a stream with the noise.
pub const SURE_SEED_OFFSET: u64 = 3_000_009;

/// The probe step ε as a fraction of the noise sigma. Ramani et al. use ε of the order of
/// σ/100 for estimates that are smooth in y. Kernel BP's estimate is not smooth at that scale:
/// a few pixels jump by 8-48 gray levels between the copies on y and on y + εb where a message
/// flips sign, and a jump divided by a small ε dominates the divergence. σ/10 weighs them
/// 10× less, and the finite difference's second-order error still vanishes on average (the
/// ±1 probe's odd moments are 0). Measured over 24 sunset noise seeds (README, "SURE's
/// resolution"): the guard ends nearer the free run's best; on the photographs the result is
/// unchanged to 0.03%.
pub const EPSILON_PER_SIGMA: f64 = 0.1;

/// Probe pixels `auto` asks for: enough probes that pixels × probes reaches the 256 × 256
/// photographs' one probe, where the guard's stop was measured within 0.4% of the free best.
pub const AUTO_PROBE_PIXELS: usize = 65_536;

/// The most probes `auto` picks (each is another copy of every algorithm).
pub const AUTO_MAX_PROBES: usize = 8;

/// How many probe directions Monte-Carlo SURE averages over: `auto` (the default) scales
/// them with the image, since SURE's noise falls like 1/√(pixels × probes); or a count.
/// In a config: `"auto"` or a number (1..=[`MAX_PROBES`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SureProbes {
    #[default]
    Auto,
    Count(u8),
}

impl SureProbes {
    /// The number of probes for an image of `pixels`: `ceil(AUTO_PROBE_PIXELS / pixels)`, in
    /// 1..=[`AUTO_MAX_PROBES`], for `auto`.
    pub fn resolve(self, pixels: usize) -> usize {
        match self {
            SureProbes::Auto => AUTO_PROBE_PIXELS
                .div_ceil(pixels.max(1))
                .clamp(1, AUTO_MAX_PROBES),
            SureProbes::Count(k) => usize::from(k),
        }
    }
}

impl std::str::FromStr for SureProbes {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let s = s.trim();
        if s == "auto" {
            return Ok(SureProbes::Auto);
        }
        s.parse::<u8>().map(SureProbes::Count).map_err(|_| {
            format!("SURE probes must be 'auto' or a count 1..{MAX_PROBES}, got '{s}'")
        })
    }
}

impl Serialize for SureProbes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            SureProbes::Auto => s.serialize_str("auto"),
            SureProbes::Count(k) => s.serialize_u8(*k),
        }
    }
}

impl<'de> Deserialize<'de> for SureProbes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Count(u8),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Count(k) => Ok(SureProbes::Count(k)),
            Raw::Text(t) => t.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// Iterations without a lower SURE before the stop rule stops.
pub const PATIENCE: usize = 2;

/// The guard stops once its step scale falls below this: the messages no longer move (a step
/// of 2^-20 of the damped step changes a unit message by about 1e-6).
pub const MIN_STEP_SCALE: f64 = 1.0 / 1_048_576.0;

/// The guard has settled when two rejected steps in a row, the second half as long, raised
/// SURE by amounts whose ratio lies in this range. Along the step SURE rises as
/// ΔS(s) = g s + c s² near s = 0, and the ratio R = ΔS(s/2) / ΔS(s) tells the slope: R near 1/2
/// is a linear rise (g > 0), R near 1/4 a minimum at s = 0 (g = 0, c > 0); either way no
/// shorter step lowers SURE. R < 1/4 needs g < 0: a shorter step would, and the guard goes on
/// halving. At R = 0.2 the best shorter step could still gain at most 1% of the last rise
/// (g = -c s / 6: ΔS(s*) = -c s² / 144 against ΔS(s) = 5 c s² / 6), which is below what
/// SURE resolves.
pub const SETTLED_RATIO: std::ops::RangeInclusive<f64> = 0.2..=0.6;

/// Why SURE stopped a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The guard settled: no shorter step lowers SURE ([`SETTLED_RATIO`]).
    Settled,
    /// The guard's step fell below [`MIN_STEP_SCALE`].
    StepFloor,
    /// The stop rule saw [`PATIENCE`] iterations without a lower SURE.
    Patience,
}

impl StopReason {
    /// Whether the guard settled the run (rather than the stop rule ending it).
    pub fn settled(self) -> bool {
        matches!(self, StopReason::Settled | StopReason::StepFloor)
    }

    /// For the status line and results.json.
    pub fn describe(self) -> &'static str {
        match self {
            StopReason::Settled => {
                "settled: SURE rises along the step from its lowest point, so no shorter step lowers it"
            }
            StopReason::StepFloor => "settled: the guard's step fell below 2^-20",
            StopReason::Patience => "stopped: SURE did not fall for 2 iterations",
        }
    }
}

/// What the SURE rule does when an iteration does not lower SURE.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(strum::VariantArray, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "lowercase", parse_err_ty = String, parse_err_fn = unknown::<Self>)]
pub enum SureRule {
    /// Take the step back and halve the step size (the messages settle at low SURE).
    #[default]
    Guard,
    /// Stop after [`PATIENCE`] iterations without a lower SURE; keep the best estimate.
    Stop,
}

impl Labelled for SureRule {
    const WHAT: &str = "SURE rule";
}

impl SureRule {
    pub fn label(self) -> &'static str {
        self.into()
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

/// The most probe directions a run may average over (each is another copy of the algorithm).
pub const MAX_PROBES: usize = 16;

/// The `k`-th probe direction b (±1 per pixel), seeded; probe 0 is the single probe's.
pub fn probe_direction(len: usize, seed: u64, k: usize) -> Vec<f64> {
    let stream = seed
        .wrapping_add(SURE_SEED_OFFSET)
        .wrapping_add((k as u64).wrapping_mul(1_000_003));
    let mut rng = ChaCha8Rng::seed_from_u64(stream);
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

/// The per-pixel terms of Monte-Carlo SURE of `estimate` = f(y), given the estimates
/// `probe_estimates[k]` = f(y + ε b_k): `(f_i - y_i)² - σ² + 2 σ² mean_k b_k,i (f_i(y + ε b_k) -
/// f_i(y)) / ε`. Their mean is SURE (an unbiased estimate of the mean squared error against
/// the unknown clean image); the spread of two iterates' differences gives the standard error
/// of their change. More probes average out the divergence estimate's noise (Ramani et al.,
/// Sec. IV-B), which grows with how strongly the iteration amplifies a perturbation.
pub fn sure_terms(
    estimate: &[f64],
    probe_estimates: &[Vec<f64>],
    noisy: &[f64],
    directions: &[Vec<f64>],
    epsilon: f64,
    sigma: f64,
) -> Vec<f64> {
    let s2 = sigma * sigma;
    let weight = 2.0 * s2 / (epsilon * directions.len().max(1) as f64);
    let mut terms: Vec<f64> = estimate
        .iter()
        .zip(noisy)
        .map(|(f, y)| (f - y).powi(2) - s2)
        .collect();
    for (probe, direction) in probe_estimates.iter().zip(directions) {
        for (((t, f), p), b) in terms.iter_mut().zip(estimate).zip(probe).zip(direction) {
            *t += weight * b * (p - f);
        }
    }
    terms
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// The change of SURE from one iterate to another, with its standard error: the per-pixel
/// differences' standard deviation over √N. It counts the noise of both the fit term and the
/// Monte-Carlo divergence; neighbouring pixels' terms are correlated, so it is a lower bound.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SureChange {
    pub change: f64,
    pub standard_error: f64,
}

impl SureChange {
    pub fn between(from: &[f64], to: &[f64]) -> SureChange {
        let n = from.len().max(1) as f64;
        let d: Vec<f64> = to.iter().zip(from).map(|(a, b)| a - b).collect();
        let change = mean(&d);
        let var = d.iter().map(|x| (x - change).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
        SureChange {
            change,
            standard_error: (var / n).sqrt(),
        }
    }

    /// The change in standard errors (±∞ for a change with no spread).
    pub fn z(&self) -> f64 {
        if self.standard_error > 0.0 {
            self.change / self.standard_error
        } else if self.change == 0.0 {
            0.0
        } else {
            self.change.signum() * f64::INFINITY
        }
    }
}

/// The lowest SURE so far and the estimate that had it.
#[derive(Debug, Clone)]
pub struct SureTracker {
    /// One probe direction per copy on `y + ε b_k`.
    pub directions: Vec<Vec<f64>>,
    pub epsilon: f64,
    pub best_mse: f64,
    pub best_iteration: usize,
    pub best_estimate: Arc<Vec<f64>>,
    /// SURE of the latest iterate (NaN before the first).
    pub last_mse: f64,
    /// The latest iterate's change of SURE from the best one (None before the second).
    pub last_change: Option<SureChange>,
    /// Fraction of the damped step the guard lets the next iteration take.
    pub step_scale: f64,
    rule: SureRule,
    best_terms: Vec<f64>,
    since_best: usize,
    /// The SURE excess over the best of the last rejected step (the guard), for the settle test.
    last_excess: Option<f64>,
    /// Why SURE stopped the run, and at which iteration, once it has.
    pub stop_reason: Option<StopReason>,
    pub stopped_iteration: Option<usize>,
}

/// What one SURE observation decided.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SureVerdict {
    /// Keep iterating.
    Continue,
    /// The latest iterate is the new best (the guard saves its messages).
    Improved,
    /// The guard takes the step back: return to the best messages, take `step_scale` steps.
    Revert,
    /// Stop: the best estimate so far is the answer.
    Stop,
}

impl SureTracker {
    pub fn new(
        directions: Vec<Vec<f64>>,
        epsilon: f64,
        initial: Arc<Vec<f64>>,
        rule: SureRule,
    ) -> Self {
        SureTracker {
            directions,
            epsilon,
            best_mse: f64::INFINITY,
            best_iteration: 0,
            best_estimate: initial,
            last_mse: f64::NAN,
            last_change: None,
            step_scale: 1.0,
            rule,
            best_terms: Vec::new(),
            since_best: 0,
            last_excess: None,
            stop_reason: None,
            stopped_iteration: None,
        }
    }

    pub fn rule(&self) -> SureRule {
        self.rule
    }

    /// Whether the estimate shown is the best iterate rather than the latest: the guard has
    /// taken a step back.
    pub fn holds_best(&self) -> bool {
        self.rule == SureRule::Guard && self.step_scale < 1.0
    }

    /// What the guard has done to the steps, for the debugger (None while it has not acted).
    pub fn step_note(&self) -> Option<String> {
        self.holds_best().then(|| {
            format!(
                "SURE guard: steps × 2^-{:.0} (a step that raised SURE was taken back; \
                 lowest SURE at iteration {})",
                -self.step_scale.log2(),
                self.best_iteration
            )
        })
    }

    /// Records the SURE terms ([`sure_terms`]) of `estimate` at `iteration`.
    pub fn observe(
        &mut self,
        iteration: usize,
        terms: Vec<f64>,
        estimate: &Arc<Vec<f64>>,
    ) -> SureVerdict {
        let mse = mean(&terms);
        self.last_mse = mse;
        self.last_change =
            (!self.best_terms.is_empty()).then(|| SureChange::between(&self.best_terms, &terms));
        // The first iterate, or a lower SURE than the best's.
        let improved = self.last_change.is_none_or(|c| c.change < 0.0);
        if improved {
            self.best_mse = mse;
            self.best_iteration = iteration;
            self.best_estimate = Arc::clone(estimate);
            self.best_terms = terms;
            self.since_best = 0;
            self.last_excess = None;
            return SureVerdict::Improved;
        }
        let stop = |tracker: &mut SureTracker, reason| {
            tracker.stop_reason = Some(reason);
            tracker.stopped_iteration = Some(iteration);
            SureVerdict::Stop
        };
        match self.rule {
            SureRule::Guard => {
                let excess = self.last_change.map_or(0.0, |c| c.change);
                let settled = self.last_excess.is_some_and(|previous| {
                    SETTLED_RATIO.contains(&(excess / previous))
                        || (excess == 0.0 && previous == 0.0)
                });
                self.last_excess = Some(excess);
                self.step_scale /= 2.0;
                if settled {
                    stop(self, StopReason::Settled)
                } else if self.step_scale < MIN_STEP_SCALE {
                    stop(self, StopReason::StepFloor)
                } else {
                    SureVerdict::Revert
                }
            }
            SureRule::Stop => {
                self.since_best += 1;
                if self.since_best >= PATIENCE {
                    stop(self, StopReason::Patience)
                } else {
                    SureVerdict::Continue
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenarios::denoise::sunset;

    #[test]
    fn auto_probes_scale_with_the_image_up_to_eight() {
        assert_eq!(SureProbes::Auto.resolve(100 * 100), 7);
        assert_eq!(SureProbes::Auto.resolve(128 * 128), 4);
        assert_eq!(SureProbes::Auto.resolve(256 * 256), 1);
        assert_eq!(SureProbes::Auto.resolve(584 * 388), 1);
        assert_eq!(SureProbes::Auto.resolve(24 * 16), 8);
        assert_eq!(SureProbes::Count(3).resolve(24 * 16), 3);
    }

    #[test]
    fn sure_probes_read_and_write_auto_or_a_count() {
        let json = |p: SureProbes| serde_json::to_string(&p).unwrap();
        assert_eq!(json(SureProbes::Auto), "\"auto\"");
        assert_eq!(json(SureProbes::Count(4)), "4");
        let read = |t: &str| serde_json::from_str::<SureProbes>(t);
        assert_eq!(read("\"auto\"").unwrap(), SureProbes::Auto);
        assert_eq!(read("4").unwrap(), SureProbes::Count(4));
        // `--set sure_probes=4` over "auto" writes the text "4".
        assert_eq!(read("\"4\"").unwrap(), SureProbes::Count(4));
        let err = read("\"many\"").unwrap_err().to_string();
        assert!(err.contains("'auto' or a count"), "{err}");
        assert_eq!("auto".parse::<SureProbes>(), Ok(SureProbes::Auto));
        assert!("-1".parse::<SureProbes>().is_err());
    }

    /// Monte-Carlo SURE with one probe: the mean of [`sure_terms`].
    fn sure_mse(
        estimate: &[f64],
        probe_estimate: &[f64],
        noisy: &[f64],
        direction: &[f64],
        epsilon: f64,
        sigma: f64,
    ) -> f64 {
        mean(&sure_terms(
            estimate,
            &[probe_estimate.to_vec()],
            noisy,
            &[direction.to_vec()],
            epsilon,
            sigma,
        ))
    }

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
        let b = probe_direction(n, 7, 0);
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

    /// A three-tap moving average has divergence exactly N / 3, but one probe's estimate
    /// carries the off-diagonal terms `b_i (b_(i-1) + b_(i+1)) / 3`; K probes average them:
    /// the terms with K probes are the mean of the single probes' terms, and the error of the
    /// divergence shrinks like 1 / √K.
    #[test]
    fn more_probes_average_the_divergence_noise_away() {
        let n = 4_000;
        let smooth = |y: &[f64]| -> Vec<f64> {
            (0..y.len())
                .map(|i| (y[i.saturating_sub(1)] + y[i] + y[(i + 1).min(y.len() - 1)]) / 3.0)
                .collect()
        };
        let clean: Vec<f64> = (0..n)
            .map(|i| 100.0 + 20.0 * (i as f64 * 0.02).sin())
            .collect();
        let (sigma, eps) = (10.0, 0.1);
        let noisy = sunset::add_noise(&clean, sigma, 3);
        let f = smooth(&noisy);
        // The exact divergence per pixel: 1/3 inside, 2/3 at the two clamped ends.
        let exact = (1.0 / 3.0) * (n as f64 + 2.0) / n as f64;
        let divergence_error = |k: usize, trial: u64| -> f64 {
            let dirs: Vec<Vec<f64>> = (0..k)
                .map(|j| probe_direction(n, 1000 * trial, j))
                .collect();
            let probes: Vec<Vec<f64>> = dirs
                .iter()
                .map(|b| smooth(&perturbed(&noisy, b, eps)))
                .collect();
            let terms = sure_terms(&f, &probes, &noisy, &dirs, eps, sigma);
            let fit = mean(
                &f.iter()
                    .zip(&noisy)
                    .map(|(a, y)| (a - y).powi(2))
                    .collect::<Vec<_>>(),
            );
            let div = (mean(&terms) - fit + sigma * sigma) / (2.0 * sigma * sigma);
            if k == 4 {
                // The same terms as the mean of the four single-probe estimates.
                let single: Vec<Vec<f64>> = (0..4)
                    .map(|j| sure_terms(&f, &probes[j..=j], &noisy, &dirs[j..=j], eps, sigma))
                    .collect();
                for (i, t) in terms.iter().enumerate().step_by(97) {
                    let m = single.iter().map(|s| s[i]).sum::<f64>() / 4.0;
                    assert!((t - m).abs() < 1e-9 * (1.0 + m.abs()));
                }
            }
            div - exact
        };
        let rms = |k: usize| -> f64 {
            let e: Vec<f64> = (1..=40).map(|t| divergence_error(k, t).powi(2)).collect();
            mean(&e).sqrt()
        };
        let (one, four) = (rms(1), rms(4));
        // One probe: sqrt(2 · 2 / 9 / N) = 0.0105 per pixel; four: half that.
        assert!((0.007..0.015).contains(&one), "{one}");
        assert!((0.35..0.65).contains(&(four / one)), "{four} / {one}");
    }

    #[test]
    fn the_tracker_stops_after_patience_and_keeps_the_best() {
        let mut t = SureTracker::new(vec![vec![1.0]], 0.1, Arc::new(vec![0.0]), SureRule::Stop);
        let e = |v: f64| Arc::new(vec![v]);
        assert_eq!(t.observe(1, vec![5.0], &e(1.0)), SureVerdict::Improved);
        assert_eq!(t.observe(2, vec![4.0], &e(2.0)), SureVerdict::Improved);
        assert_eq!(t.observe(3, vec![4.5], &e(3.0)), SureVerdict::Continue);
        assert_eq!(t.observe(4, vec![4.2], &e(4.0)), SureVerdict::Stop);
        assert_eq!((t.best_iteration, t.best_estimate[0]), (2, 2.0));
    }

    #[test]
    fn the_guard_halves_the_step_on_every_rise_and_stops_when_it_is_negligible() {
        let mut t = SureTracker::new(vec![vec![1.0]], 0.1, Arc::new(vec![0.0]), SureRule::Guard);
        let e = |v: f64| Arc::new(vec![v]);
        assert_eq!(t.observe(1, vec![5.0], &e(1.0)), SureVerdict::Improved);
        assert_eq!(t.observe(2, vec![6.0], &e(2.0)), SureVerdict::Revert);
        assert_eq!(t.step_scale, 0.5);
        // A lower SURE at the smaller step is kept, and the step stays.
        assert_eq!(t.observe(3, vec![4.0], &e(3.0)), SureVerdict::Improved);
        assert_eq!(t.step_scale, 0.5);
        let mut rises = 1;
        while t.observe(3 + rises, vec![4.5], &e(0.0)) == SureVerdict::Revert {
            rises += 1;
        }
        // 0.5 / 2^19 is the last scale at or above 2^-20.
        assert_eq!(rises, 20);
        assert_eq!((t.best_iteration, t.best_estimate[0]), (3, 3.0));
    }

    /// Terms whose mean is `level` and whose per-pixel spread is `spread` (alternating signs).
    fn noisy_terms(level: f64, spread: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| level + if i % 2 == 0 { spread } else { -spread })
            .collect()
    }

    #[test]
    fn a_change_s_standard_error_is_the_spread_of_the_pixel_differences() {
        // Differences ±3 around 0.5 on 10 000 pixels: the standard error is 3 / 100.
        let from = vec![0.0; 10_000];
        let to = noisy_terms(0.5, 3.0, 10_000);
        let c = SureChange::between(&from, &to);
        assert!((c.change - 0.5).abs() < 1e-12);
        assert!((c.standard_error - 0.03).abs() < 1e-5, "{c:?}");
        assert!((c.z() - 0.5 / 0.03).abs() < 0.01);
    }
}
