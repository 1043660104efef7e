//! The convergence debugger panel, drawn for every scenario whose snapshot carries a
//! [`ConvergenceView`] (see `Scenario::convergence`): the residual map of grid scenarios
//! (per node the largest change of its incoming messages, log scale, oscillating messages
//! outlined) with a scrubber over the stored iterations, and the per-iteration curves of the
//! residual quantiles and the oscillating fraction with the scrubbed iteration marked.
//! "What to do about it": schedule and damping switched live on the worker, what-if runs (a
//! copy of the engine continued with another schedule or damping, overlaid on the residual
//! curve) and, when a run ends without converging, two what-if runs started automatically
//! whose measured outcome is the hint.
//!
//! Layout: [`PanelLayout`] shares the width between the map, a column whose controls come
//! first and whose read-outs and hints scroll and wrap, and the plots (stacked when narrow). A
//! view with a graph gets [`graph`]'s canvas in the map's place, in a taller panel of its own id
//! ([`panel_default`]; the panel's content claims its whole height, since egui sizes a panel to
//! what its content used), and [`history`]'s window for a clicked message. A view whose
//! `fixed_schedule` names a reason (SOSMP, tree kernel BP, predictive BP) gets no schedule or
//! what-if controls, and shows the reason instead.
//!
//! How a scenario gets this panel, floor by floor (no room code needed):
//! * floor 0, `run`: `residuals.rs` records per-message changes, detects oscillation and keeps
//!   the maps (`ConvergenceTracker`, [`ConvergenceView`]); `edge_frames.rs` keeps graph
//!   scenarios' messages per stored iteration (`ConvergenceTracker::for_graph`,
//!   `observe_with_values`); `level_maps.rs` keeps a coarse-to-fine run's finished levels, so
//!   the scrubber spans every level (`ConvergenceView::levels`, flow).
//! * floor 2, `inference`: `Inference::message_changes` (discrete BP and kernel BP record them
//!   under every schedule, flow's discrete BP in the update that writes each message), the
//!   random and residual-BP orders (`schedule_order.rs`), and `sosmp::check_schedule`, which
//!   refuses all but synchronous.
//! * floor 4, `scenarios`: `Scenario::convergence`, `set_schedule` and `what_if` (by default
//!   none, or a refusal). A scenario opts in by keeping a tracker and adding its statistics to
//!   each `IterationRecord`; `scenarios/what_if.rs` continues a copy of a `Reschedulable`
//!   engine. A live switch is recorded in the config (`schedule_changes`,
//!   `inference::schedule::ScheduleChange`: first iteration, schedule, damping) and applied
//!   before that iteration, live and on a replay alike. Flow's switch also holds for the levels
//!   set up after it, and its what-if copies the current level's discrete BP; sosmp computes its
//!   changes from path 0's coefficients; kjit's `sites` experiment runs its own EP schedules;
//!   tree and pbp record a frame per message pass or evidence change.
//! * floor 5, `runner`: `Command::SetSchedule`, `Command::WhatIf`, `Event::WhatIf`,
//!   `Snapshot::convergence`.

mod curve_points;
pub mod graph;
pub mod history;

use std::sync::Arc;

use eframe::egui::{self, Color32};
use egui_plot::{Legend, Line, LineStyle, Plot, PlotPoints, VLine};
use strum::VariantArray;

use super::commands::UiCommand;
use super::textures::{AsyncTexture, Source};
use super::views::thin;
use super::views::ticks::{self, Scale};
use crate::inference::Schedule;
use crate::model::NodeId;
use crate::run::level_maps::span_of;
use crate::run::residuals::{ConvergenceView, EdgeFrame, ResidualMap};
use crate::runner::Snapshot;
use crate::scenarios::what_if::{WhatIfRequest, WhatIfRun};
use crate::scenarios::{IterationRecord, Probe};
use crate::viz::residual_map::{map_max, residual_map_rgba};
use curve_points::{CurvePoints, QUANTILES};

/// Decades the map's colour scale spans below its top.
const DECADES: f64 = 6.0;
/// Graphs with more messages than this are not drawn (each is a few shapes per frame).
const MAX_DRAWN_MESSAGES: usize = 20_000;
/// Pixels per map cell in the texture (room for the outline).
const CELL_PIXELS: usize = 4;

