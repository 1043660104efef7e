//! Pivoted incomplete Cholesky decomposition `K ≈ R^T R` (greedy Gram-Schmidt in feature
//! space; Shawe-Taylor & Cristianini 2004, p. 126; used by Song et al. 2011, Sec. 5.1, for
//! loopy kernel BP on images).
//!
//! Step `s` picks the point `p_s` with the largest residual diagonal
//! `d_i = k(x_i, x_i) - sum_{t<s} R_ti^2`, sets `nu_s = sqrt(d_{p_s})` and
//! `R_si = (k(x_i, x_{p_s}) - sum_{t<s} R_{t p_s} R_ti) / nu_s` for all `i`. Kernel columns are
//! computed on the fly (the Gram matrix is never formed); `R` is stored row-major by rank so
//! each step is `s` contiguous axpys, done in parallel cache-sized chunks of points.
//!
//! **Stopping rule:** stop as soon as the largest residual diagonal is `<= epsilon^2` (so
//! `epsilon` is a feature-space distance: every point is within `epsilon` of the span of the
//! pivots), or the rank reaches `max_rank`, or every point is a pivot. The residual is also
//! floored at `1e3 * f64::EPSILON * max_i k(x_i, x_i)` (rounding level), so `epsilon = 0`
//! means "numerically full rank".
//!
//! Cost: O(m rank (rank + d)) time, O(m rank) memory.

use nalgebra::{DMatrix, DVector};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::error::{KernelError, Result, check_finite};
use super::gram::{PairVisitor, check_inputs, with_pair_fn, zeros_lazy};
use super::kernels::Kernel;
use super::params::{EPSILON, MAX_RANK};
use super::points::Points;

/// Points per parallel chunk (fits L1/L2 together with the rows it touches).
const CHUNK: usize = 2048;

/// Options of [`IncompleteCholesky::new`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct IncompleteCholeskyOptions {
    /// Tolerance `epsilon` ([`EPSILON`]): stop when max residual diagonal `<= epsilon^2`.
    pub epsilon: f64,
    /// Maximal rank ([`MAX_RANK`]).
    pub max_rank: usize,
}

impl Default for IncompleteCholeskyOptions {
    fn default() -> Self {
        IncompleteCholeskyOptions {
            epsilon: EPSILON.default,
            max_rank: MAX_RANK.default as usize,
        }
    }
}

impl IncompleteCholeskyOptions {
    /// Options with the given tolerance and the default maximal rank.
    pub fn with_epsilon(epsilon: f64) -> Self {
        IncompleteCholeskyOptions {
            epsilon,
            ..Default::default()
        }
    }

    /// Validate both parameters.
    pub fn check(&self) -> Result<()> {
        EPSILON.check(self.epsilon)?;
        MAX_RANK.check_usize(self.max_rank)
    }
}

/// A pivoted incomplete Cholesky factor `K ≈ R^T R` of a sample set.
///
/// `R` is `rank x m`; column `i` holds the orthonormal coordinates `Q^T phi(x_i)` of training
/// point `i` in the span of the pivot features. [`IncompleteCholesky::features`] gives the
/// same coordinates for any new point.
#[derive(Debug, Clone)]
pub struct IncompleteCholesky {
    kernel: Kernel,
    /// `R^T`, `m x rank`, column-major: column `s` is row `s` of `R` (contiguous).
    rt: DMatrix<f64>,
    pivots: Vec<usize>,
    pivot_points: Points<'static>,
    /// `nu_s = R_{s p_s}` as used in the divisions.
    nu: Vec<f64>,
    /// Row-major `rank x rank`: `tri[s * rank + t] = R_{t p_s}` for `t < s` (else 0).
    tri: Vec<f64>,
    residual: DVector<f64>,
    options: IncompleteCholeskyOptions,
    /// The residual threshold actually used: `max(epsilon^2, rounding floor)`.
    threshold: f64,
}

