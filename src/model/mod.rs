//! Graphs, domains and evidence: the problem side of message passing.

pub mod evidence;
pub mod flow;
pub mod graph;
pub mod image;
pub mod latent_dag;
pub mod latent_junction_tree;
pub mod retrieval_chain;
pub mod slot_layout;

pub use evidence::NodeEvidence;
pub use graph::{Graph, GraphError, MsgId, Neighbor, NodeId};
pub use image::GrayImage;
pub use slot_layout::SlotLayout;
