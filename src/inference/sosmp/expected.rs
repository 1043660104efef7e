//! The approximation floor: the fixed point `a_∞` of SOSMP's *expected* update.
//!
//! SOSMP's `b` is an unbiased estimate of `G(a)_j = E[γ_j(Y)]`, `Y` drawn from the sampling
//! density `β_uv Π m̂_{w->v}` (Fig. 3). With step sizes `1/(t+1)` the iterates converge to the
//! fixed point `a_∞ = G(a_∞)` (stochastic approximation), so `e(a_∞)` (eq. 38 at `a_∞`) is the
//! error that remains with infinitely many iterations: the price of r coefficients and of
//! clipping, as opposed to the Monte Carlo error that falls like 1/t. `G` is computed exactly on
//! the grid, with the sampler's own expectation weights (see [`super::grid`]), so `E[b] = G(a)`
//! holds to rounding, not only up to quadrature error.
//!
//! On a tree `G` is computed once per message in dependency order (exact, like the reference);
//! with cycles, `a <- G(a)` is iterated synchronously from `a_0 = 1/r` until the largest change of
//! a coefficient falls below the tolerance. Cost O(deg · n r) per message and sweep.
//!
//! [`noise_free_iteration`] runs SOSMP without its Monte Carlo noise, the damped iteration
//! `a <- (1 - η_t) a + η_t G(a)` from `a_0 = 1/r`: the deterministic transient that the paths' mean
//! follows, and the part of Theorem 1's bound (eq. 26) that is a polynomial in `log t`. O(T ·
//! |E→| · deg · n r).

use rayon::prelude::*;

use super::SosmpProblem;
use super::grid::StateGrid;
use super::kernels;
use super::reference::tree_message_order;
use super::update::sampling_density;
use crate::error::Result;
use crate::model::MsgId;
use crate::run::CancelFlag;

/// The expected-update fixed point.
#[derive(Debug, Clone)]
pub struct ExpectedFixedPoint {
    /// `a_∞`, message order (`[m * r + j]`).
    pub coefficients: Vec<f64>,
    /// Synchronous sweeps run (on a tree: 1, the verification sweep).
    pub sweeps: usize,
    /// The largest coefficient change in the last sweep.
    pub residual: f64,
    pub converged: bool,
    /// Messages whose density at the fixed point was zero everywhere (fell back to β).
    pub fallbacks: usize,
}

/// Scratch for [`expected_update`].
pub struct ExpectedScratch {
    eval: Vec<f64>,
    density: Vec<f64>,
    omega: Vec<f64>,
}

impl ExpectedScratch {
    pub fn new(n: usize) -> Self {
        ExpectedScratch {
            eval: vec![0.0; n],
            density: vec![0.0; n],
            omega: vec![0.0; n],
        }
    }
}

/// `G(a)` for message `m` into `out` (length r); returns true if the density had no mass and
/// `β` was used instead (as the sampler does). O(deg · n r).
pub fn expected_update<'a, G: StateGrid>(
    problem: &SosmpProblem<G>,
    coeff: impl Fn(MsgId) -> &'a [f64],
    m: MsgId,
    scratch: &mut ExpectedScratch,
    out: &mut [f64],
) -> bool {
    let grid = &problem.mrf.grid;
    sampling_density(problem, coeff, m, &mut scratch.eval, &mut scratch.density);
    let mut total = grid.expectation_weights(&scratch.density, &mut scratch.omega);
    let fallback = !(total > 0.0 && total.is_finite());
    if fallback {
        let beta = problem.tables.beta(&problem.mrf, m, &mut scratch.eval);
        total = grid.expectation_weights(beta, &mut scratch.omega);
    }
    let r = problem.basis.len();
    let gamma = problem.tables.gamma(m);
    out.iter_mut().for_each(|o| *o = 0.0);
    for (i, &w) in scratch.omega.iter().enumerate() {
        if w != 0.0 {
            kernels::axpy(w, &gamma[i * r..(i + 1) * r], out);
        }
    }
    out.iter_mut().for_each(|o| *o /= total);
    fallback
}

