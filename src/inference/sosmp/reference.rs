//! The BP fixed point `m*` by numerical integration on the SOSMP grid (the reference of
//! Noorshams & Wainwright 2013, Sec. 5), and the dependency order of messages on a tree.
//!
//! A grid-BP message `v -> u` at receiver node `x_i` is
//! `m(x_i) ∝ Σ_k w_k ψ_uv(x_i, y_k) ψ_v(y_k) Π_{w ∈ N(v)\u} m_{w->v}(y_k)`, normalised so that
//! `Σ_i w_i m(x_i) = 1`: O(n²) per message (one axpy of a potential row per sender node).
//!
//! On a tree every message is computed once, in an order where its inputs are final (upward
//! then downward from node 0): this is what synchronous BP reaches after diameter-many sweeps,
//! at `1/diameter` of the cost; one extra synchronous sweep then measures the fixed-point
//! residual. On graphs with cycles, synchronous BP runs from uniform messages until the largest
//! change of any message value falls below the tolerance. Cost O(sweeps · |E→| · n²), rayon over
//! messages.

use rayon::prelude::*;

use super::grid::StateGrid;
use super::kernels;
use super::model::GridMrf;
use super::update::normalise;
use crate::error::{Error, Result};
use crate::model::{Graph, MsgId};
use crate::run::CancelFlag;

/// Messages in an order where each one's inputs come earlier (a tree only): the upward
/// messages deepest first, then the downward ones from the root. O(n).
pub fn tree_message_order(graph: &Graph) -> Vec<MsgId> {
    let bfs = graph.bfs_order(0);
    let mut order = Vec::with_capacity(graph.num_messages());
    for &(node, parent) in bfs.iter().rev() {
        if let Some(p) = parent {
            order.push(graph.message_between(node, p).expect("tree edge"));
        }
    }
    for &(node, parent) in &bfs {
        if let Some(p) = parent {
            order.push(graph.message_between(p, node).expect("tree edge"));
        }
    }
    order
}

/// Result of grid BP.
#[derive(Debug, Clone)]
pub struct GridBp {
    /// `m*` per directed message (message order), each integrating to 1: `[m * n + i]`.
    pub messages: Vec<f64>,
    /// Beliefs `ψ_u Π m*_{w->u}`, normalised, node-major.
    pub beliefs: Vec<f64>,
    /// Synchronous sweeps run (on a tree: 1, the verification sweep).
    pub sweeps: usize,
    /// The largest change of a message value in the last sweep.
    pub residual: f64,
    pub converged: bool,
    /// "tree" or "synchronous".
    pub schedule: &'static str,
}

/// One grid-BP message `m` from `messages` into `out`; `s` and `row` are scratch of length n.
/// O(n²).
pub fn bp_message<G: StateGrid>(
    mrf: &GridMrf<G>,
    messages: &[f64],
    m: MsgId,
    s: &mut [f64],
    row: &mut [f64],
    out: &mut [f64],
) {
    let n = mrf.grid.len();
    let g = &mrf.graph;
    let (v, u) = (g.source(m), g.target(m));
    kernels::mul_into(mrf.grid.weights(), &mrf.node_potential(v), s);
    for nb in g.neighbors(v) {
        if nb.node != u {
            kernels::mul_assign(s, &messages[nb.incoming * n..(nb.incoming + 1) * n]);
        }
    }
    let (pot, forward) = mrf.message_potential(m);
    out.iter_mut().for_each(|o| *o = 0.0);
    for (k, &sk) in s.iter().enumerate() {
        if sk != 0.0 {
            let r = pot.receiver_row(forward, k, row);
            kernels::axpy(sk, r, out);
        }
    }
    normalise(mrf.grid.weights(), out);
}

fn check_message(out: &[f64], m: MsgId, g: &Graph) -> Result<()> {
    if out.iter().any(|v| !v.is_finite()) || !out.iter().any(|v| *v > 0.0) {
        return Err(Error::Other(format!(
            "grid BP: message {} -> {} has no mass or is not finite",
            g.source(m),
            g.target(m)
        )));
    }
    Ok(())
}

/// One synchronous sweep from `old` into `new`; returns the largest change.
fn sweep<G: StateGrid>(mrf: &GridMrf<G>, old: &[f64], new: &mut [f64]) -> Result<f64> {
    let n = mrf.grid.len();
    new.par_chunks_mut(n)
        .enumerate()
        .map_init(
            || (vec![0.0; n], vec![0.0; n]),
            |(s, row), (m, out)| {
                bp_message(mrf, old, m, s, row, out);
                check_message(out, m, &mrf.graph)?;
                Ok(old[m * n..(m + 1) * n]
                    .iter()
                    .zip(out.iter())
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f64::max))
            },
        )
        .try_reduce(|| 0.0, |a, b| Ok(a.max(b)))
}

/// Grid BP to its fixed point (see the module doc). `tolerance` bounds the largest change of a
/// message value; `max_sweeps` caps the synchronous iteration on graphs with cycles.
pub fn grid_bp<G: StateGrid>(
    mrf: &GridMrf<G>,
    tolerance: f64,
    max_sweeps: usize,
    cancel: &CancelFlag,
) -> Result<GridBp> {
    mrf.check()?;
    let n = mrf.grid.len();
    let g = &mrf.graph;
    let total = g.num_messages();
    let volume = mrf.grid.volume();
    let mut messages = vec![1.0 / volume; total * n];
    let mut next = messages.clone();
    let (sweeps, residual, converged, schedule) = if g.check_tree().is_ok() {
        let mut s = vec![0.0; n];
        let mut row = vec![0.0; n];
        let mut out = vec![0.0; n];
        for (i, m) in tree_message_order(g).into_iter().enumerate() {
            if i % 16 == 0 {
                cancel.check()?;
            }
            bp_message(mrf, &messages, m, &mut s, &mut row, &mut out);
            check_message(&out, m, g)?;
            messages[m * n..(m + 1) * n].copy_from_slice(&out);
        }
        cancel.check()?;
        let residual = sweep(mrf, &messages, &mut next)?;
        (1, residual, residual < tolerance.max(1e-9), "tree")
    } else {
        let mut residual = f64::INFINITY;
        let mut sweeps = 0;
        while sweeps < max_sweeps && residual >= tolerance {
            cancel.check()?;
            residual = sweep(mrf, &messages, &mut next)?;
            std::mem::swap(&mut messages, &mut next);
            sweeps += 1;
        }
        (sweeps, residual, residual < tolerance, "synchronous")
    };
    let mut beliefs = vec![0.0; g.num_nodes() * n];
    beliefs.par_chunks_mut(n).enumerate().for_each(|(u, b)| {
        b.copy_from_slice(&mrf.node_potential(u));
        for nb in g.neighbors(u) {
            kernels::mul_assign(b, &messages[nb.incoming * n..(nb.incoming + 1) * n]);
        }
        normalise(mrf.grid.weights(), b);
    });
    Ok(GridBp {
        messages,
        beliefs,
        sweeps,
        residual,
        converged,
        schedule,
    })
}
