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

pub mod cli;
pub mod config;
pub mod report;
pub mod sweep;

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
use crate::inference::sosmp::expected::{ExpectedFixedPoint, expected_fixed_point};
use crate::inference::sosmp::gains::{GainSummary, edge_gains};
use crate::inference::sosmp::grid::{IntervalGrid, StateGrid};
use crate::inference::sosmp::potentials::ClipReport;
use crate::inference::sosmp::reference::{GridBp, grid_bp};
use crate::inference::sosmp::{Sosmp, SosmpProblem, kernels};
use crate::io::{results::curves_csv, write_atomic};
use crate::model::{MsgId, NodeId};

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

/// Least-squares slope of `log(y_t - floor)` against `log t` over `t ∈ [from, len]` (1-based t,
/// `y[t - 1]`), skipping points where `y_t <= floor`. `None` with fewer than 3 usable points.
pub fn fit_slope(y: &[f64], floor: f64, from: usize) -> Option<f64> {
    fit_slope_points(y, floor, from).0
}

/// [`fit_slope`] and the number of points it used (those above the floor).
pub fn fit_slope_points(y: &[f64], floor: f64, from: usize) -> (Option<f64>, usize) {
    fit_slope_range(y, floor, from, y.len())
}

/// [`fit_slope_points`] over `t ∈ [from, to]` only.
pub fn fit_slope_range(y: &[f64], floor: f64, from: usize, to: usize) -> (Option<f64>, usize) {
    let pts: Vec<(f64, f64)> = y
        .iter()
        .enumerate()
        .map(|(i, &v)| (i + 1, v - floor))
        .filter(|&(t, d)| t >= from && t <= to && d > 0.0 && d.is_finite())
        .map(|(t, d)| ((t as f64).ln(), d.ln()))
        .collect();
    if pts.len() < 3 {
        return (None, pts.len());
    }
    let n = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    ((sxx > 0.0).then(|| sxy / sxx), pts.len())
}

/// Local slopes of `log(y_t - floor)` over the decades `[from, 10 from]`, `[10 from, 100 from]`,
/// ... up to `len` (a last shorter window ends at `len`): `(start, end, slope, points used)`.
/// A slope that steepens from one window to the next is a transient, not the asymptotic rate.
pub fn slope_windows(
    y: &[f64],
    floor: f64,
    from: usize,
) -> Vec<(usize, usize, Option<f64>, usize)> {
    let mut out = Vec::new();
    let mut lo = from.max(1);
    while lo < y.len() {
        let hi = (lo * 10).min(y.len());
        let (s, used) = fit_slope_range(y, floor, lo, hi);
        out.push((lo, hi, s, used));
        lo = hi;
    }
    out
}

/// The selected directed edge, on path 0 unless said otherwise.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeInspection {
    pub message: MsgId,
    pub from: NodeId,
    pub to: NodeId,
    /// `Σ_j a_j φ_j` on the grid (may be negative).
    pub raw: Vec<f64>,
    /// `max(0, raw)`.
    pub clipped: Vec<f64>,
    /// `clipped` scaled to integrate to 1 (the form compared with `m*`).
    pub normalised: Vec<f64>,
    /// The grid-BP message `m*` (integrates to 1).
    pub reference: Vec<f64>,
    /// `Σ_j a*_j φ_j`: the best the basis can do.
    pub reference_projection: Vec<f64>,
    /// `Σ_j a_∞;j φ_j`: where SOSMP converges to.
    pub floor_message: Vec<f64>,
    /// `a_t` of path 0.
    pub coefficients: Vec<f64>,
    /// `a_t` averaged over the paths.
    pub mean_coefficients: Vec<f64>,
    /// `a*`.
    pub reference_coefficients: Vec<f64>,
    /// `a_∞`.
    pub floor_coefficients: Vec<f64>,
    /// The latest `b` of path 0.
    pub last_b: Vec<f64>,
    /// Where path 0's latest k samples fell.
    pub samples: Vec<f64>,
    /// The density those samples were drawn from, normalised.
    pub sampling_density: Vec<f64>,
    /// The edge potential `ψ(x_from, x_to)` on a coarse grid for a heat map:
    /// `values[j * xs.len() + i]` at `(x_from = xs[i], x_to = xs[j])`.
    pub potential_xs: Vec<f64>,
    pub potential: Vec<f64>,
}

