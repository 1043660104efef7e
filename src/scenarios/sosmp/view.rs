//! What the SOSMP lab draws: the error curves, the edge and node inspections, the problem's
//! description, made on the worker.

use std::sync::Arc;

use super::config::{ModelDescription, SosmpConfig};
use super::*;
use crate::inference::sosmp::gains::GainSummary;
use crate::inference::sosmp::potentials::ClipReport;
use crate::model::{MsgId, NodeId};

/// The selected directed edge, on path 0 unless said otherwise.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeInspection {
    pub message: MsgId,
    pub from: NodeId,
    pub to: NodeId,
    /// `Σ_j a_j φ_j` on the grid (may be negative).
    pub raw: Vec<f64>,
    /// `max(0, raw)`.
    pub clipped: Vec<f64>,
    /// `clipped` scaled to integrate to 1 (the form compared with `m*`).
    pub normalised: Vec<f64>,
    /// The grid-BP message `m*` (integrates to 1).
    pub reference: Vec<f64>,
    /// `Σ_j a*_j φ_j`: the best the basis can do.
    pub reference_projection: Vec<f64>,
    /// `Σ_j a_∞;j φ_j`: where SOSMP converges to.
    pub floor_message: Vec<f64>,
    /// `a_t` of path 0.
    pub coefficients: Vec<f64>,
    /// `a_t` averaged over the paths.
    pub mean_coefficients: Vec<f64>,
    /// `a*`.
    pub reference_coefficients: Vec<f64>,
    /// `a_∞`.
    pub floor_coefficients: Vec<f64>,
    /// The latest `b` of path 0.
    pub last_b: Vec<f64>,
    /// Where path 0's latest k samples fell.
    pub samples: Vec<f64>,
    /// The density those samples were drawn from, normalised.
    pub sampling_density: Vec<f64>,
    /// The edge potential `ψ(x_from, x_to)` on a coarse grid for a heat map:
    /// `values[j * xs.len() + i]` at `(x_from = xs[i], x_to = xs[j])`.
    pub potential_xs: Vec<f64>,
    pub potential: Vec<f64>,
}

/// The selected node, on path 0.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeInspection {
    pub node: NodeId,
    /// SOSMP belief `ψ_u Π m̂` of path 0, normalised.
    pub belief: Vec<f64>,
    /// The grid-BP belief.
    pub reference: Vec<f64>,
    /// `ψ_u` on the grid.
    pub potential: Vec<f64>,
}

/// What the SOSMP views draw.
#[derive(Debug, Clone)]
pub struct SosmpView {
    pub config: SosmpConfig,
    pub iteration: usize,
    pub domain: (f64, f64),
    pub grid: Arc<Vec<f64>>,
    pub num_nodes: usize,
    /// Directed edges `[from, to]` in message order.
    pub edges: Arc<Vec<[NodeId; 2]>>,
    /// Undirected edges as stored in the graph (message `2e` is `edges_undirected[e].0 -> .1`).
    pub edges_undirected: Arc<Vec<(NodeId, NodeId)>>,
    pub basis: String,
    pub curves: Arc<ErrorCurves>,
    /// `e(a_∞) / e_0`.
    pub floor: f64,
    pub floor_raw: f64,
    pub e0: f64,
    /// Slope fitted on the mean so far (t from [`SLOPE_FROM`]).
    pub slope: Option<f64>,
    /// The same fit on the distance to `a_∞` ([`ErrorCurves::fixed_point`]).
    pub fixed_point_slope: Option<f64>,
    /// Two points `(t, e)` of a slope -1 line through the mean curve at `t = 10` (or the last t).
    pub slope_reference: Vec<[f64; 2]>,
    /// `ψ_u` of every node on the grid, node-major.
    pub node_potentials: Arc<Vec<f64>>,
    /// Every undirected edge's `ψ_e(x_a = c, x_b)` on the grid, edge-major, with `c` the grid
    /// node nearest the middle of the domain (for mixtures: the edge Gaussian mixture itself).
    pub edge_potential_slices: Arc<Vec<f64>>,
    /// `(1/|E→|) Σ ‖m* - Σ_{j≤r} a*_j φ_j‖²`: what the L2 error counts beyond eq. 38.
    pub truncation: f64,
    /// The L2 error of `a_0` and the L2 floor (raw, averaged over directed edges).
    pub e0_l2: f64,
    pub floor_l2: f64,
    /// Per-edge gains of the expected update at `a_∞`.
    pub gains: Option<GainSummary>,
    /// The longest path of the graph in edges (the depth in Theorem 1's `N^ℓ = 0`).
    pub diameter: usize,
    pub model: Arc<ModelDescription>,
    pub kernel_clip: Option<ClipReport>,
    /// Things the user must know: kernel clipping, variance clamping, fallbacks, no convergence.
    pub warnings: Vec<String>,
    pub fallbacks: u64,
    pub edge: Option<Box<EdgeInspection>>,
    pub node: Option<Box<NodeInspection>>,
}
