//! The teaching room's inspector: the last message's content before and after, the receiving
//! node's belief before, after and exact (grouped bars over the node's labels, or curves on
//! the grid for continuous messages, with the numbers as text; a series message's
//! coefficients as a bar strip), and the belief error and fixed-point residual per message.

use eframe::egui::{self, Color32, RichText};
use egui_plot::{Bar, BarChart, Legend, Line, PlotPoints};

use super::{BEFORE, BELIEF, EXACT, FLOOR, SENT};
use crate::app::scenarios::InspectorHeights;
use crate::app::views::curves;
use crate::app::views::ticks::{self, Scale};
use crate::inference::message_stepper::SentMessage;
use crate::run::IterationRecord;
use crate::scenarios::teach::{MessageKind, TeachView, moments_on};

pub fn inspector(
    ui: &mut egui::Ui,
    v: &TeachView,
    history: &[IterationRecord],
    heights: InspectorHeights,
) {
    // Series messages add a coefficient strip: five charts share the height instead of four.
    let charts = if v.kind == MessageKind::Series {
        5.2
    } else {
        4.0
    };
    let chart_height = (heights.free / charts).clamp(90.0, 200.0);
    match &v.last {
        None => {
            ui.label("No message sent yet. Press → (Step) to send the schedule's first message.");
        }
        Some(m) if v.kind.is_continuous() => continuous(ui, v, m, chart_height),
        Some(m) => {
            let (from, to) = (&v.names[m.from], &v.names[m.to]);
            ui.label(RichText::new(format!("Message {from} → {to}")).strong());
            ui.label(format!(
                "Message {from} → {to} before: {}; after: {}",
                numbers(&m.before),
                numbers(&m.after)
            ));
            grouped_bars(
                ui,
                "teach_message",
                &[("before", BEFORE, &m.before), ("after", SENT, &m.after)],
                &format!("label of {to}"),
                "m(x)",
                chart_height,
            );
            ui.label(RichText::new(format!("Belief of {to}")).strong());
            ui.label(format!(
                "Belief of {to} before: {}; after: {}; exact: {}",
                numbers(&m.belief_before),
                numbers(&m.belief_after),
                numbers(&v.exact[m.to])
            ));
            grouped_bars(
                ui,
                "teach_belief",
                &[
                    ("before", BEFORE, &m.belief_before),
                    ("after", BELIEF, &m.belief_after),
                    ("exact", EXACT, &v.exact[m.to]),
                ],
                &format!("label of {to}"),
                "belief",
                chart_height,
            );
        }
    }
    ui.label(RichText::new("Per message").strong());
    curves::residual_plot_over(
        ui,
        "message",
        "teach_curves",
        history,
        &[
            curves::Series::metric(
                if v.kind.is_continuous() {
                    "largest ∫|belief − reference|"
                } else {
                    "largest |belief − exact|"
                },
                "belief_error",
            ),
            curves::Series::metric("fixed-point residual", "fixed_point_residual"),
            curves::Series::residual("change of the message sent"),
        ],
        None,
        None,
        heights.curve.max(140.0),
    );
}

