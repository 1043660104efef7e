//! Discrete sum-product belief propagation on pairwise MRFs with finite state sets.
//!
//! Message `t -> s` (Pearl; Yedidia, Freeman, Weiss 2003, eq. 4):
//! `m_ts(x_s) ∝ Σ_{x_t} ψ_ts(x_t, x_s) φ_t(x_t) Π_{u ∈ N(t)\s} m_ut(x_t)`, normalised to sum 1.
//! The leave-one-out product over `N(t)\s` is formed directly (no division by `m_st`), so zeros
//! in messages are handled exactly. Belief `b_t(x) ∝ φ_t(x) Π_{u ∈ N(t)} m_ut(x)`.
//!
//! Tree-reweighted variant (Wainwright, Jaakkola, Willsky 2003, "Tree-reweighted belief
//! propagation algorithms and approximate ML estimation by pseudo-moment matching", eq. 11):
//! with edge appearance probability ρ ∈ (0, 1], the message `t -> s` multiplies
//! `φ_t Π_{u ∈ N(t)\s} m_ut^ρ · m_st^(ρ−1)` and the belief is `φ_t Π_u m_ut^ρ`; the table
//! passed as ψ is `exp(θ_st / ρ)`. ρ = 1 is ordinary BP. Paired with pseudo-moment-matched
//! potentials (ψ = μ_st / (μ_s μ_t)) the evidence-free fixed point returns the training
//! pseudo-moments for every ρ, and ρ < 1 (a convex, tree-reweighted Bethe free energy) keeps
//! evidence from circulating around the grid's loops. Costs O(deg · S) powers per message.
//!
//! Cost per iteration: O(|E| · S²) for the edge sums plus O(Σ_t deg(t)² · S) for the products;
//! memory O(|E| · S) for two message buffers. The synchronous schedule runs in parallel over
//! messages with rayon; the sweep schedule visits nodes in id order and uses fresh messages.

use std::time::Instant;

use rayon::prelude::*;

use super::{Belief, Damping, EstimateKind, Estimates, Inference, Schedule, StepReport};
use crate::error::{Error, Result};
use crate::model::{Graph, NodeId};

/// Edge potentials ψ as `S x S` tables, entry `[i * S + j]` = ψ(x_a = i, x_b = j) for an edge
/// `(a, b)` as stored in the graph.
#[derive(Debug, Clone, PartialEq)]
pub enum EdgePotentials {
    /// One table for every edge (templated models such as image grids).
    Shared(Vec<f64>),
    /// One table per edge, in the graph's edge order.
    PerEdge(Vec<Vec<f64>>),
}

/// A pairwise MRF with `S` states per node.
#[derive(Debug, Clone)]
pub struct DiscreteMrf {
    pub graph: Graph,
    /// The value each state stands for (used for posterior means and display).
    pub state_values: Vec<f64>,
    /// φ_t(x), node-major: `[t * S + x]`.
    pub node_potentials: Vec<f64>,
    pub edge_potentials: EdgePotentials,
}

impl DiscreteMrf {
    pub fn num_states(&self) -> usize {
        self.state_values.len()
    }

    /// Checks the shapes and that every potential is finite and non-negative.
    pub fn check(&self) -> Result<()> {
        let s = self.num_states();
        if s == 0 {
            return Err(Error::param("states", "need at least one state"));
        }
        let n = self.graph.num_nodes();
        if self.node_potentials.len() != n * s {
            return Err(Error::param(
                "node potentials",
                format!(
                    "expected {} values ({n} nodes x {s} states), got {}",
                    n * s,
                    self.node_potentials.len()
                ),
            ));
        }
        let bad = |v: &f64| !(v.is_finite() && *v >= 0.0);
        if let Some(i) = self.node_potentials.iter().position(bad) {
            return Err(Error::param(
                "node potentials",
                format!(
                    "node {} state {} is {} (must be finite and >= 0)",
                    i / s,
                    i % s,
                    self.node_potentials[i]
                ),
            ));
        }
        let tables: Vec<&Vec<f64>> = match &self.edge_potentials {
            EdgePotentials::Shared(t) => vec![t],
            EdgePotentials::PerEdge(ts) => {
                if ts.len() != self.graph.num_edges() {
                    return Err(Error::param(
                        "edge potentials",
                        format!(
                            "expected {} tables, got {}",
                            self.graph.num_edges(),
                            ts.len()
                        ),
                    ));
                }
                ts.iter().collect()
            }
        };
        for t in tables {
            if t.len() != s * s {
                return Err(Error::param(
                    "edge potentials",
                    format!("a table has {} entries, expected {}", t.len(), s * s),
                ));
            }
            if t.iter().any(bad) {
                return Err(Error::param(
                    "edge potentials",
                    "entries must be finite and >= 0",
                ));
            }
        }
        Ok(())
    }

    fn table(&self, edge: usize) -> &[f64] {
        match &self.edge_potentials {
            EdgePotentials::Shared(t) => t,
            EdgePotentials::PerEdge(ts) => &ts[edge],
        }
    }
}

