//! Kernel belief propagation for pairwise MRFs with scalar states (Song, Gretton, Bickson, Low,
//! Guestrin, "Kernel Belief Propagation", AISTATS 2011): messages are functions in an RKHS,
//! learned from samples instead of given as potentials.
//!
//! * `model.rs`: the learned model and the three updates (full eq. 12, linear time Sec. 5.1,
//!   constant time Sec. 5.3) as evaluation/update matrix pairs;
//! * `engine.rs`: the loopy iterations (synchronous batched or sequential sweeps);
//! * `collapse.rs`: exact collapsing of repeated values.

pub mod collapse;
pub mod engine;
pub mod model;

use serde::{Deserialize, Serialize};

use crate::error::labels::{Labelled, unknown};
use crate::error::{Error, Result, check_range};

pub use engine::KbpEngine;
pub use model::{
    EvidenceLookup, EvidenceTable, KbpDiagnostics, KbpModel, KbpTraining, MessageBasis,
};

/// Which message update kernel BP uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(strum::VariantArray, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "lowercase", parse_err_ty = String, parse_err_fn = unknown::<Self>)]
pub enum KbpUpdate {
    /// Eq. 12 on all template pairs (collapsed exactly onto the distinct values).
    Full,
    /// Sec. 5.1: incomplete-Cholesky features, O(l m) per message.
    Linear,
    /// Sec. 5.3: tensor features, O(l l') per message.
    #[default]
    Constant,
}

impl Labelled for KbpUpdate {
    const WHAT: &str = "update";
}

impl KbpUpdate {
    pub fn label(self) -> &'static str {
        self.into()
    }
}

/// A bandwidth chosen by the median heuristic (times the multiplier) or given.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bandwidth {
    #[default]
    Auto,
    Value(f64),
}

impl std::str::FromStr for Bandwidth {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        if s == "auto" {
            return Ok(Bandwidth::Auto);
        }
        s.parse::<f64>()
            .map(Bandwidth::Value)
            .map_err(|_| format!("bandwidth must be 'auto' or a number, got '{s}'"))
    }
}

/// The kernel-BP parameters, each with its unit and valid range.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KbpSettings {
    pub update: KbpUpdate,
    /// Regularisation λ in Gram form (`L + λ·m·I`), dimensionless, in (0, 10].
    pub lambda: f64,
    /// Incomplete-Cholesky tolerance ε (stop at residual diagonal <= ε²), in (0, 1).
    pub epsilon: f64,
    /// Largest feature rank, 1..=2000.
    pub max_rank: usize,
    /// RBF bandwidth σ of the hidden (clean) values, in gray levels.
    pub bandwidth: Bandwidth,
    /// RBF bandwidth σ of the observed (noisy) values, in gray levels.
    pub observation_bandwidth: Bandwidth,
    /// Multiplier of the median-heuristic bandwidths, in [1e-3, 100].
    pub multiplier: f64,
}

impl Default for KbpSettings {
    /// λ and the multiplier were chosen by validation on the training pair (`beliefscope tune
    /// denoise`, 100 x 100 sunset, noise 30, 15 iterations): λ = 1e-5 with multiplier 0.2 was
    /// best or within 0.1 gray levels of the best at C = 50, 100 and 250 (validation RMSE
    /// 3.2-3.4, against 3.7 at λ = 1e-3, multiplier 0.1, and 17-22 at the plain median).
    fn default() -> Self {
        KbpSettings {
            update: KbpUpdate::Constant,
            lambda: 1e-5,
            epsilon: 1e-3,
            max_rank: 100,
            bandwidth: Bandwidth::Auto,
            observation_bandwidth: Bandwidth::Auto,
            multiplier: 0.2,
        }
    }
}

impl KbpSettings {
    pub fn check(&self) -> Result<()> {
        if !(self.lambda.is_finite() && self.lambda > 0.0 && self.lambda <= 10.0) {
            return Err(Error::param(
                "lambda",
                format!(
                    "must be in (0, 10] (Gram form L + lambda m I), got {}",
                    self.lambda
                ),
            ));
        }
        if !(self.epsilon.is_finite() && self.epsilon > 0.0 && self.epsilon < 1.0) {
            return Err(Error::param(
                "epsilon",
                format!("must be in (0, 1), got {}", self.epsilon),
            ));
        }
        if !(1..=2000).contains(&self.max_rank) {
            return Err(Error::param(
                "max_rank",
                format!("must be between 1 and 2000, got {}", self.max_rank),
            ));
        }
        for (name, b) in [
            ("bandwidth", self.bandwidth),
            ("observation bandwidth", self.observation_bandwidth),
        ] {
            if let Bandwidth::Value(v) = b
                && !(v.is_finite() && v > 0.0)
            {
                return Err(Error::param(
                    name,
                    format!("must be positive and finite, got {v}"),
                ));
            }
        }
        check_range("bandwidth multiplier", self.multiplier, 1e-3, 100.0)
    }
}
