//! Per-edge gains of SOSMP's expected update: how strongly an error in an incoming message is
//! passed on, the constant behind Theorem 1's `(I - log t N)^{-1}` (Noorshams & Wainwright 2013,
//! eq. 26, and the Lipschitz constants `L_{v->u;w}` of its Lemma 3).
//!
//! The expected update of message `v -> u` is `G(a)_j = Σ_i ω_i γ_j(y_i) / Σ_i ω_i` with `ω` the
//! grid's expectation weights (linear in the density) of `ρ = β_uv Π_{w ∈ N(v)\u} m̂_{w->v}` and
//! `m̂_w = max(0, Σ_l a_{w;l} φ_l)` (see [`super::expected`]). Its Jacobian block with respect to
//! the coefficients of one input `w -> v` is exact on the grid:
//! `∂G_j / ∂a_{w;l} = Σ_i ω(q_l)_i (γ_j(y_i) - G_j) / Σ_i ω(ρ)_i`, with
//! `q_l = β Π_{w' ≠ w} m̂_{w'} · 1[Σ a_w φ > 0] φ_l` (the clip is differentiated where the expansion
//! is not zero). The gain of the block is its spectral norm (largest singular value), in
//! coefficient space, at a given point, normally the expected update's fixed point `a_∞`.
//!
//! A chain-like path of per-edge gains `J` makes the noise-free transient of the `1/(t+1)`
//! iteration at depth `d` of order `(J ln t)^(d-1) / ((d-1)! t)`: faster than `1/t` only once
//! `ln t` is well past `d / J`.
//!
//! Cost: O(n r²) per (message, input) block plus an r x r SVD; rayon over messages.

use nalgebra::DMatrix;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::SosmpProblem;
use super::grid::StateGrid;
use super::kernels;
use crate::model::MsgId;

/// The Jacobian block `∂G_{out} / ∂a_{input}` (r x r, row-major `[j * r + l]`) of the expected
/// update at the coefficients `coeff`, with `input = w -> v` an incoming message of `out`'s
/// source `v` (not from `out`'s target). `None` when the sampling density has no mass (the
/// update then falls back to `β`, which does not depend on `a`). O(deg · n r + n r²).
pub fn jacobian_block<'a, G: StateGrid>(
    problem: &SosmpProblem<G>,
    coeff: impl Fn(MsgId) -> &'a [f64],
    out: MsgId,
    input: MsgId,
) -> Option<Vec<f64>> {
    let graph = &problem.mrf.graph;
    let grid = &problem.mrf.grid;
    let basis = &problem.basis;
    let (n, r) = (grid.len(), basis.len());
    let (v, u) = (graph.source(out), graph.target(out));
    assert_eq!(
        graph.target(input),
        v,
        "the input must arrive at the output's source"
    );
    assert_ne!(
        graph.source(input),
        u,
        "the output's own reverse message is not an input"
    );
    let mut eval = vec![0.0; n];
    let mut base = problem.tables.beta(&problem.mrf, out, &mut eval).to_vec();
    for nb in graph.neighbors(v) {
        if nb.node != u && nb.incoming != input {
            basis.evaluate_clipped(coeff(nb.incoming), &mut eval);
            kernels::mul_assign(&mut base, &eval);
        }
    }
    let mut raw = vec![0.0; n];
    basis.evaluate(coeff(input), &mut raw);
    let density: Vec<f64> = base.iter().zip(&raw).map(|(b, x)| b * x.max(0.0)).collect();
    let mut omega = vec![0.0; n];
    let total = grid.expectation_weights(&density, &mut omega);
    if !(total > 0.0 && total.is_finite()) {
        return None;
    }
    let gamma = problem.tables.gamma(out);
    let mut g = vec![0.0; r];
    for (i, &w) in omega.iter().enumerate() {
        if w != 0.0 {
            kernels::axpy(w / total, &gamma[i * r..(i + 1) * r], &mut g);
        }
    }
    let mut jac = vec![0.0; r * r];
    let mut q = vec![0.0; n];
    let mut row = vec![0.0; r];
    for l in 0..r {
        let phi = basis.column(l);
        for i in 0..n {
            q[i] = if raw[i] > 0.0 { base[i] * phi[i] } else { 0.0 };
        }
        let s = grid.expectation_weights(&q, &mut omega);
        row.iter_mut().for_each(|x| *x = 0.0);
        for (i, &w) in omega.iter().enumerate() {
            if w != 0.0 {
                kernels::axpy(w, &gamma[i * r..(i + 1) * r], &mut row);
            }
        }
        for j in 0..r {
            jac[j * r + l] = (row[j] - g[j] * s) / total;
        }
    }
    Some(jac)
}

