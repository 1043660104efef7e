//! Node potentials computed on demand.

use super::NodeId;

/// Node potentials computed when needed, for models too large to tabulate (optical flow: `ψ_u`
/// from two frames at every displacement of every pixel would be pixels x labels numbers).
pub trait NodeEvidence: Send + Sync + std::fmt::Debug {
    /// Number of nodes it covers.
    fn num_nodes(&self) -> usize;
    /// Number of states (grid nodes or labels) per potential.
    fn grid_len(&self) -> usize;
    /// Writes `ψ_u` at every state into `out` (length [`grid_len`](Self::grid_len)): finite,
    /// non-negative, not all zero. O(states).
    fn fill(&self, u: NodeId, out: &mut [f64]);
}
