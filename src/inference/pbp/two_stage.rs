//! Two-stage regression on a latent junction tree (Wang & Gordon, AAAI 2020, Sec. 4 Learning
//! Steps 3–6, and the operator W^S of Sec. 3, Eq. (1)), from weighted moments:
//! S1A B_A = (HᵀH + λ₁I)⁻¹HᵀΘ, S1B B_B = (HᵀH + λ₁I)⁻¹HᵀΨ (sklearn convention, no N scaling),
//! S2 W_S = Ψ̄ᵀΘ̄ (Θ̄ᵀΘ̄)⁺_r with Θ̄ᵀΘ̄ = B_Aᵀ(HᵀH)B_A and Ψ̄ᵀΘ̄ = B_Bᵀ(HᵀH)B_A (rank-truncated
//! pseudo-inverse, or ridge λ₂), and the root tensor T = (1/N) Σ_d ⊗_S θ^S_d (Step 6).
//! Rows of W are the row-major multi-index of the children's θ (first child slowest; our
//! convention). The paper does not state its λ convention; we take sklearn's. With the
//! population joint as data and λ₁ = 0 this is the population form
//! C_ψη C_ηη⁻¹ C_ηθ (C_θη C_ηη⁻¹ C_ηθ)⁺_r, which equals M_S O_S⁺ (M_S = [E[⊗_k θ^{S_k} | h]]_h,
//! O_S = [E[θ^S | h]]_h) on span(O_S) whenever rank C_θη = k_S.
//!
//! Cost: accumulation O(Σ_d nnz(η)(nnz(η) + nnz(θ) + nnz(ψ))); solves O(q³ + p³ + P p q).

use nalgebra::{DMatrix, DVector, SymmetricEigen};
use serde::Serialize;

use super::features::{Sparse, TrainingData, kron};

/// How S2 inverts Θ̄ᵀΘ̄.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum StageTwo {
    /// Pseudo-inverse truncated to this rank (the default, with r = k_S). S2 is ill-posed:
    /// Θ̄ᵀΘ̄ has population rank k_S < p_S, and noise in its null directions would explode
    /// through the upward messages.
    Rank(usize),
    /// Ridge (Θ̄ᵀΘ̄ + λ₂I)⁻¹.
    Ridge(f64),
}

/// A learned operator W_S with the diagnostics the window shows (the pbp room's "2SR
/// diagnostics": singular values, rank cut, S1 fit, condition number).
#[derive(Debug, Clone, PartialEq)]
pub struct Operator {
    /// Π p_k × p_S.
    pub w: DMatrix<f64>,
    /// Feature dimension of each child separator (row multi-index).
    pub child_dims: Vec<usize>,
    /// Singular values of Θ̄ / √N (descending).
    pub theta_bar_singular: Vec<f64>,
    /// Singular values of Ĉ_θη (descending).
    pub cross_singular: Vec<f64>,
    /// The rank used in S2 (the number of kept directions).
    pub rank_used: usize,
    /// R² of S1A.
    pub s1_r2: f64,
    /// σ_1 / σ_r of Θ̄ over the kept directions.
    pub condition: f64,
}

/// Σ_d w_d a_d b_dᵀ / Σ_d w_d for sparse row features.
pub fn cross_moment(
    data: &TrainingData,
    a: impl Fn(usize) -> Sparse,
    dim_a: usize,
    b: impl Fn(usize) -> Sparse,
    dim_b: usize,
) -> DMatrix<f64> {
    let mut m = DMatrix::zeros(dim_a, dim_b);
    for (r, &w) in data.weights.iter().enumerate() {
        let (fa, fb) = (a(r), b(r));
        for &(i, x) in &fa {
            for &(j, y) in &fb {
                m[(i, j)] += w * x * y;
            }
        }
    }
    m / data.total_weight()
}

/// Singular values, descending.
pub fn singular_values(m: &DMatrix<f64>) -> Vec<f64> {
    if m.nrows() == 0 || m.ncols() == 0 {
        return Vec::new();
    }
    let mut s: Vec<f64> = m
        .clone()
        .svd(false, false)
        .singular_values
        .iter()
        .copied()
        .collect();
    s.sort_by(|a, b| b.total_cmp(a));
    s
}

