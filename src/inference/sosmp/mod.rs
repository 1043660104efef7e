//! Stochastic orthogonal-series message passing (SOSMP): Noorshams & Wainwright, "Belief
//! Propagation for Continuous State Spaces: Stochastic Message-Passing with Quantitative
//! Guarantees", JMLR 14 (2013), Fig. 3 and eqs. 9-17.
//!
//! Each directed message `v -> u` is `r` coefficients `a` of an orthonormal basis `{φ_j}`
//! ([`basis`]). An iteration `t` (synchronous, every directed edge):
//! 1. clip the incoming messages: `m̂_{w->v} = max(0, Σ_j a_{w->v;j} φ_j)`;
//! 2. draw `Y_1..Y_k` from the density `∝ β_uv(y) Π_{w ∈ N(v)\u} m̂_{w->v}(y)` (eq. 13);
//! 3. `b_j = (1/k) Σ_i γ_uv;j(Y_i)` (eq. 15), an unbiased estimate of the projected BP update;
//! 4. `a <- (1 - η_t) a + η_t b` with `η_t = 1 / (γ (t + 1))` (eq. 16; `γ = 1` on trees,
//!    Theorem 2's `γ ∈ (0, 2)` on graphs with cycles).
//!
//! The state space is a quadrature grid ([`grid::StateGrid`]): potentials become tables on it
//! ([`model`]), sampling is by inverse CDF over its cells, `γ` is looked up by interpolation. The
//! engine is generic over the grid, so a 2-D flow domain reuses all of it.
//!
//! Randomness: one ChaCha8 stream per (path, iteration, message) ([`update::sampling_rng`]), so a
//! run is reproducible from its seed whatever the thread count. Several independent sample paths
//! run side by side (rayon over paths, and over nodes inside each path).
//!
//! Cost per iteration and path: O(Σ_v deg(v) · n r) to evaluate the incoming messages (each once
//! per node, reused for all its outgoing edges), O(|E→| · n) for the densities and CDFs (plus
//! O(Σ_v deg(v)² n) only where deg > 2, for prefix/suffix products), O(|E→| · k (log n + r)) for
//! sampling. Memory O(paths · |E→| · (r + k)) plus the tables of [`model::EdgeTables`].
//!
//! ```
//! use std::sync::Arc;
//! use beliefscope::inference::Inference;
//! use beliefscope::inference::sosmp::{Sosmp, SosmpParams, SosmpProblem};
//! use beliefscope::inference::sosmp::basis::{BasisKind, GridBasis};
//! use beliefscope::inference::sosmp::grid::IntervalGrid;
//! use beliefscope::inference::sosmp::model::GridMrf;
//! use beliefscope::inference::sosmp::potentials::{DifferencePotential, GaussianMixture, MixtureForm};
//! use beliefscope::model::Graph;
//! use beliefscope::scenarios::CancelFlag;
//!
//! let grid = IntervalGrid::with_density(-5.0, 5.0, 20.0).unwrap();
//! let form = MixtureForm::Eq37;
//! let bump = GaussianMixture { weights: vec![1.0], means: vec![0.5], variances: vec![0.3], form };
//! let edge = GaussianMixture { weights: vec![1.0], means: vec![0.0], variances: vec![0.2], form };
//! let graph = Graph::chain(5).unwrap();
//! let node_potentials: Vec<f64> = (0..5).flat_map(|_| bump.on_grid(&grid)).collect();
//! let pair = Arc::new(DifferencePotential::from_mixture(&grid, &edge));
//! let mrf = GridMrf { graph, grid: grid.clone(), node_potentials: node_potentials.into(),
//!                     edge_potential: vec![0; 4], pair_potentials: vec![pair] };
//! let basis = GridBasis::on_interval(BasisKind::Fourier, 7, &grid).unwrap();
//! let problem = Arc::new(SosmpProblem::new(mrf, basis, &CancelFlag::default()).unwrap());
//! let params = SosmpParams { samples: 5, paths: 2, step_gamma: 1.0, seed: 1 };
//! let mut sosmp = Sosmp::new(problem, params).unwrap();
//! for _ in 0..20 { sosmp.step().unwrap(); }
//! // phi_1 is constant, so a_1 of every message is 1/sqrt(L) after the first iteration.
//! assert!((sosmp.coefficients(0, 3)[0] - 1.0 / 10f64.sqrt()).abs() < 1e-12);
//! ```

