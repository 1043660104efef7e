//! Scenario `kjit`: kernel-based just-in-time learning of EP messages (Jitkrittum et al., UAI
//! 2015). The default run is Exp. 3 (main Figs. 5, 6): one true w, then 30
//! logistic-regression problems in sequence, each solved by quadrature-EP, sampling-EP and
//! KJIT-EP; one iteration is one problem. Cost per problem: see [`logistic`].
//!
//! One module per experiment: [`logistic`] (Exp. 3), [`uci`] (Exp. 5), [`batch`] (Exps. 1
//! and 2, the Supp C table), [`compound_gamma`] (Exp. 4), [`rff`] (Supp B.3 and B.6),
//! [`teaching`] (d = 2, one EP site update per step) and [`sites`] (EP's site schedules on the
//! convergence debugger); [`inspect`] re-derives one call for the inspector. The operators and
//! EP itself are in `inference::kjit`; the room is `app::scenarios::kjit` (`view.rs` for the
//! experiments' plots, `rff_lab.rs` for the random-feature lab).
//!
//! Live controls ([`KjitControl`]: a new τ, "reset operator") act from the next problem and are
//! recorded in the config (`tau_changes`, `operator_resets`), so the echoed config replays them.

pub mod batch;
pub mod cli;
pub mod compound_gamma;
pub mod config;
pub mod figures;
pub mod inspect;
pub mod logistic;
pub mod paper_oracle;
pub mod report;
pub mod rff;
pub mod sites;
pub mod teaching;
pub mod uci;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use nalgebra::DVector;
use serde_json::{Map, Value};

use super::{
    CancelFlag, IterationRecord, NoTask, Probe, RunLog, Scenario, ScenarioConfig, ScenarioControl,
    ScenarioDef, ScenarioParams, ScenarioView, report_fields,
};
use crate::error::Result;
use crate::inference::kjit::feature_maps::OperatorKind;
use crate::io::write_atomic;
use compound_gamma::GammaExperiment;
pub use config::{Experiment, KjitConfig, PARAMS, TauChange};
use logistic::{Operators, ProblemRun, run_problem, solve, stream_seed, true_weights};
use report::{
    CONVENTIONS, KernelReport, LastProblem, LogisticReport, Posterior, Posteriors, ProblemReport,
    Summary, Timings,
};
use strum::VariantArray;

/// What the window draws: per-problem errors and the recent uncertainty trace (Exps. 3, 5),
/// the Supp C table and the Exp. 2 curves (Exps. 1, 2); Exp. 4 and the random-feature lab
/// draw from the iteration metrics.
#[derive(Debug, Clone, Default)]
pub struct KjitView {
    pub experiment: Experiment,
    pub problems_done: usize,
    pub problems: usize,
    /// (error_kjit, error_quadrature, error_sampling or NaN) per problem.
    pub errors: Vec<[f64; 3]>,
    /// Problem names (the UCI sets; empty for synthetic problems).
    pub problem_names: Vec<String>,
    /// (log predictive variance of the z-direction, oracle called) per KJIT call.
    pub trace: Vec<(f64, bool)>,
    /// The incoming z-message of each call in `trace`: (mean, log precision).
    pub messages: Vec<(f64, f64)>,
    /// The last problem's posterior means of w (KJIT, quadrature) and the true w (Exp. 3).
    pub posterior_kjit: Vec<f64>,
    pub posterior_quadrature: Vec<f64>,
    pub w_true: Vec<f64>,
    /// The index of `trace[0]` among all calls, and where each problem's calls start.
    pub trace_offset: usize,
    pub problem_starts: Vec<usize>,
    pub tau: f64,
    /// log σ_y², the floor of every log predictive variance.
    pub log_sigma_y2: f64,
    /// KJIT's calls and z-direction oracle calls so far.
    pub calls: usize,
    pub oracle_calls: usize,
    /// How long a KJIT message and this run's oracle take (medians so far).
    pub timings: report::Timings,
    /// Exp. 1: the Supp C rows computed so far.
    pub table: Vec<batch::BatchRow>,
    /// The teaching mode's problem and posteriors after the last site update.
    pub teaching: Option<teaching::TeachingView>,
    /// The call chosen in the trace (Exps. 3, 5), seen again.
    pub inspected: Option<inspect::InspectedCall>,
    /// Exp. 1/2: tuples collected, and the test curves once KJIT is fitted.
    pub tuples: usize,
    pub curves: Option<batch::UncertaintyReport>,
    /// The random-feature lab: K and K̂, and the B.3 / B.6 results so far.
    pub rff: Option<rff::RffReport>,
    /// The EP-sites experiment's state (its messages are in the convergence view).
    pub sites: Option<sites::SitesView>,
}

