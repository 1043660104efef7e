//! Where each directed message lives in an engine's flat buffers, grouped by source node so that
//! one parallel task owns a node's outgoing messages. Shared by the SOSMP and discrete flow
//! engines. Cost O(messages) to build.

use super::{Graph, MsgId};

/// Where each directed message's coefficients live in the engine's buffers: messages are stored
/// grouped by source node (node `v`'s outgoing messages are slots `node_start[v]..node_start[v+1]`,
/// in the order of `graph.neighbors(v)`), so one task can own a node's outgoing messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotLayout {
    pub node_start: Vec<usize>,
    /// `slot_of[m]`: the slot of message `m`.
    pub slot_of: Vec<usize>,
    /// `message_of[s]`: the message in slot `s`.
    pub message_of: Vec<MsgId>,
}

impl SlotLayout {
    pub fn new(graph: &Graph) -> Self {
        let mut node_start = Vec::with_capacity(graph.num_nodes() + 1);
        let mut slot_of = vec![0; graph.num_messages()];
        let mut message_of = Vec::with_capacity(graph.num_messages());
        node_start.push(0);
        for v in 0..graph.num_nodes() {
            for nb in graph.neighbors(v) {
                slot_of[nb.outgoing] = message_of.len();
                message_of.push(nb.outgoing);
            }
            node_start.push(message_of.len());
        }
        SlotLayout {
            node_start,
            slot_of,
            message_of,
        }
    }
}
