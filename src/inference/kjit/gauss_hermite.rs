//! Gauss–Hermite nodes and weights for `∫ e^{−t²} g(t) dt ≈ Σ_i w_i g(t_i)`, by Newton's method
//! on the orthonormal Hermite recurrence (as in Numerical
//! Recipes `gauher`, started from the Golub–Welsch eigenvalues so it works up to 400 nodes).
//! The reference integrator of our KJIT tests and runs (quadrature stands in for the paper's
//! Infer.NET). Cost: O(n³) per rule (the eigenvalues; once per run) plus O(n²) for the Newton
//! steps.

use crate::error::{Error, Result};

/// A Gauss–Hermite rule with `n` nodes (exact for polynomials of degree < 2n).
#[derive(Debug, Clone, PartialEq)]
pub struct GaussHermite {
    pub nodes: Vec<f64>,
    pub weights: Vec<f64>,
}

impl GaussHermite {
    /// The `n`-node rule (1 ≤ n ≤ 400).
    pub fn new(n: usize) -> Result<GaussHermite> {
        if !(1..=400).contains(&n) {
            return Err(Error::param(
                "quadrature_nodes",
                format!("Gauss-Hermite needs 1 to 400 nodes, got {n}"),
            ));
        }
        let pim4 = std::f64::consts::PI.powf(-0.25);
        // Nodes: eigenvalues of the Jacobi matrix (off-diagonal sqrt(k/2)), then polished by
        // Newton on the Hermite functions (the polynomials times e^{−z²/2}, so the recurrence
        // neither overflows nor underflows); weights from the derivative at the root, which
        // keeps the tiny outer weights accurate.
        let jacobi = nalgebra::DMatrix::from_fn(n, n, |i, j| {
            if i + 1 == j || j + 1 == i {
                (i.max(j) as f64 / 2.0).sqrt()
            } else {
                0.0
            }
        });
        let mut guesses: Vec<f64> = jacobi.symmetric_eigenvalues().iter().copied().collect();
        guesses.sort_by(|a, b| b.total_cmp(a));
        let nf = n as f64;
        let hermite = |z: f64| {
            let (mut p1, mut p2) = (pim4 * (-0.5 * z * z).exp(), 0.0);
            for j in 0..n {
                let p3 = p2;
                p2 = p1;
                let jf = j as f64;
                p1 = z * (2.0 / (jf + 1.0)).sqrt() * p2 - (jf / (jf + 1.0)).sqrt() * p3;
            }
            // ψ_n(z) and √(2n) ψ_{n−1}(z) (the derivative of the polynomial part at a root).
            (p1, (2.0 * nf).sqrt() * p2)
        };
        let mut x = vec![0.0; n];
        let mut w = vec![0.0; n];
        for (i, &guess) in guesses.iter().enumerate().take(n.div_ceil(2)) {
            let mut z = guess;
            for _ in 0..4 {
                let (value, derivative) = hermite(z);
                let step = value / derivative;
                if step.abs() < 1e-3 {
                    z -= step;
                }
            }
            if n % 2 == 1 && i == n / 2 {
                z = 0.0;
            }
            let (_, derivative) = hermite(z);
            x[i] = z;
            x[n - 1 - i] = -z;
            // 2 / (√(2n) h_{n−1}(z))² for the polynomial h, i.e. 2 e^{−z²} / (√(2n) ψ_{n−1})².
            w[i] = 2.0 * (-z * z).exp() / (derivative * derivative);
            w[n - 1 - i] = w[i];
        }
        Ok(GaussHermite {
            nodes: x,
            weights: w,
        })
    }

    /// `E[g(Z)]` for `Z ~ N(mean, var)`.
    pub fn expect(&self, mean: f64, var: f64, g: impl Fn(f64) -> f64) -> f64 {
        let s = (2.0 * var).sqrt();
        let total: f64 = self
            .nodes
            .iter()
            .zip(&self.weights)
            .map(|(t, w)| w * g(mean + s * t))
            .sum();
        total / std::f64::consts::PI.sqrt()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kjit_gauss_hermite_matches_gaussian_moments() {
        for n in [100, 128, 200, 400] {
            let rule = GaussHermite::new(n).unwrap();
            let total: f64 = rule.weights.iter().sum();
            assert!(
                (total - std::f64::consts::PI.sqrt()).abs() < 1e-13,
                "{n}: {total}"
            );
            assert!(
                (rule.expect(0.0, 0.5, |t| t * t) - 0.5).abs() < 1e-13,
                "{n}"
            );
        }
        let rule = GaussHermite::new(128).unwrap();
        let total: f64 = rule.weights.iter().sum();
        assert!((total - std::f64::consts::PI.sqrt()).abs() < 1e-13);
        // E[Z^4] = 3 v^2 + 6 m^2 v + m^4 for Z ~ N(m, v).
        let (m, v) = (0.7, 2.3);
        let got = rule.expect(m, v, |z| z.powi(4));
        let want = 3.0 * v * v + 6.0 * m * m * v + m.powi(4);
        assert!((got - want).abs() < 1e-11 * want);
        // E[cos Z] = cos(m) e^{-v/2}.
        let got = rule.expect(m, v, f64::cos);
        assert!((got - m.cos() * (-v / 2.0f64).exp()).abs() < 1e-13);
    }

    #[test]
    fn kjit_gauss_hermite_rejects_zero_nodes() {
        assert!(GaussHermite::new(0).is_err());
    }
}
