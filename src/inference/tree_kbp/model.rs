//! Everything of tree kernel BP that does not change with the evidence, computed once per tree
//! and kernel choice: each node's distinct sample sets, the Cholesky factor of `K + λ I` of
//! every sample set that carries an edge, the cross-Grams between a node's sample sets (the
//! `K_t^{(e←f)}` of Algorithm 1) and between its evaluation points and its sample sets, and
//! the Parzen prior at the evaluation points.
//!
//! Sample sets are interned per node by their row indices, so when all edges share the same
//! rows (`--shared-samples`) a node has one set, one factor and no cross-Gram at all, and a
//! message evaluated at its own samples costs nothing (`K β = g - λ β` from the solve
//! `(K + λ I) β = g`).
//!
//! Set-up cost: Σ over sets of `m³/3` (factorisations, parallel) plus Σ over nodes of
//! `(#sets)² m²/2 + G m #sets` kernel evaluations (cross-Grams); memory the same number of
//! doubles. Cross-Grams beyond [`TreeKbpOptions::max_cross_entries`] are not stored but
//! recomputed when used (correct, only slower).

use std::collections::HashMap;
use std::time::Instant;

use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;

use super::ResolvedKernel;
use crate::error::{Error, Result};
use crate::kernel::{JitterPolicy, Lambda, Points, RegularizedCholesky, cross_gram, gram};
use crate::model::{Graph, NodeId};

/// Kernel values held at once while the Parzen prior is summed (32 MB).
const PRIOR_BLOCK_ENTRIES: usize = 1 << 22;

/// Limits of the precomputation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TreeKbpOptions {
    /// Largest number of cross-Gram entries kept in memory (8 bytes each); default 2^26
    /// (512 MiB). Beyond it cross-Grams are recomputed on use.
    pub max_cross_entries: usize,
}

impl Default for TreeKbpOptions {
    fn default() -> Self {
        TreeKbpOptions {
            max_cross_entries: 1 << 26,
        }
    }
}

/// The inputs of tree kernel BP: a tree, a table of `N` joint rows per node, which rows each
/// edge uses as its sample pairs, which rows carry each node's belief, where to evaluate
/// beliefs, and each node's kernel.
#[derive(Debug, Clone)]
pub struct TreeKbpInput {
    pub graph: Graph,
    /// Per node: `N` rows of dimension `d_t` (the same `N` for every node: row `r` of every
    /// table is one joint sample).
    pub values: Vec<Points<'static>>,
    /// Per edge (graph order): the rows whose `(x_a, x_b)` are the edge's sample pairs.
    pub edge_rows: Vec<Vec<usize>>,
    /// Per node: the rows on which its belief weights live.
    pub belief_rows: Vec<Vec<usize>>,
    /// Per node: the points where read-outs are evaluated (a grid or a candidate set).
    pub eval_points: Vec<Points<'static>>,
    pub kernels: Vec<ResolvedKernel>,
}

/// One distinct sample set of a node.
#[derive(Debug, Clone)]
pub struct SampleSet {
    pub rows: Vec<usize>,
    pub points: Points<'static>,
    /// Cholesky factor of `K + λ I` (sets that carry an edge).
    pub factor: Option<RegularizedCholesky>,
    /// What the factor added to the diagonal: `λ` plus any jitter.
    pub shift: f64,
}

/// Where a message is evaluated: one of the node's sample sets, or its evaluation points.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    Set(usize),
    Eval,
}

#[derive(Debug, Clone)]
pub struct NodeModel {
    pub sets: Vec<SampleSet>,
    pub belief_set: usize,
    /// `K(a, b)` for `a < b` (rows = set a), when stored.
    cross: HashMap<(usize, usize), DMatrix<f64>>,
    /// `K(eval, set)`, when stored.
    eval_cross: HashMap<usize, DMatrix<f64>>,
}

