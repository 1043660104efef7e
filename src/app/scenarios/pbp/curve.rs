//! The pendigits view's "Accuracy over N" panel (Wang & Gordon 2020, Sec. 6, Fig. 7): test
//! accuracy against training size for PBP and EM-HMM, the mean over seeds as a line on a log N
//! axis, the min–max over seeds as a band and each seed as a point. The curve comes from the
//! worker (`scenarios::pbp::curve_task::CurveTask`, the sweep's sizes and seeds with the run's
//! model settings; progress and Cancel here and in the status bar) or from a sweep's
//! pendigits.json opened with File > Open or dropped on the window. Cost: O(sizes × seeds)
//! plot items per frame.

use std::sync::Arc;

use eframe::egui::{self, RichText};
use egui_plot::{ColorConflictHandling, FilledArea, Legend, Line, MarkerShape, Points};

use super::pen::color;
use crate::app::commands::UiCommand;
use crate::app::panels::status::TaskProgress;
use crate::app::views::curves::hover_head;
use crate::app::views::ticks::{self, Scale};
use crate::scenarios::Task;
use crate::scenarios::pbp::PbpConfig;
use crate::scenarios::pbp::curve_task::{CurveTask, LABEL};
use crate::scenarios::pbp::pendigits::{AccuracyPoint, PendigitsReport};

/// The label of the run button (tests find it by this text).
pub const RUN_LABEL: &str = "Run accuracy-over-N sweep";
/// The label of the open button.
pub const OPEN_LABEL: &str = "Open pendigits.json…";

/// The curve shown and where it came from.
#[derive(Default)]
pub struct CurvePanel {
    pub curve: Option<Arc<PendigitsReport>>,
    /// "computed in the window", or the file it was read from.
    pub source: String,
}

impl CurvePanel {
    pub fn set(&mut self, curve: Arc<PendigitsReport>, source: impl Into<String>) {
        self.curve = Some(curve);
        self.source = source.into();
    }
}

/// The two methods of the curve: (legend name, colour key, points).
fn methods(r: &PendigitsReport) -> [(&'static str, &'static str, &[AccuracyPoint]); 2] {
    [("PBP", "pbp", &r.pbp), ("EM-HMM", "em_hmm", &r.em_hmm)]
}

/// The panel: heading, run / cancel / open, then the plot (or what to do to get one).
/// `config` is the running pendigits config (None before a run: the button is then off);
/// `task` the worker's job in progress, if any.
pub fn show(
    ui: &mut egui::Ui,
    panel: &CurvePanel,
    config: Option<&PbpConfig>,
    task: Option<TaskProgress>,
    height: f32,
    commands: &mut Vec<UiCommand>,
) {
    let ours = task.filter(|t| t.label == LABEL);
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new("Accuracy over N").strong());
        let task_of_config = config.map(CurveTask::for_config);
        let hint = task_of_config.as_ref().map_or_else(
            || "needs a pendigits run".to_string(),
            |t| {
                format!(
                    "Learns PBP and EM-HMM at N = {:?} with {} seeds each (the sweep's defaults) \
                     and this run's k, σ, D_f, λ₁ and EM restarts, on the engine thread; the run \
                     pauses meanwhile. Headless: {}",
                    t.args.sizes,
                    t.args.seeds,
                    t.command_line()
                )
            },
        );
        let button = ui
            .add_enabled(
                task.is_none() && task_of_config.is_some(),
                egui::Button::new(RUN_LABEL),
            )
            .on_hover_text(hint)
            .on_disabled_hover_text("a job is running, or no pendigits run is loaded");
        if button.clicked()
            && let Some(t) = task_of_config
        {
            commands.push(UiCommand::RunTask(Task::Pbp(t)));
        }
        if ui
            .button(OPEN_LABEL)
            .on_hover_text("Read the pendigits.json of `beliefscope sweep pbp --model pendigits --out DIR` (or drop it on the window)")
            .clicked()
        {
            commands.push(UiCommand::OpenImageDialog);
        }
        if let Some(t) = ours {
            let fraction = t.done as f32 / t.total.max(1) as f32;
            ui.add(
                egui::ProgressBar::new(fraction)
                    .desired_width(180.0)
                    .text(format!("{} / {} fits", t.done, t.total)),
            );
            if ui.button("Cancel").clicked() {
                commands.push(UiCommand::CancelTask);
            }
        }
    });
    let Some(r) = &panel.curve else {
        ui.label(
            RichText::new(if ours.is_some() {
                "computing: each (N, seed) learns ten PBP chains and ten EM-HMMs …"
            } else {
                "no curve yet: run the sweep here, or open a sweep's pendigits.json"
            })
            .weak(),
        );
        return;
    };
    plot(ui, r, height);
    ui.label(
        RichText::new(format!(
            "{}  ·  {} seeds {:?}  ·  k = {}, σ = {}, D_f = {}, λ₁ = {}, EM restarts {}  ·  line: mean, band: min–max over seeds, dots: each seed",
            panel.source,
            r.seeds.len(),
            r.seeds,
            r.states,
            r.sigma,
            r.dim,
            r.lambda1,
            r.em_restarts
        ))
        .small()
        .weak(),
    );
}

fn plot(ui: &mut egui::Ui, r: &PendigitsReport, height: f32) {
    // The view above may have widened the layout past the visible panel; keep to what shows.
    let width = (ui.clip_rect().right() - ui.cursor().left() - 8.0).max(280.0);
    ticks::plot("pen_accuracy_over_n", Scale::Log10, Scale::Real)
        .height(height)
        .width(width)
        .legend(
            Legend::default()
                .follow_insertion_order(true)
                // Band, seeds and mean share a name; the entry takes the mean's colour.
                .color_conflict_handling(ColorConflictHandling::PickLast)
                .position(egui_plot::Corner::RightBottom),
        )
        .allow_scroll(false)
        .x_axis_label("training size N (digits, log scale)")
        .y_axis_label("test accuracy (%)")
        .include_y(100.0)
        .label_formatter(|hover| {
            let (head, p) = hover_head(hover);
            Some(format!(
                "{head}N = {:.0}\naccuracy {:.2} %",
                10f64.powf(p.x),
                p.y
            ))
        })
        .show(ui, |plot| {
            for (name, key, points) in methods(r) {
                let c = color(key);
                let xs: Vec<f64> = points.iter().map(|p| (p.n as f64).log10()).collect();
                let lo: Vec<f64> = points.iter().map(|p| 100.0 * p.min).collect();
                let hi: Vec<f64> = points.iter().map(|p| 100.0 * p.max).collect();
                plot.add(
                    FilledArea::new(name, &xs, &lo, &hi)
                        .fill_color(c.gamma_multiply(0.18))
                        .stroke(egui::Stroke::NONE),
                );
                let seeds: Vec<[f64; 2]> = points
                    .iter()
                    .flat_map(|p| {
                        p.per_seed
                            .iter()
                            .map(move |a| [(p.n as f64).log10(), 100.0 * a])
                    })
                    .collect();
                plot.points(
                    Points::new(name, seeds)
                        .color(c.gamma_multiply(0.7))
                        .shape(MarkerShape::Circle)
                        .radius(2.0),
                );
                let mean: Vec<[f64; 2]> = points
                    .iter()
                    .map(|p| [(p.n as f64).log10(), 100.0 * p.mean])
                    .collect();
                plot.line(Line::new(name, mean.clone()).color(c).width(2.0));
                plot.points(Points::new(name, mean).color(c).radius(3.5));
            }
        });
}
