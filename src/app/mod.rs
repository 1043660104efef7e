//! The explorer window (egui). `logic()` drains the runner's events, the file dialog and the
//! keyboard; `ui()` draws the panels. Widgets only record [`UiCommand`]s; they are applied at the
//! end of the frame. Parameter edits change the draft config in [`State`]; once an edit is
//! complete (no slider held, no number being typed) the draft is sent as `Command::Load`.
//!
//! Layout: menu bar (top), parameters and run controls (left), curves and belief (right),
//! status bar (bottom), the scenario's image panes (centre); error toasts float bottom-right.

pub mod colors;
pub mod commands;
pub mod debugger;
pub mod dialogs;
pub mod export;
pub mod file_browser;
pub mod file_dialog;
pub mod form;
pub mod frame_log;
pub mod frame_timer;
pub mod help;
pub mod long_run;
pub mod notices;
mod opening;
pub mod pane_export;
pub mod panels;
pub mod paper_figures;
pub mod recent;
pub mod reproduce;
pub mod scenarios;
pub mod session;
pub mod state;
pub mod textures;
pub mod views;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::Instant;

use eframe::egui;

use crate::run::time_need::TimeNeed;
use crate::runner::{Command, Event, HistoryLog, Runner, Snapshot};
use crate::scenarios::{Probe, ScenarioConfig, TaskResult};
use commands::UiCommand;
use file_dialog::{FileDialog, OpenWhat, Payload, Picked, Purpose, SaveRequest};
use frame_timer::FrameTimer;
use long_run::CONFIRM_ABOVE_SECONDS;
use notices::Notices;
use panels::status::{StatusInfo, TaskProgress};
use recent::RecentKind;
use scenarios::{InspectorHeights, OpenKind, Opened, RoomContext, Rooms};
use state::State;

/// Set (to anything) to start with continuous repainting on (View → Repaint continuously).
pub const CONTINUOUS_ENV: &str = "BELIEFSCOPE_CONTINUOUS_REPAINT";
/// Set to print the window's frame statistics to stderr once a second (`all`: also one line per
/// frame; see `app/frame_log.rs`).
pub const FRAME_LOG_ENV: &str = "BELIEFSCOPE_FRAME_LOG";

/// The window icon, drawn by `viz::app_icon` (see `examples/make_icon.rs`).
const ICON_PNG: &[u8] = include_bytes!("../../assets/icon.png");

/// Opens the window on the last scenario (the default denoise one the first time), already
/// iterating.
pub fn run_window() -> Result<(), String> {
    // The engine's threads yield to the window's (2-core machines: frames stay smooth).
    crate::runner::use_background_priority_for_engine_threads();
    let mut viewport = egui::ViewportBuilder::default()
        .with_title("beliefscope")
        .with_app_id("beliefscope")
        .with_inner_size([1360.0, 840.0])
        .with_min_inner_size([900.0, 600.0])
        .with_drag_and_drop(true);
    if let Some(icon) = window_icon() {
        viewport = viewport.with_icon(icon);
    }
    let options = eframe::NativeOptions {
        viewport,
        ..Default::default()
    };
    eframe::run_native(
        "beliefscope",
        options,
        Box::new(|cc| Ok(Box::new(App::new(cc)))),
    )
    .map_err(|e| e.to_string())
}

fn window_icon() -> Option<egui::IconData> {
    let image = image::load_from_memory(ICON_PNG).ok()?.to_rgba8();
    Some(egui::IconData {
        width: image.width(),
        height: image.height(),
        rgba: image.into_raw(),
    })
}

/// The default fonts, with Hack (bundled for monospace) also behind the proportional font: it
/// has the symbols the controls use (▶ ▮ ↺ ■) and the superscript minus of "10⁻³".
fn install_fonts(ctx: &egui::Context) {
    let mut fonts = egui::FontDefinitions::default();
    if let Some(family) = fonts.families.get_mut(&egui::FontFamily::Proportional)
        && !family.iter().any(|f| f == "Hack")
    {
        family.push("Hack".to_owned());
    }
    ctx.set_fonts(fonts);
}

