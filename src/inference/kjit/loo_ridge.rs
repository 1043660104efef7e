//! Leave-one-out cross-validation of the regression of Jitkrittum et al. 2015, Sec. 3.3
//! (eqs. 12–13 with `σ₀² = 1`, so the posterior mean is ridge regression with
//! `λ = σ_y²/σ₀²`), used by Exp. 1 to pick the kernel width and λ (Supp C).
//!
//! With `G = X Xᵀ = U S Uᵀ` (features X: D × N) and `Z = Uᵀ X`, the fitted values are
//! `ŷ = Zᵀ (S + λ)⁻¹ Z y` and the hat diagonal `h_i = Σ_k Z_ki² / (s_k + λ)`, so every LOO
//! residual `(y_i − ŷ_i)/(1 − h_i)` follows in O(N D) per λ once the eigen-decomposition is
//! paid: O(N D² + D³) per feature map.

use nalgebra::{DMatrix, DVector};

use crate::error::{Error, Result};

/// The eigen-decomposition of one feature matrix, ready for any λ and any target.
pub struct LooRidge {
    /// `Z = Uᵀ X` (D × N).
    z: DMatrix<f64>,
    eigenvalues: DVector<f64>,
}

impl LooRidge {
    /// `x`: D × N, one column per training example.
    pub fn new(x: &DMatrix<f64>) -> Result<LooRidge> {
        if x.iter().any(|v| !v.is_finite()) {
            return Err(Error::Other(
                "leave-one-out: the features are not finite".into(),
            ));
        }
        let gram = x * x.transpose();
        let eigen = gram.symmetric_eigen();
        let z = eigen.eigenvectors.transpose() * x;
        Ok(LooRidge {
            z,
            eigenvalues: eigen.eigenvalues.map(|s| s.max(0.0)),
        })
    }

    /// The mean squared leave-one-out error of ridge regression of `y` (length N) with `λ`.
    pub fn loo_mse(&self, y: &DVector<f64>, lambda: f64) -> f64 {
        let zy = &self.z * y;
        let shrink = self.eigenvalues.map(|s| 1.0 / (s + lambda));
        let coef = zy.component_mul(&shrink);
        let n = y.len();
        let mut total = 0.0;
        for i in 0..n {
            let col = self.z.column(i);
            let fitted = col.dot(&coef);
            let hat: f64 = col
                .iter()
                .zip(shrink.iter())
                .map(|(zk, sk)| zk * zk * sk)
                .sum();
            let r = (y[i] - fitted) / (1.0 - hat).max(1e-12);
            total += r * r;
        }
        total / n as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kjit_loo_shortcut_equals_refitting_without_each_point() {
        let (d, n) = (4, 12);
        let x = DMatrix::from_fn(d, n, |i, j| ((i * 7 + j * 3) as f64 * 0.37).sin());
        let y = DVector::from_fn(n, |j, _| (j as f64 * 0.5).cos() + 0.1 * j as f64);
        let lambda = 0.3;
        let mut brute = 0.0;
        for out in 0..n {
            let keep: Vec<usize> = (0..n).filter(|&j| j != out).collect();
            let xs = x.select_columns(&keep);
            let ys = DVector::from_iterator(n - 1, keep.iter().map(|&j| y[j]));
            let a = &xs * xs.transpose() + DMatrix::identity(d, d) * lambda;
            let w = a.cholesky().unwrap().solve(&(&xs * ys));
            let r = y[out] - x.column(out).dot(&w);
            brute += r * r;
        }
        brute /= n as f64;
        let fast = LooRidge::new(&x).unwrap().loo_mse(&y, lambda);
        assert!(
            (fast - brute).abs() < 1e-10 * brute.max(1.0),
            "{fast} vs {brute}"
        );
    }
}