/// The largest singular value of an r x r row-major matrix.
pub fn spectral_norm(block: &[f64], r: usize) -> f64 {
    let m = DMatrix::from_row_slice(r, r, block);
    m.singular_values().max()
}

/// The gain of one (output, input) pair.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EdgeGain {
    /// The message `v -> u`.
    pub output: MsgId,
    /// The incoming message `w -> v`.
    pub input: MsgId,
    /// `‖∂G_out / ∂a_input‖₂`.
    pub gain: f64,
}

/// Summary of the gains of a problem.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GainSummary {
    /// Number of (output, input) pairs with a gain.
    pub count: usize,
    pub min: f64,
    pub q25: f64,
    pub median: f64,
    pub q75: f64,
    pub max: f64,
    /// `exp(mean log gain)`.
    pub geometric_mean: f64,
    /// Pairs whose density had no mass (no gain: the fallback to β is constant).
    pub without_mass: usize,
}

/// Every (output, input) gain at `coeff`, in message order then input order, and their summary
/// (`None` when no message has an input, as on a 2-node chain). O(Σ_v deg(v)² · n r²).
pub fn edge_gains<G: StateGrid>(
    problem: &SosmpProblem<G>,
    coeff: &[f64],
) -> (Vec<EdgeGain>, Option<GainSummary>) {
    let graph = &problem.mrf.graph;
    let r = problem.basis.len();
    let per: Vec<Vec<Option<EdgeGain>>> = (0..graph.num_messages())
        .into_par_iter()
        .map(|out| {
            let (v, u) = (graph.source(out), graph.target(out));
            graph
                .neighbors(v)
                .iter()
                .filter(|nb| nb.node != u)
                .map(|nb| {
                    jacobian_block(problem, |w| &coeff[w * r..(w + 1) * r], out, nb.incoming).map(
                        |jac| EdgeGain {
                            output: out,
                            input: nb.incoming,
                            gain: spectral_norm(&jac, r),
                        },
                    )
                })
                .collect()
        })
        .collect();
    let without_mass = per.iter().flatten().filter(|g| g.is_none()).count();
    let gains: Vec<EdgeGain> = per.into_iter().flatten().flatten().collect();
    let summary = summarise(
        &gains.iter().map(|g| g.gain).collect::<Vec<_>>(),
        without_mass,
    );
    (gains, summary)
}

/// Quantiles (nearest rank below, as `sorted[floor((len - 1) f)]`), the geometric mean.
fn summarise(values: &[f64], without_mass: usize) -> Option<GainSummary> {
    if values.is_empty() {
        return None;
    }
    let mut s = values.to_vec();
    s.sort_by(f64::total_cmp);
    let q = |f: f64| s[((s.len() - 1) as f64 * f) as usize];
    let median = if s.len() % 2 == 1 {
        s[s.len() / 2]
    } else {
        0.5 * (s[s.len() / 2 - 1] + s[s.len() / 2])
    };
    let geometric_mean = (s.iter().map(|x| x.max(1e-300).ln()).sum::<f64>() / s.len() as f64).exp();
    Some(GainSummary {
        count: s.len(),
        min: s[0],
        q25: q(0.25),
        median,
        q75: q(0.75),
        max: s[s.len() - 1],
        geometric_mean,
        without_mass,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_known_values() {
        let s = summarise(&[4.0, 1.0, 2.0, 8.0], 1).unwrap();
        assert_eq!((s.min, s.median, s.max, s.count), (1.0, 3.0, 8.0, 4));
        assert!((s.geometric_mean - 64f64.powf(0.25)).abs() < 1e-12);
        assert_eq!(s.without_mass, 1);
        assert!(summarise(&[], 0).is_none());
    }

    #[test]
    fn spectral_norm_of_a_known_matrix() {
        // [[3, 0], [4, 5]]: A^T A = [[25, 20], [20, 25]], eigenvalues 45 and 5.
        assert!((spectral_norm(&[3.0, 0.0, 4.0, 5.0], 2) - 45f64.sqrt()).abs() < 1e-12);
    }
}
