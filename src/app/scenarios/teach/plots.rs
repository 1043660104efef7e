//! The teaching room's inspector: the last message's content before and after, the receiving
//! node's belief before, after and exact (grouped bars over the node's labels, with the
//! numbers as text), and the belief error and fixed-point residual per message.

use eframe::egui::{self, Color32, RichText};
use egui_plot::{Bar, BarChart, Legend};

use super::{BEFORE, BELIEF, EXACT, SENT};
use crate::app::scenarios::InspectorHeights;
use crate::app::views::curves;
use crate::app::views::ticks::{self, Scale};
use crate::run::IterationRecord;
use crate::scenarios::teach::TeachView;

pub fn inspector(
    ui: &mut egui::Ui,
    v: &TeachView,
    history: &[IterationRecord],
    heights: InspectorHeights,
) {
    let chart_height = (heights.free / 4.0).clamp(110.0, 200.0);
    match &v.last {
        None => {
            ui.label("No message sent yet. Press → (Step) to send the schedule's first message.");
        }
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
            curves::Series::metric("largest |belief − exact|", "belief_error"),
            curves::Series::metric("fixed-point residual", "fixed_point_residual"),
            curves::Series::residual("change of the message sent"),
        ],
        None,
        None,
        heights.curve.max(140.0),
    );
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
    let k = series.len().max(1) as f64;
    let width = 0.8 / k;
    ticks::plot(id, Scale::Integer, Scale::Real)
        .height(height)
        .legend(Legend::default())
        .allow_scroll(false)
        .allow_drag(false)
        .allow_zoom(false)
        .include_y(0.0)
        .include_y(1.0)
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
