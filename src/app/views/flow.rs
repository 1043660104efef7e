//! The flow scenario's views.

use eframe::egui;

use super::super::commands::UiCommand;
use super::super::state::State;
use crate::scenarios::Probe;
use crate::scenarios::flow::FlowView;

/// Textures of the flow panes.
#[derive(Default)]
pub struct Caches {}

pub fn central(
    ui: &mut egui::Ui,
    view: &FlowView,
    caches: &mut Caches,
    state: &mut State,
    selection: Option<Probe>,
    commands: &mut Vec<UiCommand>,
) {
    let _ = (view, caches, state, selection, commands);
    ui.label("flow");
}

pub fn inspector(ui: &mut egui::Ui, view: &FlowView, curve_h: f32, belief_h: f32) {
    let _ = (view, curve_h, belief_h);
    ui.label("flow inspector");
}

pub fn status(view: &FlowView) -> Vec<String> {
    vec![format!("flow: {}", view.source)]
}
