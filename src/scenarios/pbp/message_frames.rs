//! Predictive BP's messages on the convergence debugger's canvas (Wang & Gordon 2020, eq. 4).
//! PBP does not iterate: learning is closed-form regression (Learning Steps 1-6) and inference
//! is one upward and one downward pass on the latent junction tree per evidence change, exact
//! for the learned operators. A frame is one such pass (after learning, relearning, or an
//! evidence or query change), and a message's change is what the pass did to it.
//!
//! Nodes are the junction tree's cliques (drawn in layers from the root); each non-root clique
//! c sends `up[c]` to its parent and receives `down[c]`. A message is compared by its values
//! scaled to mean |value| 1 (the passes rescale, `log_scale`); change = mean |Δ|, a message
//! seen for the first time counts from zero. Cost per frame O(Σ message lengths).

use crate::inference::pbp::PbpModel;
use crate::run::residuals::{
    ConvergenceGraph, ConvergenceTracker, ConvergenceView, EDGE_BUDGET_BYTES, MessageChanges,
    change_of,
};

/// Why predictive BP has no schedules or what-if runs (shown in the debugger).
pub const NO_ITERATIONS: &str = "predictive BP does not iterate: learning is closed-form \
regression (Wang & Gordon 2020, Learning Steps 1-6) and inference is one upward and one \
downward pass on the latent junction tree per evidence change (eq. 4), exact for the learned \
operators; so there are no schedules, damping or what-if runs (EM's iterations belong to the \
baselines, not to message passing). The canvas shows what each pass did to each message";

/// The per-message record of a pbp run.
#[derive(Debug, Clone, Default)]
pub struct PbpMessageFrames {
    tracker: Option<ConvergenceTracker>,
    last: Vec<Option<Vec<f64>>>,
    frames: usize,
}

/// Values scaled to mean |value| 1.
fn shape(v: &[f64]) -> Vec<f64> {
    let mean = v.iter().map(|x| x.abs()).sum::<f64>() / v.len().max(1) as f64;
    if mean > 0.0 && mean.is_finite() {
        v.iter().map(|x| x / mean).collect()
    } else {
        v.to_vec()
    }
}

impl PbpMessageFrames {
    /// Records one pass of `model` with `evidence` (indexed by node id).
    pub fn record(&mut self, model: &PbpModel, evidence: &[Option<usize>]) {
        let tree = &model.tree;
        let n = model.jt.len();
        let links: Vec<(usize, usize)> = (0..n)
            .filter_map(|c| tree.parent[c].map(|p| (c, p)))
            .collect();
        let mut messages: Vec<[usize; 2]> = links.iter().map(|&(c, p)| [c, p]).collect();
        messages.extend(links.iter().map(|&(c, p)| [p, c]));
        let passes = model.propagate(&model.leaf_messages(evidence));
        let contents: Vec<&[f64]> = links
            .iter()
            .map(|&(c, _)| &passes.up[c].v[..])
            .chain(links.iter().map(|&(c, _)| &passes.down[c].v[..]))
            .collect();
        let same_graph = self
            .tracker
            .as_ref()
            .and_then(|t| t.edges().map(|_| self.last.len() == messages.len()))
            .unwrap_or(false);
        if !same_graph {
            self.tracker = Some(ConvergenceTracker::for_graph(
                ConvergenceGraph {
                    positions: ConvergenceGraph::layered_positions(n, &links, tree.root),
                    messages: messages.clone(),
                    value_axis: "message entry (scaled to mean 1)".into(),
                },
                EDGE_BUDGET_BYTES,
            ));
            self.last = vec![None; messages.len()];
            self.frames = 0;
        }
        let k = contents.iter().map(|v| v.len()).max().unwrap_or(1).max(1);
        let mut change = vec![0.0; messages.len()];
        let mut signed = vec![0.0; messages.len()];
        let mut values = vec![0.0; messages.len() * k];
        for (m, v) in contents.iter().enumerate() {
            if v.is_empty() {
                continue;
            }
            let now = shape(v);
            let zeros = vec![0.0; now.len()];
            let old = match &self.last[m] {
                Some(old) if old.len() == now.len() => old,
                _ => &zeros,
            };
            let (l1, s) = change_of(old, &now);
            change[m] = l1 / now.len() as f64;
            signed[m] = s / now.len() as f64;
            values[m * k..m * k + now.len()].copy_from_slice(&now);
            self.last[m] = Some(now);
        }
        let target: Vec<usize> = messages.iter().map(|e| e[1]).collect();
        self.frames += 1;
        if let Some(t) = &mut self.tracker {
            t.observe_with_values(
                self.frames,
                &MessageChanges {
                    change: &change,
                    signed: &signed,
                    target: &target,
                },
                &values,
                k,
            );
        }
    }

    pub fn view(&self) -> Option<ConvergenceView> {
        let mut view = self
            .tracker
            .as_ref()?
            .view("one exact pass", 0.0, 0.0, self.frames.max(1));
        view.fixed_schedule = Some(NO_ITERATIONS.to_string());
        Some(view)
    }
}
