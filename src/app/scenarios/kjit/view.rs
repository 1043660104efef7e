//! The KJIT room's central views: per-problem errors and the uncertainty trace with
//! the threshold, problem boundaries and oracle calls (Exps. 3, 5; main Figs. 5, 6a, 8, 9);
//! the Supp C table with the paper's numbers and the incoming messages with the two test
//! curves and KJIT's log predictive variance along them (Exps. 1, 2; main Fig. 4); KJIT
//! against quadrature posteriors (Exp. 4; main Fig. 7); the random-feature tables (Supp B).

use eframe::egui::{self, Color32, RichText};
use egui_plot::{HLine, Legend, Line, LineStyle, PlotPoints, Points, VLine};

use crate::app::colors;
use crate::app::commands::UiCommand;
use crate::app::views::thin;
use crate::app::views::ticks::{self, Scale};
use crate::inference::kjit::Gaussian;
use crate::runner::Snapshot;
use crate::scenarios::IterationRecord;
use crate::scenarios::kjit::KjitControl;
use crate::scenarios::kjit::{Experiment, KjitView};
use crate::scenarios::{Probe, ScenarioControl};
use crate::viz::palette::Method;

pub const KJIT_COLOR: Color32 = colors::method(Method::Kjit);
pub const QUADRATURE_COLOR: Color32 = colors::method(Method::Quadrature);
pub const SAMPLING_COLOR: Color32 = colors::method(Method::Sampling);
/// The oracle is the importance sampler: the same colour.
const ORACLE_COLOR: Color32 = SAMPLING_COLOR;
const TAU_COLOR: Color32 = Color32::from_rgb(204, 121, 167);
const TEST1_COLOR: Color32 = colors::rgb(crate::viz::palette::TEST_CURVE_1);
const TEST2_COLOR: Color32 = colors::rgb(crate::viz::palette::TEST_CURVE_2);
const DATA_COLOR: Color32 = Color32::from_rgb(150, 150, 150);

/// Window of the moving average on the trace by default (main Fig. 5 uses 60).
const MOVING_AVERAGE: usize = 60;
/// How close (points) the pointer must be to the τ line to grab it.
const TAU_GRAB_DISTANCE: f32 = 6.0;
/// The uncertainty trace's plot id (global, so that tests can find its frame).
pub const TRACE_PLOT_ID: &str = "kjit_uncertainty_trace";

fn legend() -> Legend {
    Legend::default()
        .follow_insertion_order(true)
        .text_style(egui::TextStyle::Small)
        .background_alpha(0.7)
}

pub fn central(
    ui: &mut egui::Ui,
    view: &KjitView,
    snapshot: &Snapshot,
    commands: &mut Vec<UiCommand>,
) {
    match view.experiment {
        Experiment::Logistic | Experiment::Uci => sequence(ui, view, commands),
        Experiment::Batch | Experiment::Uncertainty => batch(ui, view),
        Experiment::CompoundGamma => compound_gamma(ui, &snapshot.history),
        // The random-feature lab has its own view (rff_lab.rs).
        Experiment::Rff => {}
        Experiment::Teaching => teaching(ui, view),
        Experiment::Sites => sites(ui, view),
    }
}

/// The EP-sites experiment: where the run stands and the posterior of w against the true w
/// (the messages themselves are on the debugger's canvas below).
fn sites(ui: &mut egui::Ui, view: &KjitView) {
    let Some(s) = &view.sites else {
        return;
    };
    ui.strong(format!(
        "EP sites: sweep {} under the {} schedule, damping {}, {} projection{}",
        s.sweeps_done,
        s.schedule.label(),
        s.damping,
        match s.operator {
            crate::scenarios::kjit::sites::SiteOperator::Quadrature => "quadrature",
            crate::scenarios::kjit::sites::SiteOperator::Kjit => "KJIT",
        },
        if s.converged { " (converged)" } else { "" }
    ));
    ui.label(format!(
        "largest site change in the last sweep {:.3e}; {} projections, {} site updates skipped",
        s.residual, s.projections, s.skipped
    ));
    ui.label(
        egui::RichText::new(
            "Each site (one example's logistic factor) sends w a Gaussian message in z_i = w·x_i; \
             the cavity is the message back. Below: every message coloured by its change in the \
             scrubbed sweep; click one for its history.",
        )
        .small()
        .weak(),
    );
    egui::Grid::new("kjit_sites_posterior")
        .striped(true)
        .show(ui, |ui| {
            ui.strong("w_j");
            ui.strong("posterior mean");
            ui.strong("posterior sd");
            ui.strong("true w");
            ui.end_row();
            for j in 0..s.posterior_mean.len().min(12) {
                ui.label(format!("{}", j + 1));
                ui.label(format!("{:+.4}", s.posterior_mean[j]));
                ui.label(format!(
                    "{:.4}",
                    s.posterior_sd.get(j).copied().unwrap_or(f64::NAN)
                ));
                ui.label(format!(
                    "{:+.4}",
                    s.w_true.get(j).copied().unwrap_or(f64::NAN)
                ));
                ui.end_row();
            }
        });
}

