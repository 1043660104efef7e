//! The EP-sites experiment: the convergence debugger on KJIT's EP (Jitkrittum et al. 2015,
//! Sec. 2, on our EP loop of `inference::kjit::ep_logistic`). One logistic-regression problem,
//! one iteration = one EP sweep under a
//! chosen site schedule (`inference::kjit::ep_schedule`) and damping, with the quadrature
//! projection or a KJIT operator learning as it goes. Each sweep records every site message's
//! and cavity's change (natural parameters), the oscillation flags and the residual quantiles;
//! the factor graph (w in the middle, the sites around it) is drawn by the shared canvas.
//! Live schedule switches are recorded in `sites.schedule_changes` and replayed.
//!
//! Cost per sweep: see [`ScheduledEp`]; the tracker adds O(n) per sweep and stores
//! `2n · (4 + 1 + 8)` bytes per sweep within its budget.

use nalgebra::{DMatrix, DVector};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use serde::{Deserialize, Serialize};

use super::config::KjitConfig;
use crate::error::{Error, Result};
use crate::inference::Schedule;
use crate::inference::kjit::ep_schedule::{ScheduledEp, SiteSweep};
use crate::inference::kjit::messages::sigmoid;
use crate::inference::kjit::{LogisticEp, QuadratureProjection, ZProjection};
use crate::inference::schedule::ScheduleChange;
use crate::run::CancelFlag;
use crate::run::residuals::{
    ConvergenceGraph, ConvergenceStats, ConvergenceTracker, ConvergenceView, EDGE_BUDGET_BYTES,
    MessageChanges,
};
use crate::scenarios::what_if::{WhatIfRequest, WhatIfRun};

/// Which projection hosts the logistic factor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum SiteOperator {
    /// Gauss–Hermite quadrature (the reference, deterministic).
    #[default]
    Quadrature,
    /// The run's KJIT operator (oracle while uncertain, learning as it goes).
    Kjit,
}

/// The EP-sites experiment's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SitesSettings {
    /// Sites (examples) and the dimension of w.
    pub examples: usize,
    pub dim: usize,
    /// Sweeps at most; the run stops earlier once the largest site change is below
    /// `tolerance`.
    pub sweeps: usize,
    pub tolerance: f64,
    pub schedule: Schedule,
    /// `new = d · old + (1 − d) · update` on the sites' natural parameters.
    pub damping: f64,
    pub operator: SiteOperator,
    /// Correlation between the input dimensions (`x ~ N(0, (1 − c) I + c 11ᵀ)`).
    pub correlation: f64,
    /// The true weights' scale (`w = scale · N(0, I)`): large scales make the classes nearly
    /// separable and the sites sharp.
    pub weight_scale: f64,
    /// Schedule switches made while the run went on, so the config replays them.
    pub schedule_changes: Vec<ScheduleChange>,
}

impl Default for SitesSettings {
    fn default() -> Self {
        SitesSettings {
            examples: 30,
            dim: 3,
            sweeps: 100,
            tolerance: 1e-8,
            schedule: Schedule::Sweep,
            damping: 0.0,
            operator: SiteOperator::Quadrature,
            correlation: 0.0,
            weight_scale: 1.0,
            schedule_changes: Vec::new(),
        }
    }
}

impl SitesSettings {
    pub fn check(&self) -> Result<()> {
        crate::inference::Damping(self.damping).check()?;
        ScheduleChange::check_all(&self.schedule_changes)
    }
}

/// What the window shows beside the canvas.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SitesView {
    pub schedule: Schedule,
    pub damping: f64,
    pub operator: SiteOperator,
    pub sweeps_done: usize,
    pub converged: bool,
    pub residual: f64,
    pub projections: usize,
    pub skipped: usize,
    pub posterior_mean: Vec<f64>,
    pub posterior_sd: Vec<f64>,
    pub w_true: Vec<f64>,
}

/// The running experiment.
pub struct SitesLab {
    settings: SitesSettings,
    engine: ScheduledEp,
    quadrature: QuadratureProjection,
    tracker: ConvergenceTracker,
    w_true: DVector<f64>,
    last: Option<SiteSweep>,
    projections: usize,
    skipped: usize,
}

