//! Gaussian belief propagation on trees with vector-valued nodes, in information form
//! (Weiss & Freeman 2001; Bickson 2008): the joint is `p(x) ∝ exp(-x'Jx/2 + h'x)` with
//! `J` sparse on the tree. On a tree one upward and one downward pass give the exact
//! posterior marginals.
//!
//! Message `i -> j` (blocks `J_ij` of size `d_i x d_j`):
//! `Ĵ = J_ii + Σ_{k ∈ N(i)\j} J_{k→i}`, `ĥ = h_i + Σ h_{k→i}`,
//! `J_{i→j} = -J_ji Ĵ⁻¹ J_ij`, `h_{i→j} = -J_ji Ĵ⁻¹ ĥ`;
//! posterior `J_i + Σ_k J_{k→i}`, mean = its inverse times `h_i + Σ_k h_{k→i}`.
//! Evidence `x_o = v` is conditioned exactly: `h_j -= J_jo v` for every neighbour `j` and `o`
//! leaves the graph (the rest may become a forest; each component gets its own passes).
//!
//! Two ways to build the model, both as a directed linear-Gaussian tree
//! `x_c = A x_p + b + ε`, `ε ~ N(0, S)`, with a Gaussian root:
//! * [`GaussianTree::linear_gaussian`] from known parameters (the exact reference of the
//!   linear-Gaussian dataset);
//! * [`GaussianTree::fit_least_squares`]: `A, b` by least squares of each child on its parent
//!   over the edge's samples, `S` the residual covariance, the root's mean and covariance
//!   from its samples (the Gaussian-BP baseline of tree kernel BP).
//!
//! Cost: O(Σ_edges d³) per pass (d the node dimension); building O(Σ_edges m d²).

use nalgebra::{DMatrix, DVector};

use crate::error::{Error, Result};
use crate::kernel::Points;
use crate::model::{Graph, NodeId};

/// One directed edge `x_child = a x_parent + b + N(0, noise)`.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearGaussianEdge {
    pub parent: NodeId,
    pub child: NodeId,
    /// `d_child x d_parent`.
    pub a: DMatrix<f64>,
    /// Length `d_child`.
    pub b: DVector<f64>,
    /// Noise covariance, `d_child x d_child`, positive definite.
    pub noise: DMatrix<f64>,
}

/// A Gaussian posterior marginal (or a point mass at `mean` for an observed node).
#[derive(Debug, Clone, PartialEq)]
pub struct GaussianMarginal {
    pub mean: DVector<f64>,
    pub cov: DMatrix<f64>,
    pub observed: bool,
}

impl GaussianMarginal {
    /// The density at `x` (`x.len()` = dimension); an observed node has no density (NaN).
    pub fn density(&self, x: &[f64]) -> f64 {
        self.log_density(x).exp()
    }

    /// The log density at `x`; NaN for an observed node. O(d³).
    pub fn log_density(&self, x: &[f64]) -> f64 {
        self.log_density_at().eval(x)
    }

    /// [`Self::log_density`] at many points: the covariance factored once, O(d³), then O(d²)
    /// a point (the same values).
    pub fn log_density_at(&self) -> LogDensity<'_> {
        let factor = (!self.observed)
            .then(|| self.cov.clone().cholesky())
            .flatten()
            .map(|chol| {
                let l = chol.l();
                let log_det: f64 = 2.0 * l.diagonal().iter().map(|v| v.ln()).sum::<f64>();
                (l, log_det)
            });
        LogDensity {
            mean: &self.mean,
            factor,
        }
    }
}

/// A [`GaussianMarginal`]'s log density with its covariance factored.
#[derive(Debug, Clone)]
pub struct LogDensity<'a> {
    mean: &'a DVector<f64>,
    /// The Cholesky factor `L` and `log det Σ`; None for an observed node or a covariance
    /// that is not positive definite (NaN then).
    factor: Option<(DMatrix<f64>, f64)>,
}

impl LogDensity<'_> {
    /// The log density at `x`. O(d²).
    pub fn eval(&self, x: &[f64]) -> f64 {
        let Some((l, log_det)) = &self.factor else {
            return f64::NAN;
        };
        let d = self.mean.len();
        let diff = DVector::from_column_slice(x) - self.mean;
        let z = l.solve_lower_triangular(&diff).unwrap_or(diff);
        -0.5 * (z.norm_squared() + log_det + d as f64 * (2.0 * std::f64::consts::PI).ln())
    }
}