impl IncompleteCholesky {
    /// Decompose the Gram matrix of `x` under `kernel` without forming it.
    ///
    /// Errors on invalid options/kernel, non-finite points or an empty set.
    /// Cost: O(m rank (rank + d)) time, O(m rank) memory.
    ///
    /// ```
    /// use beliefscope::kernel::{IncompleteCholesky, IncompleteCholeskyOptions, Kernel, Points};
    /// // 1000 gray levels with only 4 distinct values: rank <= 4.
    /// let x: Vec<f64> = (0..1000).map(|i| (i % 4) as f64 * 30.0).collect();
    /// let k = Kernel::rbf(20.0).unwrap();
    /// let ic = IncompleteCholesky::new(&k, &Points::from_slice(&x),
    ///     &IncompleteCholeskyOptions::with_epsilon(1e-6)).unwrap();
    /// assert!(ic.rank() <= 4);
    /// let f = ic.features(&[x[5]]).unwrap();
    /// assert!((&f - ic.column(5)).amax() < 1e-12);
    /// ```
    pub fn new(kernel: &Kernel, x: &Points, options: &IncompleteCholeskyOptions) -> Result<Self> {
        options.check()?;
        check_inputs(kernel, x)?;
        if x.is_empty() {
            return Err(KernelError::TooFewPoints {
                what: "incomplete Cholesky",
                needed: 1,
                got: 0,
            });
        }
        struct Run<'a, 'b> {
            x: &'a Points<'b>,
            kernel: &'a Kernel,
            options: &'a IncompleteCholeskyOptions,
        }
        impl PairVisitor for Run<'_, '_> {
            type Out = IncompleteCholesky;
            fn visit<F: Fn(&[f64], &[f64]) -> f64 + Sync + Send + Copy>(self, f: F) -> Self::Out {
                factorise(self.kernel, self.x, self.options, f)
            }
        }
        Ok(with_pair_fn(kernel, x.dim(), Run { x, kernel, options }))
    }

    /// The kernel used.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// The options used.
    pub fn options(&self) -> &IncompleteCholeskyOptions {
        &self.options
    }

    /// Rank (number of pivots).
    pub fn rank(&self) -> usize {
        self.pivots.len()
    }

    /// Number of training points `m`.
    pub fn len(&self) -> usize {
        self.rt.nrows()
    }

    /// Whether there are no training points (never true for a constructed factor).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Indices of the pivot points, in selection order.
    pub fn pivots(&self) -> &[usize] {
        &self.pivots
    }

