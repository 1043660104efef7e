//! Hilbert-Schmidt independence criterion, biased estimator (Gretton et al. 2005):
//! `HSIC_b = trace(K H L H) / (m - 1)^2` with the centring matrix `H = I - 11^T / m`.
//! Used by the Chow-Liu tree learner of tree kernel BP (Song et al. 2010).
//!
//! Computed without forming `H`: `trace(K H L H) = sum_ij (HKH)_ij L_ij` for symmetric `L`,
//! with `(HKH)_ij = K_ij - r_i - c_j + g` (row/column means, grand mean).
//! Cost: O(m^2) time, O(m) extra memory.

use nalgebra::DMatrix;
use rayon::prelude::*;

use super::error::{KernelError, Result, check_finite};
use super::gram::gram;
use super::kernels::Kernel;
use super::points::Points;

/// Biased HSIC `trace(K H L H) / (m - 1)^2` of two `m x m` symmetric Gram matrices.
///
/// Errors if the matrices are not square, differ in size, have fewer than 2 rows or contain
/// non-finite values. O(m^2).
///
/// ```
/// use beliefscope::kernel::{hsic, gram, Kernel, Points};
/// let x: Vec<f64> = (0..50).map(|i| i as f64 / 10.0).collect();
/// let k = gram(&Kernel::rbf(1.0).unwrap(), &Points::from_slice(&x)).unwrap();
/// assert!(hsic(&k, &k).unwrap() > 0.0);
/// ```
pub fn hsic(k: &DMatrix<f64>, l: &DMatrix<f64>) -> Result<f64> {
    for (what, a) in [
        ("HSIC: first Gram matrix", k),
        ("HSIC: second Gram matrix", l),
    ] {
        if !a.is_square() {
            return Err(KernelError::NotSquare {
                what,
                rows: a.nrows(),
                cols: a.ncols(),
            });
        }
        check_finite(what, a.as_slice())?;
    }
    let m = k.nrows();
    if l.nrows() != m {
        return Err(KernelError::DimensionMismatch {
            what: "HSIC: Gram matrix sizes",
            expected: m,
            got: l.nrows(),
        });
    }
    if m < 2 {
        return Err(KernelError::TooFewPoints {
            what: "HSIC",
            needed: 2,
            got: m,
        });
    }
    let mf = m as f64;
    let ks = k.as_slice();
    let ls = l.as_slice();
    // Column means c_j (contiguous) and row means r_i.
    let col_mean: Vec<f64> = (0..m)
        .map(|j| ks[j * m..(j + 1) * m].iter().sum::<f64>() / mf)
        .collect();
    let mut row_mean = vec![0.0; m];
    for j in 0..m {
        for (r, v) in row_mean.iter_mut().zip(&ks[j * m..(j + 1) * m]) {
            *r += v;
        }
    }
    row_mean.iter_mut().for_each(|r| *r /= mf);
    let grand = col_mean.iter().sum::<f64>() / mf;
    // Per-column partial sums collected in order, then summed sequentially, so the result
    // does not depend on rayon's work splitting.
    let partial: Vec<f64> = (0..m)
        .into_par_iter()
        .with_min_len(64)
        .map(|j| {
            let kc = &ks[j * m..(j + 1) * m];
            let lc = &ls[j * m..(j + 1) * m];
            let cj = col_mean[j] - grand;
            kc.iter()
                .zip(lc)
                .zip(&row_mean)
                .map(|((kv, lv), r)| (kv - r - cj) * lv)
                .sum::<f64>()
        })
        .collect();
    let total: f64 = partial.iter().sum();
    Ok(total / ((mf - 1.0) * (mf - 1.0)))
}

/// HSIC between two paired samples (`x` and `y` with the same number of points) under
/// kernels `kx` and `ky`: builds both Gram matrices, then [`hsic`]. O(m^2 (d_x + d_y)).
pub fn hsic_points(kx: &Kernel, x: &Points, ky: &Kernel, y: &Points) -> Result<f64> {
    if x.len() != y.len() {
        return Err(KernelError::DimensionMismatch {
            what: "HSIC: number of paired samples",
            expected: x.len(),
            got: y.len(),
        });
    }
    hsic(&gram(kx, x)?, &gram(ky, y)?)
}
