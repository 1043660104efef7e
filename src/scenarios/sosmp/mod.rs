//! Scenario `sosmp`: a convergence laboratory for stochastic orthogonal-series message passing
//! (Noorshams & Wainwright, JMLR 2013), reproducing the experiments of its Figures 5-8.
//!
//! The model is a pairwise MRF on `[a, b]` (default `[-5, 5]`, 100 grid points per unit) on a
//! chain, a tree, a grid or a custom tree, with Gaussian-mixture potentials (eq. 37) or Mercer
//! kernel edge potentials (eq. 39). Set-up computes, on the same grid:
//! * the BP fixed point `m*` by grid integration ([`reference`]) and `a* = <m*, φ_j>`;
//! * the fixed point `a_∞` of the exact expected update ([`expected`]), whose error `e(a_∞)` is
//!   the floor: the value the error tends to as `t → ∞` (the mean can pass below it on the way,
//!   through the cross term below).
//!
//! Each iteration advances every sample path once; the error `e_t` (eq. 38) is recorded per
//! path, shown normalised by `e_0` (the error of `a_0 = 1/r`, the same on every path), with the
//! slope of `log(mean e_t - floor)` against `log t` fitted over `t ∈ [10, T]`, and local slopes over
//! each decade. Beside it the distance `‖a_t - a_∞‖²` to the expected update's fixed point is
//! recorded (averaged over paths, and for the paths' mean): `e_t - e(a_∞)` is that distance plus
//! the cross term `2 <a_t - a_∞, a_∞ - a*>`, so with a large floor the two can differ.
//!
//! Set-up cost O(|E| n² r) for the tables plus O(|E→| n²) for the reference (tree; times the
//! sweeps on loopy graphs); an iteration costs what the engine's does plus O(paths · |E→| r) for
//! the errors.
//!
//! [`reference`]: crate::inference::sosmp::reference
//! [`expected`]: crate::inference::sosmp::expected

mod baselines;
pub mod cli;
pub mod config;
mod figures;
pub mod report;
mod slope;
pub mod sweep;
mod view;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value};

pub use self::config::{
    GraphKind, ModelDescription, PARAMS, PotentialKind, SosmpConfig, build_problem,
};
pub use self::sweep::{SweepCurve, SweepParameter, SweepResult, SweepSpec, SweepTask, run_sweep};
use super::{
    CancelFlag, IterationRecord, NoControl, Probe, RunLog, Scenario, ScenarioConfig, ScenarioDef,
    ScenarioView, Verb, report_fields,
};
use crate::error::Result;
use crate::inference::Inference;
use crate::inference::sosmp::grid::{IntervalGrid, StateGrid};
use crate::inference::sosmp::{Sosmp, SosmpProblem, kernels};
use crate::io::{results::curves_csv, write_atomic};
use crate::model::Graph;
use crate::model::{MsgId, NodeId};
use crate::run::residuals::{
    ConvergenceGraph, ConvergenceStats, ConvergenceTracker, ConvergenceView, EDGE_BUDGET_BYTES,
    MessageChanges, change_of,
};
use crate::run::shared_copies::{AppendOnly, SharedCopies, catch_up_all, catch_up_series};
pub use baselines::Baselines;
pub use slope::{
    RunningSlope, fit_slope, fit_slope_points, fit_slope_range, graph_diameter, slope_explanation,
    slope_windows,
};
pub use view::{EdgeInspection, NodeInspection, SosmpView};

/// Grid BP and the expected update stop when the largest change falls below this.
pub const REFERENCE_TOLERANCE: f64 = 1e-12;
/// Sweep cap of grid BP on graphs with cycles.
pub const REFERENCE_MAX_SWEEPS: usize = 2000;
/// Sweep cap of the expected-update iteration on graphs with cycles.
pub const FLOOR_MAX_SWEEPS: usize = 20_000;
/// The slope is fitted over `t ∈ [SLOPE_FROM, T]`.
pub const SLOPE_FROM: usize = 10;

