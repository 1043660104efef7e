//! The d = 2 teaching mode of the kjit room: EP for logistic regression on a small two-dimensional
//! problem, one site update per step, with KJIT and the quadrature projection side by side, so
//! the posterior ellipse of w and the decision line can be watched changing site by site.
//! Every sweep is sequential here (the engine's Exp. 3 runs its first sweep in parallel), so
//! each step moves the posterior. One KJIT operator learns across the problems.
//! Cost per step: one quadrature projection, one KJIT call (an oracle call while uncertain),
//! and two rank-1 updates of a 2 × 2 covariance.

use nalgebra::{DMatrix, DVector};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use serde::{Deserialize, Serialize};

use super::config::KjitConfig;
use super::logistic::{Operators, Stream, stream_seed};
use crate::error::Result;
use crate::inference::kjit::LogisticEp;
use crate::inference::kjit::ep_logistic::SweepReport;
use crate::inference::kjit::messages::sigmoid;

/// The teaching mode's sizes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TeachingSettings {
    pub examples: usize,
    pub problems: usize,
    pub sweeps: usize,
    /// KJIT's minibatch here (small, so the operator starts predicting within the first
    /// problems).
    pub minibatch: usize,
}

impl Default for TeachingSettings {
    fn default() -> Self {
        TeachingSettings {
            examples: 40,
            problems: 4,
            sweeps: 5,
            minibatch: 100,
        }
    }
}

impl TeachingSettings {
    pub fn steps(&self) -> usize {
        self.examples * self.problems * self.sweeps
    }
}

/// What the window draws.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TeachingView {
    pub x: Vec<[f64; 2]>,
    pub y: Vec<bool>,
    /// The site updated last, its sweep and problem (1-based).
    pub site: usize,
    pub sweep: usize,
    pub problem: usize,
    pub w_true: [f64; 2],
    /// Posterior means and row-major covariances of w.
    pub mean_kjit: [f64; 2],
    pub cov_kjit: [f64; 4],
    pub mean_quadrature: [f64; 2],
    pub cov_quadrature: [f64; 4],
    /// Whether the oracle answered KJIT's last call.
    pub oracle: bool,
}

struct Current {
    x: DMatrix<f64>,
    y: Vec<bool>,
    kjit: LogisticEp,
    quadrature: LogisticEp,
    site: usize,
    sweep: usize,
    reports: [SweepReport; 2],
}

/// The teaching run.
pub struct TeachingLab {
    settings: TeachingSettings,
    seed: u64,
    w_true: DVector<f64>,
    operators: Operators,
    current: Option<Current>,
    problem: usize,
    last_oracle: bool,
    last_view: Option<TeachingView>,
}

fn empty_report() -> SweepReport {
    SweepReport {
        max_site_change: 0.0,
        skipped: 0,
    }
}

fn pair(v: &DVector<f64>) -> [f64; 2] {
    [v[0], v[1]]
}

fn quad(m: &DMatrix<f64>) -> [f64; 4] {
    [m[(0, 0)], m[(0, 1)], m[(1, 0)], m[(1, 1)]]
}

impl TeachingLab {
    pub fn new(config: &KjitConfig) -> Result<TeachingLab> {
        let settings = config.teaching.clone();
        let jit = crate::inference::kjit::JitSettings {
            minibatch: settings.minibatch,
            ..config.jit_settings(stream_seed(config.seed, Stream::Features))
        };
        let mut rng = super::logistic::stream(config.seed, Stream::TrueWeights);
        let w_true = DVector::from_fn(2, |_, _| rng.sample::<f64, _>(StandardNormal));
        Ok(TeachingLab {
            operators: Operators::with_settings(config, jit)?,
            settings,
            seed: config.seed,
            w_true,
            current: None,
            problem: 0,
            last_oracle: false,
            last_view: None,
        })
    }

    fn start_problem(&self, k: usize) -> Result<Current> {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(30_000 + k as u64);
        let n = self.settings.examples;
        let x = DMatrix::from_fn(n, 2, |_, _| rng.sample::<f64, _>(StandardNormal));
        let y: Vec<bool> = (0..n)
            .map(|i| rng.random::<f64>() < sigmoid(x.row(i).transpose().dot(&self.w_true)))
            .collect();
        Ok(Current {
            kjit: LogisticEp::new(x.clone(), y.clone(), 1.0)?,
            quadrature: LogisticEp::new(x.clone(), y.clone(), 1.0)?,
            x,
            y,
            site: 0,
            sweep: 0,
            reports: [empty_report(), empty_report()],
        })
    }

    /// One site update of both EP runs; returns (oracle asked, |μ_KJIT − μ_quadrature|).
    pub fn step(&mut self) -> Result<(bool, f64)> {
        if self.current.is_none() {
            self.current = Some(self.start_problem(self.problem)?);
        }
        let Some(c) = self.current.as_mut() else {
            unreachable!("set above")
        };
        let before = self.operators.kjit.counters.oracle_calls_z;
        let i = c.site;
        c.kjit
            .sequential_site(i, &mut self.operators.kjit, &mut c.reports[0])?;
        c.quadrature.sequential_site(
            i,
            &mut self.operators.quadrature.clone(),
            &mut c.reports[1],
        )?;
        self.last_oracle = self.operators.kjit.counters.oracle_calls_z > before;
        let distance = (c.kjit.posterior_mean() - c.quadrature.posterior_mean()).norm();
        let view = TeachingView {
            x: (0..c.x.nrows())
                .map(|r| [c.x[(r, 0)], c.x[(r, 1)]])
                .collect(),
            y: c.y.clone(),
            site: i,
            sweep: c.sweep + 1,
            problem: self.problem + 1,
            w_true: pair(&self.w_true),
            mean_kjit: pair(c.kjit.posterior_mean()),
            cov_kjit: quad(c.kjit.posterior_cov()),
            mean_quadrature: pair(c.quadrature.posterior_mean()),
            cov_quadrature: quad(c.quadrature.posterior_cov()),
            oracle: self.last_oracle,
        };
        c.site += 1;
        if c.site == c.y.len() {
            c.kjit.finish_sweep(&c.reports[0])?;
            c.quadrature.finish_sweep(&c.reports[1])?;
            c.reports = [empty_report(), empty_report()];
            c.site = 0;
            c.sweep += 1;
            if c.sweep == self.settings.sweeps {
                self.current = None;
                self.problem += 1;
            }
        }
        self.last_view = Some(view);
        Ok((self.last_oracle, distance))
    }

    pub fn view(&self) -> Option<TeachingView> {
        self.last_view.clone()
    }

    pub fn operators(&self) -> &Operators {
        &self.operators
    }
}