/// Live changes of a kjit run.
#[derive(Debug, Clone, PartialEq)]
pub enum KjitControl {
    /// A new threshold τ for Exps. 3 and 5, from the next problem on (no relearning).
    SetTau(f64),
    /// Forget what KJIT learned, before the next problem (the room's "reset operator").
    ResetOperator,
}

impl super::Control for KjitControl {
    fn supersedes(&self, earlier: &KjitControl) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(earlier)
    }
}

/// The running experiment.
pub struct KjitScenario {
    config: KjitConfig,
    w_true: DVector<f64>,
    operators: Operators,
    problems: Vec<ProblemReport>,
    last: Option<ProblemRun>,
    sampling_seconds: f64,
    sampling_calls: usize,
    /// One call of the paper-scale oracle ([`paper_oracle`]), timed after the last problem.
    paper_oracle_seconds: Option<f64>,
    /// The trace index of each problem's first KJIT call.
    problem_starts: Vec<usize>,
    /// Exp. 4, when it is the selected experiment (the logistic fields then stay empty).
    gamma: Option<GammaExperiment>,
    /// Supp B.3/B.6, when it is the selected experiment.
    rff: Option<rff::RffLab>,
    /// Exp. 1 / Exp. 2, when selected.
    batch: Option<batch::BatchLab>,
    /// Exp. 5's four splits, when selected.
    uci: Vec<uci::UciSplit>,
    /// The d = 2 teaching mode, when selected.
    teaching: Option<teaching::TeachingLab>,
    /// The EP-sites experiment, when selected.
    sites: Option<sites::SitesLab>,
    log: RunLog,
}

/// The Supp C table and the Exp. 2 curves as CSV:
/// `operator,features,mean_log_kl,sd_log_kl,paper_mean_log_kl,paper_sd_log_kl` then, when Exp. 2
/// ran, `m,log_precision_test1,log_var_test1,log_precision_test2,log_var_test2`.
fn batch_csv(report: &batch::BatchReport) -> String {
    let mut out =
        String::from("operator,features,mean_log_kl,sd_log_kl,paper_mean_log_kl,paper_sd_log_kl\n");
    for r in &report.rows {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{}",
            r.operator,
            r.features,
            r.mean_log_kl,
            r.sd_log_kl,
            r.paper_mean_log_kl,
            r.paper_sd_log_kl
        );
    }
    if let Some(u) = &report.uncertainty {
        out.push_str("\nm,log_precision_test1,log_var_test1,log_precision_test2,log_var_test2\n");
        for i in 0..u.means.len() {
            let _ = writeln!(
                out,
                "{},{},{},{},{}",
                u.means[i],
                u.log_precision_test1[i],
                u.log_var_test1[i],
                u.log_precision_test2[i],
                u.log_var_test2[i]
            );
        }
    }
    out
}

fn median(mut values: Vec<f64>) -> Option<f64> {
    values.retain(|v| v.is_finite());
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    Some(if n % 2 == 1 {
        values[n / 2]
    } else {
        0.5 * (values[n / 2 - 1] + values[n / 2])
    })
}

