//! The messages of tree kernel BP (Algorithm 1 of Song et al. 2010) on a [`TreeKbpModel`]:
//! evidence, an upward-then-downward schedule from a root, incremental recomputation when one
//! evidence value moves, and the belief read-outs.
//!
//! Schedule: the upward pass sends every child -> parent message (leaves first), the downward
//! pass every parent -> child message (root first), so after both every node has all its
//! incoming messages. Any root gives the same messages (they do not depend on the schedule);
//! re-rooting only changes the order. [`TreeKbp::step`] computes one message of the schedule,
//! [`TreeKbp::run`] the rest.
//!
//! Cost of one message `t -> s` on edge `e` (`m` = samples of the edge, `m_f` of another
//! edge `f` at `t`): observed `t`: `m` kernel evaluations and two triangular solve pairs
//! (`4 m²` flops); hidden `t`: one cross-Gram product per non-constant incoming message
//! (`2 m m_f` flops, free when the edges share their samples) and one solve pair (`2 m²`).
//! Read-outs of a node: one product per incoming message at its belief samples and at its
//! `G` evaluation points (`2 G m`). When one evidence value changes, only the messages
//! directed away from that node (up to the next observed node) are recomputed.

use nalgebra::DVector;
use rayon::prelude::*;

use super::model::{Target, TreeKbpModel};
use crate::error::{Error, Result};
use crate::kernel::kernel_column;
use crate::model::{Graph, MsgId, NodeId};
use std::sync::Arc;

/// The weights of a computed message `t -> s`.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageWeights {
    /// `β`, over the receiver's samples of the edge; the message is
    /// `exp(log_scale) Σ_i β_i k_s(x_s^i, x)`.
    pub beta: DVector<f64>,
    /// The right-hand side `g` of the receiver's solve `(K_s + λ I) β = g`, rescaled with
    /// `β` (so `K_s β = g - λ β`: the message at the receiver's own samples).
    pub rhs: DVector<f64>,
    /// Natural log of the factor removed by rescaling (summed over the sending subtree).
    pub log_scale: f64,
}

/// The state of one directed message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// Not computed yet (or invalidated by an evidence change).
    Pending,
    /// Not needed: its receiver is observed, so nothing it says is used.
    Pruned,
    /// Exactly the constant 1: no evidence on the sending side.
    One,
    /// A weight vector.
    Weights(MessageWeights),
}

impl Message {
    pub fn label(&self) -> &'static str {
        match self {
            Message::Pending => "pending",
            Message::Pruned => "pruned",
            Message::One => "one",
            Message::Weights(_) => "weights",
        }
    }
}

/// The read-outs of one node's belief.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeBelief {
    pub node: NodeId,
    /// The evidence, for an observed node (then the curves are empty and `mean = argmax =`
    /// the value).
    pub observed: Option<Vec<f64>>,
    /// The Parzen belief `P(x) Π_u m_u(x)` at the evaluation points, clipped at 0 and
    /// rescaled to max 1. The estimated messages swing below 0 between and beyond their
    /// samples; a density cannot, and the clipped belief is closer to the exact posterior on
    /// every seed measured (README, "Samples per edge": mean L1 0.367 -> 0.341 at m = 300,
    /// 0.261 -> 0.238 at m = 1000 on the sharp bimodal case). The embedding keeps its lobes.
    pub parzen: Vec<f64>,
    /// The belief embedding `μ(x) = Σ_i w_i k(b_i, x) / n_b` at the evaluation points,
    /// rescaled to max |.| 1 (negative lobes kept).
    pub embedding: Vec<f64>,
    /// Weights `w_i = Π_u m_u(b_i)` on the belief samples, rescaled to max |w| 1.
    pub weights: Vec<f64>,
    /// Log of the factor removed from `weights` (includes the messages' log scales).
    pub log_scale: f64,
    /// Posterior mean `Σ w_i b_i / Σ w_i` (normalised weights; may leave the data range when
    /// weights are negative).
    pub mean: Vec<f64>,
    /// The evaluation point with the largest Parzen belief.
    pub argmax: Vec<f64>,
    /// The evaluation point with the largest embedding value.
    pub argmax_embedding: Vec<f64>,
    /// Number of non-constant incoming messages used.
    pub messages_used: usize,
    /// Kish's effective sample size `(Σ w⁺)² / Σ (w⁺)²` of the belief weights clipped at 0
    /// (0 for an observed node): how many of the belief samples the posterior rests on. A
    /// sharp posterior far in the tail of the prior keeps few, and its read-out is then
    /// limited by them, whatever the bandwidth (README, "Bandwidth by cross-validation").
    pub effective_samples: f64,
}