/// The selected node, on path 0.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeInspection {
    pub node: NodeId,
    /// SOSMP belief `ψ_u Π m̂` of path 0, normalised.
    pub belief: Vec<f64>,
    /// The grid-BP belief.
    pub reference: Vec<f64>,
    /// `ψ_u` on the grid.
    pub potential: Vec<f64>,
}

/// What the SOSMP views draw.
#[derive(Debug, Clone)]
pub struct SosmpView {
    pub config: SosmpConfig,
    pub iteration: usize,
    pub domain: (f64, f64),
    pub grid: Arc<Vec<f64>>,
    pub num_nodes: usize,
    /// Directed edges `[from, to]` in message order.
    pub edges: Arc<Vec<[NodeId; 2]>>,
    /// Undirected edges as stored in the graph (message `2e` is `edges_undirected[e].0 -> .1`).
    pub edges_undirected: Arc<Vec<(NodeId, NodeId)>>,
    pub basis: String,
    pub curves: Arc<ErrorCurves>,
    /// `e(a_∞) / e_0`.
    pub floor: f64,
    pub floor_raw: f64,
    pub e0: f64,
    /// Slope fitted on the mean so far (t from [`SLOPE_FROM`]).
    pub slope: Option<f64>,
    /// Two points `(t, e)` of a slope -1 line through the mean curve at `t = 10` (or the last t).
    pub slope_reference: Vec<[f64; 2]>,
    /// `ψ_u` of every node on the grid, node-major.
    pub node_potentials: Arc<Vec<f64>>,
    /// Every undirected edge's `ψ_e(x_a = c, x_b)` on the grid, edge-major, with `c` the grid
    /// node nearest the middle of the domain (for mixtures: the edge Gaussian mixture itself).
    pub edge_potential_slices: Arc<Vec<f64>>,
    /// `(1/|E→|) Σ ‖m* - Σ_{j≤r} a*_j φ_j‖²`: what the L2 error counts beyond eq. 38.
    pub truncation: f64,
    /// The L2 error of `a_0` and the L2 floor (raw, averaged over directed edges).
    pub e0_l2: f64,
    pub floor_l2: f64,
    /// Per-edge gains of the expected update at `a_∞`.
    pub gains: Option<GainSummary>,
    /// The longest path of the graph in edges (the depth in Theorem 1's `N^ℓ = 0`).
    pub diameter: usize,
    pub model: Arc<ModelDescription>,
    pub kernel_clip: Option<ClipReport>,
    /// Things the user must know: kernel clipping, variance clamping, fallbacks, no convergence.
    pub warnings: Vec<String>,
    pub fallbacks: u64,
    pub edge: Option<Box<EdgeInspection>>,
    pub node: Option<Box<NodeInspection>>,
}

/// The error baselines of a problem: the reference, `a*`, the floor, `e_0`.
#[derive(Debug, Clone)]
pub struct Baselines {
    pub reference: GridBp,
    /// `a*`, message order.
    pub reference_coefficients: Vec<f64>,
    pub floor: ExpectedFixedPoint,
    /// `e(a_0)` with `a_0 = 1/r`.
    pub e0: f64,
    /// `e(a_∞)`.
    pub floor_raw: f64,
    /// `(1/|E→|) Σ ‖m* - Σ_{j≤r} a*_j φ_j‖²` (grid quadrature): the squared L2 error of the best
    /// r-term expansion, which eq. 38 does not count (`Σ_{j>r} a*_j²` for an orthonormal basis).
    pub truncation: f64,
    /// The squared L2 error `(1/|E→|) Σ ‖Σ_j a_0;j φ_j - m*‖²` of `a_0 = 1/r`.
    pub e0_l2: f64,
    /// The L2 floor `(1/|E→|) Σ ‖Σ_j a_∞;j φ_j - m*‖²`: the full distance of the expected
    /// update's fixed point, as a function, from `m*` (eq. 38's floor plus the truncation).
    pub floor_l2: f64,
    /// The per-edge gains of the expected update at `a_∞` ([`gains`]); `None` without inputs.
    ///
    /// [`gains`]: crate::inference::sosmp::gains
    pub gains: Option<GainSummary>,
    l2: L2Error,
}

