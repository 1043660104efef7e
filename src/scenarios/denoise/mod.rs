//! Scenario `denoise`: image denoising on a 4-connected grid MRF, as in Song et al., "Kernel
//! Belief Propagation" (AISTATS 2011, Sec. 7). The clean image is the synthetic sunset (or an
//! image the user loads), corrupted by Gaussian noise; the algorithm estimates each pixel's gray
//! level. Kernel BP learns the edge model and the likelihood from a training pair (a clean
//! training image with noise drawn from a different seed; see `data.rs` for which image: never
//! the test image unless the `oracle` option asks for it). The discrete BP baseline uses the C
//! true gray levels as states, the true Gaussian likelihood and pseudo-moment potentials from
//! the clean training image. Compare mode runs a second algorithm on the same
//! noisy image.
//!
//! Each iteration costs the algorithms' iterations plus O(pixels · candidates) for the
//! estimates and the RMSE.

pub mod autotune;
pub mod baselines;
pub mod cli;
pub mod config;
pub mod data;
pub mod dead_leaves;
pub mod noise_estimate;
pub mod potentials;
pub mod report;
pub mod schedule_choice;
pub mod sunset;
pub mod sure_probe;
pub mod sure_stop;
pub mod sure_window;
pub mod sweep;
pub mod sweep_cli;
pub mod tune_cli;
pub mod view;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value};

use super::what_if::{Reschedulable, WhatIfRequest, WhatIfRun, run_what_if};
use super::{
    CancelFlag, IterationRecord, NoControl, Probe, RunLog, Scenario, ScenarioConfig, ScenarioDef,
    ScenarioView, Verb, report_fields,
};
use crate::error::Result;
use crate::inference::Schedule;
use crate::inference::discrete::DiscreteBp;
use crate::inference::kbp::engine::GridShape;
use crate::inference::kbp::{KbpEngine, KbpModel, KbpTraining};
use crate::inference::schedule::ScheduleChange;
use crate::inference::{Damping, Inference, StepReport};
use crate::io::{self, results::curves_csv};
use crate::run::residuals::{ConvergenceTracker, ConvergenceView, OwnedChanges};
use crate::viz;
pub use sure_probe::{SureProbe, WindowRun, attach_sure_probe};
use sure_stop::{SureRule, SureTracker, SureVerdict};
use sure_window::SureWindow;

pub use autotune::{AutotuneResult, AutotuneSpec, AutotuneTask, autotune};
pub use config::{
    AlgorithmChoice, BuiltinTraining, CROSS_IMAGE_TEMPLATE_SHIFTS, Candidates, DenoiseAlgorithm,
    DenoiseConfig, PARAMS, TRAINING_SEED_OFFSET, VALIDATION_SEED_OFFSET,
};
pub use data::{DenoiseData, KbpTemplates};
pub use view::{CompareView, DenoiseView, KbpInfo, KbpProbe, KeptIterate, PixelProbe};

/// An algorithm set up on the problem.
pub enum Engine {
    Discrete(Box<DiscreteBp>),
    Kbp(Box<KbpEngine>),
}

impl Engine {
    /// The point estimates, stopped by the interrupt flag (a photograph's take seconds).
    fn interruptible_estimates(&self, kind: crate::inference::EstimateKind) -> Result<Vec<f64>> {
        match self {
            Engine::Discrete(e) => Ok(e.estimates(kind).values),
            Engine::Kbp(e) => e.interruptible_estimates(kind),
        }
    }

    fn inference(&self) -> &dyn Inference {
        match self {
            Engine::Discrete(e) => e.as_ref(),
            Engine::Kbp(e) => e.as_ref(),
        }
    }

    fn inference_mut(&mut self) -> &mut dyn Inference {
        match self {
            Engine::Discrete(e) => e.as_mut(),
            Engine::Kbp(e) => e.as_mut(),
        }
    }

    /// A copy of every message (for the SURE guard's return to its best state).
    fn save_messages_into(&self, saved: &mut SavedMessages) {
        match (self, saved) {
            (Engine::Discrete(e), SavedMessages::Discrete(v)) => {
                v.clear();
                v.extend_from_slice(e.messages());
            }
            (Engine::Kbp(e), SavedMessages::Kbp(v)) => {
                v.clear();
                v.extend_from_slice(e.message_coefficients());
            }
            (engine, saved) => {
                *saved = match engine {
                    Engine::Discrete(e) => SavedMessages::Discrete(e.messages().to_vec()),
                    Engine::Kbp(e) => SavedMessages::Kbp(e.message_coefficients().to_vec()),
                }
            }
        }
    }