/// Eigen-decomposition of a symmetric matrix, eigenvalues descending.
fn sorted_eigen(m: DMatrix<f64>) -> (Vec<f64>, DMatrix<f64>) {
    let n = m.nrows();
    let sym = (&m + m.transpose()) * 0.5;
    let eig = SymmetricEigen::new(sym);
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by(|&a, &b| eig.eigenvalues[b].total_cmp(&eig.eigenvalues[a]));
    let values = idx.iter().map(|&i| eig.eigenvalues[i]).collect();
    let vectors = DMatrix::from_fn(n, n, |r, c| eig.eigenvectors[(r, idx[c])]);
    (values, vectors)
}

/// Pseudo-inverse of a symmetric positive semi-definite matrix keeping at most `rank`
/// directions with eigenvalue above `1e-12 × λ_max`. Returns it and the kept eigenvalues.
pub fn truncated_pinv(m: DMatrix<f64>, rank: usize) -> (DMatrix<f64>, Vec<f64>) {
    let n = m.nrows();
    let (values, vectors) = sorted_eigen(m);
    let top = values.first().copied().unwrap_or(0.0).max(0.0);
    let mut out = DMatrix::zeros(n, n);
    let mut kept = Vec::new();
    for (k, &lam) in values.iter().enumerate().take(rank) {
        if lam <= 1e-12 * top || lam <= 0.0 {
            break;
        }
        let v = vectors.column(k);
        out += v * v.transpose() / lam;
        kept.push(lam);
    }
    (out, kept)
}

/// Learns W_S for the separator whose core group is `alpha_cols`, instruments `beta_cols`,
/// and children core groups `children_cols` (each as column lists of `data`).
pub fn learn_operator(
    data: &TrainingData,
    alpha_cols: &[usize],
    beta_cols: &[usize],
    children_cols: &[Vec<usize>],
    lambda1: f64,
    stage_two: StageTwo,
) -> Operator {
    let dim = |cols: &[usize]| cols.iter().map(|&k| data.dims[k]).product::<usize>();
    let (p, q) = (dim(alpha_cols), dim(beta_cols));
    let child_dims: Vec<usize> = children_cols.iter().map(|c| dim(c)).collect();
    let big_p: usize = child_dims.iter().product();
    let mut hh = DMatrix::<f64>::zeros(q, q);
    let mut h_theta = DMatrix::<f64>::zeros(q, p);
    let mut h_psi = DMatrix::<f64>::zeros(q, big_p);
    let mut theta_sq = 0.0;
    let mut theta_sum = DVector::<f64>::zeros(p);
    for (r, &w) in data.weights.iter().enumerate() {
        let theta = data.group_feature(r, alpha_cols);
        let eta = data.group_feature(r, beta_cols);
        let mut psi: Sparse = vec![(0, 1.0)];
        for (cols, &d) in children_cols.iter().zip(&child_dims) {
            psi = kron(&psi, &data.group_feature(r, cols), d);
        }
        for &(i, x) in &eta {
            for &(j, y) in &eta {
                hh[(i, j)] += w * x * y;
            }
            for &(a, y) in &theta {
                h_theta[(i, a)] += w * x * y;
            }
            for &(b, y) in &psi {
                h_psi[(i, b)] += w * x * y;
            }
        }
        for &(a, y) in &theta {
            theta_sq += w * y * y;
            theta_sum[a] += w * y;
        }
    }
    let total = data.total_weight();
    // S1A and S1B share one smoother (HᵀH + λ₁I)⁺ (a pseudo-inverse, so λ₁ = 0 with an empty
    // instrument cell is the per-cell mean of the cells that exist).
    let mut reg = hh.clone();
    for i in 0..q {
        reg[(i, i)] += lambda1;
    }
    let (smoother, _) = truncated_pinv(reg, q);
    let b_a = &smoother * &h_theta;
    let b_b = &smoother * &h_psi;
    let hh_ba = &hh * &b_a;
    let gram = b_a.transpose() * &hh_ba; // Θ̄ᵀΘ̄
    let cross = b_b.transpose() * &hh_ba; // Ψ̄ᵀΘ̄
    let (eigen_all, _) = sorted_eigen(gram.clone());
    let theta_bar_singular: Vec<f64> = eigen_all
        .iter()
        .map(|&l| (l.max(0.0) / total).sqrt())
        .collect();
    let (inverse, rank_used, condition) = match stage_two {
        StageTwo::Rank(r) => {
            let (inv, kept) = truncated_pinv(gram.clone(), r);
            let cond = match (kept.first(), kept.last()) {
                (Some(a), Some(b)) => (a / b).sqrt(),
                _ => f64::INFINITY,
            };
            (inv, kept.len(), cond)
        }
        StageTwo::Ridge(l2) => {
            let mut g = gram.clone();
            for i in 0..p {
                g[(i, i)] += l2;
            }
            let (inv, kept) = truncated_pinv(g, p);
            let cond = match (kept.first(), kept.last()) {
                (Some(a), Some(b)) => (a / b).sqrt(),
                _ => f64::INFINITY,
            };
            (inv, kept.len(), cond)
        }
    };
    let w = cross * inverse;
    // R² of S1A: 1 − RSS/TSS with RSS = Σw‖θ‖² − 2 tr(B_Aᵀ HᵀΘ) + tr(Θ̄ᵀΘ̄).
    let rss = theta_sq - 2.0 * (b_a.transpose() * &h_theta).trace() + gram.trace();
    let tss = theta_sq - theta_sum.norm_squared() / total;
    let s1_r2 = if tss > 0.0 { 1.0 - rss / tss } else { 1.0 };
    let cross_moment = h_theta.transpose() / total;
    Operator {
        w,
        child_dims,
        theta_bar_singular,
        cross_singular: singular_values(&cross_moment),
        rank_used,
        s1_r2,
        condition,
    }
}

