//! Loopy kernel BP iterations (Song et al. 2011, eq. 12 and Sec. 5) on any pairwise graph with
//! scalar states, for the three update modes of [`KbpModel`].
//!
//! Messages live in "slots": node `t`'s outgoing messages are contiguous, nodes ordered by their
//! factor count p (other incoming messages plus evidence), so that every message whose sender
//! multiplies p factors forms one contiguous block. The synchronous schedule then runs, per
//! block, as batched matrix products in chunks of nodes (one rayon task each, buffers reused,
//! no per-message allocation): gather the chunk's incoming coefficients, `Y = A_p C` (one
//! product for all of them), leave-one-out products per node by prefix/suffix products,
//! `C_new = U_p G` (one product) straight into the outgoing slots, then normalise and damp.
//! Fusing the stages per chunk keeps the data in cache: the step is bound by the two products.
//! When a class evaluates messages at very many points (the linear-time update evaluates at all
//! m template points), the same steps stream node by node instead.
//!
//! After every update a coefficient vector is normalised to unit norm, damped
//! (`new = d old + (1 - d) update`) and normalised again; the residual is the largest
//! `||c_new - c_old||` over messages. A message with no finite norm stops the run.
//! Tree-reweighted updates (edge appearance probability ρ < 1, Wainwright, Jaakkola, Willsky
//! 2003, eq. 11, carried over to kernel messages at the class points): the product a message
//! sends is `evidence · Π_u m_ut^ρ / m_st` instead of `evidence · Π_{u≠s} m_ut`, and the belief
//! is `P · evidence · Π_u m_ut^ρ`. Powers need positive values, so each message's values are
//! floored at 1e-6 of its largest |value| first (a kernel message can dip below zero where it
//! is small). ρ = 1 is the paper's kernel BP, unchanged.
//!
//! Cost per iteration: Σ over messages of the class cost in [`KbpModel`] plus O(M · dim).

mod serial;

use std::sync::Arc;
use std::time::Instant;

use nalgebra::{DMatrix, DMatrixView, DMatrixViewMut, DVector, DVectorView};
use rayon::prelude::*;

use super::model::{FactorClass, KbpModel};
use crate::error::{Error, Result};
use crate::inference::lanes::lane_sums;
use crate::inference::{
    Belief, Damping, EstimateKind, Estimates, Inference, MessageChanges, Schedule, StepReport,
};
use crate::model::{Graph, NodeId};

/// A class evaluates at more points than this: stream node by node instead of batching.
const BATCH_POINT_LIMIT: usize = 4096;

/// Nodes per parallel task of the batched step: their gathered messages, values and products
/// (a few hundred KB at the default ranks) stay in the core's cache between the stages.
const CHUNK_NODES: usize = 64;

/// One contiguous block of slots whose senders multiply the same number of factors.
#[derive(Debug, Clone)]
struct Block {
    p: usize,
    degree: usize,
    /// Nodes of the block in slot order.
    nodes: Vec<NodeId>,
    first_slot: usize,
    /// Evaluations of each node's evidence message at the class points (`n_p x nodes`).
    evidence_values: Option<DMatrix<f64>>,
}

/// Loopy kernel BP state.
#[derive(Clone)]
pub struct KbpEngine {
    model: Arc<KbpModel>,
    graph: Graph,
    schedule: Schedule,
    damping: Damping,
    dim: usize,
    /// Slot of node t's first outgoing message; its k-th neighbour's message is `+ k`.
    offset: Vec<usize>,
    /// `in_slot[offset[t] + k]`: the slot of the message from t's k-th neighbour into t.
    in_slot: Vec<usize>,
    node_p: Vec<usize>,
    blocks: Vec<Block>,
    /// Evidence coefficients per node (`dim x nodes`), if any.
    evidence: Option<DMatrix<f64>>,
    /// Coefficients per slot, column-major `dim x M`.
    messages: Vec<f64>,
    next: Vec<f64>,
    /// Candidate values for estimates and their basis evaluations (`candidates x dim`).
    candidates: Vec<f64>,
    candidate_eval: DMatrix<f64>,
    candidate_prior: Vec<f64>,
    candidate_evidence: Option<DMatrix<f64>>,
    /// `Σ_j basis(u_j)` over the distinct training values: `orientation · c` is the sum of a
    /// message's values there, used to fix its sign.
    orientation: Vec<f64>,
    /// Edge appearance probability ρ of tree-reweighted updates (1: kernel BP as published).
    rho: f64,
    /// Fraction of the damped step taken (1: the step `damping` sets; a step guard shrinks it).
    step_scale: f64,
    iteration: usize,
    /// Random/residual schedule buffers and the per-message change record (`serial.rs`).
    serial: serial::SerialState,
}

