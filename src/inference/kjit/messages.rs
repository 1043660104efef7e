//! The messages of the logistic factor (Jitkrittum et al. 2015, Sec. 2 and Supp A): a Gaussian
//! on z, a Beta on p, their moment matching to Gaussians before the kernel of Sec. 3.1 (as the
//! authors' code does; the features of Supp B.3 need E_r cos(ωᵀx + b), closed-form for a
//! Gaussian r, so moment matching is our choice over a Beta's characteristic function) and the
//! division of a
//! projected belief by an incoming message (eq. 1). Cost: O(1) each.

use serde::{Deserialize, Serialize};

/// A univariate Gaussian `N(mean, var)`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Gaussian {
    pub mean: f64,
    pub var: f64,
}

impl Gaussian {
    pub fn new(mean: f64, var: f64) -> Gaussian {
        Gaussian { mean, var }
    }

    /// Proper: finite mean, finite positive variance.
    pub fn is_proper(&self) -> bool {
        self.mean.is_finite() && self.var.is_finite() && self.var > 0.0
    }

    /// `self / incoming` in natural parameters (precisions subtract, eq. 1); `None` when the
    /// quotient is improper (non-positive precision).
    pub fn divide(&self, incoming: &Gaussian) -> Option<Gaussian> {
        let precision = 1.0 / self.var - 1.0 / incoming.var;
        let shift = self.mean / self.var - incoming.mean / incoming.var;
        let out = Gaussian::new(shift / precision, 1.0 / precision);
        (precision > 0.0 && out.is_proper()).then_some(out)
    }
}

/// A Beta distribution `Beta(alpha, beta)` on (0, 1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Beta {
    pub alpha: f64,
    pub beta: f64,
}

impl Beta {
    pub fn new(alpha: f64, beta: f64) -> Beta {
        Beta { alpha, beta }
    }

    /// The exact message from an observed label to p (p touches only the logistic factor and
    /// the observed Bernoulli, Jitkrittum et al. 2015 Fig. 2): Beta(2, 1) for y = 1,
    /// Beta(1, 2) for y = 0 (Infer.NET's convention).
    pub fn from_label(y: bool) -> Beta {
        if y {
            Beta::new(2.0, 1.0)
        } else {
            Beta::new(1.0, 2.0)
        }
    }

    pub fn is_proper(&self) -> bool {
        self.alpha.is_finite() && self.beta.is_finite() && self.alpha > 0.0 && self.beta > 0.0
    }

    pub fn mean(&self) -> f64 {
        self.alpha / (self.alpha + self.beta)
    }

    pub fn var(&self) -> f64 {
        let s = self.alpha + self.beta;
        self.alpha * self.beta / (s * s * (s + 1.0))
    }

    /// The Gaussian with the same mean and variance (how non-Gaussian messages enter the
    /// kernel of Sec. 3.1, as the authors' code `RFGJointKGG.ToJointGaussian`).
    pub fn moment_matched(&self) -> Gaussian {
        Gaussian::new(self.mean(), self.var())
    }

    /// Method of moments from a mean and variance, with the guards of the authors' code
    /// (`ISGaussianLogisticOpIns`): a near-degenerate mean with a tiny variance uses
    /// `v = m (1 - m)`; `None` when no Beta has these moments.
    pub fn from_moments(mean: f64, var: f64) -> Option<Beta> {
        let mut var = var;
        if !(1e-12..=1.0 - 1e-12).contains(&mean) && var < 1e-6 {
            var = mean * (1.0 - mean);
        }
        let valid = var > 0.0 && mean > 0.0 && mean < 1.0;
        if !valid {
            return None;
        }
        let kappa = mean * (1.0 - mean) / var - 1.0;
        let out = Beta::new(mean * kappa, (1.0 - mean) * kappa);
        out.is_proper().then_some(out)
    }

    /// `self / incoming`: Beta(α' − α + 1, β' − β + 1); `None` when improper.
    pub fn divide(&self, incoming: &Beta) -> Option<Beta> {
        let out = Beta::new(
            self.alpha - incoming.alpha + 1.0,
            self.beta - incoming.beta + 1.0,
        );
        out.is_proper().then_some(out)
    }
}

/// The two incoming messages of the logistic factor `f(p | z) = δ(p − σ(z))`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LogisticTuple {
    /// `m_{z→f}`, the EP cavity of `z_i`.
    pub z: Gaussian,
    /// `m_{p→f}`.
    pub p: Beta,
}

impl LogisticTuple {
    /// The tuple as one diagonal Gaussian: (means, variances) in the order (z, p).
    pub fn as_gaussian(&self) -> ([f64; 2], [f64; 2]) {
        let p = self.p.moment_matched();
        ([self.z.mean, p.mean], [self.z.var, p.var])
    }
}

/// The projected beliefs `q_{f→z}` and `q_{f→p}` (numerators of eq. 1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProjectedBeliefs {
    pub z: Gaussian,
    /// `None` when the p-moments have no Beta (see [`Beta::from_moments`]).
    pub p: Option<Beta>,
}

/// `log σ(z)` without overflow.
pub fn log_sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        -(-z).exp().ln_1p()
    } else {
        z - z.exp().ln_1p()
    }
}

/// `σ(z) = 1 / (1 + e^{−z})` without overflow.
pub fn sigmoid(z: f64) -> f64 {
    if z >= 0.0 {
        1.0 / (1.0 + (-z).exp())
    } else {
        let e = z.exp();
        e / (1.0 + e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kjit_beta_moments_round_trip() {
        let b = Beta::new(2.5, 7.0);
        let back = Beta::from_moments(b.mean(), b.var()).unwrap();
        assert!((back.alpha - 2.5).abs() < 1e-12 && (back.beta - 7.0).abs() < 1e-12);
    }

    #[test]
    fn kjit_division_inverts_the_product() {
        // N(1, 2) * N(3, 4) has precision 3/4 and shift 1/2 + 3/4.
        let q = Gaussian::new((0.5 + 0.75) / 0.75, 1.0 / 0.75);
        let out = q.divide(&Gaussian::new(3.0, 4.0)).unwrap();
        assert!((out.mean - 1.0).abs() < 1e-12 && (out.var - 2.0).abs() < 1e-12);
        assert!(
            Gaussian::new(0.0, 5.0)
                .divide(&Gaussian::new(0.0, 4.0))
                .is_none()
        );
        assert!(Beta::new(1.5, 1.0).divide(&Beta::new(3.0, 1.0)).is_none());
    }

    #[test]
    fn kjit_log_sigmoid_is_stable() {
        assert!((log_sigmoid(-800.0) + 800.0).abs() < 1e-9);
        assert!(log_sigmoid(800.0).abs() < 1e-300);
        assert!((sigmoid(0.3) - 1.0 / (1.0 + (-0.3f64).exp())).abs() < 1e-16);
    }
}
