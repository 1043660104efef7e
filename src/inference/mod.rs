//! The message-passing algorithms, all behind one small trait so the runner, the CLI and the
//! tests drive any of them the same way.

pub mod discrete;
pub mod flow_bp;
pub mod flow_variational;
pub mod gaussian_bp;
pub mod grid_reference;
pub mod kbp;
pub mod kjit;
pub mod lanes;
pub mod matmul;
pub mod message_stepper;
pub mod pbp;
pub mod powers;
pub mod schedule;
pub mod schedule_order;
pub mod sosmp;
pub mod tree_kbp;

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::error::labels::{Labelled, unknown};
use crate::model::NodeId;
use crate::run::CancelFlag;
pub use crate::run::residuals::MessageChanges;

pub use schedule::{Damping, Schedule};

/// What one iteration (or sweep) did.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct StepReport {
    /// 1-based index of the iteration just completed.
    pub iteration: usize,
    /// Size of the change of the messages in this iteration (norm documented per algorithm).
    pub residual: f64,
    /// Wall-clock seconds of this iteration.
    pub seconds: f64,
    /// Number of directed message updates made.
    pub updates: usize,
}

/// A node's belief, in whichever form the algorithm has it. Kernel beliefs may be negative.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Belief {
    /// Probabilities over a finite set of state values.
    Discrete { states: Vec<f64>, probs: Vec<f64> },
    /// A curve evaluated at `xs` (not necessarily normalised, possibly negative).
    Curve { xs: Vec<f64>, ys: Vec<f64> },
    /// A 2-D function over `xs x ys`, row-major (`values[j * xs.len() + i]` at `(xs[i], ys[j])`).
    Grid2 {
        xs: Vec<f64>,
        ys: Vec<f64>,
        values: Vec<f64>,
    },
}

/// A point estimate for every node, `dim` numbers per node, node-major.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Estimates {
    pub dim: usize,
    pub values: Vec<f64>,
}

/// How a belief becomes a point estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(strum::VariantArray, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "lowercase", parse_err_ty = String, parse_err_fn = unknown::<Self>)]
pub enum EstimateKind {
    /// The most probable state (argmax of the belief).
    #[default]
    Map,
    /// The posterior mean.
    Mean,
}

impl Labelled for EstimateKind {
    const WHAT: &str = "estimate";
}

/// One message-passing algorithm on one problem.
pub trait Inference: Send {
    /// One iteration (synchronous) or sweep (sequential). Divergence is an error.
    fn step(&mut self) -> Result<StepReport>;
    /// Iterations completed so far.
    fn iteration(&self) -> usize;
    /// The current belief of `node`.
    fn belief(&self, node: NodeId) -> Belief;
    /// A point estimate for every node.
    fn estimates(&self, kind: EstimateKind) -> Estimates;
    /// Updates so far that fell back to a safe value (SOSMP's sampler when its density has no
    /// mass); exact engines never do.
    fn fallbacks(&self) -> u64 {
        0
    }
    /// Each message's change in the last iteration (for the convergence debugger); engines
    /// that do not record them return None.
    fn message_changes(&self) -> Option<MessageChanges<'_>> {
        None
    }
    /// A flag to check per chunk of work inside an iteration, so that a long iteration (a
    /// photograph's sweep) can be stopped within a fraction of a second. Once it is set, `step`
    /// returns [`crate::error::Error::Cancelled`] and the messages are partly updated: the
    /// caller discards the run. Engines whose iterations are short ignore it.
    fn set_interrupt(&mut self, flag: CancelFlag) {
        let _ = flag;
    }
}