impl KbpEngine {
    /// Sets up messages on `graph` with optional evidence coefficients (`dim x nodes`, from
    /// [`KbpModel::evidence_coefficients`]); the model must have a class for every factor count
    /// that occurs (`degree - 1 + [evidence]`). Estimates are argmax/mean over `candidates`.
    pub fn new(
        model: Arc<KbpModel>,
        graph: Graph,
        evidence: Option<DMatrix<f64>>,
        candidates: Vec<f64>,
        schedule: Schedule,
        damping: Damping,
    ) -> Result<Self> {
        let damping = damping.check()?;
        let dim = model.basis.dim();
        let n = graph.num_nodes();
        if let Some(e) = &evidence
            && e.shape() != (dim, n)
        {
            return Err(Error::param(
                "evidence",
                format!("expected {dim} x {n} coefficients, got {:?}", e.shape()),
            ));
        }
        if candidates.is_empty() {
            return Err(Error::param(
                "candidates",
                "need at least one candidate value",
            ));
        }
        let has_evidence = usize::from(evidence.is_some());
        let node_p: Vec<usize> = (0..n)
            .map(|t| graph.degree(t).saturating_sub(1) + has_evidence)
            .collect();
        for (t, &p) in node_p.iter().enumerate() {
            if graph.degree(t) == 0 || p == 0 {
                return Err(Error::param(
                    "graph",
                    format!(
                        "node {t} has {} neighbours and {} evidence: kernel BP needs every message to multiply at least one factor",
                        graph.degree(t),
                        if has_evidence == 1 { "" } else { "no" }
                    ),
                ));
            }
            if !model.classes.contains_key(&p) {
                return Err(Error::param(
                    "model",
                    format!("no update for messages that multiply {p} factors"),
                ));
            }
        }
        let mut order: Vec<NodeId> = (0..n).collect();
        order.sort_by_key(|&t| (node_p[t], t));
        let mut offset = vec![0; n];
        let mut next_slot = 0;
        for &t in &order {
            offset[t] = next_slot;
            next_slot += graph.degree(t);
        }
        let num_slots = next_slot;
        let mut in_slot = vec![0; num_slots];
        for t in 0..n {
            for (k, nb) in graph.neighbors(t).iter().enumerate() {
                let back = graph
                    .neighbors(nb.node)
                    .iter()
                    .position(|x| x.node == t)
                    .expect("undirected adjacency");
                in_slot[offset[t] + k] = offset[nb.node] + back;
            }
        }
        let mut blocks: Vec<Block> = Vec::new();
        for &t in &order {
            match blocks.last_mut() {
                Some(b) if b.p == node_p[t] && b.degree == graph.degree(t) => b.nodes.push(t),
                _ => blocks.push(Block {
                    p: node_p[t],
                    degree: graph.degree(t),
                    nodes: vec![t],
                    first_slot: offset[t],
                    evidence_values: None,
                }),
            }
        }
        if let Some(ev) = &evidence {
            for b in &mut blocks {
                let class = &model.classes[&b.p];
                let cols = DMatrix::from_fn(dim, b.nodes.len(), |i, j| ev[(i, b.nodes[j])]);
                b.evidence_values = Some(&class.eval * cols);
            }
        }
        let candidate_eval = model.basis.eval_matrix(&candidates)?;
        let candidate_prior = model.prior(&candidates);
        let candidate_evidence = evidence.as_ref().map(|e| &candidate_eval * e);
        let orientation = model
            .basis
            .eval_matrix(model.training_values())?
            .row_sum()
            .iter()
            .copied()
            .collect();
        let mut engine = KbpEngine {
            model,
            graph,
            schedule,
            damping,
            dim,
            offset,
            in_slot,
            node_p,
            blocks,
            evidence,
            messages: vec![0.0; dim * num_slots],
            next: vec![0.0; dim * num_slots],
            candidates,
            candidate_eval,
            candidate_prior,
            candidate_evidence,
            orientation,
            rho: 1.0,
            step_scale: 1.0,
            iteration: 0,
            serial: serial::SerialState::default(),
        };
        engine.initialise();
        Ok(engine)
    }