    fn restore_messages(&mut self, saved: &SavedMessages) -> Result<()> {
        match (self, saved) {
            (Engine::Discrete(e), SavedMessages::Discrete(v)) => e.restore_messages(v),
            (Engine::Kbp(e), SavedMessages::Kbp(v)) => e.restore_messages(v),
            _ => Err(crate::error::Error::param(
                "saved messages",
                "saved from another algorithm",
            )),
        }
    }

    /// The messages' changes over the last iteration, at most `max` of them (a sample on a
    /// large image).
    fn changes(&self, max: usize) -> Option<OwnedChanges> {
        match self {
            Engine::Discrete(e) => e.message_changes().map(|c| OwnedChanges {
                change: c.change.to_vec(),
                signed: c.signed.to_vec(),
                target: c.target.to_vec(),
            }),
            Engine::Kbp(e) => e.changes_sample(max),
        }
    }

    fn set_step_scale(&mut self, scale: f64) {
        match self {
            Engine::Discrete(e) => e.set_step_scale(scale),
            Engine::Kbp(e) => e.set_step_scale(scale),
        }
    }

    fn reschedulable(&self) -> &dyn Reschedulable {
        match self {
            Engine::Discrete(e) => e.as_ref(),
            Engine::Kbp(e) => e.as_ref(),
        }
    }

    fn reschedulable_mut(&mut self) -> &mut dyn Reschedulable {
        match self {
            Engine::Discrete(e) => e.as_mut(),
            Engine::Kbp(e) => e.as_mut(),
        }
    }
}

/// A copy of an engine's messages, in its own store's precision.
#[derive(Debug, Clone, Default)]
pub enum SavedMessages {
    #[default]
    Empty,
    Discrete(Vec<f64>),
    Kbp(Vec<f32>),
}

/// Messages the convergence debugger follows at most (a strided sample on a larger image).
const TRACKED_MESSAGES: usize = 1 << 21;

/// One algorithm running on the noisy image, with its current estimate.
pub struct AlgorithmRun {
    pub choice: AlgorithmChoice,
    pub engine: Engine,
    pub estimate: Arc<Vec<f64>>,
    pub setup_seconds: f64,
    /// Stopped (by a stopping rule, or settled below the tolerance): no further steps, the
    /// estimate stays.
    pub stopped: bool,
    /// The residual of its last step (repeated while stopped).
    pub last_residual: f64,
    /// With SURE stopping: the same algorithm on `y + ε b` and the lowest SURE so far.
    pub sure: Option<SureProbe>,
    /// The iteration whose estimate a stopping rule kept (None: still running, or stopped by
    /// the iteration limit or the tolerance).
    pub stopped_at: Option<usize>,
}

/// What one iteration of one algorithm did.
struct Advance {
    report: StepReport,
    sure_rmse: Option<f64>,
    sure_z: Option<f64>,
    step_scale: Option<f64>,
    /// Whether the image's messages moved (the change record is this iteration's).
    moved: bool,
}

impl AlgorithmRun {
    /// One iteration: a step on the image, guarded by SURE when it has probes. Without a SURE
    /// window the image's run and its probes step, SURE judges the step, and the guard keeps it
    /// or returns every copy to the best messages. With a window, the window and its probes
    /// step first; the image takes the step (with the same step size) only when SURE keeps it.
    fn advance(
        &mut self,
        iteration: usize,
        noisy: &[f64],
        kind: crate::inference::EstimateKind,
        sigma: f64,
    ) -> Result<Advance> {
        let mut out = Advance {
            report: StepReport {
                iteration,
                seconds: 0.0,
                residual: self.last_residual,
                updates: 0,
            },
            sure_rmse: None,
            sure_z: None,
            step_scale: None,
            moved: false,
        };
        if self.stopped {
            return Ok(out);
        }
        let Some(probe) = &mut self.sure else {
            out.report = self.engine.inference_mut().step()?;
            self.estimate = Arc::new(self.engine.interruptible_estimates(kind)?);
            out.moved = true;
            self.last_residual = out.report.residual;
            out.report.iteration = iteration;
            return Ok(out);
        };
        let scale = probe.tracker.step_scale;
        // Out of the probe while the probes step; put back below.
        let mut window = probe.window.take();
        let (judged, observed, report) = match &mut window {
            None => {
                let report = self.engine.inference_mut().step()?;
                self.estimate = Arc::new(self.engine.interruptible_estimates(kind)?);
                out.moved = true;
                (Arc::clone(&self.estimate), noisy, report)
            }
            Some(window) => {
                let report = window.engine.inference_mut().step()?;
                let estimate = Arc::new(window.engine.inference().estimates(kind).values);
                (estimate, &window.noisy[..], report)
            }
        };
        let probe_estimates = probe.step(kind)?;
        let t = &mut probe.tracker;
        let terms = sure_stop::sure_terms(
            &judged,
            &probe_estimates,
            observed,
            &t.directions,
            t.epsilon,
            sigma,
        );
        let verdict = t.observe(report.iteration, terms, &judged);
        out.sure_rmse = Some(t.last_mse.max(0.0).sqrt());
        out.sure_z = t.last_change.map(|c| c.z());
        if t.rule() == SureRule::Guard {
            out.step_scale = Some(t.step_scale);
        }
        out.report = report;
        match &mut window {
            None => {
                if verdict == SureVerdict::Stop || t.holds_best() {
                    self.estimate = Arc::clone(&t.best_estimate);
                }
                probe.follow(verdict, &mut self.engine)?;
            }
            Some(window) => {
                let kept = matches!(verdict, SureVerdict::Improved | SureVerdict::Continue);
                if kept {
                    // The image takes the step the window kept, as long as the window's.
                    self.engine.set_step_scale(scale);
                    out.report = self.engine.inference_mut().step()?;
                    self.estimate = Arc::new(self.engine.interruptible_estimates(kind)?);
                    out.moved = true;
                }
                probe.follow(verdict, &mut window.engine)?;
            }
        }
        probe.window = window;
        if verdict == SureVerdict::Stop {
            self.stopped = true;
            self.stopped_at = Some(probe.tracker.best_iteration);
        }
        self.last_residual = out.report.residual;
        // The scenario's count: the window's engine and the image's count their own steps.
        out.report.iteration = iteration;
        Ok(out)
    }