/// The root tensor T = Σ_d w_d ⊗_k θ^{S_k}_d / Σ_d w_d over the root's children (first slowest).
pub fn root_tensor(data: &TrainingData, children_cols: &[Vec<usize>]) -> (Vec<f64>, Vec<usize>) {
    let dims: Vec<usize> = children_cols
        .iter()
        .map(|c| c.iter().map(|&k| data.dims[k]).product())
        .collect();
    let mut t = vec![0.0; dims.iter().product()];
    for (r, &w) in data.weights.iter().enumerate() {
        let mut f: Sparse = vec![(0, 1.0)];
        for (cols, &d) in children_cols.iter().zip(&dims) {
            f = kron(&f, &data.group_feature(r, cols), d);
        }
        for (i, x) in f {
            t[i] += w * x;
        }
    }
    let total = data.total_weight();
    t.iter_mut().for_each(|x| *x /= total);
    (t, dims)
}

/// S1A alone: B_A = (HᵀH + λ₁I)⁺HᵀΘ (q × p), for the test that with one-hot features and
/// λ₁ = 0 S1A is the per-cell conditional mean.
pub fn stage_one_a(
    data: &TrainingData,
    alpha_cols: &[usize],
    beta_cols: &[usize],
    lambda1: f64,
) -> DMatrix<f64> {
    let dim = |cols: &[usize]| cols.iter().map(|&k| data.dims[k]).product::<usize>();
    let (p, q) = (dim(alpha_cols), dim(beta_cols));
    let total = data.total_weight();
    let hh = cross_moment(
        data,
        |r| data.group_feature(r, beta_cols),
        q,
        |r| data.group_feature(r, beta_cols),
        q,
    ) * total;
    let h_theta = cross_moment(
        data,
        |r| data.group_feature(r, beta_cols),
        q,
        |r| data.group_feature(r, alpha_cols),
        p,
    ) * total;
    let mut reg = hh;
    for i in 0..q {
        reg[(i, i)] += lambda1;
    }
    truncated_pinv(reg, q).0 * h_theta
}