/// Exps. 3 and 5: errors per problem and the posterior of w above, the uncertainty trace and
/// the incoming messages below.
fn sequence(ui: &mut egui::Ui, view: &KjitView, commands: &mut Vec<UiCommand>) {
    let h = ((ui.available_height() - 70.0) / 2.0).max(120.0);
    let wide = (ui.available_width() * 0.62).max(200.0);
    let narrow = (ui.available_width() - wide - 12.0).max(120.0);
    ui.horizontal(|ui| {
        ui.vertical(|ui| {
            ui.set_width(wide);
            errors_plot(ui, view, h);
        });
        ui.vertical(|ui| {
            ui.set_width(narrow);
            posterior_plot(ui, view, h);
        });
    });
    ui.add_space(4.0);
    ui.horizontal(|ui| {
        ui.vertical(|ui| {
            ui.set_width(wide);
            trace_plot(ui, view, h, commands);
        });
        ui.vertical(|ui| {
            ui.set_width(narrow);
            messages_plot(ui, view, h);
        });
    });
}

/// The last problem's posterior mean of w under KJIT-EP and quadrature-EP, beside the true w.
fn posterior_plot(ui: &mut egui::Ui, view: &KjitView, h: f32) {
    ui.strong("Posterior mean of w, last problem");
    let points = |values: &[f64], shift: f64| -> Vec<[f64; 2]> {
        values
            .iter()
            .enumerate()
            .map(|(i, &v)| [i as f64 + 1.0 + shift, v])
            .collect()
    };
    ticks::plot("kjit_w", Scale::Integer, Scale::Real)
        .height(h - 4.0)
        .legend(legend().position(egui_plot::Corner::RightTop))
        .x_axis_label("coordinate i of w")
        .y_axis_label("posterior mean of w_i")
        .allow_scroll(false)
        .show(ui, |plot| {
            if !view.w_true.is_empty() {
                plot.points(
                    Points::new("true w", PlotPoints::from(points(&view.w_true, -0.15)))
                        .color(DATA_COLOR)
                        .shape(egui_plot::MarkerShape::Diamond)
                        .radius(3.5),
                );
            }
            plot.points(
                Points::new(
                    "quadrature-EP",
                    PlotPoints::from(points(&view.posterior_quadrature, 0.0)),
                )
                .color(QUADRATURE_COLOR)
                .radius(3.0),
            );
            plot.points(
                Points::new(
                    "KJIT-EP",
                    PlotPoints::from(points(&view.posterior_kjit, 0.15)),
                )
                .color(KJIT_COLOR)
                .radius(3.0),
            );
        });
}

/// The incoming z-messages of the shown calls (main Fig. 1), coloured by who answered, with
/// the two test curves of Fig. 4.
fn messages_plot(ui: &mut egui::Ui, view: &KjitView, h: f32) {
    ui.strong("Incoming m_{z→f} per call");
    let mut predicted = Vec::new();
    let mut asked = Vec::new();
    for (&(m, lp), &(_, oracle)) in view.messages.iter().zip(&view.trace) {
        if m.is_finite() && lp.is_finite() {
            if oracle { &mut asked } else { &mut predicted }.push([m, lp]);
        }
    }
    let (means, one, two) = crate::scenarios::kjit::batch::test_curves(100);
    ticks::plot("kjit_messages_seq", Scale::Real, Scale::Real)
        .height(h - 4.0)
        .legend(legend().position(egui_plot::Corner::LeftBottom))
        .x_axis_label("mean")
        .y_axis_label("log precision")
        .allow_scroll(false)
        .show(ui, |plot| {
            let shown = *plot.transform();
            plot.points(
                Points::new(
                    "predicted",
                    PlotPoints::from(thin::scatter(predicted, &shown, 2.0)),
                )
                .color(KJIT_COLOR.gamma_multiply(0.6))
                .radius(1.2),
            );
            plot.points(
                Points::new(
                    "oracle",
                    PlotPoints::from(thin::scatter(asked, &shown, 2.0)),
                )
                .color(ORACLE_COLOR)
                .radius(1.6),
            );
            for (name, ys, color) in [
                ("test #1", &one, TEST1_COLOR),
                ("test #2", &two, TEST2_COLOR),
            ] {
                let pts: Vec<[f64; 2]> = means.iter().zip(ys).map(|(&m, &y)| [m, y]).collect();
                plot.line(
                    Line::new(name, PlotPoints::from(pts))
                        .color(color)
                        .width(1.5),
                );
            }
        });
}

