//! The retrieval room: the experiment's settings (`params`) and the recall@k curves (`view`).

pub mod params;
pub mod view;

use eframe::egui;

use super::{InspectorHeights, Opened, RoomContext, ScenarioUi};
use crate::app::views::curves;
use crate::runner::Snapshot;
use crate::scenarios::{ScenarioConfig, ScenarioView};

#[derive(Default)]
pub struct RetrievalRoom {
    cache: view::RetrievalCache,
}

impl ScenarioUi for RetrievalRoom {
    fn name(&self) -> &'static str {
        "retrieval"
    }

    fn params(&mut self, ui: &mut egui::Ui, config: &mut ScenarioConfig, _: &mut RoomContext<'_>) {
        if let ScenarioConfig::Retrieval(c) = config {
            params::retrieval_ui(ui, c);
        }
    }

    fn central(&mut self, ui: &mut egui::Ui, snapshot: &Snapshot, _: &mut RoomContext<'_>) {
        if let ScenarioView::Retrieval(v) = &snapshot.view {
            view::central(ui, v, &mut self.cache);
        }
    }

    fn inspector(
        &mut self,
        ui: &mut egui::Ui,
        snapshot: &Snapshot,
        _: &mut RoomContext<'_>,
        heights: InspectorHeights,
    ) {
        let ScenarioView::Retrieval(v) = &snapshot.view else {
            return;
        };
        ui.label(format!(
            "Repeats {} / {}: recall@k of the true tail among the pool, averaged.",
            v.repeats_done, v.repeats
        ));
        curves::metrics_plot(
            ui,
            "retrieval_curves",
            &snapshot.history,
            &curves::all_metrics(&snapshot.history),
            &[],
            Some(v.repeats),
            heights.curve,
        );
    }

    fn status(&self, snapshot: &Snapshot) -> Vec<String> {
        match &snapshot.view {
            ScenarioView::Retrieval(v) => view::status(v),
            _ => Vec::new(),
        }
    }

    fn open_paths(&mut self, _: &ScenarioConfig, _: &[std::path::PathBuf]) -> Opened {
        Opened::Refused(
            "the retrieval experiment generates its own data; switch to the tree scenario to \
             explore a file"
                .into(),
        )
    }
}
