//! Scenario `flow`: optical flow with two-dimensional SOSMP (Noorshams & Wainwright 2013,
//! Sec. 5.2, Fig. 10), and discrete BP on the same MRF as the baseline.
//!
//! Data: the built-in synthetic pair ([`synthetic`], with exact ground truth) or two frames the
//! user loads, with an optional Middlebury `.flo` ground truth. The MRF is
//! [`crate::model::flow`]'s: one node per pixel, displacements on a `[-d, d]²` lattice, the
//! Gaussian data term of the paper and a Gaussian smoothness prior. SOSMP runs the generic engine
//! with the tensor Fourier basis (r = 9 by default, as in the paper); discrete BP runs over the
//! lattice labels with separable Gaussian messages. Compare mode runs both, in lock step.
//!
//! **Pyramid (beyond the paper).** With `levels > 1` the frames are halved `levels - 1` times
//! (2 x 2 means); the coarsest level is solved first over `[-d, d]²`, and each finer level
//! searches a window around the 3 x 3 median of the flow of the level above (upsampled,
//! doubled, rounded to the lattice): its data term compares `I1(p)` with `I2` at
//! `p + c_p + x`, i.e. frame 2 warped by the coarse flow. The window is `[-d, d]²` at every
//! level but the finest, which holds 3/4 of the pixels and so sets time and memory: it searches
//! `[-d_r, d_r]²` (default 1.5 px: 49 labels instead of 81). The reach is `d (2^L - 2) + d_r`
//! full-resolution pixels. Measured on RubberWhale: `d_r = 1` at every finer level doubled the
//! EPE (0.51 against 0.245; a level cannot undo a coarse error larger than its window), 1.5 at
//! every finer level gave 0.31. By default (`levels = 0`) the depth comes from the image size:
//! halve until the short side is at most 64 px ([`config::auto_levels`]; RubberWhale 584 x 388:
//! 4 levels, coarsest 73 x 49, reach 29.5 px). `levels = 1` is the paper's single level (preset `paper`). `iters` iterations
//! run at every level; the iteration count in the history runs on across levels, and every
//! record's EPE and AAE are those of the current estimate brought to full resolution.
//!
//! **Defaults** (chosen on the built-in pair, Dimetrodon and RubberWhale together): `d = 2` px at
//! 1/2 px (81 labels; 49 at the finest level of a pyramid, `d_r = 1.5`), the pyramid depth from the image size, `σ_u = 2` gray levels, `σ_uv = 0.5`
//! px (Gaussian; preset `best` adds the robust floor `ρ`), no pre-smoothing, r = 9, k = 3, step
//! `min(1, 1 / (0.3 (t + 1)))`, 40 iterations per level, the belief mean as flow. SOSMP starts
//! every message at the uniform density (the engine's `a_0 = 1/r` is a bump off the centre of
//! the box, which the `1/t` averaging forgets slowly). The step γ = 0.3 (inside Theorem 2's
//! (0, 2)) forgets the first, poor iterations faster than γ = 1; the cap at 1 keeps the first
//! steps from extrapolating past the fresh estimate (uncapped, `η_0 = 3.3` made the expansions
//! negative over most of the box and the clipped messages of a pixel disjoint: every fallback
//! to β measured on RubberWhale and Dimetrodon, none after the cap, EPE unchanged or better).
//!
//! **Level stop (beyond the paper, which runs a fixed count).** A level ends once the mean
//! change of its flow estimate over one iteration, in full-resolution pixels (level pixels
//! times `2^level`: a coarse error is doubled at every hand-off), is below `stop_change`
//! (default 0.002 px), after at least 5 iterations, or after `iters`. Discrete BP's messages
//! converge, so its levels end after 10 to 25 iterations instead of 40 (the finest level holds
//! 3/4 of the pixels, so this is where the time goes); SOSMP's estimate keeps moving by its
//! Monte Carlo noise (about 0.013 px per iteration at t = 40 on RubberWhale, falling like
//! `1/t`), so it runs its 40. The presets `paper` and `best` run every iteration. The flow's
//! change is recorded per iteration (`flow_change`) and per level (`final_flow_change`).
//!
//! Cost per iteration: the engine's (O(pixels · 4 (n √r + k r)) for SOSMP with n labels, O(pixels
//! · 4 n · 2√n) for discrete BP) plus O(pixels · n) for the read-out and O(pixels) for the metrics.

