//! The SOSMP room: model and algorithm settings (`params`), the convergence lab with its error
//! curves, sweeps and choosers, and the edge / node inspectors (`view`).

pub mod params;
pub mod view;

use eframe::egui;

use super::{InspectorHeights, RoomContext, ScenarioUi};
use crate::runner::Snapshot;
use crate::scenarios::{Probe, ScenarioConfig, ScenarioView, TaskResult};

#[derive(Default)]
pub struct SosmpRoom {
    /// Finished sweeps and the node / message choosers.
    caches: view::Caches,
}

impl ScenarioUi for SosmpRoom {
    fn name(&self) -> &'static str {
        "sosmp"
    }

    fn params(&mut self, ui: &mut egui::Ui, config: &mut ScenarioConfig, cx: &mut RoomContext<'_>) {
        let ScenarioConfig::Sosmp(c) = config else {
            return;
        };
        let running = cx.snapshot.and_then(|s| match &s.view {
            ScenarioView::Sosmp(v) => Some(v),
            _ => None,
        });
        params::ui(ui, c, running);
    }

    fn central(&mut self, ui: &mut egui::Ui, snapshot: &Snapshot, cx: &mut RoomContext<'_>) {
        // The view carries the config it was built from.
        if let ScenarioView::Sosmp(v) = &snapshot.view {
            view::lab(
                ui,
                v,
                &v.config,
                &mut self.caches,
                cx.selection,
                cx.commands,
            );
        }
    }

    fn inspector(
        &mut self,
        ui: &mut egui::Ui,
        snapshot: &Snapshot,
        _: &mut RoomContext<'_>,
        _: InspectorHeights,
    ) {
        if let ScenarioView::Sosmp(v) = &snapshot.view {
            let h = (ui.available_height() - 12.0).max(300.0);
            view::inspector(ui, v, h);
        }
    }

    fn status(&self, snapshot: &Snapshot) -> Vec<String> {
        match &snapshot.view {
            ScenarioView::Sosmp(v) => view::status(v),
            _ => Vec::new(),
        }
    }

    fn selection_is_valid(&self, snapshot: &Snapshot, selection: Probe) -> bool {
        match &snapshot.view {
            ScenarioView::Sosmp(v) => view::selection_is_valid(v, selection),
            _ => false,
        }
    }

    fn open_paths(&mut self, _: &ScenarioConfig, _: &[std::path::PathBuf]) -> super::Opened {
        super::Opened::Refused(
            "the sosmp scenario uses no image; choose the denoise scenario to load one".into(),
        )
    }

    fn task_done(&mut self, result: &TaskResult) {
        if let TaskResult::Sosmp(sweep) = result {
            self.caches.add_sweep(sweep.clone());
        }
    }
}