/// The panel's default height: room for the residual map, the controls and two plots.
pub const PANEL_HEIGHT: f32 = 220.0;
/// The default height for a view with a graph: its canvas (a star, a tree, a grid of messages)
/// needs more than a map's strip to tell lines apart and click them.
pub const GRAPH_PANEL_HEIGHT: f32 = 330.0;

/// The panel's id and default height for `view`. Graph views keep their own id, so the
/// height a user gave one kind of view (or the default of the scenario shown first) does not
/// carry over to the other.
pub fn panel_default(view: Option<&ConvergenceView>) -> (&'static str, f32) {
    if view.is_some_and(|v| v.graph.is_some()) {
        ("debugger graph", GRAPH_PANEL_HEIGHT)
    } else {
        ("debugger", PANEL_HEIGHT)
    }
}

/// What the panel asks of the worker (sent by the app as runner commands).
#[derive(Debug, Clone, PartialEq)]
pub enum DebuggerAction {
    SetSchedule { schedule: Schedule, damping: f64 },
    WhatIf(WhatIfRequest),
}

/// Line colours of what-if runs, in order.
const WHAT_IF_COLORS: [Color32; 4] = [
    Color32::from_rgb(0, 114, 178),
    Color32::from_rgb(204, 121, 167),
    Color32::from_rgb(0, 158, 115),
    Color32::from_rgb(240, 228, 66),
];

/// What the panel remembers between frames.
#[derive(Default)]
pub struct Debugger {
    /// The schedule and damping the switch and what-if controls would use.
    pub draft_schedule: Option<Schedule>,
    pub draft_damping: Option<f64>,
    /// What-if runs of the current run, oldest first.
    pub what_ifs: Vec<WhatIfRun>,
    /// Whether the automatic what-ifs of an unconverged run were asked for.
    auto_asked: bool,
    actions: Vec<DebuggerAction>,
    /// Index into the stored maps the scrubber shows; None: follow the newest.
    pub scrub: Option<usize>,
    /// Redrawn off the window's thread (a new map every iteration while live).
    texture: AsyncTexture,
    /// The map drawn in the last frame.
    shown: Option<Arc<ResidualMap>>,
    /// The run the scrubber belongs to (a new run follows the newest again).
    run: Option<u64>,
    /// Graph scenarios: the message changes drawn in the last frame.
    shown_edges: Option<Arc<EdgeFrame>>,
    /// The window plotting a clicked message's history.
    history: history::MessageHistory,
    /// The curves' points, extended frame by frame.
    curve_points: CurvePoints,
}

impl Debugger {
    /// The map drawn in the last frame (tests check what the scrubber shows).
    pub fn shown(&self) -> Option<&ResidualMap> {
        self.shown.as_deref()
    }

    /// Graph scenarios: the stored iteration whose message changes colour the canvas.
    pub fn shown_edges(&self) -> Option<&EdgeFrame> {
        self.shown_edges.as_deref()
    }

    /// The message whose history window is open.
    pub fn history_message(&self) -> Option<usize> {
        self.history.message
    }

    /// Takes the actions recorded while drawing.
    pub fn take_actions(&mut self) -> Vec<DebuggerAction> {
        std::mem::take(&mut self.actions)
    }

    /// Records a finished what-if run.
    pub fn add_what_if(&mut self, run: WhatIfRun) {
        self.what_ifs.push(run);
    }

    /// The hints shown: one sentence per what-if run, newest first.
    pub fn hints(&self) -> Vec<String> {
        self.what_ifs.iter().rev().map(WhatIfRun::hint).collect()
    }