    /// Every message starts as the update of the constant function 1 (`U_p 1`): the message
    /// a sender with no information sends.
    fn initialise(&mut self) {
        let dim = self.dim;
        for t in 0..self.graph.num_nodes() {
            let class = &self.model.classes[&self.node_p[t]];
            let ones = DVector::from_element(class.update.ncols(), 1.0);
            let mut c = &class.update * ones;
            let norm = c.norm()
                * c.dot(&DVector::from_column_slice(&self.orientation))
                    .signum();
            if norm != 0.0 && norm.is_finite() {
                c /= norm;
            }
            for k in 0..self.graph.degree(t) {
                let s = self.offset[t] + k;
                self.messages[s * dim..(s + 1) * dim].copy_from_slice(c.as_slice());
            }
        }
    }

    /// Tree-reweighted updates with edge appearance probability `rho` in (0, 1] (1: the
    /// published kernel BP).
    pub fn with_edge_appearance(mut self, rho: f64) -> Result<Self> {
        if !(rho.is_finite() && rho > 0.0 && rho <= 1.0) {
            return Err(Error::param(
                "edge appearance",
                format!("must be in (0, 1] (1: ordinary kernel BP), got {rho}"),
            ));
        }
        self.rho = rho;
        Ok(self)
    }

    pub fn edge_appearance(&self) -> f64 {
        self.rho
    }

    /// Takes `scale` (in (0, 1]) of each damped step from the next iteration on.
    pub fn set_step_scale(&mut self, scale: f64) {
        self.step_scale = scale;
    }

    /// Every message's coefficients, slot after slot (`dim` each).
    pub fn message_coefficients(&self) -> &[f64] {
        &self.messages
    }

    /// Puts back coefficients saved from [`Self::message_coefficients`] (a step guard
    /// returning to an earlier state); the iteration count goes on.
    pub fn restore_messages(&mut self, saved: &[f64]) -> Result<()> {
        crate::inference::schedule::restore_saved(&mut self.messages, saved)?;
        self.serial.reset_queue();
        Ok(())
    }

    pub fn model(&self) -> &KbpModel {
        &self.model
    }

    /// The learned model, shared (a second engine on other evidence reuses it).
    pub fn shared_model(&self) -> Arc<KbpModel> {
        Arc::clone(&self.model)
    }

    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// Coefficients of the message `from -> to`, if they are neighbours.
    pub fn message(&self, from: NodeId, to: NodeId) -> Option<&[f64]> {
        let k = self
            .graph
            .neighbors(from)
            .iter()
            .position(|nb| nb.node == to)?;
        let s = self.offset[from] + k;
        Some(&self.messages[s * self.dim..(s + 1) * self.dim])
    }

    /// Coefficients of every message into `node`, with the sender.
    pub fn incoming(&self, node: NodeId) -> Vec<(NodeId, &[f64])> {
        self.graph
            .neighbors(node)
            .iter()
            .enumerate()
            .map(|(k, nb)| {
                let s = self.in_slot[self.offset[node] + k];
                (nb.node, &self.messages[s * self.dim..(s + 1) * self.dim])
            })
            .collect()
    }

    /// Evidence coefficients of `node`, if the model has evidence.
    pub fn evidence(&self, node: NodeId) -> Option<Vec<f64>> {
        self.evidence
            .as_ref()
            .map(|e| e.column(node).iter().copied().collect())
    }

    pub fn candidates(&self) -> &[f64] {
        &self.candidates
    }

