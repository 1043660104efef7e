//! The flow room: frames, model and algorithm settings (`params`), the frames, flow fields,
//! EPE maps and snapshot review, the pixel probe's belief and the EPE / AAE curves (`view`).

pub mod params;
pub mod view;

use std::path::PathBuf;

use eframe::egui;

use super::{Opened, RoomContext, ScenarioUi};
use crate::runner::Snapshot;
use crate::scenarios::flow::open::{FlowOpen, open_flow_files};
use crate::scenarios::flow::{FlowConfig, FlowView};
use crate::scenarios::{Probe, Registered, ScenarioConfig};

#[derive(Default)]
pub struct FlowRoom {
    caches: view::Caches,
    /// Frame 1 opened alone, waiting for frame 2.
    pending: Option<PathBuf>,
}

/// The flow views of a snapshot.
fn flow_view(snapshot: &Snapshot) -> Option<&FlowView> {
    Box::<FlowView>::of(&snapshot.view).map(|v| v.as_ref())
}

impl ScenarioUi for FlowRoom {
    fn name(&self) -> &'static str {
        "flow"
    }

    fn explanation(&self) -> &'static str {
        super::explanations::FLOW
    }

    fn params(&mut self, ui: &mut egui::Ui, config: &mut ScenarioConfig, cx: &mut RoomContext<'_>) {
        if let Some(c) = FlowConfig::of_mut(config) {
            params::ui(ui, c, cx.snapshot.and_then(flow_view), cx.commands);
        }
    }

    fn central(&mut self, ui: &mut egui::Ui, snapshot: &Snapshot, cx: &mut RoomContext<'_>) {
        if let Some(v) = flow_view(snapshot) {
            let caches = &mut self.caches;
            view::central(ui, v, caches, cx.state, cx.selection, cx.commands);
        }
    }

    fn inspector(&mut self, ui: &mut egui::Ui, snapshot: &Snapshot, cx: &mut RoomContext<'_>) {
        if let Some(v) = flow_view(snapshot) {
            let h = cx.heights;
            view::inspector(ui, snapshot, v, &mut self.caches, h.curve, h.belief);
        }
    }

    fn status(&self, snapshot: &Snapshot) -> Vec<String> {
        flow_view(snapshot).map(view::status).unwrap_or_default()
    }

    fn selection_is_valid(&self, snapshot: &Snapshot, selection: Probe) -> bool {
        let v = flow_view(snapshot);
        matches!((v, selection), (Some(v), Probe::Node(n)) if n < v.width * v.height)
    }

    /// Two frames (and a `.flo`) together are one load; one frame waits for the next.
    fn open_paths(&mut self, config: &ScenarioConfig, paths: &[PathBuf]) -> Opened {
        let Some(c) = FlowConfig::of(config) else {
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
