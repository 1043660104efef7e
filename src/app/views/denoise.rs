//! The denoise scenario's views: clean, noisy, estimate and |error| panes; the RMSE and residual
//! curves; the belief of the selected pixel over the C gray levels.

use eframe::egui::{self, Color32, RichText};
use egui_plot::LineStyle;

use super::belief::{Marker, belief_plot};
use super::curves::{Reference, metrics_plot, residual_plot};
use super::image_panes::{self, ColorBar, Pane};
use crate::app::commands::UiCommand;
use crate::app::state::State;
use crate::app::textures::{CachedTexture, Source};
use crate::inference::{Belief, EstimateKind};
use crate::runner::Snapshot;
use crate::scenarios::Probe;
use crate::scenarios::denoise::{DenoiseConfig, DenoiseView};
use crate::viz;

pub const CLEAN_COLOR: Color32 = Color32::from_rgb(102, 187, 106);
pub const NOISY_COLOR: Color32 = Color32::from_rgb(255, 167, 38);
pub const ESTIMATE_COLOR: Color32 = Color32::from_rgb(236, 64, 122);

/// The textures of the four panes and the error colour bar.
#[derive(Default)]
pub struct Textures {
    clean: CachedTexture,
    noisy: CachedTexture,
    estimate: CachedTexture,
    error: CachedTexture,
    colorbar: CachedTexture,
}

/// The selected pixel, if it is inside this view's image.
pub fn selected_pixel(view: &DenoiseView, selection: Option<Probe>) -> Option<[usize; 2]> {
    match selection {
        Some(Probe::Node(n)) if n < view.width * view.height => {
            Some([n % view.width, n / view.width])
        }
        _ => None,
    }
}

/// The four image panes with their toolbar.
pub fn images(
    ui: &mut egui::Ui,
    view: &DenoiseView,
    config: Option<&DenoiseConfig>,
    textures: &mut Textures,
    state: &mut State,
    selection: Option<Probe>,
    commands: &mut Vec<UiCommand>,
) {
    let ctx = ui.ctx().clone();
    let (w, h) = (view.width, view.height);
    let scale = state.error_scale;

    ui.horizontal(|ui| {
        image_panes::zoom_toolbar(ui, &mut state.zoom, commands);
        ui.separator();
        let label = ui.label("|error| scale");
        ui.add(
            egui::DragValue::new(&mut state.error_scale)
                .range(1.0..=255.0)
                .speed(0.5)
                .max_decimals(0),
        )
        .labelled_by(label.id)
        .on_hover_text("Gray-level error shown as the brightest colour of the |error| map");
        ui.separator();
        ui.weak(format!(
            "{w} × {h} pixels · click a pixel to inspect its belief"
        ));
    });
    ui.add_space(4.0);

    let clean = textures
        .clean
        .get(&ctx, "clean", Source::new(&[&view.clean], &[]), || {
            viz::gray_rgba(w, h, &view.clean, 0.0, 255.0)
        });
    let noisy = textures
        .noisy
        .get(&ctx, "noisy", Source::new(&[&view.noisy], &[]), || {
            viz::gray_rgba(w, h, &view.noisy, 0.0, 255.0)
        });
    let estimate = textures.estimate.get(
        &ctx,
        "estimate",
        Source::new(&[&view.estimate], &[]),
        || viz::gray_rgba(w, h, &view.estimate, 0.0, 255.0),
    );
    let error = textures.error.get(
        &ctx,
        "error",
        Source::new(&[&view.estimate, &view.clean], &[scale]),
        || viz::abs_diff_heat(w, h, &view.estimate, &view.clean, scale),
    );
    let colorbar = textures
        .colorbar
        .get(&ctx, "heat colour bar", Source::default(), || {
            viz::heat_bar(256, 1)
        });

    let estimate_kind = match config.map(|c| c.estimate) {
        Some(EstimateKind::Mean) => "posterior mean",
        _ => "MAP",
    };
    let panes = [
        Pane {
            title: "clean".into(),
            name: "clean image".into(),
            texture: clean,
            colorbar: None,
        },
        Pane {
            title: format!("noisy · RMSE {:.2}", view.noisy_rmse),
            name: "noisy image".into(),
            texture: noisy,
            colorbar: None,
        },
        Pane {
            title: format!("estimate ({estimate_kind}) · RMSE {:.2}", view.rmse),
            name: "estimate image".into(),
            texture: estimate,
            colorbar: None,
        },
        Pane {
            title: "|estimate − clean|".into(),
            name: "error image".into(),
            texture: error,
            colorbar: Some(ColorBar {
                texture: colorbar,
                low: "0".into(),
                high: format!("≥ {scale:.0}"),
            }),
        },
    ];
    let hover = |[x, y]: [usize; 2]| {
        let i = y * w + x;
        format!(
            "pixel ({x}, {y})\nclean {:.1}\nnoisy {:.1}\nestimate {:.1}\n|error| {:.1}",
            view.clean[i],
            view.noisy[i],
            view.estimate[i],
            (view.estimate[i] - view.clean[i]).abs()
        )
    };
    let response = image_panes::show(
        ui,
        &mut state.zoom,
        [w, h],
        &panes,
        selected_pixel(view, selection),
        &hover,
    );
    if let Some([x, y]) = response.clicked {
        commands.push(UiCommand::Select(Probe::Node(y * w + x)));
    }
}