/// Sum-product BP state: the MRF and the current messages.
pub struct DiscreteBp {
    mrf: DiscreteMrf,
    schedule: Schedule,
    damping: Damping,
    /// Edge appearance probability ρ of tree-reweighted BP (1: ordinary BP).
    rho: f64,
    /// Messages, `[m * S + x]` for directed message id `m`.
    messages: Vec<f64>,
    scratch: Vec<f64>,
    iteration: usize,
}

impl DiscreteBp {
    /// Uniform initial messages. Errors on an inconsistent MRF or a damping outside [0, 0.99].
    pub fn new(mrf: DiscreteMrf, schedule: Schedule, damping: Damping) -> Result<Self> {
        mrf.check()?;
        let damping = damping.check()?;
        let s = mrf.num_states();
        let messages = vec![1.0 / s as f64; mrf.graph.num_messages() * s];
        Ok(DiscreteBp {
            scratch: messages.clone(),
            messages,
            mrf,
            schedule,
            damping,
            rho: 1.0,
            iteration: 0,
        })
    }

    /// Tree-reweighted BP with edge appearance probability `rho` in (0, 1] (1: ordinary BP).
    pub fn with_edge_appearance(mut self, rho: f64) -> Result<Self> {
        if !(rho.is_finite() && rho > 0.0 && rho <= 1.0) {
            return Err(Error::param(
                "edge appearance",
                format!("must be in (0, 1] (1: ordinary BP), got {rho}"),
            ));
        }
        self.rho = rho;
        Ok(self)
    }

    /// The edge appearance probability ρ in use (1: ordinary BP).
    pub fn edge_appearance(&self) -> f64 {
        self.rho
    }

    pub fn mrf(&self) -> &DiscreteMrf {
        &self.mrf
    }

    /// The current message with id `m` (normalised to sum 1).
    pub fn message(&self, m: usize) -> &[f64] {
        let s = self.mrf.num_states();
        &self.messages[m * s..(m + 1) * s]
    }

    /// Normalised beliefs of every node, node-major.
    pub fn all_beliefs(&self) -> Vec<f64> {
        let s = self.mrf.num_states();
        let mut out = vec![0.0; self.mrf.graph.num_nodes() * s];
        out.par_chunks_mut(s).enumerate().for_each(|(t, b)| {
            self.belief_into(t, b);
        });
        out
    }

    fn belief_into(&self, t: NodeId, out: &mut [f64]) {
        let s = self.mrf.num_states();
        out.copy_from_slice(&self.mrf.node_potentials[t * s..(t + 1) * s]);
        for nb in self.mrf.graph.neighbors(t) {
            let m = &self.messages[nb.incoming * s..(nb.incoming + 1) * s];
            for (o, v) in out.iter_mut().zip(m) {
                *o *= powered(*v, self.rho);
            }
        }
        let z: f64 = out.iter().sum();
        if z > 0.0 && z.is_finite() {
            out.iter_mut().for_each(|o| *o /= z);
        } else {
            out.iter_mut().for_each(|o| *o = 1.0 / s as f64);
        }
    }
}

/// Computes the undamped, normalised message `m` from `messages` into `out`; `product` is
/// scratch of length S. Returns false when the message has no mass or is not finite.
fn compute_message(
    mrf: &DiscreteMrf,
    messages: &[f64],
    m: usize,
    rho: f64,
    product: &mut [f64],
    out: &mut [f64],
) -> bool {
    let s = mrf.num_states();
    let g = &mrf.graph;
    let (t, target) = (g.source(m), g.target(m));
    product.copy_from_slice(&mrf.node_potentials[t * s..(t + 1) * s]);
    for nb in g.neighbors(t) {
        // Ordinary BP leaves the target's message out; tree-reweighted BP takes every
        // message to the power ρ and divides by the target's (exponent ρ - 1).
        let exponent = if nb.node == target { rho - 1.0 } else { rho };
        if exponent == 0.0 {
            continue;
        }
        let inc = &messages[nb.incoming * s..(nb.incoming + 1) * s];
        for (p, v) in product.iter_mut().zip(inc) {
            *p *= powered(*v, exponent);
        }
    }
    // Keep the product's scale near 1 (negative exponents can make it large).
    let top = product.iter().fold(0.0f64, |a, &p| a.max(p));
    if top > 0.0 && top.is_finite() {
        product.iter_mut().for_each(|p| *p /= top);
    }
    let table = mrf.table(m / 2);
    out.iter_mut().for_each(|o| *o = 0.0);
    if m.is_multiple_of(2) {
        // Message a -> b: out[j] = Σ_i ψ[i, j] product[i]; rows of the table are contiguous.
        for (i, &p) in product.iter().enumerate() {
            if p == 0.0 {
                continue;
            }
            let row = &table[i * s..(i + 1) * s];
            for (o, &psi) in out.iter_mut().zip(row) {
                *o += psi * p;
            }
        }
    } else {
        // Message b -> a: out[i] = Σ_j ψ[i, j] product[j].
        for (i, o) in out.iter_mut().enumerate() {
            let row = &table[i * s..(i + 1) * s];
            *o = row.iter().zip(product.iter()).map(|(a, b)| a * b).sum();
        }
    }
    let z: f64 = out.iter().sum();
    if !(z > 0.0 && z.is_finite()) {
        return false;
    }
    out.iter_mut().for_each(|o| *o /= z);
    true
}

