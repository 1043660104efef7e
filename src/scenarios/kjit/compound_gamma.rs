//! Exp. 4 of Jitkrittum et al. 2015 (main Fig. 7): the compound-gamma factor with
//! `(s₁, r₁, s₂) = (1, 1, 1)`. Problem k: `N ~ U{10..100}`, `r₂ ~ Gamma(1, 1)`,
//! `τ ~ Gamma(1, rate r₂)`, `x_i ~ N(0, 1/τ)`; the message into the factor is exactly
//! `Gamma(1 + N/2, Σx²/2)`; one factor-to-τ message per problem. KJIT learns the outgoing
//! message (targets log shape, log rate) with the quadrature projection as its oracle; the
//! posteriors (outgoing × incoming) of KJIT and of quadrature are compared.
//! Cost per problem: O(N) data, O(4001) quadrature, O(D_in D_out + D_out²) KJIT.

use std::time::Instant;

use rand::Rng;
use rand_distr::{Distribution, Gamma, Normal};
use serde::Serialize;

use super::config::KjitConfig;
use super::logistic::{Stream, stream, stream_seed};
use crate::error::{Error, Result};
use crate::inference::kjit::compound_gamma::{CompoundGamma, GammaMsg};
use crate::inference::kjit::embedding::DiagGaussian;
use crate::inference::kjit::learner::{Answer, JitLearner, JitSettings};

/// One problem's result.
#[derive(Debug, Clone, Serialize)]
pub struct GammaProblem {
    pub problem: usize,
    pub n: usize,
    pub log_shape_kjit: f64,
    pub log_rate_kjit: f64,
    pub log_shape_quadrature: f64,
    pub log_rate_quadrature: f64,
    pub oracle: bool,
    /// Log predictive variance (None during the minibatch).
    pub log_var: Option<f64>,
    pub seconds_kjit: f64,
    pub seconds_quadrature: f64,
}

/// The report of the experiment.
#[derive(Debug, Clone, Serialize)]
pub struct GammaReport {
    pub experiment: &'static str,
    pub problems: Vec<GammaProblem>,
    /// Pearson correlations over all problems (our acceptance test: ≥ 0.999; the paper's
    /// Fig. 7 shows 1.00).
    pub correlation_log_shape: Option<f64>,
    pub correlation_log_rate: Option<f64>,
    pub oracle_calls: usize,
    pub untrainable: usize,
    pub projection: &'static str,
}

/// The running experiment.
pub struct GammaExperiment {
    factor: CompoundGamma,
    learner: JitLearner,
    problems: Vec<GammaProblem>,
    seed: u64,
}

/// Pearson correlation.
pub fn pearson(a: &[f64], b: &[f64]) -> Option<f64> {
    let n = a.len() as f64;
    if a.len() < 2 {
        return None;
    }
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        sab += (x - ma) * (y - mb);
        saa += (x - ma) * (x - ma);
        sbb += (y - mb) * (y - mb);
    }
    Some(sab / (saa * sbb).sqrt())
}

impl GammaExperiment {
    pub fn new(config: &KjitConfig) -> Result<GammaExperiment> {
        let g = &config.compound_gamma;
        let settings = JitSettings {
            minibatch: g.minibatch,
            tau: g.tau,
            d_in: g.d_in,
            d_out: g.d_out,
            median_factor: config.median_factor,
            weight_var: config.sigma0_2,
            noise_var: config.sigma_y2,
            seed: stream_seed(config.seed, Stream::Features),
        };
        Ok(GammaExperiment {
            factor: CompoundGamma::default(),
            learner: JitLearner::new(settings, 2)?,
            problems: Vec::new(),
            seed: config.seed,
        })
    }

    pub fn problems(&self) -> &[GammaProblem] {
        &self.problems
    }

    /// The exact incoming message of problem k.
    fn incoming(&self, k: usize) -> Result<(usize, GammaMsg)> {
        let mut rng = stream(self.seed, Stream::Data(k));
        let n = rng.random_range(10..=100usize);
        let bad = |e: rand_distr::GammaError| Error::Other(format!("compound gamma data: {e}"));
        let r2 = Gamma::new(1.0, 1.0).map_err(bad)?.sample(&mut rng);
        let tau: f64 = Gamma::new(1.0, 1.0 / r2).map_err(bad)?.sample(&mut rng);
        let normal = Normal::new(0.0, 1.0 / tau.sqrt())
            .map_err(|e| Error::Other(format!("compound gamma data: {e}")))?;
        let sum_sq: f64 = (0..n).map(|_| normal.sample(&mut rng).powi(2)).sum();
        Ok((n, GammaMsg::new(1.0 + n as f64 / 2.0, sum_sq / 2.0)))
    }

    /// Runs the next problem.
    pub fn step(&mut self) -> Result<&GammaProblem> {
        let k = self.problems.len();
        let (n, incoming) = self.incoming(k)?;
        let start = Instant::now();
        let quadrature = self.factor.project(&incoming)?;
        let seconds_quadrature = start.elapsed().as_secs_f64();
        let start = Instant::now();
        let input = DiagGaussian::new(vec![incoming.mean()], vec![incoming.var()]);
        let (posterior, oracle, log_var) = match self.learner.ask(&input)? {
            Answer::Certain { outputs, log_var } => {
                let outgoing = GammaMsg::new(outputs[0].exp(), outputs[1].exp());
                (outgoing.multiply(&incoming), false, Some(log_var))
            }
            Answer::Uncertain { log_var, features } => {
                let projected = self.factor.project(&incoming)?;
                let target = projected
                    .divide(&incoming)
                    .map(|m| [m.shape.ln(), m.rate.ln()]);
                self.learner
                    .teach(&input, features, target.as_ref().map(|t| &t[..]))?;
                (projected, true, log_var)
            }
        };
        let seconds_kjit = start.elapsed().as_secs_f64();
        self.problems.push(GammaProblem {
            problem: k + 1,
            n,
            log_shape_kjit: posterior.shape.ln(),
            log_rate_kjit: posterior.rate.ln(),
            log_shape_quadrature: quadrature.shape.ln(),
            log_rate_quadrature: quadrature.rate.ln(),
            oracle,
            log_var,
            seconds_kjit,
            seconds_quadrature,
        });
        Ok(self.problems.last().expect("just pushed"))
    }

    pub fn report(&self) -> GammaReport {
        let col = |f: fn(&GammaProblem) -> f64| self.problems.iter().map(f).collect::<Vec<_>>();
        GammaReport {
            experiment: "compound-gamma",
            problems: self.problems.clone(),
            correlation_log_shape: pearson(
                &col(|p| p.log_shape_kjit),
                &col(|p| p.log_shape_quadrature),
            ),
            correlation_log_rate: pearson(
                &col(|p| p.log_rate_kjit),
                &col(|p| p.log_rate_quadrature),
            ),
            oracle_calls: self.problems.iter().filter(|p| p.oracle).count(),
            untrainable: self.learner.untrainable,
            projection: "mean-variance matching; moments by the trapezoid rule on log tau (4001 nodes)",
        }
    }
}
