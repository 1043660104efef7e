//! Tree kernel belief propagation: Song, Gretton, Guestrin, "Nonparametric Tree Graphical
//! Models via Kernel Embeddings" (AISTATS 2010), Algorithm 1, both directions.
//!
//! Nothing is assumed about the distributions: every edge `e = (s, t)` of the tree carries its
//! own `m_e` joint samples `(x_s^i, x_t^i)`, and a message is a weight vector `β` over the
//! receiver's samples of that edge, `m_ts(x) = Σ_i β_i k_s(x_s^i, x)`. With `K_s`, `K_t` the
//! Gram matrices of the edge's samples of `s` and `t` and `λ` the node's regulariser
//! (**Gram-diagonal form**: `K + λ I`, `λ` added to the Gram matrix's diagonal as is, not
//! scaled by `m`):
//!
//! * observed `t` (value `x̄`), message to `s` (Alg. 1, leaf case):
//!   `β_ts = (K_s + λ I)⁻¹ (K_t + λ I)⁻¹ k_t(x̄)`, `k_t(x̄)_i = k(x_t^i, x̄)`. The solve with
//!   `K_t` comes first: `(K_t + λI)⁻¹ k_t(x̄)` are the weights of the conditional embedding
//!   evaluated at `x̄`, which the receiver's solve turns into a function of `x_s`;
//! * hidden `t`, message to `s` (Alg. 1, internal case):
//!   `β_ts = (K_s + λ I)⁻¹ (⊙_{u ∈ N(t)\s} K_t^{(e←f_u)} β_ut)`, where
//!   `K_t^{(e←f)}` is the cross-Gram between edge `e`'s and edge `f`'s samples of `t` (rows =
//!   evaluation points): the children's messages evaluated at this edge's samples of `t`;
//! * belief of `r` on its belief samples `b_i` (by default the samples of its first edge):
//!   weights `w_i = Π_u m_ur(b_i)`; read-outs in [`NodeBelief`].
//!
//! Evidence prunes the tree exactly: a message out of an observed node is the leaf message
//! whatever lies behind it, messages into observed nodes are not needed, and a message whose
//! sending side holds no evidence is exactly the constant 1 ([`Message::One`]), so
//! evidence-free subtrees cost nothing. Every message is rescaled to max |value| 1 at its
//! sender's samples and the scale kept as a log (`log_scale`), so long chains neither
//! overflow nor underflow.
//!
//! Files: `model.rs` (sample sets, Cholesky factors and cross-Grams, computed once per tree
//! and kernel), `engine.rs` (messages, evidence, schedule, read-outs), `chowliu.rs` (HSIC
//! Chow-Liu trees).

pub mod chowliu;
pub mod engine;
pub mod model;

use serde::{Deserialize, Serialize};

use crate::error::labels::{Labelled, unknown};
use crate::error::{Error, Result, check_range};
use crate::inference::kbp::Bandwidth;
use crate::kernel::{
    Kernel, LooCvOptions, MedianHeuristic, Points, loo_cv_bandwidth, median_pairwise_distance,
};

pub use chowliu::{chow_liu_hsic, hsic_matrix, maximum_spanning_tree};
pub use engine::{Message, MessageWeights, NodeBelief, TreeKbp, effective_sample_size};
pub use model::{TreeKbpInput, TreeKbpModel, TreeKbpOptions};

/// The kernel families a node can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(strum::VariantArray, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "lowercase", parse_err_ty = String, parse_err_fn = unknown::<Self>)]
pub enum KernelKind {
    /// Gaussian RBF `exp(-|x-y|² / (2σ²))`.
    #[default]
    Rbf,
    /// Laplacian `exp(-|x-y| / σ)`.
    Laplacian,
    /// Linear `x·y` (no bandwidth; with it kernel BP is a linear-Gaussian-like model).
    Linear,
    /// Delta `1[x = y]` for discrete values.
    Delta,
}

impl Labelled for KernelKind {
    const WHAT: &str = "kernel";
}

