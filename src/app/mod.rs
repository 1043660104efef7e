//! The explorer window (egui). `logic()` drains the runner's events, the file dialog and the
//! keyboard; `ui()` draws the panels. Widgets only record [`UiCommand`]s; they are applied at the
//! end of the frame. Parameter edits change the draft config in [`State`]; once an edit is
//! complete (no slider held, no number being typed) the draft is sent as `Command::Load`.
//!
//! Layout: menu bar (top), parameters and run controls (left), curves and belief (right),
//! status bar (bottom), the scenario's image panes (centre); error toasts float bottom-right.

pub mod commands;
pub mod file_dialog;
pub mod frame_timer;
pub mod notices;
pub mod panels;
pub mod state;
pub mod textures;
pub mod views;

use std::sync::Arc;
use std::time::Instant;

use eframe::egui;

use crate::runner::{Command, Event, Runner, Snapshot};
use crate::scenarios::tasks::TaskResult;
use crate::scenarios::{Probe, ScenarioConfig};
use commands::UiCommand;
use file_dialog::{FileDialog, Picked, Purpose};
use frame_timer::FrameTimer;
use notices::Notices;
use panels::controls::TaskInfo;
use panels::flow_params::FlowOpen;
use panels::status::{StatusInfo, TaskProgress};
use state::State;

/// Set (to anything) to start with continuous repainting on (View → Repaint continuously).
pub const CONTINUOUS_ENV: &str = "BELIEFSCOPE_CONTINUOUS_REPAINT";
/// Set (to anything) to print the window's frame statistics to stderr once a second.
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

/// The iteration limit of a config, for "iteration k / max" and the curves' x range.
pub fn max_iters(config: &ScenarioConfig) -> Option<usize> {
    match config {
        ScenarioConfig::Denoise(c) => Some(c.max_iters),
        // One step per message: the count depends on the tree, not on the config alone.
        ScenarioConfig::Tree(_) => None,
        ScenarioConfig::Retrieval(c) => Some(c.repeats),
        ScenarioConfig::Sosmp(c) => Some(c.iters),
        ScenarioConfig::Flow(c) => Some(c.total_iters()),
    }
}

pub struct App {
    /// Persisted between sessions.
    state: State,
    /// False for tests and embedded uses: never read or write the user's saved state.
    persist: bool,
    runner: Runner,
    /// The latest snapshot from the worker.
    snapshot: Option<Arc<Snapshot>>,
    /// The config last sent to the worker.
    applied: ScenarioConfig,
    /// A Load sent but not yet seen in a snapshot.
    loading: Option<ScenarioConfig>,
    /// The worker reported an error while `loading` was set: the old scenario is still running.
    load_failed: bool,
    /// Loaded instead if the first config (a remembered one) cannot be loaded.
    fallback: Option<ScenarioConfig>,
    busy: Option<String>,
    /// A long job running on the worker.
    task: Option<TaskProgress>,
    /// What the last finished job produced (e.g. the auto-tune grid).
    last_task: Option<TaskResult>,
    /// Play or Pause was asked for and no snapshot has answered yet (a set-up can take a while):
    /// the buttons and the next Play/Pause follow the request, not the stale snapshot.
    requested_playing: Option<bool>,
    /// What the user inspects; kept across rebuilds while it exists.
    selection: Option<Probe>,
    notices: Notices,
    dialog: FileDialog,
    caches: views::ViewCaches,
    frames: FrameTimer,
    /// Paint frames back to back (to measure the frame rate).
    continuous: bool,
    /// When the frame statistics were last printed (only with [`FRAME_LOG_ENV`]).
    frame_log: Option<Instant>,
    /// Recorded while drawing, applied at the end of the frame.
    commands: Vec<UiCommand>,
    /// Flow: frame 1 opened alone, waiting for frame 2.
    flow_pending: Option<std::path::PathBuf>,
}

