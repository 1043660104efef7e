//! Parameter specifications: a name, a symbol, a unit and a validated range for every
//! tunable number of the kernel toolkit, so that a GUI can build its widgets from them and
//! every constructor validates against the same ranges (linfa `ParamGuard` style).
//!
//! Cost: `check` is O(1).

use super::error::{KernelError, Result};

/// Name, unit and validated range of one parameter.
///
/// Valid values are finite and satisfy `min <= value <= max` (both ends inclusive). Integer
/// parameters (`integer == true`) must also have no fractional part. `log_scale` says that a
/// slider should be logarithmic; `default` is a sensible starting value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParamSpec {
    /// Human-readable name, used in error messages ("bandwidth sigma").
    pub name: &'static str,
    /// Short symbol for labels ("σ").
    pub symbol: &'static str,
    /// Unit of the value ("data units").
    pub unit: &'static str,
    /// Smallest valid value (inclusive).
    pub min: f64,
    /// Largest valid value (inclusive).
    pub max: f64,
    /// Suggested default.
    pub default: f64,
    /// Whether a slider should be logarithmic.
    pub log_scale: bool,
    /// Whether the value must be an integer.
    pub integer: bool,
    /// One-line help text for a tooltip.
    pub help: &'static str,
}

impl ParamSpec {
    /// Validate `value` against this spec.
    ///
    /// Returns [`KernelError::InvalidParameter`] naming the parameter, its range and the value.
    ///
    /// ```
    /// use beliefscope::kernel::SIGMA;
    /// assert!(SIGMA.check(1.0).is_ok());
    /// let err = SIGMA.check(0.0).unwrap_err().to_string();
    /// assert!(err.contains("bandwidth") && err.contains("got 0"));
    /// ```
    pub fn check(&self, value: f64) -> Result<()> {
        let ok = value.is_finite()
            && value >= self.min
            && value <= self.max
            && (!self.integer || value.fract() == 0.0);
        if ok { Ok(()) } else { Err(self.error(value)) }
    }

    /// Validate an integer-valued parameter given as `usize`.
    pub fn check_usize(&self, value: usize) -> Result<()> {
        self.check(value as f64)
    }

    /// The error for a rejected `value`.
    pub fn error(&self, value: f64) -> KernelError {
        let kind = if self.integer { "an integer" } else { "finite" };
        let range = if self.min > 0.0 {
            format!(
                "positive and {kind}, in [{:e}, {:e}] {}",
                self.min, self.max, self.unit
            )
        } else {
            format!("{kind}, in [{}, {:e}] {}", self.min, self.max, self.unit)
        };
        KernelError::InvalidParameter {
            name: self.name,
            value,
            range,
        }
    }

    /// Clamp `value` into the valid range (NaN maps to `default`). Handy for GUI input.
    pub fn clamp(&self, value: f64) -> f64 {
        if value.is_nan() {
            return self.default;
        }
        let v = value.clamp(self.min, self.max);
        if self.integer { v.round() } else { v }
    }
}

/// Bandwidth `sigma` of the Gaussian RBF and Laplacian kernels.
pub const SIGMA: ParamSpec = ParamSpec {
    name: "bandwidth sigma",
    symbol: "σ",
    unit: "(data units)",
    min: 1e-9,
    max: 1e9,
    default: 1.0,
    log_scale: true,
    integer: false,
    help: "Length scale: RBF exp(-|x-y|²/(2σ²)), Laplacian exp(-|x-y|/σ).",
};

/// The papers' RBF scale `s` in `exp(-s ||x - y||^2)`, `s = 1 / (2 sigma^2)`.
pub const RBF_S: ParamSpec = ParamSpec {
    name: "RBF scale s",
    symbol: "s",
    unit: "(1 / data units²)",
    min: 5e-19,
    max: 5e17,
    default: 0.5,
    log_scale: true,
    integer: false,
    help: "Inverse squared length scale of exp(-s|x-y|²); s = 1/(2σ²).",
};

/// Concentration `kappa` of the von Mises-Fisher kernel `exp(kappa <x, y>)`.
pub const KAPPA: ParamSpec = ParamSpec {
    name: "concentration kappa",
    symbol: "κ",
    unit: "(dimensionless)",
    min: 1e-9,
    max: 700.0,
    default: 1.0,
    log_scale: true,
    integer: false,
    help: "von Mises-Fisher kernel exp(κ<x,y>) on the unit sphere; κ ≤ 700 avoids overflow.",
};

/// Offset `c` of the polynomial kernel `(x.y + c)^p`.
pub const POLY_OFFSET: ParamSpec = ParamSpec {
    name: "polynomial offset c",
    symbol: "c",
    unit: "(data units²)",
    min: 0.0,
    max: 1e9,
    default: 1.0,
    log_scale: false,
    integer: false,
    help: "Offset of (x·y + c)^p; c ≥ 0 keeps the kernel positive semidefinite.",
};

/// Degree `p` of the polynomial kernel `(x.y + c)^p`.
pub const POLY_DEGREE: ParamSpec = ParamSpec {
    name: "polynomial degree p",
    symbol: "p",
    unit: "(integer)",
    min: 1.0,
    max: 64.0,
    default: 2.0,
    log_scale: false,
    integer: true,
    help: "Degree of (x·y + c)^p.",
};

/// Regularisation `lambda` (either convention, see [`crate::kernel::Lambda`]).
pub const LAMBDA: ParamSpec = ParamSpec {
    name: "regularisation lambda",
    symbol: "λ",
    unit: "(kernel units; Gram form is multiplied by m)",
    min: 0.0,
    max: 1e6,
    default: 1e-3,
    log_scale: true,
    integer: false,
    help: "Tikhonov regularisation: Gram form K + λmI, operator form K + λI.",
};

