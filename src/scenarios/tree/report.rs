//! The tree scenario's fields of results.json, as types: each query node's beliefs (kernel BP's
//! Parzen and embedding read-outs, Gaussian BP, the reference and the errors against it), the
//! tree (with HSIC and the true tree for Chow-Liu), the kernels per node, the samples, the
//! evidence and the timings.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{TreeScenario, normalise_density};
use crate::inference::kbp::Bandwidth;
use crate::model::NodeId;
use crate::scenarios::Scenario as _;

#[derive(Debug, Clone, Serialize)]
pub struct TreeReport<'a> {
    pub queries: BTreeMap<String, Query>,
    pub tree: Tree<'a>,
    pub kernels: BTreeMap<&'a str, NodeKernel<'a>>,
    pub lambda_convention: &'static str,
    pub samples: Samples,
    pub evidence: &'a BTreeMap<String, Vec<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference_method: Option<&'static str>,
    pub setup_timings: &'a BTreeMap<String, f64>,
    pub model_setup_seconds: f64,
    pub query_seconds: f64,
    pub query_timings: &'a BTreeMap<String, f64>,
    pub warnings: Vec<String>,
}

/// One query node's read-outs.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Query {
    Observed {
        observed: Vec<f64>,
    },
    /// A 1-D node: curves on its grid.
    Curves {
        grid: Vec<f64>,
        parzen: Vec<f64>,
        embedding: Vec<f64>,
        gaussian_bp: Vec<f64>,
        mean: f64,
        argmax: f64,
        argmax_embedding: f64,
        gaussian_bp_mean: f64,
        gaussian_bp_sd: f64,
        /// Kish's effective sample size of the belief weights, of `belief_samples`.
        effective_samples: f64,
        belief_samples: usize,
        #[serde(flatten)]
        reference: Option<Reference>,
        #[serde(skip_serializing_if = "Option::is_none")]
        errors: Option<Errors>,
    },
    /// A multi-dimensional node: beliefs over its candidate points.
    Candidates {
        candidates: Vec<Vec<f64>>,
        parzen: Vec<f64>,
        embedding: Vec<f64>,
        gaussian_bp: Vec<f64>,
        mean: Vec<f64>,
        argmax: Vec<f64>,
        argmax_embedding: Vec<f64>,
        gaussian_bp_mean: Vec<f64>,
        effective_samples: f64,
        belief_samples: usize,
    },
}

