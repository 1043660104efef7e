//! The pbp room's inspector: per-method KL and learning time, the P̂(e) consistency between the
//! root and the leaves, the clip count, and for the chosen inner separator its 2SR diagnostics
//! (singular values of Θ̄ and Ĉ_θη on a log scale with the rank cut) and its downward and upward
//! messages beside the population (exact) model's, negative entries in red (PBP's messages,
//! like spectral methods', can have negative entries).

use eframe::egui::{self, Color32, RichText};
use egui_plot::{Legend, Line, PlotPoints, Points, VLine};

use crate::app::commands::UiCommand;
use crate::app::form::section;
use crate::scenarios::ScenarioControl;
use crate::scenarios::pbp::{PbpConfig, PbpControl, PbpView};

use super::view::method_color;
use crate::app::views::ticks::{self, Scale};

pub fn inspector(
    ui: &mut egui::Ui,
    v: &PbpView,
    separator: Option<usize>,
    draft: Option<&mut PbpConfig>,
    commands: &mut Vec<UiCommand>,
) {
    section(ui, "Learning (all evidence values of the query set)");
    let pbp_seconds = v
        .summary
        .iter()
        .find(|s| s.0 == "pbp")
        .map(|s| s.2)
        .unwrap_or(f64::NAN);
    egui::Grid::new("pbp_summary")
        .num_columns(4)
        .striped(true)
        .show(ui, |ui| {
            for h in ["method", "mean KL", "seconds", "× PBP time"] {
                ui.label(RichText::new(h).strong());
            }
            ui.end_row();
            for (name, kl, seconds) in &v.summary {
                ui.label(RichText::new(*name).color(method_color(name)));
                ui.label(format!("{kl:.3e}"));
                ui.label(format!("{seconds:.4}"));
                ui.label(format!("{:.0}", seconds / pbp_seconds));
                ui.end_row();
            }
        });
    ui.label(format!(
        "P̂(e) at the root {:.6}; largest relative gap to a leaf {:.1e}",
        v.root_evidence, v.leaf_evidence_gap
    ));
    ui.label(format!(
        "PBP entries clipped at 1e-12 over the query set: {}",
        v.clipped
    ));
    ui.label(format!(
        "last evidence change answered in {:.3} ms",
        v.latency_ms
    ));

    learning_curve(ui, v);

    let inner: Vec<usize> = (0..v.cliques.len())
        .filter(|&c| v.cliques[c].diagnostics.is_some())
        .collect();
    let Some(c) = separator.or_else(|| inner.first().copied()) else {
        return;
    };
    let cl = &v.cliques[c];
    let name = |vars: &[usize]| {
        vars.iter()
            .map(|&i| v.nodes[i].name.as_str())
            .collect::<Vec<_>>()
            .join(",")
    };
    section(ui, &format!("Separator {{{}}}", name(&cl.separator)));
    if let Some(g) = &cl.groups {
        ui.label(format!(
            "α = {{{}}}   β = {{{}}}   k_S = {}",
            name(&g.alpha),
            name(&g.beta),
            g.k
        ));
        if g.weak && !cl.leaf {
            ui.colored_label(
                Color32::RED,
                format!("weak instrument: σ_k/σ_1 = {:.1e} < 1e-3", g.rank_ratio),
            );
        }
    }
    if let Some(d) = &cl.diagnostics {
        ui.label(format!(
            "S2 rank {}  ·  S1 R² {:.3}  ·  condition {:.1}",
            d.rank_used, d.s1_r2, d.condition
        ));
        ticks::plot("pbp_singular", Scale::Integer, Scale::Log10)
            .height(150.0)
            .legend(Legend::default())
            .allow_scroll(false)
            .x_axis_label("index k")
            .y_axis_label("singular value σ_k")
            .show(ui, |plot| {
                for (label, values, color) in [
                    (
                        "Θ̄ / √N",
                        &d.theta_bar_singular,
                        Color32::from_rgb(40, 110, 220),
                    ),
                    ("Ĉθη", &d.cross_singular, Color32::from_rgb(230, 130, 30)),
                ] {
                    let pts: Vec<[f64; 2]> = values
                        .iter()
                        .enumerate()
                        .filter(|(_, s)| **s > 0.0)
                        .map(|(i, s)| [i as f64 + 1.0, s.log10()])
                        .collect();
                    plot.line(Line::new(label, PlotPoints::from(pts.clone())).color(color));
                    plot.points(
                        Points::new(label, PlotPoints::from(pts))
                            .color(color)
                            .radius(3.0),
                    );
                }
                plot.vline(VLine::new("rank cut", d.rank_used as f64 + 0.5).color(Color32::RED));
            });
        let count = d.theta_bar_singular.len().max(d.cross_singular.len());
        if let Some(rank) = rank_cut(ui, d.rank_used, count)
            && let Some(c) = draft
        {
            // Live: PBP relearns on the worker at once; the draft's rank makes the release
            // relearn EM and online EM too (the usual apply-on-release path).
            c.rank = rank;
            commands.push(UiCommand::Control(ScenarioControl::Pbp(
                PbpControl::Relearn {
                    samples: v.samples,
                    rank,
                },
            )));
        }
    }
    section(ui, "Messages across this separator");
    message_rows(ui, "down  P̂(Ω)E[θ|Ω]", &cl.down, &cl.down_exact);
    message_rows(ui, "up  (identified via E[θ|h])", &cl.up, &cl.up_exact);
}

