//! The convergence debugger panel, drawn for every scenario whose snapshot carries a
//! [`ConvergenceView`] (see `Scenario::convergence`): the residual map of grid scenarios
//! (per node the largest change of its incoming messages, log scale, oscillating messages
//! outlined) with a scrubber over the stored iterations, and the per-iteration curves of the
//! residual quantiles and the oscillating fraction with the scrubbed iteration marked.
//! "What to do about it": schedule and damping switched live on the worker, what-if runs (a
//! copy of the engine continued with another schedule or damping, overlaid on the residual
//! curve) and, when a run ends without converging, two what-if runs started automatically
//! whose measured outcome is the hint.

use std::sync::Arc;

use eframe::egui::{self, Color32};
use egui_plot::{Legend, Line, LineStyle, PlotPoints, VLine};

use super::commands::UiCommand;
use super::textures::{CachedTexture, Source};
use super::views::ticks::{self, Scale};
use crate::inference::Schedule;
use crate::model::NodeId;
use crate::run::residuals::{ConvergenceView, ResidualMap};
use crate::runner::Snapshot;
use crate::scenarios::what_if::{WhatIfRequest, WhatIfRun};
use crate::scenarios::{IterationRecord, Probe};
use crate::viz::residual_map::{map_max, residual_map_rgba};

/// Decades the map's colour scale spans below its top.
const DECADES: f64 = 6.0;
/// Pixels per map cell in the texture (room for the outline).
const CELL_PIXELS: usize = 4;

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
    texture: CachedTexture,
    /// The map drawn in the last frame.
    shown: Option<Arc<ResidualMap>>,
    /// The run the scrubber belongs to (a new run follows the newest again).
    run: Option<u64>,
}