impl KjitScenario {
    pub fn new(config: KjitConfig, _cancel: &CancelFlag) -> Result<KjitScenario> {
        let start = Instant::now();
        config.check()?;
        let operators = match config.experiment {
            Experiment::Uci => Operators::with_settings(
                &config,
                config.uci_jit_settings(stream_seed(config.seed, logistic::Stream::Features)),
            )?,
            _ => Operators::new(&config)?,
        };
        let uci = match config.experiment {
            Experiment::Uci => uci::load_splits(&config.uci, config.seed)?,
            _ => Vec::new(),
        };
        let batch = match config.experiment {
            Experiment::Batch | Experiment::Uncertainty => {
                let operators = if config.experiment == Experiment::Batch {
                    OperatorKind::VARIANTS.to_vec()
                } else {
                    vec![OperatorKind::Kjit]
                };
                Some(batch::BatchLab::new(
                    config.experiment.name(),
                    config.batch.clone(),
                    config.seed,
                    config.quadrature_nodes,
                    operators,
                )?)
            }
            _ => None,
        };
        let gamma = match config.experiment {
            Experiment::CompoundGamma => Some(GammaExperiment::new(&config)?),
            _ => None,
        };
        let rff = match config.experiment {
            Experiment::Rff => Some(rff::RffLab::new(config.seed, config.d_in, config.d_out)?),
            _ => None,
        };
        Ok(KjitScenario {
            // Exp. 5 has no true weights (its data are real).
            w_true: match config.experiment {
                Experiment::Uci => DVector::zeros(0),
                _ => true_weights(&config),
            },
            operators,
            problems: Vec::new(),
            last: None,
            sampling_seconds: 0.0,
            sampling_calls: 0,
            paper_oracle_seconds: None,
            problem_starts: Vec::new(),
            gamma,
            rff,
            batch,
            uci,
            teaching: match config.experiment {
                Experiment::Teaching => Some(teaching::TeachingLab::new(&config)?),
                _ => None,
            },
            sites: match config.experiment {
                Experiment::Sites => Some(sites::SitesLab::new(&config)?),
                _ => None,
            },
            log: RunLog::new(start.elapsed().as_secs_f64()),
            config,
        })
    }

    pub fn problems(&self) -> &[ProblemReport] {
        &self.problems
    }

    fn summary(&self) -> Summary {
        let from2: Vec<&ProblemReport> = self.problems.iter().skip(1).collect();
        let from3: Vec<&ProblemReport> = self.problems.iter().skip(2).collect();
        let (oracle, calls) = from3
            .iter()
            .fold((0, 0), |(o, c), p| (o + p.oracle_calls, c + p.calls));
        Summary {
            max_error_difference_from_problem_2: from2
                .iter()
                .map(|p| (p.error_kjit - p.error_quadrature).abs())
                .reduce(f64::max),
            oracle_fraction_from_problem_3: (calls > 0).then(|| oracle as f64 / calls as f64),
            median_log_var_z_problem_2: self.problems.get(1).and_then(|p| p.median_log_var_z),
        }
    }

    fn timings(&self) -> Timings {
        let kjit = &self.operators.kjit;
        let c = &kjit.counters;
        let predict_us = median(kjit.times.message_seconds.clone()).map(|s| 1e6 * s);
        let oracle_ms = median(kjit.times.oracle_seconds.clone()).map(|s| 1e3 * s);
        Timings {
            predict_us,
            oracle_ms,
            speedup_against_this_runs_oracle: predict_us
                .zip(oracle_ms)
                .filter(|&(us, _)| us > 0.0)
                .map(|(us, ms)| 1e3 * ms / us),
            paper_oracle_ms: self.paper_oracle_seconds.map(|s| 1e3 * s),
            speedup_against_paper_oracle: predict_us
                .zip(self.paper_oracle_seconds)
                .filter(|&(us, _)| us > 0.0)
                .map(|(us, s)| 1e6 * s / us),
            oracle_particles: self.config.particles,
            confident_call_us: (c.predict_count > 0)
                .then(|| 1e6 * c.predict_seconds / c.predict_count as f64),
            sampling_call_ms: (self.sampling_calls > 0)
                .then(|| 1e3 * self.sampling_seconds / self.sampling_calls as f64),
        }
    }

