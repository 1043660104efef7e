//! The pbp room for a pendigits run (Wang & Gordon 2020, Sec. 6 "Handwritten Digit
//! Recognition", Fig. 7): test accuracy per method, the
//! confusion matrix of a chosen method, and the picked test digit drawn as its 8-point pen
//! trajectory beside its per-class log P̂(x) (PBP's Eq. 4 estimate, EM-HMM's log-likelihood).

use eframe::egui::{self, Align2, Color32, FontId, Pos2, Rect, RichText, Sense, Stroke, Vec2};
use egui_plot::{Bar, BarChart, Legend};

use super::view::method_color;
use crate::app::commands::UiCommand;
use crate::app::views::ticks::{self, Scale};
use crate::scenarios::ScenarioControl;
use crate::scenarios::pbp::PbpControl;
use crate::scenarios::pbp::pen_run::{PenMethodView, PenView};

pub(super) fn color(name: &str) -> Color32 {
    match name {
        "em_hmm" => method_color("em"),
        other => method_color(other),
    }
}

pub fn central(
    ui: &mut egui::Ui,
    v: &PenView,
    confusion_of: &mut usize,
    commands: &mut Vec<UiCommand>,
) {
    ui.label(
        RichText::new(format!(
            "pendigits (stand-in chain H1..H8 → P1..P8 per class, Sec. 6)   ·   N = {} training digits   ·   {} test digits",
            v.samples, v.test_count
        ))
        .strong(),
    );
    if v.methods.is_empty() {
        ui.label("learning the ten class models …");
        return;
    }
    egui::Grid::new("pen_accuracy")
        .num_columns(4)
        .striped(true)
        .spacing([16.0, 3.0])
        .show(ui, |ui| {
            for h in ["method", "test accuracy", "validation accuracy", "learning"] {
                ui.label(RichText::new(h).strong());
            }
            ui.end_row();
            for m in &v.methods {
                ui.label(RichText::new(m.name).color(color(m.name)));
                ui.label(format!("{:.4}", m.test_accuracy));
                ui.label(format!("{:.4}", m.validation_accuracy));
                ui.label(format!("{:.3} s", m.seconds));
                ui.end_row();
            }
        });
    ui.separator();
    let width = ui.available_width();
    ui.horizontal_top(|ui| {
        ui.vertical(|ui| {
            ui.set_width(width * 0.38);
            ui.horizontal(|ui| {
                ui.label(RichText::new("Confusion matrix").strong());
                for (k, m) in v.methods.iter().enumerate() {
                    if ui.selectable_label(*confusion_of == k, m.name).clicked() {
                        *confusion_of = k;
                    }
                }
            });
            let m = &v.methods[(*confusion_of).min(v.methods.len() - 1)];
            confusion(ui, m, width * 0.36);
        });
        ui.vertical(|ui| {
            ui.set_width(width * 0.58);
            digit_picker(ui, v, commands);
            ui.horizontal_top(|ui| {
                trajectory(ui, v, 200.0);
                scores(ui, v);
            });
            scores_table(ui, v);
        });
    });
}

fn confusion(ui: &mut egui::Ui, m: &PenMethodView, side: f32) {
    let side = side.clamp(200.0, 420.0);
    let (rect, _) = ui.allocate_exact_size(Vec2::splat(side), Sense::hover());
    let painter = ui.painter_at(rect);
    let margin = 18.0;
    let cell = (side - margin) / 10.0;
    let origin = rect.min + Vec2::splat(margin);
    for (t, row) in m.confusion.iter().enumerate() {
        let total = row.iter().sum::<usize>().max(1) as f32;
        for (p, &count) in row.iter().enumerate() {
            let r = Rect::from_min_size(
                origin + Vec2::new(p as f32 * cell, t as f32 * cell),
                Vec2::splat(cell - 1.0),
            );
            let share = count as f32 / total;
            let fill = if t == p {
                Color32::from_rgb(
                    (255.0 - 215.0 * share) as u8,
                    (255.0 - 145.0 * share) as u8,
                    (255.0 - 35.0 * share) as u8,
                )
            } else {
                Color32::from_rgb(255, (255.0 - 600.0 * share).max(60.0) as u8, 200)
            };
            painter.rect_filled(r, 0.0, fill);
            if count > 0 && cell > 16.0 {
                painter.text(
                    r.center(),
                    Align2::CENTER_CENTER,
                    count.to_string(),
                    FontId::proportional((cell * 0.32).min(11.0)),
                    Color32::BLACK,
                );
            }
        }
        painter.text(
            Pos2::new(rect.min.x + 2.0, origin.y + (t as f32 + 0.5) * cell),
            Align2::LEFT_CENTER,
            t.to_string(),
            FontId::proportional(11.0),
            ui.visuals().text_color(),
        );
        painter.text(
            Pos2::new(origin.x + (t as f32 + 0.5) * cell, rect.min.y + 2.0),
            Align2::CENTER_TOP,
            t.to_string(),
            FontId::proportional(11.0),
            ui.visuals().text_color(),
        );
    }
    ui.label(
        RichText::new("rows: true digit, columns: predicted")
            .small()
            .weak(),
    );
}