    /// `B(x) = P(x) m_obs(x) Π_u m_us(x)` at the candidates, for every node (`candidates x
    /// nodes`, column-major). Not normalised; can be negative.
    pub fn candidate_beliefs(&self) -> Vec<f64> {
        let (nc, dim) = (self.candidates.len(), self.dim);
        let mut out = vec![0.0; nc * self.graph.num_nodes()];
        let rho = self.rho;
        // Per chunk of nodes: gather their incoming messages, evaluate them all at the
        // candidates with one product, multiply per node (the values never leave the cache).
        out.par_chunks_mut(nc * CHUNK_NODES)
            .enumerate()
            .for_each_init(
                || (Vec::new(), Vec::new()),
                |(gathered, values): &mut (Vec<f64>, Vec<f64>), (c, chunk)| {
                    let nodes = c * CHUNK_NODES..c * CHUNK_NODES + chunk.len() / nc;
                    gathered.clear();
                    for t in nodes.clone() {
                        for k in 0..self.graph.degree(t) {
                            let s = self.in_slot[self.offset[t] + k];
                            gathered.extend_from_slice(&self.messages[s * dim..(s + 1) * dim]);
                        }
                    }
                    let cols = gathered.len() / dim.max(1);
                    values.resize(nc * cols, 0.0);
                    DMatrixViewMut::from_slice(values, nc, cols).gemm(
                        1.0,
                        &self.candidate_eval,
                        &DMatrixView::from_slice(gathered, dim, cols),
                        0.0,
                    );
                    let mut col = 0;
                    for (t, b) in nodes.zip(chunk.chunks_exact_mut(nc)) {
                        b.copy_from_slice(&self.candidate_prior);
                        if let Some(ev) = &self.candidate_evidence {
                            for (x, e) in b.iter_mut().zip(ev.column(t).iter()) {
                                *x *= e;
                            }
                        }
                        for _ in 0..self.graph.degree(t) {
                            let v = &values[col * nc..(col + 1) * nc];
                            if rho == 1.0 {
                                for (x, v) in b.iter_mut().zip(v) {
                                    *x *= v;
                                }
                            } else {
                                let floor = positive_floor(v);
                                for (x, v) in b.iter_mut().zip(v) {
                                    *x *= v.max(floor).powf(rho);
                                }
                            }
                            col += 1;
                        }
                    }
                },
            );
        out
    }

    /// One synchronous iteration as batched products, fused per chunk of nodes: gather the
    /// chunk's incoming coefficients, `Y = A_p C`, leave-one-out products times the evidence,
    /// `U_p G` straight into the outgoing slots of `next`, then normalise and damp them against
    /// `messages`. Returns the largest change, or the first slot whose update had no finite
    /// norm (then `messages` is untouched).
    fn step_batched(&mut self, damping: f64) -> std::result::Result<f64, usize> {
        let dim = self.dim;
        let messages = &self.messages;
        let (in_slot, offset, orientation) = (&self.in_slot, &self.offset, &self.orientation);
        let mut residual: f64 = 0.0;
        for block in &self.blocks {
            let d = block.degree;
            let first = block.first_slot;
            let slots = &mut self.next[first * dim..(first + block.nodes.len() * d) * dim];
            let shared = ChunkInputs {
                class: &self.model.classes[&block.p],
                block,
                messages,
                in_slot,
                offset,
                orientation,
                damping,
                rho: self.rho,
                dim,
            };
            let block_residual = slots
                .par_chunks_mut(CHUNK_NODES * d * dim)
                .enumerate()
                .map_init(ChunkScratch::default, |sc, (c, out)| {
                    shared.update_chunk(c * CHUNK_NODES, out, sc)
                })
                .try_reduce(|| 0.0, |a, b| Ok(a.max(b)))?;
            residual = residual.max(block_residual);
        }
        Ok(residual)
    }

    /// One synchronous iteration node by node (classes with many points: the linear-time
    /// update), into `next`, then normalised and damped against `messages`. Same contract as
    /// [`Self::step_batched`].
    fn step_streaming(&mut self, damping: f64) -> std::result::Result<f64, usize> {
        let dim = self.dim;
        let mut next = std::mem::take(&mut self.next);
        let mut chunks: Vec<(NodeId, &mut [f64])> = Vec::new();
        let mut rest: &mut [f64] = &mut next;
        let mut order: Vec<NodeId> = (0..self.graph.num_nodes()).collect();
        order.sort_by_key(|&t| self.offset[t]);
        for t in order {
            let (head, tail) = rest.split_at_mut(self.graph.degree(t) * dim);
            chunks.push((t, head));
            rest = tail;
        }
        let messages = &self.messages;
        let orientation = &self.orientation;
        let outcome = chunks
            .into_par_iter()
            .map_init(NodeScratch::default, |sc, (t, out)| {
                self.node_update(messages, t, sc, out);
                let mut change: f64 = 0.0;
                for (k, new) in out.chunks_exact_mut(dim).enumerate() {
                    let s = self.offset[t] + k;
                    let old = &messages[s * dim..(s + 1) * dim];
                    change = change.max(mix_normalised(old, new, orientation, damping).ok_or(s)?);
                }
                Ok(change)
            })
            .try_reduce(|| 0.0, |a, b| Ok(a.max(b)));
        self.next = next;
        outcome
    }