    /// The typed results.json report.
    pub fn report(&self) -> LogisticReport {
        let posterior = |r: &logistic::OperatorRun| Posterior {
            mean: r.mean.clone(),
            cov: r.cov.clone(),
        };
        LogisticReport {
            experiment: self.config.experiment.name(),
            problems: self.problems.clone(),
            w_true: self.w_true.iter().copied().collect(),
            last_problem: self.last.as_ref().map(|run| LastProblem {
                x: (0..run.problem.x.nrows())
                    .map(|i| run.problem.x.row(i).iter().copied().collect())
                    .collect(),
                y: run.problem.y.iter().map(|&b| b as u8).collect(),
            }),
            posteriors: self.last.as_ref().map(|run| Posteriors {
                kjit: posterior(&run.kjit),
                quadrature: posterior(&run.quadrature),
                sampling: run.sampling.as_ref().map(posterior),
            }),
            timings: self.timings(),
            kernel: KernelReport {
                z_direction: self.operators.kjit.z_learner().widths().cloned(),
                p_direction: self.operators.kjit.p_learner().widths().cloned(),
                median_factor: self.config.median_factor,
                log_sigma_y2: self.config.sigma_y2.ln(),
            },
            summary: self.summary(),
            uci: (!self.uci.is_empty()).then(|| {
                self.uci
                    .iter()
                    .map(|s| uci::UciRow {
                        dataset: s.name,
                        train: s.train.y.len(),
                        test: s.test_y.len(),
                        features: s.train.x.ncols(),
                        paper_errors: uci::paper_errors(s.name),
                    })
                    .collect()
            }),
            counters: self.operators.kjit.counters,
            conventions: match self.config.experiment {
                Experiment::Uci => report::Conventions {
                    error: "misclassification of sign(mean_post . x) on the held-out rows of each UCI set",
                    ..CONVENTIONS
                },
                _ => CONVENTIONS,
            },
        }
    }

    /// `call,problem,log_var_z,log_var_p,oracle_z,cavity_mean,cavity_var`.
    pub fn trace_csv(&self) -> String {
        let mut out =
            String::from("call,problem,log_var_z,log_var_p,oracle_z,cavity_mean,cavity_var\n");
        for (i, r) in self.operators.kjit.trace.iter().enumerate() {
            let problem = self.problem_starts.partition_point(|&s| s <= i);
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{}",
                i + 1,
                problem,
                r.log_var_z,
                r.log_var_p,
                r.oracle_z as u8,
                r.mean_z,
                r.var_z
            );
        }
        out
    }
}

impl ScenarioDef for KjitScenario {
    const NAME: &'static str = "kjit";
    const SUMMARY: &'static str = "kernel-based just-in-time EP messages: KJIT vs quadrature vs sampling EP on 30 logistic problems (Jitkrittum et al. 2015, Exp. 3)";
    const ALGORITHMS: &'static [&'static str] = &["kjit-ep", "quadrature-ep", "sampling-ep"];
    type Config = KjitConfig;
    type View = KjitView;
    type Control = KjitControl;
    type Task = NoTask;
    type RunArgs = cli::KjitArgs;

    fn build(config: KjitConfig, cancel: &CancelFlag) -> Result<Self> {
        KjitScenario::new(config, cancel)
    }

    fn max_iters(config: &KjitConfig) -> Option<usize> {
        Some(config.iterations())
    }
}

impl Scenario for KjitScenario {
    fn config(&self) -> ScenarioConfig {
        ScenarioConfig::Kjit(self.config.clone())
    }

    fn algorithm(&self) -> String {
        match self.config.experiment {
            Experiment::CompoundGamma => "kjit vs quadrature (compound gamma)".into(),
            Experiment::Rff => "random features vs exact kernels (Supp B.3, B.6)".into(),
            Experiment::Batch => "five random-feature operators, batch (Exp. 1 / Supp C)".into(),
            Experiment::Uncertainty => "KJIT predictive variance on test curves (Exp. 2)".into(),
            Experiment::Uci => {
                "kjit-ep vs quadrature-ep vs sampling-ep on four UCI sets (Exp. 5)".into()
            }
            Experiment::Sites => format!(
                "EP sites under a schedule ({} projection)",
                match self.config.sites.operator {
                    sites::SiteOperator::Quadrature => "quadrature",
                    sites::SiteOperator::Kjit => "KJIT",
                }
            ),
            _ => "kjit-ep vs quadrature-ep vs sampling-ep".into(),
        }
    }