/// The error curves so far: `paths[p][t - 1] = e_t / e_0` on path `p`, their mean, and the mean
/// of the raw `e_t`; beside them the distance to the floor's fixed point `a_∞` (what the
/// stochastic approximation itself converges to), also normalised by `e_0`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ErrorCurves {
    pub paths: Vec<Vec<f64>>,
    pub mean: Vec<f64>,
    pub mean_raw: Vec<f64>,
    /// The squared L2 error `(1/|E→|) Σ_m ‖Σ_j a_t;j φ_j - m*‖²` averaged over the paths,
    /// divided by that of `a_0` ([`Baselines::e0_l2`]).
    pub mean_l2: Vec<f64>,
    /// The same, raw.
    pub mean_l2_raw: Vec<f64>,
    /// Each path's L2 error divided by that of `a_0`.
    pub paths_l2: Vec<Vec<f64>>,
    /// `(1/|E→|) Σ_m ‖a_t - a_∞‖² / e_0`, averaged over the paths.
    pub fixed_point: Vec<f64>,
    /// `(1/|E→|) Σ_m ‖ā_t - a_∞‖² / e_0` with `ā_t` the mean of `a_t` over the paths: the part of
    /// `fixed_point` that averaging more paths does not remove (plus its variance / paths).
    pub fixed_point_bias: Vec<f64>,
}

impl AppendOnly for ErrorCurves {
    fn catch_up(&mut self, source: &Self) {
        // Named field by field, so a new curve cannot be left out.
        let ErrorCurves {
            paths,
            mean,
            mean_raw,
            mean_l2,
            mean_l2_raw,
            paths_l2,
            fixed_point,
            fixed_point_bias,
        } = self;
        catch_up_all(paths, &source.paths);
        catch_up_series(mean, &source.mean);
        catch_up_series(mean_raw, &source.mean_raw);
        catch_up_series(mean_l2, &source.mean_l2);
        catch_up_series(mean_l2_raw, &source.mean_l2_raw);
        catch_up_all(paths_l2, &source.paths_l2);
        catch_up_series(fixed_point, &source.fixed_point);
        catch_up_series(fixed_point_bias, &source.fixed_point_bias);
    }
}

/// A running SOSMP experiment.
pub struct SosmpScenario {
    config: SosmpConfig,
    problem: Arc<SosmpProblem<IntervalGrid>>,
    engine: Sosmp<IntervalGrid>,
    model: Arc<ModelDescription>,
    baselines: Arc<Baselines>,
    curves: ErrorCurves,
    /// The copies of `curves` that snapshots share with the window.
    shared_curves: SharedCopies<ErrorCurves>,
    /// The slopes of `curves.mean` and `curves.fixed_point` as they grow (the window's).
    mean_slope: RunningSlope,
    fixed_point_slope: RunningSlope,
    log: RunLog,
    grid_points: Arc<Vec<f64>>,
    node_potentials: Arc<Vec<f64>>,
    edge_potential_slices: Arc<Vec<f64>>,
    directed_edges: Arc<Vec<[NodeId; 2]>>,
    edges_undirected: Arc<Vec<(NodeId, NodeId)>>,
    run_seconds: f64,
    diameter: usize,
    /// Path 0's per-message changes, oscillation and coefficients (the convergence debugger).
    convergence: ConvergenceTracker,
    target_of_message: Vec<NodeId>,
}

