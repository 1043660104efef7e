//! The flow room: frames, model and algorithm settings (`params`), the frames, flow fields,
//! EPE maps and snapshot review, the pixel probe's belief and the EPE / AAE curves (`view`).

pub mod params;
pub mod view;

use std::path::PathBuf;

use eframe::egui;

use super::{InspectorHeights, Opened, RoomContext, ScenarioUi};
use crate::runner::Snapshot;
use crate::scenarios::flow::open::{FlowOpen, open_flow_files};
use crate::scenarios::{Probe, ScenarioConfig, ScenarioView};

#[derive(Default)]
pub struct FlowRoom {
    caches: view::Caches,
    /// Frame 1 opened alone, waiting for frame 2.
    pending: Option<PathBuf>,
}

impl ScenarioUi for FlowRoom {
    fn name(&self) -> &'static str {
        "flow"
    }

    fn params(&mut self, ui: &mut egui::Ui, config: &mut ScenarioConfig, cx: &mut RoomContext<'_>) {
        let ScenarioConfig::Flow(c) = config else {
            return;
        };
        let running = cx.snapshot.and_then(|s| match &s.view {
            ScenarioView::Flow(v) => Some(v.as_ref()),
            _ => None,
        });
        params::ui(ui, c, running, cx.commands);
    }

    fn central(&mut self, ui: &mut egui::Ui, snapshot: &Snapshot, cx: &mut RoomContext<'_>) {
        if let ScenarioView::Flow(v) = &snapshot.view {
            view::central(ui, v, &mut self.caches, cx.state, cx.selection, cx.commands);
        }
    }

    fn inspector(
        &mut self,
        ui: &mut egui::Ui,
        snapshot: &Snapshot,
        _: &mut RoomContext<'_>,
        heights: InspectorHeights,
    ) {
        if let ScenarioView::Flow(v) = &snapshot.view {
            view::inspector(
                ui,
                snapshot,
                v,
                &mut self.caches,
                heights.curve,
                heights.belief,
            );
        }
    }

    fn status(&self, snapshot: &Snapshot) -> Vec<String> {
        match &snapshot.view {
            ScenarioView::Flow(v) => view::status(v),
            _ => Vec::new(),
        }
    }

    fn selection_is_valid(&self, snapshot: &Snapshot, selection: Probe) -> bool {
        match (&snapshot.view, selection) {
            (ScenarioView::Flow(v), Probe::Node(n)) => n < v.width * v.height,
            _ => false,
        }
    }

    /// Two frames (and a `.flo`) together are one load; one frame waits for the next.
    fn open_paths(&mut self, config: &ScenarioConfig, paths: &[PathBuf]) -> Opened {
        let ScenarioConfig::Flow(c) = config else {
            return Opened::Refused("not a flow config".into());
        };
        // Files opened together are complete in themselves; one file pairs with a waiting one.
        let pending = self.pending.take().filter(|_| paths.len() == 1);
        match open_flow_files(c, pending.as_deref(), paths) {
            FlowOpen::Apply(config) => Opened::Apply(Box::new(ScenarioConfig::Flow(*config))),
            FlowOpen::Waiting(frame) => {
                let message = format!("frame 1 is {}: open frame 2 next", frame.display());
                self.pending = Some(frame);
                Opened::Waiting(message)
            }
            FlowOpen::Error(message) => Opened::Refused(message),
        }
    }

    fn drop_hint(&self) -> &'static str {
        "Drop two frames (and a .flo ground truth) to estimate their flow"
    }
}