fn errors_plot(ui: &mut egui::Ui, view: &KjitView, h: f32) {
    ui.strong("Classification error per problem (main Figs. 6a, 9)");
    let names = view.problem_names.clone();
    ticks::plot("kjit_errors", Scale::Integer, Scale::Real)
        .height(h - 4.0)
        .legend(legend().position(egui_plot::Corner::RightTop))
        .include_x(0.5)
        .include_x(view.problems as f64 + 0.5)
        .include_y(0.0)
        .x_axis_label("problem")
        .y_axis_label("error")
        .allow_scroll(false)
        .x_axis_formatter(move |m, _| {
            let k = m.value.round();
            if (m.value - k).abs() > 1e-6 || k < 1.0 {
                return String::new();
            }
            names
                .get(k as usize - 1)
                .cloned()
                .unwrap_or_else(|| format!("{k:.0}"))
        })
        .show(ui, |plot| {
            for (i, (name, color)) in [
                ("KJIT-EP", KJIT_COLOR),
                ("quadrature-EP", QUADRATURE_COLOR),
                ("sampling-EP", SAMPLING_COLOR),
            ]
            .into_iter()
            .enumerate()
            {
                let points: Vec<[f64; 2]> = view
                    .errors
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| e[i].is_finite())
                    .map(|(k, e)| [k as f64 + 1.0, e[i]])
                    .collect();
                if points.is_empty() {
                    continue;
                }
                plot.line(
                    Line::new(name, PlotPoints::from(points.clone()))
                        .color(color)
                        .width(if i == 0 { 2.5 } else { 1.5 }),
                );
                plot.points(
                    Points::new(name, PlotPoints::from(points))
                        .color(color)
                        .radius(3.0),
                );
            }
        });
}

