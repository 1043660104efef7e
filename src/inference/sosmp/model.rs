//! A pairwise MRF on a grid-discretised state space, and the per-edge tables SOSMP precomputes.
//!
//! For a directed edge `v -> u` (Noorshams & Wainwright 2013, eqs. 10-12):
//! `Z_uv(y) = ∫ ψ_uv(x, y) dx`, `β_uv(y) = ψ_v(y) Z_uv(y)`, `Γ_uv(x, y) = ψ_uv(x, y) / Z_uv(y)`
//! and `γ_uv;j(y) = ∫ Γ_uv(x, y) φ_j(x) dx`, with `x` the receiver's state and `y` the sender's.
//! [`EdgeTables`] holds `γ` (n x r per table) and `β` (n per message) at the grid nodes. Edges that
//! share a pair potential (and, for symmetric potentials, both directions of an edge) share one
//! γ table, so a templated model (one potential on every edge of an image grid) stores one.
//!
//! Set-up cost: O(n² r) per distinct γ table (rayon over the table's rows), O(n) per message
//! for β; memory O(tables · n r + |E→| n).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use rayon::prelude::*;

use super::basis::GridBasis;
use super::grid::StateGrid;
use super::kernels;
use super::potentials::PairPotential;
use crate::error::{Error, Result};
pub use crate::model::NodeEvidence;
pub use crate::model::SlotLayout;
use crate::model::{Graph, MsgId, NodeId};
use crate::run::CancelFlag;

/// Where the node potentials of a [`GridMrf`] live.
#[derive(Debug, Clone)]
pub enum NodePotentials {
    /// `ψ_u` at the grid nodes, node-major: `[u * n + i]`.
    Table(Vec<f64>),
    /// Computed when needed (once per node and iteration in the engine's hot loop).
    Computed(Arc<dyn NodeEvidence>),
}

impl From<Vec<f64>> for NodePotentials {
    fn from(values: Vec<f64>) -> Self {
        NodePotentials::Table(values)
    }
}

impl NodePotentials {
    /// The stored table, if the potentials are tabulated.
    pub fn table(&self) -> Option<&[f64]> {
        match self {
            NodePotentials::Table(t) => Some(t),
            NodePotentials::Computed(_) => None,
        }
    }
}

/// A pairwise MRF whose potentials are tabulated (or computed) on a grid.
#[derive(Debug, Clone)]
pub struct GridMrf<G: StateGrid> {
    pub graph: Graph,
    pub grid: G,
    /// `ψ_u` at the grid nodes.
    pub node_potentials: NodePotentials,
    /// For each undirected edge (graph order), an index into `pair_potentials`.
    pub edge_potential: Vec<usize>,
    /// The distinct pair potentials; `ψ_e(x_a, x_b)` for an edge `(a, b)` as stored in the graph.
    pub pair_potentials: Vec<Arc<dyn PairPotential>>,
}

impl<G: StateGrid> GridMrf<G> {
    /// Checks shapes and that node potentials are finite, non-negative and not all zero.
    pub fn check(&self) -> Result<()> {
        let n = self.grid.len();
        let nodes = self.graph.num_nodes();
        match &self.node_potentials {
            NodePotentials::Table(t) if t.len() != nodes * n => {
                return Err(Error::param(
                    "node potentials",
                    format!(
                        "expected {} values ({nodes} nodes x {n} grid points), got {}",
                        nodes * n,
                        t.len()
                    ),
                ));
            }
            NodePotentials::Computed(e) if e.num_nodes() != nodes || e.grid_len() != n => {
                return Err(Error::param(
                    "node potentials",
                    format!(
                        "computed for {} nodes x {} grid points, the model has {nodes} x {n}",
                        e.num_nodes(),
                        e.grid_len()
                    ),
                ));
            }
            _ => {}
        }
        // Every node checked, in parallel (for computed potentials this evaluates each once).
        let bad = (0..nodes)
            .into_par_iter()
            .map_init(
                || vec![0.0; n],
                |buf, u| {
                    let p = self.node_potential_into(u, buf);
                    if p.iter().any(|v| !(v.is_finite() && *v >= 0.0)) {
                        Some((u, "has a negative or non-finite value"))
                    } else if !p.iter().any(|v| *v > 0.0) {
                        Some((u, "is zero on the whole grid"))
                    } else {
                        None
                    }
                },
            )
            .find_first(|b| b.is_some())
            .flatten();
        if let Some((u, what)) = bad {
            return Err(Error::param("node potentials", format!("node {u} {what}")));
        }
        if self.edge_potential.len() != self.graph.num_edges() {
            return Err(Error::param(
                "edge potentials",
                format!(
                    "expected one per edge ({}), got {}",
                    self.graph.num_edges(),
                    self.edge_potential.len()
                ),
            ));
        }
        if let Some(&bad) = self
            .edge_potential
            .iter()
            .find(|&&p| p >= self.pair_potentials.len())
        {
            return Err(Error::param(
                "edge potentials",
                format!(
                    "index {bad} but only {} pair potentials",
                    self.pair_potentials.len()
                ),
            ));
        }
        if let Some(p) = self.pair_potentials.iter().find(|p| p.len() != n) {
            return Err(Error::param(
                "edge potentials",
                format!("a pair potential has {} grid points, expected {n}", p.len()),
            ));
        }
        Ok(())
    }

