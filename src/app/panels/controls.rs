//! The left panel: the scenario selector, the scenario's parameters and the run controls.

use eframe::egui::{self, RichText};

use crate::app::commands::UiCommand;
use crate::app::form::section;
use crate::app::scenarios::{RoomContext, ScenarioUi};
use crate::scenarios::{KINDS, ScenarioConfig};

/// The parameter panel: the selector, the room's parameters (edited in `config`) and the run
/// controls pinned at the bottom.
pub fn show(
    ui: &mut egui::Ui,
    config: &mut ScenarioConfig,
    room: &mut dyn ScenarioUi,
    playing: bool,
    cx: &mut RoomContext<'_>,
) {
    let enabled = cx.snapshot.is_some();
    // The run controls stay in view at the bottom however long the parameters get.
    egui::Panel::bottom("run_controls")
        .show_separator_line(true)
        .show(ui, |ui| {
            run_controls(ui, enabled, playing, cx.commands);
            ui.add_space(6.0);
        });
    egui::ScrollArea::vertical()
        .auto_shrink([false, false])
        .show(ui, |ui| {
            let shown = config.name();
            scenario_selector(ui, config, &mut cx.state.configs);
            // A new choice gets its own room from the next frame on.
            if config.name() == shown {
                room.params(ui, config, cx);
            }
            ui.add_space(4.0);
            ui.weak("Edits apply when a slider is released or Enter is pressed.");
            ui.add_space(8.0);
        });
}

/// The scenario choice; switching keeps the old scenario's settings (and files) in `remembered`
/// and brings back the new one's.
fn scenario_selector(
    ui: &mut egui::Ui,
    config: &mut ScenarioConfig,
    remembered: &mut std::collections::BTreeMap<String, ScenarioConfig>,
) {
    section(ui, "Scenario");
    let current = config.name();
    egui::ComboBox::from_id_salt("scenario")
        .selected_text(current)
        .width(ui.available_width() - 8.0)
        .show_ui(ui, |ui| {
            for kind in KINDS {
                let chosen = ui
                    .selectable_label(kind.name == current, kind.name)
                    .on_hover_text(kind.summary);
                if chosen.clicked() && kind.name != current {
                    let next = remembered
                        .remove(kind.name)
                        .unwrap_or_else(kind.default_config);
                    let old = std::mem::replace(config, next);
                    remembered.insert(current.to_string(), old);
                }
            }
        })
        .response
        .accessible_name("Scenario");
    if let Some(about) = KINDS.iter().find(|k| k.name == current).map(|k| k.summary) {
        // (The algorithms are chosen below, per scenario.)
        ui.add(egui::Label::new(RichText::new(about).small().weak()).wrap());
    }
}

/// Play/Pause, Step and Reset, with their shortcuts in the tooltips; `enabled` once a scenario
/// runs, `playing` as the user last asked.
pub fn run_controls(
    ui: &mut egui::Ui,
    enabled: bool,
    playing: bool,
    commands: &mut Vec<UiCommand>,
) {
    ui.add_space(6.0);
    ui.horizontal(|ui| {
        let (icon, name) = if playing {
            ("▮▮", "Pause")
        } else {
            ("▶", "Play")
        };
        let buttons = [
            (UiCommand::PlayPause, icon, name),
            (UiCommand::Step, "▶▮", "Step"),
            (UiCommand::Reset, "↺", "Reset"),
        ];
        for (command, icon, name) in buttons {
            let b = ui
                .add_enabled(
                    enabled,
                    egui::Button::new(format!("{icon} {name}")).min_size(egui::vec2(72.0, 26.0)),
                )
                .accessible_name(name)
                .on_hover_text(command.tooltip(ui.ctx()));
            if b.clicked() {
                commands.push(command);
            }
        }
    });
}
