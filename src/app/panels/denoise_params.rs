//! The denoise scenario's parameters: image source, model (C, noise, seed) and inference
//! (algorithm, schedule, damping, iterations, tolerance, estimate). Edits change the draft
//! config; the app applies it once the edit is complete (slider released, Enter pressed).

use eframe::egui::{self, RichText};

use crate::app::commands::UiCommand;
use crate::inference::{EstimateKind, Schedule};
use crate::scenarios::denoise::{DenoiseAlgorithm, DenoiseConfig};

/// Widest sunset the panel offers (larger sizes work from the command line).
const MAX_SUNSET_SIDE: usize = 1024;

/// A label in the grid's first column; returns its id to label the widget beside it.
fn row_label(ui: &mut egui::Ui, text: &str, hint: &str) -> egui::Id {
    ui.label(text).on_hover_text(hint).id
}

pub fn ui(
    ui: &mut egui::Ui,
    c: &mut DenoiseConfig,
    running_size: Option<[usize; 2]>,
    commands: &mut Vec<UiCommand>,
) {
    let slider_width = (ui.available_width() - 150.0).max(80.0);
    ui.spacing_mut().slider_width = slider_width;

    section(ui, "Image");
    ui.horizontal_wrapped(|ui| {
        match &c.image {
            None => ui.label("built-in sunset"),
            Some(path) => {
                let name = path.file_name().map_or_else(
                    || path.display().to_string(),
                    |n| n.to_string_lossy().into_owned(),
                );
                ui.label(RichText::new(name).monospace())
                    .on_hover_text(path.display().to_string())
            }
        };
        if let (Some(_), Some([w, h])) = (&c.image, running_size) {
            ui.weak(format!("{w} × {h}"));
        }
    });
    ui.horizontal(|ui| {
        let open = ui
            .button(UiCommand::OpenImageDialog.label())
            .on_hover_text(UiCommand::OpenImageDialog.tooltip(ui.ctx()));
        if open.clicked() {
            commands.push(UiCommand::OpenImageDialog);
        }
        let sunset = ui
            .add_enabled(c.image.is_some(), egui::Button::new("Use sunset"))
            .on_hover_text("Go back to the built-in sunset image");
        if sunset.clicked() {
            c.image = None;
        }
    });
    egui::Grid::new("denoise_image")
        .num_columns(2)
        .spacing([8.0, 6.0])
        .show(ui, |ui| {
            if c.image.is_none() {
                let id = row_label(ui, "Width", "Width of the sunset in pixels");
                ui.add(egui::DragValue::new(&mut c.width).range(2..=MAX_SUNSET_SIDE).suffix(" px"))
                    .labelled_by(id);
                ui.end_row();
                let id = row_label(ui, "Height", "Height of the sunset in pixels");
                ui.add(egui::DragValue::new(&mut c.height).range(2..=MAX_SUNSET_SIDE).suffix(" px"))
                    .labelled_by(id);
                ui.end_row();
            } else {
                ui.label("");
                ui.checkbox(&mut c.quantize, "Quantise to the C levels")
                    .on_hover_text("Round the loaded image to the C gray levels, so the discrete states can represent it exactly");
                ui.end_row();
            }
        });

    section(ui, "Model");
    egui::Grid::new("denoise_model")
        .num_columns(2)
        .spacing([8.0, 6.0])
        .show(ui, |ui| {
            let id = row_label(
                ui,
                "Levels C",
                "Number of gray levels (the states of every pixel), evenly spaced over 0..255",
            );
            ui.add(egui::Slider::new(&mut c.colors, 2..=256))
                .labelled_by(id);
            ui.end_row();
            let id = row_label(
                ui,
                "Noise σ",
                "Standard deviation of the added Gaussian noise, in gray levels",
            );
            ui.add(egui::Slider::new(&mut c.noise, 1.0..=100.0).max_decimals(1))
                .labelled_by(id);
            ui.end_row();
            let id = row_label(
                ui,
                "Seed",
                "Seed of the noise (the training pair uses a different one)",
            );
            ui.add(egui::DragValue::new(&mut c.seed).speed(0.2))
                .labelled_by(id);
            ui.end_row();
        });

    section(ui, "Inference");
    egui::Grid::new("denoise_inference")
        .num_columns(2)
        .spacing([8.0, 6.0])
        .show(ui, |ui| {
            let id = row_label(ui, "Algorithm", "The message-passing algorithm");
            egui::ComboBox::from_id_salt("denoise_algorithm")
                .selected_text(c.algorithm.label())
                .show_ui(ui, |ui| {
                    for a in DenoiseAlgorithm::ALL {
                        ui.selectable_value(&mut c.algorithm, a, a.label());
                    }
                })
                .response
                .labelled_by(id);
            ui.end_row();
            let id = row_label(ui, "Schedule", "synchronous: every message from the previous iteration's messages; sweep: nodes in order with the freshest messages");
            egui::ComboBox::from_id_salt("denoise_schedule")
                .selected_text(c.schedule.label())
                .show_ui(ui, |ui| {
                    for s in Schedule::ALL {
                        ui.selectable_value(&mut c.schedule, s, s.label());
                    }
                })
                .response
                .labelled_by(id);
            ui.end_row();
            let id = row_label(ui, "Damping", "new = d · old + (1 − d) · update");
            ui.add(egui::Slider::new(&mut c.damping, 0.0..=0.99).max_decimals(2))
                .labelled_by(id);
            ui.end_row();
            let id = row_label(ui, "Max iterations", "Stop after this many iterations");
            ui.add(egui::DragValue::new(&mut c.max_iters).range(1..=100_000).speed(0.5))
                .labelled_by(id);
            ui.end_row();
            let id = row_label(ui, "Tolerance", "Stop once the residual (largest L1 change of a message) falls below this; 0 never stops early");
            ui.add(
                egui::Slider::new(&mut c.tolerance, 0.0..=1.0)
                    .logarithmic(true)
                    .smallest_positive(1e-10)
                    .custom_formatter(|v, _| if v == 0.0 { "0".into() } else { format!("{v:.0e}") })
                    .custom_parser(|s| s.trim().parse::<f64>().ok()),
            )
            .labelled_by(id);
            ui.end_row();
            let id = row_label(ui, "Estimate", "How a belief becomes a gray value");
            egui::ComboBox::from_id_salt("denoise_estimate")
                .selected_text(estimate_label(c.estimate))
                .show_ui(ui, |ui| {
                    for e in [EstimateKind::Map, EstimateKind::Mean] {
                        ui.selectable_value(&mut c.estimate, e, estimate_label(e));
                    }
                })
                .response
                .labelled_by(id);
            ui.end_row();
        });
}

fn estimate_label(e: EstimateKind) -> &'static str {
    match e {
        EstimateKind::Map => "MAP (most probable level)",
        EstimateKind::Mean => "posterior mean",
    }
}

/// A section heading with a little space above it.
pub fn section(ui: &mut egui::Ui, title: &str) {
    ui.add_space(8.0);
    ui.label(RichText::new(title).strong().size(15.0));
    ui.add_space(2.0);
}