/// Kish's effective sample size of the positive part of `w` (0 when no weight is positive).
pub fn effective_sample_size(w: &[f64]) -> f64 {
    let (s1, s2) = w
        .iter()
        .filter(|&&x| x > 0.0)
        .fold((0.0, 0.0), |(a, b), &x| (a + x, b + x * x));
    if s2 > 0.0 { s1 * s1 / s2 } else { 0.0 }
}

/// Tree kernel BP state: evidence and messages on a shared model.
#[derive(Debug, Clone)]
pub struct TreeKbp {
    model: Arc<TreeKbpModel>,
    root: NodeId,
    evidence: Vec<Option<Vec<f64>>>,
    messages: Vec<Message>,
    schedule: Vec<MsgId>,
    /// Number of schedule entries already visited since the last invalidation.
    cursor: usize,
}

fn schedule_from(graph: &Graph, root: NodeId) -> Vec<MsgId> {
    let order = graph.bfs_order(root);
    let mut s: Vec<MsgId> = order
        .iter()
        .rev()
        .filter_map(|&(u, p)| p.and_then(|p| graph.message_between(u, p)))
        .collect();
    s.extend(
        order
            .iter()
            .filter_map(|&(u, p)| p.and_then(|p| graph.message_between(p, u))),
    );
    s
}

impl TreeKbp {
    /// No evidence, nothing computed; the schedule rooted at `root`.
    pub fn new(model: Arc<TreeKbpModel>, root: NodeId) -> Result<TreeKbp> {
        let n = model.num_nodes();
        if root >= n {
            return Err(Error::param(
                "root",
                format!("node {root} does not exist ({n} nodes)"),
            ));
        }
        let schedule = schedule_from(model.graph(), root);
        let messages = vec![Message::Pending; model.graph().num_messages()];
        Ok(TreeKbp {
            model,
            root,
            evidence: vec![None; n],
            messages,
            schedule,
            cursor: 0,
        })
    }

    pub fn model(&self) -> &TreeKbpModel {
        &self.model
    }

    pub fn model_arc(&self) -> &Arc<TreeKbpModel> {
        &self.model
    }

    pub fn root(&self) -> NodeId {
        self.root
    }

    /// The message order: upward pass, then downward pass.
    pub fn schedule(&self) -> &[MsgId] {
        &self.schedule
    }

    /// How many schedule entries have been visited.
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Re-roots the schedule. Computed messages stay valid (they do not depend on the root), so
    /// a complete schedule stays complete; pending messages will be computed in the new order.
    pub fn set_root(&mut self, root: NodeId) -> Result<()> {
        if root >= self.model.num_nodes() {
            return Err(Error::param("root", format!("node {root} does not exist")));
        }
        self.root = root;
        self.schedule = schedule_from(self.model.graph(), root);
        let complete = self.messages.iter().all(|m| *m != Message::Pending);
        self.cursor = if complete { self.schedule.len() } else { 0 };
        Ok(())
    }

    pub fn evidence(&self) -> &[Option<Vec<f64>>] {
        &self.evidence
    }

