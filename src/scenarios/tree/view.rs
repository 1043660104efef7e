//! What the tree explorer draws: produced on the worker, sent inside snapshots. Curves of 1-D
//! nodes are densities on the node's grid, each normalised so that `Σ y Δx = 1` when its sum
//! is positive (kernel beliefs keep their negative values); multi-dimensional nodes carry
//! their beliefs over a candidate set instead.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::draft::TreeDraft;
use crate::inference::tree_kbp::NodeKernelInfo;

/// Belief curves of a 1-D node on its grid (densities; see the module docs).
#[derive(Debug, Clone, PartialEq)]
pub struct BeliefCurves {
    pub xs: Arc<Vec<f64>>,
    /// Kernel BP, Parzen read-out `P(x) Π m(x)`.
    pub parzen: Vec<f64>,
    /// Kernel BP, the belief embedding evaluated on the grid.
    pub embedding: Vec<f64>,
    /// Gaussian BP with least-squares parameters.
    pub gaussian_bp: Vec<f64>,
    /// The exact / fine-grid reference (built-ins).
    pub reference: Option<Vec<f64>>,
}

/// Beliefs of a multi-dimensional node over its candidate points (each normalised to sum 1).
#[derive(Debug, Clone, PartialEq)]
pub struct CandidateBeliefs {
    /// Candidate points, row-major (`len x dim`).
    pub points: Arc<Vec<f64>>,
    pub parzen: Vec<f64>,
    pub embedding: Vec<f64>,
    pub gaussian_bp: Vec<f64>,
}

/// One node of the explorer.
#[derive(Debug, Clone, PartialEq)]
pub struct TreeNodeView {
    pub name: String,
    pub columns: Vec<String>,
    pub dim: usize,
    /// Tidy-layout position in [0, 1]².
    pub position: [f64; 2],
    pub observed: Option<Vec<f64>>,
    /// Per dimension: the data range (the slider's range).
    pub range: Vec<(f64, f64)>,
    pub kernel: NodeKernelInfo,
    pub curves: Option<BeliefCurves>,
    pub candidates: Option<CandidateBeliefs>,
    /// Kernel BP posterior mean (normalised weights) and Parzen argmax.
    pub mean: Vec<f64>,
    pub argmax: Vec<f64>,
    pub gaussian_mean: Vec<f64>,
    pub reference_mean: Option<f64>,
    /// Kish's effective sample size of the belief weights (0 when observed), of
    /// `belief_samples`.
    pub effective_samples: f64,
    pub belief_samples: usize,
}

/// One directed message, for drawing the tree (arrows coloured by state).
#[derive(Debug, Clone, PartialEq)]
pub struct MessageView {
    pub id: usize,
    pub from: usize,
    pub to: usize,
    /// "pending", "pruned", "one" or "weights".
    pub state: &'static str,
    pub log_scale: Option<f64>,
}

/// The message inspector: a message's weights over its samples.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageInspector {
    pub id: usize,
    pub from: String,
    pub to: String,
    pub state: &'static str,
    /// `β_i`, rescaled (the message is `exp(log_scale) Σ_i β_i k(x_i, ·)`); negative weights
    /// are kept.
    pub weights: Vec<f64>,
    /// The receiver's sample `x_i` of each weight (first coordinate for multi-dimensional
    /// nodes).
    pub positions: Vec<f64>,
    pub log_scale: f64,
    /// The message as a function on the receiver's grid (1-D receivers), max |.| = 1.
    pub curve: Option<(Arc<Vec<f64>>, Vec<f64>)>,
}

/// Everything the tree explorer draws.
#[derive(Debug, Clone)]
pub struct TreeView {
    pub data_label: String,
    pub rows: usize,
    /// Every column of the dataset (for assigning columns on the canvas).
    pub columns: Vec<String>,
    pub nodes: Vec<TreeNodeView>,
    pub edges: Vec<(usize, usize)>,
    pub root: usize,
    pub topology: String,
    pub messages: Vec<MessageView>,
    /// Schedule (message ids) and how far stepping has got.
    pub schedule: Vec<usize>,
    pub cursor: usize,
    /// The probed node, if any.
    pub selected_node: Option<usize>,
    pub inspector: Option<MessageInspector>,
    /// Pairwise HSIC of a Chow-Liu tree (`n x n`, row-major).
    pub hsic: Option<Vec<f64>>,
    /// The generating tree (built-ins with their own nodes).
    pub true_edges: Option<Vec<(usize, usize)>>,
    pub reference_label: Option<&'static str>,
    /// The samples each edge uses: the config's m, or every row when the table has fewer.
    pub samples_per_edge: usize,
    pub shared_samples: bool,
    /// Seconds of the last evidence update (messages + read-outs + baselines).
    pub query_seconds: f64,
    /// Seconds of the parts of the last update (messages, read-outs, gaussian_bp, reference).
    pub query_timings: BTreeMap<String, f64>,
    pub setup_seconds: f64,
    pub lambda_convention: &'static str,
    /// Current errors against the reference (built-ins), averaged over hidden nodes.
    pub metrics: BTreeMap<String, f64>,
    pub warnings: Vec<String>,
    /// The running tree as an editable drawing (start of the canvas).
    pub draft: TreeDraft,
}
