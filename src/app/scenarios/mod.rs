//! One room per scenario: everything the window knows about a scenario (its parameter panel,
//! central view, inspector, status numbers, which files it opens) is one [`ScenarioUi`]
//! implementation in `src/app/scenarios/<name>/`, listed once in [`rooms`]. A registered
//! scenario without a room of its own gets [`GenericRoom`]: a form from its parameter table and
//! a chosen metric as a curve. The app never matches on scenario names.

pub mod denoise;
mod explanations;
pub mod flow;
pub mod kjit;
pub mod pbp;
pub mod retrieval;
pub mod sosmp;
pub mod teach;
pub mod tree;

use std::path::{Path, PathBuf};

use eframe::egui;

use super::commands::UiCommand;
use super::form;
use super::state::State;
use super::views::curves;
use crate::runner::Snapshot;
use crate::scenarios::{Probe, ScenarioConfig, TaskResult};

/// The app's rooms, one per scenario that has its own UI (the UI registry line).
pub fn rooms() -> Vec<Box<dyn ScenarioUi>> {
    vec![
        Box::new(denoise::DenoiseRoom::default()),
        Box::new(tree::TreeRoom::default()),
        Box::new(retrieval::RetrievalRoom::default()),
        Box::new(sosmp::SosmpRoom::default()),
        Box::new(flow::FlowRoom::default()),
        Box::new(kjit::KjitRoom::default()),
        Box::new(pbp::PbpRoom::default()),
        Box::new(teach::TeachRoom::default()),
    ]
}

/// What the shared panels lend a room while it draws.
pub struct RoomContext<'a> {
    /// The latest snapshot (None before the first one arrives).
    pub snapshot: Option<&'a Snapshot>,
    /// Zoom, error scale, inspector tab: what the window remembers.
    pub state: &'a mut State,
    /// The inspected node or message.
    pub selection: Option<Probe>,
    /// A long job is running on the worker (no second one can start).
    pub task_running: bool,
    /// That job's label and progress.
    pub task: Option<crate::app::panels::status::TaskProgress>,
    /// What the last finished job produced.
    pub last_task: Option<&'a TaskResult>,
    /// Commands recorded while drawing, applied at the end of the frame.
    pub commands: &'a mut Vec<UiCommand>,
    /// How the inspector shares its height between plots (zero outside the inspector).
    pub heights: InspectorHeights,
}

/// Heights the inspector shares out between its plots.
#[derive(Debug, Clone, Copy, Default)]
pub struct InspectorHeights {
    /// Each convergence curve.
    pub curve: f32,
    /// The belief plot.
    pub belief: f32,
    /// Everything available.
    pub free: f32,
}

/// What the Open dialog asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenKind {
    Image,
    Data,
}

/// What opening files does to the scenario's config.
#[derive(Debug, Clone, PartialEq)]
pub enum Opened {
    /// Run this config.
    Apply(Box<ScenarioConfig>),
    /// Kept for later (e.g. frame 1 waiting for frame 2); the text says what to do next.
    Waiting(String),
    /// The files do not fit this scenario; the text says why.
    Refused(String),
    /// Taken by the room to show (a result file, such as a sweep's curve); the text says what.
    Shown(String),
}

/// A scenario's room in the window.
pub trait ScenarioUi {
    /// The registry name of the scenario it draws.
    fn name(&self) -> &'static str;
    /// The parameter panel under the scenario selector; edits go into `config`.
    fn params(&mut self, ui: &mut egui::Ui, config: &mut ScenarioConfig, cx: &mut RoomContext<'_>);
    /// The central area.
    fn central(&mut self, ui: &mut egui::Ui, snapshot: &Snapshot, cx: &mut RoomContext<'_>);
    /// The right-hand inspector: curves and the selected node or message (`cx.heights`).
    fn inspector(&mut self, ui: &mut egui::Ui, snapshot: &Snapshot, cx: &mut RoomContext<'_>);
    /// What one iteration is called in the status bar ("message" in teaching mode).
    fn iteration_noun(&self) -> &'static str {
        "iteration"
    }
    /// Numbers for the status bar.
    fn status(&self, snapshot: &Snapshot) -> Vec<String> {
        let _ = snapshot;
        Vec::new()
    }
    /// Whether `selection` names something in this snapshot.
    fn selection_is_valid(&self, snapshot: &Snapshot, selection: Probe) -> bool {
        let _ = (snapshot, selection);
        false
    }
    /// What the Open dialog asks for.
    fn open_kind(&self) -> OpenKind {
        OpenKind::Image
    }
    /// Opening (or dropping) `paths` on this scenario.
    fn open_paths(&mut self, config: &ScenarioConfig, paths: &[PathBuf]) -> Opened {
        let _ = (config, paths);
        Opened::Refused(format!("the {} scenario opens no files", self.name()))
    }
    /// Whether the room opens an already noisy image (File > Open noisy image…).
    fn opens_noisy_images(&self) -> bool {
        false
    }
    /// Opening `path` as an image that already is the noisy observation.
    fn open_noisy_image(&mut self, config: &ScenarioConfig, path: &Path) -> Opened {
        let _ = (config, path);
        Opened::Refused(format!(
            "the {} scenario opens no noisy images",
            self.name()
        ))
    }
    /// The text shown while files are dragged over the window.
    fn drop_hint(&self) -> &'static str {
        "This scenario opens no files"
    }
    /// Whether the room has a window of its own open (Escape closes it like the app's dialogs).
    fn dialog_open(&self) -> bool {
        false
    }
    /// Closes the room's own window (Escape).
    fn close_dialog(&mut self) {}
    /// "What am I looking at?": the model, the update (with the paper's equation) and what each
    /// plot shows; paragraphs separated by blank lines.
    fn explanation(&self) -> &'static str {
        "This scenario has no room of its own: its parameters are a form built from its \
         parameter table, and the plot shows one per-iteration metric at a time (choose it above \
         the plot). The residual curve on the right is the size of the last update.\n\n\
         beliefscope list prints every scenario with its algorithms."
    }
    /// A job of this scenario finished on the worker.
    fn task_done(&mut self, result: &TaskResult) {
        let _ = result;
    }
}

