//! The denoise room: the kernel-BP / discrete-BP parameters with auto-tune (`params`), the image
//! panes with the pixel probe, the RMSE and residual curves and the pixel's belief (`view`).

pub mod params;
pub mod view;

use std::path::PathBuf;

use eframe::egui;

use super::{InspectorHeights, Opened, RoomContext, ScenarioUi};
use crate::runner::Snapshot;
use crate::scenarios::{Probe, ScenarioConfig, ScenarioView, TaskResult};

#[derive(Default)]
pub struct DenoiseRoom {
    textures: view::Textures,
}

impl ScenarioUi for DenoiseRoom {
    fn name(&self) -> &'static str {
        "denoise"
    }

    fn params(&mut self, ui: &mut egui::Ui, config: &mut ScenarioConfig, cx: &mut RoomContext<'_>) {
        let ScenarioConfig::Denoise(c) = config else {
            return;
        };
        let running = cx.snapshot.and_then(|s| match &s.view {
            ScenarioView::Denoise(v) => Some(v),
            _ => None,
        });
        let autotune = cx.last_task.and_then(|r| match r {
            TaskResult::Denoise(a) => Some(a.as_ref()),
            _ => None,
        });
        params::ui(ui, c, running, cx.task_running, autotune, cx.commands);
    }

    fn central(&mut self, ui: &mut egui::Ui, snapshot: &Snapshot, cx: &mut RoomContext<'_>) {
        let ScenarioView::Denoise(v) = &snapshot.view else {
            return;
        };
        let config = match &snapshot.config {
            ScenarioConfig::Denoise(c) => Some(c),
            _ => None,
        };
        view::images(
            ui,
            v,
            config,
            &mut self.textures,
            cx.state,
            cx.selection,
            cx.commands,
        );
    }

    fn inspector(
        &mut self,
        ui: &mut egui::Ui,
        snapshot: &Snapshot,
        cx: &mut RoomContext<'_>,
        heights: InspectorHeights,
    ) {
        let ScenarioView::Denoise(v) = &snapshot.view else {
            return;
        };
        let config = match &snapshot.config {
            ScenarioConfig::Denoise(c) => Some(c),
            _ => None,
        };
        view::curves(ui, snapshot, v, config, heights.curve);
        ui.add_space(6.0);
        ui.separator();
        view::inspector(ui, v, &mut cx.state.inspector_tab, heights.belief);
    }

    fn status(&self, snapshot: &Snapshot) -> Vec<String> {
        match &snapshot.view {
            ScenarioView::Denoise(v) => view::status(v),
            _ => Vec::new(),
        }
    }

    fn selection_is_valid(&self, snapshot: &Snapshot, selection: Probe) -> bool {
        match (&snapshot.view, selection) {
            (ScenarioView::Denoise(v), Probe::Node(n)) => n < v.width * v.height,
            _ => false,
        }
    }

    fn open_paths(&mut self, config: &ScenarioConfig, paths: &[PathBuf]) -> Opened {
        let (ScenarioConfig::Denoise(c), Some(path)) = (config, paths.first()) else {
            return Opened::Refused("nothing to open".into());
        };
        let mut c = c.clone();
        c.image = Some(path.clone());
        Opened::Apply(Box::new(ScenarioConfig::Denoise(c)))
    }

    fn drop_hint(&self) -> &'static str {
        "Drop an image to use it as the clean image"
    }
}