    /// `ψ_u` on the grid: borrowed from the table, or computed. O(n).
    pub fn node_potential(&self, u: NodeId) -> Cow<'_, [f64]> {
        match &self.node_potentials {
            NodePotentials::Table(t) => {
                let n = self.grid.len();
                Cow::Borrowed(&t[u * n..(u + 1) * n])
            }
            NodePotentials::Computed(e) => {
                let mut out = vec![0.0; self.grid.len()];
                e.fill(u, &mut out);
                Cow::Owned(out)
            }
        }
    }

    /// `ψ_u` on the grid without allocating: a slice of the table, or `buf` after filling it.
    /// O(n).
    pub fn node_potential_into<'a>(&'a self, u: NodeId, buf: &'a mut [f64]) -> &'a [f64] {
        match &self.node_potentials {
            NodePotentials::Table(t) => {
                let n = self.grid.len();
                &t[u * n..(u + 1) * n]
            }
            NodePotentials::Computed(e) => {
                e.fill(u, buf);
                buf
            }
        }
    }

    /// The pair potential of undirected edge `e`.
    pub fn pair(&self, e: usize) -> &dyn PairPotential {
        self.pair_potentials[self.edge_potential[e]].as_ref()
    }

    /// `(potential, forward)` of message `m`: forward is true for `a -> b` of edge `(a, b)`.
    pub fn message_potential(&self, m: MsgId) -> (&dyn PairPotential, bool) {
        (self.pair(m / 2), m.is_multiple_of(2))
    }
}

/// The precomputed γ tables and β weights of every directed message.
#[derive(Debug, Clone)]
pub struct EdgeTables {
    r: usize,
    n: usize,
    /// Distinct γ tables, each node-major `n x r` (`[k * r + j] = γ_j(y_k)`).
    gammas: Vec<Vec<f64>>,
    /// `Z(y_k)` of each table.
    normalisers: Vec<Vec<f64>>,
    /// Table of each message.
    table_of: Vec<usize>,
    /// `β_m(y_k)`, message-major, when the node potentials are tabulated (computed node
    /// potentials give `β = ψ_v Z` on the fly instead: `|E→| n` numbers would not fit).
    betas: Option<Vec<f64>>,
}

