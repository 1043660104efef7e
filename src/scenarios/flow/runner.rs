//! One algorithm running through a flow pyramid (Noorshams & Wainwright 2013, Sec. 5.2, solve
//! one level; the pyramid is beyond the paper): each level set up around the refined flow of
//! the level above (SOSMP's tensor-Fourier messages, Eq. 22, or discrete sum-product BP), its
//! iterations until the flow settles, the variational refinement of its flow, and the levels
//! too large to pass messages on, which are only refined. Cost per iteration: the engine's
//! (O(edges · r · k) for SOSMP, O(edges · labels · 2 √labels) for discrete BP) plus the read-out
//! of the flow at full resolution and its errors, O(pixels).

use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;

use super::FlowBeliefProbe;
use super::config::{self, FlowAlgorithm, FlowConfig};
use super::engine::{FlowEngine, refuse_sosmp_switch};
use super::metrics::{FlowErrors, flow_errors};
use super::pyramid::{Pyramid, StoredFlow, mean_change, median3};
use crate::error::Result;
use crate::inference::flow_bp::FlowBp;
use crate::inference::flow_variational::refine_flow;
use crate::inference::sosmp::Sosmp;
use crate::inference::sosmp::flow::{flow_problem, uniform_start};
use crate::inference::{Belief, Inference, Schedule};
use crate::io::FlowField;
use crate::model::flow::{FlowEvidence, FlowMrf, upsample_flow};
use crate::scenarios::CancelFlag;

/// A flow kept for review.
#[derive(Debug, Clone)]
pub struct FlowSnapshot {
    /// Global iteration (over all levels).
    pub iteration: usize,
    pub level: usize,
    /// Iteration within the level.
    pub level_iteration: usize,
    /// The level's flow (brought to full resolution when first shown).
    pub flow: Arc<StoredFlow>,
    pub errors: Option<FlowErrors>,
}

impl FlowSnapshot {
    /// The snapshot's flow at full resolution.
    pub fn full_flow(&self) -> Arc<FlowField> {
        self.flow.full()
    }
}

/// What one level cost and looked like.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelInfo {
    pub level: usize,
    pub width: usize,
    pub height: usize,
    pub setup_seconds: f64,
    pub run_seconds: f64,
    pub iterations: usize,
    /// γ tables (SOSMP) or distinct edge shifts.
    pub shift_classes: usize,
    /// Displacement labels of the level's window.
    pub labels: usize,
    /// Message updates run at this level.
    pub message_updates: u64,
    /// SOSMP: updates whose sampling density was zero on the whole box (fell back to β).
    pub fallbacks: u64,
    /// Mean change of the level's flow over its latest iteration (pixels of the level).
    pub flow_change: f64,
    /// True when the level ended on [`FlowConfig::stop_change`] before `iters`.
    pub stopped_early: bool,
    /// Seconds of the variational refinement of the level's flow (0 when it was not refined).
    pub refine_seconds: f64,
    /// Warps the refinement ran (0: not refined).
    pub refine_warps: usize,
    /// Errors of the level's message-passing flow (at full resolution) before its refinement.
    pub errors_before_refinement: Option<FlowErrors>,
}

impl LevelInfo {
    /// Fallbacks per message update (0 before the first iteration).
    pub fn fallback_fraction(&self) -> f64 {
        if self.message_updates == 0 {
            0.0
        } else {
            self.fallbacks as f64 / self.message_updates as f64
        }
    }
}

/// One algorithm running through the pyramid.
pub struct FlowRun {
    pub algorithm: FlowAlgorithm,
    pub(super) level: usize,
    pub(super) level_iteration: usize,
    pub(super) iteration: usize,
    pub(super) mrf: Arc<FlowMrf>,
    pub(super) engine: FlowEngine,
    /// Total flow at the current level (the same field as `flow` at the finest level).
    pub(super) level_flow: Arc<FlowField>,
    /// Total flow at full resolution.
    pub(super) flow: Arc<FlowField>,
    pub(super) errors: Option<FlowErrors>,
    pub(super) epe: Vec<f64>,
    pub(super) aae: Vec<f64>,
    pub(super) snapshots: Vec<FlowSnapshot>,
    pub(super) levels: Vec<LevelInfo>,
    pub(super) fallbacks: u64,
    /// Mean change of the level's flow over the latest iteration (pixels of the level;
    /// infinite after a level's first iteration).
    pub(super) flow_change: f64,
    /// The current level has run its iterations (or met the stop rule).
    pub(super) level_done: bool,
    /// The variational refinement of the finest level's flow, once it has run.
    pub(super) refinement: Option<RefinementInfo>,
    /// Discrete BP's schedule and damping now (each new level starts with them).
    pub(super) schedule: (Schedule, f64),
    /// The pyramid's level sizes, finest first.
    pub(super) sizes: Arc<[(usize, usize)]>,
    /// The level of `mrf` (the finest level that passed messages so far).
    pub(super) mrf_level: usize,
    /// The upsampled hand-off of a level that passes no messages, until its refinement.
    pub(super) pending: Option<FlowField>,
}

