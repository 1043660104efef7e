//! The ground truth of Jitkrittum et al. 2015, Supp C: the projected belief `q_{f→z}` of the
//! logistic factor estimated by importance sampling with fresh draws per call, as the authors'
//! message collection (`ISGaussianLogisticOpIns.ProjToXGaussianProposal`, 10⁵ draws) did. The
//! proposal is their mixture `½ N(0, 200) + ½ N(μ, s² + 10)` of the fixed broad Gaussian and a
//! widened incoming z-message; the weights `Beta(σ(z); α, β) N(z; μ, s²) / r(z)` are
//! self-normalised (log space, shifted by their maximum), and the belief is the weighted mean
//! and variance of z. Unlike [`super::oracle`] (common random numbers for EP), every call draws
//! anew, so the estimate carries its own Monte Carlo error, as the paper's test targets did.
//!
//! Cost: O(M) per call.

use rand::Rng;
use rand_distr::{Distribution, Normal};

use super::messages::{Gaussian, LogisticTuple, log_sigmoid};
use super::oracle::PROPOSAL_VAR;
use crate::error::{Error, Result};

/// The variance added to the incoming message in the second mixture component.
pub const WIDENING: f64 = 10.0;

fn log_normal(z: f64, mean: f64, var: f64) -> f64 {
    -0.5 * ((z - mean) * (z - mean) / var + (2.0 * std::f64::consts::PI * var).ln())
}

/// One importance-sampled `q_{f→z}` from `particles` fresh draws, or `None` when the weighted
/// variance is not positive.
pub fn sampled_z_belief<R: Rng>(
    tuple: &LogisticTuple,
    particles: usize,
    rng: &mut R,
) -> Result<Option<Gaussian>> {
    if particles < 2 {
        return Err(Error::param(
            "batch.truth_particles",
            format!("an importance-sampled belief needs at least 2 particles, got {particles}"),
        ));
    }
    let (z_msg, p_msg) = (tuple.z, tuple.p);
    if !z_msg.is_proper() || !p_msg.is_proper() {
        return Err(Error::Other(format!(
            "importance sampler: improper incoming message {tuple:?}"
        )));
    }
    let broad = Normal::new(0.0, PROPOSAL_VAR.sqrt()).expect("positive variance");
    let wide_var = z_msg.var + WIDENING;
    let wide = Normal::new(z_msg.mean, wide_var.sqrt())
        .map_err(|e| Error::Other(format!("importance sampler: {e}")))?;
    let (a1, b1) = (p_msg.alpha - 1.0, p_msg.beta - 1.0);
    let mut draws = Vec::with_capacity(particles);
    for _ in 0..particles {
        let z = if rng.random::<bool>() {
            broad.sample(rng)
        } else {
            wide.sample(rng)
        };
        let log_r = log_sum_exp(
            log_normal(z, 0.0, PROPOSAL_VAR),
            log_normal(z, z_msg.mean, wide_var),
        ) - std::f64::consts::LN_2;
        let log_w =
            a1 * log_sigmoid(z) + b1 * log_sigmoid(-z) + log_normal(z, z_msg.mean, z_msg.var)
                - log_r;
        draws.push((z, log_w));
    }
    let shift = draws.iter().map(|d| d.1).fold(f64::NEG_INFINITY, f64::max);
    let (mut sw, mut s1, mut s2) = (0.0, 0.0, 0.0);
    for &(z, log_w) in &draws {
        let w = (log_w - shift).exp();
        sw += w;
        s1 += w * z;
        s2 += w * z * z;
    }
    let mean = s1 / sw;
    let var = s2 / sw - mean * mean;
    let q = Gaussian::new(mean, var);
    Ok(q.is_proper().then_some(q))
}

fn log_sum_exp(a: f64, b: f64) -> f64 {
    let m = a.max(b);
    m + ((a - m).exp() + (b - m).exp()).ln()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inference::kjit::QuadratureProjection;
    use crate::inference::kjit::messages::Beta;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    /// The sampled belief scatters around the quadrature belief by its Monte Carlo error:
    /// over 40 fresh estimates with 2·10⁴ draws the mean error is within 4 standard errors of
    /// zero, and the spread shrinks about as 1/√M from 2·10³ to 2·10⁴ draws.
    #[test]
    fn kjit_sampled_belief_is_unbiased_with_monte_carlo_error() {
        let quad = QuadratureProjection::new(200).unwrap();
        let tuple = LogisticTuple {
            z: Gaussian::new(1.3, 4.0),
            p: Beta::new(1.0, 2.0),
        };
        let exact = quad.project(&tuple).z;
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let errors = |m: usize, rng: &mut ChaCha8Rng| -> Vec<f64> {
            (0..40)
                .map(|_| sampled_z_belief(&tuple, m, rng).unwrap().unwrap().mean - exact.mean)
                .collect()
        };
        let big = errors(20_000, &mut rng);
        let small = errors(2_000, &mut rng);
        let mean = big.iter().sum::<f64>() / 40.0;
        let sd = |e: &[f64]| (e.iter().map(|v| v * v).sum::<f64>() / e.len() as f64).sqrt();
        assert!(mean.abs() < 4.0 * sd(&big) / 40f64.sqrt(), "bias {mean}");
        let ratio = sd(&small) / sd(&big);
        assert!((1.8..6.0).contains(&ratio), "spread ratio {ratio}");
        assert!(sd(&big) > 0.0 && sd(&big) < 0.05, "spread {}", sd(&big));
    }

    #[test]
    fn kjit_sampled_belief_refuses_too_few_particles() {
        let tuple = LogisticTuple {
            z: Gaussian::new(0.0, 1.0),
            p: Beta::new(2.0, 1.0),
        };
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        assert!(sampled_z_belief(&tuple, 1, &mut rng).is_err());
    }
}