    /// Draws the panel for `snapshot` (nothing when it carries no convergence view).
    pub fn show(&mut self, ui: &mut egui::Ui, snapshot: &Snapshot, commands: &mut Vec<UiCommand>) {
        let Some(view) = &snapshot.convergence else {
            return;
        };
        if self.run != Some(snapshot.run) {
            self.run = Some(snapshot.run);
            self.scrub = None;
            self.what_ifs.clear();
            self.auto_asked = false;
            self.history.message = None;
            self.draft_schedule = None;
            self.draft_damping = None;
        }
        self.ask_when_unconverged(snapshot, view);
        // egui sizes a panel to what its content used in the last frame. The content is laid
        // out from the height left and uses a little less of it (the canvas and its legend),
        // so without this the panel lost a few points every frame until the clamp below
        // stopped it: a click aimed from one frame's layout landed on the next frame's.
        // The content claims the whole panel, so only the user's drag changes its height.
        ui.set_min_height(ui.available_height());
        let height = ui.available_height().clamp(140.0, 320.0);
        let layout = match (&view.graph, map_aspect(view)) {
            (Some(_), Some(aspect)) => PanelLayout::for_graph(ui.available_width(), height, aspect),
            (_, aspect) => PanelLayout::new(ui.available_width(), height, aspect),
        };
        ui.horizontal_top(|ui| {
            if view.graph.is_some() {
                self.graph(ui, view, layout.map_width, height, commands);
            } else if layout.map_width > 0.0 {
                self.map(ui, view, layout.map_width, commands);
            }
            // The column scrolls (and its text wraps at its width) rather than being clipped
            // by a short panel or a narrow window.
            ui.vertical(|ui| {
                ui.set_width(layout.controls_width);
                // What can be clicked first; the read-outs below scroll.
                self.controls(ui, view);
                self.what_if_controls(ui, view);
                ui.separator();
                egui::ScrollArea::vertical()
                    .id_salt("debugger read-outs")
                    .auto_shrink([false, true])
                    .show(ui, |ui| {
                        self.verdicts(ui, view, snapshot);
                        self.map_info(ui, view);
                    });
            });
            let scrubbed = match view.graph {
                Some(_) => self.shown_edges.as_ref().map(|f| f.iteration),
                None => self.shown.as_ref().map(|m| m.iteration),
            };
            self.curve_points.update(snapshot.run, &snapshot.history);
            let plotted = Plotted {
                points: &self.curve_points,
                history: &snapshot.history,
                scrubbed,
                what_ifs: &self.what_ifs,
            };
            curves(ui, &plotted, &layout);
        });
        if let Some(graph) = &view.graph {
            self.history.show(ui.ctx(), graph, &view.edges);
        }
    }

    fn index(&self, view: &ConvergenceView) -> usize {
        let last = frame_count(view).saturating_sub(1);
        self.scrub.map_or(last, |i| i.min(last))
    }

    /// Graph scenarios: the canvas coloured by the scrubbed iteration's message changes, with
    /// its legend; a click on a message opens its history (and inspects it), on a node
    /// inspects the node.
    fn graph(
        &mut self,
        ui: &mut egui::Ui,
        view: &ConvergenceView,
        width: f32,
        height: f32,
        commands: &mut Vec<UiCommand>,
    ) {
        let Some(graph) = &view.graph else {
            return;
        };
        let frame = view.edges.get(self.index(view)).cloned();
        // One scale for the whole run: the largest change stored.
        let hi = view
            .edges
            .iter()
            .map(|f| f.max_change())
            .fold(0.0, f64::max);
        ui.vertical(|ui| {
            ui.set_width(width);
            if graph.messages.len() > MAX_DRAWN_MESSAGES {
                // Hundreds of thousands of lines would stall every frame; the quantile curves
                // and the stored changes stay.
                ui.add(
                    egui::Label::new(format!(
                        "{} messages: too many to draw (at most {MAX_DRAWN_MESSAGES}); the curves show their quantiles",
                        graph.messages.len()
                    ))
                    .wrap(),
                );
                return;
            }
            let canvas = egui::vec2(width, (height - 44.0).max(60.0));
            let pick = graph::graph_canvas(
                ui,
                graph,
                frame.as_deref(),
                hi,
                DECADES,
                self.history.message,
                canvas,
            );
            graph::legend(ui, hi, DECADES, (width - 150.0).max(40.0));
            match pick {
                Some(graph::CanvasPick::Message(m)) => {
                    self.history.message = Some(m);
                    commands.push(UiCommand::Select(Probe::Message(m)));
                }
                Some(graph::CanvasPick::Node(n)) => {
                    commands.push(UiCommand::Select(Probe::Node(n)));
                }
                None => {}
            }
        });
        self.shown_edges = frame;
    }