impl KernelKind {
    pub fn label(self) -> &'static str {
        self.into()
    }

    /// Whether the kernel has a bandwidth.
    pub fn has_bandwidth(self) -> bool {
        matches!(self, KernelKind::Rbf | KernelKind::Laplacian)
    }
}

/// How an `auto` bandwidth is chosen from a node's data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[derive(strum::VariantArray, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "kebab-case", parse_err_ty = String, parse_err_fn = unknown::<Self>)]
pub enum BandwidthRule {
    /// Leave-one-out likelihood cross-validation of a Gaussian KDE of the node's data
    /// ([`loo_cv_bandwidth`], evenly strided subsample of at most 400 points, cost
    /// O(s² d) per candidate σ): the σ whose Parzen density predicts held-out points best.
    /// The tree scenario refines it with the node's pairs along its tree edges
    /// (`scenarios/tree/data.rs`).
    #[default]
    LooCv,
    /// The median pairwise distance times `multiplier` (Song et al. 2010 use the median).
    Median,
}

impl Labelled for BandwidthRule {
    const WHAT: &str = "bandwidth rule";
}

impl BandwidthRule {
    pub fn label(self) -> &'static str {
        self.into()
    }
}

/// The kernel panel's numbers for one node.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeKernelInfo {
    /// "rbf", "laplacian", "linear" or "delta".
    pub kernel: String,
    /// Whether the bandwidth is chosen from the data (by `rule`).
    pub auto: bool,
    pub multiplier: f64,
    /// The bandwidth used (RBF / Laplacian).
    pub sigma: Option<f64>,
    /// The median pairwise distance of the node's data (shown beside σ).
    pub median: f64,
    /// How σ was chosen ("loo-cv", "median x 0.35", "given", "none").
    pub rule: String,
    /// λ in Gram-diagonal form (`K + λ I`).
    pub lambda: f64,
}

/// How λ is written, for labels and results.json.
pub const LAMBDA_CONVENTION: &str = "Gram-diagonal form: K + lambda I (lambda added to the Gram matrix's diagonal as is, not scaled by m)";

/// One node's kernel settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct NodeKernelSettings {
    pub kernel: KernelKind,
    /// `auto`: chosen from the node's data by `rule`.
    pub bandwidth: Bandwidth,
    /// The rule of an `auto` bandwidth: LOO-CV (default) or the median heuristic.
    pub rule: BandwidthRule,
    /// Multiplier of the median heuristic (rule `median` only), in [1e-3, 100].
    pub multiplier: f64,
    /// Regulariser λ in Gram-diagonal form (`K + λ I`), in (0, 1e6].
    pub lambda: f64,
}

impl Default for NodeKernelSettings {
    /// Chosen by validation against the references of the built-in datasets at m = 300 and
    /// 500 samples per edge (`beliefscope sweep tree --lambdas 1,3,10,30 --multipliers
    /// 0.2,0.35,0.5 --samples 300,500 --repeats 5`, default evidence): RBF with 0.35 times the
    /// median distance and λ = 3 (Gram-diagonal form) is a compromise. On nongauss-chain it is
    /// within 0.011 of the best mean L1 error (0.31 against 0.30; Gaussian BP 0.68); on
    /// gauss-tree it gives 0.21 where λ = 30 gives 0.14-0.15 (Gaussian BP, the right model
    /// there, 0.14), but λ = 30 costs nongauss-chain 0.50-0.67. λ here is not scaled by m, so a
    /// much larger m wants a larger λ (about √m).
    fn default() -> Self {
        NodeKernelSettings {
            kernel: KernelKind::Rbf,
            bandwidth: Bandwidth::Auto,
            rule: BandwidthRule::LooCv,
            multiplier: 0.35,
            lambda: 3.0,
        }
    }
}

