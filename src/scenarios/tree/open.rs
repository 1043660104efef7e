//! Opening a file in the tree scenario: an edge list (`.edges`) becomes the tree, anything else
//! is a CSV dataset. Both are only named in the config here; they are read when the config is
//! built, on the worker ([`resolve_tree_file`]). Cost O(file size).

use std::path::Path;

use super::draft::TreeDraft;
use super::{DataSource, NodeSpec, Topology, TreeConfig};
use crate::error::{Error, Result};
use crate::io::csv::parse_edge_list;

/// Uses a dropped or picked file in a tree config: an edge-list file (`.edges`) becomes the
/// tree (its nodes and their columns), anything else is read as a CSV dataset.
pub fn open_file(config: &mut TreeConfig, path: &Path) -> std::result::Result<(), String> {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    if ext == "edges" {
        config.tree_file = Some(path.to_path_buf());
        Ok(())
    } else {
        config.data = DataSource::Csv {
            path: path.to_path_buf(),
        };
        config.nodes.clear();
        config.topology = Topology::Chain;
        config.evidence.clear();
        config.queries.clear();
        config.node_kernels.clear();
        config.root = None;
        Ok(())
    }
}

/// Reads the config's `tree_file`, if any, into its nodes and tree (and empties the field).
pub fn resolve_tree_file(config: &mut TreeConfig) -> Result<()> {
    let Some(path) = config.tree_file.take() else {
        return Ok(());
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| Error::Io(format!("cannot read {}: {e}", path.display())))?;
    let list = parse_edge_list(&text, &path.display().to_string())?;
    apply_draft_to(config, &TreeDraft::from_edge_list(&list));
    Ok(())
}

/// The config with the drawing's nodes and edges (evidence on nodes that no longer exist is
/// dropped; the root goes back to the first node).
pub fn apply_draft_to(config: &mut TreeConfig, draft: &TreeDraft) {
    let (nodes, topology): (Vec<NodeSpec>, Topology) = draft.to_config();
    config
        .evidence
        .retain(|name, _| nodes.iter().any(|n| &n.name == name));
    config
        .node_kernels
        .retain(|name, _| nodes.iter().any(|n| &n.name == name));
    config.queries.clear();
    config.root = None;
    config.nodes = nodes;
    config.topology = topology;
}