    fn map(
        &mut self,
        ui: &mut egui::Ui,
        view: &ConvergenceView,
        width: f32,
        commands: &mut Vec<UiCommand>,
    ) {
        let map = view.maps[self.index(view)].clone();
        let hi = [view.maps.first(), view.maps.last(), Some(&map)]
            .into_iter()
            .flatten()
            .map(|m| map_max(m))
            .fold(0.0, f64::max);
        let source = Source::shared(vec![map.clone()], &[hi]);
        let texture = self.texture.get(ui.ctx(), "residual map", source, {
            let map = map.clone();
            move || residual_map_rgba(&map, hi, DECADES, CELL_PIXELS)
        });
        let aspect = map.width as f32 / map.height.max(1) as f32;
        let size = egui::vec2(width, width / aspect);
        let response = ui
            .add(egui::Image::new((texture.id(), size)).sense(egui::Sense::click()))
            .on_hover_text("Largest change of each node's incoming messages (log scale); magenta outline: messages oscillating. Click a node to inspect it.");
        if response.clicked()
            && let (Some(pos), Some((w, h))) = (response.interact_pointer_pos(), view.grid)
        {
            let rel = (pos - response.rect.min) / response.rect.size();
            let x = ((rel.x * w as f32) as usize).min(w - 1);
            let y = ((rel.y * h as f32) as usize).min(h - 1);
            let node: NodeId = y * w + x;
            commands.push(UiCommand::Select(Probe::Node(node)));
        }
        self.shown = Some(map);
    }

    /// A run that ended above its tolerance gets two measured alternatives: residual BP with
    /// its damping, and its schedule with more damping.
    fn ask_when_unconverged(&mut self, snapshot: &Snapshot, view: &ConvergenceView) {
        let Some(last) = snapshot.history.last() else {
            return;
        };
        let tolerance = effective_tolerance(view.tolerance);
        // A coarse-to-fine run stops its levels by the change of its flow, not by a residual
        // tolerance, so "ended above its tolerance" says nothing there: no automatic what-ifs
        // (each would copy the finest level's messages); the button still runs one.
        if self.auto_asked
            || view.fixed_schedule.is_some()
            || !view.levels.is_empty()
            || !snapshot.finished
            || last.residual < tolerance
        {
            return;
        }
        self.auto_asked = true;
        let iterations = view.max_iters.clamp(20, 200);
        let current: Schedule = view.schedule.parse().unwrap_or_default();
        let more_damping = if view.damping < 0.5 {
            0.5
        } else {
            (view.damping + 0.3).min(0.9)
        };
        if current != Schedule::Residual {
            self.actions.push(DebuggerAction::WhatIf(WhatIfRequest {
                schedule: Schedule::Residual,
                damping: view.damping,
                iterations,
                tolerance,
            }));
        }
        self.actions.push(DebuggerAction::WhatIf(WhatIfRequest {
            schedule: current,
            damping: more_damping,
            iterations,
            tolerance,
        }));
    }

    fn what_if_controls(&mut self, ui: &mut egui::Ui, view: &ConvergenceView) {
        if let Some(reason) = &view.fixed_schedule {
            ui.add(egui::Label::new(egui::RichText::new(reason).small()).wrap());
            return;
        }
        let current: Schedule = view.schedule.parse().unwrap_or_default();
        let mut schedule = self.draft_schedule.unwrap_or(current);
        let mut damping = self.draft_damping.unwrap_or(view.damping);
        ui.horizontal(|ui| {
            egui::ComboBox::from_label("schedule")
                .selected_text(schedule.label())
                .show_ui(ui, |ui| {
                    for &s in Schedule::VARIANTS {
                        ui.selectable_value(&mut schedule, s, s.label());
                    }
                });
            ui.add(
                egui::DragValue::new(&mut damping)
                    .range(0.0..=0.99)
                    .speed(0.01)
                    .prefix("damping "),
            );
        });
        self.draft_schedule = Some(schedule);
        self.draft_damping = Some(damping);
        ui.horizontal(|ui| {
            if ui
                .button("Switch live")
                .on_hover_text("Continue this run with this schedule and damping from its current messages (listed in results.json as schedule_changes).")
                .clicked()
            {
                self.actions
                    .push(DebuggerAction::SetSchedule { schedule, damping });
            }
            if ui
                .button("What if")
                .on_hover_text("Run a copy of the engine from its current messages with this schedule and damping; its residual is overlaid on the curve. The run itself is untouched.")
                .clicked()
            {
                self.actions.push(DebuggerAction::WhatIf(WhatIfRequest {
                    schedule,
                    damping,
                    iterations: view.max_iters.clamp(20, 200),
                    tolerance: effective_tolerance(view.tolerance),
                }));
            }
        });
    }