fn digit_picker(ui: &mut egui::Ui, v: &PenView, commands: &mut Vec<UiCommand>) {
    let pick = |commands: &mut Vec<UiCommand>, i: usize| {
        commands.push(UiCommand::Control(ScenarioControl::Pbp(
            PbpControl::PickDigit(i),
        )));
    };
    ui.horizontal(|ui| {
        ui.label(RichText::new("Test digit").strong());
        if ui.button("◀ previous").clicked() && v.digit_index > 0 {
            pick(commands, v.digit_index - 1);
        }
        let mut index = v.digit_index;
        let response = ui.add(
            egui::DragValue::new(&mut index)
                .range(0..=v.test_count.saturating_sub(1))
                .prefix("#"),
        );
        if response.changed() && index != v.digit_index {
            pick(commands, index);
        }
        if ui.button("next ▶").clicked() && v.digit_index + 1 < v.test_count {
            pick(commands, v.digit_index + 1);
        }
        ui.label(format!("true class {}", v.digit_class));
    });
}

/// The 8 pen points joined in writing order, y up, the first point ringed.
fn trajectory(ui: &mut egui::Ui, v: &PenView, side: f32) {
    let (rect, _) = ui.allocate_exact_size(Vec2::splat(side), Sense::hover());
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 4.0, Color32::WHITE);
    let inner = rect.shrink(12.0);
    let to_screen = |p: &[f64; 2]| {
        Pos2::new(
            inner.min.x + (p[0] / 100.0) as f32 * inner.width(),
            inner.max.y - (p[1] / 100.0) as f32 * inner.height(),
        )
    };
    let pts: Vec<Pos2> = v.digit_points.iter().map(to_screen).collect();
    let ink = Color32::from_rgb(30, 30, 60);
    for w in pts.windows(2) {
        painter.line_segment([w[0], w[1]], Stroke::new(3.0, ink));
    }
    for (t, p) in pts.iter().enumerate() {
        painter.circle_filled(*p, 3.5, ink);
        painter.text(
            *p + Vec2::new(6.0, -6.0),
            Align2::LEFT_BOTTOM,
            (t + 1).to_string(),
            FontId::proportional(10.0),
            Color32::from_rgb(200, 60, 40),
        );
    }
    if let Some(first) = pts.first() {
        painter.circle_stroke(
            *first,
            7.0,
            Stroke::new(1.5, Color32::from_rgb(200, 60, 40)),
        );
    }
}

fn scores(ui: &mut egui::Ui, v: &PenView) {
    ui.vertical(|ui| {
        ui.label(RichText::new("log P̂(x | class)").strong());
        let k = v.methods.len().max(1) as f64;
        let width = 0.8 / k;
        // Bars are drawn relative to each method's best class, so both scales read alike.
        ticks::plot("pen_scores", Scale::Integer, Scale::Real)
            .height(180.0)
            .width(ui.available_width().min(300.0))
            .legend(Legend::default())
            .allow_scroll(false)
            .allow_drag(false)
            .x_axis_label("class")
            .y_axis_label("log P̂(x) − best")
            .show(ui, |plot| {
                for (j, m) in v.methods.iter().enumerate() {
                    let best = m
                        .picked_scores
                        .iter()
                        .copied()
                        .filter(|s| s.is_finite())
                        .fold(f64::NEG_INFINITY, f64::max);
                    let offset = (j as f64 - (k - 1.0) / 2.0) * width;
                    let bars = m
                        .picked_scores
                        .iter()
                        .enumerate()
                        .filter(|(_, s)| s.is_finite())
                        .map(|(c, &s)| {
                            Bar::new(c as f64 + offset, (s - best).max(-60.0)).width(width * 0.95)
                        })
                        .collect();
                    plot.bar_chart(BarChart::new(m.name, bars).color(color(m.name)));
                }
            });
    });
}

/// Per-class log P̂(x) of the picked digit, the best class in bold.
fn scores_table(ui: &mut egui::Ui, v: &PenView) {
    egui::Grid::new("pen_scores_table")
        .num_columns(11)
        .spacing([6.0, 2.0])
        .show(ui, |ui| {
            ui.label("");
            for c in 0..10 {
                ui.label(RichText::new(c.to_string()).strong());
            }
            ui.end_row();
            for m in &v.methods {
                ui.label(RichText::new(m.name).color(color(m.name)));
                let best = (0..m.picked_scores.len())
                    .max_by(|&a, &b| m.picked_scores[a].total_cmp(&m.picked_scores[b]));
                for (c, s) in m.picked_scores.iter().enumerate() {
                    let text = if s.is_finite() {
                        format!("{s:.1}")
                    } else {
                        "−∞".into()
                    };
                    let text = RichText::new(text).small();
                    ui.label(if Some(c) == best { text.strong() } else { text });
                }
                ui.end_row();
            }
        });
}