    fn log(&self) -> &RunLog {
        &self.log
    }

    fn step(&mut self) -> Result<IterationRecord> {
        let start = Instant::now();
        if let Some(lab) = &mut self.sites {
            let (sweep, stats) = lab.step(&mut self.operators.kjit)?;
            let mut metrics = BTreeMap::from([
                ("site_residual".to_string(), sweep.residual),
                ("projections".to_string(), sweep.projections as f64),
                ("skipped".to_string(), sweep.skipped as f64),
            ]);
            for (key, value) in stats.metrics() {
                metrics.insert(key.to_string(), value);
            }
            let record = IterationRecord {
                iter: sweep.sweep,
                seconds: start.elapsed().as_secs_f64(),
                residual: sweep.residual,
                metrics,
            };
            return Ok(self.log.push(record));
        }
        if let Some(lab) = &mut self.teaching {
            let k = self.log.history().len();
            let (oracle, distance) = lab.step()?;
            let record = IterationRecord {
                iter: k + 1,
                seconds: start.elapsed().as_secs_f64(),
                residual: distance,
                metrics: BTreeMap::from([
                    ("oracle".to_string(), oracle as u8 as f64),
                    ("posterior_mean_distance".to_string(), distance),
                ]),
            };
            return Ok(self.log.push(record));
        }
        let lab_step = match (&mut self.rff, &mut self.batch) {
            (Some(lab), _) => Some(lab.step(self.log.history().len())),
            (None, Some(lab)) => Some(lab.step(self.log.history().len())),
            _ => None,
        };
        if let Some(step) = lab_step {
            let k = self.log.history().len();
            let (name, value) = step?;
            let record = IterationRecord {
                iter: k + 1,
                seconds: start.elapsed().as_secs_f64(),
                residual: 0.0,
                metrics: BTreeMap::from([(name, value)]),
            };
            return Ok(self.log.push(record));
        }
        if let Some(gamma) = &mut self.gamma {
            let p = gamma.step()?;
            let mut metrics = BTreeMap::from([
                ("log_shape_kjit".to_string(), p.log_shape_kjit),
                ("log_shape_quadrature".to_string(), p.log_shape_quadrature),
                ("log_rate_kjit".to_string(), p.log_rate_kjit),
                ("log_rate_quadrature".to_string(), p.log_rate_quadrature),
                ("oracle".to_string(), p.oracle as u8 as f64),
                ("seconds_kjit".to_string(), p.seconds_kjit),
            ]);
            if let Some(v) = p.log_var {
                metrics.insert("log_var".into(), v);
            }
            let record = IterationRecord {
                iter: p.problem,
                seconds: start.elapsed().as_secs_f64(),
                residual: 0.0,
                metrics,
            };
            return Ok(self.log.push(record));
        }
        let k = self.problems.len();
        if let Some(change) = self
            .config
            .tau_changes
            .iter()
            .rev()
            .find(|c| c.from_problem == k)
        {
            self.operators.kjit.set_tau(change.tau)?;
        }
        if self.config.operator_resets.contains(&k) {
            self.operators.kjit.reset_learners()?;
        }
        let run = match self.uci.get(k) {
            Some(split) => {
                let score = |mean: &DVector<f64>| split.test_error(mean);
                solve(
                    &self.config,
                    split.train.clone(),
                    &mut self.operators,
                    &score,
                )?
            }
            None => run_problem(&self.config, &self.w_true, &mut self.operators, k)?,
        };
        let log_vars: Vec<f64> = self.operators.kjit.trace[run.first_call..]
            .iter()
            .map(|r| r.log_var_z)
            .collect();
        if let Some(s) = &run.sampling {
            self.sampling_seconds += s.seconds;
            self.sampling_calls += run.calls;
        }
        let report = ProblemReport {
            problem: k + 1,
            error_kjit: run.kjit.error,
            error_quadrature: run.quadrature.error,
            error_sampling: run.sampling.as_ref().map(|s| s.error),
            oracle_calls: run.oracle_calls,
            calls: run.calls,
            seconds_kjit: run.kjit.seconds,
            seconds_quadrature: run.quadrature.seconds,
            seconds_sampling: run.sampling.as_ref().map(|s| s.seconds),
            skipped_kjit: run.kjit.skipped,
            median_log_var_z: median(log_vars),
        };
        let mut metrics = BTreeMap::from([
            ("error_kjit".to_string(), report.error_kjit),
            ("error_quadrature".to_string(), report.error_quadrature),
            (
                "error_difference".to_string(),
                (report.error_kjit - report.error_quadrature).abs(),
            ),
            ("oracle_calls".to_string(), report.oracle_calls as f64),
            ("calls".to_string(), report.calls as f64),
            (
                "oracle_fraction".to_string(),
                report.oracle_calls as f64 / report.calls.max(1) as f64,
            ),
            ("seconds_kjit".to_string(), report.seconds_kjit),
            ("seconds_quadrature".to_string(), report.seconds_quadrature),
            ("skipped_kjit".to_string(), report.skipped_kjit as f64),
        ]);
        if let Some(s) = &run.sampling {
            metrics.insert("error_sampling".into(), s.error);
            metrics.insert("seconds_sampling".into(), s.seconds);
        }
        if let Some(m) = report.median_log_var_z {
            metrics.insert("median_log_var_z".into(), m);
        }
        self.problems.push(report);
        self.problem_starts.push(run.first_call);
        self.last = Some(run);
        // Timed once, after the last problem, so it slows no problem's own timings.
        if self.problems.len() == self.config.iterations()
            && !self.operators.kjit.times.message_seconds.is_empty()
        {
            self.paper_oracle_seconds = Some(paper_oracle::paper_oracle_seconds(self.config.seed)?);
        }
        let record = IterationRecord {
            iter: k + 1,
            seconds: start.elapsed().as_secs_f64(),
            residual: 0.0,
            metrics,
        };
        Ok(self.log.push(record))
    }