    /// Observes `node` at `value` (or removes its evidence with `None`) and invalidates the
    /// messages that depend on it: those directed away from `node` up to the next observed
    /// node, and the node's incoming messages when it changes between hidden and observed.
    /// Errors on a value of the wrong dimension or a non-finite value.
    pub fn set_evidence(&mut self, node: NodeId, value: Option<Vec<f64>>) -> Result<()> {
        let n = self.model.num_nodes();
        if node >= n {
            return Err(Error::param(
                "evidence",
                format!("node {node} does not exist"),
            ));
        }
        if let Some(v) = &value {
            let d = self.model.dim(node);
            if v.len() != d {
                return Err(Error::param(
                    "evidence",
                    format!("node {node} has dimension {d}, got {} values", v.len()),
                ));
            }
            if v.iter().any(|x| !x.is_finite()) {
                return Err(Error::param(
                    "evidence",
                    format!("node {node}: the value must be finite, got {v:?}"),
                ));
            }
        }
        if self.evidence[node] == value {
            return Ok(());
        }
        let status_changed = self.evidence[node].is_some() != value.is_some();
        self.evidence[node] = value;
        let graph = self.model.graph().clone();
        // Messages directed away from `node`, stopping behind observed nodes.
        let mut stack = vec![(node, usize::MAX)];
        while let Some((t, from)) = stack.pop() {
            for nb in graph.neighbors(t) {
                if nb.node == from {
                    continue;
                }
                self.messages[nb.outgoing] = Message::Pending;
                if self.evidence[nb.node].is_none() {
                    stack.push((nb.node, t));
                }
            }
        }
        if status_changed {
            for nb in graph.neighbors(node) {
                self.messages[nb.incoming] = Message::Pending;
            }
        }
        self.cursor = 0;
        Ok(())
    }

    /// Removes all evidence (every message becomes pending).
    pub fn clear_evidence(&mut self) {
        self.evidence.iter_mut().for_each(|e| *e = None);
        self.messages.iter_mut().for_each(|m| *m = Message::Pending);
        self.cursor = 0;
    }

    pub fn message(&self, msg: MsgId) -> &Message {
        &self.messages[msg]
    }

    /// `β · exp(log_scale)`: the weights as Algorithm 1 writes them (may overflow for very
    /// deep trees; the scaled form is what the engine uses).
    pub fn unscaled_weights(&self, msg: MsgId) -> Option<DVector<f64>> {
        match &self.messages[msg] {
            Message::Weights(w) => Some(&w.beta * w.log_scale.exp()),
            _ => None,
        }
    }

    /// Whether every message of the schedule is computed.
    pub fn done(&self) -> bool {
        self.cursor >= self.schedule.len()
    }

    /// Computes the next pending message of the schedule. Returns the message id, or `None`
    /// when the schedule is complete.
    pub fn step(&mut self) -> Result<Option<MsgId>> {
        while self.cursor < self.schedule.len() {
            let msg = self.schedule[self.cursor];
            self.cursor += 1;
            if self.messages[msg] == Message::Pending {
                self.messages[msg] = self.compute(msg)?;
                return Ok(Some(msg));
            }
        }
        Ok(None)
    }

    /// Completes the schedule; returns how many messages were computed.
    pub fn run(&mut self) -> Result<usize> {
        let mut count = 0;
        while self.step()?.is_some() {
            count += 1;
        }
        Ok(count)
    }

    /// The values of message `u -> t` (arriving through its receiver set `r`) at the node's
    /// target; `None` for the constant 1.
    fn incoming_values(&self, msg: MsgId, target: Target) -> Result<Option<(DVector<f64>, f64)>> {
        let w = match &self.messages[msg] {
            Message::One => return Ok(None),
            Message::Weights(w) => w,
            Message::Pending | Message::Pruned => {
                return Err(Error::Other(format!(
                    "internal: message {} -> {} is {} but needed",
                    self.model.graph().source(msg),
                    self.model.graph().target(msg),
                    self.messages[msg].label()
                )));
            }
        };
        let (t, r) = self.model.receiver_set(msg);
        let values = if target == Target::Set(r) {
            let shift = self.model.node(t).sets[r].shift;
            &w.rhs - &w.beta * shift
        } else {
            self.model.apply(t, target, r, &w.beta)?
        };
        Ok(Some((values, w.log_scale)))
    }