impl SosmpScenario {
    /// Builds the model, the reference and the floor, and starts every path at `a_0 = 1/r`.
    pub fn new(config: SosmpConfig, cancel: &CancelFlag) -> Result<Self> {
        let start = Instant::now();
        let (problem, model) = build_problem(&config, cancel)?;
        cancel.check()?;
        let baselines = Baselines::new(&problem, cancel)?;
        let problem = Arc::new(problem);
        let engine = Sosmp::new(problem.clone(), config.params())?;
        let graph = &problem.mrf.graph;
        let directed_edges: Vec<[NodeId; 2]> = (0..graph.num_messages())
            .map(|m| [graph.source(m), graph.target(m)])
            .collect();
        // Reserve for the planned iterations, within reason (the vectors grow past it).
        let reserve = config.iters.min(100_000);
        let curves = ErrorCurves {
            paths: vec![Vec::with_capacity(reserve); config.paths],
            mean: Vec::with_capacity(reserve),
            mean_raw: Vec::with_capacity(reserve),
            mean_l2: Vec::with_capacity(reserve),
            mean_l2_raw: Vec::with_capacity(reserve),
            paths_l2: vec![Vec::with_capacity(reserve); config.paths],
            fixed_point: Vec::with_capacity(reserve),
            fixed_point_bias: Vec::with_capacity(reserve),
        };
        let diameter = graph_diameter(graph);
        let convergence = ConvergenceTracker::for_graph(
            convergence_graph(&config, graph, &directed_edges),
            EDGE_BUDGET_BYTES,
        );
        let n = problem.mrf.grid.len();
        let centre = n / 2;
        let mut buf = vec![0.0; n];
        let mut slices = Vec::with_capacity(graph.num_edges() * n);
        for e in 0..graph.num_edges() {
            // Receiver b at every node, sender a fixed at the centre: ψ_e(x_a = c, x_b = x_i).
            slices.extend_from_slice(problem.mrf.pair(e).receiver_row(true, centre, &mut buf));
        }
        Ok(SosmpScenario {
            edge_potential_slices: Arc::new(slices),
            grid_points: Arc::new(problem.mrf.grid.points().to_vec()),
            node_potentials: Arc::new(
                problem
                    .mrf
                    .node_potentials
                    .table()
                    .map(<[f64]>::to_vec)
                    .unwrap_or_default(),
            ),
            edges_undirected: Arc::new(graph.edges().to_vec()),
            directed_edges: Arc::new(directed_edges.clone()),
            config,
            problem,
            engine,
            model: Arc::new(model),
            mean_slope: RunningSlope::new(baselines.floor_raw / baselines.e0, SLOPE_FROM),
            fixed_point_slope: RunningSlope::new(0.0, SLOPE_FROM),
            baselines: Arc::new(baselines),
            curves,
            shared_curves: SharedCopies::default(),
            log: RunLog::new(start.elapsed().as_secs_f64()),
            run_seconds: 0.0,
            diameter,
            convergence,
            target_of_message: directed_edges.iter().map(|e| e[1]).collect(),
        })
    }

    pub fn settings(&self) -> &SosmpConfig {
        &self.config
    }

    pub fn engine(&self) -> &Sosmp<IntervalGrid> {
        &self.engine
    }

    pub fn problem(&self) -> &Arc<SosmpProblem<IntervalGrid>> {
        &self.problem
    }

    pub fn baselines(&self) -> &Baselines {
        &self.baselines
    }

    pub fn model(&self) -> &ModelDescription {
        &self.model
    }

    pub fn curves(&self) -> &ErrorCurves {
        &self.curves
    }

    /// `e(a_∞) / e_0`.
    pub fn floor(&self) -> f64 {
        self.baselines.floor_raw / self.baselines.e0
    }

    /// The fitted slope over `t ∈ [10, T]` of the mean so far.
    pub fn slope(&self) -> Option<f64> {
        fit_slope(&self.curves.mean, self.floor(), SLOPE_FROM)
    }

    /// Seconds spent iterating so far.
    pub fn run_seconds(&self) -> f64 {
        self.run_seconds
    }

    fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        if let Some(s) = self.model.clip_warning(self.config.alpha) {
            w.push(s);
        }
        if let Some(s) = self.model.clamp_note() {
            w.push(s);
        }
        let fb = self.engine.fallbacks();
        if fb > 0 {
            w.push(format!(
                "{fb} sampling densities were zero on the whole grid and fell back to beta"
            ));
        }
        let b = &self.baselines;
        if !b.reference.converged {
            w.push(format!(
                "grid BP did not reach 1e-12 in {} sweeps (residual {:.2e})",
                b.reference.sweeps, b.reference.residual
            ));
        }
        if !b.floor.converged {
            w.push(format!(
                "the expected update did not reach 1e-12 in {} sweeps (residual {:.2e}); the floor is approximate",
                b.floor.sweeps, b.floor.residual
            ));
        }
        if self.config.potentials == PotentialKind::Kernel
            && self.config.basis_kind().constant_first()
        {
            w.push("the Mercer basis is the natural one for kernel potentials".to_string());
        }
        w
    }

    fn edge_inspection(&self, m: MsgId) -> EdgeInspection {
        let p = &self.problem;
        let graph = &p.mrf.graph;
        let grid = &p.mrf.grid;
        let (n, r) = (grid.len(), p.r());
        let weights = grid.weights();
        let b = &self.baselines;
        let coefficients = self.engine.coefficients(0, m).to_vec();
        let mut raw = vec![0.0; n];
        p.basis.evaluate(&coefficients, &mut raw);
        let clipped: Vec<f64> = raw.iter().map(|v| v.max(0.0)).collect();
        let mut normalised = clipped.clone();
        crate::inference::sosmp::update::normalise(weights, &mut normalised);
        let reference_coefficients = b.reference_coefficients[m * r..(m + 1) * r].to_vec();
        let floor_coefficients = b.floor.coefficients[m * r..(m + 1) * r].to_vec();
        let mut reference_projection = vec![0.0; n];
        p.basis
            .evaluate(&reference_coefficients, &mut reference_projection);
        let mut floor_message = vec![0.0; n];
        p.basis.evaluate(&floor_coefficients, &mut floor_message);
        let paths = self.engine.num_paths();
        let mut mean_coefficients = vec![0.0; r];
        for path in 0..paths {
            kernels::axpy(
                1.0 / paths as f64,
                self.engine.coefficients(path, m),
                &mut mean_coefficients,
            );
        }
        // No samples exist before the first iteration.
        let drawn = if self.engine.iteration() == 0 {
            &[][..]
        } else {
            self.engine.samples(0, m)
        };
        let samples = drawn
            .iter()
            .map(|s| {
                let mut x = [0.0];
                grid.coordinates(s, &mut x);
                x[0]
            })
            .collect();
        // The edge potential ψ_e(x_from, x_to) on every `stride`-th node.
        let stride = n.div_ceil(101).max(1);
        let idx: Vec<usize> = (0..n).step_by(stride).collect();
        let (pot, forward) = p.mrf.message_potential(m);
        let mut buf = vec![0.0; n];
        let mut potential = Vec::with_capacity(idx.len() * idx.len());
        for &k in &idx {
            // Row over the receiver (`to`) at sender (`from`) node k: ψ(x_from = y_k, x_to = x_i).
            let row = pot.receiver_row(forward, k, &mut buf);
            potential.extend(idx.iter().map(|&i| row[i]));
        }
        // potential[kk * len + ii] is at (from = xs[kk], to = xs[ii]); store as values[j*len+i] at
        // (from = xs[i], to = xs[j]).
        let len = idx.len();
        let mut transposed = vec![0.0; len * len];
        for kk in 0..len {
            for ii in 0..len {
                transposed[ii * len + kk] = potential[kk * len + ii];
            }
        }
        EdgeInspection {
            message: m,
            from: graph.source(m),
            to: graph.target(m),
            raw,
            clipped,
            normalised,
            reference: b.reference.messages[m * n..(m + 1) * n].to_vec(),
            reference_projection,
            floor_message,
            coefficients,
            mean_coefficients,
            reference_coefficients,
            floor_coefficients,
            last_b: self.engine.last_b(0, m).to_vec(),
            samples,
            sampling_density: self.engine.latest_sampling_density(0, m),
            potential_xs: idx.iter().map(|&i| grid.points()[i]).collect(),
            potential: transposed,
        }
    }

    fn node_inspection(&self, u: NodeId) -> NodeInspection {
        let n = self.problem.mrf.grid.len();
        NodeInspection {
            node: u,
            belief: self.engine.belief_values(0, u),
            reference: self.baselines.reference.beliefs[u * n..(u + 1) * n].to_vec(),
            potential: self.problem.mrf.node_potential(u).into_owned(),
        }
    }

    /// The eq. 38 distance of the current iterates to the floor's fixed point `a_∞`, averaged over
    /// the paths, and that of their mean over the paths (both raw). O(paths · |E→| r).
    fn fixed_point_errors(&self) -> (f64, f64) {
        let a_inf = &self.baselines.floor.coefficients;
        let paths = self.engine.num_paths();
        let r = self.problem.r();
        let mut mean = vec![0.0; r];
        let (mut dist, mut bias) = (0.0, 0.0);
        for m in 0..self.problem.num_messages() {
            let target = &a_inf[m * r..(m + 1) * r];
            mean.iter_mut().for_each(|x| *x = 0.0);
            for p in 0..paths {
                let a = self.engine.coefficients(p, m);
                for ((x, &aj), &tj) in mean.iter_mut().zip(a).zip(target) {
                    dist += (aj - tj) * (aj - tj);
                    *x += aj;
                }
            }
            for (x, &tj) in mean.iter().zip(target) {
                let d = x / paths as f64 - tj;
                bias += d * d;
            }
        }
        let messages = self.problem.num_messages() as f64;
        (dist / (messages * paths as f64), bias / messages)
    }

    /// Feeds path 0's per-message changes `|a_t - a_{t-1}|` (L1 over the coefficients) and its
    /// coefficients to the convergence tracker. O(|E→| r).
    fn observe_changes(&mut self, iteration: usize) -> ConvergenceStats {
        let messages = self.problem.num_messages();
        let r = self.problem.r();
        let mut change = Vec::with_capacity(messages);
        let mut signed = Vec::with_capacity(messages);
        let mut values = Vec::with_capacity(messages * r);
        for m in 0..messages {
            let now = self.engine.coefficients(0, m);
            let (l1, s) = change_of(self.engine.previous_coefficients(0, m), now);
            change.push(l1);
            signed.push(s);
            values.extend_from_slice(now);
        }
        let target = &self.target_of_message;
        let changes = MessageChanges {
            change: &change,
            signed: &signed,
            target,
        };
        self.convergence
            .observe_with_values(iteration, &changes, &values, r)
    }

    /// Mean normalised error per iteration as CSV: `iter,mean,mean_raw,path_0,...`.
    pub fn errors_csv(&self) -> String {
        let c = &self.curves;
        let mut out = String::from("iter,mean_error,mean_error_raw");
        for p in 0..c.paths.len() {
            let _ = write!(out, ",path_{p}");
        }
        out.push('\n');
        for t in 0..c.mean.len() {
            let _ = write!(out, "{},{},{}", t + 1, c.mean[t], c.mean_raw[t]);
            for p in &c.paths {
                let _ = write!(out, ",{}", p[t]);
            }
            out.push('\n');
        }
        out
    }
}