/// What the variational refinement of the finest level did (each level's is in its
/// [`LevelInfo`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RefinementInfo {
    pub seconds: f64,
    /// Errors of the message-passing flow it started from.
    pub errors_before: Option<FlowErrors>,
}

impl FlowRun {
    /// Sets `algorithm` up at the coarsest level (zero base flow).
    pub(super) fn new(
        algorithm: FlowAlgorithm,
        config: &FlowConfig,
        pyramid: &Pyramid,
        gt: Option<&FlowField>,
        cancel: &CancelFlag,
    ) -> Result<Self> {
        let level = pyramid.levels.len() - 1;
        let schedule = config.schedule_at(1);
        let (mrf, engine, info) =
            build_level(algorithm, config, pyramid, level, None, schedule, cancel)?;
        let mut run = FlowRun {
            algorithm,
            level,
            level_iteration: 0,
            iteration: 0,
            mrf,
            engine,
            level_flow: Arc::new(FlowField::zeros(1, 1)),
            flow: Arc::new(FlowField::zeros(1, 1)),
            errors: None,
            epe: Vec::new(),
            aae: Vec::new(),
            snapshots: Vec::new(),
            levels: vec![info],
            fallbacks: 0,
            flow_change: f64::INFINITY,
            level_done: false,
            refinement: None,
            schedule,
            sizes: pyramid.sizes().into(),
            mrf_level: level,
            pending: None,
        };
        run.read_out(config, pyramid, gt);
        Ok(run)
    }

    /// Moves to the next finer level, searching around the current flow.
    pub(super) fn descend(
        &mut self,
        config: &FlowConfig,
        pyramid: &Pyramid,
        cancel: &CancelFlag,
    ) -> Result<()> {
        let fine = self.level - 1;
        let size = pyramid.size(self.level);
        let (u, v) = if config.median_handoff {
            (
                median3(&self.level_flow.u, size),
                median3(&self.level_flow.v, size),
            )
        } else {
            (self.level_flow.u.clone(), self.level_flow.v.clone())
        };
        let (u, v) = upsample_flow(&u, &v, size, pyramid.size(fine));
        self.fallbacks += self.engine.fallbacks();
        // Free the coarse level's messages before the fine level allocates its own (peak
        // memory is the fine level's, not both); on failure the next step retries from the
        // kept coarse flow.
        self.engine = FlowEngine::Vacant;
        if !config.passes_messages(fine, pyramid.levels.len()) {
            // Refined only: the next step refines the hand-off (no model, no messages).
            let (width, height) = pyramid.size(fine);
            self.pending = Some(FlowField {
                width,
                height,
                u,
                v,
            });
            self.levels.push(LevelInfo {
                level: fine,
                width,
                height,
                setup_seconds: 0.0,
                run_seconds: 0.0,
                iterations: 0,
                shift_classes: 0,
                labels: 0,
                message_updates: 0,
                fallbacks: 0,
                flow_change: f64::INFINITY,
                stopped_early: false,
                refine_seconds: 0.0,
                refine_warps: 0,
                errors_before_refinement: None,
            });
            self.level = fine;
            self.level_iteration = 0;
            self.level_done = false;
            return Ok(());
        }
        let (mrf, engine, info) = build_level(
            self.algorithm,
            config,
            pyramid,
            fine,
            Some((&u, &v)),
            self.schedule,
            cancel,
        )?;
        self.mrf = mrf;
        self.mrf_level = fine;
        self.engine = engine;
        self.level = fine;
        self.level_iteration = 0;
        self.level_done = false;
        self.levels.push(info);
        Ok(())
    }

