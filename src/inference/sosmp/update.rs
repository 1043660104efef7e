//! The SOSMP update of one sample path (Noorshams & Wainwright 2013, Fig. 3, eqs. 13-17).
//!
//! For every node `v` (rayon over nodes), once per iteration: evaluate its clipped incoming
//! messages `m̂_{w->v} = max(0, Σ_j a_j φ_j)` on the grid (O(deg · n r)); then for each outgoing
//! message `v -> u`: form the sampling density `β_uv Π_{w ∈ N(v)\u} m̂_{w->v}` (leave-one-out
//! products by prefix and suffix products when deg > 2, no division), prepare its inverse CDF
//! (O(n)), draw k samples from the message's own random stream, average the interpolated γ rows
//! into `b` (O(k (log n + r))), and set `a <- (1 - η) a + η b`. Everything per node reads the
//! previous iteration's coefficients only (synchronous), and all scratch is allocated once per
//! rayon job, never per edge.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::SosmpProblem;
use super::grid::{CellSampler, StateGrid};
use super::kernels;
use crate::error::{Error, Result};
use crate::model::{MsgId, NodeId};
use crate::run::CancelFlag;

/// Top bits of the second key word: which kind of randomness a ChaCha stream feeds.
const SAMPLING_STREAM: u64 = 1 << 62;
/// Tag of the model-drawing stream (potential parameters).
pub const MODEL_STREAM: u64 = 2 << 62;

/// The ChaCha key of one random stream: `(seed, tag | path, iteration, message)`. Every
/// (path, iteration, message) triple gets its own stream, so results do not depend on how
/// rayon splits the work.
pub fn stream_key(seed: u64, tag_path: u64, iteration: u64, message: u64) -> [u8; 32] {
    let mut key = [0u8; 32];
    for (chunk, word) in key
        .chunks_exact_mut(8)
        .zip([seed, tag_path, iteration, message])
    {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    key
}

/// The sampling stream of `(path, iteration, message)` under `seed`.
pub fn sampling_rng(seed: u64, path: usize, iteration: usize, message: MsgId) -> ChaCha8Rng {
    ChaCha8Rng::from_seed(stream_key(
        seed,
        SAMPLING_STREAM | path as u64,
        iteration as u64,
        message as u64,
    ))
}

/// How a path stores its coefficients: `f64`, or `f32` storage with `f64` arithmetic (every
/// read widens to `f64`, every update is computed in `f64` and rounded once when stored, a
/// relative 6e-8: far below the Monte Carlo error of `k` samples). The store is most of a large
/// problem's memory (optical flow: `2 r` numbers per directed edge).
pub trait Coefficient: Copy + Default + Send + Sync + std::fmt::Debug + 'static {
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    /// `row` as `f64`: itself for an `f64` store, else widened into `buf` (length `row.len()`).
    fn widened<'a>(row: &'a [Self], buf: &'a mut [f64]) -> &'a [f64];
}

impl Coefficient for f64 {
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn widened<'a>(row: &'a [f64], _buf: &'a mut [f64]) -> &'a [f64] {
        row
    }
}

impl Coefficient for f32 {
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    #[inline(always)]
    fn widened<'a>(row: &'a [f32], buf: &'a mut [f64]) -> &'a [f64] {
        let buf = &mut buf[..row.len()];
        for (o, &a) in buf.iter_mut().zip(row) {
            *o = f64::from(a);
        }
        buf
    }
}

/// The state of one sample path. Buffers are slot-major (see [`super::model::SlotLayout`]).
#[derive(Debug, Clone)]
pub struct PathState<S, C = f64> {
    /// `a_t`, `r` per slot.
    pub coeffs: Vec<C>,
    /// `a_{t-1}` (the coefficients the latest samples were drawn with).
    pub prev: Vec<C>,
    /// The latest `b`, `r` per slot (empty when the path keeps no draws, see
    /// [`PathState::with_store`]).
    pub last_b: Vec<f64>,
    /// The latest `k` samples, `k` per slot (empty when the path keeps no draws).
    pub samples: Vec<S>,
    /// Densities that were zero everywhere and fell back to `β`.
    pub fallbacks: u64,
}

