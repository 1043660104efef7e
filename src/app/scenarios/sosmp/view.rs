//! The SOSMP convergence laboratory (Noorshams & Wainwright 2013, Figs. 5-8).
//!
//! Centre: the log-log plot of the normalised error, eq. 38's `e_t / e_0` or the squared L2 error
//! of the expansion (each sample path dashed, their mean solid, a slope −1 line and the floor),
//! finished sweeps overlaid on the same axes (r, k, α, n) and the final error against r (Fig. 8)
//! or the fitted slope against the chain length (the depth sweep); below it, the node and message
//! choosers, the numbers and why the slope is not −1 (Theorem 1 and the per-edge gains).
//! Inspector: the selected message (its expansion raw, clipped and normalised against `m*`, its
//! coefficients against `a*` and `a_∞`, its latest k samples over the sampling density) or the
//! selected node (SOSMP belief against grid BP, its potential and its edges' potentials).

use std::sync::Arc;

use eframe::egui::{self, Color32, RichText};
use egui_plot::{
    Bar, BarChart, GridInput, GridMark, HLine, HoverPosition, Legend, Line, LineStyle, Plot,
    PlotPoints, Points,
};

use crate::app::commands::UiCommand;
use crate::app::views::curves::{decade_spacer, power_of_ten_label};
use crate::scenarios::Probe;
use crate::scenarios::Task;
use crate::scenarios::sosmp::SweepTask;
use crate::scenarios::sosmp::sweep::SweepParameter;
use crate::scenarios::sosmp::{
    EdgeInspection, NodeInspection, SosmpConfig, SosmpView, SweepResult, SweepSpec,
};

const MEAN_COLOR: Color32 = Color32::from_rgb(66, 165, 245);
const PATH_COLOR: Color32 = Color32::from_rgb(144, 164, 174);
const REFERENCE_COLOR: Color32 = Color32::from_rgb(102, 187, 106);
const FLOOR_COLOR: Color32 = Color32::from_rgb(239, 108, 0);
const SLOPE_COLOR: Color32 = Color32::from_rgb(158, 158, 158);
const SAMPLE_COLOR: Color32 = Color32::from_rgb(236, 64, 122);
const FIXED_POINT_COLOR: Color32 = Color32::from_rgb(171, 71, 188);
/// Colours of overlaid sweep curves.
const SWEEP_COLORS: [Color32; 7] = [
    Color32::from_rgb(171, 71, 188),
    Color32::from_rgb(38, 198, 218),
    Color32::from_rgb(255, 202, 40),
    Color32::from_rgb(141, 110, 99),
    Color32::from_rgb(92, 107, 192),
    Color32::from_rgb(212, 225, 87),
    Color32::from_rgb(255, 112, 67),
];

/// Which error the plots show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Metric {
    /// L2 when an r sweep is overlaid (Fig. 6a, Fig. 8), eq. 38 otherwise (Fig. 5).
    Auto,
    /// `‖Σ_j a_j φ_j − m*‖²`, the full squared L2 distance of the expansion from `m*`.
    L2,
    /// Eq. 38: the first r coefficients only.
    Eq38,
}

/// Runtime state of the SOSMP views: finished sweeps (overlaid until cleared) and the choosers.
pub struct Caches {
    pub sweeps: Vec<Arc<SweepResult>>,
    show_paths: bool,
    metric: Metric,
    node: usize,
    from: usize,
    to: usize,
}

impl Default for Caches {
    fn default() -> Self {
        Caches {
            sweeps: Vec::new(),
            show_paths: true,
            metric: Metric::Auto,
            node: 0,
            from: 0,
            to: 1,
        }
    }
}

impl Caches {
    /// Keeps a finished sweep for the overlay.
    pub fn add_sweep(&mut self, result: Arc<SweepResult>) {
        self.sweeps.push(result);
    }

    /// True when the plots show the L2 error.
    fn l2(&self) -> bool {
        match self.metric {
            Metric::L2 => true,
            Metric::Eq38 => false,
            Metric::Auto => self
                .sweeps
                .iter()
                .any(|s| s.parameter == SweepParameter::Coefficients),
        }
    }
}

/// The legend's tag of the metric shown.
fn metric_tag(l2: bool) -> &'static str {
    if l2 { "L2" } else { "eq. 38" }
}

/// Indices of `len` iterations to draw on a log axis: all of the first 100, then about 150 per
/// decade (what a log axis can show), always the last.
fn log_thin(len: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut last_bucket = i64::MIN;
    for i in 0..len {
        let t = (i + 1) as f64;
        let bucket = (t.log10() * 150.0).floor() as i64;
        if i < 100 || bucket != last_bucket || i + 1 == len {
            out.push(i);
            last_bucket = bucket;
        }
    }
    out
}