impl App {
    /// The window's app: restores the last session's state (if any) and starts iterating.
    pub fn new(cc: &eframe::CreationContext<'_>) -> Self {
        let state: State = cc
            .storage
            .and_then(|s| eframe::get_value(s, eframe::APP_KEY))
            .unwrap_or_default();
        let fallback = (state.config != ScenarioConfig::default()).then(ScenarioConfig::default);
        let mut app = Self::start(cc, state, true, true, fallback);
        // Diagnostics for measuring the window (e.g. under Xvfb in CI): repaint back to back and
        // print the frame statistics to stderr once a second.
        app.continuous = std::env::var_os(CONTINUOUS_ENV).is_some();
        app.frame_log = std::env::var_os(FRAME_LOG_ENV).map(|_| Instant::now());
        app
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
        Self::start(cc, state, autoplay, false, None)
    }

    fn start(
        cc: &eframe::CreationContext<'_>,
        state: State,
        autoplay: bool,
        persist: bool,
        fallback: Option<ScenarioConfig>,
    ) -> Self {
        install_fonts(&cc.egui_ctx);
        let ctx = cc.egui_ctx.clone();
        let runner = Runner::spawn(None, Arc::new(move || ctx.request_repaint()));
        runner.send(Command::Load(state.config.clone()));
        if autoplay {
            runner.send(Command::Play);
        }
        App {
            applied: state.config.clone(),
            loading: Some(state.config.clone()),
            state,
            persist,
            runner,
            snapshot: None,
            load_failed: false,
            fallback,
            busy: None,
            task: None,
            last_task: None,
            requested_playing: autoplay.then_some(true),
            selection: None,
            notices: Notices::default(),
            dialog: FileDialog::default(),
            caches: views::ViewCaches::default(),
            frames: FrameTimer::default(),
            continuous: false,
            frame_log: None,
            commands: Vec::new(),
            flow_pending: None,
        }
    }

    /// Uses `path` as the scenario's image (what a dropped file or the Open dialog does).
    pub fn open_image(&mut self, path: std::path::PathBuf) {
        self.commands.push(UiCommand::OpenImage(path));
    }