#[derive(Debug, Clone, Serialize)]
pub struct Reference {
    pub reference: Option<Vec<f64>>,
    pub reference_mean: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Errors {
    pub l1_parzen: f64,
    pub l1_embedding: f64,
    pub l1_gaussian_bp: f64,
    pub mean_error: f64,
    pub mean_error_gaussian_bp: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Tree<'a> {
    pub nodes: Vec<NodeColumns<'a>>,
    pub edges: Vec<[&'a str; 2]>,
    pub root: &'a str,
    pub topology: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hsic: Option<Vec<Vec<f64>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub true_edges: Option<Vec<[&'a str; 2]>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matches_true_tree: Option<bool>,
}

#[derive(Debug, Clone, Serialize)]
pub struct NodeColumns<'a> {
    pub name: &'a str,
    pub columns: &'a [String],
}

#[derive(Debug, Clone, Serialize)]
pub struct NodeKernel<'a> {
    pub kernel: &'static str,
    pub bandwidth: Option<f64>,
    pub bandwidth_auto: bool,
    /// How an automatic bandwidth was chosen (LOO-CV or the median heuristic).
    pub bandwidth_rule: &'a str,
    pub multiplier: f64,
    pub median_distance: f64,
    pub lambda: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Samples {
    /// The samples each edge uses: the config's `samples_per_edge`, or every row when the
    /// table has fewer.
    pub per_edge: usize,
    pub shared: bool,
    pub rows: usize,
    pub seed: u64,
    pub belief_samples: &'static str,
}

/// An undirected edge list with each pair ordered and the list sorted.
fn normalised(edges: &[(usize, usize)]) -> Vec<(usize, usize)> {
    let mut s: Vec<(usize, usize)> = edges.iter().map(|&(a, b)| (a.min(b), a.max(b))).collect();
    s.sort_unstable();
    s
}

impl<'a> TreeReport<'a> {
    pub fn of(s: &'a TreeScenario) -> TreeReport<'a> {
        let p = &s.problem;
        let name = |i: usize| p.names[i].as_str();
        let named = |edges: &[(usize, usize)]| -> Vec<[&'a str; 2]> {
            edges
                .iter()
                .map(|&(a, b)| [p.names[a].as_str(), p.names[b].as_str()])
                .collect()
        };
        let tree = Tree {
            nodes: (p.names.iter().zip(&p.column_names))
                .map(|(n, c)| NodeColumns {
                    name: n,
                    columns: c,
                })
                .collect(),
            edges: named(p.graph.edges()),
            root: name(s.engine.root()),
            topology: s.config.topology.label(),
            hsic: p
                .hsic
                .as_ref()
                .map(|h| h.row_iter().map(|r| r.iter().copied().collect()).collect()),
            true_edges: p.true_edges.as_ref().map(|te| named(te)),
            matches_true_tree: p
                .true_edges
                .as_ref()
                .map(|te| normalised(te) == normalised(p.graph.edges())),
        };
        let kernels = (p.names.iter().zip(&p.kernels))
            .map(|(n, k)| {
                let kernel = NodeKernel {
                    kernel: k.settings.kernel.label(),
                    bandwidth: k.sigma,
                    bandwidth_auto: matches!(k.settings.bandwidth, Bandwidth::Auto),
                    bandwidth_rule: &k.rule,
                    multiplier: k.settings.multiplier,
                    median_distance: k.median,
                    lambda: k.settings.lambda,
                };
                (n.as_str(), kernel)
            })
            .collect();
        TreeReport {
            queries: (s.query_nodes().into_iter())
                .map(|t| (p.names[t].clone(), query(s, t)))
                .collect(),
            tree,
            kernels,
            lambda_convention: super::LAMBDA_CONVENTION,
            samples: Samples {
                per_edge: s.config.samples_per_edge.min(p.dataset.rows()),
                shared: s.config.shared_samples,
                rows: p.dataset.rows(),
                seed: s.config.sample_seed,
                belief_samples: "each node's samples on its first edge",
            },
            evidence: &s.config.evidence,
            reference_method: s
                .reference
                .as_ref()
                .and_then(|r| r.iter().flatten().next().map(|m| m.label())),
            setup_timings: &p.timings,
            model_setup_seconds: p.model.setup_seconds(),
            query_seconds: s.query_seconds,
            query_timings: &s.query_timings,
            warnings: s.warnings(),
        }
    }
}

/// The read-outs of query node `t`.
fn query(s: &TreeScenario, t: NodeId) -> Query {
    let b = &s.beliefs[t];
    if let Some(v) = &b.observed {
        return Query::Observed {
            observed: v.clone(),
        };
    }
    let g = &s.gaussian[t];
    if let Some(c) = s.curves(t) {
        let reference = s.reference(t).map(|r| Reference {
            reference: c.reference.clone(),
            reference_mean: r.mean,
        });
        Query::Curves {
            grid: c.xs.to_vec(),
            parzen: c.parzen,
            embedding: c.embedding,
            gaussian_bp: c.gaussian_bp,
            mean: b.mean[0],
            argmax: b.argmax[0],
            argmax_embedding: b.argmax_embedding[0],
            gaussian_bp_mean: g.mean[0],
            gaussian_bp_sd: g.cov[(0, 0)].sqrt(),
            effective_samples: b.effective_samples,
            belief_samples: b.weights.len(),
            reference,
            errors: s.query_errors(t).map(|e| Errors {
                l1_parzen: e.l1_parzen,
                l1_embedding: e.l1_embedding,
                l1_gaussian_bp: e.l1_gaussian_bp,
                mean_error: e.mean_error,
                mean_error_gaussian_bp: e.mean_error_gaussian_bp,
            }),
        }
    } else {
        let pts = s.problem.model.eval_points(t);
        let gauss: Vec<f64> = pts.rows().map(|r| g.density(r)).collect();
        Query::Candidates {
            candidates: pts.rows().map(|r| r.to_vec()).collect(),
            parzen: normalise_density(&b.parzen, 1.0),
            embedding: normalise_density(&b.embedding, 1.0),
            gaussian_bp: normalise_density(&gauss, 1.0),
            mean: b.mean.clone(),
            argmax: b.argmax.clone(),
            argmax_embedding: b.argmax_embedding.clone(),
            gaussian_bp_mean: g.mean.iter().copied().collect(),
            effective_samples: b.effective_samples,
            belief_samples: b.weights.len(),
        }
    }
}