impl<S: Copy + Default> PathState<S> {
    /// `a_0 = 1/r` for every coefficient of every message, `f64` storage, the latest `b` and
    /// samples kept.
    pub fn new(messages: usize, r: usize, k: usize) -> Self {
        PathState::with_store(messages, r, k, true)
    }
}

impl<S: Copy + Default, C: Coefficient> PathState<S, C> {
    /// `a_0 = 1/r` for every coefficient of every message in a `C` store; with `keep_draws`
    /// false the latest `b` and samples of each message (for views) are not kept, which saves
    /// `r` numbers and `k` samples per message.
    pub fn with_store(messages: usize, r: usize, k: usize, keep_draws: bool) -> Self {
        let coeffs = vec![C::from_f64(1.0 / r as f64); messages * r];
        let kept = if keep_draws { messages } else { 0 };
        PathState {
            prev: coeffs.clone(),
            coeffs,
            last_b: vec![0.0; kept * r],
            samples: vec![S::default(); kept * k],
            fallbacks: 0,
        }
    }

    /// True when the latest `b` and samples are kept.
    pub fn keeps_draws(&self) -> bool {
        !self.samples.is_empty() || self.coeffs.is_empty()
    }
}

/// Scratch of one rayon job.
struct NodeScratch<S> {
    /// Clipped incoming messages, `deg x n`.
    eval: Vec<f64>,
    /// Prefix products (deg > 2), `deg x n`.
    prefix: Vec<f64>,
    suffix: Vec<f64>,
    density: Vec<f64>,
    sampler: CellSampler,
    b: Vec<f64>,
    /// `ψ_v` when computed, `β_m` when not stored.
    psi: Vec<f64>,
    beta: Vec<f64>,
    /// One message's coefficients widened to `f64`.
    row: Vec<f64>,
    /// The latest draws of one message when the path keeps none.
    drawn: Vec<S>,
}

impl<S: Copy + Default> NodeScratch<S> {
    fn new(n: usize, cells: usize, max_degree: usize, r: usize, k: usize) -> Self {
        NodeScratch {
            eval: vec![0.0; max_degree * n],
            prefix: vec![0.0; if max_degree > 2 { max_degree * n } else { 0 }],
            suffix: vec![0.0; if max_degree > 2 { n } else { 0 }],
            density: vec![0.0; n],
            sampler: CellSampler::new(cells),
            b: vec![0.0; r],
            psi: vec![0.0; n],
            beta: vec![0.0; n],
            row: vec![0.0; r],
            drawn: vec![S::default(); k],
        }
    }
}

/// Nodes between two checks of the interrupt flag (a large flow level's iteration takes
/// seconds).
const NODES_PER_CHECK: usize = 4096;

/// Which iteration of which path [`step_path`] takes, and what stops it.
#[derive(Debug, Clone, Copy)]
pub struct PathStep<'a> {
    /// The run's seed: with `path` and `iteration` it names the random stream of the draws.
    pub seed: u64,
    /// Samples per message update, k.
    pub samples: usize,
    pub path: usize,
    /// `t`, 0-based.
    pub iteration: usize,
    /// The step size `η_t`.
    pub eta: f64,
    /// Checked per 4096 nodes; once raised the path is left as it was and
    /// `Err(Cancelled)` returned.
    pub interrupt: Option<&'a CancelFlag>,
}

