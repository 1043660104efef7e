//! The random-feature lab (Supp B.3 / B.6 of Jitkrittum et al. 2015): K against K̂
//! as heat maps on messages sorted by mean, their difference, the (D_in, D_out) error surface
//! of Alg. 1 as a coloured grid, and the B.3 table. Drawing is O(n²) per change of the maps.

use eframe::egui::{self, RichText};

use crate::app::textures::{CachedTexture, Source};
use crate::scenarios::kjit::rff::{B6_D_IN, B6_D_OUT, RffHeatmaps, RffReport};
use crate::viz;

/// The lab's three textures (K, K̂, |K − K̂|), kept across frames.
#[derive(Default)]
pub struct RffTextures {
    maps: [CachedTexture; 3],
    bar: CachedTexture,
}

/// The side of each heat map on screen, in points.
const MAP_SIDE: f32 = 220.0;

pub fn show(ui: &mut egui::Ui, report: &RffReport, textures: &mut RffTextures) {
    ui.strong("Random features against the exact kernels (Supp B.3, B.6)");
    ui.add_space(4.0);
    heatmaps(ui, &report.heatmaps, textures);
    ui.add_space(8.0);
    ui.horizontal_top(|ui| {
        ui.vertical(|ui| b6_surface(ui, report));
        ui.add_space(24.0);
        ui.vertical(|ui| b3_table(ui, report));
    });
}

fn heatmaps(ui: &mut egui::Ui, maps: &RffHeatmaps, textures: &mut RffTextures) {
    let n = maps.n;
    let errors: Vec<f64> = maps
        .exact
        .iter()
        .zip(&maps.approx)
        .map(|(a, b)| (a - b).abs())
        .collect();
    // K and K̂ share one scale, so that equal colours mean equal values.
    let top = maps
        .exact
        .iter()
        .chain(&maps.approx)
        .fold(0.0f64, |m, v| m.max(*v));
    let key = [
        n as f64,
        maps.d_in as f64,
        maps.d_out as f64,
        maps.max_abs_error,
    ];
    let panels: [(&str, String, &[f64], f64); 3] = [
        (
            "kjit_rff_exact",
            "K (exact, eq. 7)".to_string(),
            &maps.exact,
            top,
        ),
        (
            "kjit_rff_approx",
            format!("K̂ (Alg. 1, D_in = {}, D_out = {})", maps.d_in, maps.d_out),
            &maps.approx,
            top,
        ),
        (
            "kjit_rff_error",
            format!(
                "|K − K̂|: mean {:.4}, max {:.4}",
                maps.mean_abs_error, maps.max_abs_error
            ),
            &errors,
            maps.max_abs_error,
        ),
    ];
    ui.label(
        RichText::new(format!(
            "{n} messages N(m, v) of Supp B.6, sorted by m; one draw of the two-stage features"
        ))
        .small()
        .weak(),
    );
    ui.horizontal_top(|ui| {
        for (k, (name, title, values, max)) in panels.into_iter().enumerate() {
            ui.vertical(|ui| {
                ui.label(title);
                let texture = textures.maps[k].get(ui.ctx(), name, Source::new(&[], &key), || {
                    viz::heat_rgba(n, n, values, max)
                });
                ui.add(
                    egui::Image::new(texture)
                        .fit_to_exact_size(egui::vec2(MAP_SIDE, MAP_SIDE))
                        .texture_options(egui::TextureOptions::NEAREST),
                );
                scale_bar(ui, &mut textures.bar, max);
            });
        }
    });
}

/// The heat colours from 0 to `max`, under a map.
fn scale_bar(ui: &mut egui::Ui, bar: &mut CachedTexture, max: f64) {
    let texture = bar.get(ui.ctx(), "kjit_rff_bar", Source::new(&[], &[]), || {
        viz::heat_bar(128, 1)
    });
    ui.horizontal(|ui| {
        ui.label(RichText::new("0").small());
        ui.add(egui::Image::new(texture).fit_to_exact_size(egui::vec2(MAP_SIDE - 70.0, 8.0)));
        ui.label(RichText::new(format!("{max:.3}")).small());
    });
}

/// Supp B.6: ‖K − K̂‖_F / n over the (D_in, D_out) grid, coloured on one scale.
fn b6_surface(ui: &mut egui::Ui, report: &RffReport) {
    ui.label(RichText::new("Supp B.6: ‖K − K̂‖_F / n (300 messages, 5 draws)").strong());
    let top = report
        .supp_b6
        .iter()
        .map(|c| c.frobenius_over_n)
        .fold(0.0f64, f64::max);
    egui::Grid::new("kjit_rff_b6")
        .spacing([4.0, 4.0])
        .show(ui, |ui| {
            ui.label(RichText::new("D_in \\ D_out").small());
            for d_out in B6_D_OUT {
                ui.label(RichText::new(d_out.to_string()).small());
            }
            ui.end_row();
            for d_in in B6_D_IN {
                ui.label(RichText::new(d_in.to_string()).small());
                for d_out in B6_D_OUT {
                    let cell = report
                        .supp_b6
                        .iter()
                        .find(|c| c.d_in == d_in && c.d_out == d_out);
                    match cell {
                        Some(c) => {
                            let [r, g, b, _] =
                                viz::heat_color(c.frobenius_over_n / top.max(1e-300));
                            let fill = egui::Color32::from_rgb(r, g, b);
                            let luma = 0.299 * r as f32 + 0.587 * g as f32 + 0.114 * b as f32;
                            let text = if luma > 140.0 {
                                egui::Color32::BLACK
                            } else {
                                egui::Color32::WHITE
                            };
                            egui::Frame::new()
                                .fill(fill)
                                .inner_margin(egui::Margin::symmetric(6, 2))
                                .show(ui, |ui| {
                                    ui.label(
                                        RichText::new(format!("{:.4}", c.frobenius_over_n))
                                            .monospace()
                                            .color(text),
                                    );
                                });
                        }
                        None => {
                            ui.label(RichText::new("…").weak());
                        }
                    }
                }
                ui.end_row();
            }
        });
}

/// Supp B.3: mean and max |K − K̂| of the expected-product kernel against D.
fn b3_table(ui: &mut egui::Ui, report: &RffReport) {
    ui.label(
        RichText::new("Supp B.3: |K − K̂| of the expected-product kernel (1000 messages, 10 draws)")
            .strong(),
    );
    egui::Grid::new("kjit_rff_b3")
        .num_columns(3)
        .striped(true)
        .spacing([16.0, 4.0])
        .show(ui, |ui| {
            for h in ["D", "mean", "max"] {
                ui.label(RichText::new(h).strong());
            }
            ui.end_row();
            for row in &report.supp_b3 {
                ui.label(row.features.to_string());
                ui.label(format!("{:.5}", row.mean_abs_error));
                ui.label(format!("{:.5}", row.max_abs_error));
                ui.end_row();
            }
        });
}