    /// The total flow at the current level and at full resolution, and its errors. At the
    /// finest level both are one field (one copy of the largest flow in memory).
    pub(super) fn read_out(
        &mut self,
        config: &FlowConfig,
        pyramid: &Pyramid,
        gt: Option<&FlowField>,
    ) {
        let (u, v) = {
            let est = self.engine.estimates(config.estimate);
            let n = self.mrf.width * self.mrf.height;
            if est.values.len() != 2 * n {
                // Between levels (no engine): keep the flow read last.
                return;
            }
            let (mut u, mut v) = (vec![0.0; n], vec![0.0; n]);
            let mrf = &self.mrf;
            u.par_iter_mut()
                .zip(v.par_iter_mut())
                .zip(est.values.par_chunks(2))
                .enumerate()
                .with_min_len(4096)
                .for_each(|(i, ((a, b), d))| {
                    [*a, *b] = mrf.total_flow(i, [d[0], d[1]]);
                });
            (u, v)
        };
        self.flow_change = mean_change(&self.level_flow, (&u, &v));
        let (lw, lh) = pyramid.size(self.level);
        self.level_flow = Arc::new(FlowField {
            width: lw,
            height: lh,
            u,
            v,
        });
        self.flow = if self.level == 0 {
            self.level_flow.clone()
        } else {
            Arc::new(self.full_resolution(pyramid))
        };
        self.errors = gt.map(|g| flow_errors(&self.flow.u, &self.flow.v, g));
    }

    /// One iteration (descending a level first if the current one is done); `None` once the
    /// finest level is done (compare mode steps the other run on).
    pub(super) fn step(
        &mut self,
        config: &FlowConfig,
        pyramid: &Pyramid,
        gt: Option<&FlowField>,
        cancel: &CancelFlag,
    ) -> Result<Option<(f64, f64)>> {
        if self.finished() {
            return Ok(None);
        }
        if self.level_done {
            self.descend(config, pyramid, cancel)?;
        }
        if let Some(handoff) = self.pending.take() {
            return self
                .refine_only(handoff, config, pyramid, gt, cancel)
                .map(Some);
        }
        let report = self.engine.step()?;
        let start = Instant::now();
        self.level_iteration += 1;
        self.iteration += 1;
        self.read_out(config, pyramid, gt);
        if let Some(e) = self.errors {
            self.epe.push(e.epe);
            self.aae.push(e.aae);
        }
        // In full-resolution pixels: an error at level l is doubled l times on its way down.
        let scale = (1usize << self.level) as f64;
        let converged = config.stop_change > 0.0
            && self.level_iteration >= config::MIN_LEVEL_ITERS
            && self.flow_change * scale < config.stop_change;
        let cap = config.iters_for(self.algorithm);
        self.level_done = converged || self.level_iteration >= cap;
        if self.level_done && config.refines_level(self.level) {
            self.refine(config, pyramid, gt, cancel)?;
            if let Some(e) = self.errors {
                // The iteration's record shows the refined flow.
                self.epe.pop();
                self.aae.pop();
                self.epe.push(e.epe);
                self.aae.push(e.aae);
            }
        }
        if self.level_done || config.snapshots.contains(&self.level_iteration) {
            self.snapshots.push(self.snapshot());
        }
        let seconds = report.seconds + start.elapsed().as_secs_f64();
        let level_fallbacks = self.engine.fallbacks();
        if let Some(info) = self.levels.last_mut() {
            info.run_seconds += seconds;
            info.iterations += 1;
            info.message_updates += report.updates as u64;
            info.fallbacks = level_fallbacks;
            info.flow_change = self.flow_change;
            info.stopped_early = converged && self.level_iteration < cap;
        }
        Ok(Some((seconds, report.residual)))
    }

    /// The current level's flow and errors as of this iteration.
    fn snapshot(&self) -> FlowSnapshot {
        FlowSnapshot {
            iteration: self.iteration,
            level: self.level,
            level_iteration: self.level_iteration,
            flow: Arc::new(StoredFlow::new(
                self.level,
                self.level_flow.clone(),
                self.sizes.clone(),
            )),
            errors: self.errors,
        }
    }

