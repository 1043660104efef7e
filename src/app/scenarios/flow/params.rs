//! The flow scenario's parameters: the data (built-in pair or the user's frames and ground
//! truth), the algorithm (SOSMP's r, k and step γ, discrete BP's damping, compare mode,
//! iterations, read-out) and the model (window d, label step, pyramid levels, σ_u, σ_uv,
//! pre-smoothing). Edits change the draft config; the app applies it once the edit is complete.

use eframe::egui::{self, RichText};
use strum::VariantArray;

use crate::app::commands::UiCommand;
use crate::app::form::{
    default_slider_width, fitted_slider, fitted_slider_reserving, param_label, param_row, section,
};
use crate::inference::EstimateKind;
use crate::scenarios::flow::{FlowAlgorithm, FlowConfig, FlowView, PARAMS};

/// `value` moved to the nearest multiple of the lattice step, at least `min_steps` steps.
fn on_lattice(value: f64, step: f64, min_steps: f64) -> f64 {
    (value / step).round().max(min_steps) * step
}

/// A displacement window's row (half-width in px of its level, up to 8), kept on the lattice.
fn window_row(
    ui: &mut egui::Ui,
    key: &str,
    value: &mut f64,
    lowest: f64,
    step: f64,
    min_steps: f64,
) {
    let id = param_label(ui, PARAMS, key);
    if fitted_slider(ui, egui::Slider::new(value, lowest..=8.0).step_by(step))
        .labelled_by(id)
        .changed()
    {
        *value = on_lattice(*value, step, min_steps);
    }
    ui.end_row();
}