    /// Algorithm 1 for one message (see the module docs).
    fn compute(&self, msg: MsgId) -> Result<Message> {
        let graph = self.model.graph();
        let (t, s) = (graph.source(msg), graph.target(msg));
        if self.evidence[s].is_some() {
            return Ok(Message::Pruned);
        }
        let (_, sender_set) = self.model.sender_set(msg);
        let (_, receiver_set) = self.model.receiver_set(msg);
        let tm = self.model.node(t);
        let (mut g, mut log_scale) = if let Some(x) = &self.evidence[t] {
            let set = &tm.sets[sender_set];
            let kbar = kernel_column(&self.model.kernel(t).kernel, &set.points, x)?;
            let factor = set.factor.as_ref().expect("edge sets are factorised");
            let u = factor.solve(&kbar)?;
            (u, 0.0)
        } else {
            let mut product: Option<DVector<f64>> = None;
            let mut log_scale = 0.0;
            for nb in graph.neighbors(t) {
                if nb.node == s {
                    continue;
                }
                if let Some((v, ls)) = self.incoming_values(nb.incoming, Target::Set(sender_set))? {
                    log_scale += ls;
                    product = Some(match product {
                        None => v,
                        Some(p) => p.component_mul(&v),
                    });
                }
            }
            match product {
                None => return Ok(Message::One),
                Some(p) => (p, log_scale),
            }
        };
        let scale = g.amax();
        if !(scale > 0.0 && scale.is_finite()) {
            return Err(Error::Other(format!(
                "message {t} -> {s} vanishes at every sample (max |value| {scale}): the \
                 evidence is too far from the data for the kernel's bandwidth; move it \
                 closer to the data or widen the bandwidth"
            )));
        }
        g /= scale;
        log_scale += scale.ln();
        let factor = self.model.node(s).sets[receiver_set]
            .factor
            .as_ref()
            .expect("edge sets are factorised");
        let beta = factor.solve(&g)?;
        Ok(Message::Weights(MessageWeights {
            beta,
            rhs: g,
            log_scale,
        }))
    }

    /// The belief weights `w_i = Π_u m_u(b_i)` on the node's belief samples, rescaled to max
    /// |w| = 1, with the log of the removed factor. `None` for an observed node.
    pub fn belief_weights(&self, node: NodeId) -> Result<Option<(DVector<f64>, f64)>> {
        if self.evidence[node].is_some() {
            return Ok(None);
        }
        let nm = self.model.node(node);
        let nb_samples = nm.sets[nm.belief_set].rows.len();
        let mut w = DVector::from_element(nb_samples, 1.0);
        let mut log_scale = 0.0;
        for nb in self.model.graph().neighbors(node) {
            if !matches!(self.messages[nb.incoming], Message::Weights(_)) {
                continue;
            }
            if let Some((v, ls)) = self.incoming_values(nb.incoming, Target::Set(nm.belief_set))? {
                w.component_mul_assign(&v);
                log_scale += ls;
            }
        }
        let scale = w.amax();
        if scale > 0.0 && scale.is_finite() {
            w /= scale;
            log_scale += scale.ln();
        }
        Ok(Some((w, log_scale)))
    }

    /// The product of the incoming messages at the node's evaluation points (rescaled to max
    /// 1, with its log scale); `None` for an observed node.
    pub fn message_product_at_eval(&self, node: NodeId) -> Result<Option<(DVector<f64>, f64)>> {
        if self.evidence[node].is_some() {
            return Ok(None);
        }
        let g = self.model.eval_points(node).len();
        let mut p = DVector::from_element(g, 1.0);
        let mut log_scale = 0.0;
        for nb in self.model.graph().neighbors(node) {
            if !matches!(self.messages[nb.incoming], Message::Weights(_)) {
                continue;
            }
            if let Some((v, ls)) = self.incoming_values(nb.incoming, Target::Eval)? {
                p.component_mul_assign(&v);
                log_scale += ls;
            }
        }
        let scale = p.amax();
        if scale > 0.0 && scale.is_finite() {
            p /= scale;
            log_scale += scale.ln();
        }
        Ok(Some((p, log_scale)))
    }