/// PBP's KL against N (log-log, mean ± sd over sample draws of this truth) with the learned
/// methods at the current N, and PBP's learning time against N.
fn learning_curve(ui: &mut egui::Ui, v: &PbpView) {
    if v.curve.is_empty() {
        return;
    }
    section(ui, "Learning curve (this truth, 5 sample draws)");
    let pts: Vec<(f64, f64, f64)> = v
        .curve
        .iter()
        .filter(|p| p.kl_mean > 0.0)
        .map(|p| ((p.n as f64).log10(), p.kl_mean, p.kl_sd))
        .collect();
    let xy: Vec<(f64, f64)> = v
        .curve
        .iter()
        .filter(|p| p.n >= 2000)
        .map(|p| (p.n as f64, p.kl_mean))
        .collect();
    if let Some(slope) = crate::scenarios::pbp::experiment::log_log_slope(&xy) {
        ui.label(format!(
            "slope of log mean KL over N ≥ 2000: {slope:.2} (our acceptance range: −1.3 … −0.6)"
        ));
    }
    let pbp = method_color("pbp");
    ticks::plot("pbp_learning_curve", Scale::Log10, Scale::Log10)
        .height(150.0)
        .legend(Legend::default())
        .allow_scroll(false)
        .x_axis_label("training samples N")
        .y_axis_label("KL (nats)")
        .show(ui, |plot| {
            let mean: Vec<[f64; 2]> = pts.iter().map(|p| [p.0, p.1.log10()]).collect();
            plot.line(Line::new("pbp", PlotPoints::from(mean.clone())).color(pbp));
            plot.points(
                Points::new("pbp", PlotPoints::from(mean))
                    .color(pbp)
                    .radius(2.5),
            );
            for &(x, m, sd) in &pts {
                let lo = (m - sd).max(m * 1e-2);
                plot.line(
                    Line::new(
                        "± sd",
                        PlotPoints::from(vec![[x, lo.log10()], [x, (m + sd).log10()]]),
                    )
                    .color(pbp.gamma_multiply(0.6)),
                );
            }
            for (name, kl, _) in &v.summary {
                if *name != "pbp" && *kl > 0.0 {
                    plot.points(
                        Points::new(
                            *name,
                            PlotPoints::from(vec![[(v.samples as f64).log10(), kl.log10()]]),
                        )
                        .color(method_color(name))
                        .radius(4.0),
                    );
                }
            }
            plot.vline(VLine::new("current N", (v.samples as f64).log10()).color(Color32::GRAY));
        });
    let times: Vec<[f64; 2]> = v
        .curve
        .iter()
        .filter(|p| p.seconds_mean > 0.0)
        .map(|p| [(p.n as f64).log10(), (p.seconds_mean * 1e3).log10()])
        .collect();
    ticks::plot("pbp_learning_time", Scale::Log10, Scale::Log10)
        .height(90.0)
        .allow_scroll(false)
        .x_axis_label("training samples N")
        .y_axis_label("PBP learning (ms)")
        .show(ui, |plot| {
            plot.line(Line::new("pbp seconds", PlotPoints::from(times)).color(pbp));
        });
}

/// The rank cut as a draggable marker over the singular values' indices 1..=count: returns the
/// new rank while it is dragged to another place.
fn rank_cut(ui: &mut egui::Ui, rank: usize, count: usize) -> Option<usize> {
    if count == 0 {
        return None;
    }
    let width = ui.available_width().min(320.0);
    let (rect, response) =
        ui.allocate_exact_size(egui::vec2(width, 26.0), egui::Sense::click_and_drag());
    response
        .widget_info(|| egui::WidgetInfo::slider(true, rank as f64, "rank cut (drag to relearn)"));
    let cell = rect.width() / count as f32;
    let painter = ui.painter_at(rect);
    for i in 0..count {
        let r = egui::Rect::from_min_size(
            rect.min + egui::vec2(i as f32 * cell, 4.0),
            egui::vec2(cell - 2.0, rect.height() - 8.0),
        );
        let kept = i < rank;
        painter.rect_filled(
            r,
            2.0,
            if kept {
                Color32::from_rgb(190, 215, 250)
            } else {
                Color32::from_gray(225)
            },
        );
        painter.text(
            r.center(),
            egui::Align2::CENTER_CENTER,
            format!("σ{}", i + 1),
            egui::FontId::proportional(11.0),
            Color32::BLACK,
        );
    }
    let x = rect.min.x + rank as f32 * cell - 1.0;
    painter.line_segment(
        [egui::pos2(x, rect.min.y), egui::pos2(x, rect.max.y)],
        egui::Stroke::new(3.0, Color32::RED),
    );
    ui.label(
        RichText::new("drag the red cut: the σ kept by the truncated pseudo-inverse (S2)")
            .small()
            .weak(),
    );
    let pointer = response.interact_pointer_pos()?;
    if !(response.dragged() || response.clicked()) {
        return None;
    }
    let new = (((pointer.x - rect.min.x) / cell).round() as usize).clamp(1, count);
    (new != rank).then_some(new)
}

fn message_rows(ui: &mut egui::Ui, title: &str, pbp: &[f64], exact: &[f64]) {
    ui.label(RichText::new(title).small().strong());
    egui::Grid::new(title).num_columns(2).show(ui, |ui| {
        for (label, values) in [("PBP", pbp), ("exact", exact)] {
            ui.label(label);
            ui.horizontal(|ui| {
                for x in values {
                    let color = if *x < 0.0 {
                        Color32::RED
                    } else {
                        ui.visuals().text_color()
                    };
                    ui.label(RichText::new(format!("{x:.4}")).color(color).monospace());
                }
            });
            ui.end_row();
        }
    });
}