/// `(log10 t, log10 y)` of a curve `y[t - 1]`, positive values only.
fn log_points(y: &[f64], map: impl Fn(f64) -> f64) -> Vec<[f64; 2]> {
    log_thin(y.len())
        .into_iter()
        .filter_map(|i| {
            let v = map(y[i]);
            (v > 0.0 && v.is_finite()).then(|| [((i + 1) as f64).log10(), v.log10()])
        })
        .collect()
}

/// Grid marks of a log10 axis: whole decades, and 2 and 5 times them when fewer than two
/// decades are in view (so a narrow range still gets labelled ticks).
fn decades(input: GridInput) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    let mut marks = decade_spacer(input);
    if hi - lo < 2.0 {
        for k in lo.floor() as i64..=hi.ceil() as i64 {
            for m in [2.0f64, 5.0] {
                let v = k as f64 + m.log10();
                if v >= lo && v <= hi {
                    marks.push(GridMark {
                        value: v,
                        step_size: 0.3,
                    });
                }
            }
        }
    }
    marks
}

/// "10⁻²" at a decade, "2·10⁻²" and "5·10⁻²" between, nothing elsewhere.
fn log_label(v: f64) -> String {
    let k = (v + 1e-9).floor();
    let mantissa = 10f64.powf(v - k);
    if (mantissa - 1.0).abs() < 1e-6 {
        power_of_ten_label(k)
    } else if (mantissa - 2.0).abs() < 1e-6 || (mantissa - 5.0).abs() < 1e-6 {
        format!("{}·{}", mantissa.round(), power_of_ten_label(k))
    } else {
        String::new()
    }
}

fn legend(corner: egui_plot::Corner) -> Legend {
    Legend::default()
        .follow_insertion_order(true)
        .text_style(egui::TextStyle::Small)
        .background_alpha(0.7)
        .position(corner)
}

fn sweep_button(
    ui: &mut egui::Ui,
    text: &str,
    hint: &str,
    config: &SosmpConfig,
    spec: SweepSpec,
    commands: &mut Vec<UiCommand>,
) {
    let b = ui.button(text).on_hover_text(format!(
        "{hint}. Runs the current parameters once per value ({} runs of {} iterations) on the \
         engine thread and overlays the mean curves; the run pauses meanwhile.",
        spec.values.len(),
        config.iters
    ));
    if b.clicked() {
        commands.push(UiCommand::RunTask(Task::Sosmp(SweepTask {
            config: config.clone(),
            spec,
        })));
    }
}