pub struct App {
    /// Persisted between sessions.
    state: State,
    /// False for tests and embedded uses: never read or write the user's saved state.
    persist: bool,
    runner: Runner,
    /// The latest snapshot from the worker, its history completed by `history`.
    snapshot: Option<Arc<Snapshot>>,
    history: HistoryLog,
    /// The config last sent to the worker (what runs once the worker has caught up).
    applied: ScenarioConfig,
    /// The number of the last Load sent, until a snapshot answers it.
    pending_load: Option<u64>,
    /// The last Play or Pause asked for, until a snapshot answers it: the buttons follow the
    /// request, not a snapshot older than it.
    pending_play: Option<(u64, bool)>,
    /// Loaded instead if the first config (a remembered one) cannot be loaded.
    fallback: Option<ScenarioConfig>,
    busy: Option<String>,
    /// When the current `busy` began.
    busy_since: Option<Instant>,
    /// The estimated time of the last config sent.
    loading_need: Option<TimeNeed>,
    /// When the latest iteration arrived (the current one has run since).
    iteration_arrived: Option<(usize, Instant)>,
    /// A run estimated above a minute, waiting for the user's answer.
    confirm_run: Option<long_run::PendingRun>,
    /// A long job running on the worker.
    task: Option<TaskProgress>,
    /// What the last finished job produced (e.g. the auto-tune grid).
    last_task: Option<TaskResult>,
    /// What the user inspects; kept across rebuilds while it exists.
    selection: Option<Probe>,
    notices: Notices,
    dialog: FileDialog,
    /// Each scenario's room (its panels, views and caches).
    rooms: Rooms,
    frames: FrameTimer,
    /// Paint frames back to back (to measure the frame rate).
    continuous: bool,
    /// Frame statistics printed to stderr (only with [`FRAME_LOG_ENV`]).
    frame_log: Option<frame_log::FrameLog>,
    /// Recorded while drawing, applied at the end of the frame.
    commands: Vec<UiCommand>,
    /// Screenshots arrive here (taken by the integration after the frame is painted).
    screenshots: (
        Sender<Arc<egui::ColorImage>>,
        Receiver<Arc<egui::ColorImage>>,
    ),
    /// Where the screenshot asked for goes.
    screenshot_to: Option<PathBuf>,
    /// The last command line put on the clipboard (Copy as command).
    last_copied: Option<String>,
    /// The help windows.
    help: help::Help,
    /// Help > Paper figures.
    figures: paper_figures::PaperFigures,
    /// Right-click a pane to save it as PNG.
    panes: pane_export::PaneExport,
    /// The pane (and pixels per point) the next screenshot is cropped to.
    screenshot_crop: Option<(egui::Rect, f32)>,
    /// The convergence debugger panel.
    debugger: debugger::Debugger,
    /// Which dialogs are open, in the order they opened (Escape closes the last).
    dialogs: dialogs::OpenOrder,
}

impl App {
    /// The window's app: restores the last session's state (if any) and starts iterating.
    pub fn new(cc: &eframe::CreationContext<'_>) -> Self {
        let state: State = cc
            .storage
            .and_then(|s| eframe::get_value(s, eframe::APP_KEY))
            .unwrap_or_default();
        let fallback = (state.config != ScenarioConfig::default()).then(ScenarioConfig::default);
        Self::start(cc, state, true, true, fallback)
    }

    /// An app on `config`, running at once if `autoplay`, that never touches saved state (for
    /// tests and demos).
    pub fn with_config(
        cc: &eframe::CreationContext<'_>,
        config: ScenarioConfig,
        autoplay: bool,
    ) -> Self {
        let state = State {
            config,
            ..State::default()
        };
        let mut app = Self::start(cc, state, autoplay, false, None);
        // Never a system dialog in tests and demos: the in-window browser.
        app.dialog = FileDialog::in_window();
        app
    }