    /// Computes node t's outgoing messages from `messages` into `out` (`dim x degree`),
    /// streaming over the class points.
    fn node_update(&self, messages: &[f64], t: NodeId, scratch: &mut NodeScratch, out: &mut [f64]) {
        let dim = self.dim;
        let class = &self.model.classes[&self.node_p[t]];
        let n_points = class.eval.nrows();
        let d = self.graph.degree(t);
        scratch.resize(n_points, d);
        for k in 0..d {
            let s = self.in_slot[self.offset[t] + k];
            let c = DVectorView::from_slice(&messages[s * dim..(s + 1) * dim], dim);
            let mut yk = nalgebra::DVectorViewMut::from_slice(
                &mut scratch.y[k * n_points..(k + 1) * n_points],
                n_points,
            );
            yk.gemv(1.0, &class.eval, &c, 0.0);
        }
        let evidence_values = self.evidence.as_ref().map(|e| {
            let c = e.column(t);
            &class.eval * c
        });
        leave_one_out(
            &scratch.y,
            evidence_values.as_ref().map(|v| v.column(0)),
            n_points,
            d,
            self.rho,
            &mut scratch.prefix,
            &mut scratch.g,
        );
        for k in 0..d {
            let gk =
                DVectorView::from_slice(&scratch.g[k * n_points..(k + 1) * n_points], n_points);
            let mut ok =
                nalgebra::DVectorViewMut::from_slice(&mut out[k * dim..(k + 1) * dim], dim);
            ok.gemv(1.0, &class.update, &gk, 0.0);
        }
    }

    fn uses_batches(&self) -> bool {
        self.model
            .classes
            .values()
            .all(|c| c.eval.nrows() <= BATCH_POINT_LIMIT)
    }

    /// The node whose message sits in `slot`, and its receiver.
    fn slot_owner(&self, slot: usize) -> (NodeId, NodeId) {
        let t = (0..self.graph.num_nodes())
            .find(|&t| slot >= self.offset[t] && slot < self.offset[t] + self.graph.degree(t))
            .unwrap_or(0);
        let nb = self.graph.neighbors(t)[slot - self.offset[t]].node;
        (t, nb)
    }

    fn divergence(&self, slot: usize, iteration: usize) -> Error {
        let (from, to) = self.slot_owner(slot);
        Error::Diverged {
            iteration,
            detail: format!(
                "the kernel message {from} -> {to} has no finite norm (try a larger lambda or more damping)"
            ),
        }
    }
}

/// Per-task buffers of the batched step: the gathered incoming coefficients, their values at
/// the class points, the leave-one-out products and one suffix column.
#[derive(Default)]
struct ChunkScratch {
    gathered: Vec<f64>,
    values: Vec<f64>,
    products: Vec<f64>,
    suffix: Vec<f64>,
}

/// What every chunk of one block reads.
struct ChunkInputs<'a> {
    class: &'a FactorClass,
    block: &'a Block,
    messages: &'a [f64],
    in_slot: &'a [usize],
    offset: &'a [usize],
    orientation: &'a [f64],
    damping: f64,
    rho: f64,
    dim: usize,
}

impl ChunkInputs<'_> {
    /// The new messages of the block's nodes `node0..` (as many as `out` holds) into `out`,
    /// normalised and damped; the largest change or the slot that failed.
    fn update_chunk(
        &self,
        node0: usize,
        out: &mut [f64],
        sc: &mut ChunkScratch,
    ) -> std::result::Result<f64, usize> {
        let (block, dim) = (self.block, self.dim);
        let d = block.degree;
        let n_points = self.class.eval.nrows();
        let nodes = &block.nodes[node0..node0 + out.len() / (d * dim)];
        let cols = nodes.len() * d;
        sc.gathered.resize(dim * cols, 0.0);
        sc.values.resize(n_points * cols, 0.0);
        sc.products.resize(n_points * cols, 0.0);
        sc.suffix.resize(n_points, 0.0);
        for (j, col) in sc.gathered.chunks_exact_mut(dim).enumerate() {
            let s = self.in_slot[self.offset[nodes[j / d]] + j % d];
            col.copy_from_slice(&self.messages[s * dim..(s + 1) * dim]);
        }
        DMatrixViewMut::from_slice(&mut sc.values, n_points, cols).gemm(
            1.0,
            &self.class.eval,
            &DMatrixView::from_slice(&sc.gathered, dim, cols),
            0.0,
        );
        let evidence_values = block.evidence_values.as_ref();
        for (i, (g_node, y_node)) in sc
            .products
            .chunks_exact_mut(n_points * d)
            .zip(sc.values.chunks_exact(n_points * d))
            .enumerate()
        {
            let evidence = evidence_values.map(|e| e.column(node0 + i));
            leave_one_out(
                y_node,
                evidence,
                n_points,
                d,
                self.rho,
                &mut sc.suffix,
                g_node,
            );
        }
        DMatrixViewMut::from_slice(out, dim, cols).gemm(
            1.0,
            &self.class.update,
            &DMatrixView::from_slice(&sc.products, n_points, cols),
            0.0,
        );
        let slot0 = block.first_slot + node0 * d;
        let mut change: f64 = 0.0;
        for (j, new) in out.chunks_exact_mut(dim).enumerate() {
            let s = slot0 + j;
            let old = &self.messages[s * dim..(s + 1) * dim];
            change = change.max(mix_normalised(old, new, self.orientation, self.damping).ok_or(s)?);
        }
        Ok(change)
    }
}

