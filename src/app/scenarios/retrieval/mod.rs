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
    fn explanation(&self) -> &'static str {
        "The retrieval experiment of Song et al. 2010, Sec. 6.1: chains of L variables in R^5; given a chain's head, rank a pool of candidate tails. recall@k is the fraction of queries whose true tail is among the k best.\n\n\
         Kernel BP (tree kernel BP on the chain), Gaussian BP and chained nearest neighbours are compared. Each step runs one repeat (a fresh pool) at every chain length; the curves are means over the repeats so far.\n\n\
         Centre: recall@k at a chosen chain length and recall@10 against the chain length. Right: recall@10 of each method per repeat (the x axis counts repeats)."
    }

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
        curves::metrics_plot_over(
            ui,
            "repeat",
            "retrieval_curves",
            "recall@10",
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