/// A Gaussian MRF on a tree in information form.
#[derive(Debug, Clone)]
pub struct GaussianTree {
    graph: Graph,
    dims: Vec<usize>,
    j_node: Vec<DMatrix<f64>>,
    h_node: Vec<DVector<f64>>,
    /// For edge `e = (a, b)` as stored in the graph: the block `J_ab` (`d_a x d_b`).
    j_edge: Vec<DMatrix<f64>>,
}

fn spd_inverse(m: &DMatrix<f64>, what: &str) -> Result<DMatrix<f64>> {
    m.clone()
        .cholesky()
        .map(|c| c.inverse())
        .ok_or_else(|| Error::Other(format!("{what} is not positive definite")))
}

impl GaussianTree {
    /// The information form of a directed linear-Gaussian tree rooted at `root` (every
    /// non-root node appears exactly once as a child). O(Σ d³).
    pub fn linear_gaussian(
        graph: Graph,
        dims: Vec<usize>,
        root: NodeId,
        root_mean: DVector<f64>,
        root_cov: DMatrix<f64>,
        edges: &[LinearGaussianEdge],
    ) -> Result<GaussianTree> {
        graph.check_tree()?;
        let n = graph.num_nodes();
        if dims.len() != n {
            return Err(Error::param(
                "dims",
                format!("{} dimensions for {n} nodes", dims.len()),
            ));
        }
        let mut j_node: Vec<DMatrix<f64>> = dims.iter().map(|&d| DMatrix::zeros(d, d)).collect();
        let mut h_node: Vec<DVector<f64>> = dims.iter().map(|&d| DVector::zeros(d)).collect();
        let mut j_edge: Vec<DMatrix<f64>> = graph
            .edges()
            .iter()
            .map(|&(a, b)| DMatrix::zeros(dims[a], dims[b]))
            .collect();
        let root_prec = spd_inverse(&root_cov, "the root covariance")?;
        h_node[root] += &root_prec * root_mean;
        j_node[root] += root_prec;
        let mut is_child = vec![false; n];
        for e in edges {
            let (p, c) = (e.parent, e.child);
            let Some(msg) = graph.message_between(p, c) else {
                return Err(Error::param(
                    "linear-Gaussian edge",
                    format!("{p} -> {c} is not an edge of the tree"),
                ));
            };
            if c == root || std::mem::replace(&mut is_child[c], true) {
                return Err(Error::param(
                    "linear-Gaussian edge",
                    format!("node {c} has two parents (or is the root)"),
                ));
            }
            let si = spd_inverse(&e.noise, "a noise covariance")?;
            let si_a = &si * &e.a;
            j_node[c] += &si;
            j_node[p] += e.a.transpose() * &si_a;
            h_node[c] += &si * &e.b;
            h_node[p] -= e.a.transpose() * (&si * &e.b);
            // J_cp = -S^-1 A; stored as J_ab for the edge's own orientation.
            let j_cp = -si_a;
            let edge = msg / 2;
            if graph.edges()[edge].0 == c {
                j_edge[edge] = j_cp;
            } else {
                j_edge[edge] = j_cp.transpose();
            }
        }
        if let Some(c) = (0..n).find(|&c| c != root && !is_child[c]) {
            return Err(Error::param(
                "linear-Gaussian edges",
                format!("node {c} has no parent edge"),
            ));
        }
        Ok(GaussianTree {
            graph,
            dims,
            j_node,
            h_node,
            j_edge,
        })
    }

