//! Graphs, domains and evidence: the problem side of message passing.

pub mod evidence;
pub mod flow;
pub mod graph;

pub use evidence::NodeEvidence;
pub use graph::{Graph, GraphError, MsgId, Neighbor, NodeId};