/// `v^e` for a message value, with 1 as the fast path and values floored at the smallest
/// normal number so a negative exponent never divides by zero.
#[inline]
fn powered(v: f64, e: f64) -> f64 {
    if e == 1.0 {
        v
    } else {
        v.max(f64::MIN_POSITIVE).powf(e)
    }
}

fn l1_change(old: &[f64], new: &[f64]) -> f64 {
    old.iter().zip(new).map(|(a, b)| (a - b).abs()).sum()
}

impl Inference for DiscreteBp {
    /// One iteration. Residual: the largest L1 change of any message.
    fn step(&mut self) -> Result<StepReport> {
        let start = Instant::now();
        let s = self.mrf.num_states();
        let num_messages = self.mrf.graph.num_messages();
        let damping = self.damping;
        let rho = self.rho;
        let next_iteration = self.iteration + 1;
        let residual = match self.schedule {
            Schedule::Synchronous => {
                let mrf = &self.mrf;
                let old = &self.messages;
                let failed = self
                    .scratch
                    .par_chunks_mut(s)
                    .enumerate()
                    .map_init(
                        || vec![0.0; s],
                        |product, (m, out)| {
                            if !compute_message(mrf, old, m, rho, product, out) {
                                return Some(m);
                            }
                            if damping.0 > 0.0 {
                                let prev = &old[m * s..(m + 1) * s];
                                for (o, p) in out.iter_mut().zip(prev) {
                                    *o = damping.0 * p + (1.0 - damping.0) * *o;
                                }
                            }
                            None
                        },
                    )
                    .find_any(|r| r.is_some())
                    .flatten();
                if let Some(m) = failed {
                    return Err(self.divergence(m, next_iteration));
                }
                let residual = self
                    .messages
                    .par_chunks(s)
                    .zip(self.scratch.par_chunks(s))
                    .map(|(a, b)| l1_change(a, b))
                    .reduce(|| 0.0, f64::max);
                std::mem::swap(&mut self.messages, &mut self.scratch);
                residual
            }
            Schedule::Sweep => {
                // Work on a copy so a failure mid-sweep leaves the last good messages intact.
                self.scratch.copy_from_slice(&self.messages);
                let mut product = vec![0.0; s];
                let mut out = vec![0.0; s];
                let mut residual: f64 = 0.0;
                // Forward then backward over the node ids, so information crosses the graph
                // in both directions every sweep (a one-way raster sweep over-weights one
                // direction on grids: RMSE 38 after one sweep on the sunset against 17).
                let n = self.mrf.graph.num_nodes();
                for t in (0..n).chain((0..n).rev()) {
                    for nb in self.mrf.graph.neighbors(t) {
                        let m = nb.outgoing;
                        if !compute_message(
                            &self.mrf,
                            &self.scratch,
                            m,
                            rho,
                            &mut product,
                            &mut out,
                        ) {
                            return Err(self.divergence(m, next_iteration));
                        }
                        let slot = &mut self.scratch[m * s..(m + 1) * s];
                        let before = l1_change(slot, &out) * (1.0 - damping.0);
                        damping.mix(slot, &out);
                        residual = residual.max(before);
                    }
                }
                std::mem::swap(&mut self.messages, &mut self.scratch);
                residual
            }
        };
        self.iteration = next_iteration;
        Ok(StepReport {
            iteration: self.iteration,
            residual,
            seconds: start.elapsed().as_secs_f64(),
            updates: num_messages,
        })
    }

    fn iteration(&self) -> usize {
        self.iteration
    }

    fn belief(&self, node: NodeId) -> Belief {
        let mut probs = vec![0.0; self.mrf.num_states()];
        self.belief_into(node, &mut probs);
        Belief::Discrete {
            states: self.mrf.state_values.clone(),
            probs,
        }
    }

    fn estimates(&self, kind: EstimateKind) -> Estimates {
        let s = self.mrf.num_states();
        let beliefs = self.all_beliefs();
        let values = beliefs
            .chunks(s)
            .map(|b| point_estimate(&self.mrf.state_values, b, kind))
            .collect();
        Estimates { dim: 1, values }
    }
}

impl DiscreteBp {
    fn divergence(&self, m: usize, iteration: usize) -> Error {
        let g = &self.mrf.graph;
        Error::Diverged {
            iteration,
            detail: format!(
                "message {} -> {} has no finite mass (all products underflowed or a potential is zero everywhere)",
                g.source(m),
                g.target(m)
            ),
        }
    }
}

/// MAP (first maximiser) or mean of a normalised discrete belief.
pub fn point_estimate(values: &[f64], probs: &[f64], kind: EstimateKind) -> f64 {
    match kind {
        EstimateKind::Map => {
            let mut best = 0;
            for (i, p) in probs.iter().enumerate() {
                if *p > probs[best] {
                    best = i;
                }
            }
            values[best]
        }
        EstimateKind::Mean => values.iter().zip(probs).map(|(v, p)| v * p).sum(),
    }
}