    /// Inspects `probe` (a node or a message), as a click on it does.
    pub fn select(&mut self, probe: Probe) {
        self.commands.push(UiCommand::Select(probe));
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
    pub fn snapshot(&self) -> Option<&Snapshot> {
        self.snapshot.as_deref()
    }

    fn on_event(&mut self, event: Event) {
        match event {
            Event::Snapshot(s) => {
                self.busy = None;
                self.requested_playing = None;
                if self.loading.as_ref() == Some(&s.config) {
                    self.loading = None;
                    self.load_failed = false;
                    self.fallback = None;
                } else if self.load_failed {
                    // The load failed and the previous scenario is still running: show its
                    // parameters again.
                    self.loading = None;
                    self.load_failed = false;
                }
                if self.loading.is_none() && s.config != self.applied {
                    self.applied = s.config.clone();
                    self.state.config = s.config.clone();
                }
                if let Some(sel) = self.selection {
                    if !views::selection_is_valid(&s, sel) {
                        // Gone with the old image (unless a rebuild is still on its way).
                        if self.loading.is_none() {
                            self.selection = None;
                        }
                    } else if s.probe != Some(sel) {
                        // A rebuild forgets the probe; ask again.
                        self.runner.send(Command::Probe(Some(sel)));
                    }
                }
                self.snapshot = Some(s);
            }
            Event::Error(message) => {
                self.busy = None;
                if self.task.take().is_some() {
                    // The job failed or was cancelled; the scenario is untouched.
                } else if self.loading.is_some() {
                    self.load_failed = true;
                }
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
            Event::Busy(message) => self.busy = Some(message),
            Event::TaskProgress { label, done, total } => {
                self.task = Some(TaskProgress { label, done, total });
            }
            Event::TaskDone(result) => {
                self.task = None;
                if let TaskResult::SosmpSweep(sweep) = &result {
                    self.caches.sosmp.add_sweep(sweep.clone());
                }
                self.last_task = Some(result);
            }
        }
    }

    /// Sends `config` to the worker as a rebuild. A run that was playing or had finished plays
    /// the new one (`play`), a paused run stays paused at iteration 0.
    fn apply(&mut self, config: ScenarioConfig, play: bool) {
        self.runner.send(Command::Load(config.clone()));
        if play {
            self.runner.send(Command::Play);
            self.requested_playing = Some(true);
        }
        self.applied = config.clone();
        self.loading = Some(config);
        self.load_failed = false;
    }

    fn should_play_after_load(&self) -> bool {
        self.requested_playing.unwrap_or_else(|| {
            self.snapshot
                .as_ref()
                .is_some_and(|s| s.playing || s.finished)
        })
    }

    /// Playing as far as the user can tell: the last request, else the last snapshot.
    fn playing(&self) -> bool {
        self.requested_playing
            .unwrap_or_else(|| self.snapshot.as_ref().is_some_and(|s| s.playing))
    }

    fn run_command(&mut self, ctx: &egui::Context, command: UiCommand) {
        match command {
            UiCommand::PlayPause => {
                let playing = self.playing();
                self.runner.send(if playing {
                    Command::Pause
                } else {
                    Command::Play
                });
                self.requested_playing = Some(!playing);
            }
            UiCommand::Step => {
                self.runner.send(Command::Step);
                self.requested_playing = Some(false);
            }
            UiCommand::Reset => self.runner.send(Command::Reset),
            UiCommand::OpenImageDialog => match &self.state.config {
                ScenarioConfig::Tree(_) => self.dialog.open_data(ctx),
                _ => self.dialog.open_image(ctx),
            },
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
            UiCommand::OpenImage(path) => {
                match &mut self.state.config {
                    ScenarioConfig::Denoise(c) => c.image = Some(path),
                    ScenarioConfig::Tree(c) => {
                        if let Err(e) = views::tree::open_file(c, &path) {
                            self.notices.error(e);
                            return;
                        }
                    }
                    ScenarioConfig::Retrieval(_) => {
                        self.notices.error(
                            "the retrieval experiment generates its own data; switch to the \
                             tree scenario to explore a file",
                        );
                        return;
                    }
                    ScenarioConfig::Sosmp(_) => {
                        self.notices.error(
                            "the sosmp scenario uses no image; choose the denoise scenario to load one",
                        );
                        return;
                    }
                    ScenarioConfig::Flow(c) => {
                        let pending = self.flow_pending.take();
                        match panels::flow_params::open_flow_files(c, pending.as_deref(), &[path]) {
                            FlowOpen::Apply(config) => *c = *config,
                            FlowOpen::Waiting(frame) => {
                                self.notices.error(format!(
                                    "frame 1 is {}: open frame 2 next",
                                    frame.display()
                                ));
                                self.flow_pending = Some(frame);
                                return;
                            }
                            FlowOpen::Error(message) => {
                                self.notices.error(message);
                                return;
                            }
                        }
                    }
                }
                self.selection = None;
                let play = self.should_play_after_load();
                self.apply(self.state.config.clone(), play);
            }
            UiCommand::Control(c) => self.runner.send(Command::Control(c)),
            UiCommand::SaveTree(text) => self.dialog.save_tree(ctx, text),
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
                    self.runner.send(Command::RunTask(task));
                    self.requested_playing = Some(false);
                }
            }
            UiCommand::CancelTask => self.runner.send(Command::Cancel),
        }
    }

    /// Applies the edited parameters once no edit is in progress: no slider or number held by
    /// the pointer, no number being typed (applied on Enter or when the field loses focus).
    fn apply_finished_edits(&mut self, ctx: &egui::Context) {
        if self.state.config != self.applied
            && !ctx.egui_is_using_pointer()
            && !ctx.text_edit_focused()
        {
            let play = self.should_play_after_load();
            self.apply(self.state.config.clone(), play);
        }
    }

    /// One line of frame statistics a second on stderr, when asked for with [`FRAME_LOG_ENV`].
    fn log_frame_stats(&mut self, now: Instant) {
        let Some(last) = self.frame_log else {
            return;
        };
        if now.duration_since(last).as_secs_f64() < 1.0 {
            return;
        }
        self.frame_log = Some(now);
        let f = self.frames.stats(now);
        let ms = |s: Option<f64>| s.map_or("-".to_string(), |s| format!("{:.1}", s * 1e3));
        let (iteration, playing) = self
            .snapshot
            .as_ref()
            .map_or((0, false), |s| (s.iteration, s.playing));
        eprintln!(
            "frame-stats fps={} mean_ms={} worst_ms={} cpu_ms={} engine_playing={playing} iteration={iteration}",
            f.frame_seconds
                .map_or("-".to_string(), |dt| format!("{:.1}", 1.0 / dt.max(1e-6))),
            ms(f.frame_seconds),
            ms(f.worst_seconds),
            ms(f.cpu_seconds.map(f64::from)),
        );
    }