/// Where the debugger's canvas draws the graph: a chain in a row, a grid as a grid, a tree in
/// layers from node 0.
fn convergence_graph(
    config: &SosmpConfig,
    graph: &Graph,
    directed: &[[NodeId; 2]],
) -> ConvergenceGraph {
    let n = graph.num_nodes();
    let side = (n as f64).sqrt().round() as usize;
    let positions = match config.graph {
        GraphKind::Chain => ConvergenceGraph::chain_positions(n),
        GraphKind::Grid if side * side == n => ConvergenceGraph::grid_positions(side),
        _ => ConvergenceGraph::layered_positions(n, graph.edges(), 0),
    };
    ConvergenceGraph {
        positions,
        messages: directed.to_vec(),
        value_axis: "coefficient j".to_string(),
    }
}

impl ScenarioDef for SosmpScenario {
    const NAME: &'static str = "sosmp";
    const SUMMARY: &'static str = "stochastic orthogonal-series message passing on a chain, tree or grid: error against 1/t and the floor (Noorshams & Wainwright 2013, Figs. 5-8)";
    const ALGORITHMS: &'static [&'static str] = &["sosmp"];
    type Config = SosmpConfig;
    type View = SosmpView;
    type Control = NoControl;
    type Task = SweepTask;
    type RunArgs = cli::SosmpArgs;

    fn build(config: SosmpConfig, cancel: &CancelFlag) -> Result<Self> {
        SosmpScenario::new(config, cancel)
    }

    fn max_iters(config: &SosmpConfig) -> Option<usize> {
        Some(config.iters)
    }

    fn verbs() -> &'static [Verb] {
        &[Verb {
            group: "sweep",
            command: || {
                Verb::command_with_table::<cli::SosmpSweepArgs, SosmpConfig>(
                    "sosmp",
                    "SOSMP error curves over r (--coefficients 2,3,5,10), k (--samples 1,2,5,10) or alpha (--alpha 0.1,1).",
                )
            },
            run: |m| Verb::args::<cli::SosmpSweepArgs>(m)?.execute(),
            takes_sweep_flags: false,
        }]
    }
}