/// The precomputed part of tree kernel BP.
#[derive(Debug, Clone)]
pub struct TreeKbpModel {
    graph: Graph,
    values: Vec<Points<'static>>,
    kernels: Vec<ResolvedKernel>,
    nodes: Vec<NodeModel>,
    /// Per edge `(a, b)`: the set of `a` and the set of `b`.
    edge_sets: Vec<(usize, usize)>,
    edge_rows: Vec<Vec<usize>>,
    eval_points: Vec<Points<'static>>,
    /// Parzen prior `P(x)` at the evaluation points (mean of the window over all rows).
    prior: Vec<Vec<f64>>,
    setup_seconds: f64,
    cross_entries: usize,
}

impl TreeKbpModel {
    /// Checks the input and precomputes factors and cross-Grams (see the module docs for the
    /// cost). Errors name the node or edge: a graph that is not a tree, tables of different
    /// lengths, a row index out of range, an edge with fewer than 2 samples, a kernel that does
    /// not fit the node's dimension, a factorisation that fails.
    pub fn new(input: TreeKbpInput, options: &TreeKbpOptions) -> Result<TreeKbpModel> {
        let start = Instant::now();
        let TreeKbpInput {
            graph,
            values,
            edge_rows,
            belief_rows,
            eval_points,
            kernels,
        } = input;
        graph.check_tree()?;
        let n = graph.num_nodes();
        for (what, len) in [
            ("node tables", values.len()),
            ("belief rows", belief_rows.len()),
            ("evaluation point sets", eval_points.len()),
            ("kernels", kernels.len()),
        ] {
            if len != n {
                return Err(Error::param(
                    "tree kernel BP",
                    format!("{len} {what} for {n} nodes"),
                ));
            }
        }
        if edge_rows.len() != graph.num_edges() {
            return Err(Error::param(
                "tree kernel BP",
                format!(
                    "{} edge sample lists for {} edges",
                    edge_rows.len(),
                    graph.num_edges()
                ),
            ));
        }
        let rows = values[0].len();
        for (t, v) in values.iter().enumerate() {
            if v.len() != rows {
                return Err(Error::param(
                    "tree kernel BP",
                    format!("node {t} has {} rows, node 0 has {rows}", v.len()),
                ));
            }
            v.check_finite()?;
            kernels[t].kernel.check_dim(v.dim())?;
            eval_points[t].check_dim("evaluation points of a node", v.dim())?;
        }
        let check_rows = |what: String, r: &[usize], min: usize| -> Result<()> {
            if r.len() < min {
                return Err(Error::param(
                    "samples",
                    format!("{what} has {} samples, needs at least {min}", r.len()),
                ));
            }
            if let Some(&bad) = r.iter().find(|&&i| i >= rows) {
                return Err(Error::param(
                    "samples",
                    format!("{what} uses row {bad}, but the data has {rows} rows"),
                ));
            }
            Ok(())
        };
        for (e, &(a, b)) in graph.edges().iter().enumerate() {
            check_rows(format!("edge {a} - {b}"), &edge_rows[e], 2)?;
        }
        for (t, r) in belief_rows.iter().enumerate() {
            check_rows(format!("the belief of node {t}"), r, 1)?;
        }

        // Intern sample sets per node.
        let mut interned: Vec<HashMap<Vec<usize>, usize>> = vec![HashMap::new(); n];
        let mut set_rows: Vec<Vec<Vec<usize>>> = vec![Vec::new(); n];
        let mut has_edge: Vec<Vec<bool>> = vec![Vec::new(); n];
        let mut intern = |t: NodeId, r: &Vec<usize>, edge: bool| -> usize {
            let id = *interned[t].entry(r.clone()).or_insert_with(|| {
                set_rows[t].push(r.clone());
                has_edge[t].push(false);
                set_rows[t].len() - 1
            });
            has_edge[t][id] |= edge;
            id
        };
        let edge_sets: Vec<(usize, usize)> = graph
            .edges()
            .iter()
            .enumerate()
            .map(|(e, &(a, b))| {
                (
                    intern(a, &edge_rows[e], true),
                    intern(b, &edge_rows[e], true),
                )
            })
            .collect();
        let belief_set: Vec<usize> = (0..n).map(|t| intern(t, &belief_rows[t], false)).collect();

        // Factorise every set that carries an edge, in parallel.
        let jobs: Vec<(NodeId, usize)> = (0..n)
            .flat_map(|t| (0..set_rows[t].len()).map(move |s| (t, s)))
            .collect();
        let built: Vec<Result<SampleSet>> = jobs
            .par_iter()
            .map(|&(t, s)| {
                let rows = set_rows[t][s].clone();
                let points = values[t].select(&rows)?;
                let (factor, shift) = if has_edge[t][s] {
                    let k = gram(&kernels[t].kernel, &points)?;
                    let lambda = kernels[t].settings.lambda;
                    let f = RegularizedCholesky::with_policy(
                        k,
                        Lambda::OperatorForm(lambda),
                        &JitterPolicy::default(),
                    )
                    .map_err(|e| {
                        Error::Other(format!(
                            "node {t}: cannot factorise K + lambda I of its {} samples: {e}",
                            rows.len()
                        ))
                    })?;
                    let shift = f.report().lambda_diagonal + f.report().jitter;
                    (Some(f), shift)
                } else {
                    (None, 0.0)
                };
                Ok(SampleSet {
                    rows,
                    points,
                    factor,
                    shift,
                })
            })
            .collect();
        let mut sets: Vec<Vec<SampleSet>> = vec![Vec::new(); n];
        for (job, set) in jobs.iter().zip(built) {
            sets[job.0].push(set?);
        }

        // Cross-Grams: every pair of a node's sets, and evaluation points x every set.
        let mut budget = options.max_cross_entries;
        let mut cross_jobs: Vec<(NodeId, Target, usize)> = Vec::new();
        for (t, node_sets) in sets.iter().enumerate() {
            for (b, set) in node_sets.iter().enumerate() {
                let entries = eval_points[t].len() * set.rows.len();
                if entries <= budget {
                    budget -= entries;
                    cross_jobs.push((t, Target::Eval, b));
                }
            }
            for (a, sa) in node_sets.iter().enumerate() {
                for (b, sb) in node_sets.iter().enumerate().skip(a + 1) {
                    let entries = sa.rows.len() * sb.rows.len();
                    if entries <= budget {
                        budget -= entries;
                        cross_jobs.push((t, Target::Set(a), b));
                    }
                }
            }
        }
        let crosses: Vec<Result<DMatrix<f64>>> = cross_jobs
            .par_iter()
            .map(|&(t, target, b)| {
                let rows = match target {
                    Target::Eval => &eval_points[t],
                    Target::Set(a) => &sets[t][a].points,
                };
                Ok(cross_gram(&kernels[t].kernel, rows, &sets[t][b].points)?)
            })
            .collect();
        let mut nodes: Vec<NodeModel> = sets
            .into_iter()
            .zip(&belief_set)
            .map(|(sets, &belief_set)| NodeModel {
                sets,
                belief_set,
                cross: HashMap::new(),
                eval_cross: HashMap::new(),
            })
            .collect();
        let mut cross_entries = 0;
        for (&(t, target, b), m) in cross_jobs.iter().zip(crosses) {
            let m = m?;
            cross_entries += m.len();
            match target {
                Target::Eval => {
                    nodes[t].eval_cross.insert(b, m);
                }
                Target::Set(a) => {
                    nodes[t].cross.insert((a, b), m);
                }
            }
        }

        // Parzen prior at the evaluation points, in blocks of evaluation rows so that only
        // PRIOR_BLOCK_ENTRIES kernel values are held at once (a G x N cross-Gram of a large
        // pool would not fit in memory).
        let prior: Vec<Vec<f64>> = (0..n)
            .into_par_iter()
            .map(|t| {
                let inv = 1.0 / rows as f64;
                let g = eval_points[t].len();
                let block = (PRIOR_BLOCK_ENTRIES / values[t].len().max(1)).max(1);
                let mut out = Vec::with_capacity(g);
                for start in (0..g).step_by(block) {
                    let idx: Vec<usize> = (start..(start + block).min(g)).collect();
                    let eval = eval_points[t].select(&idx)?;
                    let k = cross_gram(&kernels[t].parzen, &eval, &values[t])?;
                    out.extend(k.row_iter().map(|r| r.sum() * inv));
                }
                Ok(out)
            })
            .collect::<Result<_>>()?;

        Ok(TreeKbpModel {
            graph,
            values,
            kernels,
            nodes,
            edge_sets,
            edge_rows,
            eval_points,
            prior,
            setup_seconds: start.elapsed().as_secs_f64(),
            cross_entries,
        })
    }

    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    pub fn num_nodes(&self) -> usize {
        self.graph.num_nodes()
    }

