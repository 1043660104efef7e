//! A node's belief as a plot, for any scenario: bars over the states of a discrete belief, a
//! curve for a continuous one (kernel beliefs may dip below zero; the plot shows it), with
//! vertical markers for known values (the truth, the observation, the estimate).

use eframe::egui::{self, Color32};
use egui_plot::{Bar, BarChart, Legend, Line, LineStyle, PlotPoints, VLine};

use crate::app::views::ticks::{self, Scale};
use crate::inference::Belief;

/// A vertical line at a value of the state space.
pub struct Marker {
    pub name: String,
    pub x: f64,
    pub color: Color32,
    pub style: LineStyle,
}

pub const BELIEF_COLOR: Color32 = Color32::from_rgb(66, 165, 245);

/// Draws `belief` with its markers; `x_range` keeps the axis fixed while the belief changes.
pub fn belief_plot(
    ui: &mut egui::Ui,
    id: &str,
    belief: &Belief,
    markers: &[Marker],
    x_range: Option<[f64; 2]>,
    height: f32,
) {
    // The legend goes to the side away from the belief's mass.
    let (xs, weights): (&[f64], &[f64]) = match belief {
        Belief::Discrete { states, probs } => (states, probs),
        Belief::Curve { xs, ys } => (xs, ys),
        Belief::Grid2 { .. } => (&[], &[]),
    };
    let mass: f64 = weights.iter().map(|w| w.abs()).sum();
    let centre = xs
        .iter()
        .zip(weights)
        .map(|(x, w)| x * w.abs())
        .sum::<f64>()
        / mass.max(1e-300);
    let middle = match x_range {
        Some([lo, hi]) => 0.5 * (lo + hi),
        None => 0.5 * (xs.first().copied().unwrap_or(0.0) + xs.last().copied().unwrap_or(0.0)),
    };
    let corner = if centre < middle {
        egui_plot::Corner::RightTop
    } else {
        egui_plot::Corner::LeftTop
    };
    let y_label = match belief {
        Belief::Discrete { .. } => "probability",
        _ => "belief (scaled to max |value| 1)",
    };
    let mut plot = ticks::plot(id, Scale::Real, Scale::Real)
        .height(height)
        .legend(
            Legend::default()
                .follow_insertion_order(true)
                .text_style(egui::TextStyle::Small)
                .background_alpha(0.7)
                .position(corner),
        )
        .include_y(0.0)
        .allow_scroll(false)
        .x_axis_label("state")
        .y_axis_label(y_label);
    if let Some([lo, hi]) = x_range {
        plot = plot.include_x(lo).include_x(hi);
    }
    plot.show(ui, |plot| {
        match belief {
            Belief::Discrete { states, probs } => {
                let spacing = states
                    .windows(2)
                    .map(|w| (w[1] - w[0]).abs())
                    .filter(|d| *d > 0.0)
                    .fold(f64::INFINITY, f64::min);
                let width = if spacing.is_finite() {
                    spacing * 0.85
                } else {
                    1.0
                };
                let bars = states
                    .iter()
                    .zip(probs)
                    .map(|(&s, &p)| Bar::new(s, p).width(width))
                    .collect();
                plot.bar_chart(BarChart::new("belief", bars).color(BELIEF_COLOR));
            }
            Belief::Curve { xs, ys } => {
                // Only the shape matters (kernel beliefs are unnormalised and may be negative).
                let top = ys.iter().fold(0.0f64, |a, y| a.max(y.abs()));
                let scale = if top > 0.0 && top.is_finite() {
                    1.0 / top
                } else {
                    1.0
                };
                let points: Vec<[f64; 2]> =
                    xs.iter().zip(ys).map(|(&x, &y)| [x, y * scale]).collect();
                plot.line(
                    Line::new("belief", PlotPoints::from(points))
                        .color(BELIEF_COLOR)
                        .width(2.0),
                );
            }
            Belief::Grid2 { xs, ys, values } => {
                // Until a scenario needs a 2-D view here: the marginal over the first axis.
                let points: Vec<[f64; 2]> = xs
                    .iter()
                    .enumerate()
                    .map(|(i, &x)| {
                        let m: f64 = (0..ys.len()).map(|j| values[j * xs.len() + i]).sum();
                        [x, m]
                    })
                    .collect();
                plot.line(
                    Line::new("belief (marginal)", PlotPoints::from(points))
                        .color(BELIEF_COLOR)
                        .width(2.0),
                );
            }
        }
        for m in markers {
            plot.vline(
                VLine::new(m.name.clone(), m.x)
                    .color(m.color)
                    .width(2.0)
                    .style(m.style),
            );
        }
    });
}
