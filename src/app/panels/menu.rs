//! The menu bar: every keyed command with its shortcut, panel toggles and the theme switch.

use eframe::egui::{self, ThemePreference};
use strum::VariantArray;

use crate::app::commands::UiCommand;
use crate::app::help::Help;
use crate::app::recent::RecentKind;
use crate::app::state::State;
use crate::run::budget;

/// Dark / Light / System as text buttons. (`egui::global_theme_preference_buttons` draws emoji
/// icons, which the bundled default fonts do not have.) Laid out right to left.
fn theme_switch(ui: &mut egui::Ui) {
    let mut preference = ui.options(|o| o.theme_preference);
    let before = preference;
    for (value, text, hint) in [
        (
            ThemePreference::System,
            "System",
            "Follow the system's light or dark setting",
        ),
        (
            ThemePreference::Light,
            "Light",
            "Dark text on a light background",
        ),
        (
            ThemePreference::Dark,
            "Dark",
            "Light text on a dark background",
        ),
    ] {
        ui.selectable_value(&mut preference, value, text)
            .on_hover_text(hint);
    }
    if preference != before {
        ui.ctx().set_theme(preference);
    }
}

/// File > Open Recent: one submenu per kind that has files.
fn open_recent(ui: &mut egui::Ui, state: &State, commands: &mut Vec<UiCommand>) {
    ui.add_enabled_ui(!state.recent.is_empty(), |ui| {
        ui.menu_button("Open recent", |ui| {
            for &kind in RecentKind::VARIANTS {
                let files = state.recent.list(kind);
                if files.is_empty() {
                    continue;
                }
                ui.menu_button(kind.label(), |ui| {
                    for path in files {
                        let name = path.file_name().map_or_else(
                            || path.display().to_string(),
                            |n| n.to_string_lossy().into_owned(),
                        );
                        let item = ui.button(name).on_hover_text(path.display().to_string());
                        if item.clicked() {
                            commands.push(UiCommand::OpenImage(path.clone()));
                        }
                    }
                });
            }
            ui.separator();
            if UiCommand::ClearRecent.menu_item(ui) {
                commands.push(UiCommand::ClearRecent);
            }
        });
    });
}

fn items(ui: &mut egui::Ui, list: &[UiCommand], commands: &mut Vec<UiCommand>) {
    for c in list {
        if c.menu_item(ui) {
            commands.push(c.clone());
        }
    }
}

/// The memory budget: the default (half of physical memory) or a size in GB. Runs whose
/// estimated peak is above it are refused with one line before anything is allocated.
fn memory_budget(ui: &mut egui::Ui, state: &mut State) {
    let default_gb = budget::default_budget() as f64 / 1e9;
    let physical_gb = budget::physical_memory() as f64 / 1e9;
    let mut custom = state.memory_budget_gb.is_some();
    ui.checkbox(&mut custom, "Own memory budget")
        .on_hover_text(format!(
            "Runs whose estimated peak memory is above the budget are refused before anything is \
         allocated. Default: half of physical memory ({default_gb:.1} of {physical_gb:.1} GB)."
        ));
    if custom {
        let mut gb = state.memory_budget_gb.unwrap_or(default_gb);
        ui.horizontal(|ui| {
            ui.label("Memory budget");
            ui.add(
                egui::DragValue::new(&mut gb)
                    .range(0.1..=physical_gb.max(0.1))
                    .speed(0.1)
                    .suffix(" GB"),
            )
            .on_hover_text("Applies to the next run or parameter change");
        });
        state.memory_budget_gb = Some(gb);
    } else {
        state.memory_budget_gb = None;
        ui.weak(format!("Memory budget: {default_gb:.1} GB (default)"));
    }
}

pub fn show(
    ui: &mut egui::Ui,
    offers_noisy_image: bool,
    state: &mut State,
    continuous: &mut bool,
    help: &mut Help,
    commands: &mut Vec<UiCommand>,
) {
    egui::MenuBar::new().ui(ui, |ui| {
        ui.menu_button("File", |ui| {
            items(ui, &[UiCommand::OpenImageDialog], commands);
            if offers_noisy_image {
                items(ui, &[UiCommand::OpenNoisyImageDialog], commands);
            }
            open_recent(ui, state, commands);
            ui.separator();
            items(
                ui,
                &[UiCommand::OpenSessionDialog, UiCommand::SaveSessionDialog],
                commands,
            );
            ui.separator();
            ui.menu_button("Export", |ui| {
                items(
                    ui,
                    &[
                        UiCommand::ExportCurves,
                        UiCommand::ExportResults,
                        UiCommand::ExportScreenshot,
                    ],
                    commands,
                );
                ui.separator();
                ui.checkbox(&mut state.csv_without_header, "CSV without header row")
                    .on_hover_text("Write exported CSV files without their row of column names");
            });
            items(ui, &[UiCommand::CopyCommand], commands);
            ui.separator();
            if ui.button("Quit").clicked() {
                ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
            }
        });
        ui.menu_button("Run", |ui| {
            for c in [UiCommand::PlayPause, UiCommand::Step, UiCommand::Reset] {
                if c.menu_item(ui) {
                    commands.push(c);
                }
            }
            ui.separator();
            memory_budget(ui, state);
        });
        ui.menu_button("View", |ui| {
            for c in [
                UiCommand::ZoomIn,
                UiCommand::ZoomOut,
                UiCommand::ZoomFit,
                UiCommand::ClearSelection,
            ] {
                if c.menu_item(ui) {
                    commands.push(c);
                }
            }
            ui.separator();
            ui.checkbox(&mut state.show_controls, "Parameters panel");
            ui.checkbox(&mut state.show_inspector, "Curves and belief panel");
            ui.checkbox(&mut state.show_debugger, "Convergence debugger panel");
            ui.separator();
            ui.checkbox(continuous, "Repaint continuously")
                .on_hover_text("Paint frames as fast as possible, to measure the window's frame rate in the status bar");
        });
        help.menu(ui);
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            theme_switch(ui);
            ui.weak("Theme");
        });
    });
}