fn file_name(p: &std::path::Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

pub fn ui(
    ui: &mut egui::Ui,
    c: &mut FlowConfig,
    running: Option<&FlowView>,
    commands: &mut Vec<UiCommand>,
) {
    default_slider_width(ui);

    section(ui, "Data");
    match (&c.frame1, &c.frame2) {
        (Some(a), Some(b)) => {
            ui.label(format!("frame 1: {}", file_name(a)))
                .on_hover_text(a.display().to_string());
            ui.label(format!("frame 2: {}", file_name(b)))
                .on_hover_text(b.display().to_string());
            match &c.ground_truth {
                Some(g) => {
                    ui.label(format!("ground truth: {}", file_name(g)))
                        .on_hover_text(g.display().to_string());
                }
                None => {
                    ui.weak("no ground truth (open a .flo to measure EPE and AAE)");
                }
            }
            if ui
                .button("Use the built-in pair")
                .on_hover_text(
                    "A procedural texture rotated and translated, with exact ground truth",
                )
                .clicked()
            {
                c.frame1 = None;
                c.frame2 = None;
                c.ground_truth = None;
            }
        }
        _ => {
            ui.label("built-in synthetic pair (rotation + translation, exact ground truth)");
            egui::Grid::new("flow_size")
                .num_columns(2)
                .spacing([8.0, 6.0])
                .show(ui, |ui| {
                    for key in ["width", "height"] {
                        param_row(ui, c, PARAMS, key);
                        ui.end_row();
                    }
                    let id = param_label(ui, PARAMS, "seed");
                    ui.add(egui::DragValue::new(&mut c.seed)).labelled_by(id);
                    ui.end_row();
                });
        }
    }
    if ui
        .button("Open frames…")
        .on_hover_text(
            "Pick frame 1, then frame 2 (or drop both on the window, with a .flo ground truth if \
             you have one). A Middlebury frame10.png brings frame11.png and flow10.flo from its \
             folder.",
        )
        .clicked()
    {
        commands.push(UiCommand::OpenImageDialog);
    }

    section(ui, "Preset");
    ui.horizontal(|ui| {
        for (name, help) in [
            (
                "paper",
                "Noorshams & Wainwright's setting: one level, step 1/(t+1), Gaussian smoothness",
            ),
            (
                "default",
                "The defaults: pyramid depth from the image size, Gaussian smoothness, brightness constancy, levels end once their flow settles (SOSMP: at most 8 iterations a level)",
            ),
            (
                "best",
                "The defaults with the robust smoothness (a constant floor lets motion boundaries through), the census data term (robust to brightness change), the wider finest window and every iteration of every level",
            ),
        ] {
            if ui.button(name).on_hover_text(help).clicked()
                && let Ok(next) = c.with_preset(name)
            {
                *c = next;
            }
        }
    });

    section(ui, "Algorithm");
    egui::Grid::new("flow_algorithm")
        .num_columns(2)
        .spacing([8.0, 6.0])
        .show(ui, |ui| {
            let id = param_label(ui, PARAMS, "algorithm");
            egui::ComboBox::from_id_salt("flow_algorithm")
                .selected_text(c.algorithm.label())
                .show_ui(ui, |ui| {
                    for &a in FlowAlgorithm::VARIANTS {
                        ui.selectable_value(&mut c.algorithm, a, a.label());
                    }
                })
                .response
                .labelled_by(id);
            ui.end_row();
            let id = param_label(ui, PARAMS, "compare");
            let other = match c.algorithm {
                FlowAlgorithm::Sosmp => FlowAlgorithm::Discrete,
                FlowAlgorithm::Discrete => FlowAlgorithm::Sosmp,
            };
            if c.compare == Some(c.algorithm) {
                c.compare = Some(other);
            }
            egui::ComboBox::from_id_salt("flow_compare")
                .selected_text(c.compare.map_or("none", |a| a.label()))
                .show_ui(ui, |ui| {
                    ui.selectable_value(&mut c.compare, None, "none");
                    ui.selectable_value(&mut c.compare, Some(other), other.label());
                })
                .response
                .labelled_by(id);
            ui.end_row();
            let uses_sosmp =
                c.algorithm == FlowAlgorithm::Sosmp || c.compare == Some(FlowAlgorithm::Sosmp);
            if uses_sosmp {
                let id = param_label(ui, PARAMS, "coefficients");
                let mut m = (c.coefficients as f64).sqrt().round() as usize;
                if fitted_slider_reserving(
                    ui,
                    egui::Slider::new(&mut m, 1..=7)
                        .custom_formatter(|v, _| format!("{0} × {0} = {1}", v, v * v)),
                    100.0,
                )
                .labelled_by(id)
                .changed()
                {
                    c.coefficients = m * m;
                }
                ui.end_row();
                param_row(ui, c, PARAMS, "samples");
                ui.end_row();
                param_row(ui, c, PARAMS, "step_gamma");
                ui.end_row();
            }
            if c.algorithm == FlowAlgorithm::Discrete || c.compare == Some(FlowAlgorithm::Discrete)
            {
                param_row(ui, c, PARAMS, "damping");
                ui.end_row();
            }
            param_row(ui, c, PARAMS, "iters");
            ui.end_row();
            param_row(ui, c, PARAMS, "sosmp_iters");
            ui.end_row();
            param_row(ui, c, PARAMS, "stop_change");
            ui.end_row();
            let id = param_label(ui, PARAMS, "estimate");
            egui::ComboBox::from_id_salt("flow_estimate")
                .selected_text(match c.estimate {
                    EstimateKind::Mean => "mean",
                    EstimateKind::Map => "MAP",
                })
                .show_ui(ui, |ui| {
                    ui.selectable_value(&mut c.estimate, EstimateKind::Mean, "mean");
                    ui.selectable_value(&mut c.estimate, EstimateKind::Map, "MAP");
                })
                .response
                .labelled_by(id);
            ui.end_row();
        });

    section(ui, "Model");
    // This grid's labels ("Gradient constancy λ") are wider than the others': narrower sliders
    // keep their value boxes inside the panel.
    let model_slider_width = (ui.available_width() - 230.0).max(80.0);
    egui::Grid::new("flow_model")
        .num_columns(2)
        .spacing([8.0, 6.0])
        .show(ui, |ui| {
            ui.spacing_mut().slider_width = model_slider_width;
            let step = 1.0 / c.subpixel as f64;
            window_row(
                ui,
                "max_displacement",
                &mut c.max_displacement,
                0.5,
                step,
                1.0,
            );
            window_row(
                ui,
                "coarsest_displacement",
                &mut c.coarsest_displacement,
                0.0,
                step,
                0.0,
            );
            window_row(
                ui,
                "refine_displacement",
                &mut c.refine_displacement,
                0.0,
                step,
                0.0,
            );
            let id = param_label(ui, PARAMS, "subpixel");
            if fitted_slider(ui, egui::Slider::new(&mut c.subpixel, 1..=4))
                .labelled_by(id)
                .changed()
            {
                let step = 1.0 / c.subpixel as f64;
                c.max_displacement = on_lattice(c.max_displacement, step, 1.0);
                c.refine_displacement = on_lattice(c.refine_displacement, step, 0.0);
                c.coarsest_displacement = on_lattice(c.coarsest_displacement, step, 0.0);
            }
            ui.end_row();
            for key in [
                "levels",
                "sigma_data",
                "sigma_smooth",
                "smooth_outlier",
                "gradient_weight",
                "census_weight",
                "presmooth",
                "variational_iters",
                "variational_warps",
                "refine_only_warps",
                "variational_stop_change",
                "variational_alpha",
                "variational_gamma",
                "variational_zeta",
            ] {
                param_row(ui, c, PARAMS, key);
                ui.end_row();
            }
        });
    let levels = c.levels_for(c.width, c.height);
    let per_axis = |level: usize| c.labels_at(level, levels).map_or(0, |l| l.per_axis());
    let (coarsest_labels, coarse, fine) = (
        per_axis(levels - 1),
        per_axis(levels.saturating_sub(2)),
        per_axis(0),
    );
    let coarsest = |side: usize| (0..levels - 1).fold(side, |s, _| s.div_ceil(2));
    let chosen = if c.levels == 0 {
        format!(
            "{levels} levels from the image size (coarsest {} × {} px)",
            coarsest(c.width),
            coarsest(c.height)
        )
    } else {
        format!("{levels} levels")
    };
    ui.label(
        RichText::new(if levels > 1 {
            format!(
                "{coarsest_labels} × {coarsest_labels} = {} labels at the coarsest level, {coarse} × {coarse} = {} at the next, {fine} × {fine} = {} at the finest; {chosen}; reach about {:.1} px",
                coarsest_labels * coarsest_labels,
                coarse * coarse,
                fine * fine,
                c.reach(levels)
            )
        } else {
            format!(
                "{coarse} × {coarse} = {} labels; {chosen}; reach about {:.1} px",
                coarse * coarse,
                c.reach(levels)
            )
        })
        .small()
        .weak(),
    );
    if let Some(v) = running
        && let Some(z) = v.zero_errors
    {
        ui.label(
            RichText::new(format!(
                "zero flow: EPE {:.2} px, AAE {:.1}° (the scale of the task)",
                z.epe, z.aae
            ))
            .small()
            .weak(),
        );
    }
}