/// The squared L2 distance `‖Σ_j a_j φ_j - m*‖²` (grid quadrature) of any coefficients, from
/// `d = a - a*` as `dᵀ M d + 2 dᵀ c + τ`: `M` the basis' Gram matrix on the grid, `c = M a* - a*`
/// (zero for a basis orthonormal on the grid) and `τ = ‖Σ a*_j φ_j - m*‖²`. O(r²) per message.
#[derive(Debug, Clone)]
struct L2Error {
    r: usize,
    gram: Vec<f64>,
    /// `c` per message, `[m * r + j]`.
    offset: Vec<f64>,
    /// `τ` per message.
    tail: Vec<f64>,
    /// `M = I` and `c = 0` to 1e-13 (Fourier, cosine and Mercer bases on the trapezoid grid):
    /// the L2 error is then eq. 38's plus the mean `τ`, with no O(r²) work.
    orthonormal: bool,
}

impl L2Error {
    fn new(problem: &SosmpProblem<IntervalGrid>, messages: &[f64], a_star: &[f64]) -> Self {
        let (n, r) = (problem.mrf.grid.len(), problem.r());
        let weights = problem.mrf.grid.weights();
        let basis = &problem.basis;
        let mut gram = vec![0.0; r * r];
        for j in 0..r {
            let wj: Vec<f64> = weights
                .iter()
                .zip(basis.column(j))
                .map(|(w, v)| w * v)
                .collect();
            for l in 0..r {
                gram[j * r + l] = kernels::dot(&wj, basis.column(l));
            }
        }
        let total = problem.num_messages();
        let mut offset = vec![0.0; total * r];
        let mut tail = vec![0.0; total];
        let mut expansion = vec![0.0; n];
        for m in 0..total {
            let a = &a_star[m * r..(m + 1) * r];
            basis.evaluate(a, &mut expansion);
            tail[m] = expansion
                .iter()
                .zip(&messages[m * n..(m + 1) * n])
                .zip(weights)
                .map(|((e, v), w)| w * (e - v) * (e - v))
                .sum();
            for j in 0..r {
                let ma: f64 = (0..r).map(|l| gram[j * r + l] * a[l]).sum();
                offset[m * r + j] = ma - a[j];
            }
        }
        let defect = (0..r * r)
            .map(|k| (gram[k] - if k % (r + 1) == 0 { 1.0 } else { 0.0 }).abs())
            .chain(offset.iter().map(|c| c.abs()))
            .fold(0.0, f64::max);
        L2Error {
            r,
            gram,
            offset,
            tail,
            orthonormal: defect < 1e-13,
        }
    }

    /// `(1/|E→|) Σ_m ‖Σ_j a_m;j φ_j - m*_m‖²`.
    fn mean<'a>(&self, coeff: impl Fn(MsgId) -> &'a [f64], a_star: &[f64]) -> f64 {
        let r = self.r;
        let mut d = vec![0.0; r];
        let mut total = 0.0;
        for (m, tail) in self.tail.iter().enumerate() {
            for ((dj, a), s) in d.iter_mut().zip(coeff(m)).zip(&a_star[m * r..(m + 1) * r]) {
                *dj = a - s;
            }
            let mut q = *tail;
            for j in 0..r {
                let md: f64 = (0..r).map(|l| self.gram[j * r + l] * d[l]).sum();
                q += d[j] * (md + 2.0 * self.offset[m * r + j]);
            }
            total += q;
        }
        total / self.tail.len() as f64
    }
}

