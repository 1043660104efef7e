//! Why a graph cannot be built or is not the shape asked for (see `crate::model::graph`).

use thiserror::Error;

/// A node id (`crate::model::NodeId`).
type NodeId = usize;

/// Why a graph was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum GraphError {
    #[error("the graph has no nodes")]
    Empty,
    #[error("edge ({a}, {b}) names node {node}, but the graph has only {n} nodes (ids 0..{n})")]
    OutOfRange {
        a: NodeId,
        b: NodeId,
        node: NodeId,
        n: usize,
    },
    #[error("edge ({node}, {node}) is a self loop")]
    SelfLoop { node: NodeId },
    #[error("edge ({a}, {b}) appears twice")]
    DuplicateEdge { a: NodeId, b: NodeId },
    #[error("edge ({a}, {b}) closes a cycle, but a tree is needed")]
    Cycle { a: NodeId, b: NodeId },
    #[error("the graph is not connected: node {node} cannot be reached from node 0")]
    Disconnected { node: NodeId },
}