    fn start(
        cc: &eframe::CreationContext<'_>,
        state: State,
        autoplay: bool,
        persist: bool,
        fallback: Option<ScenarioConfig>,
    ) -> Self {
        crate::run::allocator::keep_freed_memory();
        install_fonts(&cc.egui_ctx);
        let ctx = cc.egui_ctx.clone();
        let runner = Runner::spawn(None, Arc::new(move || ctx.request_repaint()));
        let load = runner.send(Command::Load(state.config.clone()));
        let loading_need = state.config.time_need();
        let play = autoplay.then(|| (runner.send(Command::Play), true));
        App {
            applied: state.config.clone(),
            pending_load: Some(load),
            pending_play: play,
            state,
            persist,
            runner,
            snapshot: None,
            history: HistoryLog::default(),
            fallback,
            busy: None,
            busy_since: None,
            loading_need,
            iteration_arrived: None,
            confirm_run: None,
            task: None,
            last_task: None,
            selection: None,
            notices: Notices::default(),
            dialog: FileDialog::default(),
            rooms: Rooms::default(),
            frames: FrameTimer::default(),
            // Diagnostics for measuring the window (e.g. under Xvfb in CI): repaint back to back
            // and print the frame statistics to stderr.
            continuous: std::env::var_os(CONTINUOUS_ENV).is_some(),
            frame_log: std::env::var(FRAME_LOG_ENV).ok().map(|v| {
                frame_log::FrameLog::new(
                    frame_log::FrameLogMode::from_env_value(&v),
                    Instant::now(),
                )
            }),
            commands: Vec::new(),
            screenshots: channel(),
            screenshot_to: None,
            last_copied: None,
            help: help::Help::default(),
            figures: paper_figures::PaperFigures::default(),
            panes: pane_export::PaneExport::default(),
            screenshot_crop: None,
            debugger: debugger::Debugger::default(),
            dialogs: dialogs::OpenOrder::default(),
        }
    }

    /// Uses `path` as the scenario's image (what a dropped file or the Open dialog does).
    pub fn open_image(&mut self, path: std::path::PathBuf) {
        self.commands.push(UiCommand::OpenImage(path));
    }

    /// Inspects `probe` (a node or a message), as a click on it does.
    /// Edits the parameters as the panels do (applied once no edit is in progress).
    pub fn edit_config(&mut self, config: ScenarioConfig) {
        self.state.config = config;
    }

    /// The parameters as edited (what the panels show).
    pub fn edited_config(&self) -> &ScenarioConfig {
        &self.state.config
    }

    /// Whether a long run waits for the user's answer.
    pub fn asks_to_confirm(&self) -> bool {
        self.confirm_run.is_some()
    }

    pub fn select(&mut self, probe: Probe) {
        self.commands.push(UiCommand::Select(probe));
    }

    /// Restores the session in `path` (what File > Open Session does once a file is picked).
    pub fn open_session_file(&mut self, path: PathBuf) {
        self.commands.push(UiCommand::OpenImage(path));
    }

    /// Opens the help windows asked for (as Help menu clicks do).
    pub fn show_help(&mut self, explain: bool, shortcuts: bool, about: bool) {
        self.help.explain |= explain;
        self.help.shortcuts |= shortcuts;
        self.help.about |= about;
    }

    /// Tests only: makes the engine panic at the next set-up or at an iteration, to check that
    /// the window keeps what it has and can start a new run.
    pub fn inject_fault(&mut self, fault: crate::runner::Fault) {
        self.runner.send(Command::InjectFault(fault));
    }

    /// The node or message being inspected.
    pub fn selection(&self) -> Option<Probe> {
        self.selection
    }

    /// The Paper figures window (Help > Paper figures).
    pub fn paper_figures(&mut self) -> &mut paper_figures::PaperFigures {
        &mut self.figures
    }

    /// Opens the "Save this pane as PNG" menu for the pane under `pos`, as a right-click
    /// there does; the pane's rectangle, if there is one.
    pub fn right_click_pane(&mut self, ctx: &egui::Context, pos: egui::Pos2) -> Option<egui::Rect> {
        self.panes.open_at(ctx, pos);
        self.panes.offered()
    }

    /// Asks where to save the pane `rect` as PNG (a screenshot cropped to it).
    fn save_pane(&mut self, ctx: &egui::Context, rect: egui::Rect) {
        self.screenshot_crop = Some((rect, ctx.pixels_per_point()));
        self.ask_to_save(
            ctx,
            SaveRequest {
                title: "Save the pane as PNG".into(),
                file_name: format!("{}-pane.png", self.applied.name()),
                filter: ("PNG images", vec!["png"]),
                payload: Payload::Screenshot,
            },
        );
    }

    /// Asks for a file to open, as File > Open does.
    pub fn ask_to_open(&mut self) {
        self.commands.push(UiCommand::OpenImageDialog);
    }

    /// What the window remembers (for tests: recent files, every scenario's settings).
    pub fn state(&self) -> &State {
        &self.state
    }

    /// The last command line put on the clipboard by Copy as command.
    pub fn last_copied_command(&self) -> Option<&str> {
        self.last_copied.as_deref()
    }

    /// Whether a file dialog (system or in-window) is open.
    pub fn file_dialog_open(&self) -> bool {
        self.dialog.is_open()
    }