/// Per-thread buffers for the streaming path.
#[derive(Default)]
struct NodeScratch {
    y: Vec<f64>,
    g: Vec<f64>,
    prefix: Vec<f64>,
}

impl NodeScratch {
    fn resize(&mut self, n_points: usize, d: usize) {
        self.y.resize(n_points * d, 0.0);
        self.g.resize(n_points * d, 0.0);
        self.prefix.resize(n_points, 0.0);
    }
}

/// `g[:, k] = evidence ⊙ Π_{j != k} y[:, j]` for `d` columns of `n` values, by a prefix pass
/// (stored in `g`) and a suffix pass (in `suffix`); no division, so zeros are exact. O(n d).
/// With ρ < 1 the tree-reweighted product `evidence ⊙ Π_j ŷ_j^ρ / ŷ_k` instead, ŷ the values
/// floored at [`positive_floor`] of their column.
fn leave_one_out(
    y: &[f64],
    evidence: Option<nalgebra::DVectorView<f64>>,
    n: usize,
    d: usize,
    rho: f64,
    suffix: &mut [f64],
    g: &mut [f64],
) {
    if rho != 1.0 {
        // suffix holds the full product evidence ⊙ Π_j ŷ_j^ρ; g[:, k] keeps ŷ_k until the end.
        for (i, s) in suffix[..n].iter_mut().enumerate() {
            *s = evidence.as_ref().map_or(1.0, |e| e[i]);
        }
        for (column, g_col) in y[..d * n].chunks_exact(n).zip(g.chunks_exact_mut(n)) {
            let floor = positive_floor(column);
            for ((gv, s), v) in g_col.iter_mut().zip(suffix[..n].iter_mut()).zip(column) {
                *gv = v.max(floor);
                *s *= gv.powf(rho);
            }
        }
        for g_col in g[..d * n].chunks_exact_mut(n) {
            for (gv, s) in g_col.iter_mut().zip(&suffix[..n]) {
                *gv = s / *gv;
            }
        }
        return;
    }
    // Prefix: g[:, k] = evidence ⊙ y[:, 0] ⊙ ... ⊙ y[:, k-1].
    for k in 0..d {
        for i in 0..n {
            g[k * n + i] = if k == 0 {
                evidence.as_ref().map_or(1.0, |e| e[i])
            } else {
                g[(k - 1) * n + i] * y[(k - 1) * n + i]
            };
        }
    }
    // Suffix: multiply g[:, k] by y[:, k+1] ⊙ ... ⊙ y[:, d-1].
    suffix[..n].iter_mut().for_each(|s| *s = 1.0);
    for k in (0..d).rev() {
        for i in 0..n {
            g[k * n + i] *= suffix[i];
            suffix[i] *= y[k * n + i];
        }
    }
}

/// The floor below which a message's values are raised before a power: 1e-6 of its largest
/// |value| (a kernel message can dip below zero where it is small), at least the smallest
/// positive normal number.
fn positive_floor(values: &[f64]) -> f64 {
    let top = values.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    (1e-6 * top).max(f64::MIN_POSITIVE)
}