    fn control(&mut self, control: &ScenarioControl) -> Result<()> {
        let ScenarioControl::Kjit(control) = control else {
            return Err(crate::error::Error::Other(
                "not a control of the kjit scenario".into(),
            ));
        };
        if !matches!(
            self.config.experiment,
            Experiment::Logistic | Experiment::Uci
        ) {
            return Err(crate::error::Error::param(
                "tau",
                "live changes apply to Exps. 3 and 5; change this experiment's settings instead",
            ));
        }
        let from_problem = self.problems.len();
        match control {
            KjitControl::SetTau(tau) => {
                self.operators.kjit.set_tau(*tau)?;
                self.config
                    .tau_changes
                    .retain(|c| c.from_problem != from_problem);
                self.config.tau_changes.push(TauChange {
                    from_problem,
                    tau: *tau,
                });
            }
            KjitControl::ResetOperator => {
                if !self.config.operator_resets.contains(&from_problem) {
                    self.config.operator_resets.push(from_problem);
                }
            }
        }
        Ok(())
    }

    fn finished(&self) -> bool {
        self.log.history().len() >= self.config.iterations()
            || self.sites.as_ref().is_some_and(|lab| lab.converged())
    }

    fn convergence(&self) -> Option<crate::run::residuals::ConvergenceView> {
        self.sites.as_ref().map(|lab| lab.convergence())
    }

    fn set_schedule(&mut self, schedule: crate::inference::Schedule, damping: f64) -> Result<()> {
        let Some(lab) = &mut self.sites else {
            return Err(crate::error::Error::Other(format!(
                "the {} experiment runs the paper's EP schedule (first sweep parallel, then \
                 sequential) and one iteration is a whole problem; site schedules are switched \
                 in the sites experiment (--experiment sites)",
                self.config.experiment.name()
            )));
        };
        lab.switch(schedule, damping)?;
        self.config.sites.schedule_changes = lab.settings().schedule_changes.clone();
        Ok(())
    }

