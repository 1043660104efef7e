//! Tree kernel BP's messages on the convergence debugger's canvas (Song, Gretton & Guestrin
//! 2010, Algorithm 1). A tree has no iterative residual: every message is computed once per
//! evidence change (upward, then downward), so a frame is one message pass while a run steps,
//! or one evidence change answered at once, and a message's change is what that pass or change
//! did to it.
//!
//! A message is compared through its values at the receiver's own samples (`K_s β ≈ g`, the
//! solve's right-hand side, [`MessageWeights::rhs`]) scaled to mean |value| 1, since the engine
//! rescales messages (`log_scale`) and only their shape matters to a belief; the constant
//! message ("one") is all ones. Change = mean |Δ| over the samples; a message never computed
//! before counts from zero (change 1), a pending or pruned one has change 0.
//!
//! Cost per frame: O(Σ samples per message); memory within the debugger's budget.

use crate::inference::tree_kbp::{Message, TreeKbp};
use crate::run::residuals::{
    ConvergenceGraph, ConvergenceStats, ConvergenceTracker, ConvergenceView, EDGE_BUDGET_BYTES,
    MessageChanges, change_of,
};

/// Why the tree has no schedules or what-if runs (shown in the debugger).
pub const NO_ITERATIVE_RESIDUAL: &str = "a tree has no iterative residual: kernel BP computes \
each message once per evidence change, upward to the root and back (Song et al. 2010, \
Algorithm 1), and the result is exact for the tree whatever the order; so there are no \
schedules, damping or what-if runs. The canvas shows what each message pass (while stepping) or \
each evidence change did to each message";

/// The per-message history of a tree run.
#[derive(Debug, Clone)]
pub struct TreeMessageFrames {
    tracker: ConvergenceTracker,
    /// The last computed values of each message (kept while it is pending).
    last: Vec<Option<Vec<f64>>>,
    per_message: usize,
    frames: usize,
}

/// A message's values at the receiver's samples, scaled to mean |value| 1 (None when it has
/// none: pending or pruned).
pub fn message_shape(message: &Message, samples: usize) -> Option<Vec<f64>> {
    let raw: Vec<f64> = match message {
        Message::Pending | Message::Pruned => return None,
        Message::One => vec![1.0; samples.max(1)],
        Message::Weights(w) => w.rhs.iter().copied().collect(),
    };
    let mean = raw.iter().map(|v| v.abs()).sum::<f64>() / raw.len().max(1) as f64;
    Some(if mean > 0.0 && mean.is_finite() {
        raw.iter().map(|v| v / mean).collect()
    } else {
        raw
    })
}

impl TreeMessageFrames {
    /// `positions`: the canvas's node positions (any range; scaled into the unit square).
    pub fn new(engine: &TreeKbp, positions: &[[f64; 2]]) -> Self {
        let graph = engine.model().graph();
        let messages: Vec<[usize; 2]> = (0..graph.num_messages())
            .map(|m| [graph.source(m), graph.target(m)])
            .collect();
        let per_message = (0..graph.num_edges())
            .map(|e| engine.model().edge_rows(e).len())
            .max()
            .unwrap_or(1)
            .max(1);
        TreeMessageFrames {
            tracker: ConvergenceTracker::for_graph(
                ConvergenceGraph {
                    positions: unit_square(positions),
                    messages,
                    value_axis: "receiver's sample i (message scaled to mean 1)".into(),
                },
                EDGE_BUDGET_BYTES,
            ),
            last: vec![None; graph.num_messages()],
            per_message,
            frames: 0,
        }
    }

    /// Records one frame: every message's change since the last frame.
    pub fn record(&mut self, engine: &TreeKbp) -> ConvergenceStats {
        let graph = engine.model().graph();
        let n = graph.num_messages();
        let k = self.per_message;
        let mut change = vec![0.0; n];
        let mut signed = vec![0.0; n];
        let mut values = vec![0.0; n * k];
        let target: Vec<usize> = (0..n).map(|m| graph.target(m)).collect();
        for m in 0..n {
            let samples = engine.model().edge_rows(m / 2).len();
            if let Some(now) = message_shape(engine.message(m), samples) {
                let zeros = vec![0.0; now.len()];
                let old = match &self.last[m] {
                    Some(old) if old.len() == now.len() => old,
                    _ => &zeros,
                };
                let (l1, s) = change_of(old, &now);
                change[m] = l1 / now.len().max(1) as f64;
                signed[m] = s / now.len().max(1) as f64;
                for (j, v) in now.iter().take(k).enumerate() {
                    values[m * k + j] = *v;
                }
                self.last[m] = Some(now);
            } else if let Some(old) = &self.last[m] {
                // Pending: its last values stay on show, unchanged.
                for (j, v) in old.iter().take(k).enumerate() {
                    values[m * k + j] = *v;
                }
            }
        }
        self.frames += 1;
        let changes = MessageChanges {
            change: &change,
            signed: &signed,
            target: &target,
        };
        self.tracker
            .observe_with_values(self.frames, &changes, &values, k)
    }

    pub fn frames(&self) -> usize {
        self.frames
    }

    pub fn view(&self) -> ConvergenceView {
        let mut view = self
            .tracker
            .view("upward, then downward", 0.0, 0.0, self.frames.max(1));
        view.fixed_schedule = Some(NO_ITERATIVE_RESIDUAL.to_string());
        view
    }
}

/// Positions scaled into [0.05, 0.95]² keeping their aspect.
fn unit_square(positions: &[[f64; 2]]) -> Vec<[f64; 2]> {
    let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
    for p in positions {
        for d in 0..2 {
            lo[d] = lo[d].min(p[d]);
            hi[d] = hi[d].max(p[d]);
        }
    }
    let span = (hi[0] - lo[0]).max(hi[1] - lo[1]);
    if !(span > 0.0 && span.is_finite()) {
        return vec![[0.5, 0.5]; positions.len()];
    }
    positions
        .iter()
        .map(|p| {
            let mut q = [0.0; 2];
            for d in 0..2 {
                let centre = 0.5 * (lo[d] + hi[d]);
                q[d] = 0.5 + 0.9 * (p[d] - centre) / span;
            }
            q
        })
        .collect()
}