    /// Every engine of this run (the image's, SURE's probes and window) checks `flag` per
    /// chunk of work.
    fn set_interrupt(&mut self, flag: &CancelFlag) {
        self.engine.inference_mut().set_interrupt(flag.clone());
        if let Some(probe) = &mut self.sure {
            for engine in &mut probe.engines {
                engine.inference_mut().set_interrupt(flag.clone());
            }
            if let Some(window) = &mut probe.window {
                window.engine.inference_mut().set_interrupt(flag.clone());
            }
        }
    }

    /// Once SURE's guard has settled this run: "settled at iteration k (…); lowest SURE at
    /// iteration b".
    pub fn settled_note(&self) -> Option<String> {
        let t = &self.sure.as_ref()?.tracker;
        let reason = t.stop_reason.filter(|r| r.settled())?;
        Some(format!(
            "{} settled at iteration {}: {}; lowest SURE at iteration {}",
            self.choice.label(),
            t.stopped_iteration?,
            reason.describe().trim_start_matches("settled: "),
            t.best_iteration
        ))
    }

    /// The iterate a stopping rule kept, once one stopped the run.
    pub fn kept(&self) -> Option<KeptIterate> {
        // Once the guard has taken a step back, the estimate shown is that of lowest SURE.
        let guarded = self
            .sure
            .as_ref()
            .and_then(|p| p.tracker.holds_best().then_some(p.tracker.best_iteration));
        self.stopped_at.or(guarded).map(|iteration| KeptIterate {
            iteration,
            by_sure: self.sure.is_some(),
            guarded: guarded.is_some(),
        })
    }

    /// The algorithm behind the common trait.
    pub fn engine_mut(&mut self) -> &mut dyn Inference {
        self.engine.inference_mut()
    }
}