impl Scenario for SosmpScenario {
    fn config(&self) -> ScenarioConfig {
        ScenarioConfig::Sosmp(self.config.clone())
    }

    fn algorithm(&self) -> String {
        "sosmp".to_string()
    }

    fn log(&self) -> &RunLog {
        &self.log
    }

    fn step(&mut self) -> Result<IterationRecord> {
        let report = self.engine.step()?;
        let start = Instant::now();
        let b = &self.baselines;
        let raw: Vec<f64> = (0..self.engine.num_paths())
            .map(|p| self.engine.squared_error(p, &b.reference_coefficients))
            .collect();
        let mean_raw = raw.iter().sum::<f64>() / raw.len() as f64;
        let mean = mean_raw / b.e0;
        let raw_l2: Vec<f64> = raw
            .iter()
            .enumerate()
            .map(|(p, &e)| b.l2_error_from(e, |m| self.engine.coefficients(p, m)))
            .collect();
        let mean_l2_raw = raw_l2.iter().sum::<f64>() / raw_l2.len() as f64;
        let (fixed_point, fixed_point_bias) = self.fixed_point_errors();
        let curves = &mut self.curves;
        for (c, e) in curves.paths.iter_mut().zip(&raw) {
            c.push(e / b.e0);
        }
        curves.mean.push(mean);
        curves.mean_raw.push(mean_raw);
        for (c, e) in curves.paths_l2.iter_mut().zip(&raw_l2) {
            c.push(e / b.e0_l2);
        }
        curves.mean_l2.push(mean_l2_raw / b.e0_l2);
        curves.mean_l2_raw.push(mean_l2_raw);
        curves.fixed_point.push(fixed_point / b.e0);
        curves.fixed_point_bias.push(fixed_point_bias / b.e0);
        self.mean_slope.push(mean);
        self.fixed_point_slope.push(fixed_point / b.e0);
        let mut metrics = BTreeMap::from([
            ("error".to_string(), mean),
            ("error_raw".to_string(), mean_raw),
        ]);
        for (key, value) in self.observe_changes(report.iteration).metrics() {
            metrics.insert(key.to_string(), value);
        }
        let seconds = report.seconds + start.elapsed().as_secs_f64();
        self.run_seconds += seconds;
        let record = IterationRecord {
            iter: report.iteration,
            seconds,
            residual: report.residual,
            metrics,
        };
        Ok(self.log.push(record))
    }

    fn finished(&self) -> bool {
        self.engine.iteration() >= self.config.iters
    }

    fn convergence(&self) -> Option<ConvergenceView> {
        let mut view =
            self.convergence
                .view(self.config.schedule.label(), 0.0, 0.0, self.config.iters);
        view.fixed_schedule = Some(
            "SOSMP runs only its synchronous schedule with the step size 1/(γ(t+1)) (Noorshams & \
             Wainwright 2013, Theorems 1-2) and its residual shrinks like 1/t by design, so it has \
             no what-if runs; the error plot above is its convergence measure"
                .to_string(),
        );
        Some(view)
    }

    fn set_schedule(&mut self, schedule: crate::inference::Schedule, damping: f64) -> Result<()> {
        crate::inference::sosmp::check_schedule(schedule)?;
        if damping != 0.0 {
            return Err(crate::error::Error::param(
                "damping",
                "SOSMP's step size 1/(γ(t+1)) already averages each update with the old \
                 coefficients; it takes no separate damping",
            ));
        }
        Ok(())
    }