    /// Fits `x_c = A x_p + b + N(0, S)` by least squares on each edge's samples (rows of the
    /// node tables `values`), directed away from `root`, and the root's Gaussian from the rows
    /// `root_rows`. `ridge` (>= 0, relative to each block's mean variance) keeps the normal
    /// equations and covariances invertible. O(Σ_e m_e d²).
    pub fn fit_least_squares(
        graph: &Graph,
        root: NodeId,
        values: &[Points<'static>],
        edge_rows: &[Vec<usize>],
        root_rows: &[usize],
        ridge: f64,
    ) -> Result<GaussianTree> {
        graph.check_tree()?;
        let dims: Vec<usize> = values.iter().map(|p| p.dim()).collect();
        let gather = |node: NodeId, rows: &[usize]| -> DMatrix<f64> {
            let d = dims[node];
            DMatrix::from_fn(rows.len(), d, |i, j| values[node].row(rows[i])[j])
        };
        if root_rows.len() < 2 {
            return Err(Error::param(
                "Gaussian BP",
                "the root needs at least 2 samples for its covariance",
            ));
        }
        let root_x = gather(root, root_rows);
        let root_mean = root_x.row_mean().transpose();
        let centred = DMatrix::from_fn(root_x.nrows(), root_x.ncols(), |i, j| {
            root_x[(i, j)] - root_mean[j]
        });
        let mut root_cov = centred.transpose() * &centred / (root_x.nrows() - 1) as f64;
        add_ridge(&mut root_cov, ridge);
        let mut edges = Vec::new();
        for (node, parent) in graph.bfs_order(root) {
            let Some(p) = parent else { continue };
            let e = graph.message_between(p, node).expect("bfs edge") / 2;
            let rows = &edge_rows[e];
            let (dp, dc) = (dims[p], dims[node]);
            let m = rows.len();
            if m < dp + 2 {
                return Err(Error::param(
                    "Gaussian BP",
                    format!(
                        "edge {p} - {node} has {m} samples; least squares needs {}",
                        dp + 2
                    ),
                ));
            }
            let xp = gather(p, rows);
            let y = gather(node, rows);
            let mut x = DMatrix::from_element(m, dp + 1, 1.0);
            x.view_mut((0, 0), (m, dp)).copy_from(&xp);
            let mut xtx = x.transpose() * &x;
            add_ridge(&mut xtx, ridge);
            let xty = x.transpose() * &y;
            let coef = xtx.cholesky().map(|c| c.solve(&xty)).ok_or_else(|| {
                Error::Other(format!(
                    "Gaussian BP: the least-squares fit of edge {p} - {node} is singular \
                     (a constant or duplicated column?)"
                ))
            })?;
            let resid = &y - &x * &coef;
            let mut noise = resid.transpose() * &resid / (m - dp - 1).max(1) as f64;
            add_ridge(&mut noise, ridge.max(1e-12));
            let a = coef.view((0, 0), (dp, dc)).transpose();
            let b = coef.row(dp).transpose();
            edges.push(LinearGaussianEdge {
                parent: p,
                child: node,
                a,
                b,
                noise,
            });
        }
        GaussianTree::linear_gaussian(graph.clone(), dims, root, root_mean, root_cov, &edges)
    }

    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// The dense joint `(J, h)`, node blocks in id order (for tests and small problems).
    pub fn joint(&self) -> (DMatrix<f64>, DVector<f64>) {
        let offsets = self.offsets();
        let total = *offsets.last().unwrap_or(&0);
        let mut j = DMatrix::zeros(total, total);
        let mut h = DVector::zeros(total);
        for (i, &d) in self.dims.iter().enumerate() {
            j.view_mut((offsets[i], offsets[i]), (d, d))
                .copy_from(&self.j_node[i]);
            h.rows_mut(offsets[i], d).copy_from(&self.h_node[i]);
        }
        for (e, &(a, b)) in self.graph.edges().iter().enumerate() {
            let blk = &self.j_edge[e];
            j.view_mut((offsets[a], offsets[b]), (self.dims[a], self.dims[b]))
                .copy_from(blk);
            j.view_mut((offsets[b], offsets[a]), (self.dims[b], self.dims[a]))
                .copy_from(&blk.transpose());
        }
        (j, h)
    }

    fn offsets(&self) -> Vec<usize> {
        let mut o = vec![0];
        for d in &self.dims {
            o.push(o.last().unwrap() + d);
        }
        o
    }

    /// `J_ij` for neighbours `i, j` through edge `e`.
    fn block(&self, e: usize, i: NodeId) -> DMatrix<f64> {
        if self.graph.edges()[e].0 == i {
            self.j_edge[e].clone()
        } else {
            self.j_edge[e].transpose()
        }
    }

    /// Exact posterior marginals given `evidence[node]` (`Some(value)` observes the node).
    /// Errors on a value of the wrong dimension or a singular block. O(Σ_edges d³).
    pub fn posterior(&self, evidence: &[Option<Vec<f64>>]) -> Result<Vec<GaussianMarginal>> {
        let n = self.graph.num_nodes();
        if evidence.len() != n {
            return Err(Error::param(
                "evidence",
                format!("{} entries for {n} nodes", evidence.len()),
            ));
        }
        for (i, ev) in evidence.iter().enumerate() {
            if let Some(v) = ev
                && v.len() != self.dims[i]
            {
                return Err(Error::param(
                    "evidence",
                    format!(
                        "node {i} has dimension {}, got a value of length {}",
                        self.dims[i],
                        v.len()
                    ),
                ));
            }
        }
        // Condition: h_j -= J_jo v.
        let mut h = self.h_node.clone();
        for (e, &(a, b)) in self.graph.edges().iter().enumerate() {
            if let (Some(v), None) = (&evidence[b], &evidence[a]) {
                h[a] -= &self.j_edge[e] * DVector::from_column_slice(v);
            }
            if let (Some(v), None) = (&evidence[a], &evidence[b]) {
                h[b] -= self.j_edge[e].transpose() * DVector::from_column_slice(v);
            }
        }
        let hidden = |i: NodeId| evidence[i].is_none();
        let mut msg_j: Vec<Option<DMatrix<f64>>> = vec![None; self.graph.num_messages()];
        let mut msg_h: Vec<Option<DVector<f64>>> = vec![None; self.graph.num_messages()];
        for (i, j) in self.graph.two_pass_schedule(hidden) {
            let msg = self.graph.message_between(i, j).expect("tree edge");
            let mut jhat = self.j_node[i].clone();
            let mut hhat = h[i].clone();
            for nb in self.graph.neighbors(i) {
                if nb.node == j || !hidden(nb.node) {
                    continue;
                }
                jhat += msg_j[nb.incoming].as_ref().expect("scheduled before");
                hhat += msg_h[nb.incoming].as_ref().expect("scheduled before");
            }
            let (mj, mh) =
                gaussian_message(jhat, &hhat, &self.block(msg / 2, i)).ok_or_else(|| {
                    Error::Other(format!(
                        "Gaussian BP: the precision at node {i} (message to {j}) is not \
                         positive definite"
                    ))
                })?;
            msg_j[msg] = Some(mj);
            msg_h[msg] = Some(mh);
        }
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            if let Some(v) = &evidence[i] {
                out.push(GaussianMarginal {
                    mean: DVector::from_column_slice(v),
                    cov: DMatrix::zeros(self.dims[i], self.dims[i]),
                    observed: true,
                });
                continue;
            }
            let mut jp = self.j_node[i].clone();
            let mut hp = h[i].clone();
            for nb in self.graph.neighbors(i) {
                if hidden(nb.node) {
                    jp += msg_j[nb.incoming].as_ref().expect("all messages computed");
                    hp += msg_h[nb.incoming].as_ref().expect("all messages computed");
                }
            }
            let cov = spd_inverse(&jp, "a posterior precision")?;
            let mean = &cov * hp;
            out.push(GaussianMarginal {
                mean,
                cov,
                observed: false,
            });
        }
        Ok(out)
    }
}