/// The central area: toolbar, the error plot (and Fig. 8), the choosers and the numbers.
pub fn lab(
    ui: &mut egui::Ui,
    view: &SosmpView,
    config: &SosmpConfig,
    caches: &mut Caches,
    selection: Option<Probe>,
    commands: &mut Vec<UiCommand>,
) {
    ui.horizontal_wrapped(|ui| {
        ui.label("Sweeps:");
        sweep_button(
            ui,
            "r ∈ {2, 3, 5, 10}",
            "Fig. 6a: the number of basis coefficients",
            config,
            SweepSpec::figure_6a(),
            commands,
        );
        sweep_button(
            ui,
            "k ∈ {1, 2, 5, 10}",
            "Fig. 6b: the samples per update",
            config,
            SweepSpec::figure_6b(),
            commands,
        );
        sweep_button(
            ui,
            "α ∈ {0.1, 1}",
            "Fig. 7: kernel potentials with eigenvalues j^-α (Mercer basis)",
            config,
            SweepSpec::figure_7(),
            commands,
        );
        sweep_button(
            ui,
            "Fig. 8: r ∈ {2 … 20}",
            "Fig. 8: the final error against r",
            config,
            SweepSpec::figure_8(),
            commands,
        );
        sweep_button(
            ui,
            "depth: n ∈ {2 … 100}",
            "The depth sweep: chains of 2, 5, 10, 20, 50 and 100 nodes, the fitted slope (and the \
             noise-free iteration's) against the chain length, bending from about −1 towards −0.5",
            config,
            SweepSpec::depth(),
            commands,
        );
        let clear = ui
            .add_enabled(
                !caches.sweeps.is_empty(),
                egui::Button::new("Clear overlays"),
            )
            .on_hover_text("Remove the sweep curves from the plots");
        if clear.clicked() {
            caches.sweeps.clear();
        }
        ui.separator();
        ui.checkbox(&mut caches.show_paths, "sample paths")
            .on_hover_text("Draw every sample path (dashed) beside their mean");
        let label = ui.label("error:");
        let hint = "Eq. 38 counts the first r coefficients only (so its floor need not fall with \
                    r). L2: the squared L2 distance of the expansion from m*, which adds \
                    Σ_{j>r} a*_j² (the truncation); its floor falls with r. Auto: L2 when an r \
                    sweep is shown (Fig. 6a, Fig. 8), eq. 38 otherwise (Fig. 5).";
        egui::ComboBox::from_id_salt("sosmp_metric")
            .selected_text(match caches.metric {
                Metric::Auto => format!("auto ({})", metric_tag(caches.l2())),
                Metric::L2 => "L2".to_string(),
                Metric::Eq38 => "eq. 38".to_string(),
            })
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut caches.metric, Metric::Auto, "auto");
                ui.selectable_value(&mut caches.metric, Metric::L2, "L2");
                ui.selectable_value(&mut caches.metric, Metric::Eq38, "eq. 38");
            })
            .response
            .labelled_by(label.id)
            .on_hover_text(hint);
    });
    // The side panel: the latest r sweep (Fig. 8) or depth sweep (slope against n).
    let side = caches
        .sweeps
        .iter()
        .rev()
        .find(|s| {
            matches!(
                s.parameter,
                SweepParameter::Coefficients | SweepParameter::Nodes
            )
        })
        .cloned();
    let bottom = 190.0;
    let plot_h = (ui.available_height() - bottom).max(200.0);
    let l2 = caches.l2();
    if let Some(f) = &side {
        ui.horizontal(|ui| {
            let w = ui.available_width();
            ui.vertical(|ui| {
                ui.set_width(w * 0.64);
                error_plot(ui, view, caches, plot_h);
            });
            ui.vertical(|ui| {
                if f.parameter == SweepParameter::Nodes {
                    slope_against_depth(ui, f, plot_h);
                } else {
                    final_against_r(ui, f, l2, plot_h);
                }
            });
        });
    } else {
        error_plot(ui, view, caches, plot_h);
    }
    ui.add_space(4.0);
    choosers(ui, view, caches, selection, commands);
    numbers(ui, view);
}

