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

/// The state of one sample path. Buffers are slot-major (see [`super::model::SlotLayout`]).
#[derive(Debug, Clone)]
pub struct PathState<S> {
    /// `a_t`, `r` per slot.
    pub coeffs: Vec<f64>,
    /// `a_{t-1}` (the coefficients the latest samples were drawn with).
    pub prev: Vec<f64>,
    /// The latest `b`, `r` per slot.
    pub last_b: Vec<f64>,
    /// The latest `k` samples, `k` per slot.
    pub samples: Vec<S>,
    /// Densities that were zero everywhere and fell back to `β`.
    pub fallbacks: u64,
}

impl<S: Copy + Default> PathState<S> {
    /// `a_0 = 1/r` for every coefficient of every message.
    pub fn new(messages: usize, r: usize, k: usize) -> Self {
        let coeffs = vec![1.0 / r as f64; messages * r];
        PathState {
            prev: coeffs.clone(),
            coeffs,
            last_b: vec![0.0; messages * r],
            samples: vec![S::default(); messages * k],
            fallbacks: 0,
        }
    }
}

/// Scratch of one rayon job.
struct NodeScratch {
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
}

impl NodeScratch {
    fn new(n: usize, cells: usize, max_degree: usize, r: usize) -> Self {
        NodeScratch {
            eval: vec![0.0; max_degree * n],
            prefix: vec![0.0; if max_degree > 2 { max_degree * n } else { 0 }],
            suffix: vec![0.0; if max_degree > 2 { n } else { 0 }],
            density: vec![0.0; n],
            sampler: CellSampler::new(cells),
            b: vec![0.0; r],
            psi: vec![0.0; n],
            beta: vec![0.0; n],
        }
    }
}

/// One synchronous SOSMP iteration of one path: `a_{t+1} = (1 - η) a_t + η b_t`, where
/// `iteration` is `t` (0-based) and `eta` its step size. Returns the number of fallbacks.
/// Errors if some `b` is not finite (the state is then not advanced).
pub fn step_path<G: StateGrid>(
    problem: &SosmpProblem<G>,
    seed: u64,
    samples: usize,
    path: usize,
    iteration: usize,
    eta: f64,
    state: &mut PathState<G::Sample>,
) -> Result<u64> {
    let graph = &problem.mrf.graph;
    let layout = &problem.layout;
    let r = problem.basis.len();
    let k = samples;
    let n = problem.mrf.grid.len();
    let cells = problem.mrf.grid.num_cells();
    let max_degree = problem.max_degree;
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
        let mut coeffs: &mut [f64] = &mut state.coeffs;
        let mut bs: &mut [f64] = &mut state.last_b;
        let mut ss: &mut [G::Sample] = &mut state.samples;
        for v in 0..graph.num_nodes() {
            let d = layout.node_start[v + 1] - layout.node_start[v];
            let (c, rest) = std::mem::take(&mut coeffs).split_at_mut(d * r);
            coeffs = rest;
            let (b, rest) = std::mem::take(&mut bs).split_at_mut(d * r);
            bs = rest;
            let (s, rest) = std::mem::take(&mut ss).split_at_mut(d * k);
            ss = rest;
            tasks.push((v, c, b, s));
        }
    }
    let outcome: Result<u64> = tasks
        .into_par_iter()
        .map_init(
            || NodeScratch::new(n, cells, max_degree, r),
            |scratch, (v, out, b_out, s_out)| update_node(&job, v, out, b_out, s_out, scratch),
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
struct NodeJob<'a, G: StateGrid> {
    problem: &'a SosmpProblem<G>,
    seed: u64,
    k: usize,
    path: usize,
    iteration: usize,
    eta: f64,
    /// The coefficients before this iteration (all messages).
    prev: &'a [f64],
}

impl<G: StateGrid> Clone for NodeJob<'_, G> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<G: StateGrid> Copy for NodeJob<'_, G> {}

/// Dispatches to a copy of [`update_node_body`] compiled for AVX2 when the CPU has it (the
/// loops are twice as wide). Only plain multiplies and adds are used, never fused
/// multiply-adds, so both copies give bit-identical results.
fn update_node<G: StateGrid>(
    job: &NodeJob<'_, G>,
    v: NodeId,
    out: &mut [f64],
    b_out: &mut [f64],
    s_out: &mut [G::Sample],
    sc: &mut NodeScratch,
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
fn update_node_avx2<G: StateGrid>(
    job: &NodeJob<'_, G>,
    v: NodeId,
    out: &mut [f64],
    b_out: &mut [f64],
    s_out: &mut [G::Sample],
    sc: &mut NodeScratch,
) -> Result<u64> {
    update_node_body(job, v, out, b_out, s_out, sc)
}

#[inline(always)]
fn update_node_body<G: StateGrid>(
    job: &NodeJob<'_, G>,
    v: NodeId,
    out: &mut [f64],
    b_out: &mut [f64],
    s_out: &mut [G::Sample],
    sc: &mut NodeScratch,
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
    } = sc;
    if d >= 2 {
        for (i, nb) in nbrs.iter().enumerate() {
            let s = layout.slot_of[nb.incoming];
            basis
                .evaluate_clipped_blocked(&prev[s * r..(s + 1) * r], &mut eval[i * n..(i + 1) * n]);
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
        let drawn = &mut s_out[o * k..(o + 1) * k];
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
            *a = (1.0 - eta) * a_old + eta * b;
        }
        b_out[o * r..(o + 1) * r].copy_from_slice(b_acc);
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
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked on the line above).
        return unsafe { belief_into_avx2(problem, coeff, u, eval, out) };
    }
    belief_into_body(problem, coeff, u, eval, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn belief_into_avx2<'a, G: StateGrid>(
    problem: &SosmpProblem<G>,
    coeff: impl Fn(MsgId) -> &'a [f64],
    u: NodeId,
    eval: &mut [f64],
    out: &mut [f64],
) {
    belief_into_body(problem, coeff, u, eval, out)
}

#[inline(always)]
fn belief_into_body<'a, G: StateGrid>(
    problem: &SosmpProblem<G>,
    coeff: impl Fn(MsgId) -> &'a [f64],
    u: NodeId,
    eval: &mut [f64],
    out: &mut [f64],
) {
    let psi = problem.mrf.node_potential_into(u, eval);
    out.copy_from_slice(psi);
    for nb in problem.mrf.graph.neighbors(u) {
        problem
            .basis
            .evaluate_clipped_blocked(coeff(nb.incoming), eval);
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