fn trace_plot(ui: &mut egui::Ui, view: &KjitView, h: f32, commands: &mut Vec<UiCommand>) {
    let min_tau = view.log_sigma_y2 + 0.01;
    let set_tau = |tau: f64, commands: &mut Vec<UiCommand>| {
        commands.push(UiCommand::Control(ScenarioControl::Kjit(
            KjitControl::SetTau(tau),
        )));
    };
    let average_id = egui::Id::unique("kjit_moving_average");
    let mut window = ui
        .ctx()
        .data_mut(|d| *d.get_persisted_mut_or(average_id, MOVING_AVERAGE));
    ui.horizontal_wrapped(|ui| {
        ui.strong("Uncertainty trace (main Figs. 5, 8)");
        let mut tau = view.tau;
        let id = ui
            .label("τ (live)")
            .on_hover_text(
                "The oracle threshold from the next problem on, without relearning; \
                 recorded in the config's tau_changes. Drag the τ line in the plot, too.",
            )
            .id;
        let edit = ui
            .add(
                egui::DragValue::new(&mut tau)
                    .speed(0.01)
                    .range(min_tau..=10.0),
            )
            .labelled_by(id);
        if edit.changed() && tau != view.tau {
            set_tau(tau, commands);
        }
        if ui
            .button("Reset operator")
            .on_hover_text(
                "Forget what KJIT learned, from the next problem on: the next minibatch goes \
                 to the oracle again (recorded in the config's operator_resets)",
            )
            .clicked()
        {
            commands.push(UiCommand::Control(ScenarioControl::Kjit(
                KjitControl::ResetOperator,
            )));
        }
        let id = ui.label("moving average").id;
        let slider = ui
            .add(egui::Slider::new(&mut window, 1..=1000).logarithmic(true).suffix(" calls"))
            .labelled_by(id);
        if slider.changed() {
            ui.ctx().data_mut(|d| d.insert_persisted(average_id, window));
        }
        ui.label(
            RichText::new(format!(
                "log predictive variance of the z-mean output per call; oracle when ≥ τ = {}; {} oracle calls of {}",
                view.tau, view.oracle_calls, view.calls
            ))
            .small()
            .weak(),
        );
        if let Some(speed) = view.timings.summary() {
            ui.label(RichText::new(speed).small().weak());
        }
    });
    let offset = view.trace_offset;
    let mut predicted = Vec::new();
    let mut oracle = Vec::new();
    for (i, &(v, asked)) in view.trace.iter().enumerate() {
        if v.is_finite() {
            let p = [(offset + i + 1) as f64, v];
            if asked { &mut oracle } else { &mut predicted }.push(p);
        }
    }
    let average = moving_average(&view.trace, offset, window);
    let text = ui.visuals().text_color();
    // The τ line is grabbed when a drag starts within a few points of it; meanwhile the plot
    // does not pan, and the line follows the pointer until it is released.
    let grab_id = egui::Id::unique("kjit_tau_grab");
    // (τ under the pointer, the plot's bounds when the drag started: [x0, y0, x1, y1]). The
    // bounds are held while dragging, because the τ line is part of the auto-bounds and would
    // otherwise move the axes under the pointer.
    let grab: Option<(f64, [f64; 4])> = ui.ctx().data(|d| d.get_temp(grab_id)).flatten();
    let near_id = egui::Id::unique("kjit_tau_near");
    let near_before: bool = ui.ctx().data(|d| d.get_temp(near_id)).unwrap_or(false);
    let shown_tau = grab.map_or(view.tau, |(tau, _)| tau);
    let shown = ticks::plot("kjit_trace", Scale::Integer, Scale::Real)
        .id(egui::Id::unique(TRACE_PLOT_ID))
        .height(h - 24.0)
        .legend(legend().position(egui_plot::Corner::RightTop))
        .x_axis_label("KJIT call")
        .y_axis_label("log variance")
        .include_y(view.log_sigma_y2 - 0.2)
        .include_y(view.tau + 1.0)
        .allow_scroll(false)
        .allow_drag(grab.is_none() && !near_before)
        .show(ui, |plot| {
            for &start in &view.problem_starts {
                if start >= offset {
                    let line = VLine::new("problem starts", (start + 1) as f64)
                        .color(DATA_COLOR.gamma_multiply(0.5))
                        .width(0.5);
                    plot.vline(line);
                }
            }
            let shown = *plot.transform();
            plot.points(
                Points::new(
                    "predicted",
                    PlotPoints::from(thin::scatter(predicted, &shown, 2.0)),
                )
                .color(KJIT_COLOR.gamma_multiply(0.6))
                .radius(1.2),
            );
            plot.points(
                Points::new(
                    "oracle",
                    PlotPoints::from(thin::scatter(oracle, &shown, 2.0)),
                )
                .color(ORACLE_COLOR)
                .radius(1.6),
            );
            plot.line(
                Line::new(
                    format!("moving average ({window})"),
                    PlotPoints::from(thin::line(&average, &shown)),
                )
                .color(text)
                .width(1.5),
            );
            plot.hline(
                HLine::new("threshold τ (drag)", shown_tau)
                    .color(TAU_COLOR)
                    .width(if grab.is_some() || near_before {
                        3.0
                    } else {
                        1.5
                    }),
            );
            plot.hline(
                HLine::new("log σ_y² (floor)", view.log_sigma_y2)
                    .color(DATA_COLOR)
                    .style(LineStyle::dashed_loose()),
            );
            if let Some(inspected) = &view.inspected {
                plot.vline(
                    VLine::new("inspected call", (inspected.call + 1) as f64)
                        .color(TAU_COLOR)
                        .width(1.5),
                );
            }
            if let Some((_, [x0, y0, x1, y1])) = grab {
                plot.set_plot_bounds(egui_plot::PlotBounds::from_min_max([x0, y0], [x1, y1]));
            }
            let bounds = plot.plot_bounds();
            let bounds = [
                bounds.min()[0],
                bounds.min()[1],
                bounds.max()[0],
                bounds.max()[1],
            ];
            let tau_y = plot
                .screen_from_plot(egui_plot::PlotPoint::new(0.0, shown_tau))
                .y;
            let near = plot
                .response()
                .hover_pos()
                .is_some_and(|p| (p.y - tau_y).abs() <= TAU_GRAB_DISTANCE);
            // Not pointer_coordinate(): it subtracts this frame's drag delta (it assumes the
            // drag pans the plot), which would leave the line one frame behind the pointer.
            let pointer = plot
                .ctx()
                .input(|i| i.pointer.latest_pos())
                .map(|p| plot.plot_from_screen(p));
            (pointer, near, bounds)
        });
    let response = &shown.response;
    let (pointer, near, bounds) = shown.inner;
    ui.ctx().data_mut(|d| d.insert_temp(near_id, near));
    if near || grab.is_some() {
        ui.ctx().set_cursor_icon(egui::CursorIcon::ResizeVertical);
    }
    if response.drag_started() && near_before {
        ui.ctx()
            .data_mut(|d| d.insert_temp(grab_id, Some((shown_tau, bounds))));
    } else if let Some((_, held)) = grab
        && response.dragged()
    {
        if let Some(p) = pointer {
            let tau = p.y.clamp(min_tau, 10.0);
            ui.ctx()
                .data_mut(|d| d.insert_temp(grab_id, Some((tau, held))));
        }
    } else if let Some((tau, _)) = grab {
        // Released: one control with the final value, so tau_changes records one change.
        ui.ctx()
            .data_mut(|d| d.insert_temp::<Option<(f64, [f64; 4])>>(grab_id, None));
        if tau != view.tau {
            set_tau(tau, commands);
        }
    }
    if response.clicked()
        && let Some(p) = pointer
    {
        let call = (p.x.round() as i64 - 1).clamp(0, view.calls.saturating_sub(1) as i64);
        commands.push(UiCommand::Select(Probe::Node(call as usize)));
    }
}