/// The log-log plot of the normalised error.
fn error_plot(ui: &mut egui::Ui, view: &SosmpView, caches: &Caches, height: f32) {
    let l2 = caches.l2();
    let tag = metric_tag(l2);
    let what = if l2 {
        "‖m_t − m*‖² / ‖m_0 − m*‖² (L2)"
    } else {
        "e_t / e_0 (eq. 38)"
    };
    ui.strong(format!("Normalised error {what}, log-log"));
    let curves = &view.curves;
    let iters = view.config.iters.max(curves.mean.len()).max(10) as f64;
    let mut plot = Plot::new("sosmp_error")
        .height(height)
        .legend(legend(egui_plot::Corner::LeftBottom))
        .allow_scroll(false)
        .include_x(0.0)
        .include_x(iters.log10())
        .x_grid_spacer(decades)
        .y_grid_spacer(decades)
        .x_axis_formatter(|m, _| log_label(m.value))
        .y_axis_formatter(|m, _| log_label(m.value))
        .x_axis_label("iteration t")
        .y_axis_min_width(36.0)
        .label_formatter(|hover| {
            let (head, p) = match hover {
                HoverPosition::NearDataPoint {
                    plot_name,
                    position,
                    ..
                } => (format!("{plot_name}\n"), position),
                HoverPosition::Elsewhere { position } => (String::new(), position),
            };
            Some(format!(
                "{head}t = {:.0}\n{:.3e}",
                10f64.powf(p.x),
                10f64.powf(p.y)
            ))
        });
    let floor = if l2 {
        view.floor_l2 / view.e0_l2
    } else {
        view.floor
    };
    let (paths, mean) = if l2 {
        (&curves.paths_l2, &curves.mean_l2)
    } else {
        (&curves.paths, &curves.mean)
    };
    if floor > 0.0 {
        plot = plot.include_y(floor.log10() - 0.3);
    }
    plot = plot.include_y(0.2);
    plot.show(ui, |plot| {
        if caches.show_paths {
            for p in paths {
                plot.line(
                    Line::new("sample paths", PlotPoints::from(log_points(p, |e| e)))
                        .color(PATH_COLOR.gamma_multiply(0.8))
                        .style(LineStyle::dashed_loose())
                        .width(1.0),
                );
            }
        }
        plot.line(
            Line::new(
                format!("mean of {} paths ({tag})", paths.len()),
                PlotPoints::from(log_points(mean, |e| e)),
            )
            .color(MEAN_COLOR)
            .width(2.5),
        );
        if !l2 {
            // What the slope is fitted on.
            let above: Vec<[f64; 2]> = log_points(&curves.mean, |e| e - view.floor)
                .into_iter()
                .filter(|p| p[0] >= 1.0)
                .collect();
            plot.line(
                Line::new("mean − floor (t ≥ 10, fitted)", PlotPoints::from(above))
                    .color(MEAN_COLOR.gamma_multiply(0.7))
                    .style(LineStyle::dotted_loose())
                    .width(1.5),
            );
            // What the stochastic approximation itself converges to: its distance falls like
            // 1/t only when the expected update contracts enough (see the README).
            plot.line(
                Line::new(
                    "distance to a∞, ‖a_t − a∞‖² / e_0",
                    PlotPoints::from(log_points(&curves.fixed_point, |e| e)),
                )
                .color(FIXED_POINT_COLOR)
                .width(1.5),
            );
        }
        if !l2 && view.slope_reference.len() == 2 {
            let pts: Vec<[f64; 2]> = view
                .slope_reference
                .iter()
                .map(|[t, e]| [t.log10(), e.log10()])
                .collect();
            plot.line(
                Line::new("slope −1", PlotPoints::from(pts))
                    .color(SLOPE_COLOR)
                    .style(LineStyle::dotted_dense())
                    .width(1.5),
            );
        }
        if floor > 0.0 {
            plot.hline(
                HLine::new(format!("floor at a∞ ({tag}) {floor:.2e}"), floor.log10())
                    .color(FLOOR_COLOR)
                    .style(LineStyle::dashed_dense())
                    .width(1.5),
            );
        }
        let mut k = 0;
        for s in &caches.sweeps {
            for c in &s.curves {
                let color = SWEEP_COLORS[k % SWEEP_COLORS.len()];
                k += 1;
                let name = format!("{} = {} ({tag})", s.parameter.symbol(), c.value);
                let (y, f) = if l2 && !c.mean_error_l2.is_empty() {
                    (&c.mean_error_l2, c.floor_l2 / c.e0_l2)
                } else {
                    (&c.mean_error, c.floor)
                };
                plot.line(
                    Line::new(name.clone(), PlotPoints::from(log_points(y, |e| e)))
                        .color(color)
                        .width(1.8),
                );
                if f > 0.0 {
                    plot.hline(
                        HLine::new(name, f.log10())
                            .color(color)
                            .style(LineStyle::dotted_loose())
                            .width(1.0),
                    );
                }
            }
        }
    });
}

/// Fig. 8: the final error (and the floor) against r, raw, on semilog axes.
fn final_against_r(ui: &mut egui::Ui, sweep: &SweepResult, l2: bool, height: f32) {
    ui.strong("Final error against r (Fig. 8)")
        .on_hover_text("Raw errors (not divided by e_0, which changes with r), log scale");
    let finals: Vec<[f64; 2]> = sweep
        .curves
        .iter()
        .map(|c| {
            let e = if l2 {
                c.final_error_l2_raw()
            } else {
                c.final_error_raw()
            };
            [c.value, e]
        })
        .filter(|p| p[1] > 0.0)
        .map(|p| [p[0], p[1].log10()])
        .collect();
    let floors: Vec<[f64; 2]> = sweep
        .curves
        .iter()
        .map(|c| [c.value, if l2 { c.floor_l2 } else { c.floor_raw }])
        .filter(|p| p[1] > 0.0)
        .map(|p| [p[0], p[1].log10()])
        .collect();
    let (final_name, floor_name) = if l2 {
        ("final ‖m_T − m*‖² (L2)", "floor at a∞ (L2)")
    } else {
        ("final e_T (eq. 38)", "floor e(a∞) (eq. 38)")
    };
    Plot::new("sosmp_fig8")
        .height(height)
        .legend(legend(egui_plot::Corner::RightTop))
        .allow_scroll(false)
        .y_grid_spacer(decades)
        .y_axis_formatter(|m, _| log_label(m.value))
        .x_axis_label("r")
        .include_x(0.0)
        .show(ui, |plot| {
            plot.line(
                Line::new(final_name, PlotPoints::from(finals.clone()))
                    .color(MEAN_COLOR)
                    .width(2.0),
            );
            plot.points(
                Points::new(final_name, PlotPoints::from(finals))
                    .color(MEAN_COLOR)
                    .radius(3.5),
            );
            plot.line(
                Line::new(floor_name, PlotPoints::from(floors))
                    .color(FLOOR_COLOR)
                    .style(LineStyle::dashed_dense())
                    .width(1.5),
            );
        });
}

