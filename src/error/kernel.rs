//! The one error type of the kernel toolkit. Every message names the problem and the
//! offending value so that the explorer can show it verbatim.

use thiserror::Error;

/// Errors of the kernel toolkit.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum KernelError {
    /// A parameter is outside its validated range (see [`crate::kernel::ParamSpec`]).
    #[error("{name} must be {range}, got {value}")]
    InvalidParameter {
        /// Human-readable parameter name, e.g. "bandwidth sigma".
        name: &'static str,
        /// The rejected value.
        value: f64,
        /// The accepted range, e.g. "positive and finite, in [1e-9, 1e9]".
        range: String,
    },
    /// An input point, matrix entry or vector entry is NaN or infinite.
    #[error("{what} contains a non-finite value {value} at index {index}")]
    NonFinite {
        /// Which input, e.g. "points" or "right-hand side".
        what: &'static str,
        /// Flat index (row-major for points).
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// Sizes of two inputs do not agree.
    #[error("dimension mismatch in {what}: expected {expected}, got {got}")]
    DimensionMismatch {
        /// Where the mismatch was detected.
        what: &'static str,
        /// The expected size.
        expected: usize,
        /// The size that was passed.
        got: usize,
    },
    /// Not enough points for the requested computation.
    #[error("{what} needs at least {needed} points, got {got}")]
    TooFewPoints {
        /// The computation.
        what: &'static str,
        /// Minimal number of points.
        needed: usize,
        /// Number of points passed.
        got: usize,
    },
    /// The median pairwise distance is zero: sigma would be 0.
    #[error(
        "median pairwise distance is 0 over {pairs} pairs (constant data, or more than half \
         of the pairs are duplicates); give the bandwidth as a number"
    )]
    ZeroMedian {
        /// Number of pairs that were considered.
        pairs: usize,
    },
    /// The data has zero spread, so no scale can be derived from it.
    #[error("{what}: the data has zero spread (all points equal)")]
    ZeroSpread {
        /// The computation.
        what: &'static str,
    },
    /// The (regularised) matrix could not be factorised even with the maximal jitter.
    #[error(
        "matrix of size {size} is not positive definite: Cholesky failed even after adding \
         jitter {jitter:e} to the diagonal (bound {max_jitter:e})"
    )]
    NotPositiveDefinite {
        /// Matrix size.
        size: usize,
        /// Largest jitter that was tried.
        jitter: f64,
        /// The jitter bound.
        max_jitter: f64,
    },
    /// A matrix that must be square is not.
    #[error("{what} must be square, got {rows} x {cols}")]
    NotSquare {
        /// Which matrix.
        what: &'static str,
        /// Rows.
        rows: usize,
        /// Columns.
        cols: usize,
    },
    /// A point or column index is out of range.
    #[error("{what}: index {index} out of range for length {len}")]
    IndexOutOfRange {
        /// Where.
        what: &'static str,
        /// The index.
        index: usize,
        /// The valid length.
        len: usize,
    },
    /// The kernel is structurally invalid (empty product, nested product, ...).
    #[error("invalid kernel: {0}")]
    InvalidKernel(String),
}

/// Shorthand used throughout the module.
pub type Result<T> = std::result::Result<T, KernelError>;

/// Check that every entry of `values` is finite.
pub(crate) fn check_finite(what: &'static str, values: &[f64]) -> Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(index) => Err(KernelError::NonFinite {
            what,
            index,
            value: values[index],
        }),
    }
}