/// One synchronous SOSMP iteration of one path: `a_{t+1} = (1 - η) a_t + η b_t`, where
/// Returns the number of fallbacks. Errors if some `b` is not finite or the interrupt flag is
/// raised (the state is then not advanced).
pub fn step_path<G: StateGrid, C: Coefficient>(
    problem: &SosmpProblem<G>,
    step: PathStep<'_>,
    state: &mut PathState<G::Sample, C>,
) -> Result<u64> {
    let PathStep {
        seed,
        samples,
        path,
        iteration,
        eta,
        interrupt,
    } = step;
    let graph = &problem.mrf.graph;
    let layout = &problem.layout;
    let r = problem.basis.len();
    let k = samples;
    let n = problem.mrf.grid.len();
    let cells = problem.mrf.grid.num_cells();
    let max_degree = problem.max_degree;
    let keep = state.keeps_draws();
    std::mem::swap(&mut state.prev, &mut state.coeffs);
    let job = NodeJob {
        problem,
        seed,
        k,
        path,
        iteration,
        eta,
        prev: &state.prev,
    };

    // Split the slot-major outputs into one chunk per node (O(nodes) pointers per iteration).
    let mut tasks = Vec::with_capacity(graph.num_nodes());
    {
        let mut coeffs: &mut [C] = &mut state.coeffs;
        let mut bs: &mut [f64] = &mut state.last_b;
        let mut ss: &mut [G::Sample] = &mut state.samples;
        // Without kept draws each node gets empty `b` and sample slices.
        let (kr, kk) = if keep { (r, k) } else { (0, 0) };
        for v in 0..graph.num_nodes() {
            let d = layout.node_start[v + 1] - layout.node_start[v];
            let (c, rest) = std::mem::take(&mut coeffs).split_at_mut(d * r);
            coeffs = rest;
            let (b, rest) = std::mem::take(&mut bs).split_at_mut(d * kr);
            bs = rest;
            let (s, rest) = std::mem::take(&mut ss).split_at_mut(d * kk);
            ss = rest;
            tasks.push((v, c, b, s));
        }
    }
    let outcome: Result<u64> = tasks
        .into_par_iter()
        .map_init(
            || NodeScratch::new(n, cells, max_degree, r, k),
            |scratch, (v, out, b_out, s_out)| {
                if v % NODES_PER_CHECK == 0 {
                    interrupt.map_or(Ok(()), CancelFlag::check)?;
                }
                update_node(&job, v, out, b_out, s_out, scratch)
            },
        )
        .try_reduce(|| 0, |a, b| Ok(a + b));
    match outcome {
        Ok(f) => {
            state.fallbacks += f;
            Ok(f)
        }
        Err(e) => {
            // Leave the path as it was after the last good iteration.
            std::mem::swap(&mut state.prev, &mut state.coeffs);
            Err(e)
        }
    }
}

/// What every node's update in one iteration of one path reads.
struct NodeJob<'a, G: StateGrid, C> {
    problem: &'a SosmpProblem<G>,
    seed: u64,
    k: usize,
    path: usize,
    iteration: usize,
    eta: f64,
    /// The coefficients before this iteration (all messages).
    prev: &'a [C],
}

impl<G: StateGrid, C> Clone for NodeJob<'_, G, C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<G: StateGrid, C> Copy for NodeJob<'_, G, C> {}

/// Dispatches to a copy of [`update_node_body`] compiled for AVX2 when the CPU has it (the
/// loops are twice as wide). Only plain multiplies and adds are used, never fused
/// multiply-adds, so both copies give bit-identical results.
fn update_node<G: StateGrid, C: Coefficient>(
    job: &NodeJob<'_, G, C>,
    v: NodeId,
    out: &mut [C],
    b_out: &mut [f64],
    s_out: &mut [G::Sample],
    sc: &mut NodeScratch<G::Sample>,
) -> Result<u64> {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked on the line above).
        return unsafe { update_node_avx2(job, v, out, b_out, s_out, sc) };
    }
    update_node_body(job, v, out, b_out, s_out, sc)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn update_node_avx2<G: StateGrid, C: Coefficient>(
    job: &NodeJob<'_, G, C>,
    v: NodeId,
    out: &mut [C],
    b_out: &mut [f64],
    s_out: &mut [G::Sample],
    sc: &mut NodeScratch<G::Sample>,
) -> Result<u64> {
    update_node_body(job, v, out, b_out, s_out, sc)
}