    /// The messages currently shown.
    pub fn notices(&self) -> Vec<String> {
        self.notices
            .items()
            .iter()
            .map(|n| n.text.clone())
            .collect()
    }

    /// The latest snapshot from the worker.
    /// The convergence debugger panel's state.
    pub fn debugger(&self) -> &debugger::Debugger {
        &self.debugger
    }

    pub fn snapshot(&self) -> Option<&Snapshot> {
        self.snapshot.as_deref()
    }

    fn on_event(&mut self, event: Event) {
        match event {
            Event::Snapshot(s) => {
                self.busy = None;
                // Drop the previous snapshot first, so the history grows in place.
                self.snapshot = None;
                let s = self.history.absorb(*s);
                if self.iteration_arrived.is_none_or(|(i, _)| i != s.iteration) {
                    self.iteration_arrived = Some((s.iteration, Instant::now()));
                }
                if self.pending_play.is_some_and(|(n, _)| s.answered >= n) {
                    self.pending_play = None;
                }
                if let Some(load) = self.pending_load
                    && s.answered >= load
                {
                    // The load is dealt with: it runs, or it failed and the old scenario runs.
                    self.pending_load = None;
                    self.fallback = None;
                    let edited_since = self.state.config != self.applied;
                    if !edited_since || s.config != self.applied {
                        // Show what runs (the config as built, or the old one after a failure),
                        // unless the user has edited further since the load was sent.
                        self.state.config = s.config.clone();
                    }
                    self.applied = s.config.clone();
                } else if self.pending_load.is_none() && s.config != self.applied {
                    // A live control changed the running config (the tree's evidence): the
                    // parameters show what runs.
                    self.applied = s.config.clone();
                    self.state.config = s.config.clone();
                }
                if let Some(sel) = self.selection
                    && self.pending_load.is_none()
                    && !self.rooms.get(s.config.name()).selection_is_valid(&s, sel)
                {
                    // Gone with the old image or tree.
                    self.selection = None;
                }
                self.snapshot = Some(Arc::new(s));
            }
            Event::Error(message) => {
                self.busy = None;
                // A failed job or set-up is also answered by the snapshot that follows it.
                self.task = None;
                self.notices.error(message);
                if self.snapshot.is_none()
                    && let Some(config) = self.fallback.take()
                {
                    self.notices.error(
                        "the remembered scenario could not be loaded; starting the default one",
                    );
                    self.state.config = config.clone();
                    self.apply(config, true);
                }
            }
            Event::Busy(message) => {
                self.busy = Some(message);
                self.busy_since = Some(Instant::now());
            }
            Event::Cancelled(message) => {
                self.busy = None;
                self.task = None;
                self.notices.info(message);
            }
            Event::TaskProgress { label, done, total } => {
                self.task = Some(TaskProgress { label, done, total });
            }
            Event::WhatIf(run) => {
                self.busy = None;
                self.debugger.add_what_if(run);
            }
            Event::TaskDone(result) => {
                self.task = None;
                for room in self.rooms.all_mut() {
                    room.task_done(&result);
                }
                self.last_task = Some(result);
            }
        }
    }

    /// Sends `config` to the worker as a rebuild. A run that was playing or had finished plays
    /// the new one (`play`), a paused run stays paused at iteration 0.
    fn apply(&mut self, config: ScenarioConfig, play: bool) {
        if let Some(need) = config
            .time_need()
            .filter(|n| n.total() > CONFIRM_ABOVE_SECONDS)
        {
            // Asked first, with the estimate; the edited parameters stay until answered.
            self.confirm_run = Some(long_run::PendingRun { config, play, need });
            return;
        }
        self.confirm_run = None;
        self.send_load(config, play);
    }

    /// Sends `config` as a rebuild (see [`Self::apply`]), with no question asked.
    fn send_load(&mut self, config: ScenarioConfig, play: bool) {
        self.loading_need = config.time_need();
        self.pending_load = Some(self.runner.send(Command::Load(config.clone())));
        if play {
            self.pending_play = Some((self.runner.send(Command::Play), true));
        }
        self.applied = config;
    }

    fn should_play_after_load(&self) -> bool {
        self.pending_play.map_or_else(
            || {
                self.snapshot
                    .as_ref()
                    .is_some_and(|s| s.playing || s.finished)
            },
            |(_, play)| play,
        )
    }