    /// The one iteration of a level that passes no messages: its hand-off, refined.
    pub(super) fn refine_only(
        &mut self,
        handoff: FlowField,
        config: &FlowConfig,
        pyramid: &Pyramid,
        gt: Option<&FlowField>,
        cancel: &CancelFlag,
    ) -> Result<(f64, f64)> {
        let start = Instant::now();
        self.level_iteration += 1;
        self.iteration += 1;
        let before = Arc::new(handoff);
        self.level_flow = before.clone();
        // The errors of the hand-off, which the refinement reports as its start.
        self.flow = if self.level == 0 {
            before.clone()
        } else {
            Arc::new(self.full_resolution(pyramid))
        };
        self.errors = gt.map(|g| flow_errors(&self.flow.u, &self.flow.v, g));
        self.refine(config, pyramid, gt, cancel)?;
        self.flow_change = mean_change(&before, (&self.level_flow.u, &self.level_flow.v));
        drop(before);
        if let Some(e) = self.errors {
            self.epe.push(e.epe);
            self.aae.push(e.aae);
        }
        self.level_done = true;
        self.snapshots.push(self.snapshot());
        let seconds = start.elapsed().as_secs_f64();
        if let Some(info) = self.levels.last_mut() {
            info.run_seconds += seconds;
            info.iterations += 1;
            info.flow_change = self.flow_change;
        }
        Ok((seconds, 0.0))
    }

    /// Replaces the current level's flow by its variational refinement
    /// ([`crate::inference::flow_variational`]) on that level's frames, started from it: at the
    /// finest level the run's result, at a coarser one the flow handed to the next level.
    pub(super) fn refine(
        &mut self,
        config: &FlowConfig,
        pyramid: &Pyramid,
        gt: Option<&FlowField>,
        cancel: &CancelFlag,
    ) -> Result<()> {
        let start = Instant::now();
        let (f1, f2) = &pyramid.levels[self.level];
        let mut flow = (*self.level_flow).clone();
        let warps = refine_flow(
            f1,
            f2,
            &mut flow.u,
            &mut flow.v,
            &config.variational_at(self.level, pyramid.levels.len()),
            cancel,
        )?;
        let errors_before = self.errors;
        self.level_flow = Arc::new(flow);
        self.flow = if self.level == 0 {
            self.level_flow.clone()
        } else {
            Arc::new(self.full_resolution(pyramid))
        };
        self.errors = gt.map(|g| flow_errors(&self.flow.u, &self.flow.v, g));
        let seconds = start.elapsed().as_secs_f64();
        if let Some(info) = self.levels.last_mut() {
            info.refine_seconds = seconds;
            info.refine_warps = warps;
            info.errors_before_refinement = errors_before;
        }
        if self.level == 0 {
            self.refinement = Some(RefinementInfo {
                seconds,
                errors_before,
            });
        }
        Ok(())
    }

    /// The current level's flow brought to full resolution.
    pub(super) fn full_resolution(&self, pyramid: &Pyramid) -> FlowField {
        let (fu, fv) = pyramid.to_full(self.level, &self.level_flow.u, &self.level_flow.v);
        let (w, h) = pyramid.size(0);
        FlowField {
            width: w,
            height: h,
            u: fu,
            v: fv,
        }
    }

    /// Switches the schedule and damping from the next iteration on (this level and the next).
    pub(super) fn reschedule(&mut self, schedule: Schedule, damping: f64) -> Result<()> {
        if self.algorithm == FlowAlgorithm::Sosmp {
            return refuse_sosmp_switch(schedule, damping);
        }
        self.engine.reschedule(schedule, damping)?;
        self.schedule = (schedule, damping);
        Ok(())
    }

    /// The variational refinement, once the finest level has run it.
    pub fn refinement(&self) -> Option<RefinementInfo> {
        self.refinement
    }

    /// The finest level is done.
    pub fn finished(&self) -> bool {
        self.level == 0 && self.level_done
    }

    /// Mean change of the level's flow over the latest iteration, pixels of the level.
    pub fn flow_change(&self) -> f64 {
        self.flow_change
    }

    pub fn flow(&self) -> &Arc<FlowField> {
        &self.flow
    }

    pub fn errors(&self) -> Option<FlowErrors> {
        self.errors
    }

    pub fn level(&self) -> usize {
        self.level
    }

    pub fn snapshots(&self) -> &[FlowSnapshot] {
        &self.snapshots
    }

    pub fn engine(&self) -> &FlowEngine {
        &self.engine
    }

    pub fn mrf(&self) -> &Arc<FlowMrf> {
        &self.mrf
    }

