//! The KJIT room (Jitkrittum et al. 2015, Exps. 1–5 and Supp B): the experiment chooser and its
//! settings (`params`), the experiment's plots and tables (`view`), and the run's counters in the
//! inspector.

pub mod params;
pub mod rff_lab;
pub mod view;

use eframe::egui;

use super::{RoomContext, ScenarioUi};
use crate::app::views::curves;
use crate::runner::Snapshot;
use crate::scenarios::kjit::{Experiment, KjitConfig, KjitView};
use crate::scenarios::{Probe, Registered, ScenarioConfig};

#[derive(Default)]
pub struct KjitRoom {
    rff_textures: rff_lab::RffTextures,
}

impl ScenarioUi for KjitRoom {
    fn name(&self) -> &'static str {
        "kjit"
    }

    fn explanation(&self) -> &'static str {
        super::explanations::KJIT
    }

    fn params(&mut self, ui: &mut egui::Ui, config: &mut ScenarioConfig, _: &mut RoomContext<'_>) {
        if let Some(c) = KjitConfig::of_mut(config) {
            params::kjit_ui(ui, c);
        }
    }

    fn central(&mut self, ui: &mut egui::Ui, snapshot: &Snapshot, cx: &mut RoomContext<'_>) {
        let Some(v) = KjitView::of(&snapshot.view) else {
            return;
        };
        match &v.rff {
            Some(report) => rff_lab::show(ui, report, &mut self.rff_textures),
            None => view::central(ui, v, snapshot, cx.commands),
        }
    }

    fn inspector(&mut self, ui: &mut egui::Ui, snapshot: &Snapshot, cx: &mut RoomContext<'_>) {
        let Some(v) = KjitView::of(&snapshot.view) else {
            return;
        };
        ui.label(format!(
            "Step {} of {}",
            snapshot.history.len(),
            snapshot.config.max_iters().unwrap_or(0)
        ));
        let series = match v.experiment {
            Experiment::Logistic | Experiment::Uci => vec![
                curves::Series::metric("oracle fraction", "oracle_fraction"),
                curves::Series::metric("|error KJIT − quadrature|", "error_difference"),
            ],
            Experiment::CompoundGamma => vec![curves::Series::metric("oracle", "oracle")],
            Experiment::Teaching => vec![
                curves::Series::metric("|μ KJIT − μ quadrature|", "posterior_mean_distance"),
                curves::Series::metric("oracle", "oracle"),
            ],
            Experiment::Sites => vec![
                curves::Series::metric("largest site change", "site_residual"),
                curves::Series::metric("oscillating fraction", "oscillating_fraction"),
            ],
            _ => Vec::new(),
        };
        if !v.table.is_empty() {
            selection_table(ui, v);
        }
        if matches!(v.experiment, Experiment::Logistic | Experiment::Uci) {
            view::inspected_call(ui, v, cx.heights.curve.max(160.0));
        }
        // Exps. 3 and 5 step one problem (data set) at a time; the others one EP round.
        let step_name = match v.experiment {
            Experiment::Logistic | Experiment::Uci => "problem",
            Experiment::Sites => "EP sweep",
            _ => "step",
        };
        if !series.is_empty() {
            curves::metrics_plot_over(
                ui,
                step_name,
                "kjit_side",
                side_quantity(v.experiment),
                &snapshot.history,
                &series,
                &[],
                snapshot.config.max_iters(),
                cx.heights.curve,
            );
        }
        if matches!(v.experiment, Experiment::Logistic | Experiment::Uci) {
            let seconds = vec![
                curves::Series::metric("seconds KJIT-EP", "seconds_kjit"),
                curves::Series::metric("seconds quadrature-EP", "seconds_quadrature"),
                curves::Series::metric("seconds sampling-EP", "seconds_sampling"),
            ];
            curves::metrics_plot_over(
                ui,
                step_name,
                "kjit_seconds",
                "seconds",
                &snapshot.history,
                &seconds,
                &[],
                snapshot.config.max_iters(),
                cx.heights.curve,
            );
        }
    }

    fn selection_is_valid(&self, snapshot: &Snapshot, selection: Probe) -> bool {
        KjitView::of(&snapshot.view)
            .is_some_and(|v| matches!(selection, Probe::Node(call) if call < v.calls))
    }

    fn status(&self, snapshot: &Snapshot) -> Vec<String> {
        let Some(v) = KjitView::of(&snapshot.view) else {
            return Vec::new();
        };
        match v.experiment {
            Experiment::Logistic | Experiment::Uci => vec![
                format!("problem {}/{}", v.problems_done, v.problems),
                format!(
                    "oracle {}/{} calls ({:.1}%)",
                    v.oracle_calls,
                    v.calls,
                    100.0 * v.oracle_calls as f64 / v.calls.max(1) as f64
                ),
            ],
            Experiment::Batch | Experiment::Uncertainty => vec![
                format!("{} tuples", v.tuples),
                format!("{} operators scored", v.table.len()),
            ],
            Experiment::Sites => v
                .sites
                .as_ref()
                .map(|s| {
                    vec![
                        format!("sweep {}", s.sweeps_done),
                        format!("site change {:.2e}", s.residual),
                    ]
                })
                .unwrap_or_default(),
            _ => Vec::new(),
        }
    }
}

/// What leave-one-out chose for each operator and output (Exp. 1).
fn selection_table(ui: &mut egui::Ui, v: &KjitView) {
    ui.strong("Leave-one-out choices");
    ui.label(
        egui::RichText::new("width factor × median and λ = σ_y²/σ₀², per output")
            .small()
            .weak(),
    );
    egui::Grid::new("kjit_selection")
        .num_columns(3)
        .striped(true)
        .show(ui, |ui| {
            for head in ["operator", "mean output", "log-variance output"] {
                ui.label(egui::RichText::new(head).strong());
            }
            ui.end_row();
            for r in &v.table {
                ui.label(r.operator);
                for s in &r.selection {
                    ui.label(format!("{:.2} · λ {:.0e}", s.median_factor, s.lambda));
                }
                ui.end_row();
            }
        });
}

/// The y label of the side plot of `experiment`'s per-step metrics (all unitless: fractions,
/// 0/1 oracle flags, a distance in w's coordinates).
fn side_quantity(experiment: Experiment) -> &'static str {
    match experiment {
        // The oracle's share of calls and a difference of classification error rates.
        Experiment::Logistic | Experiment::Uci => "fraction",
        Experiment::CompoundGamma => "oracle consulted (1 = yes)",
        Experiment::Teaching => "distance in w / oracle (1 = yes)",
        Experiment::Sites => "change / fraction",
        _ => "value",
    }
}
