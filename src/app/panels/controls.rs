//! The left panel: the scenario selector, the scenario's parameters and the run controls.

use eframe::egui::{self, RichText};

use super::denoise_params::{self, section};
use super::{flow_params, sosmp_params, tree_params};
use crate::app::commands::UiCommand;
use crate::runner::Snapshot;
use crate::scenarios::flow::FlowConfig;
use crate::scenarios::sosmp::SosmpConfig;
use crate::scenarios::tasks::TaskResult;
use crate::scenarios::{ScenarioConfig, ScenarioView, catalogue, denoise::DenoiseConfig};

/// Long jobs as the parameters panel sees them.
pub struct TaskInfo<'a> {
    /// A job is running (no second one can start).
    pub running: bool,
    /// What the last finished job produced.
    pub last: Option<&'a TaskResult>,
}

/// The default config of a scenario named in the catalogue.
pub fn default_config(name: &str) -> Option<ScenarioConfig> {
    match name {
        "denoise" => Some(ScenarioConfig::Denoise(DenoiseConfig::default())),
        "tree" => Some(ScenarioConfig::Tree(
            crate::scenarios::tree::TreeConfig::default(),
        )),
        "retrieval" => Some(ScenarioConfig::Retrieval(
            crate::scenarios::retrieval::RetrievalConfig::default(),
        )),
        "sosmp" => Some(ScenarioConfig::Sosmp(SosmpConfig::default())),
        "flow" => Some(ScenarioConfig::Flow(FlowConfig::default())),
        _ => None,
    }
}

pub fn show(
    ui: &mut egui::Ui,
    config: &mut ScenarioConfig,
    snapshot: Option<&Snapshot>,
    playing: bool,
    tasks: &TaskInfo<'_>,
    commands: &mut Vec<UiCommand>,
) {
    // The run controls stay in view at the bottom however long the parameters get.
    egui::Panel::bottom("run_controls")
        .show_separator_line(true)
        .show(ui, |ui| {
            run_controls(ui, snapshot.is_some(), playing, commands);
            ui.add_space(6.0);
        });
    egui::ScrollArea::vertical()
        .auto_shrink([false, false])
        .show(ui, |ui| {
            scenario_selector(ui, config);
            match config {
                ScenarioConfig::Denoise(c) => {
                    let running = snapshot.and_then(|s| match &s.view {
                        ScenarioView::Denoise(v) => Some(v),
                        _ => None,
                    });
                    let autotune = tasks.last.and_then(|r| match r {
                        TaskResult::DenoiseAutotune(a) => Some(a.as_ref()),
                        _ => None,
                    });
                    denoise_params::ui(ui, c, running, tasks.running, autotune, commands)
                }
                ScenarioConfig::Tree(c) => {
                    let running = snapshot.and_then(|s| match &s.view {
                        ScenarioView::Tree(v) => Some(v.as_ref()),
                        _ => None,
                    });
                    let selection = snapshot.and_then(|s| s.probe);
                    tree_params::tree_ui(ui, c, running, selection, commands)
                }
                ScenarioConfig::Retrieval(c) => tree_params::retrieval_ui(ui, c),
                ScenarioConfig::Sosmp(c) => {
                    let running = snapshot.and_then(|s| match &s.view {
                        ScenarioView::Sosmp(v) => Some(v),
                        _ => None,
                    });
                    sosmp_params::ui(ui, c, running)
                }
                ScenarioConfig::Flow(c) => {
                    let running = snapshot.and_then(|s| match &s.view {
                        ScenarioView::Flow(v) => Some(v.as_ref()),
                        _ => None,
                    });
                    flow_params::ui(ui, c, running, commands)
                }
            }
            ui.add_space(4.0);
            ui.weak("Edits apply when a slider is released or Enter is pressed.");
            ui.add_space(8.0);
        });
}

fn scenario_selector(ui: &mut egui::Ui, config: &mut ScenarioConfig) {
    section(ui, "Scenario");
    let current = config.name();
    let entries = catalogue();
    egui::ComboBox::from_id_salt("scenario")
        .selected_text(current)
        .width(ui.available_width() - 8.0)
        .show_ui(ui, |ui| {
            for (name, about, _) in &entries {
                let chosen = ui
                    .selectable_label(*name == current, *name)
                    .on_hover_text(*about);
                if chosen.clicked()
                    && *name != current
                    && let Some(c) = default_config(name)
                {
                    *config = c;
                }
            }
        })
        .response
        .accessible_name("Scenario");
    if let Some((_, about, _)) = entries.iter().find(|(n, _, _)| *n == current) {
        // (The algorithms are chosen below, per scenario.)
        ui.add(egui::Label::new(RichText::new(*about).small().weak()).wrap());
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