    pub(super) fn total_fallbacks(&self) -> u64 {
        self.fallbacks + self.engine.fallbacks()
    }

    pub(super) fn setup_seconds(&self) -> f64 {
        self.levels.iter().map(|l| l.setup_seconds).sum()
    }

    /// The belief at full-resolution pixel `(x, y)`: over the level's label lattice, with the
    /// axes in full-resolution pixels of total flow. O(labels · r).
    pub fn probe(&self, pyramid: &Pyramid, x: usize, y: usize) -> FlowBeliefProbe {
        // The finest level that passed messages (a refined-only level has no beliefs).
        let level = self.mrf_level;
        let (lw, lh) = pyramid.size(level);
        let scale = (1usize << level) as f64;
        let lx = (x >> level).min(lw - 1);
        let ly = (y >> level).min(lh - 1);
        let node = ly * lw + lx;
        let base = self.mrf.evidence.base_flow(node);
        let (xs, ys, values) = match self.engine.belief(node) {
            Belief::Grid2 { xs, ys, values } => (xs, ys, values),
            _ => (Vec::new(), Vec::new(), Vec::new()),
        };
        let idx = y * self.flow.width + x;
        FlowBeliefProbe {
            algorithm: self.algorithm,
            level,
            level_pixel: (lx, ly),
            us: xs.iter().map(|a| (a + base[0]) * scale).collect(),
            vs: ys.iter().map(|b| (b + base[1]) * scale).collect(),
            values,
            estimate: [self.flow.u[idx], self.flow.v[idx]],
        }
    }
}

/// SOSMP's step cap: `η_t = min(1, 1 / (γ (t + 1)))` (see [`Sosmp::set_max_step`]; steps above 1
/// caused every fallback to β measured on RubberWhale).
pub const SOSMP_MAX_STEP: f64 = 1.0;

/// Sets an algorithm up on one level. SOSMP errors only on bad settings; discrete BP also when
/// its messages would not fit in memory.
pub(super) fn build_level(
    algorithm: FlowAlgorithm,
    config: &FlowConfig,
    pyramid: &Pyramid,
    level: usize,
    base: Option<(&[f64], &[f64])>,
    schedule: (Schedule, f64),
    cancel: &CancelFlag,
) -> Result<(Arc<FlowMrf>, FlowEngine, LevelInfo)> {
    let start = Instant::now();
    let (f1, f2) = &pyramid.levels[level];
    let labels = config.labels_at(level, pyramid.levels.len())?;
    let evidence = FlowEvidence::new(f1, f2, labels, config.sigma_data, base)?
        .with_gradient(f1, f2, config.gradient_weight)?
        .with_census(f1, config.census_weight)?;
    let mrf = Arc::new(
        FlowMrf::new(evidence, config.sigma_smooth)?.with_smooth_outlier(config.smooth_outlier)?,
    );
    cancel.check()?;
    let shift_classes = mrf.shift_classes().0.len();
    let mut engine = match algorithm {
        FlowAlgorithm::Sosmp => {
            let problem = Arc::new(flow_problem(&mrf, config.side()?, cancel)?);
            let start = uniform_start(&problem);
            // f32 storage, f64 arithmetic, and no per-message record of the latest draws: the
            // coefficients are most of the level's memory.
            let mut sosmp =
                Sosmp::with_start_in_store(problem, config.sosmp_params(), &start, false)?;
            sosmp.set_max_step(SOSMP_MAX_STEP)?;
            FlowEngine::Sosmp(Box::new(sosmp))
        }
        FlowAlgorithm::Discrete => {
            let (schedule, damping) = schedule;
            let mut bp = FlowBp::new(mrf.clone(), damping)?;
            bp.set_schedule(schedule, damping)?;
            FlowEngine::Discrete(Box::new(bp))
        }
    };
    engine.set_interrupt(cancel.clone());
    let info = LevelInfo {
        level,
        width: mrf.width,
        height: mrf.height,
        setup_seconds: start.elapsed().as_secs_f64(),
        run_seconds: 0.0,
        iterations: 0,
        shift_classes,
        labels: mrf.labels.len(),
        message_updates: 0,
        fallbacks: 0,
        flow_change: f64::INFINITY,
        stopped_early: false,
        refine_seconds: 0.0,
        refine_warps: 0,
        errors_before_refinement: None,
    };
    Ok((mrf, engine, info))
}