/// One Gaussian BP message `i -> j` from the sender's aggregate `Ĵ = J_ii + Σ_{k≠j} J_{k→i}`,
/// `ĥ = h_i + Σ_{k≠j} h_{k→i}` and the edge block `J_ij` (`d_i x d_j`):
/// `(J_{i→j}, h_{i→j}) = (-J_ji Ĵ⁻¹ J_ij, -J_ji Ĵ⁻¹ ĥ)`. None when `Ĵ` is not positive definite.
/// O(d³). Public for teaching mode's one-message stepper.
pub fn gaussian_message(
    jhat: DMatrix<f64>,
    hhat: &DVector<f64>,
    j_ij: &DMatrix<f64>,
) -> Option<(DMatrix<f64>, DVector<f64>)> {
    let chol = jhat.cholesky()?;
    let x = chol.solve(j_ij);
    let y = chol.solve(hhat);
    Some((-(j_ij.transpose() * x), -(j_ij.transpose() * y)))
}

fn add_ridge(m: &mut DMatrix<f64>, relative: f64) {
    let d = m.nrows();
    if d == 0 {
        return;
    }
    let scale = (m.trace() / d as f64).abs().max(1e-300);
    for i in 0..d {
        m[(i, i)] += relative * scale;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scalar(v: f64) -> DMatrix<f64> {
        DMatrix::from_element(1, 1, v)
    }

    #[test]
    fn log_density_is_the_closed_form_and_nan_where_there_is_none() {
        // Σ = [[2, 0.6], [0.6, 1]]: det 1.64, Σ⁻¹ = [[1, -0.6], [-0.6, 2]] / 1.64.
        let marginal = GaussianMarginal {
            mean: DVector::from_vec(vec![1.0, -2.0]),
            cov: DMatrix::from_row_slice(2, 2, &[2.0, 0.6, 0.6, 1.0]),
            observed: false,
        };
        let density = marginal.log_density_at();
        for x in [[1.0, -2.0], [0.3, 0.5], [-4.0, 7.0]] {
            let (a, b) = (x[0] - 1.0, x[1] + 2.0);
            let quad = (a * a - 1.2 * a * b + 2.0 * b * b) / 1.64;
            let want = -0.5 * (quad + (1.64f64).ln() + 2.0 * (2.0 * std::f64::consts::PI).ln());
            let got = density.eval(&x);
            assert!((got - want).abs() < 1e-12, "{got} {want}");
            assert_eq!(got.to_bits(), marginal.log_density(&x).to_bits());
        }
        let observed = GaussianMarginal {
            observed: true,
            ..marginal.clone()
        };
        assert!(observed.log_density(&[0.0, 0.0]).is_nan());
        let indefinite = GaussianMarginal {
            cov: DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 1.0]),
            ..marginal
        };
        assert!(indefinite.log_density_at().eval(&[0.0, 0.0]).is_nan());
    }

    #[test]
    fn chain_posterior_matches_dense_conditioning() {
        // x0 ~ N(1, 2); x1 = 0.5 x0 + 1 + N(0, 0.3); x2 = -x1 + N(0, 0.5); x3 = 2 x1 + N(0, 1).
        let g = Graph::from_edges(4, &[(0, 1), (2, 1), (1, 3)]).unwrap();
        let e = |p, c, a, b, s| LinearGaussianEdge {
            parent: p,
            child: c,
            a: scalar(a),
            b: DVector::from_element(1, b),
            noise: scalar(s),
        };
        let t = GaussianTree::linear_gaussian(
            g,
            vec![1; 4],
            0,
            DVector::from_element(1, 1.0),
            scalar(2.0),
            &[
                e(0, 1, 0.5, 1.0, 0.3),
                e(1, 2, -1.0, 0.0, 0.5),
                e(1, 3, 2.0, 0.0, 1.0),
            ],
        )
        .unwrap();
        let ev = vec![None, None, Some(vec![0.7]), None];
        let post = t.posterior(&ev).unwrap();
        let (j, h) = t.joint();
        let keep = [0usize, 1, 3];
        let juu = DMatrix::from_fn(3, 3, |a, b| j[(keep[a], keep[b])]);
        let hu = DVector::from_fn(3, |a, _| h[keep[a]] - j[(keep[a], 2)] * 0.7);
        let cov = juu.clone().try_inverse().unwrap();
        let mean = &cov * hu;
        for (k, &i) in keep.iter().enumerate() {
            assert!((post[i].mean[0] - mean[k]).abs() < 1e-12);
            assert!((post[i].cov[(0, 0)] - cov[(k, k)]).abs() < 1e-12);
        }
        assert!(post[2].observed);
        // Prior means without evidence: x1 = 1.5, x3 = 3.
        let prior = t.posterior(&[None, None, None, None]).unwrap();
        assert!((prior[1].mean[0] - 1.5).abs() < 1e-12);
        assert!((prior[3].mean[0] - 3.0).abs() < 1e-12);
        assert!((prior[1].cov[(0, 0)] - (0.25 * 2.0 + 0.3)).abs() < 1e-12);
    }
}