/// One synchronous sweep `new = G(old)`; returns (largest change, fallbacks).
fn sweep<G: StateGrid>(problem: &SosmpProblem<G>, old: &[f64], new: &mut [f64]) -> (f64, usize) {
    let r = problem.basis.len();
    let n = problem.mrf.grid.len();
    new.par_chunks_mut(r)
        .enumerate()
        .map_init(
            || ExpectedScratch::new(n),
            |sc, (m, out)| {
                let fb = expected_update(problem, |w| &old[w * r..(w + 1) * r], m, sc, out);
                let change = old[m * r..(m + 1) * r]
                    .iter()
                    .zip(out.iter())
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f64::max);
                (change, usize::from(fb))
            },
        )
        .reduce(|| (0.0, 0), |a, b| (a.0.max(b.0), a.1 + b.1))
}

/// The fixed point of the expected update (see the module doc).
pub fn expected_fixed_point<G: StateGrid>(
    problem: &SosmpProblem<G>,
    tolerance: f64,
    max_sweeps: usize,
    cancel: &CancelFlag,
) -> Result<ExpectedFixedPoint> {
    let r = problem.basis.len();
    let n = problem.mrf.grid.len();
    let graph = &problem.mrf.graph;
    let mut coeffs = vec![1.0 / r as f64; graph.num_messages() * r];
    let mut next = coeffs.clone();
    if graph.check_tree().is_ok() {
        let mut sc = ExpectedScratch::new(n);
        let mut out = vec![0.0; r];
        for m in tree_message_order(graph) {
            expected_update(
                problem,
                |w| &coeffs[w * r..(w + 1) * r],
                m,
                &mut sc,
                &mut out,
            );
            coeffs[m * r..(m + 1) * r].copy_from_slice(&out);
        }
        cancel.check()?;
        let (residual, fallbacks) = sweep(problem, &coeffs, &mut next);
        return Ok(ExpectedFixedPoint {
            coefficients: coeffs,
            sweeps: 1,
            residual,
            converged: residual < tolerance.max(1e-9),
            fallbacks,
        });
    }
    let mut residual = f64::INFINITY;
    let mut fallbacks = 0;
    let mut sweeps = 0;
    while sweeps < max_sweeps && residual >= tolerance {
        if sweeps % 16 == 0 {
            cancel.check()?;
        }
        (residual, fallbacks) = sweep(problem, &coeffs, &mut next);
        std::mem::swap(&mut coeffs, &mut next);
        sweeps += 1;
    }
    Ok(ExpectedFixedPoint {
        coefficients: coeffs,
        sweeps,
        residual,
        converged: residual < tolerance,
        fallbacks,
    })
}

/// The noise-free damped iteration `a_{t+1} = (1 - η_t) a_t + η_t G(a_t)` (synchronous, every
/// message from the previous iterate), `η_t = 1 / (γ (t + 1))`, from `a_0 = 1/r`, for `iters`
/// iterations: returns `(1/|E→|) Σ_m ‖a_t - target_m‖²` for `t = 1..=iters` (eq. 38's distance,
/// raw). Cancellable every 16 iterations. O(iters · |E→| · deg · n r), rayon over messages.
pub fn noise_free_iteration<G: StateGrid>(
    problem: &SosmpProblem<G>,
    target: &[f64],
    step_gamma: f64,
    iters: usize,
    cancel: &CancelFlag,
) -> Result<Vec<f64>> {
    let r = problem.basis.len();
    let n = problem.mrf.grid.len();
    let messages = problem.mrf.graph.num_messages();
    let mut a = vec![1.0 / r as f64; messages * r];
    let mut next = a.clone();
    let mut out = Vec::with_capacity(iters);
    for t in 0..iters {
        if t % 16 == 0 {
            cancel.check()?;
        }
        let eta = 1.0 / (step_gamma * (t as f64 + 1.0));
        next.par_chunks_mut(r).enumerate().for_each_init(
            || (ExpectedScratch::new(n), vec![0.0; r]),
            |(sc, g), (m, dst)| {
                expected_update(problem, |w| &a[w * r..(w + 1) * r], m, sc, g);
                for ((d, &old), &gj) in dst.iter_mut().zip(&a[m * r..(m + 1) * r]).zip(g.iter()) {
                    *d = (1.0 - eta) * old + eta * gj;
                }
            },
        );
        std::mem::swap(&mut a, &mut next);
        let dist: f64 = a.iter().zip(target).map(|(x, y)| (x - y) * (x - y)).sum();
        out.push(dist / messages as f64);
    }
    Ok(out)
}