pub mod cli;
pub mod config;
pub mod data;
pub mod engine;
pub mod layers;
pub mod memory;
pub mod metrics;
pub mod open;
pub mod pyramid;
pub mod report;
pub mod synthetic;
pub mod what_if;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;
use serde_json::{Map, Value};

pub use self::config::{FlowAlgorithm, FlowConfig, PARAMS};
pub use self::data::FlowData;
pub use self::engine::FlowEngine;
use self::engine::refuse_sosmp_switch;
use self::metrics::{FlowErrors, flow_errors};
use self::pyramid::mean_change;
pub use self::pyramid::{Pyramid, StoredFlow, median3};
use super::{
    CancelFlag, IterationRecord, NoControl, NoTask, Probe, RunLog, Scenario, ScenarioConfig,
    ScenarioDef, ScenarioView, report_fields,
};
use crate::error::Result;
use crate::inference::flow_bp::FlowBp;
use crate::inference::flow_variational::refine_flow;
use crate::inference::schedule::ScheduleChange;
use crate::inference::sosmp::Sosmp;
use crate::inference::sosmp::flow::{flow_problem, uniform_start};
use crate::inference::{Belief, Inference, Schedule};
use crate::io::{self, FlowField, GrayImage, flo};
use crate::model::flow::{FlowEvidence, FlowMrf, upsample_flow};
use crate::run::level_maps::{LevelSpan, PyramidMaps, RUNNING_LEVEL_BUDGET};
use crate::run::residuals::{ConvergenceTracker, ConvergenceView};
use crate::scenarios::ScenarioParams;
use crate::viz::flow_color::{FlowColoring, flow_rgba, legend_rgba};

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
    level: usize,
    level_iteration: usize,
    iteration: usize,
    mrf: Arc<FlowMrf>,
    engine: FlowEngine,
    /// Total flow at the current level (the same field as `flow` at the finest level).
    level_flow: Arc<FlowField>,
    /// Total flow at full resolution.
    flow: Arc<FlowField>,
    errors: Option<FlowErrors>,
    epe: Vec<f64>,
    aae: Vec<f64>,
    snapshots: Vec<FlowSnapshot>,
    levels: Vec<LevelInfo>,
    fallbacks: u64,
    /// Mean change of the level's flow over the latest iteration (pixels of the level;
    /// infinite after a level's first iteration).
    flow_change: f64,
    /// The current level has run its iterations (or met the stop rule).
    level_done: bool,
    /// The variational refinement of the finest level's flow, once it has run.
    refinement: Option<RefinementInfo>,
    /// Discrete BP's schedule and damping now (each new level starts with them).
    schedule: (Schedule, f64),
    /// The pyramid's level sizes, finest first.
    sizes: Arc<[(usize, usize)]>,
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
    fn new(
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
        };
        run.read_out(config, pyramid, gt);
        Ok(run)
    }

    /// Moves to the next finer level, searching around the current flow.
    fn descend(
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
        self.engine = engine;
        self.level = fine;
        self.level_iteration = 0;
        self.level_done = false;
        self.levels.push(info);
        Ok(())
    }

    /// The total flow at the current level and at full resolution, and its errors. At the
    /// finest level both are one field (one copy of the largest flow in memory).
    fn read_out(&mut self, config: &FlowConfig, pyramid: &Pyramid, gt: Option<&FlowField>) {
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
    fn step(
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
            self.refine(config, pyramid, gt)?;
            if let Some(e) = self.errors {
                // The iteration's record shows the refined flow.
                self.epe.pop();
                self.aae.pop();
                self.epe.push(e.epe);
                self.aae.push(e.aae);
            }
        }
        if self.level_done || config.snapshots.contains(&self.level_iteration) {
            self.snapshots.push(FlowSnapshot {
                iteration: self.iteration,
                level: self.level,
                level_iteration: self.level_iteration,
                flow: Arc::new(StoredFlow::new(
                    self.level,
                    self.level_flow.clone(),
                    self.sizes.clone(),
                )),
                errors: self.errors,
            });
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

    /// Replaces the current level's flow by its variational refinement
    /// ([`crate::inference::flow_variational`]) on that level's frames, started from it: at the
    /// finest level the run's result, at a coarser one the flow handed to the next level.
    fn refine(
        &mut self,
        config: &FlowConfig,
        pyramid: &Pyramid,
        gt: Option<&FlowField>,
    ) -> Result<()> {
        let start = Instant::now();
        let (f1, f2) = &pyramid.levels[self.level];
        let mut flow = (*self.level_flow).clone();
        refine_flow(f1, f2, &mut flow.u, &mut flow.v, &config.variational())?;
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
    fn full_resolution(&self, pyramid: &Pyramid) -> FlowField {
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
    fn reschedule(&mut self, schedule: Schedule, damping: f64) -> Result<()> {
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

    fn total_fallbacks(&self) -> u64 {
        self.fallbacks + self.engine.fallbacks()
    }

    fn setup_seconds(&self) -> f64 {
        self.levels.iter().map(|l| l.setup_seconds).sum()
    }

    /// The belief at full-resolution pixel `(x, y)`: over the level's label lattice, with the
    /// axes in full-resolution pixels of total flow. O(labels · r).
    pub fn probe(&self, pyramid: &Pyramid, x: usize, y: usize) -> FlowBeliefProbe {
        let (lw, lh) = pyramid.size(self.level);
        let scale = (1usize << self.level) as f64;
        let lx = (x >> self.level).min(lw - 1);
        let ly = (y >> self.level).min(lh - 1);
        let node = ly * lw + lx;
        let base = self.mrf.evidence.base_flow(node);
        let (xs, ys, values) = match self.engine.belief(node) {
            Belief::Grid2 { xs, ys, values } => (xs, ys, values),
            _ => (Vec::new(), Vec::new(), Vec::new()),
        };
        let idx = y * self.flow.width + x;
        FlowBeliefProbe {
            algorithm: self.algorithm,
            level: self.level,
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
fn build_level(
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
    let engine = match algorithm {
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
        errors_before_refinement: None,
    };
    Ok((mrf, engine, info))
}

/// A belief under the pixel probe.
#[derive(Debug, Clone)]
pub struct FlowBeliefProbe {
    pub algorithm: FlowAlgorithm,
    pub level: usize,
    pub level_pixel: (usize, usize),
    /// Total flow (full-resolution pixels) along the lattice axes.
    pub us: Vec<f64>,
    pub vs: Vec<f64>,
    /// The belief on the lattice, `values[j * us.len() + i]` at `(us[i], vs[j])` (SOSMP: a
    /// density; discrete BP: label probabilities).
    pub values: Vec<f64>,
    pub estimate: [f64; 2],
}

/// What the pixel probe shows.
#[derive(Debug, Clone)]
pub struct FlowProbe {
    pub x: usize,
    pub y: usize,
    pub ground_truth: Option<[f64; 2]>,
    /// The primary algorithm first, then the compared one.
    pub beliefs: Vec<FlowBeliefProbe>,
}

/// One algorithm's state for the views.
#[derive(Debug, Clone)]
pub struct FlowRunView {
    pub algorithm: FlowAlgorithm,
    pub flow: Arc<FlowField>,
    pub errors: Option<FlowErrors>,
    /// EPE and AAE per global iteration.
    pub epe: Arc<Vec<f64>>,
    pub aae: Arc<Vec<f64>>,
    pub snapshots: Vec<FlowSnapshot>,
    pub level: usize,
    pub iteration: usize,
    pub level_iteration: usize,
    /// What each level run so far cost, with its fallback count.
    pub levels: Vec<LevelInfo>,
}

/// What the flow views draw.
#[derive(Debug, Clone)]
pub struct FlowView {
    pub config: FlowConfig,
    pub width: usize,
    pub height: usize,
    pub source: String,
    pub frame1: Arc<GrayImage>,
    pub frame2: Arc<GrayImage>,
    pub ground_truth: Option<Arc<FlowField>>,
    /// EPE and AAE of zero flow (the scale of the task).
    pub zero_errors: Option<FlowErrors>,
    /// The largest ground-truth speed (colour scale shared by all flow images), else the
    /// primary estimate's.
    pub max_speed: f64,
    pub runs: Vec<FlowRunView>,
    pub probe: Option<FlowProbe>,
    /// Per level: size and label count, for the status line.
    pub level_sizes: Vec<(usize, usize)>,
    pub labels_per_axis: usize,
    pub warnings: Vec<String>,
}

/// A running flow problem.
pub struct FlowScenario {
    config: FlowConfig,
    /// Where the frames came from ([`FlowData::source`]).
    source: String,
    frame1: Arc<GrayImage>,
    frame2: Arc<GrayImage>,
    ground_truth: Option<Arc<FlowField>>,
    zero_errors: Option<FlowErrors>,
    pyramid: Pyramid,
    runs: Vec<FlowRun>,
    log: RunLog,
    cancel: CancelFlag,
    /// Per-message residuals and oscillation of the primary run at its current level (the
    /// convergence debugger; a new level starts a new record, its grid is the level's).
    convergence: ConvergenceTracker,
    /// The level the tracker records.
    convergence_level: usize,
    /// The finished levels' maps, so the debugger's scrubber spans the whole run.
    level_maps: PyramidMaps,
}

impl FlowScenario {
    pub fn new(config: FlowConfig, cancel: &CancelFlag) -> Result<Self> {
        let start = Instant::now();
        config.check()?;
        let data = FlowData::load(&config)?;
        Self::from_data(config, data, cancel, start)
    }

    /// The scenario on frames already in memory (tests, the window's drag and drop).
    pub fn from_data(
        mut config: FlowConfig,
        data: FlowData,
        cancel: &CancelFlag,
        start: Instant,
    ) -> Result<Self> {
        // Echo the size that runs: loaded frames fix it, whatever the fields said.
        (config.width, config.height) = data.size();
        config.check()?;
        let (w, h) = data.size();
        let pyramid = Pyramid::new(&data, config.levels_for(w, h), config.presmooth)?;
        cancel.check()?;
        // The frames and the ground truth move into the scenario (one copy of each).
        let FlowData {
            frame1,
            frame2,
            ground_truth,
            source,
        } = data;
        let gt = ground_truth.map(Arc::new);
        let zero_errors = gt.as_ref().map(|g| {
            let z = vec![0.0; g.len()];
            flow_errors(&z, &z, g)
        });
        let levels = pyramid.levels.len();
        let pyramid_top = pyramid.size(levels - 1);
        let runs = config
            .algorithms()
            .into_iter()
            .map(|a| FlowRun::new(a, &config, &pyramid, gt.as_deref(), cancel))
            .collect::<Result<Vec<_>>>()?;
        Ok(FlowScenario {
            frame1: Arc::new(frame1),
            frame2: Arc::new(frame2),
            ground_truth: gt,
            zero_errors,
            source,
            pyramid,
            runs,
            log: RunLog::new(start.elapsed().as_secs_f64()),
            convergence: ConvergenceTracker::with_map_budget(
                0,
                Some(pyramid_top),
                RUNNING_LEVEL_BUDGET,
            ),
            convergence_level: levels - 1,
            level_maps: PyramidMaps::starting(LevelSpan {
                index: levels - 1,
                count: levels,
                first_iteration: 1,
                grid: pyramid_top,
            }),
            config,
            cancel: cancel.clone(),
        })
    }

    pub fn settings(&self) -> &FlowConfig {
        &self.config
    }

    pub fn runs(&self) -> &[FlowRun] {
        &self.runs
    }

    /// Where the frames came from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The frames' size.
    pub fn size(&self) -> (usize, usize) {
        (self.frame1.width, self.frame1.height)
    }

    pub fn pyramid(&self) -> &Pyramid {
        &self.pyramid
    }

    pub fn zero_errors(&self) -> Option<FlowErrors> {
        self.zero_errors
    }

    /// The largest motion the pyramid can follow, in full-resolution pixels (see
    /// [`FlowConfig::reach`]).
    pub fn reach(&self) -> f64 {
        self.config.reach(self.pyramid.levels.len())
    }

    fn max_speed(&self) -> f64 {
        match &self.ground_truth {
            Some(g) => g.max_speed(),
            None => self.runs[0].flow.max_speed(),
        }
    }

    fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        let levels = self.pyramid.levels.len();
        if levels > 1 {
            w.push(format!(
                "{levels}-level pyramid: beyond the paper (which solves one level)"
            ));
        }
        for run in &self.runs {
            let fb = run.total_fallbacks();
            if fb > 0 {
                w.push(format!(
                    "{}: {fb} sampling densities were zero on the whole box and fell back to beta",
                    run.algorithm.label()
                ));
            }
        }
        if let Some(g) = &self.ground_truth {
            let reach = self.reach();
            if g.max_speed() > reach {
                w.push(format!(
                    "the ground truth moves up to {:.1} px, beyond the reach of the window (about {reach:.1} px)",
                    g.max_speed()
                ));
            }
        }
        w
    }

    /// Switches every run to the config's schedule change for `iteration`, if there is one.
    fn apply_schedule_change(&mut self, iteration: usize) -> Result<()> {
        if let Some(change) = ScheduleChange::at(&self.config.schedule_changes, iteration) {
            for run in &mut self.runs {
                run.reschedule(change.schedule, change.damping)?;
            }
        }
        Ok(())
    }

    /// Per-iteration EPE and AAE of every run as CSV.
    pub fn errors_csv(&self) -> String {
        let mut out = String::from("iter");
        for r in &self.runs {
            let _ = write!(out, ",epe_{0},aae_{0}", r.algorithm.label());
        }
        out.push('\n');
        let rows = self.runs.iter().map(|r| r.epe.len()).max().unwrap_or(0);
        for t in 0..rows {
            let _ = write!(out, "{}", t + 1);
            for r in &self.runs {
                let e = r.epe.get(t).copied().unwrap_or(f64::NAN);
                let a = r.aae.get(t).copied().unwrap_or(f64::NAN);
                let _ = write!(out, ",{e},{a}");
            }
            out.push('\n');
        }
        out
    }
}

impl ScenarioDef for FlowScenario {
    const NAME: &'static str = "flow";
    const SUMMARY: &'static str = "optical flow on a 4-connected grid MRF: 2-D SOSMP against discrete BP, EPE and AAE against ground truth (Noorshams & Wainwright 2013, Sec. 5.2)";
    const ALGORITHMS: &'static [&'static str] = &["sosmp", "discrete"];
    type Config = FlowConfig;
    type View = Box<FlowView>;
    type Control = NoControl;
    type Task = NoTask;
    type RunArgs = cli::FlowArgs;

    fn build(config: FlowConfig, cancel: &CancelFlag) -> Result<Self> {
        FlowScenario::new(config, cancel)
    }

    fn max_iters(config: &FlowConfig) -> Option<usize> {
        Some(config.total_iters())
    }
}

impl Scenario for FlowScenario {
    fn config(&self) -> ScenarioConfig {
        ScenarioConfig::Flow(self.config.clone())
    }

    fn algorithm(&self) -> String {
        self.config.algorithm.label().to_string()
    }

    fn log(&self) -> &RunLog {
        &self.log
    }

    fn step(&mut self) -> Result<IterationRecord> {
        let mut metrics = BTreeMap::new();
        let mut primary = (0.0, 0.0);
        let gt = self.ground_truth.clone();
        let next = self.log.history().len() + 1;
        self.apply_schedule_change(next)?;
        for (i, run) in self.runs.iter_mut().enumerate() {
            let Some((seconds, residual)) =
                run.step(&self.config, &self.pyramid, gt.as_deref(), &self.cancel)?
            else {
                continue;
            };
            let suffix = if i == 0 {
                primary = (seconds, residual);
                metrics.insert("level".to_string(), run.level as f64);
                if let Some(changes) = run.engine.message_changes() {
                    if run.level != self.convergence_level {
                        let size = self.pyramid.size(run.level);
                        self.level_maps.finish_level(self.convergence.maps());
                        self.level_maps.start_level(LevelSpan {
                            index: run.level,
                            count: self.pyramid.levels.len(),
                            first_iteration: next,
                            grid: size,
                        });
                        self.convergence = ConvergenceTracker::with_map_budget(
                            0,
                            Some(size),
                            RUNNING_LEVEL_BUDGET,
                        );
                        self.convergence_level = run.level;
                    }
                    let stats = self.convergence.observe(next, &changes);
                    for (key, value) in stats.metrics() {
                        metrics.insert(key.to_string(), value);
                    }
                }
                String::new()
            } else {
                metrics.insert(format!("seconds_{}", run.algorithm.label()), seconds);
                metrics.insert(format!("residual_{}", run.algorithm.label()), residual);
                format!("_{}", run.algorithm.label())
            };
            if let Some(e) = run.errors {
                metrics.insert(format!("epe{suffix}"), e.epe);
                metrics.insert(format!("aae{suffix}"), e.aae);
            }
            if run.flow_change.is_finite() {
                metrics.insert(format!("flow_change{suffix}"), run.flow_change);
            }
        }
        let record = IterationRecord {
            iter: self.log.history().len() + 1,
            seconds: primary.0,
            residual: primary.1,
            metrics,
        };
        Ok(self.log.push(record))
    }

    fn finished(&self) -> bool {
        self.runs.iter().all(FlowRun::finished)
    }

    fn convergence(&self) -> Option<ConvergenceView> {
        let run = &self.runs[0];
        if run.algorithm == FlowAlgorithm::Sosmp {
            return None;
        }
        let (schedule, damping) = run.schedule;
        // A what-if stays on its level: the level's budget is its length.
        let mut view = self.convergence.view(
            schedule.label(),
            damping,
            self.config.stop_change,
            self.config.iters,
        );
        self.level_maps.compose(&mut view, self.size());
        Some(view)
    }

    /// Switches discrete BP's schedule and damping from the next iteration on (recorded in
    /// `schedule_changes`, so the echoed config replays it); refused, with the reason, when a
    /// SOSMP run is on.
    /// Discrete BP from the current level's messages, within the level (`what_if.rs`).
    fn what_if(
        &self,
        request: crate::scenarios::what_if::WhatIfRequest,
        cancel: &CancelFlag,
    ) -> Result<crate::scenarios::what_if::WhatIfRun> {
        let run = &self.runs[0];
        what_if::flow_what_if(
            &run.engine,
            request,
            run.iteration - run.level_iteration,
            self.config.iters,
            cancel,
        )
    }

    fn set_schedule(&mut self, schedule: Schedule, damping: f64) -> Result<()> {
        crate::error::check_range("damping", damping, 0.0, 0.99)?;
        if self
            .runs
            .iter()
            .any(|r| r.algorithm == FlowAlgorithm::Sosmp)
        {
            return refuse_sosmp_switch(schedule, damping);
        }
        let from_iteration = ScheduleChange::record_next(
            &mut self.config.schedule_changes,
            self.log.history().len(),
            schedule,
            damping,
        );
        // Applied now (a refusal shows at once) and again, identically, before the iteration,
        // as a replay of the config does.
        self.apply_schedule_change(from_iteration)
    }

    fn view(&self, probe: Option<Probe>) -> ScenarioView {
        let (w, h) = self.size();
        let probe = match probe {
            Some(Probe::Node(node)) if node < w * h => {
                let (x, y) = (node % w, node / w);
                Some(FlowProbe {
                    x,
                    y,
                    ground_truth: self
                        .ground_truth
                        .as_ref()
                        .filter(|g| g.is_known(node))
                        .map(|g| [g.u[node], g.v[node]]),
                    beliefs: self
                        .runs
                        .iter()
                        .map(|r| r.probe(&self.pyramid, x, y))
                        .collect(),
                })
            }
            _ => None,
        };
        ScenarioView::Flow(Box::new(FlowView {
            config: self.config.clone(),
            width: w,
            height: h,
            source: self.source.clone(),
            frame1: self.frame1.clone(),
            frame2: self.frame2.clone(),
            ground_truth: self.ground_truth.clone(),
            zero_errors: self.zero_errors,
            max_speed: self.max_speed(),
            runs: self
                .runs
                .iter()
                .map(|r| FlowRunView {
                    algorithm: r.algorithm,
                    flow: r.flow.clone(),
                    errors: r.errors,
                    epe: Arc::new(r.epe.clone()),
                    aae: Arc::new(r.aae.clone()),
                    snapshots: r.snapshots.clone(),
                    level: r.level,
                    iteration: r.iteration,
                    level_iteration: r.level_iteration,
                    levels: r.levels.clone(),
                })
                .collect(),
            probe,
            level_sizes: (0..self.pyramid.levels.len())
                .map(|l| self.pyramid.size(l))
                .collect(),
            labels_per_axis: self.runs[0].mrf.labels.per_axis(),
            warnings: self.warnings(),
        }))
    }

    fn final_metrics(&self) -> BTreeMap<String, f64> {
        let mut m = BTreeMap::new();
        for (i, run) in self.runs.iter().enumerate() {
            let suffix = if i == 0 {
                String::new()
            } else {
                format!("_{}", run.algorithm.label())
            };
            if let Some(e) = run.errors {
                m.insert(format!("epe{suffix}"), e.epe);
                m.insert(format!("aae{suffix}"), e.aae);
            }
            let seconds: f64 = run.levels.iter().map(|l| l.run_seconds).sum();
            m.insert(format!("run_seconds{suffix}"), seconds);
        }
        if let Some(z) = self.zero_errors {
            m.insert("epe_zero_flow".into(), z.epe);
            m.insert("aae_zero_flow".into(), z.aae);
        }
        m
    }

    fn extra_results(&self) -> Map<String, Value> {
        report_fields(&report::FlowReport::of(self))
    }

    fn write_outputs(&self, dir: &Path) -> Result<()> {
        let run = &self.runs[0];
        let f = &run.flow;
        let max = self.max_speed();
        flo::write_flo(&dir.join("flow.flo"), f)?;
        let coding = FlowColoring::Middlebury;
        io::save_rgba_png(
            &dir.join("flow.png"),
            &flow_rgba(f.width, f.height, &f.u, &f.v, coding, Some(max)),
        )?;
        io::save_rgba_png(&dir.join("legend.png"), &legend_rgba(151, coding))?;
        if self.config.frame1.is_none() {
            // The built-in pair in Middlebury's layout, so other methods can run on it (the
            // layered pair is whole gray levels: the files are the pair that ran).
            let (a, b) = (&self.frame1, &self.frame2);
            io::save_gray_png(&dir.join("frame10.png"), a.width, a.height, &a.pixels)?;
            io::save_gray_png(&dir.join("frame11.png"), b.width, b.height, &b.pixels)?;
            if let Some(g) = &self.ground_truth {
                flo::write_flo(&dir.join("flow10.flo"), g)?;
            }
        }
        if let Some(g) = &self.ground_truth {
            io::save_rgba_png(
                &dir.join("ground_truth.png"),
                &flow_rgba(g.width, g.height, &g.u, &g.v, coding, Some(max)),
            )?;
            let epe = crate::viz::flow_color::endpoint_errors(&f.u, &f.v, &g.u, &g.v);
            io::save_rgba_png(
                &dir.join("epe.png"),
                &crate::viz::flow_color::error_map_rgba(f.width, f.height, &epe, 2.0),
            )?;
        }
        for other in self.runs.iter().skip(1) {
            let o = &other.flow;
            let label = other.algorithm.label();
            flo::write_flo(&dir.join(format!("flow_{label}.flo")), o)?;
            io::save_rgba_png(
                &dir.join(format!("flow_{label}.png")),
                &flow_rgba(o.width, o.height, &o.u, &o.v, coding, Some(max)),
            )?;
        }
        io::write_atomic(
            &dir.join("curves.csv"),
            io::results::curves_csv(self.log.history()).as_bytes(),
        )?;
        io::write_atomic(&dir.join("errors.csv"), self.errors_csv().as_bytes())
    }
}