/// The depth sweep: the fitted slope (and the noise-free iteration's) against the chain length,
/// log x axis, with the −1 and −0.5 levels.
fn slope_against_depth(ui: &mut egui::Ui, sweep: &SweepResult, height: f32) {
    ui.strong("Slope against chain length n").on_hover_text(
        "Slope of log(mean e_t/e_0 − floor) over t ∈ [10, T] (eq. 38) for each chain length, and \
             that of the noise-free iteration a ← (1 − η_t) a + η_t G(a) (its distance to a∞)",
    );
    let pts = |f: &dyn Fn(&crate::scenarios::sosmp::SweepCurve) -> Option<f64>| -> Vec<[f64; 2]> {
        sweep
            .curves
            .iter()
            .filter_map(|c| f(c).map(|s| [c.value.log10(), s]))
            .collect()
    };
    let fitted = pts(&|c| c.slope);
    let noise_free = pts(&|c| c.noise_free_slope);
    Plot::new("sosmp_depth")
        .height(height)
        .legend(legend(egui_plot::Corner::RightTop))
        .allow_scroll(false)
        .x_grid_spacer(decades)
        .x_axis_formatter(|m, _| {
            let l = log_label(m.value);
            if l.is_empty() {
                l
            } else {
                format!("{:.0}", 10f64.powf(m.value))
            }
        })
        .x_axis_label("nodes n")
        .include_y(-1.5)
        .include_y(0.0)
        .show(ui, |plot| {
            plot.line(
                Line::new("fitted slope (eq. 38)", PlotPoints::from(fitted.clone()))
                    .color(MEAN_COLOR)
                    .width(2.0),
            );
            plot.points(
                Points::new("fitted slope (eq. 38)", PlotPoints::from(fitted))
                    .color(MEAN_COLOR)
                    .radius(3.5),
            );
            plot.line(
                Line::new("noise-free iteration", PlotPoints::from(noise_free))
                    .color(FIXED_POINT_COLOR)
                    .style(LineStyle::dashed_dense())
                    .width(1.5),
            );
            plot.hline(
                HLine::new("−1 (Theorem 1 without log factors)", -1.0)
                    .color(SLOPE_COLOR)
                    .style(LineStyle::dotted_dense()),
            );
            plot.hline(
                HLine::new("−0.5", -0.5)
                    .color(FLOOR_COLOR)
                    .style(LineStyle::dotted_loose()),
            );
        });
}

/// The node slider and the message chooser.
fn choosers(
    ui: &mut egui::Ui,
    view: &SosmpView,
    caches: &mut Caches,
    selection: Option<Probe>,
    commands: &mut Vec<UiCommand>,
) {
    let n = view.num_nodes.max(1);
    match selection {
        Some(Probe::Node(u)) if u < n => caches.node = u,
        Some(Probe::Message(m)) if m < view.edges.len() => {
            caches.from = view.edges[m][0];
            caches.to = view.edges[m][1];
        }
        _ => {}
    }
    caches.node = caches.node.min(n - 1);
    caches.from = caches.from.min(n - 1);
    ui.horizontal_wrapped(|ui| {
        let label = ui.label("Node");
        let mut node = caches.node;
        let r = ui
            .add(egui::Slider::new(&mut node, 0..=n - 1))
            .labelled_by(label.id)
            .on_hover_text("Inspect this node's belief (against grid BP) and its potential");
        if r.changed() || (r.clicked() && selection != Some(Probe::Node(node))) {
            caches.node = node;
            commands.push(UiCommand::Select(Probe::Node(node)));
        }
        if ui
            .button("Inspect node")
            .on_hover_text("Show this node in the inspector")
            .clicked()
        {
            commands.push(UiCommand::Select(Probe::Node(caches.node)));
        }
        ui.separator();
        let label = ui.label("Message from");
        let mut from = caches.from;
        let changed_from = ui
            .add(egui::Slider::new(&mut from, 0..=n - 1))
            .labelled_by(label.id)
            .changed();
        // The neighbours of `from`, read off the directed edges.
        let targets: Vec<(usize, usize)> = view
            .edges
            .iter()
            .enumerate()
            .filter(|(_, e)| e[0] == from)
            .map(|(m, e)| (m, e[1]))
            .collect();
        if !targets.iter().any(|&(_, t)| t == caches.to) {
            caches.to = targets.first().map_or(0, |&(_, t)| t);
        }
        let mut to = caches.to;
        let label = ui.label("to");
        egui::ComboBox::from_id_salt("sosmp_message_to")
            .selected_text(format!("{to}"))
            .width(64.0)
            .show_ui(ui, |ui| {
                for &(_, t) in &targets {
                    ui.selectable_value(&mut to, t, format!("{t}"));
                }
            })
            .response
            .labelled_by(label.id);
        let chosen = targets.iter().find(|&&(_, t)| t == to).map(|&(m, _)| m);
        let changed = changed_from || to != caches.to;
        caches.from = from;
        caches.to = to;
        let inspect = ui
            .button("Inspect message")
            .on_hover_text("Show this message, its coefficients and its samples in the inspector");
        if let Some(m) = chosen
            && (inspect.clicked() || (changed && matches!(selection, Some(Probe::Message(_)))))
        {
            commands.push(UiCommand::Select(Probe::Message(m)));
        }
    });
}

