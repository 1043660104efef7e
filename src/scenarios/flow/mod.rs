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
//! (a Gaussian anti-aliasing filter of σ = 1 px, then 2 x 2 means: [`pyramid::halve`]); the
//! coarsest level is solved first over `[-d_c, d_c]²` (`d_c = 4` px of that level: it has no
//! level above to centre its window, so that window alone must hold the motion), and each finer level
//! searches a window around the 3 x 3 median of the flow of the level above (upsampled,
//! doubled, rounded to the lattice): its data term compares `I1(p)` with `I2` at
//! `p + c_p + x`, i.e. frame 2 warped by the coarse flow. Every level's flow is refined
//! variationally before it is handed on ([`crate::inference::flow_variational`], as DIS refines
//! at every scale), so a fine level only corrects its hand-off: the `fine_levels` (2) finest
//! levels that pass messages search `[-d_r, d_r]²` (`d_r = 1` px, 25 labels), the others
//! between them and the coarsest `[-d, d]²`. A level of more than `max_mp_pixels` (2^18) pixels passes no messages: it
//! starts from the upsampled flow of the level above and is only refined, in at most
//! `refine_only_warps` (4) warps (as DIS stops its patch search above the finest scale). That bounds time and memory on large frames: at
//! 1168 x 776 the finest level's message passing took 3/4 of the time and memory and its
//! refined result was worse (RubberWhale at 2x, EPE 0.171 against 0.156). The Middlebury
//! frames (584 x 388) pass messages at every level. The reach is the sum of the windows of the
//! levels that pass messages, in full-resolution pixels ([`FlowConfig::reach`]). By default
//! (`levels = 0`) the depth comes from the image size: halve until the short side is at most
//! 64 px ([`config::auto_levels`]; RubberWhale 584 x 388: 4 levels, coarsest 73 x 49).
//! `levels = 1` is the paper's single level (preset `paper`). The iteration count in the
//! history runs on across levels (a level that is only refined counts one iteration), and
//! every record's EPE and AAE are those of the current estimate brought to full resolution.
//!
//! **Defaults** (chosen on the built-in pair, Dimetrodon and RubberWhale together): `d = 2` px at
//! 1/2 px (81 labels; 25 at the fine levels of a pyramid, `d_r = 1`, and 289 at its coarsest,
//! `d_c = 4`), the pyramid depth from
//! the image size, `σ_u = 2` gray levels, `σ_uv = 0.5` px (Gaussian; preset `best` adds the robust floor `ρ`), no pre-smoothing, r = 9, k = 3, step
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
//! converge, so its levels end after 10 to 40 iterations instead of 40; SOSMP's estimate keeps
//! moving by its Monte Carlo noise (about 0.013 px per iteration at t = 40 on RubberWhale,
//! falling like `1/t`), so it runs at most `sosmp_iters` (8) a level. The refinement's warps
//! end once one moves the flow by less than `variational_stop_change` (0.01 px, mean). The
//! presets `paper` and `best` run every iteration and every warp (and `best` passes messages
//! at every level). The flow's change is recorded per iteration (`flow_change`) and per level
//! (`final_flow_change`).
//!
//! Cost per iteration: the engine's (O(pixels · 4 (n √r + k r)) for SOSMP with n labels, O(pixels
//! · 4 n · 2√n) for discrete BP) plus O(pixels · n) for the read-out and O(full pixels) for the
//! flow at full resolution and its metrics; the refinement O(pixels · warps · iterations · SOR
//! sweeps).

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
pub mod runner;
pub mod synthetic;
pub mod what_if;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value};

pub use self::config::{FlowAlgorithm, FlowConfig, PARAMS};
pub use self::data::FlowData;
pub use self::engine::FlowEngine;
use self::engine::refuse_sosmp_switch;
use self::metrics::{FlowErrors, flow_errors};
pub use self::pyramid::{Pyramid, StoredFlow, median3};
pub use self::runner::{FlowRun, FlowSnapshot, LevelInfo, RefinementInfo, SOSMP_MAX_STEP};
use super::{
    CancelFlag, IterationRecord, NoControl, NoTask, Probe, RunLog, Scenario, ScenarioConfig,
    ScenarioDef, ScenarioView, report_fields,
};
use crate::error::Result;
use crate::inference::schedule::ScheduleChange;
use crate::inference::{Inference, Schedule};
use crate::io::{self, FlowField, GrayImage, flo};
use crate::run::level_maps::{LevelSpan, PyramidMaps, RUNNING_LEVEL_BUDGET};
use crate::run::residuals::{ConvergenceTracker, ConvergenceView};
use crate::scenarios::ScenarioParams;
use crate::viz::flow_color::{FlowColoring, flow_rgba, legend_rgba};

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