pub mod basis;
pub mod box_grid;
pub mod expected;
pub mod flow;
pub mod gains;
pub mod grid;
pub mod kernels;
pub mod model;
pub mod potentials;
pub mod reference;
pub mod update;

use std::sync::Arc;
use std::time::Instant;

use rayon::prelude::*;

use self::basis::GridBasis;
use self::grid::StateGrid;
use self::model::{EdgeTables, GridMrf, SlotLayout};
use self::update::{Coefficient, PathState};
use super::{Belief, EstimateKind, Estimates, Inference, StepReport};
use crate::error::{Error, Result};
use crate::model::{MsgId, NodeId};
use crate::run::CancelFlag;

/// SOSMP runs one schedule: every message updated synchronously with the decreasing step size
/// `η_t = 1 / (γ (t + 1))`. Other schedules are refused with the reason.
pub fn check_schedule(schedule: super::Schedule) -> Result<()> {
    if schedule == super::Schedule::Synchronous {
        return Ok(());
    }
    Err(Error::param(
        "schedule",
        format!(
            "SOSMP updates every message synchronously with the step size 1/(γ(t+1)); its \
             convergence guarantee (Noorshams & Wainwright 2013, Theorems 1-2) is for that schedule \
             and its stochastic updates have no exact pending residual to order by, so the {} \
             schedule does not apply to it (the discrete-BP baseline has the serial schedules)",
            schedule.label()
        ),
    ))
}

/// Everything about a problem that does not change while SOSMP runs: the MRF, the basis on its
/// grid, the γ/β tables and the buffer layout. Shared (`Arc`) by the engine, the reference, the
/// floor and the views.
#[derive(Debug)]
pub struct SosmpProblem<G: StateGrid> {
    pub mrf: GridMrf<G>,
    pub basis: GridBasis,
    pub tables: EdgeTables,
    pub layout: SlotLayout,
    pub max_degree: usize,
}

impl<G: StateGrid> SosmpProblem<G> {
    /// Checks the MRF and precomputes the tables (O(n² r) per distinct γ table).
    pub fn new(mrf: GridMrf<G>, basis: GridBasis, cancel: &CancelFlag) -> Result<Self> {
        let tables = EdgeTables::new(&mrf, &basis, cancel)?;
        let layout = SlotLayout::new(&mrf.graph);
        let max_degree = (0..mrf.graph.num_nodes())
            .map(|v| mrf.graph.degree(v))
            .max()
            .unwrap_or(0);
        Ok(SosmpProblem {
            mrf,
            basis,
            tables,
            layout,
            max_degree,
        })
    }

    /// Number of coefficients r.
    pub fn r(&self) -> usize {
        self.basis.len()
    }

    /// Number of directed messages.
    pub fn num_messages(&self) -> usize {
        self.mrf.graph.num_messages()
    }

    /// `(1/|E→|) Σ_m Σ_{j≤r} (a_{m;j} - ref_{m;j})²` (eq. 38) for coefficients given per message
    /// by `coeff` and a reference in message order. O(|E→| r).
    pub fn squared_error<'a>(&self, coeff: impl Fn(MsgId) -> &'a [f64], reference: &[f64]) -> f64 {
        let r = self.r();
        let total: f64 = (0..self.num_messages())
            .map(|m| {
                coeff(m)
                    .iter()
                    .zip(&reference[m * r..(m + 1) * r])
                    .map(|(a, b)| (a - b) * (a - b))
                    .sum::<f64>()
            })
            .sum();
        total / self.num_messages() as f64
    }
}

/// The run parameters of SOSMP.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SosmpParams {
    /// Samples per message update, k.
    pub samples: usize,
    /// Independent sample paths run side by side.
    pub paths: usize,
    /// γ of the step size `η_t = 1 / (γ (t + 1))`, in (0, 2); 1 is the tree rule.
    pub step_gamma: f64,
    pub seed: u64,
}