#[inline(always)]
fn update_node_body<G: StateGrid, C: Coefficient>(
    job: &NodeJob<'_, G, C>,
    v: NodeId,
    out: &mut [C],
    b_out: &mut [f64],
    s_out: &mut [G::Sample],
    sc: &mut NodeScratch<G::Sample>,
) -> Result<u64> {
    let NodeJob {
        problem,
        seed,
        k,
        path,
        iteration,
        eta,
        prev,
    } = *job;
    let grid = &problem.mrf.grid;
    let basis = &problem.basis;
    let tables = &problem.tables;
    let layout = &problem.layout;
    let r = basis.len();
    let n = grid.len();
    let nbrs = problem.mrf.graph.neighbors(v);
    let d = nbrs.len();
    let NodeScratch {
        eval,
        prefix,
        suffix,
        density: density_buf,
        sampler,
        b: b_acc,
        psi: psi_buf,
        beta: beta_buf,
        row,
        drawn: drawn_buf,
    } = sc;
    if d >= 2 {
        for (i, nb) in nbrs.iter().enumerate() {
            let s = layout.slot_of[nb.incoming];
            let a = C::widened(&prev[s * r..(s + 1) * r], row);
            basis.evaluate_clipped_blocked(a, &mut eval[i * n..(i + 1) * n]);
        }
    }
    if d >= 3 {
        prefix[..n].iter_mut().for_each(|p| *p = 1.0);
        for i in 0..d - 1 {
            let (done, rest) = prefix.split_at_mut((i + 1) * n);
            kernels::mul_into(&done[i * n..], &eval[i * n..(i + 1) * n], &mut rest[..n]);
        }
        suffix.iter_mut().for_each(|p| *p = 1.0);
    }
    // ψ_v once per node (a slice of the table, or computed), then β_m per message.
    // (Tabulated potentials come with stored β rows, which need no ψ.)
    let psi: &[f64] = if problem.mrf.node_potentials.table().is_some() {
        &[]
    } else {
        problem.mrf.node_potential_into(v, psi_buf)
    };
    let base = layout.node_start[v];
    let inv_k = 1.0 / k as f64;
    let mut fallbacks = 0;
    // The γ table whose Z is in `beta_buf` (messages sharing a table share β = ψ_v Z).
    let mut beta_table = usize::MAX;
    for o in (0..d).rev() {
        let m = nbrs[o].outgoing;
        let beta: &[f64] = match tables.stored_beta(m) {
            Some(b) => b,
            None => {
                let t = tables.table_index(m);
                if t != beta_table {
                    kernels::mul_into(psi, tables.normaliser(m), beta_buf);
                    beta_table = t;
                }
                beta_buf
            }
        };
        let density: &[f64] = match d {
            1 => beta,
            2 => {
                kernels::mul_into(beta, &eval[(1 - o) * n..(2 - o) * n], density_buf);
                density_buf
            }
            _ => {
                kernels::mul_into(&prefix[o * n..(o + 1) * n], suffix, density_buf);
                kernels::mul_assign(density_buf, beta);
                kernels::mul_assign(suffix, &eval[o * n..(o + 1) * n]);
                density_buf
            }
        };
        let total = sampler.prepare(grid, density);
        if !(total > 0.0 && total.is_finite()) {
            // Fig. 3 leaves this case open; sampling from β alone keeps the update defined.
            fallbacks += 1;
            sampler.prepare(grid, beta);
        }
        let mut rng = sampling_rng(seed, path, iteration, m);
        let gamma = tables.gamma(m);
        b_acc.iter_mut().for_each(|b| *b = 0.0);
        let drawn = if s_out.is_empty() {
            &mut drawn_buf[..]
        } else {
            &mut s_out[o * k..(o + 1) * k]
        };
        for slot in drawn.iter_mut() {
            *slot = sampler.draw(grid, &mut rng);
        }
        // Look-ups after all draws, so the (cache-missing) table rows load in parallel.
        for s in drawn.iter() {
            grid.accumulate_row(gamma, r, s, inv_k, b_acc);
        }
        if b_acc.iter().any(|b| !b.is_finite()) {
            return Err(Error::Diverged {
                iteration: iteration + 1,
                detail: format!(
                    "path {path}: message {v} -> {} has a non-finite coefficient",
                    nbrs[o].node
                ),
            });
        }
        let old = &prev[(base + o) * r..(base + o + 1) * r];
        let new = &mut out[o * r..(o + 1) * r];
        for ((a, &a_old), &b) in new.iter_mut().zip(old).zip(b_acc.iter()) {
            *a = C::from_f64((1.0 - eta) * a_old.to_f64() + eta * b);
        }
        if !b_out.is_empty() {
            b_out[o * r..(o + 1) * r].copy_from_slice(b_acc);
        }
    }
    Ok(fallbacks)
}

