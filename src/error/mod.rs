//! The crate's error type: every failure a user can cause names the problem and the value.

pub mod graph;
pub mod kernel;
pub mod labels;

use thiserror::Error;

pub use graph::GraphError;
pub use kernel::KernelError;

#[derive(Debug, Error)]
pub enum Error {
    #[error("graph: {0}")]
    Graph(#[from] GraphError),
    #[error("{0}")]
    Kernel(#[from] KernelError),
    #[error("invalid parameter {name}: {reason}")]
    InvalidParameter { name: &'static str, reason: String },
    #[error("{0}")]
    Io(String),
    #[error("cannot read image {path}: {reason}")]
    Image { path: String, reason: String },
    #[error("diverged at iteration {iteration}: {detail}")]
    Diverged { iteration: usize, detail: String },
    #[error("cancelled")]
    Cancelled,
    /// A run whose estimated peak memory is above the budget (see `run::budget`).
    #[error("{0}")]
    OverBudget(String),
    #[error("{0}")]
    Other(String),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// A parameter outside its valid range.
    pub fn param(name: &'static str, reason: impl Into<String>) -> Self {
        Error::InvalidParameter {
            name,
            reason: reason.into(),
        }
    }
}

/// Checks that `value` is finite and inside `[min, max]`, naming the parameter otherwise.
pub fn check_range(name: &'static str, value: f64, min: f64, max: f64) -> Result<()> {
    if !value.is_finite() {
        return Err(Error::param(
            name,
            format!("must be a finite number, got {value}"),
        ));
    }
    if value < min || value > max {
        return Err(Error::param(
            name,
            format!("must be between {min} and {max}, got {value}"),
        ));
    }
    Ok(())
}

/// Checks that `value` is finite and strictly positive.
pub fn check_positive(name: &'static str, value: f64) -> Result<()> {
    if !(value.is_finite() && value > 0.0) {
        return Err(Error::param(
            name,
            format!("must be positive and finite, got {value}"),
        ));
    }
    Ok(())
}

/// The text of a caught panic's payload (a `&str` or `String` message, else "unknown panic").
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}