/// The inspected call (main Fig. 3b): the cavity, the quadrature projected belief, the
/// oracle's answer and KJIT's prediction now, with their KL from the reference.
pub fn inspected_call(ui: &mut egui::Ui, view: &KjitView, height: f32) {
    let Some(c) = &view.inspected else {
        ui.label(
            RichText::new("Click the uncertainty trace to inspect a call.")
                .small()
                .weak(),
        );
        return;
    };
    ui.strong(format!("Call {} (problem {})", c.call + 1, c.problem));
    let answered = if c.oracle_answered {
        "the oracle answered"
    } else {
        "KJIT predicted"
    };
    ui.label(
        RichText::new(format!(
            "m_z→f = N({:.3}, {:.3e}), m_p→f = Beta({:.2}, {:.2}); {answered} (log variance {:.2})",
            c.cavity.mean, c.cavity.var, c.p.alpha, c.p.beta, c.log_var_then
        ))
        .small(),
    );
    let fmt_kl = |k: Option<f64>| k.map_or("–".to_string(), |k| format!("{k:.2e}"));
    ui.label(
        RichText::new(format!(
            "KL[quadrature ‖ oracle] {}, KL[quadrature ‖ KJIT now] {}",
            fmt_kl(c.kl_oracle),
            fmt_kl(c.kl_predicted)
        ))
        .small(),
    );
    let q = c.quadrature;
    let sd = q.var.sqrt().max(1e-6);
    let (lo, hi) = (q.mean - 5.0 * sd, q.mean + 5.0 * sd);
    let curve = |g: Gaussian| -> Vec<[f64; 2]> {
        (0..=200)
            .map(|i| {
                let z = lo + (hi - lo) * i as f64 / 200.0;
                let d = (-(z - g.mean).powi(2) / (2.0 * g.var)).exp()
                    / (2.0 * std::f64::consts::PI * g.var).sqrt();
                [z, d]
            })
            .collect()
    };
    ticks::plot("kjit_inspected", Scale::Real, Scale::Real)
        .height(height)
        .legend(legend().position(egui_plot::Corner::RightTop))
        .x_axis_label("z")
        .y_axis_label("density of z")
        .include_y(0.0)
        .allow_scroll(false)
        .show(ui, |plot| {
            plot.line(
                Line::new("quadrature (reference)", PlotPoints::from(curve(q)))
                    .color(QUADRATURE_COLOR)
                    .width(3.0),
            );
            if let Some(o) = c.oracle {
                plot.line(
                    Line::new("oracle", PlotPoints::from(curve(o)))
                        .color(ORACLE_COLOR)
                        .style(LineStyle::dashed_loose())
                        .width(2.0),
                );
            }
            if let Some(p) = c.predicted_now.filter(Gaussian::is_proper) {
                plot.line(
                    Line::new("KJIT now", PlotPoints::from(curve(p)))
                        .color(KJIT_COLOR)
                        .width(1.5),
                );
            }
        });
}

fn moving_average(trace: &[(f64, bool)], offset: usize, length: usize) -> Vec<[f64; 2]> {
    let length = length.max(1);
    let mut out = Vec::new();
    let mut window = std::collections::VecDeque::with_capacity(length);
    let mut sum = 0.0;
    for (i, &(v, _)) in trace.iter().enumerate() {
        if !v.is_finite() {
            continue;
        }
        window.push_back(v);
        sum += v;
        if window.len() > length {
            sum -= window.pop_front().unwrap_or(0.0);
        }
        if window.len() == length {
            out.push([(offset + i + 1) as f64, sum / length as f64]);
        }
    }
    out
}

/// The two test curves of main Fig. 4 (`ys` against the curves' means), in their colours.
fn test_curve_lines(plot: &mut egui_plot::PlotUi<'_>, means: &[f64], ys: [&[f64]; 2]) {
    for ((name, color), ys) in [("test #1", TEST1_COLOR), ("test #2", TEST2_COLOR)]
        .into_iter()
        .zip(ys)
    {
        let pts: Vec<[f64; 2]> = means.iter().zip(ys).map(|(&m, &y)| [m, y]).collect();
        plot.line(
            Line::new(name, PlotPoints::from(pts))
                .color(color)
                .width(2.0),
        );
    }
}