/// Sets `choice` up on `data`. Kernel BP learns from the templates of the training pair.
pub fn build_run(
    choice: AlgorithmChoice,
    data: &DenoiseData,
    config: &DenoiseConfig,
    cancel: &CancelFlag,
) -> Result<AlgorithmRun> {
    let start = Instant::now();
    let rho = config.resolved_edge_appearance(data.width, data.height);
    let engine = match choice.algorithm {
        DenoiseAlgorithm::Discrete => Engine::Discrete(Box::new(
            DiscreteBp::new(
                data.discrete_mrf(config.noise)?,
                config.schedule_for(DenoiseAlgorithm::Discrete),
                Damping(config.damping),
            )?
            .with_edge_appearance(rho)?,
        )),
        DenoiseAlgorithm::Kbp => {
            let shape = GridShape {
                width: data.width,
                height: data.height,
            };
            let templates = data.kbp_templates(config);
            let training = KbpTraining {
                sender: &templates.sender,
                receiver: &templates.receiver,
                hidden: &templates.hidden,
                observed: &templates.observed,
                observation_noise: templates.observation_noise,
            };
            // With evidence at every pixel a message multiplies degree-many factors.
            let factor_counts = shape.degrees();
            let settings = crate::inference::kbp::KbpSettings {
                update: choice.update,
                ..config.kbp
            };
            let mut model = KbpModel::learn(&training, &settings, &factor_counts)?;
            cancel.check()?;
            let clock = Instant::now();
            let evidence = model.evidence_table(&data.noisy)?;
            model.diagnostics.setup_timings.insert(
                "evidence coefficients".into(),
                clock.elapsed().as_secs_f64(),
            );
            let candidates = match config.candidates {
                Candidates::Training => model.training_values().to_vec(),
                Candidates::All => (0..=255).map(f64::from).collect(),
            };
            Engine::Kbp(Box::new(
                KbpEngine::new_interruptible(
                    Arc::new(model),
                    shape,
                    Some(evidence),
                    candidates,
                    config.schedule_for(DenoiseAlgorithm::Kbp),
                    Damping(config.damping),
                    Some(cancel.clone()),
                )?
                .with_edge_appearance(
                    config.resolved_kbp_edge_appearance(data.width, data.height),
                )?,
            ))
        }
    };
    let estimate = match &engine {
        Engine::Kbp(e) => e.set_up_estimates(config.estimate),
        Engine::Discrete(e) => Ok(e.estimates(config.estimate).values),
    };
    let estimate = match estimate {
        Ok(values) => Arc::new(values),
        Err(e) => {
            crate::run::drop_in_background(engine);
            return Err(e);
        }
    };
    Ok(AlgorithmRun {
        choice,
        engine,
        estimate,
        setup_seconds: start.elapsed().as_secs_f64(),
        stopped: false,
        last_residual: f64::INFINITY,
        sure: None,
        stopped_at: None,
    })
}

/// A running denoise problem.
pub struct Denoise {
    config: DenoiseConfig,
    width: usize,
    height: usize,
    levels: Arc<Vec<f64>>,
    /// None for a noisy image loaded as it is: then no RMSE exists and none is reported.
    clean: Option<Arc<Vec<f64>>>,
    noisy: Arc<Vec<f64>>,
    /// Reference baselines (not message passing): (label, estimate), RMSE computed on demand;
    /// computed beside the first iterations.
    baselines: baselines::Baselines,
    /// What the potentials were learned from, and its size.
    training: String,
    training_size: [usize; 2],
    /// The primary algorithm first, then the compared one.
    runs: Vec<AlgorithmRun>,
    log: RunLog,
    /// Per-message residuals and oscillation of the primary run (the convergence debugger).
    convergence: ConvergenceTracker,
}

impl Denoise {
    pub fn new(mut config: DenoiseConfig, cancel: &CancelFlag) -> Result<Self> {
        let start = Instant::now();
        let data = DenoiseData::generate(&config)?;
        data.resolve_sigma(&mut config)?;
        // Echo the size that runs: a loaded image fixes it, whatever the fields said.
        (config.width, config.height) = (data.width, data.height);
        cancel.check()?;
        let mut runs = vec![build_run(config.primary(), &data, &config, cancel)?];
        let mut rest = || -> Result<()> {
            if let Some(choice) = config.compare {
                runs.push(build_run(choice, &data, &config, cancel)?);
            }
            if config.sure_stop {
                for run in &mut runs {
                    cancel.check()?;
                    attach_sure_probe(run, &data, &config, cancel)?;
                }
            }
            Ok(())
        };
        if let Err(e) = rest() {
            crate::run::drop_in_background(runs);
            return Err(e);
        }
        // The same flag stops a long iteration (a photograph's sweep) within one chunk.
        for run in &mut runs {
            run.set_interrupt(cancel);
        }
        let (w, h) = (data.width, data.height);
        let noisy = Arc::new(data.noisy);
        let baselines = baselines::Baselines::start(Arc::clone(&noisy), w, h, config.noise);
        Ok(Denoise {
            baselines,
            training: data.train.source.clone(),
            training_size: [data.train.width, data.train.height],
            width: data.width,
            height: data.height,
            levels: Arc::new(data.levels),
            clean: data.clean.map(Arc::new),
            noisy,
            runs,
            log: RunLog::new(start.elapsed().as_secs_f64()),
            convergence: ConvergenceTracker::new(0, Some((w, h))),
            config,
        })
    }

    pub fn size(&self) -> (usize, usize) {
        (self.width, self.height)
    }

    /// RMSE of the primary algorithm's current estimate (NaN without a clean image; see
    /// [`Self::rmse_of`]).
    pub fn rmse(&self) -> f64 {
        self.rmse_of(&self.runs[0].estimate).unwrap_or(f64::NAN)
    }