/// A continuous message: its function before and after, its numbers (mean and precision, or
/// the coefficients as a bar strip), and the receiver's belief before, after and reference.
fn continuous(ui: &mut egui::Ui, v: &TeachView, m: &SentMessage, height: f32) {
    let (from, to) = (&v.names[m.from], &v.names[m.to]);
    ui.label(RichText::new(format!("Message {from} → {to}")).strong());
    match v.kind {
        MessageKind::Gaussian => {
            let describe = |c: &[f64]| {
                if c[1] > 0.0 {
                    format!("mean {:.3}, precision {:.3}", c[0], c[1])
                } else {
                    "flat (precision 0)".to_string()
                }
            };
            ui.label(format!(
                "Message {from} → {to} before: {}; after: {}",
                describe(&m.before),
                describe(&m.after)
            ));
        }
        _ => {
            ui.label(format!(
                "Message {from} → {to} coefficients before: {}; after: {}",
                numbers(&m.before),
                numbers(&m.after)
            ));
        }
    }
    curves_plot(
        ui,
        "teach_message_curve",
        &v.xs,
        &[
            ("before", BEFORE, &m.curve_before),
            ("after", SENT, &m.curve_after),
        ],
        &format!("x of {to}"),
        "m(x)",
        height,
    );
    if v.kind == MessageKind::Series {
        grouped_bars(
            ui,
            "teach_coefficients",
            &[("before", BEFORE, &m.before), ("after", SENT, &m.after)],
            "coefficient j (Fourier)",
            "a_j",
            height * 0.7,
        );
    }
    ui.label(RichText::new(format!("Belief of {to}")).strong());
    let stats = |f: &[f64]| {
        let (mean, sd) = moments_on(&v.xs, f);
        format!("mean {mean:.3}, sd {sd:.3}")
    };
    ui.label(format!(
        "Belief of {to} before: {}; after: {}; reference: {}",
        stats(&m.belief_before),
        stats(&m.belief_after),
        stats(&v.exact[m.to])
    ));
    // The reference first, so an exact belief's curve is drawn over it, not hidden under it.
    let mut series = vec![("reference", EXACT, &v.exact[m.to])];
    if let Some(floor) = v.floor.get(m.to) {
        series.push(("floor a∞", FLOOR, floor));
    }
    series.push(("before", BEFORE, &m.belief_before));
    series.push(("after", BELIEF, &m.belief_after));
    curves_plot(
        ui,
        "teach_belief_curve",
        &v.xs,
        &series,
        &format!("x of {to}"),
        "belief",
        height,
    );
}

/// Curves on the grid `xs`, one colour per series.
fn curves_plot(
    ui: &mut egui::Ui,
    id: &str,
    xs: &[f64],
    series: &[(&str, Color32, &Vec<f64>)],
    x_label: &str,
    y_label: &str,
    height: f32,
) {
    ticks::plot(id, Scale::Real, Scale::Real)
        .height(height)
        .legend(Legend::default())
        .allow_scroll(false)
        .allow_drag(false)
        .allow_zoom(false)
        .include_y(0.0)
        .x_axis_label(x_label)
        .y_axis_label(y_label)
        .show(ui, |plot| {
            for (name, color, values) in series {
                let points: Vec<[f64; 2]> = (xs.iter().zip(values.iter()))
                    .map(|(&x, &y)| [x, y])
                    .collect();
                let width = if *name == "reference" { 3.0 } else { 1.8 };
                plot.line(
                    Line::new(*name, PlotPoints::from(points))
                        .color(*color)
                        .width(width),
                );
            }
        });
}

fn numbers(v: &[f64]) -> String {
    v.iter()
        .map(|x| format!("{x:.3}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Bars per label, one colour per series, side by side.
fn grouped_bars(
    ui: &mut egui::Ui,
    id: &str,
    series: &[(&str, Color32, &Vec<f64>)],
    x_label: &str,
    y_label: &str,
    height: f32,
) {
    // Probabilities keep the axis at 0..1; coefficients take their own range.
    let probabilities = y_label != "a_j";
    let k = series.len().max(1) as f64;
    let width = 0.8 / k;
    ticks::plot(id, Scale::Integer, Scale::Real)
        .height(height)
        .legend(Legend::default())
        .allow_scroll(false)
        .allow_drag(false)
        .allow_zoom(false)
        .include_y(0.0)
        .include_y(if probabilities { 1.0 } else { 0.0 })
        .x_axis_label(x_label)
        .y_axis_label(y_label)
        .show(ui, |plot| {
            for (j, (name, color, values)) in series.iter().enumerate() {
                let offset = (j as f64 - (k - 1.0) / 2.0) * width;
                let bars = values
                    .iter()
                    .enumerate()
                    .map(|(x, &p)| Bar::new(x as f64 + offset, p).width(width * 0.95))
                    .collect();
                plot.bar_chart(BarChart::new(*name, bars).color(*color));
            }
        });
}