    pub fn dim(&self, node: NodeId) -> usize {
        self.values[node].dim()
    }

    /// The node's full data table (`N` rows).
    pub fn values(&self, node: NodeId) -> &Points<'static> {
        &self.values[node]
    }

    pub fn kernel(&self, node: NodeId) -> &ResolvedKernel {
        &self.kernels[node]
    }

    pub fn node(&self, node: NodeId) -> &NodeModel {
        &self.nodes[node]
    }

    /// The rows of edge `e`'s sample pairs.
    pub fn edge_rows(&self, edge: usize) -> &[usize] {
        &self.edge_rows[edge]
    }

    pub fn eval_points(&self, node: NodeId) -> &Points<'static> {
        &self.eval_points[node]
    }

    /// The Parzen prior `P(x)` at the node's evaluation points.
    pub fn prior(&self, node: NodeId) -> &[f64] {
        &self.prior[node]
    }

    pub fn setup_seconds(&self) -> f64 {
        self.setup_seconds
    }

    /// Number of cross-Gram entries held in memory.
    pub fn cross_entries(&self) -> usize {
        self.cross_entries
    }

    /// The sample set of `node` on edge `edge`.
    pub fn edge_set(&self, edge: usize, node: NodeId) -> usize {
        let (a, _) = self.graph.edges()[edge];
        if a == node {
            self.edge_sets[edge].0
        } else {
            self.edge_sets[edge].1
        }
    }

    /// The receiving node's sample set of message `msg` (where its weights live).
    pub fn receiver_set(&self, msg: usize) -> (NodeId, usize) {
        let s = self.graph.target(msg);
        (s, self.edge_set(msg / 2, s))
    }

    /// The sending node's sample set of message `msg`.
    pub fn sender_set(&self, msg: usize) -> (NodeId, usize) {
        let t = self.graph.source(msg);
        (t, self.edge_set(msg / 2, t))
    }

    /// `K(target, set) β` at `node`: a function with weights `beta` on sample set `set`
    /// evaluated at `target`. Uses the stored cross-Gram (or its transpose), else computes
    /// the kernel values on the fly. `target == Set(set)` is the caller's job (cheaper
    /// through the solve). O(rows · m).
    pub fn apply(
        &self,
        node: NodeId,
        target: Target,
        set: usize,
        beta: &DVector<f64>,
    ) -> Result<DVector<f64>> {
        let nm = &self.nodes[node];
        match target {
            Target::Eval => {
                if let Some(k) = nm.eval_cross.get(&set) {
                    return Ok(k * beta);
                }
                let k = cross_gram(
                    &self.kernels[node].kernel,
                    &self.eval_points[node],
                    &nm.sets[set].points,
                )?;
                Ok(k * beta)
            }
            Target::Set(a) if a == set => Err(Error::Other(
                "internal: apply() on a set's own samples".into(),
            )),
            Target::Set(a) => {
                if a < set
                    && let Some(k) = nm.cross.get(&(a, set))
                {
                    return Ok(k * beta);
                }
                if set < a
                    && let Some(k) = nm.cross.get(&(set, a))
                {
                    return Ok(k.tr_mul(beta));
                }
                let k = cross_gram(
                    &self.kernels[node].kernel,
                    &nm.sets[a].points,
                    &nm.sets[set].points,
                )?;
                Ok(k * beta)
            }
        }
    }
}