/// The problem: `w = scale · N(0, I)`, `x_i ~ N(0, (1 − c) I + c 11ᵀ)`,
/// `y_i ~ Bernoulli(σ(wᵀx_i))`, all from the seed's stream 40 000.
pub fn sites_problem(
    settings: &SitesSettings,
    seed: u64,
) -> (DMatrix<f64>, Vec<bool>, DVector<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(40_000);
    let d = settings.dim;
    let w = DVector::from_fn(d, |_, _| {
        settings.weight_scale * rng.sample::<f64, _>(StandardNormal)
    });
    let c = settings.correlation.clamp(0.0, 0.999);
    let mut x = DMatrix::zeros(settings.examples, d);
    for i in 0..settings.examples {
        let shared: f64 = rng.sample(StandardNormal);
        for j in 0..d {
            let own: f64 = rng.sample(StandardNormal);
            x[(i, j)] = (1.0 - c).sqrt() * own + c.sqrt() * shared;
        }
    }
    let y = (0..settings.examples)
        .map(|i| rng.random::<f64>() < sigmoid(x.row(i).transpose().dot(&w)))
        .collect();
    (x, y, w)
}

/// The factor graph: node 0 is w (every `z_i = wᵀx_i` folded into it), nodes 1..=n the sites
/// on a circle; message i is site i's message to w, message n + i the cavity sent back.
pub fn sites_graph(n: usize) -> ConvergenceGraph {
    let mut positions = vec![[0.5, 0.5]];
    for i in 0..n {
        let a = std::f64::consts::TAU * i as f64 / n.max(1) as f64 - std::f64::consts::FRAC_PI_2;
        positions.push([0.5 + 0.44 * a.cos(), 0.5 + 0.44 * a.sin()]);
    }
    let mut messages: Vec<[usize; 2]> = (0..n).map(|i| [i + 1, 0]).collect();
    messages.extend((0..n).map(|i| [0, i + 1]));
    ConvergenceGraph {
        positions,
        messages,
        value_axis: "natural parameter (0: precision τ, 1: shift ν)".to_string(),
    }
}

impl SitesLab {
    pub fn new(config: &KjitConfig) -> Result<SitesLab> {
        let settings = config.sites.clone();
        settings.check()?;
        let (x, y, w_true) = sites_problem(&settings, config.seed);
        let n = settings.examples;
        let ep = LogisticEp::new(x, y, 1.0)?;
        let engine = ScheduledEp::new(ep, settings.schedule, settings.damping, config.seed)?;
        Ok(SitesLab {
            quadrature: QuadratureProjection::new(config.quadrature_nodes)?,
            tracker: ConvergenceTracker::for_graph(sites_graph(n), EDGE_BUDGET_BYTES),
            engine,
            w_true,
            last: None,
            projections: 0,
            skipped: 0,
            settings,
        })
    }

    pub fn settings(&self) -> &SitesSettings {
        &self.settings
    }

    pub fn sweeps_done(&self) -> usize {
        self.engine.ep().sweeps()
    }

    /// Whether the last sweep moved no site by more than the tolerance.
    pub fn converged(&self) -> bool {
        self.last
            .as_ref()
            .is_some_and(|s| s.residual < self.settings.tolerance)
    }

    /// The schedule and damping of the next sweep.
    pub fn current_schedule(&self) -> (Schedule, f64) {
        (self.engine.schedule(), self.engine.damping())
    }

    /// Records a live switch from the next sweep on and applies it.
    pub fn switch(&mut self, schedule: Schedule, damping: f64) -> Result<usize> {
        crate::inference::Damping(damping).check()?;
        let done = self.sweeps_done();
        let from = ScheduleChange::record_next(
            &mut self.settings.schedule_changes,
            done,
            schedule,
            damping,
        );
        self.engine.reschedule(schedule, damping)?;
        Ok(from)
    }

