//! What the central area and the inspector show. The shared pieces (image panes, curves, belief
//! plots) are generic; each scenario has one file that arranges them for its `ScenarioView`, and
//! the functions here dispatch on the view.

pub mod belief;
pub mod curves;
pub mod denoise;
pub mod flow;
pub mod image_panes;
pub mod retrieval;
pub mod sosmp;
pub mod tree;

use eframe::egui;

use super::commands::UiCommand;
use super::state::State;
use crate::runner::Snapshot;
use crate::scenarios::{Probe, ScenarioConfig, ScenarioView};

/// Per-scenario runtime data of the views (textures), made on first use.
#[derive(Default)]
pub struct ViewCaches {
    denoise: denoise::Textures,
    pub tree: tree::TreeCache,
    retrieval: retrieval::RetrievalCache,
    /// SOSMP: finished sweeps and the node/message choosers.
    pub sosmp: sosmp::Caches,
    pub flow: flow::Caches,
}

/// The scenario's main view (the image panes for denoise).
pub fn central(
    ui: &mut egui::Ui,
    snapshot: &Snapshot,
    caches: &mut ViewCaches,
    state: &mut State,
    selection: Option<Probe>,
    commands: &mut Vec<UiCommand>,
) {
    match (&snapshot.view, &snapshot.config) {
        (ScenarioView::Denoise(view), ScenarioConfig::Denoise(config)) => denoise::images(
            ui,
            view,
            Some(config),
            &mut caches.denoise,
            state,
            selection,
            commands,
        ),
        (ScenarioView::Tree(view), config) => {
            let config = match config {
                ScenarioConfig::Tree(c) => Some(c),
                _ => None,
            };
            tree::central(ui, view, config, &mut caches.tree, selection, commands)
        }
        (ScenarioView::Retrieval(view), _) => retrieval::central(ui, view, &mut caches.retrieval),
        // The view carries the config it was built from.
        (ScenarioView::Sosmp(view), _) => sosmp::lab(
            ui,
            view,
            &view.config,
            &mut caches.sosmp,
            selection,
            commands,
        ),
        (ScenarioView::Denoise(view), _) => denoise::images(
            ui,
            view,
            None,
            &mut caches.denoise,
            state,
            selection,
            commands,
        ),
        (ScenarioView::Flow(view), _) => {
            flow::central(ui, view, &mut caches.flow, state, selection, commands)
        }
    }
}

/// The convergence curves and the inspector of the selected node.
pub fn inspector(
    ui: &mut egui::Ui,
    snapshot: &Snapshot,
    state: &mut State,
    caches: &mut ViewCaches,
) {
    let spacing = ui.spacing().item_spacing.y;
    let caption = ui.text_style_height(&egui::TextStyle::Body) + spacing;
    // Three plots share the height; the belief plot gets a little more and a line of text.
    let free = (ui.available_height() - 4.0 * caption - 24.0).max(300.0);
    let curve_h = (free * 0.3).max(100.0);
    let belief_h = (free - 2.0 * curve_h - 12.0).max(120.0);
    match (&snapshot.view, &snapshot.config) {
        (ScenarioView::Denoise(view), ScenarioConfig::Denoise(config)) => {
            denoise::curves(ui, snapshot, view, Some(config), curve_h);
            ui.add_space(6.0);
            ui.separator();
            denoise::inspector(ui, view, &mut state.inspector_tab, belief_h);
        }
        (ScenarioView::Tree(view), _) => tree::inspector(ui, snapshot, view, free),
        (ScenarioView::Retrieval(view), _) => {
            ui.label(format!(
                "Repeats {} / {}: recall@k of the true tail among the pool, averaged.",
                view.repeats_done, view.repeats
            ));
            curves::metrics_plot(
                ui,
                "retrieval_curves",
                &snapshot.history,
                &curves::all_metrics(&snapshot.history),
                &[],
                Some(view.repeats),
                curve_h,
            );
        }
        (ScenarioView::Denoise(view), _) => {
            denoise::curves(ui, snapshot, view, None, curve_h);
            ui.add_space(6.0);
            ui.separator();
            denoise::inspector(ui, view, &mut state.inspector_tab, belief_h);
        }
        (ScenarioView::Sosmp(view), _) => {
            let h = (ui.available_height() - 12.0).max(300.0);
            sosmp::inspector(ui, view, h);
        }
        (ScenarioView::Flow(view), _) => {
            flow::inspector(ui, snapshot, view, &mut caches.flow, curve_h, belief_h);
        }
    }
}

/// Scenario numbers for the status bar.
pub fn status(snapshot: &Snapshot) -> Vec<String> {
    match &snapshot.view {
        ScenarioView::Denoise(view) => denoise::status(view),
        ScenarioView::Tree(view) => tree::status(view),
        ScenarioView::Retrieval(view) => retrieval::status(view),
        ScenarioView::Sosmp(view) => sosmp::status(view),
        ScenarioView::Flow(view) => flow::status(view),
    }
}

/// The node the current selection points at, if it exists in this view.
pub fn selection_is_valid(snapshot: &Snapshot, selection: Probe) -> bool {
    match (&snapshot.view, selection) {
        (ScenarioView::Denoise(view), Probe::Node(n)) => n < view.width * view.height,
        (ScenarioView::Denoise(_), Probe::Message(_)) => false,
        (ScenarioView::Tree(view), Probe::Node(n)) => n < view.nodes.len(),
        (ScenarioView::Tree(view), Probe::Message(m)) => m < view.messages.len(),
        (ScenarioView::Retrieval(_), _) => false,
        (ScenarioView::Sosmp(view), selection) => sosmp::selection_is_valid(view, selection),
        (ScenarioView::Flow(view), Probe::Node(n)) => n < view.width * view.height,
        (ScenarioView::Flow(_), Probe::Message(_)) => false,
    }
}
