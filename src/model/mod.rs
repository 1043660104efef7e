//! Graphs, domains and evidence: the problem side of message passing.

pub mod graph;

pub use graph::{Graph, GraphError, MsgId, Neighbor, NodeId};
