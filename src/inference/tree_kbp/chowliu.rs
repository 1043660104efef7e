//! Chow-Liu trees with kernel dependence (Song et al. 2010, Sec. 5): the HSIC between every
//! pair of nodes, measured with the same kernels as inference, and the maximum spanning tree
//! of those weights.
//!
//! HSIC (biased, Gretton et al. 2005) is `tr(K H L H) / (m-1)²`; with the centred Grams
//! `K̃ = H K H` computed once per node it is the Frobenius product `<K̃_i, K̃_j> / (m-1)²`.
//! Cost: O(n m²) to centre, O(n² m²) for all pairs (parallel), O(n²) for Prim's algorithm;
//! memory O(n m²).

use nalgebra::DMatrix;
use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::kernel::{Kernel, Points, gram};
use crate::model::Graph;

/// `H K H` with `H = I - 11ᵀ/m`. O(m²).
fn centred(k: &DMatrix<f64>) -> DMatrix<f64> {
    let m = k.nrows();
    let mf = m as f64;
    let col: Vec<f64> = (0..m).map(|j| k.column(j).sum() / mf).collect();
    let row: Vec<f64> = (0..m).map(|i| k.row(i).sum() / mf).collect();
    let grand = col.iter().sum::<f64>() / mf;
    DMatrix::from_fn(m, m, |i, j| k[(i, j)] - row[i] - col[j] + grand)
}

/// Biased HSIC between every pair of nodes on the shared `rows`, node `t` under `kernels[t]`.
/// Symmetric, zero diagonal. Errors on fewer than 2 rows or a kernel that does not fit.
pub fn hsic_matrix(
    values: &[Points<'static>],
    kernels: &[Kernel],
    rows: &[usize],
) -> Result<DMatrix<f64>> {
    let n = values.len();
    let m = rows.len();
    if m < 2 {
        return Err(Error::param("Chow-Liu", "HSIC needs at least 2 rows"));
    }
    let centred_grams: Vec<DMatrix<f64>> = (0..n)
        .into_par_iter()
        .map(|t| Ok(centred(&gram(&kernels[t], &values[t].select(rows)?)?)))
        .collect::<Result<_>>()?;
    let pairs: Vec<(usize, usize)> = (0..n)
        .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
        .collect();
    let norm = ((m - 1) * (m - 1)) as f64;
    let values: Vec<f64> = pairs
        .par_iter()
        .map(|&(i, j)| centred_grams[i].dot(&centred_grams[j]) / norm)
        .collect();
    let mut w = DMatrix::zeros(n, n);
    for (&(i, j), v) in pairs.iter().zip(values) {
        w[(i, j)] = v;
        w[(j, i)] = v;
    }
    Ok(w)
}

/// Prim's maximum spanning tree of a dense symmetric weight matrix, from node 0; edges
/// `(in-tree node, new node)` in the order they are added. Ties go to the lower index. O(n²).
pub fn maximum_spanning_tree(w: &DMatrix<f64>) -> Vec<(usize, usize)> {
    let n = w.nrows();
    if n == 0 {
        return Vec::new();
    }
    let mut in_tree = vec![false; n];
    let mut best = vec![f64::NEG_INFINITY; n];
    let mut link = vec![0usize; n];
    in_tree[0] = true;
    for j in 1..n {
        best[j] = w[(0, j)];
    }
    let mut edges = Vec::with_capacity(n - 1);
    for _ in 1..n {
        let mut pick = None;
        for j in 0..n {
            if !in_tree[j] && pick.is_none_or(|p: usize| best[j] > best[p]) {
                pick = Some(j);
            }
        }
        let j = pick.expect("a node outside the tree");
        in_tree[j] = true;
        edges.push((link[j], j));
        for k in 0..n {
            if !in_tree[k] && w[(j, k)] > best[k] {
                best[k] = w[(j, k)];
                link[k] = j;
            }
        }
    }
    edges
}

/// The HSIC Chow-Liu tree over all nodes and its weight matrix.
pub fn chow_liu_hsic(
    values: &[Points<'static>],
    kernels: &[Kernel],
    rows: &[usize],
) -> Result<(Graph, DMatrix<f64>)> {
    let w = hsic_matrix(values, kernels, rows)?;
    let edges = maximum_spanning_tree(&w);
    Ok((Graph::from_edges(values.len(), &edges)?, w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prim_picks_the_heaviest_tree() {
        let w = DMatrix::from_row_slice(
            4,
            4,
            &[
                0.0, 5.0, 1.0, 1.0, //
                5.0, 0.0, 4.0, 0.5, //
                1.0, 4.0, 0.0, 3.0, //
                1.0, 0.5, 3.0, 0.0,
            ],
        );
        assert_eq!(maximum_spanning_tree(&w), [(0, 1), (1, 2), (2, 3)]);
    }

    #[test]
    fn centred_hsic_matches_the_toolkit() {
        let x: Vec<f64> = (0..30).map(|i| (i as f64 * 0.37).sin()).collect();
        let y: Vec<f64> = x.iter().map(|v| v * v + 0.1).collect();
        let k = Kernel::rbf(0.5).unwrap();
        let vals = vec![
            Points::from_slice(&x).to_owned_points(),
            Points::from_slice(&y).to_owned_points(),
        ];
        let rows: Vec<usize> = (0..30).collect();
        let w = hsic_matrix(&vals, &[k.clone(), k.clone()], &rows).unwrap();
        let direct =
            crate::kernel::hsic_points(&k, &Points::from_slice(&x), &k, &Points::from_slice(&y))
                .unwrap();
        assert!((w[(0, 1)] - direct).abs() < 1e-12 * direct.abs().max(1.0));
    }
}
