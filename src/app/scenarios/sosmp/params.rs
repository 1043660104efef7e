//! The SOSMP scenario's parameters: the model (graph, nodes, potentials, α, seed, grid) and the
//! algorithm (basis, r, k, paths, iterations, step γ). Edits change the draft config; the app
//! applies it once the edit is complete (slider released, Enter pressed). The sweeps are
//! started from the toolbar above the error plot.

use eframe::egui::{self, RichText};
use strum::VariantArray;

use crate::app::form::{default_slider_width, param_label, param_row, row_label, section};
use crate::inference::sosmp::basis::BasisKind;
use crate::inference::sosmp::potentials::MixtureForm;
use crate::scenarios::sosmp::{GraphKind, PARAMS, PotentialKind, SosmpConfig, SosmpView};

/// A label in the grid's first column; returns its id to label the widget beside it.
fn basis_label(b: Option<BasisKind>) -> &'static str {
    match b {
        None => "auto",
        Some(k) => k.label(),
    }
}

pub fn ui(ui: &mut egui::Ui, c: &mut SosmpConfig, running: Option<&SosmpView>) {
    default_slider_width(ui);

    section(ui, "Model");
    egui::Grid::new("sosmp_model")
        .num_columns(2)
        .spacing([8.0, 6.0])
        .show(ui, |ui| {
            let id = param_label(ui, PARAMS, "graph");
            egui::ComboBox::from_id_salt("sosmp_graph")
                .selected_text(c.graph.label())
                .show_ui(ui, |ui| {
                    for g in [GraphKind::Chain, GraphKind::Tree, GraphKind::Grid] {
                        if ui.selectable_value(&mut c.graph, g, g.label()).changed()
                            && g == GraphKind::Grid
                        {
                            // A grid needs a square number of nodes.
                            let side = (c.nodes as f64).sqrt().round().clamp(2.0, 30.0) as usize;
                            c.nodes = side * side;
                        }
                    }
                })
                .response
                .labelled_by(id);
            ui.end_row();
            if c.graph == GraphKind::Grid {
                let id = row_label(ui, "Side", "The grid is side × side nodes");
                let mut side = (c.nodes as f64).sqrt().round() as usize;
                if ui
                    .add(egui::Slider::new(&mut side, 2..=30))
                    .labelled_by(id)
                    .changed()
                {
                    c.nodes = side * side;
                }
                ui.end_row();
            } else if c.graph != GraphKind::Custom {
                let id = param_label(ui, PARAMS, "nodes");
                ui.add(egui::Slider::new(&mut c.nodes, 2..=1000).logarithmic(true))
                    .labelled_by(id);
                ui.end_row();
            }
            let id = param_label(ui, PARAMS, "potentials");
            egui::ComboBox::from_id_salt("sosmp_potentials")
                .selected_text(c.potentials.label())
                .show_ui(ui, |ui| {
                    for &p in PotentialKind::VARIANTS {
                        ui.selectable_value(&mut c.potentials, p, p.label());
                    }
                })
                .response
                .labelled_by(id);
            ui.end_row();
            let id = param_label(ui, PARAMS, "mixture_form");
            egui::ComboBox::from_id_salt("sosmp_mixture_form")
                .selected_text(c.mixture_form.label())
                .show_ui(ui, |ui| {
                    for &f in MixtureForm::VARIANTS {
                        ui.selectable_value(&mut c.mixture_form, f, f.label());
                    }
                })
                .response
                .labelled_by(id);
            ui.end_row();
            if c.potentials == PotentialKind::Kernel {
                param_row(ui, c, PARAMS, "alpha");
                ui.end_row();
            }
            let id = param_label(ui, PARAMS, "seed");
            ui.add(egui::DragValue::new(&mut c.seed).speed(0.2))
                .labelled_by(id);
            ui.end_row();
            param_row(ui, c, PARAMS, "points_per_unit");
            ui.end_row();
        });

    section(ui, "SOSMP");
    egui::Grid::new("sosmp_algorithm")
        .num_columns(2)
        .spacing([8.0, 6.0])
        .show(ui, |ui| {
            let id = param_label(ui, PARAMS, "basis");
            egui::ComboBox::from_id_salt("sosmp_basis")
                .selected_text(basis_label(c.basis))
                .show_ui(ui, |ui| {
                    ui.selectable_value(&mut c.basis, None, "auto");
                    for &b in BasisKind::VARIANTS {
                        ui.selectable_value(&mut c.basis, Some(b), b.label());
                    }
                })
                .response
                .labelled_by(id);
            ui.end_row();
            for key in ["coefficients", "samples", "paths"] {
                param_row(ui, c, PARAMS, key);
                ui.end_row();
            }
            let id = param_label(ui, PARAMS, "iters");
            ui.add(
                egui::DragValue::new(&mut c.iters)
                    .range(1..=1_000_000)
                    .speed(5.0),
            )
            .labelled_by(id);
            ui.end_row();
            param_row(ui, c, PARAMS, "step_gamma");
            ui.end_row();
        });
    if let Some(v) = running {
        let lines = [
            format!(
                "running: {} nodes, {} directed messages, {} grid points on [{}, {}], {} basis",
                v.num_nodes,
                v.edges.len(),
                v.grid.len(),
                v.domain.0,
                v.domain.1,
                v.basis
            ),
            format!(
                "reference: grid BP; floor: the expected update's fixed point (e(a∞)/e₀ {:.3e})",
                v.floor
            ),
        ];
        for line in lines {
            ui.add(egui::Label::new(RichText::new(line).small().weak()).wrap());
        }
    }
}
