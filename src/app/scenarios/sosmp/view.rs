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
use egui_plot::Legend;

pub use super::inspector::inspector;
use super::plots::{error_plot, final_against_r, slope_against_depth};
use crate::app::colors;
use crate::app::commands::UiCommand;
use crate::scenarios::Probe;
use crate::scenarios::Task;
use crate::scenarios::sosmp::SweepTask;
use crate::scenarios::sosmp::sweep::SweepParameter;
use crate::scenarios::sosmp::{SosmpConfig, SosmpView, SweepResult, SweepSpec};
use crate::viz::palette::{self, Method};

// One palette (viz::palette): SOSMP's own colour for its error, the exact reference in the
// reference grey, and sweep curves in series colours that are no method's and no role's (the
// distance to a∞ no longer shares its purple with the first sweep value).
pub(super) const MEAN_COLOR: Color32 = colors::method(Method::Sosmp);
pub(super) const PATH_COLOR: Color32 = Color32::from_rgb(206, 147, 170);
pub(super) const REFERENCE_COLOR: Color32 = colors::method(Method::Exact);
pub(super) const FLOOR_COLOR: Color32 = colors::rgb(palette::FLOOR);
pub(super) const SLOPE_COLOR: Color32 = colors::rgb(palette::SLOPE);
pub(super) const SAMPLE_COLOR: Color32 = colors::rgb(palette::SERIES[1]);
pub(super) const FIXED_POINT_COLOR: Color32 = colors::rgb(palette::FIXED_POINT);
/// Colours of overlaid sweep curves.
pub(super) const SWEEP_COLORS: [Color32; 7] = [
    colors::rgb(palette::SERIES[0]),
    colors::rgb(palette::SERIES[1]),
    colors::rgb(palette::SERIES[2]),
    colors::rgb(palette::SERIES[3]),
    colors::rgb(palette::SERIES[4]),
    colors::rgb(palette::SERIES[5]),
    colors::rgb(palette::SERIES[6]),
];

/// Which error the plots show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Metric {
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
    pub(super) show_paths: bool,
    pub(super) metric: Metric,
    pub(super) node: usize,
    pub(super) from: usize,
    pub(super) to: usize,
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
    pub(super) fn l2(&self) -> bool {
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
pub(super) fn metric_tag(l2: bool) -> &'static str {
    if l2 { "L2" } else { "eq. 38" }
}

/// Indices of `len` iterations to draw on a log axis: all of the first 100, then about 150 per
/// decade (what a log axis can show), always the last.
pub(super) fn log_thin(len: usize) -> Vec<usize> {
    let bucket = |i: usize| (((i + 1) as f64).log10() * 150.0).floor() as i64;
    let mut out: Vec<usize> = (0..len.min(100)).collect();
    if len <= 100 {
        return out;
    }
    // The first index of each bucket after the 100th point's, found from a guess and settled
    // by `bucket` itself: the cost is the points kept, not the iterations run.
    let mut b = bucket(99) + 1;
    loop {
        let guess = 10f64.powf(b as f64 / 150.0).ceil() as usize;
        let mut i = guess.saturating_sub(1).clamp(100, len);
        while i > 100 && bucket(i - 1) >= b {
            i -= 1;
        }
        while i < len && bucket(i) < b {
            i += 1;
        }
        if i >= len {
            break;
        }
        out.push(i);
        b = bucket(i) + 1;
    }
    if out.last() != Some(&(len - 1)) {
        out.push(len - 1);
    }
    out
}

/// `(log10 t, log10 y)` of a curve `y[t - 1]`, positive values only.
pub(super) fn log_points(y: &[f64], map: impl Fn(f64) -> f64) -> Vec<[f64; 2]> {
    LogAxis::default().points(y, map)
}

/// [`log_points`] of several curves, thinned once per length (the sample paths and their
/// mean share theirs).
#[derive(Default)]
pub(super) struct LogAxis {
    len: Option<usize>,
    indices: Vec<usize>,
}

impl LogAxis {
    pub(super) fn points(&mut self, y: &[f64], map: impl Fn(f64) -> f64) -> Vec<[f64; 2]> {
        if self.len != Some(y.len()) {
            self.indices = log_thin(y.len());
            self.len = Some(y.len());
        }
        self.indices
            .iter()
            .filter_map(|&i| {
                let v = map(y[i]);
                (v > 0.0 && v.is_finite()).then(|| [((i + 1) as f64).log10(), v.log10()])
            })
            .collect()
    }
}

pub(super) fn legend(corner: egui_plot::Corner) -> Legend {
    Legend::default()
        .follow_insertion_order(true)
        .text_style(egui::TextStyle::Small)
        .background_alpha(0.7)
        .position(corner)
}

pub(super) fn sweep_button(
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

/// The node slider and the message chooser.
pub(super) fn choosers(
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
pub(super) fn numbers(ui: &mut egui::Ui, view: &SosmpView) {
    let slope = view.slope.map_or("–".to_string(), |s| format!("{s:.2}"));
    let fixed_point_slope = view
        .fixed_point_slope
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

    /// The rule read off every iteration: all of the first 100, then the first of each
    /// 1/150-decade bucket, and the last.
    fn log_thin_by_scan(len: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut last_bucket = i64::MIN;
        for i in 0..len {
            let bucket = (((i + 1) as f64).log10() * 150.0).floor() as i64;
            if i < 100 || bucket != last_bucket || i + 1 == len {
                out.push(i);
                last_bucket = bucket;
            }
        }
        out
    }

    #[test]
    fn thinning_jumps_to_the_points_the_scan_keeps() {
        for len in (0..3000).chain([9_999, 10_000, 10_001, 123_457, 1_000_000]) {
            assert_eq!(log_thin(len), log_thin_by_scan(len), "len {len}");
        }
    }

    #[test]
    fn thinning_keeps_the_start_the_end_and_few_points_per_decade() {
        let idx = log_thin(100_000);
        assert_eq!(&idx[..100], &(0..100).collect::<Vec<_>>()[..]);
        assert_eq!(*idx.last().unwrap(), 99_999);
        assert!(idx.len() < 100 + 4 * 160, "{}", idx.len());
        assert!(idx.windows(2).all(|w| w[0] < w[1]));
    }
}