impl NodeKernelSettings {
    pub fn check(&self) -> Result<()> {
        if !(self.lambda.is_finite() && self.lambda > 0.0 && self.lambda <= 1e6) {
            return Err(Error::param(
                "lambda",
                format!(
                    "must be in (0, 1e6] (Gram-diagonal form K + lambda I), got {}",
                    self.lambda
                ),
            ));
        }
        if let Bandwidth::Value(v) = self.bandwidth
            && !(v.is_finite() && v > 0.0)
        {
            return Err(Error::param(
                "bandwidth",
                format!("must be positive and finite, got {v}"),
            ));
        }
        check_range("bandwidth multiplier", self.multiplier, 1e-3, 100.0)
    }
}

/// A node's kernel as used, with the numbers the kernel panel shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResolvedKernel {
    pub settings: NodeKernelSettings,
    pub kernel: Kernel,
    /// The bandwidth σ used (RBF / Laplacian), else `None`.
    pub sigma: Option<f64>,
    /// The median pairwise distance of the node's data (multiplier 1), shown beside σ.
    pub median: f64,
    /// How σ was chosen: "loo-cv", "median x 0.35", "given" (none without a bandwidth).
    #[serde(default)]
    pub rule: String,
    /// The Parzen window of the read-out `P(x) Π m(x)`: the node's kernel for RBF and
    /// Laplacian, a Gaussian of the median-heuristic width for the linear kernel, the delta
    /// kernel (counts) for delta.
    pub parzen: Kernel,
}

/// Resolves `settings` on a node's data: the median distance, the bandwidth, the kernel.
/// Errors on data whose median distance is 0 when a bandwidth is needed.
pub fn resolve_kernel(settings: &NodeKernelSettings, data: &Points) -> Result<ResolvedKernel> {
    settings.check()?;
    let median = median_pairwise_distance(data, MedianHeuristic::default().max_points)?;
    let auto_sigma = |what: &str| -> Result<f64> {
        if median > 0.0 {
            Ok(median * settings.multiplier)
        } else {
            Err(Error::param(
                "bandwidth",
                format!(
                    "the median pairwise distance of the data is 0 (more than half of the \
                     pairs coincide), so an automatic {what} bandwidth cannot be chosen; give \
                     a value or use the delta kernel"
                ),
            ))
        }
    };
    let (sigma, rule) = match (settings.kernel.has_bandwidth(), settings.bandwidth) {
        (false, _) => (None, "none".to_string()),
        (true, Bandwidth::Value(v)) => (Some(v), "given".to_string()),
        (true, Bandwidth::Auto) => match settings.rule {
            BandwidthRule::Median => (
                Some(auto_sigma(settings.kernel.label())?),
                format!("median x {}", settings.multiplier),
            ),
            BandwidthRule::LooCv => {
                // Fails like the median on constant data; name the node's problem the same way.
                auto_sigma(settings.kernel.label())?;
                // 400 strided rows keep a rebuild quick (about 10 ms a node).
                let options = LooCvOptions {
                    max_points: 400,
                    ..LooCvOptions::default()
                };
                let cv = loo_cv_bandwidth(data, &options)?;
                if cv.at_boundary && cv.sigma < median {
                    // Duplicated values drive the LOO likelihood up as σ -> 0: no optimum.
                    (
                        Some(auto_sigma(settings.kernel.label())?),
                        format!(
                            "median x {} (loo-cv had no optimum: duplicated values)",
                            settings.multiplier
                        ),
                    )
                } else {
                    (Some(cv.sigma), "loo-cv".to_string())
                }
            }
        },
    };
    let kernel = match settings.kernel {
        KernelKind::Rbf => Kernel::rbf(sigma.unwrap_or(1.0))?,
        KernelKind::Laplacian => Kernel::laplacian(sigma.unwrap_or(1.0))?,
        KernelKind::Linear => Kernel::linear(),
        KernelKind::Delta => Kernel::delta(),
    };
    let parzen = match settings.kernel {
        KernelKind::Rbf | KernelKind::Laplacian | KernelKind::Delta => kernel.clone(),
        KernelKind::Linear => Kernel::rbf(auto_sigma("Parzen")?)?,
    };
    Ok(ResolvedKernel {
        settings: *settings,
        kernel,
        sigma,
        median,
        rule,
        parzen,
    })
}