/// Exps. 1 and 2: the Supp C table, the incoming messages with the test curves, and the log
/// predictive variance along them.
fn batch(ui: &mut egui::Ui, view: &KjitView) {
    ui.strong("Supp C: mean (s.d.) of log KL[q ‖ q̂] on the test tuples");
    ui.label(
        RichText::new(format!(
            "{} tuples collected from quadrature-EP; each operator picks its width and λ by leave-one-out.",
            view.tuples
        ))
        .small()
        .weak(),
    );
    egui::Grid::new("kjit_table")
        .num_columns(5)
        .striped(true)
        .spacing([16.0, 4.0])
        .show(ui, |ui| {
            for head in ["operator", "features", "log KL (here)", "paper", "seconds"] {
                ui.label(RichText::new(head).strong());
            }
            ui.end_row();
            for r in &view.table {
                ui.label(r.operator);
                ui.label(r.features.to_string());
                ui.label(format!("{:.2} ({:.2})", r.mean_log_kl, r.sd_log_kl));
                ui.label(format!(
                    "{:.2} ({:.2})",
                    r.paper_mean_log_kl, r.paper_sd_log_kl
                ));
                ui.label(format!("{:.1}", r.seconds));
                ui.end_row();
            }
        });
    let Some(c) = &view.curves else {
        ui.add_space(8.0);
        ui.label("The test curves appear once KJIT is fitted.");
        return;
    };
    ui.add_space(6.0);
    let h = ((ui.available_height() - 60.0) / 2.0).max(120.0);
    let w = (ui.available_width() - 12.0) / 2.0;
    ui.horizontal(|ui| {
        ui.vertical(|ui| {
            ui.set_width(w);
            ui.strong("Incoming m_{z→f}: training tuples and test curves (Fig. 4a)");
            ticks::plot("kjit_messages", Scale::Real, Scale::Real)
                .height(h - 20.0)
                .width(w)
                .legend(legend().position(egui_plot::Corner::LeftBottom))
                .x_axis_label("mean")
                .y_axis_label("log precision")
                .allow_scroll(false)
                .show(ui, |plot| {
                    let data: Vec<[f64; 2]> = c.training_z.iter().map(|&(m, p)| [m, p]).collect();
                    plot.points(
                        Points::new("training tuples", PlotPoints::from(data))
                            .color(DATA_COLOR.gamma_multiply(0.6))
                            .radius(1.2),
                    );
                    test_curve_lines(
                        plot,
                        &c.means,
                        [&c.log_precision_test1, &c.log_precision_test2],
                    );
                });
        });
        ui.vertical(|ui| {
            ui.set_width(w);
            ui.strong("KJIT log predictive variance along the curves (Fig. 4b)");
            ticks::plot("kjit_curves", Scale::Real, Scale::Real)
                .height(h - 20.0)
                .width(w)
                .legend(legend().position(egui_plot::Corner::LeftTop))
                .x_axis_label("mean of m_{z→f}")
                .y_axis_label("log variance")
                .allow_scroll(false)
                .show(ui, |plot| {
                    test_curve_lines(plot, &c.means, [&c.log_var_test1, &c.log_var_test2]);
                });
        });
    });
    ui.horizontal(|ui| {
        ui.vertical(|ui| {
            ui.set_width(w);
            ui.strong("KJIT: histogram of log KL on the test tuples (Fig. 3a)");
            let kls: Vec<f64> = c.test_log_var_log_kl.iter().map(|p| p.1).collect();
            let steps = histogram_steps(&kls, 40);
            ticks::plot("kjit_kl_histogram", Scale::Real, Scale::Integer)
                .height(h - 20.0)
                .width(w)
                .x_axis_label("log KL")
                .y_axis_label("tuples")
                .include_y(0.0)
                .allow_scroll(false)
                .show(ui, |plot| {
                    plot.line(
                        Line::new("test tuples", PlotPoints::from(steps))
                            .color(KJIT_COLOR)
                            .width(1.5),
                    );
                });
        });
        ui.vertical(|ui| {
            ui.set_width(w);
            ui.strong(format!(
                "Log KL against log predictive variance (Supp Fig. 10), r = {:.2}",
                c.correlation_log_var_log_kl
            ));
            let pts: Vec<[f64; 2]> = c.test_log_var_log_kl.iter().map(|&(v, k)| [v, k]).collect();
            ticks::plot("kjit_kl_scatter", Scale::Real, Scale::Real)
                .height(h - 20.0)
                .width(w)
                .x_axis_label("log predictive variance")
                .y_axis_label("log KL")
                .allow_scroll(false)
                .show(ui, |plot| {
                    plot.points(
                        Points::new("test tuples", PlotPoints::from(pts))
                            .color(KJIT_COLOR.gamma_multiply(0.7))
                            .radius(1.3),
                    );
                });
        });
    });
}