    /// RMSE of the noisy image (NaN without a clean image).
    pub fn noisy_rmse(&self) -> f64 {
        self.rmse_of(&self.noisy).unwrap_or(f64::NAN)
    }

    /// RMSE of `estimate` against the clean image; None for a noisy image with no clean one.
    pub fn rmse_of(&self, estimate: &[f64]) -> Option<f64> {
        self.clean.as_ref().map(|c| sunset::rmse(estimate, c))
    }

    /// The config that ran (the estimated sigma and its rule included).
    pub fn config_ran(&self) -> &DenoiseConfig {
        &self.config
    }

    pub fn runs(&self) -> &[AlgorithmRun] {
        &self.runs
    }

    pub fn estimate(&self) -> &[f64] {
        &self.runs[0].estimate
    }

    fn kbp_info(&self) -> Option<KbpInfo> {
        self.runs.iter().find_map(|r| match &r.engine {
            Engine::Kbp(e) => {
                let m = e.model();
                Some(KbpInfo {
                    update: m.update.label().to_string(),
                    sigma_hidden: m.sigma_hidden,
                    sigma_observed: m.sigma_observed,
                    lambda: m.lambda,
                    diagnostics: m.diagnostics.clone(),
                    setup_seconds: r.setup_seconds,
                })
            }
            Engine::Discrete(_) => None,
        })
    }

    fn kbp_probe(&self, engine: &KbpEngine, node: usize) -> Option<KbpProbe> {
        let model = engine.model();
        let xs: Vec<f64> = (0..=255).map(f64::from).collect();
        let prior = model.prior(&xs);
        let evidence = match engine.evidence(node) {
            Some(c) => model.message_values(&c, &xs).ok()?,
            None => vec![1.0; xs.len()],
        };
        let mut belief: Vec<f64> = prior.iter().zip(&evidence).map(|(p, e)| p * e).collect();
        let mut incoming = Vec::new();
        for (from, c) in engine.incoming(node) {
            let v = model.message_values(&c, &xs).ok()?;
            belief.iter_mut().zip(&v).for_each(|(b, m)| *b *= m);
            incoming.push(((from % self.width, from / self.width), scaled(v)));
        }
        Some(KbpProbe {
            belief: scaled(belief),
            prior: scaled(prior),
            evidence: scaled(evidence),
            incoming,
            xs,
        })
    }

    fn error_image(&self) -> Option<Vec<f64>> {
        let clean = self.clean.as_ref()?;
        Some(
            self.estimate()
                .iter()
                .zip(clean.iter())
                .map(|(e, c)| (e - c).abs())
                .collect(),
        )
    }
}

/// Scales a curve so its largest |value| is 1 (unchanged if it is all zero).
fn scaled(mut v: Vec<f64>) -> Vec<f64> {
    let m = v.iter().fold(0.0f64, |a, x| a.max(x.abs()));
    if m > 0.0 && m.is_finite() {
        v.iter_mut().for_each(|x| *x /= m);
    }
    v
}

impl Denoise {
    /// The schedule the primary algorithm started with (the config's, `auto` resolved).
    pub fn primary_schedule(&self) -> Schedule {
        self.config.schedule_for(self.runs[0].choice.algorithm)
    }

    /// The schedule and damping of the next iteration (after any switch made so far).
    pub fn current_schedule(&self) -> (Schedule, f64) {
        let next = self.log.history().len() + 1;
        self.config
            .schedule_changes
            .iter()
            .rev()
            .find(|c| c.from_iteration <= next)
            .map_or((self.primary_schedule(), self.config.damping), |c| {
                (c.schedule, c.damping)
            })
    }

    /// Switches every engine to the config's change for `iteration`, if there is one.
    fn apply_schedule_change(&mut self, iteration: usize) -> Result<()> {
        if let Some(change) = ScheduleChange::at(&self.config.schedule_changes, iteration) {
            for run in &mut self.runs {
                run.engine
                    .reschedulable_mut()
                    .reschedule(change.schedule, Damping(change.damping))?;
                // The SURE probes are the same algorithm on y + εb: they must switch with it.
                for engine in run.sure.iter_mut().flat_map(|p| p.engines.iter_mut()) {
                    engine
                        .reschedulable_mut()
                        .reschedule(change.schedule, Damping(change.damping))?;
                }
            }
        }
        Ok(())
    }
}

impl Scenario for Denoise {
    fn config(&self) -> ScenarioConfig {
        ScenarioConfig::Denoise(self.config.clone())
    }