    /// Playing as far as the user can tell: the last request, else the last snapshot.
    fn playing(&self) -> bool {
        self.pending_play.map_or_else(
            || self.snapshot.as_ref().is_some_and(|s| s.playing),
            |(_, play)| play,
        )
    }

    /// Writes a screenshot that has arrived to the path chosen for it.
    fn save_screenshots(&mut self) {
        while let Ok(image) = self.screenshots.1.try_recv() {
            let Some(path) = self.screenshot_to.take() else {
                continue;
            };
            let image = match self.screenshot_crop.take() {
                Some((rect, ppp)) => Arc::new(pane_export::crop(&image, rect, ppp)),
                None => image,
            };
            match export::save_color_image(&path, &image) {
                Ok(()) => self.notices.info(format!("saved {}", path.display())),
                Err(e) => self.notices.error(e.to_string()),
            }
        }
    }

    fn run_command(&mut self, ctx: &egui::Context, command: UiCommand) {
        match command {
            UiCommand::PlayPause => {
                let playing = self.playing();
                let n = self.runner.send(if playing {
                    Command::Pause
                } else {
                    Command::Play
                });
                self.pending_play = Some((n, !playing));
            }
            UiCommand::Step => {
                self.pending_play = Some((self.runner.send(Command::Step), false));
            }
            UiCommand::Reset => {
                self.runner.send(Command::Reset);
            }
            UiCommand::OpenImageDialog => {
                let (what, kinds) = match self.rooms.get(self.state.config.name()).open_kind() {
                    OpenKind::Data => (OpenWhat::Data, [RecentKind::Datasets, RecentKind::Models]),
                    OpenKind::Image => (
                        OpenWhat::Image,
                        [RecentKind::Images, RecentKind::FlowFields],
                    ),
                };
                let start = self.dialog_start(&kinds);
                self.dialog.ask(ctx, Purpose::Open(what), start);
            }
            UiCommand::OpenNoisyImageDialog => {
                let start = self.dialog_start(&[RecentKind::Images]);
                self.dialog
                    .ask(ctx, Purpose::Open(OpenWhat::NoisyImage), start);
            }
            UiCommand::OpenSessionDialog => {
                let start = self.dialog_start(&[RecentKind::Sessions]);
                self.dialog
                    .ask(ctx, Purpose::Open(OpenWhat::Session), start);
            }
            UiCommand::SaveSessionDialog => {
                let text = session::session_json(&self.state, &self.applied);
                self.ask_to_save(
                    ctx,
                    SaveRequest {
                        title: "Save session".into(),
                        file_name: "session.json".into(),
                        filter: ("beliefscope sessions", vec!["json"]),
                        payload: Payload::Bytes(Arc::new(text.into_bytes())),
                    },
                );
            }
            UiCommand::ClearRecent => self.state.recent.clear(),
            UiCommand::CopyCommand => {
                let line = reproduce::reproducing_command(&self.applied, "results");
                ctx.copy_text(line.clone());
                self.notices
                    .info("copied the command that reproduces these settings");
                self.last_copied = Some(line);
            }
            UiCommand::ExportCurves => {
                let history = self.snapshot.as_ref().map(|s| s.history.clone());
                let Some(history) = history.filter(|h| !h.is_empty()) else {
                    self.notices.error("no iterations to export yet");
                    return;
                };
                let mut csv = crate::io::results::curves_csv(&history);
                if self.state.csv_without_header {
                    csv = export::without_header(&csv);
                }
                self.ask_to_save(
                    ctx,
                    SaveRequest {
                        title: "Save the curves as CSV".into(),
                        file_name: format!("{}-curves.csv", self.applied.name()),
                        filter: ("CSV", vec!["csv"]),
                        payload: Payload::Bytes(Arc::new(csv.into_bytes())),
                    },
                );
            }
            UiCommand::ExportResults => {
                let Some(snapshot) = self.snapshot.clone() else {
                    self.notices.error("nothing has run yet");
                    return;
                };
                let json = export::window_results_json(&snapshot);
                self.ask_to_save(
                    ctx,
                    SaveRequest {
                        title: "Save the run as results.json".into(),
                        file_name: "results.json".into(),
                        filter: ("JSON", vec!["json"]),
                        payload: Payload::Bytes(Arc::new(json.into_bytes())),
                    },
                );
            }
            UiCommand::ExportScreenshot => {
                self.screenshot_crop = None;
                self.ask_to_save(
                    ctx,
                    SaveRequest {
                        title: "Save a screenshot of the window".into(),
                        file_name: "beliefscope.png".into(),
                        filter: ("PNG images", vec!["png"]),
                        payload: Payload::Screenshot,
                    },
                )
            }
            UiCommand::ZoomIn => self.state.zoom.scale(1.25),
            UiCommand::ZoomOut => self.state.zoom.scale(0.8),
            UiCommand::ZoomFit => self.state.zoom.fit = true,
            UiCommand::ClearSelection => {
                self.selection = None;
                self.runner.send(Command::Probe(None));
            }
            UiCommand::Apply(config) => {
                self.state.config = config.clone();
                let play = self.should_play_after_load();
                self.apply(config, play);
            }
            UiCommand::OpenImage(path) => self.open_paths(&[path]),
            UiCommand::Control(c) => {
                self.runner.send(Command::Control(c));
            }
            UiCommand::SaveTree(text) => self.ask_to_save(
                ctx,
                SaveRequest {
                    title: "Save the tree as an edge list".into(),
                    file_name: "tree.edges".into(),
                    filter: ("Edge lists", vec!["edges"]),
                    payload: Payload::Bytes(Arc::new(text.into_bytes())),
                },
            ),
            UiCommand::Select(probe) => {
                self.selection = Some(probe);
                self.runner.send(Command::Probe(Some(probe)));
            }
            UiCommand::DismissNotice(id) => self.notices.dismiss(id),
            UiCommand::RunTask(task) => {
                if self.task.is_none() {
                    self.task = Some(TaskProgress {
                        label: task.label(),
                        done: 0,
                        total: 1,
                    });
                    self.pending_play = Some((self.runner.send(Command::RunTask(task)), false));
                }
            }
            UiCommand::CancelTask => {
                self.runner.send(Command::Cancel);
            }
        }
    }

