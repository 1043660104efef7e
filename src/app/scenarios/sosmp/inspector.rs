//! The SOSMP inspector: a message's coefficients and function against the reference and the
//! floor with its samples, a node's belief, and the potentials.

use eframe::egui::{self};
use egui_plot::{Bar, BarChart, Line, LineStyle, Plot, PlotPoints, Points};

use super::view::*;
use crate::app::views::dashed::DashedLines;
use crate::app::views::ticks::{self, Scale};
use crate::scenarios::sosmp::{EdgeInspection, NodeInspection, SosmpView};

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

pub(super) fn curve(xs: &[f64], ys: &[f64]) -> PlotPoints<'static> {
    PlotPoints::from(xy(xs, ys).collect::<Vec<_>>())
}

/// The points `[x, y]` of a curve over the grid.
fn xy<'a>(xs: &'a [f64], ys: &'a [f64]) -> impl Iterator<Item = [f64; 2]> + 'a {
    xs.iter().zip(ys).map(|(&x, &y)| [x, y])
}

/// A plot over the state space, its axes labelled `x_label` and `y_label`.
pub(super) fn x_plot(
    id: &str,
    view: &SosmpView,
    height: f32,
    corner: egui_plot::Corner,
    [x_label, y_label]: [&str; 2],
) -> Plot<'static> {
    ticks::plot(id.to_string(), Scale::Real, Scale::Real)
        .x_axis_label(x_label.to_string())
        .y_axis_label(y_label.to_string())
        .height(height)
        .legend(legend(corner))
        .allow_scroll(false)
        .include_x(view.domain.0)
        .include_x(view.domain.1)
        .include_y(0.0)
}

/// The legend goes to the side away from a curve's mass.
pub(super) fn away_from(xs: &[f64], ys: &[f64]) -> egui_plot::Corner {
    let mass: f64 = ys.iter().map(|y| y.abs()).sum();
    let centre: f64 = xs.iter().zip(ys).map(|(x, y)| x * y.abs()).sum::<f64>() / mass.max(1e-300);
    let mid = 0.5 * (xs.first().copied().unwrap_or(0.0) + xs.last().copied().unwrap_or(0.0));
    if centre < mid {
        egui_plot::Corner::RightTop
    } else {
        egui_plot::Corner::LeftTop
    }
}

pub(super) fn edge_inspector(ui: &mut egui::Ui, view: &SosmpView, e: &EdgeInspection, height: f32) {
    let xs = &view.grid;
    // Three plots, each with a heading and an axis label.
    let h = ((height - 110.0) / 3.0).max(110.0);
    ui.strong(format!("Message {} → {}", e.from, e.to))
        .on_hover_text("Path 0's message against the grid-BP fixed point m*");
    let axes = ["x (state of the receiver)", "message (normalised)"];
    x_plot("sosmp_message", view, h, away_from(xs, &e.reference), axes).show(ui, |plot| {
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
        plot.add(
            DashedLines::new("raw Σ a_t φ", 10.0)
                .line(xy(xs, &e.raw))
                .color(PATH_COLOR)
                .width(1.0),
        );
        plot.add(
            DashedLines::new("Σ a∞ φ (limit)", 5.0)
                .line(xy(xs, &e.floor_message))
                .color(FLOOR_COLOR)
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
    ticks::plot("sosmp_coefficients", Scale::Integer, Scale::Real)
        .height(h)
        .legend(legend(egui_plot::Corner::RightTop))
        .allow_scroll(false)
        .include_x(0.5)
        .include_x(r as f64 + 0.5)
        .include_y(0.0)
        .x_axis_label("basis function j")
        .y_axis_label("coefficient a_j")
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
    let axes = ["y (state of the sender)", "density of y"];
    x_plot(
        "sosmp_samples",
        view,
        h,
        away_from(xs, &e.sampling_density),
        axes,
    )
    .show(ui, |plot| {
        plot.bar_chart(
            BarChart::new("histogram of the samples", hist).color(SAMPLE_COLOR.gamma_multiply(0.5)),
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

pub(super) fn node_inspector(ui: &mut egui::Ui, view: &SosmpView, n: &NodeInspection, height: f32) {
    let xs = &view.grid;
    let h = ((height - 80.0) / 2.0).max(140.0);
    ui.strong(format!("Belief at node {}", n.node))
        .on_hover_text("ψ_u Π m̂_{w→u} of path 0 against the grid-BP belief, both normalised");
    let axes = ["x", "belief (normalised)"];
    x_plot("sosmp_belief", view, h, away_from(xs, &n.reference), axes).show(ui, |plot| {
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
pub(super) fn potentials_plot(ui: &mut egui::Ui, view: &SosmpView, u: usize, height: f32) {
    let xs = &view.grid;
    let n = xs.len();
    if u >= view.num_nodes || view.node_potentials.len() < (u + 1) * n {
        return;
    }
    ui.strong(format!("Potentials at node {u}"))
        .on_hover_text("ψ_u, and each incident edge's ψ_uv(x_a = middle of the domain, x_b)");
    let node = &view.node_potentials[u * n..(u + 1) * n];
    let axes = ["x", "potential ψ"];
    x_plot("sosmp_potentials", view, height, away_from(xs, node), axes).show(ui, |plot| {
        plot.line(
            Line::new(format!("ψ_{u}"), curve(xs, node))
                .color(MEAN_COLOR)
                .width(2.0),
        );
        let mut k = 0;
        for (e, &(a, b)) in view.edges_undirected.iter().enumerate() {
            if (a == u || b == u) && (e + 1) * n <= view.edge_potential_slices.len() {
                let slice = &view.edge_potential_slices[e * n..(e + 1) * n];
                plot.add(
                    DashedLines::new(format!("ψ_({a},{b})(x_{a} = mid, ·)"), 10.0)
                        .line(xy(xs, slice))
                        .color(SWEEP_COLORS[k % SWEEP_COLORS.len()])
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