impl EdgeTables {
    /// Computes the tables for `basis`. Errors if some `Z_uv(y)` is not positive and finite, or
    /// some `β` has no mass. Cancellable between tables.
    pub fn new<G: StateGrid>(
        mrf: &GridMrf<G>,
        basis: &GridBasis,
        cancel: &CancelFlag,
    ) -> Result<Self> {
        mrf.check()?;
        let n = mrf.grid.len();
        let r = basis.len();
        if basis.num_points() != n {
            return Err(Error::param(
                "basis",
                format!(
                    "is evaluated on {} points, the grid has {n}",
                    basis.num_points()
                ),
            ));
        }
        let m_total = mrf.graph.num_messages();
        let mut keys: HashMap<(usize, bool), usize> = HashMap::new();
        let mut key_list: Vec<(usize, bool)> = Vec::new();
        let mut table_of = Vec::with_capacity(m_total);
        for m in 0..m_total {
            let p = mrf.edge_potential[m / 2];
            let forward = m.is_multiple_of(2) || mrf.pair_potentials[p].symmetric();
            let next = key_list.len();
            let t = *keys.entry((p, forward)).or_insert_with(|| {
                key_list.push((p, forward));
                next
            });
            table_of.push(t);
        }
        let weights = mrf.grid.weights();
        let mut gammas = Vec::with_capacity(key_list.len());
        let mut normalisers = Vec::with_capacity(key_list.len());
        for &(p, forward) in &key_list {
            cancel.check()?;
            let pot = mrf.pair_potentials[p].as_ref();
            let mut gamma = vec![0.0; n * r];
            let mut z = vec![0.0; n];
            gamma
                .par_chunks_mut(r)
                .zip(z.par_iter_mut())
                .enumerate()
                .for_each_init(
                    || (vec![0.0; n], vec![0.0; n]),
                    |(buf, wrow), (k, (g, zk))| {
                        let row = pot.receiver_row(forward, k, buf);
                        kernels::mul_into(weights, row, wrow);
                        let total = kernels::sum(wrow);
                        *zk = total;
                        for (j, gj) in g.iter_mut().enumerate() {
                            *gj = kernels::dot(wrow, basis.column(j)) / total;
                        }
                    },
                );
            if let Some(k) = z.iter().position(|v| !(v.is_finite() && *v > 0.0)) {
                return Err(Error::param(
                    "edge potentials",
                    format!(
                        "Z(y) = ∫ ψ(x, y) dx is {} at grid node {k}; it must be positive",
                        z[k]
                    ),
                ));
            }
            gammas.push(gamma);
            normalisers.push(z);
        }
        // With computed node potentials β is not stored; it has mass anyway, since Z > 0 on
        // every node (checked above) and ψ_v is non-negative and not all zero (checked by
        // `mrf.check`), and every weight is positive.
        let betas = match mrf.node_potentials.table() {
            None => None,
            Some(table) => {
                let mut betas = vec![0.0; m_total * n];
                betas.par_chunks_mut(n).enumerate().for_each(|(m, beta)| {
                    let v = mrf.graph.source(m);
                    kernels::mul_into(&table[v * n..(v + 1) * n], &normalisers[table_of[m]], beta);
                });
                for m in 0..m_total {
                    let b = &betas[m * n..(m + 1) * n];
                    if kernels::dot(b, weights).is_nan() || kernels::dot(b, weights) <= 0.0 {
                        return Err(Error::param(
                            "potentials",
                            format!(
                                "β = ψ_v Z for message {m} ({} -> {}) has no mass on the grid",
                                mrf.graph.source(m),
                                mrf.graph.target(m)
                            ),
                        ));
                    }
                }
                Some(betas)
            }
        };
        Ok(EdgeTables {
            r,
            n,
            gammas,
            normalisers,
            table_of,
            betas,
        })
    }

    /// Number of coefficients r.
    pub fn coefficients(&self) -> usize {
        self.r
    }

    /// Number of distinct γ tables.
    pub fn num_tables(&self) -> usize {
        self.gammas.len()
    }

    /// `γ_m;j(y_k)` node-major (`[k * r + j]`).
    pub fn gamma(&self, m: MsgId) -> &[f64] {
        &self.gammas[self.table_of[m]]
    }

    /// Which distinct γ table message `m` uses.
    pub fn table_index(&self, m: MsgId) -> usize {
        self.table_of[m]
    }

    /// `Z_m(y_k)`.
    pub fn normaliser(&self, m: MsgId) -> &[f64] {
        &self.normalisers[self.table_of[m]]
    }

    /// The stored `β_m(y_k) = ψ_v(y_k) Z_m(y_k)`, if the node potentials are tabulated.
    pub fn stored_beta(&self, m: MsgId) -> Option<&[f64]> {
        self.betas
            .as_ref()
            .map(|b| &b[m * self.n..(m + 1) * self.n])
    }

    /// `β_m = ψ_v Z_m` for message `m = v -> u` given `ψ_v`: the stored row, or `buf` after
    /// filling it. O(n) at most.
    pub fn beta_from<'a>(&'a self, m: MsgId, psi_v: &[f64], buf: &'a mut [f64]) -> &'a [f64] {
        match &self.betas {
            Some(b) => &b[m * self.n..(m + 1) * self.n],
            None => {
                kernels::mul_into(psi_v, self.normaliser(m), buf);
                buf
            }
        }
    }

    /// `β_m` for message `m` of `mrf` (computing `ψ_v` if needed): a stored row, or `buf`
    /// after filling it. O(n).
    pub fn beta<'a, G: StateGrid>(
        &'a self,
        mrf: &GridMrf<G>,
        m: MsgId,
        buf: &'a mut [f64],
    ) -> &'a [f64] {
        match &self.betas {
            Some(b) => &b[m * self.n..(m + 1) * self.n],
            None => {
                let psi = mrf.node_potential(mrf.graph.source(m));
                kernels::mul_into(&psi, self.normaliser(m), buf);
                buf
            }
        }
    }
}