    /// Applies the edited parameters once no edit is in progress: no slider or number held by
    /// the pointer, no number being typed (applied on Enter or when the field loses focus).
    fn apply_finished_edits(&mut self, ctx: &egui::Context) {
        let awaiting_answer = self
            .confirm_run
            .as_ref()
            .is_some_and(|p| p.config == self.state.config);
        if self.state.config != self.applied
            && !awaiting_answer
            && !ctx.egui_is_using_pointer()
            && !ctx.text_edit_focused()
        {
            if self.state.config.name() != self.applied.name() {
                // Messages about the old scenario stay behind.
                self.notices.clear_info();
            }
            let play = self.should_play_after_load();
            self.apply(self.state.config.clone(), play);
        }
    }

    /// Frame statistics on stderr, when asked for with [`FRAME_LOG_ENV`].
    fn log_frame_stats(&mut self, now: Instant) {
        let Some(log) = &mut self.frame_log else {
            return;
        };
        let (iteration, playing) = self
            .snapshot
            .as_ref()
            .map_or((0, false), |s| (s.iteration, s.playing));
        let context = format!("engine_playing={playing} iteration={iteration}");
        for line in log.tick(now, frame_log::thread_cpu_seconds(), &context) {
            eprintln!("{line}");
        }
    }

    /// Records which dialogs are open (after the menus and windows have drawn).
    fn sync_dialogs(&mut self) {
        use dialogs::Dialog;
        self.dialogs.sync(&[
            (Dialog::Shortcuts, self.help.shortcuts),
            (Dialog::About, self.help.about),
            (Dialog::Explain, self.help.explain),
            (Dialog::PaperFigures, self.figures.open),
            (
                Dialog::Room,
                self.rooms.get(self.state.config.name()).dialog_open(),
            ),
        ]);
    }

    /// Closes the dialog on top (Escape): the file browser first, else the window opened last.
    /// False when none is open.
    fn close_top_dialog(&mut self) -> bool {
        use dialogs::Dialog;
        if self.dialog.cancel_browser() {
            return true;
        }
        self.sync_dialogs();
        match self.dialogs.top() {
            Some(Dialog::Shortcuts) => self.help.shortcuts = false,
            Some(Dialog::About) => self.help.about = false,
            Some(Dialog::Explain) => self.help.explain = false,
            Some(Dialog::PaperFigures) => self.figures.open = false,
            Some(Dialog::Room) => self.rooms.get(self.state.config.name()).close_dialog(),
            None => return false,
        }
        self.sync_dialogs();
        true
    }

