//! The kernel rows of a kernel-BP settings block (kernel, bandwidth or its rule and
//! multiplier, λ), shared by the tree and retrieval rooms; with the kernel a node actually
//! uses shown beneath when a run is live.

use eframe::egui;
use strum::VariantArray;

use crate::app::form::row_label;
use crate::inference::kbp::Bandwidth;
use crate::inference::tree_kbp::{BandwidthRule, KernelKind, NodeKernelInfo, NodeKernelSettings};

/// The kernel widgets for one settings block (`salt` keeps the ids apart); `running` is the
/// kernel a node actually uses (its median distance, σ and the rule that chose it).
pub fn kernel_rows(
    ui: &mut egui::Ui,
    k: &mut NodeKernelSettings,
    salt: &str,
    running: Option<&NodeKernelInfo>,
) {
    let median = running.map(|r| r.median);
    egui::Grid::new(("kernel", salt))
        .num_columns(2)
        .spacing([8.0, 6.0])
        .show(ui, |ui| {
            let id = row_label(ui, "Kernel", "The kernel of the node's values");
            egui::ComboBox::from_id_salt(("kernel_kind", salt))
                .selected_text(k.kernel.label())
                .show_ui(ui, |ui| {
                    for &kind in KernelKind::VARIANTS {
                        ui.selectable_value(&mut k.kernel, kind, kind.label());
                    }
                })
                .response
                .labelled_by(id);
            ui.end_row();
            if k.kernel.has_bandwidth() {
                let id = row_label(
                    ui,
                    "Bandwidth",
                    "auto: chosen from each node's data by the rule below",
                );
                let mut auto = matches!(k.bandwidth, Bandwidth::Auto);
                ui.horizontal(|ui| {
                    if ui.checkbox(&mut auto, "auto").labelled_by(id).changed() {
                        k.bandwidth = if auto {
                            Bandwidth::Auto
                        } else {
                            Bandwidth::Value(
                                running
                                    .and_then(|r| r.sigma)
                                    .or(median.map(|m| m * k.multiplier))
                                    .unwrap_or(1.0),
                            )
                        };
                    }
                    if auto {
                        // loo-cv: per node, the σ whose Parzen density best predicts held-out
                        // pairs with its tree neighbours; median: median distance × multiplier.
                        egui::ComboBox::from_id_salt(("bandwidth_rule", salt))
                            .selected_text(k.rule.label())
                            .show_ui(ui, |ui| {
                                for &rule in BandwidthRule::VARIANTS {
                                    ui.selectable_value(&mut k.rule, rule, rule.label());
                                }
                            })
                            .response
                            .on_hover_text(
                                "loo-cv: per node, the σ maximising the leave-one-out \
                                 likelihood of its pairs with its tree neighbours; median: \
                                 the median pairwise distance times the multiplier",
                            );
                    }
                    if let Bandwidth::Value(v) = &mut k.bandwidth {
                        ui.add(
                            egui::DragValue::new(v)
                                .range(1e-6..=1e6)
                                .speed(0.01)
                                .prefix("σ = "),
                        )
                        .accessible_name("Bandwidth value");
                    }
                });
                ui.end_row();
                if auto && k.rule == BandwidthRule::Median {
                    let id = row_label(ui, "Multiplier", "σ = multiplier × median distance");
                    ui.add(
                        egui::Slider::new(&mut k.multiplier, 0.01..=10.0)
                            .logarithmic(true)
                            .max_decimals(3),
                    )
                    .labelled_by(id);
                    ui.end_row();
                }
                if let Some(r) = running {
                    ui.label("");
                    match r.sigma {
                        Some(s) => {
                            ui.weak(format!("σ = {s:.4} ({}), median {:.3}", r.rule, r.median))
                        }
                        None => ui.weak(format!("running: median distance {:.4}", r.median)),
                    };
                    ui.end_row();
                }
            }
            let id = row_label(
                ui,
                "λ (K + λI)",
                "Regulariser in Gram-diagonal form: added to the Gram matrix's diagonal as is \
                 (not scaled by m). Larger: smoother, more biased messages.",
            );
            ui.add(
                egui::Slider::new(&mut k.lambda, 1e-3..=1e3)
                    .logarithmic(true)
                    .max_decimals(4),
            )
            .labelled_by(id);
            ui.end_row();
        });
}