    /// The pivot points (copies of the training points at [`Self::pivots`]).
    pub fn pivot_points(&self) -> &Points<'static> {
        &self.pivot_points
    }

    /// Residual diagonal `k(x_i, x_i) - ||R_{:,i}||^2` for every training point (length m);
    /// it equals `diag(K - R^T R)`. Entries of pivots (and exact duplicates of pivots) are
    /// zero up to rounding.
    pub fn residual_diagonal(&self) -> &DVector<f64> {
        &self.residual
    }

    /// Largest residual diagonal entry (`<= epsilon^2` unless stopped by `max_rank`).
    pub fn max_residual(&self) -> f64 {
        self.residual.iter().copied().fold(0.0, f64::max)
    }

    /// Whether the tolerance was reached (max residual `<= max(epsilon^2, rounding floor)`);
    /// `false` means the factorisation stopped at `max_rank` first.
    pub fn converged(&self) -> bool {
        self.residual
            .iter()
            .zip(&self.is_pivot_mask())
            .all(|(&d, &p)| p || d <= self.threshold)
    }

    fn is_pivot_mask(&self) -> Vec<bool> {
        let mut mask = vec![false; self.len()];
        for &p in &self.pivots {
            mask[p] = true;
        }
        mask
    }

    /// `R` as a `rank x m` matrix (a transposed copy, O(m rank)).
    pub fn r(&self) -> DMatrix<f64> {
        self.rt.transpose()
    }

    /// `R^T` as an `m x rank` matrix, without copying: row `i` = features of point `i`,
    /// column `s` = row `s` of `R`.
    pub fn r_transpose(&self) -> &DMatrix<f64> {
        &self.rt
    }

    /// Row `s` of `R` (length m, contiguous).
    pub fn r_row(&self, s: usize) -> &[f64] {
        let m = self.len();
        &self.rt.as_slice()[s * m..(s + 1) * m]
    }

    /// Column `i` of `R`: the features of training point `i` (length rank). O(rank).
    pub fn column(&self, i: usize) -> DVector<f64> {
        self.rt.row(i).transpose()
    }

    /// The triangular block `T` of `R` restricted to the pivot columns (`rank x rank`,
    /// upper triangular): `T_ts = R_{t p_s}` for `t < s`, `T_ss = nu_s`, zero below the
    /// diagonal (where `R` has rounding-level values). [`Self::features`] is
    /// `T^{-T} k_P(y)` with `k_P(y)_s = k(y, x_{p_s})`. O(rank^2).
    pub fn pivot_block(&self) -> DMatrix<f64> {
        let r = self.rank();
        DMatrix::from_fn(r, r, |t, s| match t.cmp(&s) {
            std::cmp::Ordering::Less => self.tri[s * r + t],
            std::cmp::Ordering::Equal => self.nu[s],
            std::cmp::Ordering::Greater => 0.0,
        })
    }

    /// Solve `T^T f = k` (forward substitution, O(rank^2)) with the pivot block `T`: the
    /// features of a point whose kernel values against the pivots are `k`.
    pub fn solve_pivot_transpose(&self, k: &[f64]) -> Result<DVector<f64>> {
        self.check_len("pivot kernel vector", k)?;
        let mut f = k.to_vec();
        self.forward(&mut f);
        Ok(DVector::from_vec(f))
    }

    /// Solve `T a = b` (back substitution, O(rank^2)) with the pivot block `T`, e.g. to turn
    /// feature-space coefficients into weights on the pivot points.
    pub fn solve_pivot(&self, b: &[f64]) -> Result<DVector<f64>> {
        self.check_len("pivot right-hand side", b)?;
        let r = self.rank();
        let mut a = b.to_vec();
        for s in (0..r).rev() {
            a[s] /= self.nu[s];
            let v = a[s];
            for (at, c) in a[..s].iter_mut().zip(&self.tri[s * r..s * r + s]) {
                *at -= c * v;
            }
        }
        Ok(DVector::from_vec(a))
    }

    /// Orthonormal feature coordinates `Q^T phi(y)` of a new point (length rank). For a
    /// training point it equals its column of `R` (bit-for-bit, the same operations).
    /// Cost: O(rank d + rank^2).
    pub fn features(&self, y: &[f64]) -> Result<DVector<f64>> {
        self.check_query(y)?;
        let mut f: Vec<f64> = self
            .pivot_points
            .rows()
            .map(|p| self.kernel.eval(y, p))
            .collect();
        self.forward(&mut f);
        Ok(DVector::from_vec(f))
    }

    /// Features of many points: `rank x n` matrix, column `j` = `features(y_j)`, parallel.
    /// Cost: O(n rank (rank + d)).
    pub fn features_of(&self, y: &Points) -> Result<DMatrix<f64>> {
        y.check_dim(
            "incomplete Cholesky features: point dimension",
            self.pivot_points.dim(),
        )?;
        y.check_finite()?;
        let r = self.rank();
        let mut out = zeros_lazy(r, y.len());
        if r == 0 {
            return Ok(out);
        }
        out.as_mut_slice()
            .par_chunks_mut(r)
            .enumerate()
            .for_each(|(j, col)| {
                let yj = y.row(j);
                for (c, p) in col.iter_mut().zip(self.pivot_points.rows()) {
                    *c = self.kernel.eval(yj, p);
                }
                self.forward(col);
            });
        Ok(out)
    }

    /// `R^T R` (`m x m`), the low-rank approximation of `K`. O(m^2 rank); for tests and
    /// small sets.
    pub fn reconstruct(&self) -> DMatrix<f64> {
        &self.rt * self.rt.transpose()
    }

    /// Forward substitution in exactly the order used during the factorisation.
    fn forward(&self, f: &mut [f64]) {
        let r = self.rank();
        for s in 0..r {
            let mut v = f[s];
            let row = &self.tri[s * r..s * r + s];
            for (c, ft) in row.iter().zip(&f[..s]) {
                v -= c * ft;
            }
            f[s] = v / self.nu[s];
        }
    }

    fn check_len(&self, what: &'static str, v: &[f64]) -> Result<()> {
        if v.len() != self.rank() {
            return Err(KernelError::DimensionMismatch {
                what,
                expected: self.rank(),
                got: v.len(),
            });
        }
        check_finite(what, v)
    }

    fn check_query(&self, y: &[f64]) -> Result<()> {
        if y.len() != self.pivot_points.dim() {
            return Err(KernelError::DimensionMismatch {
                what: "incomplete Cholesky features: point dimension",
                expected: self.pivot_points.dim(),
                got: y.len(),
            });
        }
        check_finite("query point", y)
    }
}