    fn drop_overlay(&mut self, ctx: &egui::Context) {
        let hovering = ctx.input(|i| !i.raw.hovered_files.is_empty());
        if !hovering {
            return;
        }
        let painter = ctx.layer_painter(egui::LayerId::new(
            egui::Order::Foreground,
            egui::Id::unique("drop_overlay"),
        ));
        let rect = ctx.content_rect();
        painter.rect_filled(rect, 0.0, egui::Color32::from_black_alpha(170));
        painter.text(
            rect.center(),
            egui::Align2::CENTER_CENTER,
            self.rooms.get(self.state.config.name()).drop_hint(),
            egui::FontId::proportional(24.0),
            egui::Color32::WHITE,
        );
    }
}

/// Three plots share the inspector's height; the belief plot gets a little more and a line of
/// text.
fn inspector_heights(ui: &egui::Ui) -> InspectorHeights {
    let spacing = ui.spacing().item_spacing.y;
    let caption = ui.text_style_height(&egui::TextStyle::Body) + spacing;
    let free = (ui.available_height() - 4.0 * caption - 24.0).max(300.0);
    let curve = (free * 0.3).max(100.0);
    let belief = (free - 2.0 * curve - 12.0).max(120.0);
    InspectorHeights {
        curve,
        belief,
        free,
    }
}

