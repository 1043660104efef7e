//! The flow scenario's parameters.

use eframe::egui;

use crate::app::commands::UiCommand;
use crate::scenarios::flow::{FlowConfig, FlowView};

/// Edits `config` in place (applied by the controls panel like every scenario's parameters).
pub fn ui(
    ui: &mut egui::Ui,
    config: &mut FlowConfig,
    running: Option<&FlowView>,
    commands: &mut Vec<UiCommand>,
) {
    let _ = (config, running, commands);
    ui.label("flow parameters");
}