/// Low-rank tolerance `epsilon` of the incomplete Cholesky (stop when max residual
/// diagonal `<= epsilon^2`).
pub const EPSILON: ParamSpec = ParamSpec {
    name: "low-rank tolerance epsilon",
    symbol: "ε",
    unit: "(feature-space distance, sqrt of kernel units)",
    min: 0.0,
    max: 1e6,
    default: 1e-3,
    log_scale: true,
    integer: false,
    help: "Incomplete Cholesky stops when every residual k(x,x) - |Rx|² is ≤ ε².",
};

/// Maximal rank of low-rank approximations.
pub const MAX_RANK: ParamSpec = ParamSpec {
    name: "maximal rank",
    symbol: "r",
    unit: "(integer)",
    min: 1.0,
    max: 100_000.0,
    default: 500.0,
    log_scale: true,
    integer: true,
    help: "Upper bound on the number of pivots of the incomplete Cholesky.",
};

/// Largest jitter, relative to the mean diagonal of `K`, that a regularised solve may add.
pub const JITTER_MAX_RELATIVE: ParamSpec = ParamSpec {
    name: "maximal relative jitter",
    symbol: "δmax",
    unit: "(fraction of mean diag K)",
    min: 0.0,
    max: 1.0,
    default: 1e-4,
    log_scale: true,
    integer: false,
    help: "If Cholesky fails, jitter grows geometrically up to this fraction of mean(diag K).",
};

/// Multiplier applied to the median pairwise distance.
pub const MEDIAN_MULTIPLIER: ParamSpec = ParamSpec {
    name: "median-heuristic multiplier",
    symbol: "c·med",
    unit: "(dimensionless)",
    min: 1e-3,
    max: 1e3,
    default: 1.0,
    log_scale: true,
    integer: false,
    help: "σ = multiplier × median pairwise distance.",
};

/// Size of the deterministic subsample used by the median heuristic.
pub const MEDIAN_MAX_POINTS: ParamSpec = ParamSpec {
    name: "median-heuristic subsample size",
    symbol: "n_med",
    unit: "(points)",
    min: 2.0,
    max: 20_000.0,
    default: 2000.0,
    log_scale: true,
    integer: true,
    help: "At most this many points (evenly strided) enter the median of pairwise distances.",
};

/// Number of grid points of the leave-one-out bandwidth search.
pub const LOO_GRID_POINTS: ParamSpec = ParamSpec {
    name: "LOO-CV grid points",
    symbol: "n_grid",
    unit: "(integer)",
    min: 3.0,
    max: 1000.0,
    default: 25.0,
    log_scale: false,
    integer: true,
    help: "Grid over log σ before the golden-section refinement.",
};

/// Number of random Fourier features `D`.
pub const NUM_FEATURES: ParamSpec = ParamSpec {
    name: "number of random features D",
    symbol: "D",
    unit: "(features)",
    min: 1.0,
    max: 1_000_000.0,
    default: 500.0,
    log_scale: true,
    integer: true,
    help: "Random Fourier features: Gram error falls like D^-1/2.",
};

/// Number of Nyström landmarks.
pub const NUM_LANDMARKS: ParamSpec = ParamSpec {
    name: "number of Nyström landmarks",
    symbol: "L",
    unit: "(points)",
    min: 1.0,
    max: 100_000.0,
    default: 100.0,
    log_scale: true,
    integer: true,
    help: "Landmarks of the Nyström approximation.",
};

/// Relative eigenvalue cut-off of the Nyström landmark Gram pseudo-inverse.
pub const NYSTROM_RCOND: ParamSpec = ParamSpec {
    name: "Nyström eigenvalue cut-off",
    symbol: "rcond",
    unit: "(fraction of the largest eigenvalue)",
    min: 0.0,
    max: 1.0,
    default: 1e-10,
    log_scale: true,
    integer: false,
    help: "Landmark-Gram eigenvalues below rcond × largest are dropped.",
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_and_messages() {
        assert!(SIGMA.check(1.0).is_ok());
        assert!(SIGMA.check(f64::NAN).is_err());
        assert!(SIGMA.check(f64::INFINITY).is_err());
        let msg = SIGMA.check(0.0).unwrap_err().to_string();
        assert!(
            msg.starts_with("bandwidth sigma must be positive and finite"),
            "{msg}"
        );
        assert!(msg.ends_with("got 0"), "{msg}");
        assert!(POLY_DEGREE.check(2.5).is_err());
        assert!(POLY_DEGREE.check(3.0).is_ok());
        assert!(LAMBDA.check(0.0).is_ok());
        assert_eq!(POLY_DEGREE.clamp(2.6), 3.0);
        assert_eq!(SIGMA.clamp(f64::NAN), SIGMA.default);
        for spec in [
            SIGMA,
            RBF_S,
            KAPPA,
            POLY_OFFSET,
            POLY_DEGREE,
            LAMBDA,
            EPSILON,
            MAX_RANK,
            JITTER_MAX_RELATIVE,
            MEDIAN_MULTIPLIER,
            MEDIAN_MAX_POINTS,
            LOO_GRID_POINTS,
            NUM_FEATURES,
            NUM_LANDMARKS,
            NYSTROM_RCOND,
        ] {
            assert!(spec.check(spec.default).is_ok(), "{}", spec.name);
            assert!(spec.min <= spec.max);
        }
    }
}