    fn view(&self, probe: Option<Probe>) -> ScenarioView {
        let num_nodes = self.problem.mrf.graph.num_nodes();
        let num_messages = self.problem.num_messages();
        let edge = match probe {
            Some(Probe::Message(m)) if m < num_messages => Some(Box::new(self.edge_inspection(m))),
            _ => None,
        };
        let node = match probe {
            Some(Probe::Node(u)) if u < num_nodes => Some(Box::new(self.node_inspection(u))),
            _ => None,
        };
        let mean = &self.curves.mean;
        let slope_reference = if mean.is_empty() {
            Vec::new()
        } else {
            let ta = SLOPE_FROM.min(mean.len());
            let c = mean[ta - 1] * ta as f64;
            let t_end = self.config.iters.max(mean.len()) as f64;
            vec![[1.0, c], [t_end, c / t_end]]
        };
        ScenarioView::Sosmp(SosmpView {
            config: self.config.clone(),
            iteration: self.engine.iteration(),
            domain: self.problem.mrf.grid.domain(),
            grid: self.grid_points.clone(),
            num_nodes,
            edges: self.directed_edges.clone(),
            edges_undirected: self.edges_undirected.clone(),
            basis: self.problem.basis.name().to_string(),
            curves: self.shared_curves.share(&self.curves),
            floor: self.floor(),
            floor_raw: self.baselines.floor_raw,
            e0: self.baselines.e0,
            slope: self.mean_slope.slope(),
            fixed_point_slope: self.fixed_point_slope.slope(),
            slope_reference,
            node_potentials: self.node_potentials.clone(),
            edge_potential_slices: self.edge_potential_slices.clone(),
            truncation: self.baselines.truncation,
            e0_l2: self.baselines.e0_l2,
            floor_l2: self.baselines.floor_l2,
            gains: self.baselines.gains.clone(),
            diameter: self.diameter,
            model: self.model.clone(),
            kernel_clip: self.model.kernel_clip,
            warnings: self.warnings(),
            fallbacks: self.engine.fallbacks(),
            edge,
            node,
        })
    }

    fn final_metrics(&self) -> BTreeMap<String, f64> {
        let b = &self.baselines;
        let mut m = BTreeMap::from([
            (
                "error".to_string(),
                self.curves.mean.last().copied().unwrap_or(1.0),
            ),
            (
                "error_raw".to_string(),
                self.curves.mean_raw.last().copied().unwrap_or(b.e0),
            ),
            ("floor".to_string(), self.floor()),
            ("floor_raw".to_string(), b.floor_raw),
            ("e0".to_string(), b.e0),
            ("truncation".to_string(), b.truncation),
            ("floor_l2".to_string(), b.floor_l2),
            ("floor_l2_normalised".to_string(), b.floor_l2 / b.e0_l2),
            ("e0_l2".to_string(), b.e0_l2),
            (
                "error_l2".to_string(),
                self.curves.mean_l2.last().copied().unwrap_or(1.0),
            ),
            ("fallbacks".to_string(), self.engine.fallbacks() as f64),
            ("run_seconds".to_string(), self.run_seconds),
        ]);
        if let Some(s) = self.slope() {
            m.insert("slope".to_string(), s);
        }
        if let Some(s) = fit_slope(&self.curves.fixed_point, 0.0, SLOPE_FROM) {
            m.insert("fixed_point_slope".to_string(), s);
        }
        if let Some(g) = &b.gains {
            m.insert("median_gain".to_string(), g.median);
        }
        m
    }

    fn extra_results(&self) -> Map<String, Value> {
        report_fields(&report::SosmpReport::of(self))
    }

    fn write_outputs(&self, dir: &Path) -> Result<()> {
        write_atomic(
            &dir.join("curves.csv"),
            curves_csv(self.log.history()).as_bytes(),
        )?;
        write_atomic(&dir.join("errors.csv"), self.errors_csv().as_bytes())?;
        figures::write(self, dir)
    }
}