/// A histogram of `values` in `bins` equal bins, as the corners of a staircase.
fn histogram_steps(values: &[f64], bins: usize) -> Vec<[f64; 2]> {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if finite.is_empty() || hi <= lo {
        return Vec::new();
    }
    let width = (hi - lo) / bins as f64;
    let mut counts = vec![0usize; bins];
    for v in finite {
        counts[(((v - lo) / width) as usize).min(bins - 1)] += 1;
    }
    let mut out = vec![[lo, 0.0]];
    for (i, &c) in counts.iter().enumerate() {
        let x0 = lo + i as f64 * width;
        out.push([x0, c as f64]);
        out.push([x0 + width, c as f64]);
    }
    out.push([hi, 0.0]);
    out
}

fn metric(history: &[IterationRecord], key: &str) -> Vec<Option<f64>> {
    history
        .iter()
        .map(|r| r.metrics.get(key).copied())
        .collect()
}

/// Exp. 4: KJIT's posterior against quadrature's, log shape and log rate.
fn compound_gamma(ui: &mut egui::Ui, history: &[IterationRecord]) {
    ui.strong("Compound gamma: KJIT-EP against quadrature posteriors (main Fig. 7)");
    let oracle = metric(history, "oracle");
    let oracles = oracle.iter().filter(|o| **o == Some(1.0)).count();
    ui.label(
        RichText::new(format!(
            "{} problems, {} oracle calls (orange)",
            history.len(),
            oracles
        ))
        .small()
        .weak(),
    );
    let h = (ui.available_height() - 10.0).max(120.0);
    let w = (ui.available_width() - 12.0) / 2.0;
    ui.horizontal(|ui| {
        for (title, kjit, quad) in [
            ("log shape", "log_shape_kjit", "log_shape_quadrature"),
            ("log rate", "log_rate_kjit", "log_rate_quadrature"),
        ] {
            let (k, q) = (metric(history, kjit), metric(history, quad));
            let mut predicted = Vec::new();
            let mut asked = Vec::new();
            for i in 0..history.len() {
                if let (Some(a), Some(b)) = (q[i], k[i]) {
                    if oracle[i] == Some(1.0) {
                        &mut asked
                    } else {
                        &mut predicted
                    }
                    .push([a, b]);
                }
            }
            let lo = predicted
                .iter()
                .chain(&asked)
                .flat_map(|p| p.iter().copied())
                .fold(f64::INFINITY, f64::min);
            let hi = predicted
                .iter()
                .chain(&asked)
                .flat_map(|p| p.iter().copied())
                .fold(f64::NEG_INFINITY, f64::max);
            ui.vertical(|ui| {
                ui.set_width(w);
                ticks::plot(format!("kjit_gamma_{title}"), Scale::Real, Scale::Real)
                    .height(h - 10.0)
                    .width(w)
                    .data_aspect(1.0)
                    .legend(legend().position(egui_plot::Corner::LeftTop))
                    .x_axis_label(format!("{title}, quadrature"))
                    .y_axis_label(format!("{title}, KJIT"))
                    .allow_scroll(false)
                    .show(ui, |plot| {
                        if lo.is_finite() && hi.is_finite() {
                            plot.line(
                                Line::new("y = x", PlotPoints::from(vec![[lo, lo], [hi, hi]]))
                                    .color(DATA_COLOR)
                                    .style(LineStyle::dashed_loose()),
                            );
                        }
                        let shown = *plot.transform();
                        let predicted = thin::scatter(predicted, &shown, 2.0);
                        plot.points(
                            Points::new("predicted", PlotPoints::from(predicted))
                                .color(KJIT_COLOR)
                                .radius(1.5),
                        );
                        let asked = thin::scatter(asked, &shown, 2.0);
                        plot.points(
                            Points::new("oracle", PlotPoints::from(asked))
                                .color(ORACLE_COLOR)
                                .radius(2.0),
                        );
                    });
            });
        }
    });
}

/// Points of the 2-sd ellipse of a 2 × 2 covariance (row-major) around `mean`.
fn ellipse(mean: [f64; 2], cov: [f64; 4]) -> Vec<[f64; 2]> {
    let (a, b, d) = (cov[0], 0.5 * (cov[1] + cov[2]), cov[3]);
    // Cholesky of [[a, b], [b, d]].
    let l11 = a.max(0.0).sqrt();
    let l21 = if l11 > 0.0 { b / l11 } else { 0.0 };
    let l22 = (d - l21 * l21).max(0.0).sqrt();
    (0..=100)
        .map(|k| {
            let t = std::f64::consts::TAU * k as f64 / 100.0;
            let (u, v) = (2.0 * t.cos(), 2.0 * t.sin());
            [mean[0] + l11 * u, mean[1] + l21 * u + l22 * v]
        })
        .collect()
}