impl eframe::App for App {
    fn logic(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        // The worker checks every load against the process's budget (Run menu).
        crate::run::budget::set_budget(self.state.memory_budget_bytes());
        for event in self.runner.drain() {
            self.on_event(event);
        }
        self.save_screenshots();
        if let Some(wait) = self.notices.expire(Instant::now()) {
            ctx.request_repaint_after(wait);
        }
        let dropped: Vec<std::path::PathBuf> = ctx.input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .collect()
        });
        if !dropped.is_empty() {
            // Files dropped together are opened together (e.g. two frames and a .flo).
            self.open_paths(&dropped);
        }
        if ctx.input(|i| i.key_pressed(egui::Key::Escape)) && self.close_top_dialog() {
            // Escape went to the dialog, not to the selection.
            ctx.input_mut(|i| i.consume_key(egui::Modifiers::NONE, egui::Key::Escape));
        }
        self.commands.extend(commands::pressed_shortcuts(ctx));
    }

    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
        let ctx = ui.ctx().clone();
        let started = Instant::now();
        self.frames.tick(started, frame.info().cpu_usage);
        self.log_frame_stats(started);
        let snapshot = self.snapshot.clone();

        let playing = self.playing();
        self.panes.detect(&ctx);
        egui::Panel::top("menu").show(ui, |ui| {
            let offers_noisy = self
                .rooms
                .get(self.state.config.name())
                .opens_noisy_images();
            panels::menu::show(
                ui,
                offers_noisy,
                &mut self.state,
                &mut self.continuous,
                &mut self.help,
                &mut self.commands,
            );
        });
        if let Some(pending) = &self.confirm_run
            && let Some(answer) = long_run::ask(&ctx, pending)
        {
            let pending = self.confirm_run.take().expect("a pending run");
            match answer {
                long_run::Answer::Run => self.send_load(pending.config, pending.play),
                // The parameters show what runs again.
                long_run::Answer::Keep => self.state.config = self.applied.clone(),
            }
        }
        let running_room = snapshot.as_ref().map(|s| s.config.name());
        egui::Panel::bottom("status").show(ui, |ui| {
            let extras = match (&snapshot, running_room) {
                (Some(s), Some(name)) => self.rooms.get(name).status(s),
                _ => Vec::new(),
            };
            let iteration_noun =
                running_room.map_or("iteration", |name| self.rooms.get(name).iteration_noun());
            let time_left = match (&self.busy, &snapshot) {
                // Only a set-up has an estimate (a what-if or a job is busy too).
                (Some(_), _) if self.pending_load.is_some() => {
                    long_run::setup_left(self.loading_need, self.busy_since)
                }
                (Some(_), _) => None,
                (None, Some(s)) if s.playing => long_run::run_left(
                    self.loading_need.filter(|_| s.config == self.applied),
                    panels::status::median_seconds(&s.history),
                    s.iteration,
                    s.config.max_iters(),
                    self.iteration_arrived.map(|(_, t)| t),
                ),
                _ => None,
            };
            if time_left.is_some() {
                // The time left counts down between snapshots.
                ui.ctx()
                    .request_repaint_after(std::time::Duration::from_secs(1));
            }
            let info = StatusInfo {
                snapshot: snapshot.as_deref(),
                busy: self.busy.as_deref(),
                time_left,
                task: self.task,
                max_iters: snapshot.as_ref().and_then(|s| s.config.max_iters()),
                iteration_noun,
                extras,
                frame: self.frames.stats(Instant::now()),
                continuous: self.continuous,
            };
            panels::status::show(ui, &info, &mut self.commands);
        });
        let task_running = self.task.is_some();
        // What the shared panels lend the room that draws (disjoint fields of `self`).
        macro_rules! room_context {
            ($snapshot:expr, $heights:expr) => {
                RoomContext {
                    snapshot: $snapshot,
                    state: &mut self.state,
                    selection: self.selection,
                    task_running,
                    task: self.task,
                    last_task: self.last_task.as_ref(),
                    commands: &mut self.commands,
                    heights: $heights,
                }
            };
        }
        if self.state.show_controls {
            // The room of the config being edited (it may differ from the running one until
            // a new choice has loaded).
            let mut config = std::mem::take(&mut self.state.config);
            let room = self.rooms.get(config.name());
            let mut cx = room_context!(snapshot.as_deref(), InspectorHeights::default());
            egui::Panel::left("controls")
                .resizable(true)
                .default_size(300.0)
                .size_range(240.0..=480.0)
                .show(ui, |ui| {
                    panels::controls::show(ui, &mut config, room, playing, &mut cx);
                });
            self.state.config = config;
        }
        if self.state.show_inspector {
            egui::Panel::right("inspector")
                .resizable(true)
                .default_size(420.0)
                .size_range(280.0..=800.0)
                .show(ui, |ui| match &snapshot {
                    Some(s) => {
                        let heights = inspector_heights(ui);
                        let mut cx = room_context!(Some(s), heights);
                        self.rooms.get(s.config.name()).inspector(ui, s, &mut cx);
                    }
                    None => {
                        ui.spinner();
                    }
                });
        }
        if let Some(s) = snapshot
            .as_ref()
            .filter(|s| s.convergence.is_some() && self.state.show_debugger)
        {
            let (id, height) = debugger::panel_default(s.convergence.as_ref());
            egui::Panel::bottom(id)
                .resizable(true)
                .default_size(height)
                .show(ui, |ui| self.debugger.show(ui, s, &mut self.commands));
            for action in self.debugger.take_actions() {
                let command = match action {
                    debugger::DebuggerAction::SetSchedule { schedule, damping } => {
                        Command::SetSchedule { schedule, damping }
                    }
                    debugger::DebuggerAction::WhatIf(request) => Command::WhatIf(request),
                };
                self.runner.send(command);
            }
        }
        egui::CentralPanel::default().show(ui, |ui| match &snapshot {
            Some(s) => {
                let mut cx = room_context!(Some(s), InspectorHeights::default());
                self.rooms.get(s.config.name()).central(ui, s, &mut cx);
            }
            None => {
                ui.centered_and_justified(|ui| {
                    ui.spinner();
                });
            }
        });
        let name = self.applied.name();
        let explanation = self.rooms.get(name).explanation();
        self.help.show(&ctx, (name, explanation));
        self.figures.open |= std::mem::take(&mut self.help.figures);
        self.figures.show(&ctx);
        self.sync_dialogs();
        if let Some(rect) = self.panes.show(&ctx) {
            self.save_pane(&ctx, rect);
        }
        if let Some((purpose, picked)) = self.dialog.update(&ctx) {
            self.on_picked(&ctx, purpose, picked);
        }
        self.notices.show(&ctx, &mut self.commands);
        self.drop_overlay(&ctx);

        for command in std::mem::take(&mut self.commands) {
            self.run_command(&ctx, command);
        }
        self.apply_finished_edits(&ctx);
        if self.continuous {
            ctx.request_repaint();
        }
        if frame.info().cpu_usage.is_none() {
            // Where eframe does not measure (tests), the UI pass alone.
            self.frames.ui_pass(started.elapsed().as_secs_f32());
        }
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        if self.persist {
            let mut state = self.state.clone();
            state.config = self.applied.clone();
            eframe::set_value(storage, eframe::APP_KEY, &state);
        }
    }

    fn persist_egui_memory(&self) -> bool {
        self.persist
    }
}