impl Baselines {
    pub fn new(problem: &SosmpProblem<IntervalGrid>, cancel: &CancelFlag) -> Result<Self> {
        let reference = grid_bp(
            &problem.mrf,
            REFERENCE_TOLERANCE,
            REFERENCE_MAX_SWEEPS,
            cancel,
        )?;
        let n = problem.mrf.grid.len();
        let r = problem.r();
        let weights = problem.mrf.grid.weights();
        let mut reference_coefficients = vec![0.0; problem.num_messages() * r];
        for (m, a) in reference_coefficients.chunks_mut(r).enumerate() {
            let msg = &reference.messages[m * n..(m + 1) * n];
            problem.basis.project(weights, msg, a);
        }
        let l2 = L2Error::new(problem, &reference.messages, &reference_coefficients);
        let truncation = l2.tail.iter().sum::<f64>() / problem.num_messages() as f64;
        cancel.check()?;
        let floor = expected_fixed_point(problem, REFERENCE_TOLERANCE, FLOOR_MAX_SWEEPS, cancel)?;
        let a0 = vec![1.0 / r as f64; r];
        let e0 = problem.squared_error(|_| &a0, &reference_coefficients);
        let floor_raw = problem.squared_error(
            |m| &floor.coefficients[m * r..(m + 1) * r],
            &reference_coefficients,
        );
        let e0_l2 = l2.mean(|_| &a0, &reference_coefficients);
        let floor_l2 = l2.mean(
            |m| &floor.coefficients[m * r..(m + 1) * r],
            &reference_coefficients,
        );
        cancel.check()?;
        let (_, gains) = edge_gains(problem, &floor.coefficients);
        Ok(Baselines {
            reference,
            reference_coefficients,
            floor,
            e0,
            floor_raw,
            truncation,
            e0_l2,
            floor_l2,
            gains,
            l2,
        })
    }

    /// The squared L2 error `(1/|E→|) Σ_m ‖Σ_j a_m;j φ_j - m*_m‖²` (grid quadrature) of any
    /// coefficients: what eq. 38 measures plus the truncation (and, for a basis that is not
    /// orthonormal on the grid, the cross terms). O(|E→| r²).
    pub fn l2_error<'a>(&self, coeff: impl Fn(MsgId) -> &'a [f64]) -> f64 {
        self.l2.mean(coeff, &self.reference_coefficients)
    }

    /// [`Self::l2_error`] given the coefficients' eq. 38 error `eq38` (raw): for a basis
    /// orthonormal on the grid that is `eq38 + truncation` at no cost, otherwise O(|E→| r²).
    pub fn l2_error_from<'a>(&self, eq38: f64, coeff: impl Fn(MsgId) -> &'a [f64]) -> f64 {
        if self.l2.orthonormal {
            eq38 + self.truncation
        } else {
            self.l2_error(coeff)
        }
    }

    /// True when the basis is orthonormal on the grid to 1e-13, so that the L2 error is eq. 38's
    /// plus the truncation.
    pub fn orthonormal_basis(&self) -> bool {
        self.l2.orthonormal
    }
}

/// A running SOSMP experiment.
pub struct SosmpScenario {
    config: SosmpConfig,
    problem: Arc<SosmpProblem<IntervalGrid>>,
    engine: Sosmp<IntervalGrid>,
    model: Arc<ModelDescription>,
    baselines: Arc<Baselines>,
    curves: Arc<ErrorCurves>,
    log: RunLog,
    grid_points: Arc<Vec<f64>>,
    node_potentials: Arc<Vec<f64>>,
    edge_potential_slices: Arc<Vec<f64>>,
    directed_edges: Arc<Vec<[NodeId; 2]>>,
    edges_undirected: Arc<Vec<(NodeId, NodeId)>>,
    run_seconds: f64,
    diameter: usize,
}