    /// "Not converged" and the measured hints (wrapped at the column's width).
    fn verdicts(&self, ui: &mut egui::Ui, view: &ConvergenceView, snapshot: &Snapshot) {
        if let Some(last) = snapshot.history.last()
            && snapshot.finished
            && view.fixed_schedule.is_none()
            && !view.levels.is_empty()
        {
            // A coarse-to-fine run (flow) ends each level on the change of its flow estimate;
            // its message residual is shown, not judged against a tolerance it never had.
            ui.label(format!(
                "message residual {:.2e} at the end (iteration {}); each pyramid level stops \
                 when its flow stops changing (or at its iteration limit), not on this residual",
                last.residual, last.iter
            ));
        } else if let Some(ended_by) = view.ended_by.as_ref().filter(|_| snapshot.finished) {
            ui.add(egui::Label::new(ended_by.as_str()).wrap());
        } else if let Some(last) = snapshot.history.last()
            && snapshot.finished
            && view.fixed_schedule.is_none()
            && last.residual >= effective_tolerance(view.tolerance)
        {
            ui.colored_label(
                Color32::from_rgb(230, 159, 0),
                format!(
                    "not converged: residual {:.2e} after {} iterations",
                    last.residual, last.iter
                ),
            );
        }
        for hint in self.hints().into_iter().take(3) {
            ui.add(egui::Label::new(hint).wrap());
        }
    }

    fn controls(&mut self, ui: &mut egui::Ui, view: &ConvergenceView) {
        ui.strong("Convergence debugger");
        ui.label(format!(
            "{} schedule, damping {} · oscillating now: {:.1} % of messages",
            view.schedule,
            view.damping,
            100.0 * view.oscillating_fraction
        ));
        if let Some(note) = &view.step_note {
            ui.add(egui::Label::new(note).wrap());
        }
        if frame_count(view) == 0 {
            ui.label("no residual map yet");
            return;
        }
        let last = frame_count(view) - 1;
        let mut index = self.index(view);
        ui.horizontal(|ui| {
            // The row fits the column: two buttons and the slider.
            ui.spacing_mut().slider_width = (ui.available_width() - 70.0).max(60.0);
            if ui
                .button("◀")
                .on_hover_text("previous stored iteration")
                .clicked()
            {
                index = index.saturating_sub(1);
                self.scrub = Some(index);
            }
            let slider = egui::Slider::new(&mut index, 0..=last).show_value(false);
            if ui
                .add(slider)
                .on_hover_text("stored iteration shown in the map")
                .changed()
            {
                self.scrub = Some(index);
            }
            if ui
                .button("▶")
                .on_hover_text("next stored iteration")
                .clicked()
            {
                index = (index + 1).min(last);
                self.scrub = Some(index);
            }
        });
        let mut follow = self.scrub.is_none();
        if ui
            .checkbox(&mut follow, "follow the newest iteration")
            .changed()
        {
            self.scrub = if follow { None } else { Some(index) };
        }
        if view.graph.is_some() {
            let frame = &view.edges[index.min(last)];
            ui.label(format!(
                "message changes of iteration {} (largest {:.3e}); click a message for its history",
                frame.iteration,
                frame.max_change()
            ));
            return;
        }
        let map = &view.maps[index.min(last)];
        ui.label(map_label(view, map));
    }