/// The sampling density of message `m = v -> u` for the coefficients `coeff(w)` of the other
/// messages: `β_m Π_{w ∈ N(v)\u} max(0, Σ_j a_{w->v;j} φ_j)`, unnormalised, into `out`.
/// O(deg · n r); for views, beliefs and the expected update, not the hot loop.
pub fn sampling_density<'a, G: StateGrid>(
    problem: &SosmpProblem<G>,
    coeff: impl Fn(MsgId) -> &'a [f64],
    m: MsgId,
    eval: &mut [f64],
    out: &mut [f64],
) {
    let graph = &problem.mrf.graph;
    let (v, u) = (graph.source(m), graph.target(m));
    out.copy_from_slice(problem.tables.beta(&problem.mrf, m, eval));
    for nb in graph.neighbors(v) {
        if nb.node == u {
            continue;
        }
        problem.basis.evaluate_clipped(coeff(nb.incoming), eval);
        kernels::mul_assign(out, eval);
    }
}

/// `ψ_u Π_{w ∈ N(u)} max(0, Σ_j a_{w->u;j} φ_j)` normalised to integrate to 1 (unnormalised if
/// it has no mass). O(deg · n r).
pub fn belief_values<'a, G: StateGrid>(
    problem: &SosmpProblem<G>,
    coeff: impl Fn(MsgId) -> &'a [f64],
    u: NodeId,
) -> Vec<f64> {
    let n = problem.mrf.grid.len();
    let mut out = vec![0.0; n];
    let mut eval = vec![0.0; n];
    belief_into(problem, coeff, u, &mut eval, &mut out);
    out
}

/// [`belief_values`] into `out` with `eval` as scratch (both of length n), allocation-free.
/// Compiled for AVX2 where the CPU has it (no fused multiply-adds: the same numbers).
pub fn belief_into<'a, G: StateGrid>(
    problem: &SosmpProblem<G>,
    coeff: impl Fn(MsgId) -> &'a [f64],
    u: NodeId,
    eval: &mut [f64],
    out: &mut [f64],
) {
    belief_into_stored(problem, coeff, u, &mut [], eval, out)
}

/// [`belief_into`] for coefficients in any store, widened through `row` (r numbers; unused for
/// an `f64` store).
pub fn belief_into_stored<'a, G: StateGrid, C: Coefficient>(
    problem: &SosmpProblem<G>,
    coeff: impl Fn(MsgId) -> &'a [C],
    u: NodeId,
    row: &mut [f64],
    eval: &mut [f64],
    out: &mut [f64],
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked on the line above).
        return unsafe { belief_into_avx2(problem, coeff, u, row, eval, out) };
    }
    belief_into_body(problem, coeff, u, row, eval, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn belief_into_avx2<'a, G: StateGrid, C: Coefficient>(
    problem: &SosmpProblem<G>,
    coeff: impl Fn(MsgId) -> &'a [C],
    u: NodeId,
    row: &mut [f64],
    eval: &mut [f64],
    out: &mut [f64],
) {
    belief_into_body(problem, coeff, u, row, eval, out)
}

#[inline(always)]
fn belief_into_body<'a, G: StateGrid, C: Coefficient>(
    problem: &SosmpProblem<G>,
    coeff: impl Fn(MsgId) -> &'a [C],
    u: NodeId,
    row: &mut [f64],
    eval: &mut [f64],
    out: &mut [f64],
) {
    let psi = problem.mrf.node_potential_into(u, eval);
    out.copy_from_slice(psi);
    for nb in problem.mrf.graph.neighbors(u) {
        let a = C::widened(coeff(nb.incoming), row);
        problem.basis.evaluate_clipped_blocked(a, eval);
        kernels::mul_assign(out, eval);
    }
    normalise(problem.mrf.grid.weights(), out);
}

/// Scales `f` so that `Σ w_i f_i = 1`; returns the old integral (left alone if not positive).
pub fn normalise(weights: &[f64], f: &mut [f64]) -> f64 {
    let z = kernels::dot(weights, f);
    if z > 0.0 && z.is_finite() {
        f.iter_mut().for_each(|v| *v /= z);
    }
    z
}
