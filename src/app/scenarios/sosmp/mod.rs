//! The SOSMP room: model and algorithm settings (`params`), the convergence lab with its error
//! curves, sweeps and choosers, and the edge / node inspectors (`view`).

mod inspector;
pub mod params;
mod plots;
pub mod view;

use eframe::egui;

use super::{Opened, RoomContext, ScenarioUi};
use crate::runner::Snapshot;
use crate::scenarios::sosmp::{SosmpConfig, SosmpView};
use crate::scenarios::{Probe, Registered, ScenarioConfig, TaskResult};

#[derive(Default)]
pub struct SosmpRoom {
    /// Finished sweeps and the node / message choosers.
    caches: view::Caches,
}

impl ScenarioUi for SosmpRoom {
    fn explanation(&self) -> &'static str {
        "Stochastic orthogonal-series message passing (Noorshams & Wainwright 2013, Fig. 3) on a chain, tree or grid with continuous states. Each message is r coefficients of an orthogonal basis; an update draws Monte Carlo samples and moves the coefficients with step 1/(t+1).\n\n\
         The error e_t (distance of the messages to those of fine-grid BP, divided by e_0) falls like 1/t until it reaches the floor: the error of the fixed point a_inf that the truncation to r coefficients allows. Paths are independent runs; their mean is drawn thick.\n\n\
         Centre: the error against t on log-log axes with the floor (dashed), a 1/t guide and the distance to a_inf; sweeps overlay one curve per value. Right: the selected node's belief against the reference, its coefficients and its potentials."
    }

    fn name(&self) -> &'static str {
        "sosmp"
    }

    fn params(&mut self, ui: &mut egui::Ui, config: &mut ScenarioConfig, cx: &mut RoomContext<'_>) {
        if let Some(c) = SosmpConfig::of_mut(config) {
            params::ui(ui, c, cx.snapshot.and_then(|s| SosmpView::of(&s.view)));
        }
    }

    fn central(&mut self, ui: &mut egui::Ui, snapshot: &Snapshot, cx: &mut RoomContext<'_>) {
        // The view carries the config it was built from.
        if let Some(v) = SosmpView::of(&snapshot.view) {
            let caches = &mut self.caches;
            view::lab(ui, v, &v.config, caches, cx.selection, cx.commands);
        }
    }

    fn inspector(&mut self, ui: &mut egui::Ui, snapshot: &Snapshot, _: &mut RoomContext<'_>) {
        if let Some(v) = SosmpView::of(&snapshot.view) {
            let h = (ui.available_height() - 12.0).max(300.0);
            view::inspector(ui, v, h);
        }
    }

    fn status(&self, snapshot: &Snapshot) -> Vec<String> {
        SosmpView::of(&snapshot.view)
            .map(view::status)
            .unwrap_or_default()
    }

    fn selection_is_valid(&self, snapshot: &Snapshot, selection: Probe) -> bool {
        SosmpView::of(&snapshot.view).is_some_and(|v| view::selection_is_valid(v, selection))
    }

    fn open_paths(&mut self, _: &ScenarioConfig, _: &[std::path::PathBuf]) -> Opened {
        Opened::Refused(
            "the sosmp scenario uses no image; choose the denoise scenario to load one".into(),
        )
    }

    fn task_done(&mut self, result: &TaskResult) {
        if let TaskResult::Sosmp(sweep) = result {
            self.caches.add_sweep(sweep.clone());
        }
    }
}