/// Floor, slope, e_0 and the warnings.
fn numbers(ui: &mut egui::Ui, view: &SosmpView) {
    let slope = view.slope.map_or("–".to_string(), |s| format!("{s:.2}"));
    let fixed_point_slope = crate::scenarios::sosmp::fit_slope(
        &view.curves.fixed_point,
        0.0,
        crate::scenarios::sosmp::SLOPE_FROM,
    )
    .map_or("–".to_string(), |s| format!("{s:.2}"));
    let last = view.curves.mean.last().copied();
    ui.add(
        egui::Label::new(
            RichText::new(format!(
                "iteration {} · mean e_t/e_0 {} · floor e(a∞)/e_0 {:.3e} · slope of log(mean − floor) \
                 against log t over t ≥ 10: {slope} (distance to a∞: {fixed_point_slope}) · e_0 {:.3e} · truncation Σ_(j>r) a*² {:.3e} · L2 floor {:.3e} ({:.3e} of its e_0) · \
                 {} basis, r = {}, k = {}, {} paths{}",
                view.iteration,
                last.map_or("–".to_string(), |e| format!("{e:.3e}")),
                view.floor,
                view.e0,
                view.truncation,
                view.floor_l2,
                view.floor_l2 / view.e0_l2,
                view.basis,
                view.config.coefficients,
                view.config.samples,
                view.config.paths,
                if view.fallbacks > 0 {
                    format!(" · {} fallbacks to β", view.fallbacks)
                } else {
                    String::new()
                }
            ))
            .small(),
        )
        .wrap(),
    );
    let tree = view.edges_undirected.len() + 1 == view.num_nodes;
    ui.add(
        egui::Label::new(
            RichText::new(crate::scenarios::sosmp::slope_explanation(
                view.slope,
                view.gains.as_ref(),
                view.diameter,
                tree,
            ))
            .small()
            .weak(),
        )
        .wrap(),
    );
    for w in &view.warnings {
        ui.add(
            egui::Label::new(
                RichText::new(format!("warning: {w}"))
                    .small()
                    .color(Color32::from_rgb(255, 167, 38)),
            )
            .wrap(),
        );
    }
}

/// The inspector: the selected message or node, else the potentials.
pub fn inspector(ui: &mut egui::Ui, view: &SosmpView, height: f32) {
    if let Some(e) = &view.edge {
        edge_inspector(ui, view, e, height);
    } else if let Some(n) = &view.node {
        node_inspector(ui, view, n, height);
    } else {
        ui.strong("Inspector");
        ui.weak(
            "Choose a node or a message under the error plot to see its belief, its message \
             against the grid-BP fixed point, its coefficients and its samples.",
        );
        ui.add_space(6.0);
        potentials_plot(ui, view, 0, height * 0.45);
    }
}

fn curve(xs: &[f64], ys: &[f64]) -> PlotPoints<'static> {
    PlotPoints::from(xs.iter().zip(ys).map(|(&x, &y)| [x, y]).collect::<Vec<_>>())
}

fn x_plot(id: &str, view: &SosmpView, height: f32, corner: egui_plot::Corner) -> Plot<'static> {
    Plot::new(id.to_string())
        .height(height)
        .legend(legend(corner))
        .allow_scroll(false)
        .include_x(view.domain.0)
        .include_x(view.domain.1)
        .include_y(0.0)
}