    /// The values of message `msg` at its receiver's evaluation points (`None` if it is not
    /// a weight vector), in units of `exp(log_scale)`.
    pub fn message_at_eval(&self, msg: MsgId) -> Result<Option<DVector<f64>>> {
        Ok(self.incoming_values(msg, Target::Eval)?.map(|(v, _)| v))
    }

    /// All read-outs of one node (see [`NodeBelief`]). Messages still pending count as 1.
    pub fn belief(&self, node: NodeId) -> Result<NodeBelief> {
        let model = &self.model;
        if let Some(v) = &self.evidence[node] {
            return Ok(NodeBelief {
                node,
                observed: Some(v.clone()),
                parzen: Vec::new(),
                embedding: Vec::new(),
                weights: Vec::new(),
                log_scale: 0.0,
                mean: v.clone(),
                argmax: v.clone(),
                argmax_embedding: v.clone(),
                messages_used: 0,
                effective_samples: 0.0,
            });
        }
        let nm = model.node(node);
        let bset = &nm.sets[nm.belief_set];
        // Pending messages are skipped (treated as 1) so a half-run schedule still shows.
        let mut w = DVector::from_element(bset.rows.len(), 1.0);
        let eval = model.eval_points(node);
        let mut at_eval = DVector::from_column_slice(model.prior(node));
        let mut log_scale = 0.0;
        let mut used = 0;
        for nb in model.graph().neighbors(node) {
            if !matches!(self.messages[nb.incoming], Message::Weights(_)) {
                continue;
            }
            if let Some((v, ls)) = self.incoming_values(nb.incoming, Target::Set(nm.belief_set))? {
                w.component_mul_assign(&v);
                log_scale += ls;
                used += 1;
            }
            if let Some((v, _)) = self.incoming_values(nb.incoming, Target::Eval)? {
                at_eval.component_mul_assign(&v);
            }
        }
        let ws = w.amax();
        if ws > 0.0 && ws.is_finite() {
            w /= ws;
            log_scale += ws.ln();
        }
        let embedding =
            model.apply(node, Target::Eval, nm.belief_set, &w)? / bset.rows.len() as f64;
        let d = model.dim(node);
        let total: f64 = w.sum();
        let mut mean = vec![0.0; d];
        for (i, wi) in w.iter().enumerate() {
            for (m, x) in mean.iter_mut().zip(bset.points.row(i)) {
                *m += wi * x;
            }
        }
        mean.iter_mut().for_each(|m| *m /= total);
        let argmax_of = |v: &DVector<f64>| -> Vec<f64> {
            let i = v
                .iter()
                .enumerate()
                .fold(0, |best, (i, &x)| if x > v[best] { i } else { best });
            eval.row(i).to_vec()
        };
        let rescale = |v: DVector<f64>| -> Vec<f64> {
            let s = v.amax();
            if s > 0.0 && s.is_finite() {
                v.iter().map(|x| x / s).collect()
            } else {
                v.iter().copied().collect()
            }
        };
        Ok(NodeBelief {
            node,
            observed: None,
            argmax: argmax_of(&at_eval),
            argmax_embedding: argmax_of(&embedding),
            parzen: rescale(at_eval.map(|v| v.max(0.0))),
            embedding: rescale(embedding),
            effective_samples: effective_sample_size(w.as_slice()),
            weights: w.iter().copied().collect(),
            log_scale,
            mean,
            messages_used: used,
        })
    }

    /// Read-outs of every node, in parallel over nodes.
    pub fn beliefs(&self) -> Result<Vec<NodeBelief>> {
        (0..self.model.num_nodes())
            .into_par_iter()
            .map(|t| self.belief(t))
            .collect()
    }
}
