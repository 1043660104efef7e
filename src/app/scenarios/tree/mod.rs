//! The tree room: data, tree and kernel settings (`params`), the tree canvas for drawing and
//! probing with live evidence sliders, and the belief / message inspector (`view`).

mod canvas;
mod inspector;
pub mod params;
pub mod view;

use std::path::PathBuf;

use eframe::egui;

use super::{OpenKind, Opened, RoomContext, ScenarioUi};
use crate::runner::Snapshot;
use crate::scenarios::tree::open::open_file;
use crate::scenarios::tree::{TreeConfig, TreeView};
use crate::scenarios::{Probe, Registered, ScenarioConfig};

#[derive(Default)]
pub struct TreeRoom {
    cache: view::TreeCache,
}

/// The running tree of a snapshot.
fn tree_view(snapshot: &Snapshot) -> Option<&TreeView> {
    Box::<TreeView>::of(&snapshot.view).map(|v| v.as_ref())
}

impl ScenarioUi for TreeRoom {
    fn explanation(&self) -> &'static str {
        "Tree kernel BP (Song, Gretton, Guestrin 2010, Alg. 1): a dataset's columns are nodes of a tree (chain, star, binary, HSIC Chow-Liu, or one you draw); each edge learns conditional embedding operators from m sample pairs. Evidence fixes some nodes; one upward and one downward pass give every hidden node's belief.\n\n\
         Messages are weight vectors over each edge's samples. A belief is read out two ways: Parzen (P(x) times the product of incoming messages) and the embedding evaluated on a grid. Gaussian BP with least-squares parameters is the parametric baseline; built-in datasets also have an exact or fine-grid reference.\n\n\
         Centre: the tree (click a node to inspect it). Right: the selected node's belief from each method against the reference, in the method colours used everywhere."
    }

    fn name(&self) -> &'static str {
        "tree"
    }

    fn params(&mut self, ui: &mut egui::Ui, config: &mut ScenarioConfig, cx: &mut RoomContext<'_>) {
        if let Some(c) = TreeConfig::of_mut(config) {
            let running = cx.snapshot.and_then(tree_view);
            let selection = cx.snapshot.and_then(|s| s.probe);
            params::tree_ui(ui, c, running, selection, cx.commands);
        }
    }

    fn central(&mut self, ui: &mut egui::Ui, snapshot: &Snapshot, cx: &mut RoomContext<'_>) {
        if let Some(v) = tree_view(snapshot) {
            let config = TreeConfig::of(&snapshot.config);
            view::central(ui, v, config, &mut self.cache, cx.selection, cx.commands);
        }
    }

    fn inspector(&mut self, ui: &mut egui::Ui, snapshot: &Snapshot, cx: &mut RoomContext<'_>) {
        if let Some(v) = tree_view(snapshot) {
            view::inspector(ui, snapshot, v, cx.heights.free);
        }
    }

    fn status(&self, snapshot: &Snapshot) -> Vec<String> {
        tree_view(snapshot).map(view::status).unwrap_or_default()
    }

    fn selection_is_valid(&self, snapshot: &Snapshot, selection: Probe) -> bool {
        match (tree_view(snapshot), selection) {
            (Some(v), Probe::Node(n)) => n < v.nodes.len(),
            (Some(v), Probe::Message(m)) => m < v.messages.len(),
            _ => false,
        }
    }

    fn open_kind(&self) -> OpenKind {
        OpenKind::Data
    }

    fn open_paths(&mut self, config: &ScenarioConfig, paths: &[PathBuf]) -> Opened {
        let (Some(c), Some(path)) = (TreeConfig::of(config), paths.first()) else {
            return Opened::Refused("nothing to open".into());
        };
        let mut c = c.clone();
        match open_file(&mut c, path) {
            Ok(()) => Opened::Apply(Box::new(ScenarioConfig::Tree(c))),
            Err(e) => Opened::Refused(e),
        }
    }

    fn drop_hint(&self) -> &'static str {
        "Drop a CSV dataset or an edge-list tree file"
    }
}