/// The factorisation proper, monomorphised over the kernel closure `f`.
fn factorise<F: Fn(&[f64], &[f64]) -> f64 + Sync + Send + Copy>(
    kernel: &Kernel,
    x: &Points,
    options: &IncompleteCholeskyOptions,
    f: F,
) -> IncompleteCholesky {
    let m = x.len();
    let d = x.dim();
    let mut diag: Vec<f64> = x.rows().map(|r| f(r, r)).collect();
    let max_diag0 = diag.iter().copied().fold(0.0, f64::max);
    let tol = (options.epsilon * options.epsilon).max(1e3 * f64::EPSILON * max_diag0);
    let max_rank = options.max_rank.min(m);

    let mut data: Vec<f64> = Vec::new(); // row-major R, one row of m per rank
    let mut pivots: Vec<usize> = Vec::new();
    let mut is_pivot = vec![false; m];
    let mut nu: Vec<f64> = Vec::new();
    let mut coef: Vec<f64> = Vec::new();

    while pivots.len() < max_rank {
        // Deterministic argmax (first maximal index) over non-pivots.
        let mut p = usize::MAX;
        let mut dmax = f64::NEG_INFINITY;
        for (i, &d) in diag.iter().enumerate() {
            if d > dmax && !is_pivot[i] {
                dmax = d;
                p = i;
            }
        }
        if p == usize::MAX || dmax.is_nan() || dmax <= tol {
            break;
        }
        let s = pivots.len();
        let nu_s = dmax.sqrt();
        coef.clear();
        coef.extend((0..s).map(|t| data[t * m + p]));
        data.resize((s + 1) * m, 0.0);
        let (prev, new) = data.split_at_mut(s * m);
        let xp = x.row(p);
        let coef = &coef;
        let step = |(b, (new_c, diag_c)): (usize, (&mut [f64], &mut [f64]))| {
            let i0 = b * CHUNK;
            let rows = &x.as_slice()[i0 * d..(i0 + new_c.len()) * d];
            for (v, xi) in new_c.iter_mut().zip(rows.chunks_exact(d)) {
                *v = f(xi, xp);
            }
            for (t, &c) in coef.iter().enumerate() {
                let row = &prev[t * m + i0..t * m + i0 + new_c.len()];
                for (v, r) in new_c.iter_mut().zip(row) {
                    *v -= c * r;
                }
            }
            for (v, d) in new_c.iter_mut().zip(diag_c.iter_mut()) {
                *v /= nu_s;
                *d -= *v * *v;
            }
        };
        if m > CHUNK {
            new.par_chunks_mut(CHUNK)
                .zip(diag.par_chunks_mut(CHUNK))
                .enumerate()
                .for_each(step);
        } else {
            step((0, (new, &mut diag[..])));
        }
        pivots.push(p);
        is_pivot[p] = true;
        nu.push(nu_s);
    }

    let rank = pivots.len();
    let mut tri = vec![0.0; rank * rank];
    for (s, &p) in pivots.iter().enumerate() {
        for t in 0..s {
            tri[s * rank + t] = data[t * m + p];
        }
    }
    let pivot_points = x
        .select(&pivots)
        .expect("pivot indices are in range by construction");
    IncompleteCholesky {
        kernel: kernel.clone(),
        rt: DMatrix::from_vec(m, rank, data),
        pivots,
        pivot_points,
        nu,
        tri,
        residual: DVector::from_vec(diag),
        options: *options,
        threshold: tol,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::gram::gram;

    #[test]
    fn full_rank_reconstructs_exactly() {
        let x: Vec<f64> = (0..40).map(|i| (i as f64 * 0.37).sin() * 3.0).collect();
        let p = Points::from_slice(&x);
        let k = Kernel::rbf(0.5).unwrap();
        let ic = IncompleteCholesky::new(
            &k,
            &p,
            &IncompleteCholeskyOptions {
                epsilon: 0.0,
                max_rank: 1000,
            },
        )
        .unwrap();
        let g = gram(&k, &p).unwrap();
        assert!((ic.reconstruct() - &g).amax() < 1e-9);
        // pivot block equals R restricted to the pivots up to rounding
        let r = ic.r();
        let t = ic.pivot_block();
        for (s, &ps) in ic.pivots().iter().enumerate() {
            for tt in 0..ic.rank() {
                assert!((r[(tt, ps)] - t[(tt, s)]).abs() < 1e-9, "{tt} {s}");
            }
        }
        // solve_pivot inverts the pivot block
        let b: Vec<f64> = (0..ic.rank()).map(|i| i as f64).collect();
        let a = ic.solve_pivot(&b).unwrap();
        assert!((&t * a - DVector::from_vec(b)).amax() < 1e-8);
    }

    #[test]
    fn max_rank_caps() {
        let x: Vec<f64> = (0..100).map(|i| i as f64).collect();
        let ic = IncompleteCholesky::new(
            &Kernel::rbf(1.0).unwrap(),
            &Points::from_slice(&x),
            &IncompleteCholeskyOptions {
                epsilon: 1e-6,
                max_rank: 7,
            },
        )
        .unwrap();
        assert_eq!(ic.rank(), 7);
        assert!(ic.max_residual() > 1e-12);
        assert!(!ic.converged());
        let full = IncompleteCholesky::new(
            &Kernel::rbf(1.0).unwrap(),
            &Points::from_slice(&x),
            &IncompleteCholeskyOptions::with_epsilon(1e-6),
        )
        .unwrap();
        assert!(full.converged());
    }
}