/// The line `w · x = 0` through the box `[-r, r]²`.
fn decision_line(w: [f64; 2], r: f64) -> Vec<[f64; 2]> {
    let norm = (w[0] * w[0] + w[1] * w[1]).sqrt();
    if norm == 0.0 {
        return Vec::new();
    }
    let dir = [-w[1] / norm, w[0] / norm];
    vec![[-r * dir[0], -r * dir[1]], [r * dir[0], r * dir[1]]]
}

/// The teaching mode: the data with the decision lines (left), the posterior of w (right).
fn teaching(ui: &mut egui::Ui, view: &KjitView) {
    let Some(t) = &view.teaching else {
        ui.label("Press Step to update the first EP site.");
        return;
    };
    ui.strong(format!(
        "Problem {}, sweep {}, site {} updated ({})",
        t.problem,
        t.sweep,
        t.site + 1,
        if t.oracle {
            "the oracle answered KJIT"
        } else {
            "KJIT predicted"
        }
    ));
    let h = (ui.available_height() - 10.0).max(200.0);
    let w = (ui.available_width() - 12.0) / 2.0;
    ui.horizontal(|ui| {
        ui.vertical(|ui| {
            ui.set_width(w);
            ui.label("Data and the decision line w · x = 0 of each posterior mean");
            let r =
                t.x.iter()
                    .flat_map(|p| p.iter().map(|v| v.abs()))
                    .fold(1.0, f64::max);
            ticks::plot("kjit_teach_data", Scale::Real, Scale::Real)
                .x_axis_label("input x_1")
                .y_axis_label("input x_2")
                .height(h - 20.0)
                .width(w)
                .data_aspect(1.0)
                .legend(legend().position(egui_plot::Corner::LeftTop))
                .allow_scroll(false)
                .show(ui, |plot| {
                    let (pos, neg): (Vec<_>, Vec<_>) = t.x.iter().zip(&t.y).partition(|(_, y)| **y);
                    plot.points(
                        Points::new(
                            "y = 1",
                            PlotPoints::from(pos.iter().map(|(p, _)| **p).collect::<Vec<_>>()),
                        )
                        .color(TEST1_COLOR)
                        .radius(3.0),
                    );
                    plot.points(
                        Points::new(
                            "y = 0",
                            PlotPoints::from(neg.iter().map(|(p, _)| **p).collect::<Vec<_>>()),
                        )
                        .color(TEST2_COLOR)
                        .radius(3.0),
                    );
                    if let Some(p) = t.x.get(t.site) {
                        plot.points(
                            Points::new("updated site", PlotPoints::from(vec![*p]))
                                .color(TAU_COLOR)
                                .filled(false)
                                .radius(8.0),
                        );
                    }
                    plot.line(
                        Line::new("true w", PlotPoints::from(decision_line(t.w_true, r)))
                            .color(DATA_COLOR)
                            .style(LineStyle::dashed_loose())
                            .width(1.5),
                    );
                    for (name, wv, color) in [
                        ("quadrature-EP", t.mean_quadrature, QUADRATURE_COLOR),
                        ("KJIT-EP", t.mean_kjit, KJIT_COLOR),
                    ] {
                        plot.line(
                            Line::new(name, PlotPoints::from(decision_line(wv, r)))
                                .color(color)
                                .width(2.0),
                        );
                    }
                });
        });
        ui.vertical(|ui| {
            ui.set_width(w);
            ui.label("Posterior of w: mean and 2-s.d. ellipse");
            ticks::plot("kjit_teach_w", Scale::Real, Scale::Real)
                .x_axis_label("w_1")
                .y_axis_label("w_2")
                .height(h - 20.0)
                .width(w)
                .data_aspect(1.0)
                .legend(legend().position(egui_plot::Corner::LeftTop))
                .allow_scroll(false)
                .show(ui, |plot| {
                    plot.points(
                        Points::new("true w", PlotPoints::from(vec![t.w_true]))
                            .color(DATA_COLOR)
                            .shape(egui_plot::MarkerShape::Diamond)
                            .radius(6.0),
                    );
                    for (name, mean, cov, color) in [
                        (
                            "quadrature-EP",
                            t.mean_quadrature,
                            t.cov_quadrature,
                            QUADRATURE_COLOR,
                        ),
                        ("KJIT-EP", t.mean_kjit, t.cov_kjit, KJIT_COLOR),
                    ] {
                        plot.line(
                            Line::new(name, PlotPoints::from(ellipse(mean, cov)))
                                .color(color)
                                .width(2.0),
                        );
                        plot.points(
                            Points::new(name, PlotPoints::from(vec![mean]))
                                .color(color)
                                .radius(4.0),
                        );
                    }
                });
        });
    });
}