impl Debugger {
    /// The map drawn in the last frame (tests check what the scrubber shows).
    pub fn shown(&self) -> Option<&ResidualMap> {
        self.shown.as_deref()
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
        }
        self.ask_when_unconverged(snapshot, view);
        let height = ui.available_height().clamp(140.0, 320.0);
        // The map gives way so the curves keep at least MIN_CURVE_WIDTH beside the controls
        // (at 1360 px with both side panels open the central area is about 600 px wide).
        let gap = ui.spacing().item_spacing.x;
        let map_room = ui.available_width() - CONTROLS_WIDTH - MIN_CURVE_WIDTH - 3.0 * gap;
        ui.horizontal_top(|ui| {
            if view.grid.is_some() && !view.maps.is_empty() {
                self.map(ui, view, height, map_room.max(90.0), commands);
            }
            ui.vertical(|ui| {
                ui.set_width(CONTROLS_WIDTH);
                self.controls(ui, view);
                ui.separator();
                self.what_if_controls(ui, view, snapshot);
            });
            let scrubbed = self.shown.as_ref().map(|m| m.iteration);
            curves(ui, &snapshot.history, scrubbed, &self.what_ifs, height);
        });
    }

    fn index(&self, view: &ConvergenceView) -> usize {
        let last = view.maps.len().saturating_sub(1);
        self.scrub.map_or(last, |i| i.min(last))
    }

    fn map(
        &mut self,
        ui: &mut egui::Ui,
        view: &ConvergenceView,
        height: f32,
        max_width: f32,
        commands: &mut Vec<UiCommand>,
    ) {
        let map = view.maps[self.index(view)].clone();
        let hi = [view.maps.first(), view.maps.last(), Some(&map)]
            .into_iter()
            .flatten()
            .map(|m| map_max(m))
            .fold(0.0, f64::max);
        let source = Source::shared(vec![map.clone()], &[hi]);
        let texture = self.texture.get(ui.ctx(), "residual map", source, || {
            residual_map_rgba(&map, hi, DECADES, CELL_PIXELS)
        });
        let aspect = map.width as f32 / map.height.max(1) as f32;
        let side = height.min(max_width / aspect.max(1e-3));
        let size = egui::vec2(side * aspect, side);
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
        if self.auto_asked || !snapshot.finished || last.residual < tolerance {
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

    fn what_if_controls(&mut self, ui: &mut egui::Ui, view: &ConvergenceView, snapshot: &Snapshot) {
        let current: Schedule = view.schedule.parse().unwrap_or_default();
        let mut schedule = self.draft_schedule.unwrap_or(current);
        let mut damping = self.draft_damping.unwrap_or(view.damping);
        ui.horizontal(|ui| {
            egui::ComboBox::from_label("schedule")
                .selected_text(schedule.label())
                .show_ui(ui, |ui| {
                    for s in Schedule::ALL {
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
        if let Some(last) = snapshot.history.last()
            && snapshot.finished
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
            ui.label(hint);
        }
    }

    fn controls(&mut self, ui: &mut egui::Ui, view: &ConvergenceView) {
        ui.strong("Convergence debugger");
        ui.label(format!(
            "schedule {}, damping {}",
            view.schedule, view.damping
        ));
        ui.label(format!(
            "oscillating now: {:.1} % of messages",
            100.0 * view.oscillating_fraction
        ));
        if view.grid.is_none() || view.maps.is_empty() {
            ui.label("no residual map yet");
            return;
        }
        let last = view.maps.len() - 1;
        let mut index = self.index(view);
        ui.horizontal(|ui| {
            if ui
                .button("◀")
                .on_hover_text("previous stored iteration")
                .clicked()
            {
                index = index.saturating_sub(1);
                self.scrub = Some(index);
            }
            let slider = egui::Slider::new(&mut index, 0..=last)
                .show_value(false)
                .text("stored iteration");
            if ui.add(slider).changed() {
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
        let map = &view.maps[index.min(last)];
        ui.label(format!(
            "residual map of iteration {} (largest change {:.3e})",
            map.iteration,
            map_max(map)
        ));
        ui.label(format!(
            "stored maps: {} of {}x{} cells, {:.1} MB of a {:.0} MB budget",
            view.maps.len(),
            map.width,
            map.height,
            view.map_bytes as f64 / 1e6,
            view.map_budget_bytes as f64 / 1e6
        ))
        .on_hover_text("Maps are max-pooled to at most 128 cells a side; past the budget every other stored iteration is dropped, so the maps span the whole run.");
    }
}

fn series(history: &[IterationRecord], key: &str) -> Vec<[f64; 2]> {
    history
        .iter()
        .filter_map(|r| r.metrics.get(key).map(|v| [r.iter as f64, *v]))
        .collect()
}

/// The run's tolerance, or 1e-6 for runs that have none (0: never stop).
/// The width of the schedule and what-if controls.
const CONTROLS_WIDTH: f32 = 290.0;
/// The narrowest a convergence curve gets (two labelled ticks and a legend).
const MIN_CURVE_WIDTH: f32 = 170.0;

fn effective_tolerance(tolerance: f64) -> f64 {
    if tolerance > 0.0 { tolerance } else { 1e-6 }
}

/// Residual quantiles (log10) and the oscillating fraction per iteration.
fn curves(
    ui: &mut egui::Ui,
    history: &[IterationRecord],
    scrubbed: Option<usize>,
    what_ifs: &[WhatIfRun],
    height: f32,
) {
    // Side by side where both fit, else one above the other.
    let avail = ui.available_width().max(120.0);
    let gap = ui.spacing().item_spacing.x;
    let side_by_side = avail >= 2.0 * MIN_CURVE_WIDTH + gap;
    let (width, height) = if side_by_side {
        ((avail - gap) / 2.0, height)
    } else {
        (avail, (height - ui.spacing().item_spacing.y) / 2.0)
    };
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
    let quantiles = [
        ("p50", "residual_p50", Color32::from_rgb(86, 180, 233)),
        ("p90", "residual_p90", Color32::from_rgb(0, 158, 115)),
        ("p99", "residual_p99", Color32::from_rgb(230, 159, 0)),
    ];
    let draw = |ui: &mut egui::Ui| {
        ticks::plot("debugger quantiles", Scale::Integer, Scale::Log10)
            .x_axis_label("iteration")
            .y_axis_label("message change")
            .width(width)
            .height(height)
            .legend(
                Legend::default()
                    .text_style(egui::TextStyle::Small)
                    .background_alpha(0.6)
                    .position(egui_plot::Corner::LeftBottom),
            )
            .allow_scroll(false)
            .show(ui, |plot| {
                let max: Vec<[f64; 2]> = history
                    .iter()
                    .map(|r| [r.iter as f64, r.residual])
                    .collect();
                plot.line(
                    Line::new("largest", PlotPoints::from(log(max)))
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
                    let points: Vec<[f64; 2]> =
                        points.into_iter().filter(|p| p[1].is_finite()).collect();
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
                for (name, key, color) in quantiles {
                    plot.line(
                        Line::new(name, PlotPoints::from(log(series(history, key))))
                            .color(color)
                            .width(1.5),
                    );
                }
                mark(plot);
            });
        ticks::plot("debugger oscillating", Scale::Integer, Scale::Real)
            .x_axis_label("iteration")
            .y_axis_label("fraction of messages")
            .width(width)
            .height(height)
            .include_y(0.0)
            .include_y(1.0)
            .legend(
                Legend::default()
                    .text_style(egui::TextStyle::Small)
                    .background_alpha(0.6)
                    .position(egui_plot::Corner::LeftTop),
            )
            .allow_scroll(false)
            .show(ui, |plot| {
                plot.line(
                    Line::new(
                        "oscillating fraction",
                        PlotPoints::from(series(history, "oscillating_fraction")),
                    )
                    .color(Color32::from_rgb(204, 121, 167))
                    .width(2.0),
                );
                mark(plot);
            });
    };
    if side_by_side {
        ui.horizontal_top(draw);
    } else {
        ui.vertical(draw);
    }
}