/// The legend goes to the side away from a curve's mass.
fn away_from(xs: &[f64], ys: &[f64]) -> egui_plot::Corner {
    let mass: f64 = ys.iter().map(|y| y.abs()).sum();
    let centre: f64 = xs.iter().zip(ys).map(|(x, y)| x * y.abs()).sum::<f64>() / mass.max(1e-300);
    let mid = 0.5 * (xs.first().copied().unwrap_or(0.0) + xs.last().copied().unwrap_or(0.0));
    if centre < mid {
        egui_plot::Corner::RightTop
    } else {
        egui_plot::Corner::LeftTop
    }
}

fn edge_inspector(ui: &mut egui::Ui, view: &SosmpView, e: &EdgeInspection, height: f32) {
    let xs = &view.grid;
    // Three plots, each with a heading and an axis label.
    let h = ((height - 110.0) / 3.0).max(110.0);
    ui.strong(format!("Message {} → {}", e.from, e.to))
        .on_hover_text("Path 0's message against the grid-BP fixed point m*");
    x_plot("sosmp_message", view, h, away_from(xs, &e.reference))
        .x_axis_label("x (state of the receiver)")
        .show(ui, |plot| {
            plot.line(
                Line::new("m* (grid BP)", curve(xs, &e.reference))
                    .color(REFERENCE_COLOR)
                    .width(2.5),
            );
            plot.line(
                Line::new("normalised m̂_t", curve(xs, &e.normalised))
                    .color(MEAN_COLOR)
                    .width(2.0),
            );
            plot.line(
                Line::new("clipped max(0, Σ a φ)", curve(xs, &e.clipped))
                    .color(MEAN_COLOR.gamma_multiply(0.6))
                    .style(LineStyle::dotted_dense())
                    .width(1.5),
            );
            plot.line(
                Line::new("raw Σ a_t φ", curve(xs, &e.raw))
                    .color(PATH_COLOR)
                    .style(LineStyle::dashed_loose())
                    .width(1.0),
            );
            plot.line(
                Line::new("Σ a∞ φ (limit)", curve(xs, &e.floor_message))
                    .color(FLOOR_COLOR)
                    .style(LineStyle::dashed_dense())
                    .width(1.2),
            );
            plot.line(
                Line::new("Σ a* φ (best r terms)", curve(xs, &e.reference_projection))
                    .color(REFERENCE_COLOR.gamma_multiply(0.7))
                    .style(LineStyle::dotted_loose())
                    .width(1.2),
            );
        });
    ui.add_space(4.0);
    ui.strong("Coefficients a_j");
    let r = e.coefficients.len();
    let bars = |values: &[f64], offset: f64| -> Vec<Bar> {
        values
            .iter()
            .enumerate()
            .map(|(j, &v)| Bar::new((j + 1) as f64 + offset, v).width(0.26))
            .collect()
    };
    Plot::new("sosmp_coefficients")
        .height(h)
        .legend(legend(egui_plot::Corner::RightTop))
        .allow_scroll(false)
        .include_x(0.5)
        .include_x(r as f64 + 0.5)
        .include_y(0.0)
        .x_axis_label("j")
        .show(ui, |plot| {
            plot.bar_chart(
                BarChart::new("a_t (path 0)", bars(&e.coefficients, -0.28)).color(MEAN_COLOR),
            );
            plot.bar_chart(
                BarChart::new("a* (grid BP)", bars(&e.reference_coefficients, 0.0))
                    .color(REFERENCE_COLOR),
            );
            plot.bar_chart(
                BarChart::new("a∞ (limit)", bars(&e.floor_coefficients, 0.28)).color(FLOOR_COLOR),
            );
        });
    ui.add_space(4.0);
    let k = e.samples.len();
    ui.strong(format!("Latest {k} samples over the sampling density"))
        .on_hover_text(
            "β_uv(y) Π m̂_{w→v}(y), normalised; the samples path 0 drew in the last iteration",
        );
    // A histogram of the samples as a density (bins of 1/2 unit), with the samples as stems.
    let (a, b) = view.domain;
    let bins = ((b - a) * 2.0).round().max(1.0) as usize;
    let width = (b - a) / bins as f64;
    let mut counts = vec![0usize; bins];
    for &s in &e.samples {
        let i = (((s - a) / width).floor() as usize).min(bins - 1);
        counts[i] += 1;
    }
    let hist: Vec<Bar> = counts
        .iter()
        .enumerate()
        .filter(|(_, c)| **c > 0)
        .map(|(i, &c)| {
            Bar::new(
                a + (i as f64 + 0.5) * width,
                c as f64 / (k.max(1) as f64 * width),
            )
            .width(width * 0.95)
        })
        .collect();
    x_plot("sosmp_samples", view, h, away_from(xs, &e.sampling_density))
        .x_axis_label("y (state of the sender)")
        .show(ui, |plot| {
            plot.bar_chart(
                BarChart::new("histogram of the samples", hist)
                    .color(SAMPLE_COLOR.gamma_multiply(0.5)),
            );
            plot.line(
                Line::new("sampling density", curve(xs, &e.sampling_density))
                    .color(FLOOR_COLOR)
                    .width(2.0),
            );
            plot.points(
                Points::new(
                    "samples",
                    PlotPoints::from(e.samples.iter().map(|&s| [s, 0.0]).collect::<Vec<_>>()),
                )
                .color(SAMPLE_COLOR)
                .radius(4.0),
            );
        });
}