    fn convergence(&self) -> Option<ConvergenceView> {
        let (schedule, damping) = self.current_schedule();
        let mut view = self.convergence.view(
            schedule.label(),
            damping,
            self.config.tolerance,
            self.config.max_iters,
        );
        let tracker = self.runs[0].sure.as_ref().map(|p| &p.tracker);
        view.step_note = tracker.and_then(|t| t.step_note());
        view.ended_by = tracker.and_then(|t| {
            let reason = t.stop_reason.filter(|r| r.settled())?;
            Some(format!(
                "{} (iteration {})",
                reason.describe(),
                t.stopped_iteration?
            ))
        });
        Some(view)
    }

    fn set_schedule(&mut self, schedule: Schedule, damping: f64) -> Result<()> {
        Damping(damping).check()?;
        let from_iteration = ScheduleChange::record_next(
            &mut self.config.schedule_changes,
            self.log.history().len(),
            schedule,
            damping,
        );
        // Applied now (so a refusal is reported at once) and again, identically, before the
        // iteration, as a replay of the config does.
        self.apply_schedule_change(from_iteration)
    }

    fn what_if(&self, request: WhatIfRequest, cancel: &CancelFlag) -> Result<WhatIfRun> {
        run_what_if(self.runs[0].engine.reschedulable(), request, cancel)
    }

    fn algorithm(&self) -> String {
        self.config.algorithm.label().to_string()
    }

    fn log(&self) -> &RunLog {
        &self.log
    }

    fn step(&mut self) -> Result<IterationRecord> {
        self.apply_schedule_change(self.log.history().len() + 1)?;
        let mut metrics = BTreeMap::new();
        let mut primary = None;
        for (i, run) in self.runs.iter_mut().enumerate() {
            let advance = run.advance(
                self.log.history().len() + 1,
                &self.noisy,
                self.config.estimate,
                self.config.noise,
            )?;
            let report = advance.report;
            let (sure_rmse, sure_z, step_scale) =
                (advance.sure_rmse, advance.sure_z, advance.step_scale);
            let rmse = self.clean.as_ref().map(|c| sunset::rmse(&run.estimate, c));
            let to_noisy = sunset::rmse(&run.estimate, &self.noisy);
            if self.config.discrepancy_stop && !run.stopped && to_noisy >= self.config.noise {
                run.stopped = true;
                run.stopped_at = Some(report.iteration);
            }
            if let Some(value) = sure_rmse {
                let key = if i == 0 {
                    "sure_rmse".to_string()
                } else {
                    format!("sure_rmse_{}", run.choice.label())
                };
                metrics.insert(key, value);
            }
            if let Some(z) = sure_z.filter(|z| z.is_finite()) {
                let key = if i == 0 {
                    "sure_change_z".to_string()
                } else {
                    format!("sure_change_z_{}", run.choice.label())
                };
                metrics.insert(key, z);
            }
            if let Some(scale) = step_scale {
                let key = if i == 0 {
                    "step_scale".to_string()
                } else {
                    format!("step_scale_{}", run.choice.label())
                };
                metrics.insert(key, scale);
            }
            if i == 0 {
                if advance.moved
                    && !run.stopped
                    && let Some(changes) = run.engine.changes(TRACKED_MESSAGES)
                {
                    let stats = self
                        .convergence
                        .observe(report.iteration, &changes.as_changes());
                    for (key, value) in stats.metrics() {
                        metrics.insert(key.to_string(), value);
                    }
                }
                if let Some(rmse) = rmse {
                    metrics.insert("rmse".to_string(), rmse);
                }
                metrics.insert("rms_to_noisy".to_string(), to_noisy);
                primary = Some(report);
            } else {
                let label = run.choice.label();
                if let Some(rmse) = rmse {
                    metrics.insert(format!("rmse_{label}"), rmse);
                }
                metrics.insert(format!("seconds_{label}"), report.seconds);
                metrics.insert(format!("residual_{label}"), report.residual);
            }
            // A settled algorithm takes no more steps; the run goes on until every algorithm
            // beside it has settled too (or the iteration limit), so a comparison is complete.
            if run.last_residual < self.config.tolerance {
                run.stopped = true;
            }
        }
        let report = primary.expect("a primary run");
        let record = IterationRecord {
            iter: report.iteration,
            seconds: report.seconds,
            residual: report.residual,
            metrics,
        };
        Ok(self.log.push(record))
    }

    fn finished(&self) -> bool {
        self.runs.iter().all(|r| r.stopped)
            || self
                .log
                .last()
                .is_some_and(|r| r.iter >= self.config.max_iters)
    }