    /// What the stored maps (or message changes) cost.
    fn map_info(&self, ui: &mut egui::Ui, view: &ConvergenceView) {
        if view.graph.is_some() {
            ui.label(format!(
                "stored message changes: {} iterations of {} messages, {:.2} MB of a {:.0} MB budget",
                view.edges.len(),
                view.edges.last().map_or(0, |f| f.change().len()),
                view.edge_bytes as f64 / 1e6,
                view.edge_budget_bytes as f64 / 1e6
            ))
            .on_hover_text("Past the budget every other stored iteration is dropped, so the stored iterations span the whole run.");
            return;
        }
        let Some(map) = view.maps.last().filter(|_| view.grid.is_some()) else {
            return;
        };
        let cells = if view.levels.len() > 1 {
            format!("over {} pyramid levels", view.levels.len())
        } else {
            format!("of {}x{} cells", map.width, map.height)
        };
        ui.label(format!(
            "stored maps: {} {cells}, {:.1} MB of a {:.0} MB budget",
            view.maps.len(),
            view.map_bytes as f64 / 1e6,
            view.map_budget_bytes as f64 / 1e6
        ))
        .on_hover_text("Maps are max-pooled to at most 128 cells a side; past the budget every other stored iteration is dropped, so the maps span the whole run.");
    }
}

/// What the scrubbed map is: its iteration, and in a coarse-to-fine run its level and the
/// iteration within the level (the map is that level's, drawn at the image's size).
pub fn map_label(view: &ConvergenceView, map: &ResidualMap) -> String {
    match span_of(&view.levels, map.iteration) {
        Some(span) => format!(
            "residual map of {}, iteration {} (run iteration {}, largest change {:.3e})",
            span.label(),
            map.iteration + 1 - span.first_iteration,
            map.iteration,
            map_max(map)
        ),
        None => format!(
            "residual map of iteration {} (largest change {:.3e})",
            map.iteration,
            map_max(map)
        ),
    }
}

/// The run's tolerance, or 1e-6 for runs that have none (0: never stop).
fn effective_tolerance(tolerance: f64) -> f64 {
    if tolerance > 0.0 { tolerance } else { 1e-6 }
}

/// Stored iterations the scrubber moves over: graph frames or residual maps.
fn frame_count(view: &ConvergenceView) -> usize {
    if view.graph.is_some() {
        view.edges.len()
    } else if view.grid.is_some() {
        view.maps.len()
    } else {
        0
    }
}

/// Width over height of the residual map or graph canvas (None: nothing to draw).
fn map_aspect(view: &ConvergenceView) -> Option<f32> {
    if let Some(graph) = &view.graph {
        // A chain is a row; anything else roughly square.
        let flat = graph.positions.windows(2).all(|w| w[0][1] == w[1][1]);
        return Some(if flat { 3.0 } else { 1.2 });
    }
    let map = view.maps.last().filter(|_| view.grid.is_some())?;
    Some(map.width as f32 / map.height.max(1) as f32)
}

/// How the panel's width is shared: the map at most the panel's height tall and at most a
/// quarter of the width, the controls column 230 to 290 points, the two plots the rest (side by
/// side, or one above the other when that leaves each less than 240 points).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PanelLayout {
    pub map_width: f32,
    pub controls_width: f32,
    pub plot_width: f32,
    pub plot_height: f32,
    pub stacked: bool,
    /// The panel's height.
    pub height: f32,
}

/// Space between the panel's parts.
const GAP: f32 = 8.0;
/// The width stacked plots keep beside a graph canvas.
const GRAPH_PLOTS_WIDTH: f32 = 200.0;

impl PanelLayout {
    pub fn new(available: f32, height: f32, aspect: Option<f32>) -> Self {
        let map_width = aspect.map_or(0.0, |a| (height * a).min(0.25 * available).max(60.0));
        Self::sharing(available, height, map_width)
    }

    /// A graph canvas gets what the controls and a column of stacked plots leave, up to the
    /// panel's height times `aspect`, and never less than a map would get: lines beside their
    /// twins need the room a residual map's pixels do not.
    pub fn for_graph(available: f32, height: f32, aspect: f32) -> Self {
        let map = Self::new(available, height, Some(aspect));
        let left = available - map.controls_width - 3.0 * GAP - GRAPH_PLOTS_WIDTH;
        let map_width = (height * aspect).min(left).max(map.map_width);
        Self::sharing(available, height, map_width)
    }