impl SosmpParams {
    pub fn check(&self) -> Result<()> {
        if !(1..=100_000).contains(&self.samples) {
            return Err(Error::param(
                "samples",
                format!("must be between 1 and 100000, got {}", self.samples),
            ));
        }
        if !(1..=1000).contains(&self.paths) {
            return Err(Error::param(
                "paths",
                format!("must be between 1 and 1000, got {}", self.paths),
            ));
        }
        if !(self.step_gamma.is_finite() && self.step_gamma > 0.0 && self.step_gamma < 2.0) {
            return Err(Error::param(
                "step gamma",
                format!("must be in (0, 2), got {}", self.step_gamma),
            ));
        }
        Ok(())
    }

    /// `η_t = 1 / (γ (t + 1))` for the 0-based iteration `t` (so `η_0 = 1/γ`).
    pub fn step_size(&self, t: usize) -> f64 {
        1.0 / (self.step_gamma * (t as f64 + 1.0))
    }
}

/// SOSMP on a problem, with several independent sample paths, its coefficients in a `C` store
/// (`f64`, or `f32` storage with `f64` arithmetic, see [`update::Coefficient`]).
pub struct Sosmp<G: StateGrid, C: Coefficient = f64> {
    problem: Arc<SosmpProblem<G>>,
    params: SosmpParams,
    paths: Vec<PathState<G::Sample, C>>,
    iteration: usize,
    /// Largest step size used (infinite: eq. 16's `η_t` as it is).
    max_step: f64,
    /// Checked per 4096 nodes inside an iteration.
    interrupt: Option<CancelFlag>,
}

impl<G: StateGrid> Sosmp<G> {
    /// All paths start at `a_0 = 1/r`, in an `f64` store that keeps every message's latest
    /// `b` and samples.
    pub fn new(problem: Arc<SosmpProblem<G>>, params: SosmpParams) -> Result<Self> {
        Sosmp::with_store(problem, params, true)
    }

    /// Every path starts with every message at `start` (length r) instead of `a_0 = 1/r`; for
    /// instance the uniform message `(1/√V, 0, ..., 0)` of a basis whose first function is the
    /// constant `1/√V` (optical flow: `a_0 = 1/r` is a bump off the centre of the box, which the
    /// `1/t` steps then take long to forget). Errors unless `start` has r finite entries.
    pub fn with_start(
        problem: Arc<SosmpProblem<G>>,
        params: SosmpParams,
        start: &[f64],
    ) -> Result<Self> {
        Sosmp::with_start_in_store(problem, params, start, true)
    }

    /// The density the latest samples of `m` on `path` were drawn from, normalised.
    pub fn latest_sampling_density(&self, path: usize, m: MsgId) -> Vec<f64> {
        let n = self.problem.mrf.grid.len();
        let mut eval = vec![0.0; n];
        let mut out = vec![0.0; n];
        update::sampling_density(
            &self.problem,
            |w| self.previous_coefficients(path, w),
            m,
            &mut eval,
            &mut out,
        );
        let weights = self.problem.mrf.grid.weights();
        let mass = update::normalise(weights, &mut out);
        if mass.is_nan() || mass <= 0.0 {
            out.copy_from_slice(self.problem.tables.beta(&self.problem.mrf, m, &mut eval));
            update::normalise(weights, &mut out);
        }
        out
    }
}

impl<G: StateGrid, C: Coefficient> Sosmp<G, C> {
    /// All paths start at `a_0 = 1/r` in a `C` store; `keep_draws` keeps every message's latest
    /// `b` and samples (for views; [`Self::last_b`] and [`Self::samples`] are empty without).
    pub fn with_store(
        problem: Arc<SosmpProblem<G>>,
        params: SosmpParams,
        keep_draws: bool,
    ) -> Result<Self> {
        params.check()?;
        let (m, r) = (problem.num_messages(), problem.r());
        let paths = (0..params.paths)
            .map(|_| PathState::with_store(m, r, params.samples, keep_draws))
            .collect();
        Ok(Sosmp {
            problem,
            params,
            paths,
            iteration: 0,
            max_step: f64::INFINITY,
            interrupt: None,
        })
    }