/// The rooms of the app, with a generic room for scenarios that have none.
pub struct Rooms {
    rooms: Vec<Box<dyn ScenarioUi>>,
    generic: GenericRoom,
}

impl Default for Rooms {
    fn default() -> Self {
        Rooms {
            rooms: rooms(),
            generic: GenericRoom::default(),
        }
    }
}

impl Rooms {
    /// The room of the scenario named `name`.
    pub fn get(&mut self, name: &str) -> &mut dyn ScenarioUi {
        match self.rooms.iter_mut().find(|r| r.name() == name) {
            Some(room) => room.as_mut(),
            None => &mut self.generic,
        }
    }

    /// Every room, for events that concern whichever room they belong to.
    pub fn all_mut(&mut self) -> impl Iterator<Item = &mut Box<dyn ScenarioUi>> {
        self.rooms.iter_mut()
    }
}

/// The room of a registered scenario without a UI of its own: its parameter table as a form,
/// one metric at a time as a curve (metrics of different scales do not share an axis).
#[derive(Default)]
pub struct GenericRoom {
    /// The metric on the plot; `None`: the first one.
    metric: Option<String>,
}

impl ScenarioUi for GenericRoom {
    fn name(&self) -> &'static str {
        "generic"
    }

    fn params(&mut self, ui: &mut egui::Ui, config: &mut ScenarioConfig, _: &mut RoomContext<'_>) {
        form::section(ui, "Parameters");
        let table = config.params();
        let mut json = serde_json::to_value(&*config).unwrap_or_default();
        let before = json.clone();
        form::param_grid(ui, "generic_params", &mut json, table);
        if json != before
            && let Ok(edited) = serde_json::from_value::<ScenarioConfig>(json)
        {
            *config = edited;
        }
    }

    fn central(&mut self, ui: &mut egui::Ui, snapshot: &Snapshot, _: &mut RoomContext<'_>) {
        let names: Vec<String> = snapshot
            .history
            .first()
            .map(|r| r.metrics.keys().cloned().collect())
            .unwrap_or_default();
        let shown = (self.metric.clone())
            .filter(|m| names.contains(m))
            .or_else(|| names.first().cloned());
        ui.horizontal(|ui| {
            let id = form::row_label(ui, "Metric", "The per-iteration metric on the plot");
            egui::ComboBox::from_id_salt("generic_metric")
                .selected_text(shown.as_deref().unwrap_or("none yet"))
                .show_ui(ui, |ui| {
                    for name in &names {
                        let chosen = shown.as_deref() == Some(name);
                        if ui.selectable_label(chosen, name).clicked() {
                            self.metric = Some(name.clone());
                        }
                    }
                })
                .response
                .labelled_by(id);
        });
        let series: Vec<curves::Series> =
            shown.iter().map(|m| curves::Series::metric(m, m)).collect();
        let h = ui.available_height() - 8.0;
        let (history, max) = (&snapshot.history, snapshot.config.max_iters());
        let quantity = curves::quantity_of(&series);
        curves::metrics_plot(
            ui,
            "generic_curves",
            &quantity,
            history,
            &series,
            &[],
            max,
            h,
        );
    }

    fn inspector(&mut self, ui: &mut egui::Ui, snapshot: &Snapshot, cx: &mut RoomContext<'_>) {
        ui.label(format!(
            "{}: iteration {}",
            snapshot.config.name(),
            snapshot.iteration
        ));
        curves::residual_plot(
            ui,
            "generic_residual",
            &snapshot.history,
            &[curves::Series::residual("residual")],
            None,
            snapshot.config.max_iters(),
            cx.heights.curve,
        );
    }
}