    fn what_if(
        &self,
        request: super::what_if::WhatIfRequest,
        cancel: &CancelFlag,
    ) -> Result<super::what_if::WhatIfRun> {
        match &self.sites {
            Some(lab) => lab.what_if(request, cancel),
            None => Err(crate::error::Error::Other(format!(
                "the {} experiment has no what-if runs (one iteration is a whole problem); use \
                 the sites experiment",
                self.config.experiment.name()
            ))),
        }
    }

    fn view(&self, probe: Option<Probe>) -> ScenarioView {
        // The last 20 000 calls (about seven problems) keep snapshots small.
        let trace = &self.operators.kjit.trace;
        let from = trace.len().saturating_sub(20_000);
        let inspected = match probe {
            Some(Probe::Node(call)) if call < trace.len() => inspect::inspect(
                &self.operators.kjit,
                &self.operators.quadrature,
                &trace[call],
                call,
                self.problem_starts.partition_point(|&s| s <= call),
            )
            .ok(),
            _ => None,
        };
        let batch = self.batch.as_ref().map(|lab| &lab.report);
        ScenarioView::Kjit(KjitView {
            experiment: self.config.experiment,
            problem_names: self.uci.iter().map(|s| s.name.to_string()).collect(),
            trace_offset: from,
            problem_starts: self.problem_starts.clone(),
            tau: self.operators.kjit.z_learner().settings().tau,
            log_sigma_y2: self.config.sigma_y2.ln(),
            calls: self.operators.kjit.counters.calls,
            oracle_calls: self.operators.kjit.counters.oracle_calls_z,
            timings: self.timings(),
            table: batch.map(|b| b.rows.clone()).unwrap_or_default(),
            tuples: batch.map(|b| b.tuples_collected).unwrap_or(0),
            curves: batch.and_then(|b| b.uncertainty.clone()),
            rff: self.rff.as_ref().map(|lab| lab.report.clone()),
            sites: self.sites.as_ref().map(|lab| lab.view()),
            inspected,
            teaching: self.teaching.as_ref().and_then(|t| t.view()),
            problems_done: self.problems.len(),
            problems: self.config.iterations(),
            errors: self
                .problems
                .iter()
                .map(|p| {
                    [
                        p.error_kjit,
                        p.error_quadrature,
                        p.error_sampling.unwrap_or(f64::NAN),
                    ]
                })
                .collect(),
            trace: trace[from..]
                .iter()
                .map(|r| (r.log_var_z, r.oracle_z))
                .collect(),
            messages: trace[from..]
                .iter()
                .map(|r| (r.mean_z, -r.var_z.ln()))
                .collect(),
            posterior_kjit: self
                .last
                .as_ref()
                .map(|r| r.kjit.mean.clone())
                .unwrap_or_default(),
            posterior_quadrature: self
                .last
                .as_ref()
                .map(|r| r.quadrature.mean.clone())
                .unwrap_or_default(),
            w_true: self.w_true.iter().copied().collect(),
        })
    }