    fn sharing(available: f32, height: f32, map_width: f32) -> Self {
        let controls_width = (0.3 * available).clamp(250.0, 290.0);
        let rest = (available - map_width - controls_width - 3.0 * GAP).max(120.0);
        let stacked = rest / 2.0 < 240.0;
        let (plot_width, plot_height) = if stacked {
            (rest, (height - GAP) / 2.0)
        } else {
            ((rest - GAP) / 2.0, height)
        };
        PanelLayout {
            map_width,
            controls_width,
            plot_width,
            plot_height: plot_height.max(60.0),
            stacked,
            height,
        }
    }
}

/// The colours of [`QUANTILES`]' curves.
const QUANTILE_COLORS: [Color32; 3] = [
    Color32::from_rgb(86, 180, 233),
    Color32::from_rgb(0, 158, 115),
    Color32::from_rgb(230, 159, 0),
];

/// What the curves draw.
struct Plotted<'a> {
    points: &'a CurvePoints,
    /// The run's records (what-if runs start from one).
    history: &'a [IterationRecord],
    /// The iteration the scrubber shows.
    scrubbed: Option<usize>,
    what_ifs: &'a [WhatIfRun],
}

/// Residual quantiles (log10) and the oscillating fraction per iteration.
fn curves(ui: &mut egui::Ui, plotted: &Plotted, layout: &PanelLayout) {
    // What is left after the map and the column (which may have grown to fit a row).
    let left = ui.available_width().max(120.0);
    let stacked = left / 2.0 - 4.0 < 240.0;
    let layout = PanelLayout {
        plot_width: if stacked { left } else { left / 2.0 - 4.0 },
        plot_height: if stacked {
            ((layout.height - 8.0) / 2.0).max(60.0)
        } else {
            layout.height
        },
        stacked,
        ..*layout
    };
    if stacked {
        ui.vertical(|ui| curve_plots(ui, plotted, &layout));
    } else {
        curve_plots(ui, plotted, &layout);
    }
}

/// A legend where the plot is wide enough for it not to cover the lines (a narrow plot has
/// none; its lines keep the colours of the wide layout).
fn with_legend<'a>(plot: Plot<'a>, width: f32, corner: egui_plot::Corner) -> Plot<'a> {
    if width >= 320.0 {
        plot.legend(
            Legend::default()
                .text_style(egui::TextStyle::Small)
                .background_alpha(0.6)
                .position(corner),
        )
    } else {
        plot
    }
}

fn curve_plots(ui: &mut egui::Ui, plotted: &Plotted, layout: &PanelLayout) {
    let (width, height) = (layout.plot_width, layout.plot_height);
    let Plotted {
        points,
        history,
        scrubbed,
        what_ifs,
    } = *plotted;
    let log = |points: Vec<[f64; 2]>| -> Vec<[f64; 2]> {
        points
            .into_iter()
            .filter(|p| p[1] > 0.0)
            .map(|p| [p[0], p[1].log10()])
            .collect()
    };
    let mark = |plot: &mut egui_plot::PlotUi<'_>| {
        if let Some(it) = scrubbed {
            plot.vline(
                VLine::new("shown", it as f64)
                    .color(Color32::from_rgb(158, 158, 158))
                    .style(LineStyle::dashed_loose()),
            );
        }
    };
    with_legend(
        ticks::plot("debugger quantiles", Scale::Integer, Scale::Log10)
            .x_axis_label("iteration")
            .y_axis_label(fitting_label(ui, "message change", "change", height))
            .width(width)
            .height(height),
        width,
        egui_plot::Corner::LeftBottom,
    )
    .allow_scroll(false)
    .show(ui, |plot| {
        let shown = *plot.transform();
        plot.line(
            Line::new(
                "largest",
                PlotPoints::from(thin::line(points.largest.points(), &shown)),
            )
            .color(Color32::from_rgb(213, 94, 0))
            .width(2.0),
        );
        for (k, w) in what_ifs.iter().enumerate() {
            let mut points = vec![[
                w.start_iteration as f64,
                history
                    .iter()
                    .find(|r| r.iter == w.start_iteration)
                    .map_or(f64::NAN, |r| r.residual),
            ]];
            points.extend(w.residuals.iter().map(|(i, r)| [*i as f64, *r]));
            let points: Vec<[f64; 2]> = points.into_iter().filter(|p| p[1].is_finite()).collect();
            plot.line(
                Line::new(
                    format!(
                        "what if {} d={}",
                        w.request.schedule.label(),
                        w.request.damping
                    ),
                    PlotPoints::from(log(points)),
                )
                .color(WHAT_IF_COLORS[k % WHAT_IF_COLORS.len()])
                .style(LineStyle::dashed_dense())
                .width(2.0),
            );
        }
        for (((name, _), color), line) in
            QUANTILES.iter().zip(QUANTILE_COLORS).zip(&points.quantiles)
        {
            plot.line(
                Line::new(*name, PlotPoints::from(thin::line(line.points(), &shown)))
                    .color(color)
                    .width(1.5),
            );
        }
        mark(plot);
    });
    with_legend(
        ticks::plot("debugger oscillating", Scale::Integer, Scale::Real)
            .x_axis_label("iteration")
            .y_axis_label(fitting_label(
                ui,
                "fraction of messages",
                "oscillating",
                height,
            ))
            .width(width)
            .height(height),
        width,
        egui_plot::Corner::LeftTop,
    )
    .include_y(0.0)
    .include_y(1.0)
    .allow_scroll(false)
    .show(ui, |plot| {
        let shown = *plot.transform();
        plot.line(
            Line::new(
                "oscillating fraction",
                PlotPoints::from(thin::line(points.oscillating.points(), &shown)),
            )
            .color(Color32::from_rgb(204, 121, 167))
            .width(2.0),
        );
        mark(plot);
    });
}

