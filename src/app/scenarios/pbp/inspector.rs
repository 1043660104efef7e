//! The pbp room's inspector: per-method KL and learning time, the P̂(e) consistency between the
//! root and the leaves, the clip count, and for the chosen inner separator its 2SR diagnostics
//! (singular values of Θ̄ and Ĉ_θη on a log scale with the rank cut) and its downward and upward
//! messages beside the population (exact) model's, negative entries in red (spec P.4).

use eframe::egui::{self, Color32, RichText};
use egui_plot::{Legend, Line, Plot, PlotPoints, Points, VLine};

use crate::app::form::section;
use crate::scenarios::pbp::PbpView;

use super::view::method_color;

pub fn inspector(ui: &mut egui::Ui, v: &PbpView, separator: Option<usize>) {
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
        Plot::new("pbp_singular")
            .height(150.0)
            .legend(Legend::default())
            .allow_scroll(false)
            .x_axis_label("index")
            .y_axis_label("log10 σ")
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
    }
    section(ui, "Messages across this separator");
    message_rows(ui, "down  P̂(Ω)E[θ|Ω]", &cl.down, &cl.down_exact);
    message_rows(ui, "up  (identified via E[θ|h])", &cl.up, &cl.up_exact);
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