    fn final_metrics(&self) -> BTreeMap<String, f64> {
        let mut m = BTreeMap::new();
        if let Some(lab) = &self.sites {
            let v = lab.view();
            m.insert("sweeps".into(), v.sweeps_done as f64);
            m.insert("converged".into(), v.converged as u8 as f64);
            m.insert("site_residual".into(), v.residual);
            m.insert("projections".into(), v.projections as f64);
            m.insert("skipped".into(), v.skipped as f64);
            if let Some(r) = self.log.history().last() {
                for key in [
                    "residual_p50",
                    "residual_p90",
                    "residual_p99",
                    "oscillating_fraction",
                ] {
                    if let Some(x) = r.metrics.get(key) {
                        m.insert(key.into(), *x);
                    }
                }
            }
            return m;
        }
        if let Some(lab) = &self.teaching {
            let c = &lab.operators().kjit.counters;
            m.insert("oracle_calls".into(), c.oracle_calls_z as f64);
            m.insert("calls".into(), c.calls as f64);
            if let Some(r) = self.log.history().last() {
                m.insert("posterior_mean_distance".into(), r.residual);
            }
            return m;
        }
        if self.rff.is_some() || self.batch.is_some() {
            for r in self.log.history() {
                m.extend(r.metrics.clone());
            }
            return m;
        }
        if let Some(gamma) = &self.gamma {
            let r = gamma.report();
            m.insert("oracle_calls".into(), r.oracle_calls as f64);
            if let Some(c) = r.correlation_log_shape {
                m.insert("correlation_log_shape".into(), c);
            }
            if let Some(c) = r.correlation_log_rate {
                m.insert("correlation_log_rate".into(), c);
            }
            return m;
        }
        let n = self.problems.len().max(1) as f64;
        m.insert(
            "mean_error_kjit".into(),
            self.problems.iter().map(|p| p.error_kjit).sum::<f64>() / n,
        );
        m.insert(
            "mean_error_quadrature".into(),
            self.problems
                .iter()
                .map(|p| p.error_quadrature)
                .sum::<f64>()
                / n,
        );
        let c = &self.operators.kjit.counters;
        m.insert("oracle_calls".into(), c.oracle_calls_z as f64);
        m.insert("calls".into(), c.calls as f64);
        let s = self.summary();
        if let Some(v) = s.max_error_difference_from_problem_2 {
            m.insert("max_error_difference_from_problem_2".into(), v);
        }
        if let Some(v) = s.oracle_fraction_from_problem_3 {
            m.insert("oracle_fraction_from_problem_3".into(), v);
        }
        let t = self.timings();
        if let Some(v) = t.predict_us {
            m.insert("predict_us".into(), v);
        }
        if let Some(v) = t.oracle_ms {
            m.insert("oracle_ms".into(), v);
        }
        if let Some(v) = t.speedup_against_this_runs_oracle {
            m.insert("speedup_against_this_runs_oracle".into(), v);
        }
        if let Some(v) = t.speedup_against_paper_oracle {
            m.insert("speedup_against_paper_oracle".into(), v);
        }
        m
    }

    fn ending(&self) -> Vec<String> {
        self.timings().summary().into_iter().collect()
    }

    fn extra_results(&self) -> Map<String, Value> {
        if let Some(lab) = &self.sites {
            let mut out = Map::new();
            out.insert(
                "sites".into(),
                serde_json::to_value(lab.view()).unwrap_or_default(),
            );
            out.insert(
                "sites_conventions".into(),
                Value::String(
                    "iteration = one EP sweep; messages 0..n are the sites' messages to z_i, n..2n \
                     the cavities; a message's change is the L1 change of its natural parameters \
                     (precision, shift); site_residual is the largest change of one site's \
                     precision or shift; damping d: new = d old + (1 - d) update"
                        .into(),
                ),
            );
            return out;
        }
        if let Some(lab) = &self.rff {
            return report_fields(&lab.report);
        }
        if let Some(lab) = &self.batch {
            return report_fields(&lab.report);
        }
        if let Some(lab) = &self.teaching {
            let mut out = Map::new();
            if let Some(v) = lab.view() {
                out.insert(
                    "teaching_last".into(),
                    serde_json::to_value(v).unwrap_or_default(),
                );
            }
            out.insert(
                "counters".into(),
                serde_json::to_value(lab.operators().kjit.counters).unwrap_or_default(),
            );
            return out;
        }
        match &self.gamma {
            Some(gamma) => report_fields(&gamma.report()),
            None => report_fields(&self.report()),
        }
    }

    fn write_outputs(&self, dir: &Path) -> Result<()> {
        if let Some(lab) = &self.batch {
            if let Some(u) = &lab.report.uncertainty {
                figures::write_uncertainty(dir, u)?;
            }
            return write_atomic(
                &dir.join("kjit_batch.csv"),
                batch_csv(&lab.report).as_bytes(),
            );
        }
        if self.gamma.is_some()
            || self.rff.is_some()
            || self.teaching.is_some()
            || self.sites.is_some()
        {
            return Ok(());
        }
        figures::write_errors(dir, &self.report())?;
        write_atomic(&dir.join("kjit_trace.csv"), self.trace_csv().as_bytes())
    }
}