/// The number of edges on the longest shortest path (two breadth-first searches: exact on a
/// tree, a lower bound with cycles). O(nodes + edges).
pub fn graph_diameter(graph: &crate::model::Graph) -> usize {
    let depths = |root: NodeId| {
        let mut depth = vec![0usize; graph.num_nodes()];
        let mut far = (root, 0);
        for (node, parent) in graph.bfs_order(root) {
            if let Some(p) = parent {
                depth[node] = depth[p] + 1;
            }
            if depth[node] > far.1 {
                far = (node, depth[node]);
            }
        }
        far
    };
    let (end, _) = depths(0);
    depths(end).1
}

/// One paragraph on why the fitted slope is not -1: Theorem 1's bound and this problem's gains.
pub fn slope_explanation(
    slope: Option<f64>,
    gains: Option<&GainSummary>,
    diameter: usize,
    tree: bool,
) -> String {
    let slope = slope.map_or("not fitted yet".to_string(), |s| format!("{s:.2}"));
    let gains = match gains {
        Some(g) => format!(
            "Here the per-edge gains of the expected update at its fixed point (spectral norm of \
             dG(v→u)/da(w→v), {} pairs) have median {:.2}, geometric mean {:.2}, maximum {:.2}.",
            g.count, g.median, g.geometric_mean, g.max
        ),
        None => "Here no message has an input (each leaves a leaf): there is no gain, and the \
                 error falls like 1/t from the start."
            .to_string(),
    };
    let theorem = if tree {
        "Theorem 1 (eq. 26) bounds the error by (6 Σ B_j²) (I − log t · N)^-1 (N1 + 16) / t plus \
         the floor, N the tree's nilpotent matrix of per-edge constants: (I − log t · N)^-1 = \
         Σ_k (log t)^k N^k is a polynomial in log t of degree up to the depth"
    } else {
        "Theorem 1 is for trees (this graph has cycles; Theorem 2 gives (log t)/t for a \
         contractive update); on a tree its bound (I − log t · N)^-1 / t is a polynomial in \
         log t of degree up to the depth"
    };
    format!(
        "Fitted slope {slope}, not −1: {theorem} ({diameter} edges here), so the rate is 1/t only \
         \"apart from logarithmic factors\". {gains} A message d edges from a leaf carries the \
         noise-free transient of its upstream errors, of order (J ln t)^(d−1) / ((d−1)! t) for \
         gains J: with gains near or above 1/2 on a deep tree it dominates at any practical t, \
         and the slope bends from about −1 on short chains towards −0.5 on long ones (the depth \
         sweep)."
    )
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
        let directed_edges = (0..graph.num_messages())
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
            directed_edges: Arc::new(directed_edges),
            config,
            problem,
            engine,
            model: Arc::new(model),
            baselines: Arc::new(baselines),
            curves: Arc::new(curves),
            log: RunLog::new(start.elapsed().as_secs_f64()),
            run_seconds: 0.0,
            diameter,
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
                Verb::command::<cli::SosmpSweepArgs>(
                    "sosmp",
                    "SOSMP error curves over r (--coefficients 2,3,5,10), k (--samples 1,2,5,10) or alpha (--alpha 0.1,1).",
                )
            },
            run: |m| Verb::args::<cli::SosmpSweepArgs>(m)?.execute(),
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
        let curves = Arc::make_mut(&mut self.curves);
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
        let seconds = report.seconds + start.elapsed().as_secs_f64();
        self.run_seconds += seconds;
        let record = IterationRecord {
            iter: report.iteration,
            seconds,
            residual: report.residual,
            metrics: BTreeMap::from([
                ("error".to_string(), mean),
                ("error_raw".to_string(), mean_raw),
            ]),
        };
        Ok(self.log.push(record))
    }

    fn finished(&self) -> bool {
        self.engine.iteration() >= self.config.iters
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
            curves: self.curves.clone(),
            floor: self.floor(),
            floor_raw: self.baselines.floor_raw,
            e0: self.baselines.e0,
            slope: self.slope(),
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
        write_atomic(&dir.join("errors.csv"), self.errors_csv().as_bytes())
    }
}