    /// One sweep, with `kjit` as the projection when the settings ask for it.
    pub fn step(&mut self, kjit: &mut dyn ZProjection) -> Result<(SiteSweep, ConvergenceStats)> {
        let next = self.sweeps_done() + 1;
        if let Some(change) = ScheduleChange::at(&self.settings.schedule_changes, next) {
            self.engine.reschedule(change.schedule, change.damping)?;
        }
        let sweep = match self.settings.operator {
            SiteOperator::Quadrature => self.engine.sweep(&mut self.quadrature)?,
            SiteOperator::Kjit => self.engine.sweep(kjit)?,
        };
        self.projections += sweep.projections;
        self.skipped += sweep.skipped;
        let n = self.engine.ep().num_sites();
        let target: Vec<usize> = (0..2 * n)
            .map(|m| if m < n { 0 } else { m - n + 1 })
            .collect();
        let changes = MessageChanges {
            change: &sweep.change,
            signed: &sweep.signed,
            target: &target,
        };
        let stats = self
            .tracker
            .observe_with_values(sweep.sweep, &changes, &sweep.values, 2);
        self.last = Some(sweep.clone());
        Ok((sweep, stats))
    }

    pub fn convergence(&self) -> ConvergenceView {
        let (schedule, damping) = self.current_schedule();
        self.tracker.view(
            schedule.label(),
            damping,
            self.settings.tolerance,
            self.settings.sweeps,
        )
    }

    /// Continues a copy of the EP state with another schedule or damping (quadrature only:
    /// a KJIT operator learns from every oracle call, so a copy would have to share and change
    /// the running operator or start unlearned).
    pub fn what_if(&self, request: WhatIfRequest, cancel: &CancelFlag) -> Result<WhatIfRun> {
        if self.settings.operator == SiteOperator::Kjit {
            return Err(Error::Other(
                "no what-if runs with the KJIT operator: it learns from every oracle call, so a \
                 copy would either change the running operator's learned state or start \
                 unlearned; switch live instead, or use the quadrature operator"
                    .into(),
            ));
        }
        let start = std::time::Instant::now();
        let mut copy = self.engine.clone();
        copy.reschedule(request.schedule, request.damping)?;
        let mut op = self.quadrature.clone();
        let start_iteration = self.sweeps_done();
        let mut residuals = Vec::with_capacity(request.iterations);
        let mut converged_after = None;
        for k in 1..=request.iterations {
            cancel.check()?;
            let sweep = copy.sweep(&mut op)?;
            residuals.push((sweep.sweep, sweep.residual));
            if sweep.residual < request.tolerance {
                converged_after = Some(k);
                break;
            }
        }
        Ok(WhatIfRun {
            request,
            start_iteration,
            residuals,
            converged_after,
            seconds: start.elapsed().as_secs_f64(),
        })
    }

    pub fn view(&self) -> SitesView {
        let ep = self.engine.ep();
        let (schedule, damping) = self.current_schedule();
        SitesView {
            schedule,
            damping,
            operator: self.settings.operator,
            sweeps_done: self.sweeps_done(),
            converged: self.converged(),
            residual: self.last.as_ref().map_or(f64::NAN, |s| s.residual),
            projections: self.projections,
            skipped: self.skipped,
            posterior_mean: ep.posterior_mean().iter().copied().collect(),
            posterior_sd: ep
                .posterior_cov()
                .diagonal()
                .iter()
                .map(|v| v.sqrt())
                .collect(),
            w_true: self.w_true.iter().copied().collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn graph_joins_every_site_to_w_both_ways() {
        let g = sites_graph(5);
        assert_eq!(g.positions.len(), 6);
        assert_eq!(g.messages.len(), 10);
        assert_eq!(g.messages[2], [3, 0]);
        assert_eq!(g.messages[7], [0, 3]);
        for p in &g.positions {
            assert!((0.0..=1.0).contains(&p[0]) && (0.0..=1.0).contains(&p[1]));
        }
    }

    #[test]
    fn problem_is_reproducible_and_correlated() {
        let s = SitesSettings {
            examples: 2000,
            dim: 2,
            correlation: 0.8,
            ..SitesSettings::default()
        };
        let (x, y, w) = sites_problem(&s, 3);
        let (x2, y2, w2) = sites_problem(&s, 3);
        assert_eq!((&x, &y, &w), (&x2, &y2, &w2));
        let n = x.nrows() as f64;
        let cov = x.column(0).dot(&x.column(1)) / n;
        assert!((cov - 0.8).abs() < 0.08, "sample covariance {cov}");
    }
}
