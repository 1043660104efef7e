//! Kernel toolkit: kernels, bandwidth selection, Gram matrices, regularised solves and
//! low-rank approximations.
//!
//! Every kernel method of beliefscope (tree and loopy kernel BP, predictive BP, kernel EP
//! messages) stands on this module. It has no GUI of its own; every tunable parameter has a
//! [`ParamSpec`] (name, symbol, unit, validated range) that the explorer's kernel panel reads.
//!
//! # Conventions
//! * Points are rows: one sample per row, `d` columns ([`Points`]). 1-D data is a plain
//!   `&[f64]` and costs nothing to wrap.
//! * Gaussian RBF: `k(x, y) = exp(-||x - y||^2 / (2 sigma^2))`, `sigma` the bandwidth in the
//!   units of the data. The seed papers write `exp(-s ||x - y||^2)`; convert with
//!   [`s_from_sigma`] / [`sigma_from_s`] (`s = 1 / (2 sigma^2)`).
//! * Gram matrices are `m x m`; cross-Gram matrices have rows = evaluation points and
//!   columns = support points.
//! * Regularisation comes in two named conventions ([`Lambda::GramForm`]: `K + lambda m I`,
//!   [`Lambda::OperatorForm`]: `K + lambda I`).
//! * Incomplete Cholesky stops when the largest residual diagonal is `<= epsilon^2`, so
//!   `epsilon` is a feature-space distance (units of `sqrt(k)`).
//!
//! # Module map (one purpose per file)
//! | file | contents |
//! |---|---|
//! | `error.rs` | [`KernelError`] |
//! | `params.rs` | [`ParamSpec`] and its constants |
//! | `kernels.rs` | [`Kernel`] enum, evaluation, validation, [`Kernel::powered`] |
//! | `points.rs` | [`Points`] row view |
//! | `gram.rs` | [`gram`], [`gram_into`], [`cross_gram`], [`kernel_column`] (rayon, tiled) |
//! | `bandwidth.rs` | [`median_heuristic`], [`loo_cv_bandwidth`], [`silverman`] |
//! | `dense_cholesky.rs` | blocked, parallel dense Cholesky factorisation used by `solve.rs` |
//! | `solve.rs` | [`Lambda`], [`RegularizedCholesky`], [`regularized_solve`] |
//! | `incomplete_cholesky.rs` | [`IncompleteCholesky`] (pivoted, on-the-fly columns) |
//! | `nystrom.rs` | [`Nystrom`] features |
//! | `random_features.rs` | [`RandomFourierFeatures`] and Gaussian-input expectations |
//! | `hsic.rs` | [`hsic`] biased HSIC estimator |
//! | `draw_matrix.rs` | [`DrawMatrix`]: random draws stored in f32, multiplied in f64 (register-blocked) |
//! | `packed_lower.rs` | [`PackedLower`] triangular factor, blocked forward substitution |
//!
//! # Example
//! ```
//! use beliefscope::kernel::{Kernel, Points, gram, median_heuristic, MedianHeuristic,
//!     Lambda, RegularizedCholesky};
//! use nalgebra::DVector;
//!
//! let x = [0.0, 0.5, 1.1, 2.0, 3.2];
//! let pts = Points::from_slice(&x);
//! let sigma = median_heuristic(&pts, &MedianHeuristic::default()).unwrap();
//! let k = Kernel::rbf(sigma).unwrap();
//! let gram_matrix = gram(&k, &pts).unwrap();
//! let factor = RegularizedCholesky::new(&gram_matrix, Lambda::GramForm(1e-3)).unwrap();
//! let alpha = factor.solve(&DVector::from_element(5, 1.0)).unwrap();
//! assert_eq!(alpha.len(), 5);
//! ```

mod bandwidth;
mod dense_cholesky;
/// The toolkit's error type lives on the ground floor (`crate::error::kernel`), so that the
/// crate's `Error` can wrap it without `error` importing `kernel`.
mod error {
    pub(crate) use crate::error::kernel::check_finite;
    pub use crate::error::kernel::{KernelError, Result};
}
mod draw_matrix;
mod gram;
mod hsic;
mod incomplete_cholesky;
mod kernels;
mod nystrom;
mod packed_lower;
mod params;
mod points;
mod random_features;
mod solve;

pub use bandwidth::{
    LooCvOptions, LooCvResult, MedianHeuristic, loo_cv_bandwidth, loo_cv_joint_bandwidths,
    loo_log_likelihood, median_heuristic, median_pairwise_distance, silverman,
};
pub use dense_cholesky::cholesky_in_place;
pub use draw_matrix::DrawMatrix;
pub use error::{KernelError, Result as KernelResult};
pub use gram::{cross_gram, gram, gram_diagonal, gram_into, kernel_column};
pub use hsic::{hsic, hsic_points};
pub use incomplete_cholesky::{IncompleteCholesky, IncompleteCholeskyOptions};
pub use kernels::{Kernel, ProductFactor, s_from_sigma, sigma_from_s};
pub use nystrom::{Landmarks, Nystrom};
pub use packed_lower::PackedLower;
pub use params::{
    EPSILON, JITTER_MAX_RELATIVE, KAPPA, LAMBDA, LOO_GRID_POINTS, MAX_RANK, MEDIAN_MAX_POINTS,
    MEDIAN_MULTIPLIER, NUM_FEATURES, NUM_LANDMARKS, NYSTROM_RCOND, POLY_DEGREE, POLY_OFFSET,
    ParamSpec, RBF_S, SIGMA,
};
pub use points::Points;
pub use random_features::RandomFourierFeatures;
pub use solve::{JitterPolicy, Lambda, RegularizedCholesky, SolveReport, regularized_solve};