    fn view(&self, probe: Option<Probe>) -> ScenarioView {
        let probe = match probe {
            Some(Probe::Node(node)) if node < self.width * self.height => {
                let run = &self.runs[0];
                Some(PixelProbe {
                    x: node % self.width,
                    y: node / self.width,
                    clean: self.clean.as_ref().map_or(f64::NAN, |c| c[node]),
                    noisy: self.noisy[node],
                    estimate: run.estimate[node],
                    belief: run.engine.inference().belief(node),
                    kbp: match &run.engine {
                        Engine::Kbp(e) => self.kbp_probe(e, node),
                        Engine::Discrete(_) => None,
                    },
                })
            }
            _ => None,
        };
        let compare = self.runs.get(1).map(|r| CompareView {
            label: r.choice.label(),
            estimate: r.estimate.clone(),
            rmse: self.rmse_of(&r.estimate).unwrap_or(f64::NAN),
            kept: r.kept(),
        });
        ScenarioView::Denoise(DenoiseView {
            width: self.width,
            height: self.height,
            levels: self.levels.clone(),
            clean: self.clean.clone().unwrap_or_else(|| self.noisy.clone()),
            noisy: self.noisy.clone(),
            estimate: self.runs[0].estimate.clone(),
            noisy_rmse: self.noisy_rmse(),
            rmse: self.rmse(),
            no_clean: self.no_clean_note(),
            training: self.training.clone(),
            baselines: self
                .baselines
                .ready()
                .unwrap_or(&[])
                .iter()
                .map(|(l, e)| (l.clone(), self.rmse_of(e).unwrap_or(f64::NAN)))
                .collect(),
            label: self.runs[0].choice.label(),
            compare,
            kept: self.runs[0].kept(),
            settled: self.runs[0].settled_note(),
            kbp: self.kbp_info(),
            probe,
        })
    }

    fn ending(&self) -> Vec<String> {
        self.runs
            .iter()
            .filter_map(AlgorithmRun::settled_note)
            .collect()
    }

    fn final_metrics(&self) -> BTreeMap<String, f64> {
        let mut m = BTreeMap::new();
        // A noisy image with no clean version has no RMSE: the keys are absent, not NaN; what
        // there is instead is the sigma that ran, the iteration kept and SURE's estimate of it.
        if self.clean.is_none() {
            return self.no_clean_metrics();
        }
        m.insert("rmse".to_string(), self.rmse());
        m.insert("noisy_rmse".to_string(), self.noisy_rmse());
        for run in self.runs.iter().skip(1) {
            if let Some(r) = self.rmse_of(&run.estimate) {
                m.insert(format!("rmse_{}", run.choice.label()), r);
            }
        }
        for (label, est) in self.baselines.wait() {
            let kind = label.split('_').next().unwrap_or(label);
            if let Some(r) = self.rmse_of(est) {
                m.insert(format!("baseline_rmse_{kind}"), r);
            }
        }
        m
    }

    fn extra_results(&self) -> Map<String, Value> {
        report_fields(&self.report())
    }

    fn write_outputs(&self, dir: &Path) -> Result<()> {
        let (w, h) = (self.width, self.height);
        if let Some(clean) = &self.clean {
            io::save_gray_png(&dir.join("clean.png"), w, h, clean)?;
        }
        io::save_gray_png(&dir.join("noisy.png"), w, h, &self.noisy)?;
        io::save_gray_png(&dir.join("estimate.png"), w, h, self.estimate())?;
        if let Some(run) = self.runs.get(1) {
            let name = format!("estimate_{}.png", run.choice.label());
            io::save_gray_png(&dir.join(name), w, h, &run.estimate)?;
        }
        if let Some(error) = self.error_image() {
            let error = viz::heat_rgba(w, h, &error, 255.0);
            let error = viz::scale_bar::heat_map_with_scale(
                &error,
                255.0,
                "|estimate - clean| (gray levels)",
            )?;
            io::save_rgba_png(&dir.join("error.png"), &error)?;
        }
        io::write_atomic(
            &dir.join("curves.csv"),
            curves_csv(self.log.history()).as_bytes(),
        )
    }
}