    /// [`Sosmp::with_start`] in a `C` store, keeping the draws or not (see [`Self::with_store`]).
    pub fn with_start_in_store(
        problem: Arc<SosmpProblem<G>>,
        params: SosmpParams,
        start: &[f64],
        keep_draws: bool,
    ) -> Result<Self> {
        let r = problem.r();
        if start.len() != r || start.iter().any(|a| !a.is_finite()) {
            return Err(Error::param(
                "initial coefficients",
                format!("need {r} finite numbers, got {}", start.len()),
            ));
        }
        let mut s = Sosmp::with_store(problem, params, keep_draws)?;
        let start: Vec<C> = start.iter().map(|&a| C::from_f64(a)).collect();
        for p in &mut s.paths {
            for (row, prev) in p.coeffs.chunks_mut(r).zip(p.prev.chunks_mut(r)) {
                row.copy_from_slice(&start);
                prev.copy_from_slice(&start);
            }
        }
        Ok(s)
    }

    /// Caps the step size: `η_t = min(cap, 1 / (γ (t + 1)))`. With `γ < 1` the first steps of
    /// Theorem 2's rule exceed 1, so `a_{t+1} = (1 - η) a_t + η b` extrapolates past the fresh
    /// estimate `b`; the expansion then goes negative over most of the box, and the clipped
    /// incoming messages of a pixel can have disjoint supports (the sampling density is zero
    /// everywhere). A cap of 1 keeps every `a_t` a convex combination of projected BP updates.
    /// Errors unless `cap` is positive.
    pub fn set_max_step(&mut self, cap: f64) -> Result<()> {
        if cap.is_nan() || cap <= 0.0 {
            return Err(Error::param(
                "step cap",
                format!("must be positive, got {cap}"),
            ));
        }
        self.max_step = cap;
        Ok(())
    }

    /// The step size of 0-based iteration `t`, after the cap.
    pub fn step_size(&self, t: usize) -> f64 {
        self.params.step_size(t).min(self.max_step)
    }

    pub fn problem(&self) -> &Arc<SosmpProblem<G>> {
        &self.problem
    }

    pub fn params(&self) -> &SosmpParams {
        &self.params
    }

    pub fn num_paths(&self) -> usize {
        self.paths.len()
    }

    fn row<'a, T>(&self, buf: &'a [T], m: MsgId) -> &'a [T] {
        let r = self.problem.r();
        let s = self.problem.layout.slot_of[m];
        &buf[s * r..(s + 1) * r]
    }

    /// `a_t` of message `m` on `path`, as stored.
    pub fn coefficients(&self, path: usize, m: MsgId) -> &[C] {
        self.row(&self.paths[path].coeffs, m)
    }

    /// `a_{t-1}` of message `m` on `path` (what the latest samples were drawn with), as stored.
    pub fn previous_coefficients(&self, path: usize, m: MsgId) -> &[C] {
        self.row(&self.paths[path].prev, m)
    }

    /// The latest `b` of message `m` on `path` (zeros before the first iteration; empty when
    /// the draws are not kept).
    pub fn last_b(&self, path: usize, m: MsgId) -> &[f64] {
        if self.paths[path].last_b.is_empty() {
            return &[];
        }
        self.row(&self.paths[path].last_b, m)
    }

    /// The latest `k` samples of message `m` on `path` (empty when the draws are not kept).
    pub fn samples(&self, path: usize, m: MsgId) -> &[G::Sample] {
        if self.paths[path].samples.is_empty() {
            return &[];
        }
        let k = self.params.samples;
        let s = self.problem.layout.slot_of[m];
        &self.paths[path].samples[s * k..(s + 1) * k]
    }

    /// All of `path`'s coefficients in message order (`[m * r + j]`).
    pub fn coefficients_by_message(&self, path: usize) -> Vec<f64> {
        (0..self.problem.num_messages())
            .flat_map(|m| self.coefficients(path, m).iter().map(|a| a.to_f64()))
            .collect()
    }

    /// Eq. 38 error of `path` against a reference in message order. O(|E→| r).
    pub fn squared_error(&self, path: usize, reference: &[f64]) -> f64 {
        let coefficients = self.coefficients_by_message(path);
        let r = self.problem.r();
        self.problem
            .squared_error(|m| &coefficients[m * r..(m + 1) * r], reference)
    }

    /// Fallbacks to `β` so far, over all paths.
    pub fn fallbacks(&self) -> u64 {
        self.paths.iter().map(|p| p.fallbacks).sum()
    }

    /// `ψ_u Π m̂_{w->u}` of `path`, normalised. O(deg · n r).
    pub fn belief_values(&self, path: usize, u: NodeId) -> Vec<f64> {
        let n = self.problem.mrf.grid.len();
        let (mut out, mut eval) = (vec![0.0; n], vec![0.0; n]);
        let mut row = vec![0.0; self.problem.r()];
        update::belief_into_stored(
            &self.problem,
            |m| self.coefficients(path, m),
            u,
            &mut row,
            &mut eval,
            &mut out,
        );
        out
    }
}