    fn drop_overlay(&self, ctx: &egui::Context) {
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
            match self.state.config {
                ScenarioConfig::Flow(_) => {
                    "Drop two frames (and a .flo ground truth) to estimate their flow"
                }
                ScenarioConfig::Tree(_) => "Drop a CSV dataset or an edge-list tree file",
                _ => "Drop an image to use it as the clean image",
            },
            egui::FontId::proportional(24.0),
            egui::Color32::WHITE,
        );
    }
}

impl eframe::App for App {
    fn logic(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        for event in self.runner.drain() {
            self.on_event(event);
        }
        match self.dialog.poll() {
            Some((Purpose::SaveTree(text), Picked::Path(path))) => {
                if let Err(e) = crate::io::write_atomic(&path, text.as_bytes()) {
                    self.notices.error(e.to_string());
                }
            }
            Some((_, Picked::Path(path))) => self.commands.push(UiCommand::OpenImage(path)),
            Some((_, Picked::Failed(message))) => self.notices.error(message),
            Some((_, Picked::Cancelled)) | None => {}
        }
        let dropped: Vec<std::path::PathBuf> = ctx.input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .collect()
        });
        match (&self.state.config, dropped.len()) {
            (_, 0) => {}
            // Frames (and a .flo) dropped together on the flow scenario: one load.
            (ScenarioConfig::Flow(c), n) if n > 1 => {
                match panels::flow_params::open_flow_files(c, None, &dropped) {
                    FlowOpen::Apply(config) => {
                        self.flow_pending = None;
                        self.commands
                            .push(UiCommand::Apply(ScenarioConfig::Flow(*config)));
                    }
                    FlowOpen::Waiting(frame) => self.flow_pending = Some(frame),
                    FlowOpen::Error(message) => self.notices.error(message),
                }
            }
            _ => self.commands.push(UiCommand::OpenImage(dropped[0].clone())),
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
        egui::Panel::top("menu").show(ui, |ui| {
            panels::menu::show(
                ui,
                &mut self.state,
                &mut self.continuous,
                &mut self.commands,
            );
        });
        egui::Panel::bottom("status").show(ui, |ui| {
            let info = StatusInfo {
                snapshot: snapshot.as_deref(),
                busy: self.busy.as_deref(),
                task: self.task,
                max_iters: snapshot.as_ref().and_then(|s| max_iters(&s.config)),
                extras: snapshot.as_deref().map(views::status).unwrap_or_default(),
                frame: self.frames.stats(Instant::now()),
                continuous: self.continuous,
            };
            panels::status::show(ui, &info, &mut self.commands);
        });
        if self.state.show_controls {
            egui::Panel::left("controls")
                .resizable(true)
                .default_size(300.0)
                .size_range(240.0..=480.0)
                .show(ui, |ui| {
                    panels::controls::show(
                        ui,
                        &mut self.state.config,
                        snapshot.as_deref(),
                        playing,
                        &TaskInfo {
                            running: self.task.is_some(),
                            last: self.last_task.as_ref(),
                        },
                        &mut self.commands,
                    );
                });
        }
        if self.state.show_inspector {
            egui::Panel::right("inspector")
                .resizable(true)
                .default_size(420.0)
                .size_range(280.0..=800.0)
                .show(ui, |ui| match &snapshot {
                    Some(s) => views::inspector(ui, s, &mut self.state, &mut self.caches),
                    None => {
                        ui.spinner();
                    }
                });
        }
        egui::CentralPanel::default().show(ui, |ui| match &snapshot {
            Some(s) => views::central(
                ui,
                s,
                &mut self.caches,
                &mut self.state,
                self.selection,
                &mut self.commands,
            ),
            None => {
                ui.centered_and_justified(|ui| {
                    ui.spinner();
                });
            }
        });
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