fn node_inspector(ui: &mut egui::Ui, view: &SosmpView, n: &NodeInspection, height: f32) {
    let xs = &view.grid;
    let h = ((height - 80.0) / 2.0).max(140.0);
    ui.strong(format!("Belief at node {}", n.node))
        .on_hover_text("ψ_u Π m̂_{w→u} of path 0 against the grid-BP belief, both normalised");
    x_plot("sosmp_belief", view, h, away_from(xs, &n.reference))
        .x_axis_label("x")
        .show(ui, |plot| {
            plot.line(
                Line::new("grid BP", curve(xs, &n.reference))
                    .color(REFERENCE_COLOR)
                    .width(2.5),
            );
            plot.line(
                Line::new("SOSMP (path 0)", curve(xs, &n.belief))
                    .color(MEAN_COLOR)
                    .width(2.0),
            );
        });
    ui.add_space(4.0);
    potentials_plot(ui, view, n.node, h);
}

/// `ψ_u` and the slices `ψ_e(x_a = centre, ·)` of the edges at `u`.
fn potentials_plot(ui: &mut egui::Ui, view: &SosmpView, u: usize, height: f32) {
    let xs = &view.grid;
    let n = xs.len();
    if u >= view.num_nodes || view.node_potentials.len() < (u + 1) * n {
        return;
    }
    ui.strong(format!("Potentials at node {u}"))
        .on_hover_text("ψ_u, and each incident edge's ψ_uv(x_a = middle of the domain, x_b)");
    let node = &view.node_potentials[u * n..(u + 1) * n];
    x_plot("sosmp_potentials", view, height, away_from(xs, node))
        .x_axis_label("x")
        .show(ui, |plot| {
            plot.line(
                Line::new(format!("ψ_{u}"), curve(xs, node))
                    .color(MEAN_COLOR)
                    .width(2.0),
            );
            let mut k = 0;
            for (e, &(a, b)) in view.edges_undirected.iter().enumerate() {
                if (a == u || b == u) && (e + 1) * n <= view.edge_potential_slices.len() {
                    let slice = &view.edge_potential_slices[e * n..(e + 1) * n];
                    plot.line(
                        Line::new(format!("ψ_({a},{b})(x_{a} = mid, ·)"), curve(xs, slice))
                            .color(SWEEP_COLORS[k % SWEEP_COLORS.len()])
                            .style(LineStyle::dashed_loose())
                            .width(1.2),
                    );
                    k += 1;
                    if k >= 4 {
                        break;
                    }
                }
            }
        });
}

/// Numbers for the status bar.
pub fn status(view: &SosmpView) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(e) = view.curves.mean.last() {
        out.push(format!("e/e₀ {e:.3e}"));
    }
    out.push(format!("floor {:.3e}", view.floor));
    if let Some(s) = view.slope {
        out.push(format!("slope {s:.2}"));
    }
    out
}

/// Whether the selection exists in this view.
pub fn selection_is_valid(view: &SosmpView, selection: Probe) -> bool {
    match selection {
        Probe::Node(n) => n < view.num_nodes,
        Probe::Message(m) => m < view.edges.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinning_keeps_the_start_the_end_and_few_points_per_decade() {
        let idx = log_thin(100_000);
        assert_eq!(&idx[..100], &(0..100).collect::<Vec<_>>()[..]);
        assert_eq!(*idx.last().unwrap(), 99_999);
        assert!(idx.len() < 100 + 4 * 160, "{}", idx.len());
        assert!(idx.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn log_labels_name_decades_and_their_twos_and_fives() {
        assert_eq!(log_label(-2.0), "10⁻²");
        assert_eq!(log_label(-2.0 + 2f64.log10()), "2·10⁻²");
        assert_eq!(log_label(5f64.log10()), "5·10⁰");
        assert_eq!(log_label(-1.5), "");
    }
}