impl<G: StateGrid, C: Coefficient> Inference for Sosmp<G, C> {
    /// One synchronous iteration of every path (rayon over paths and nodes). Residual: the
    /// largest absolute change of any coefficient on any path.
    fn step(&mut self) -> Result<StepReport> {
        let start = Instant::now();
        let t = self.iteration;
        let eta = self.step_size(t);
        let problem = &*self.problem;
        let (seed, k) = (self.params.seed, self.params.samples);
        let outcome: Result<Vec<f64>> = self
            .paths
            .par_iter_mut()
            .enumerate()
            .map(|(p, state)| {
                let step = update::PathStep {
                    seed,
                    samples: k,
                    path: p,
                    iteration: t,
                    eta,
                    interrupt: self.interrupt.as_ref(),
                };
                update::step_path(problem, step, state)?;
                Ok(state
                    .coeffs
                    .iter()
                    .zip(&state.prev)
                    .map(|(a, b)| (a.to_f64() - b.to_f64()).abs())
                    .fold(0.0, f64::max))
            })
            .collect();
        let residual = outcome?.into_iter().fold(0.0, f64::max);
        self.iteration += 1;
        Ok(StepReport {
            iteration: self.iteration,
            residual,
            seconds: start.elapsed().as_secs_f64(),
            updates: self.paths.len() * self.problem.num_messages(),
        })
    }

    fn set_interrupt(&mut self, flag: CancelFlag) {
        self.interrupt = Some(flag);
    }

    fn iteration(&self) -> usize {
        self.iteration
    }

    /// The belief of path 0 on the grid.
    fn belief(&self, node: NodeId) -> Belief {
        self.problem.mrf.grid.to_belief(self.belief_values(0, node))
    }

    /// Path 0's MAP (best grid node) or posterior mean, `dim` coordinates per node (rayon over
    /// nodes, O(deg · n r) each).
    fn estimates(&self, kind: EstimateKind) -> Estimates {
        let grid = &self.problem.mrf.grid;
        let dim = grid.dim();
        let n = grid.len();
        let nodes = self.problem.mrf.graph.num_nodes();
        let weights = grid.weights();
        // Node coordinates once, node-major.
        let mut coords = vec![0.0; n * dim];
        for (i, c) in coords.chunks_mut(dim).enumerate() {
            grid.node_coordinates(i, c);
        }
        let mut values = vec![0.0; nodes * dim];
        let r = self.problem.r();
        values.par_chunks_mut(dim).enumerate().for_each_init(
            || (vec![0.0; n], vec![0.0; n], vec![0.0; r]),
            |(eval, b, row), (u, est)| {
                update::belief_into_stored(
                    &self.problem,
                    |m| self.coefficients(0, m),
                    u,
                    row,
                    eval,
                    b,
                );
                match kind {
                    EstimateKind::Map => {
                        let best = b
                            .iter()
                            .enumerate()
                            .fold(
                                (0, f64::NEG_INFINITY),
                                |acc, (i, &v)| {
                                    if v > acc.1 { (i, v) } else { acc }
                                },
                            )
                            .0;
                        est.copy_from_slice(&coords[best * dim..(best + 1) * dim]);
                    }
                    EstimateKind::Mean => {
                        est.iter_mut().for_each(|e| *e = 0.0);
                        for (i, (&bi, &w)) in b.iter().zip(weights).enumerate() {
                            let p = &coords[i * dim..(i + 1) * dim];
                            for (e, c) in est.iter_mut().zip(p) {
                                *e += w * bi * c;
                            }
                        }
                    }
                }
            },
        );
        Estimates { dim, values }
    }

    fn fallbacks(&self) -> u64 {
        Sosmp::fallbacks(self)
    }
}