/// Normalises `update` to unit norm with the sign that makes the message's values at the
/// training values sum to a positive number (`orientation · c > 0`; BP messages are positive
/// functions, and a sign flip in one factor would turn a belief's argmax into its argmin),
/// damps it with `old` (`d old + (1 - d) update`) and normalises again, leaving the new message
/// in `update`. Returns the change `||new - old||`, or None when a norm is zero or not finite.
fn mix_normalised(
    old: &[f64],
    update: &mut [f64],
    orientation: &[f64],
    damping: f64,
) -> Option<f64> {
    let [norm2, sum] = lane_sums(update.len(), |i| {
        let u = update[i];
        [u * u, u * orientation[i]]
    });
    let norm = norm2.sqrt();
    if !(norm > 0.0 && norm.is_finite()) {
        return None;
    }
    let scale = (1.0 - damping) / if sum < 0.0 { -norm } else { norm };
    for (u, o) in update.iter_mut().zip(old) {
        *u = damping * o + scale * *u;
    }
    let [mixed2] = lane_sums(update.len(), |i| [update[i] * update[i]]);
    let mixed = mixed2.sqrt();
    if !(mixed > 0.0 && mixed.is_finite()) {
        return None;
    }
    let inv = 1.0 / mixed;
    update.iter_mut().for_each(|u| *u *= inv);
    let [change2] = lane_sums(update.len(), |i| {
        let d = update[i] - old[i];
        [d * d]
    });
    Some(change2.sqrt())
}

impl Inference for KbpEngine {
    fn step(&mut self) -> Result<StepReport> {
        let start = Instant::now();
        let dim = self.dim;
        let iteration = self.iteration + 1;
        let damping = self.damping.with_step_scale(self.step_scale).0;
        let residual = match self.schedule {
            Schedule::Synchronous => {
                let outcome = if self.uses_batches() {
                    self.step_batched(damping)
                } else {
                    self.step_streaming(damping)
                };
                match outcome {
                    Ok(residual) => {
                        self.record_changes(true, None);
                        std::mem::swap(&mut self.messages, &mut self.next);
                        residual
                    }
                    Err(slot) => return Err(self.divergence(slot, iteration)),
                }
            }
            Schedule::Sweep => {
                // Forward then backward over the node ids, so information crosses the graph
                // in both directions every sweep.
                let n = self.graph.num_nodes();
                self.serial_pass((0..n).chain((0..n).rev()), iteration, damping)?
            }
            Schedule::Random => self.step_random(iteration, damping)?,
            Schedule::Residual => self.step_residual(iteration, damping)?,
        };
        self.iteration = iteration;
        Ok(StepReport {
            iteration,
            residual,
            seconds: start.elapsed().as_secs_f64(),
            updates: self.messages.len() / dim.max(1)
                * if matches!(self.schedule, Schedule::Sweep) {
                    2
                } else {
                    1
                },
        })
    }

    fn iteration(&self) -> usize {
        self.iteration
    }