/// The long y-axis label when it fits along a plot `height` points tall, else the short one:
/// stacked plots are short, and egui_plot would run a long label into the next plot's.
fn fitting_label(ui: &egui::Ui, long: &str, short: &str, height: f32) -> String {
    let font = egui::TextStyle::Body.resolve(ui.style());
    let width = ui
        .painter()
        .layout_no_wrap(long.to_string(), font, Color32::WHITE)
        .size()
        .x;
    // The axis label sits beside the plot area, which loses the x axis's band below it.
    if width <= height - 40.0 {
        long.to_string()
    } else {
        short.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_panels_stack_the_plots_and_keep_every_part_inside() {
        // The central area of a 1400-point window with both side panels open.
        for available in [600.0, 900.0, 1400.0, 2400.0] {
            let l = PanelLayout::new(available, 220.0, Some(1.0));
            let plots = if l.stacked {
                l.plot_width
            } else {
                2.0 * l.plot_width + 8.0
            };
            let used = l.map_width + l.controls_width + plots + 16.0;
            assert!(used <= available + 1.0, "{available}: {l:?} uses {used}");
            assert!(l.plot_width >= 120.0, "{available}: {l:?}");
            assert!(l.map_width <= 0.25 * available + 0.5);
        }
        assert!(PanelLayout::new(600.0, 220.0, Some(1.0)).stacked);
        assert!(!PanelLayout::new(1400.0, 220.0, Some(1.0)).stacked);
        assert_eq!(PanelLayout::new(900.0, 220.0, None).map_width, 0.0);
    }

    #[test]
    fn a_graph_canvas_takes_what_the_controls_and_stacked_plots_leave() {
        for available in [590.0, 760.0, 1000.0, 1400.0, 2400.0] {
            let g = PanelLayout::for_graph(available, 314.0, 1.2);
            let map = PanelLayout::new(available, 314.0, Some(1.2));
            assert!(g.map_width >= map.map_width, "{available}: {g:?}");
            assert!(g.map_width <= 314.0 * 1.2 + 0.5, "{available}: {g:?}");
            let plots = if g.stacked {
                g.plot_width
            } else {
                2.0 * g.plot_width + 8.0
            };
            let used = g.map_width + g.controls_width + plots + 16.0;
            assert!(used <= available + 1.0, "{available}: {g:?} uses {used}");
            assert!(g.plot_width >= 120.0, "{available}: {g:?}");
        }
        // The central area beside both side panels of a 1360-point window: a square canvas
        // instead of a quarter-width strip.
        let g = PanelLayout::for_graph(760.0, 314.0, 1.2);
        assert!(g.map_width >= 240.0, "{g:?}");
    }
}