/// RMSE and residual curves.
pub fn curves(
    ui: &mut egui::Ui,
    snapshot: &Snapshot,
    view: &DenoiseView,
    config: Option<&DenoiseConfig>,
    height: f32,
) {
    ui.strong("RMSE per iteration");
    metrics_plot(
        ui,
        "denoise_rmse",
        &snapshot.history,
        &["rmse"],
        &[Reference {
            name: format!("noisy input ({:.1})", view.noisy_rmse),
            value: view.noisy_rmse,
        }],
        config.map(|c| c.max_iters),
        height,
    );
    ui.add_space(6.0);
    let tolerance = match config.map(|c| c.tolerance) {
        Some(t) if t > 0.0 => format!(" · stops below {t:.0e}"),
        _ => String::new(),
    };
    ui.strong(format!("Residual{tolerance}"))
        .on_hover_text("The largest L1 change of a message in the iteration, on a log scale");
    residual_plot(
        ui,
        "denoise_residual",
        &snapshot.history,
        config.map(|c| c.tolerance),
        config.map(|c| c.max_iters),
        height,
    );
}

/// The belief of the selected pixel, or a hint to select one.
pub fn inspector(ui: &mut egui::Ui, view: &DenoiseView, height: f32) {
    let Some(p) = &view.probe else {
        ui.strong("Belief");
        ui.weak("Click a pixel in an image to see its belief over the gray levels.");
        return;
    };
    ui.strong(format!("Belief at ({}, {})", p.x, p.y));
    let markers = [
        Marker {
            name: format!("clean {:.0}", p.clean),
            x: p.clean,
            color: CLEAN_COLOR,
            style: LineStyle::Solid,
        },
        Marker {
            name: format!("noisy {:.1}", p.noisy),
            x: p.noisy,
            color: NOISY_COLOR,
            style: LineStyle::dashed_dense(),
        },
        Marker {
            name: format!("estimate {:.1}", p.estimate),
            x: p.estimate,
            color: ESTIMATE_COLOR,
            style: LineStyle::dotted_dense(),
        },
    ];
    let lo = view.levels.first().copied().unwrap_or(0.0).min(p.noisy);
    let hi = view.levels.last().copied().unwrap_or(255.0).max(p.noisy);
    belief_plot(
        ui,
        "denoise_belief",
        &p.belief,
        &markers,
        Some([lo, hi]),
        height,
    );
    if let Belief::Discrete { states, probs } = &p.belief {
        let at_truth = states
            .iter()
            .zip(probs)
            .min_by(|a, b| (a.0 - p.clean).abs().total_cmp(&(b.0 - p.clean).abs()))
            .map_or(0.0, |(_, q)| *q);
        let peak = probs.iter().copied().fold(0.0, f64::max);
        ui.label(
            RichText::new(format!(
                "P(clean level) = {at_truth:.3} · largest P = {peak:.3} · {} states",
                states.len()
            ))
            .small(),
        );
    }
}

/// Numbers for the status bar.
pub fn status(view: &DenoiseView) -> Vec<String> {
    vec![
        format!("RMSE {:.2}", view.rmse),
        format!("noisy RMSE {:.2}", view.noisy_rmse),
    ]
}