impl ScenarioDef for Denoise {
    const NAME: &'static str = "denoise";
    const SUMMARY: &'static str =
        "image denoising on a 4-connected grid MRF (Song et al. 2011, Sec. 7 sunset)";
    const ALGORITHMS: &'static [&'static str] =
        &["kbp-constant", "kbp-linear", "kbp-full", "discrete"];
    type Config = DenoiseConfig;
    type View = DenoiseView;
    type Control = NoControl;
    type Task = AutotuneTask;
    type RunArgs = cli::DenoiseArgs;

    fn build(config: DenoiseConfig, cancel: &CancelFlag) -> Result<Self> {
        Denoise::new(config, cancel)
    }

    fn max_iters(config: &DenoiseConfig) -> Option<usize> {
        Some(config.max_iters)
    }

    fn sweep_figures(
        dir: &Path,
        table: &crate::scenarios::sweep::SweepTable,
    ) -> Result<Vec<std::path::PathBuf>> {
        sweep::figures(dir, table)
    }

    fn verbs() -> &'static [Verb] {
        &[
            Verb {
                group: "sweep",
                command: || {
                    Verb::command::<sweep_cli::DenoiseSweepArgs>(
                        "denoise",
                        "RMSE and seconds per iteration of denoising over C, algorithms, updates and epsilon.",
                    )
                },
                run: |m| sweep_cli::run(Verb::args(m)?, Verb::args(m)?),
                takes_sweep_flags: true,
            },
            Verb {
                group: "tune",
                command: || {
                    Verb::command_with_table::<tune_cli::DenoiseTuneArgs, DenoiseConfig>(
                        "denoise",
                        "Grid search of kernel-BP lambda x bandwidth multiplier on a held-out noisy copy of the training image.",
                    )
                },
                run: |m| tune_cli::run(Verb::args(m)?),
                takes_sweep_flags: false,
            },
        ]
    }
}

impl Denoise {
    /// For a noisy image with no clean version: what stands where the RMSE would, e.g.
    /// "noisy image (no clean version): RMSE not available; sigma estimated 23.4 (MAD)".
    pub fn no_clean_note(&self) -> Option<String> {
        if self.clean.is_some() {
            return None;
        }
        let sigma = match &self.config.sigma_rule {
            Some(_) => format!("sigma estimated {:.1} (MAD)", self.config.noise),
            None => format!("sigma given {}", self.config.noise),
        };
        Some(format!(
            "noisy image (no clean version): RMSE not available; {sigma}"
        ))
    }

    /// The final metrics of a run with no clean image: `sigma` (given or estimated), and per
    /// algorithm the iteration whose estimate is shown (`kept_iteration`), SURE's estimate of
    /// its RMSE (`sure_rmse`, with SURE stopping) and its RMS distance to the noisy image.
    fn no_clean_metrics(&self) -> BTreeMap<String, f64> {
        let mut m = BTreeMap::new();
        m.insert("sigma".to_string(), self.config.noise);
        let iterations = self.log.history().len();
        for (i, run) in self.runs.iter().enumerate() {
            let key = |name: &str| match i {
                0 => name.to_string(),
                _ => format!("{name}_{}", run.choice.label()),
            };
            // The guard's messages are those of lowest SURE, whatever stopped the run.
            let kept = run.stopped_at.unwrap_or_else(|| match &run.sure {
                Some(p) if p.tracker.rule() == SureRule::Guard => p.tracker.best_iteration,
                _ => iterations,
            });
            m.insert(key("kept_iteration"), kept as f64);
            if let Some(probe) = &run.sure {
                let t = &probe.tracker;
                let mse = if kept == t.best_iteration {
                    t.best_mse
                } else if kept == iterations {
                    t.last_mse
                } else {
                    f64::NAN
                };
                if mse.is_finite() {
                    m.insert(key("sure_rmse"), mse.max(0.0).sqrt());
                }
            }
            m.insert(
                key("rms_to_noisy"),
                sunset::rmse(&run.estimate, &self.noisy),
            );
        }
        m
    }

    /// The scenario's fields of results.json.
    fn report(&self) -> report::DenoiseReport {
        let runs: Vec<report::RunReport> = self
            .runs
            .iter()
            .map(|r| report::RunReport::of(r, self.config.schedule_for(r.choice.algorithm)))
            .collect();
        let first = runs.first().and_then(|r| r.kernel.as_ref());
        report::DenoiseReport {
            image_size: [self.width, self.height],
            training: self.training.clone(),
            training_size: self.training_size,
            baselines: self
                .baselines
                .wait()
                .iter()
                .filter_map(|(l, e)| Some((l.clone(), self.rmse_of(e)?)))
                .collect(),
            baseline_parameters: self
                .baselines
                .wait()
                .iter()
                .map(|(l, _)| l.clone())
                .collect(),
            no_clean: self.no_clean_note(),
            training_seed: self.config.seed.wrapping_add(TRAINING_SEED_OFFSET),
            update: self.runs[0].choice.label(),
            ranks: first.map(|k| k.ranks.clone()),
            bandwidths: first.map(|k| k.bandwidths.clone()),
            lambda: first.map(|k| k.lambda.clone()),
            runs,
        }
    }
}

/// The estimate kind's RMSE helper for callers that only have images.
pub fn rmse(a: &[f64], b: &[f64]) -> f64 {
    sunset::rmse(a, b)
}
