//! The tree explorer: the tree drawn as a graph (nodes, and the two messages of every edge as
//! arrows coloured by state), click a node to inspect it and to observe it with a slider over
//! its data range (every other belief follows as the slider moves: the change goes to the
//! worker as a live control, not a rebuild), the selected node's beliefs (kernel BP Parzen and
//! embedding, Gaussian BP, the reference), the message inspector (a message's weights over its
//! samples as a stem plot, negative weights in red), and a canvas to draw a tree: add nodes,
//! drag from one node to another to connect them, assign columns, apply, save or load.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use eframe::egui::{self, Color32};

use super::canvas::{draw_mode, tree_canvas};
pub use super::inspector::inspector;
use super::inspector::node_panel;
use crate::app::colors;
use crate::app::commands::UiCommand;
use crate::scenarios::Probe;
use crate::scenarios::tree::{DraftProblem, TreeConfig, TreeDraft, TreeView};
use crate::viz::palette::Method;

pub const PARZEN_COLOR: Color32 = colors::method(Method::KernelBp);
pub const EMBEDDING_COLOR: Color32 = colors::method(Method::KernelBpEmbedding);
pub const GAUSSIAN_COLOR: Color32 = colors::method(Method::GaussianBp);
pub const REFERENCE_COLOR: Color32 = colors::method(Method::Exact);
pub const OBSERVED_COLOR: Color32 = Color32::from_rgb(255, 167, 38);
pub const NEGATIVE_COLOR: Color32 = Color32::from_rgb(229, 57, 53);
pub const SELECTED_COLOR: Color32 = Color32::from_rgb(255, 238, 88);
pub(super) const PROBLEM_FLASH: Duration = Duration::from_secs(3);
pub(super) const NODE_RADIUS: f32 = 15.0;

/// Explore the running tree, or draw a new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Explore,
    Draw,
}

/// Runtime state of the tree views (not persisted).
#[derive(Default)]
pub struct TreeCache {
    pub mode: Mode,
    /// Slider values per node, ahead of the engine while a slider moves.
    pub(super) sliders: HashMap<usize, Vec<f64>>,
    /// The drawing being edited.
    pub draft: Option<TreeDraft>,
    pub(super) draft_selected: Option<usize>,
    pub(super) drag_from: Option<usize>,
    /// A refused edit, shown (and its edge or node highlighted) for a few seconds.
    pub(super) flash: Option<(DraftProblem, String, Instant)>,
}

pub(super) fn selected_node(view: &TreeView, selection: Option<Probe>) -> Option<usize> {
    match selection {
        Some(Probe::Node(n)) if n < view.nodes.len() => Some(n),
        _ => None,
    }
}

/// Status-bar numbers.
pub fn status(view: &TreeView) -> Vec<String> {
    let mut out = Vec::new();
    if view.query_seconds > 0.0 {
        out.push(format!("update {:.1} ms", view.query_seconds * 1e3));
    }
    if let (Some(k), Some(g)) = (
        view.metrics.get("l1_parzen"),
        view.metrics.get("l1_gaussian_bp"),
    ) {
        out.push(format!("L1 kernel BP {k:.3} · Gaussian BP {g:.3}"));
    }
    out
}

/// The central area of the tree scenario.
pub fn central(
    ui: &mut egui::Ui,
    view: &TreeView,
    config: Option<&TreeConfig>,
    cache: &mut TreeCache,
    selection: Option<Probe>,
    commands: &mut Vec<UiCommand>,
) {
    ui.horizontal_wrapped(|ui| {
        ui.selectable_value(&mut cache.mode, Mode::Explore, "Explore")
            .on_hover_text("Observe nodes and watch every belief");
        ui.selectable_value(&mut cache.mode, Mode::Draw, "Draw tree")
            .on_hover_text("Draw a tree, assign columns, apply it or save it");
        ui.separator();
        ui.label(format!(
            "{} · {} rows · {} nodes · {} · m = {} per edge{}{}",
            view.data_label,
            view.rows,
            view.nodes.len(),
            view.topology,
            view.samples_per_edge,
            if view.samples_per_edge >= view.rows {
                " (every row)"
            } else {
                ""
            },
            if view.shared_samples { " (shared)" } else { "" }
        ));
        if view.query_seconds > 0.0 {
            let parts: Vec<String> = view
                .query_timings
                .iter()
                .map(|(k, v)| format!("{k} {:.1}", v * 1e3))
                .collect();
            ui.weak(format!(
                "update {:.1} ms ({} ms)",
                view.query_seconds * 1e3,
                parts.join(", ")
            ));
        }
    });
    match cache.mode {
        Mode::Explore => {
            let h = ui.available_height();
            let canvas_h = (h * 0.42).clamp(200.0, 520.0);
            tree_canvas(ui, view, selection, commands, canvas_h);
            ui.add_space(4.0);
            node_panel(ui, view, cache, selection, commands);
        }
        Mode::Draw => draw_mode(ui, view, config, cache, commands),
    }
}
