//! The retrieval room: the experiment's settings (`params`) and the recall@k curves (`view`).

pub mod params;
pub mod view;

use eframe::egui;

use super::{Opened, RoomContext, ScenarioUi};
use crate::app::views::curves;
use crate::runner::Snapshot;
use crate::scenarios::retrieval::{RetrievalConfig, RetrievalView};
use crate::scenarios::{Registered, ScenarioConfig};

#[derive(Default)]
pub struct RetrievalRoom {
    cache: view::RetrievalCache,
}

impl ScenarioUi for RetrievalRoom {
    fn name(&self) -> &'static str {
        "retrieval"
    }

    fn params(&mut self, ui: &mut egui::Ui, config: &mut ScenarioConfig, _: &mut RoomContext<'_>) {
        if let Some(c) = RetrievalConfig::of_mut(config) {
            params::retrieval_ui(ui, c);
        }
    }

    fn central(&mut self, ui: &mut egui::Ui, snapshot: &Snapshot, _: &mut RoomContext<'_>) {
        if let Some(v) = RetrievalView::of(&snapshot.view) {
            view::central(ui, v, &mut self.cache);
        }
    }

    fn inspector(&mut self, ui: &mut egui::Ui, snapshot: &Snapshot, cx: &mut RoomContext<'_>) {
        let Some(v) = RetrievalView::of(&snapshot.view) else {
            return;
        };
        ui.label(format!(
            "Repeats {} / {}: recall@k of the true tail among the pool, averaged.",
            v.repeats_done, v.repeats
        ));
        let all = view::recall_series(&snapshot.history);
        let (history, h) = (&snapshot.history, cx.heights.curve);
        curves::metrics_plot(
            ui,
            "retrieval_curves",
            history,
            &all,
            &[],
            Some(v.repeats),
            h,
        );
    }

    fn status(&self, snapshot: &Snapshot) -> Vec<String> {
        RetrievalView::of(&snapshot.view)
            .map(view::status)
            .unwrap_or_default()
    }

    fn open_paths(&mut self, _: &ScenarioConfig, _: &[std::path::PathBuf]) -> Opened {
        Opened::Refused(
            "the retrieval experiment generates its own data; switch to the tree scenario to \
             explore a file"
                .into(),
        )
    }
}
