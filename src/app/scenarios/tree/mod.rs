//! The tree room: data, tree and kernel settings (`params`), the tree canvas for drawing and
//! probing with live evidence sliders, and the belief / message inspector (`view`).

pub mod params;
pub mod view;

use std::path::PathBuf;

use eframe::egui;

use super::{InspectorHeights, OpenKind, Opened, RoomContext, ScenarioUi};
use crate::runner::Snapshot;
use crate::scenarios::tree::open::open_file;
use crate::scenarios::{Probe, ScenarioConfig, ScenarioView};

#[derive(Default)]
pub struct TreeRoom {
    cache: view::TreeCache,
}

impl ScenarioUi for TreeRoom {
    fn name(&self) -> &'static str {
        "tree"
    }

    fn params(&mut self, ui: &mut egui::Ui, config: &mut ScenarioConfig, cx: &mut RoomContext<'_>) {
        let ScenarioConfig::Tree(c) = config else {
            return;
        };
        let running = cx.snapshot.and_then(|s| match &s.view {
            ScenarioView::Tree(v) => Some(v.as_ref()),
            _ => None,
        });
        let selection = cx.snapshot.and_then(|s| s.probe);
        params::tree_ui(ui, c, running, selection, cx.commands);
    }

    fn central(&mut self, ui: &mut egui::Ui, snapshot: &Snapshot, cx: &mut RoomContext<'_>) {
        let ScenarioView::Tree(v) = &snapshot.view else {
            return;
        };
        let config = match &snapshot.config {
            ScenarioConfig::Tree(c) => Some(c),
            _ => None,
        };
        view::central(ui, v, config, &mut self.cache, cx.selection, cx.commands);
    }

    fn inspector(
        &mut self,
        ui: &mut egui::Ui,
        snapshot: &Snapshot,
        _: &mut RoomContext<'_>,
        heights: InspectorHeights,
    ) {
        if let ScenarioView::Tree(v) = &snapshot.view {
            view::inspector(ui, snapshot, v, heights.free);
        }
    }

    fn status(&self, snapshot: &Snapshot) -> Vec<String> {
        match &snapshot.view {
            ScenarioView::Tree(v) => view::status(v),
            _ => Vec::new(),
        }
    }

    fn selection_is_valid(&self, snapshot: &Snapshot, selection: Probe) -> bool {
        match (&snapshot.view, selection) {
            (ScenarioView::Tree(v), Probe::Node(n)) => n < v.nodes.len(),
            (ScenarioView::Tree(v), Probe::Message(m)) => m < v.messages.len(),
            _ => false,
        }
    }

    fn open_kind(&self) -> OpenKind {
        OpenKind::Data
    }

    fn open_paths(&mut self, config: &ScenarioConfig, paths: &[PathBuf]) -> Opened {
        let (ScenarioConfig::Tree(c), Some(path)) = (config, paths.first()) else {
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