    fn message_changes(&self) -> Option<MessageChanges<'_>> {
        self.recorded_changes()
    }

    /// The belief at the candidate values (not normalised; may be negative).
    fn belief(&self, node: NodeId) -> Belief {
        let nc = self.candidates.len();
        let mut ys = self.candidate_prior.clone();
        if let Some(ev) = &self.candidate_evidence {
            for (x, e) in ys.iter_mut().zip(ev.column(node).iter()) {
                *x *= e;
            }
        }
        for (_, c) in self.incoming(node) {
            let v = &self.candidate_eval * DVectorView::from_slice(c, self.dim);
            let floor = positive_floor(v.as_slice());
            for (x, m) in ys.iter_mut().zip(v.iter()) {
                *x *= if self.rho == 1.0 {
                    *m
                } else {
                    m.max(floor).powf(self.rho)
                };
            }
        }
        debug_assert_eq!(ys.len(), nc);
        Belief::Curve {
            xs: self.candidates.clone(),
            ys,
        }
    }

    /// MAP: the candidate with the largest belief. Mean: the candidates weighted by the
    /// positive part of the belief (negative lobes carry no probability).
    fn estimates(&self, kind: EstimateKind) -> Estimates {
        let nc = self.candidates.len();
        let beliefs = self.candidate_beliefs();
        let values = beliefs
            .par_chunks(nc)
            .map(|b| match kind {
                EstimateKind::Map => {
                    let mut best = 0;
                    for (i, v) in b.iter().enumerate() {
                        if *v > b[best] {
                            best = i;
                        }
                    }
                    self.candidates[best]
                }
                EstimateKind::Mean => {
                    let (mut num, mut den) = (0.0, 0.0);
                    for (x, v) in self.candidates.iter().zip(b) {
                        let w = v.max(0.0);
                        num += x * w;
                        den += w;
                    }
                    if den > 0.0 {
                        num / den
                    } else {
                        // No positive mass anywhere: fall back to the least negative candidate.
                        let mut best = 0;
                        for (i, v) in b.iter().enumerate() {
                            if *v > b[best] {
                                best = i;
                            }
                        }
                        self.candidates[best]
                    }
                }
            })
            .collect();
        Estimates { dim: 1, values }
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use rand_distr::{Distribution, StandardNormal};

    use super::*;
    use crate::inference::kbp::{KbpSettings, KbpTraining, KbpUpdate};

    /// A 20 x 20 image of C = 10 gray levels (concentric rings) and a noisy copy (sigma 30).
    fn rings(seed: u64) -> (Vec<f64>, Vec<f64>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let clean: Vec<f64> = (0..400)
            .map(|i| {
                let (x, y) = ((i % 20) as f64 - 9.5, (i / 20) as f64 - 9.5);
                let level = ((x * x + y * y).sqrt() / 1.4).floor().min(9.0);
                level * 255.0 / 9.0
            })
            .collect();
        let noisy = clean
            .iter()
            .map(|v| {
                let z: f64 = StandardNormal.sample(&mut rng);
                v + 30.0 * z
            })
            .collect();
        (clean, noisy)
    }

    /// A constant-time engine on that image, learned from a second noise draw of it: 400
    /// nodes, so the batched step runs several chunks per block and a partial one, over the
    /// blocks p = 2, 3, 4 (corners, edges, interior).
    fn engine(damping: f64) -> KbpEngine {
        let graph = Graph::grid(20, 20).unwrap();
        let (clean, training_noisy) = rings(1);
        let (_, test_noisy) = rings(2);
        let (mut sender, mut receiver) = (Vec::new(), Vec::new());
        for &(a, b) in graph.edges() {
            sender.extend([clean[a], clean[b]]);
            receiver.extend([clean[b], clean[a]]);
        }
        let training = KbpTraining {
            sender: &sender,
            receiver: &receiver,
            hidden: &clean,
            observed: &training_noisy,
            observation_noise: None,
        };
        let settings = KbpSettings {
            update: KbpUpdate::Constant,
            ..KbpSettings::default()
        };
        let model = KbpModel::learn(&training, &settings, &[2, 3, 4]).unwrap();
        let evidence = model.evidence_coefficients(&test_noisy).unwrap();
        let candidates = model.training_values().to_vec();
        KbpEngine::new(
            Arc::new(model),
            graph,
            Some(evidence),
            candidates,
            Schedule::Synchronous,
            Damping(damping),
        )
        .unwrap()
    }

    #[test]
    fn the_fused_batched_step_equals_the_node_by_node_update() {
        let (mut batched, mut streaming) = (engine(0.3), engine(0.3));
        assert!(batched.uses_batches());
        assert!(batched.blocks.len() >= 3 && batched.graph.num_nodes() > 2 * CHUNK_NODES);
        for iteration in 0..3 {
            let r1 = batched.step_batched(0.3).unwrap();
            let r2 = streaming.step_streaming(0.3).unwrap();
            let worst = batched
                .next
                .iter()
                .zip(&streaming.next)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            assert!(worst < 1e-10, "iteration {iteration}: differ by {worst}");
            assert!((r1 - r2).abs() < 1e-10 && r1 > 0.0);
            std::mem::swap(&mut batched.messages, &mut batched.next);
            std::mem::swap(&mut streaming.messages, &mut streaming.next);
        }
    }

    #[test]
    fn a_message_without_a_finite_norm_stops_the_run_and_keeps_the_messages() {
        let mut e = engine(0.5);
        e.step().unwrap();
        let dim = e.dim;
        let poisoned = e.in_slot[e.offset[45]];
        e.messages[poisoned * dim..(poisoned + 1) * dim].fill(f64::NAN);
        let before: Vec<u64> = e.messages.iter().map(|v| v.to_bits()).collect();
        let err = e.step().unwrap_err().to_string();
        assert!(
            err.contains("no finite norm") && err.contains("->"),
            "{err}"
        );
        let after: Vec<u64> = e.messages.iter().map(|v| v.to_bits()).collect();
        assert_eq!(
            before, after,
            "a failed step must leave the messages as they were"
        );
        assert_eq!(e.iteration(), 1);
    }
}
