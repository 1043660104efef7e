//! The denoise scenario's views: clean, noisy, estimate and |error| panes (and the second
//! algorithm's estimate and error in compare mode); the RMSE and residual curves of both; the
//! selected pixel's belief over the gray levels and, for kernel BP, the messages into it.

use std::sync::Arc;

use eframe::egui::{self, Color32, RichText};
use egui_plot::{Legend, Line, LineStyle, PlotPoints, VLine};

use crate::app::commands::UiCommand;
use crate::app::state::{InspectorTab, State};
use crate::app::textures::{AsyncTexture, CachedTexture, Source};
use crate::app::views::belief::{Marker, belief_plot};
use crate::app::views::curves::{
    Lines, Mark, Reference, Series, lines_plot, metrics_plot, residual_plot,
};
use crate::app::views::image_panes::{self, ColorBar, Pane};
use crate::app::views::ticks::{self, Scale};
use crate::inference::{Belief, EstimateKind};
use crate::runner::Snapshot;
use crate::scenarios::Probe;
use crate::scenarios::denoise::sure_stop::SureRule;
use crate::scenarios::denoise::{DenoiseConfig, DenoiseView, KbpProbe, KeptIterate, PixelProbe};
use crate::viz;

pub const CLEAN_COLOR: Color32 = Color32::from_rgb(102, 187, 106);
pub const NOISY_COLOR: Color32 = Color32::from_rgb(255, 167, 38);
pub const ESTIMATE_COLOR: Color32 = Color32::from_rgb(236, 64, 122);
/// Colours of the incoming messages (up to four neighbours on the grid).
const MESSAGE_COLORS: [Color32; 4] = [
    Color32::from_rgb(171, 71, 188),
    Color32::from_rgb(38, 198, 218),
    Color32::from_rgb(255, 238, 88),
    Color32::from_rgb(141, 110, 99),
];

/// The textures of the panes and the error colour bar.
#[derive(Default)]
pub struct Textures {
    clean: CachedTexture,
    noisy: CachedTexture,
    estimate: AsyncTexture,
    error: AsyncTexture,
    compare: AsyncTexture,
    compare_error: AsyncTexture,
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

fn estimate_kind(config: Option<&DenoiseConfig>) -> &'static str {
    match config.map(|c| c.estimate) {
        Some(EstimateKind::Mean) => "mean",
        _ => "MAP",
    }
}

/// The image panes with their toolbar.
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

    ui.horizontal_wrapped(|ui| {
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
        .on_hover_text("Gray-level error shown as the brightest colour of the |error| maps");
        ui.separator();
        ui.add(
            egui::Label::new(
                RichText::new(format!("{w} × {h} pixels · click a pixel to inspect it")).weak(),
            )
            .wrap_mode(egui::TextWrapMode::Extend),
        );
    });
    ui.add_space(4.0);

    // A photograph larger than the screen is shown averaged over blocks (`viz::fitted`).
    let fit = viz::fitted::Fitted::of(w, h);
    let gray = move |values: &[f64]| {
        let shown = fit.means(w, h, |i| values[i]);
        viz::gray_rgba(fit.width, fit.height, &shown, 0.0, 255.0)
    };
    let clean = textures
        .clean
        .get(&ctx, "clean", Source::new(&[&view.clean], &[]), || {
            gray(&view.clean)
        });
    let noisy = textures
        .noisy
        .get(&ctx, "noisy", Source::new(&[&view.noisy], &[]), || {
            gray(&view.noisy)
        });
    // The panes that change every iteration are coloured off the window's thread (a 512 x 512
    // image costs milliseconds per pane), so the window keeps its frame rate while a run goes.
    let estimate = textures
        .estimate
        .get(&ctx, "estimate", Source::new(&[&view.estimate], &[]), {
            let values = Arc::clone(&view.estimate);
            move || gray(&values)
        });
    let error = textures.error.get(
        &ctx,
        "error",
        Source::new(&[&view.estimate, &view.clean], &[scale]),
        {
            let (estimate, clean) = (Arc::clone(&view.estimate), Arc::clone(&view.clean));
            move || {
                let shown = fit.means(w, h, |i| (estimate[i] - clean[i]).abs());
                viz::heat_rgba(fit.width, fit.height, &shown, scale)
            }
        },
    );
    let colorbar = textures
        .colorbar
        .get(&ctx, "heat colour bar", Source::default(), || {
            viz::heat_bar(256, 1)
        });
    let bar = || ColorBar {
        texture: colorbar,
        low: "0".into(),
        high: format!("≥ {scale:.0}"),
    };
    let kind = estimate_kind(config);
    let clean_pane = Pane {
        // Without a clean version the view carries the noisy image in its place.
        title: if view.no_clean.is_some() {
            "no clean version (noisy shown)".into()
        } else {
            "clean".into()
        },
        name: "clean image".into(),
        texture: clean,
        colorbar: None,
        legend: None,
    };
    let noisy_pane = Pane {
        title: match &view.no_clean {
            Some(note) => format!("noisy · {note}"),
            None => format!("noisy · RMSE {:.2}", view.noisy_rmse),
        },
        name: "noisy image".into(),
        texture: noisy,
        colorbar: None,
        legend: None,
    };
    let estimate_pane = Pane {
        title: titled(
            match &view.no_clean {
                Some(_) => format!("{} ({kind}) · RMSE not available", view.label),
                None => format!("{} ({kind}) · RMSE {:.2}", view.label, view.rmse),
            },
            view.kept,
        ),
        name: "estimate image".into(),
        texture: estimate,
        colorbar: None,
        legend: None,
    };
    let error_pane = Pane {
        title: if view.no_clean.is_some() {
            format!("|{} − noisy| (no clean image)", view.label)
        } else {
            format!("|{} − clean|", view.label)
        },
        name: "error image".into(),
        texture: error,
        colorbar: Some(bar()),
        legend: None,
    };
    // Compare mode: rows are (clean, first, its error) and (noisy, second, its error).
    let (panes, columns): (Vec<Pane<'_>>, &[usize]) = match &view.compare {
        None => (
            vec![clean_pane, noisy_pane, estimate_pane, error_pane],
            &[2, 4, 1],
        ),
        Some(cmp) => {
            let compare =
                textures
                    .compare
                    .get(&ctx, "compare", Source::new(&[&cmp.estimate], &[]), {
                        let values = Arc::clone(&cmp.estimate);
                        move || gray(&values)
                    });
            let compare_error = textures.compare_error.get(
                &ctx,
                "compare error",
                Source::new(&[&cmp.estimate, &view.clean], &[scale]),
                {
                    let (estimate, clean) = (Arc::clone(&cmp.estimate), Arc::clone(&view.clean));
                    move || {
                        let shown = fit.means(w, h, |i| (estimate[i] - clean[i]).abs());
                        viz::heat_rgba(fit.width, fit.height, &shown, scale)
                    }
                },
            );
            let compare_pane = Pane {
                title: titled(
                    match cmp.rmse.is_finite() {
                        true => format!("{} ({kind}) · RMSE {:.2}", cmp.label, cmp.rmse),
                        false => format!("{} ({kind}) · RMSE not available", cmp.label),
                    },
                    cmp.kept,
                ),
                name: "compare image".into(),
                texture: compare,
                colorbar: None,
                legend: None,
            };
            let compare_error_pane = Pane {
                title: format!("|{} − clean|", cmp.label),
                name: "compare error image".into(),
                texture: compare_error,
                colorbar: Some(bar()),
                legend: None,
            };
            (
                vec![
                    clean_pane,
                    estimate_pane,
                    error_pane,
                    noisy_pane,
                    compare_pane,
                    compare_error_pane,
                ],
                &[3],
            )
        }
    };
    let hover = |[x, y]: [usize; 2]| {
        let i = y * w + x;
        let mut text = format!(
            "pixel ({x}, {y})\nclean {:.1}\nnoisy {:.1}\n{} {:.1}",
            view.clean[i], view.noisy[i], view.label, view.estimate[i]
        );
        if let Some(cmp) = &view.compare {
            text.push_str(&format!("\n{} {:.1}", cmp.label, cmp.estimate[i]));
        }
        text
    };
    let response = image_panes::show(
        ui,
        &mut state.zoom,
        [w, h],
        &panes,
        columns,
        selected_pixel(view, selection),
        &hover,
    );
    if let Some([x, y]) = response.clicked {
        commands.push(UiCommand::Select(Probe::Node(y * w + x)));
    }
}

/// RMSE and residual curves (of both algorithms in compare mode).
pub fn curves(
    ui: &mut egui::Ui,
    snapshot: &Snapshot,
    view: &DenoiseView,
    config: Option<&DenoiseConfig>,
    height: f32,
) {
    let mut residual = vec![Series::residual(&view.label)];
    if let Some(cmp) = &view.compare {
        residual.push(Series::metric(
            &cmp.label,
            &format!("residual_{}", cmp.label),
        ));
    }
    if view.no_clean.is_some() {
        no_clean_curves(ui, snapshot, view, config, height);
    } else {
        let mut rmse = vec![Series::metric(&view.label, "rmse")];
        if let Some(cmp) = &view.compare {
            rmse.push(Series::metric(&cmp.label, &format!("rmse_{}", cmp.label)));
        }
        ui.strong("RMSE per iteration");
        metrics_plot(
            ui,
            "denoise_rmse",
            "RMSE (gray levels)",
            &snapshot.history,
            &rmse,
            &[Reference {
                name: format!("noisy input ({:.1})", view.noisy_rmse),
                value: view.noisy_rmse,
            }],
            config.map(|c| c.max_iters),
            height,
        );
    }
    ui.add_space(6.0);
    let (title, rule) = residual_title(config, view.compare.is_some());
    ui.strong(title).on_hover_text(format!(
        "The size of the change of the messages in each iteration, on a log scale. {rule}"
    ));
    residual_plot(
        ui,
        "denoise_residual",
        &snapshot.history,
        &residual,
        config.map(|c| c.tolerance),
        config.map(|c| c.max_iters),
        height,
    );
}

/// What the error plot of a noisy image with no clean version draws instead of the RMSE:
/// SURE's estimate of each iterate's RMSE (with SURE stopping), the RMS distance to the noisy
/// image against the noise σ, the iterate a stopping rule kept, and why there is no true RMSE.
pub struct NoCleanCurves {
    pub title: String,
    pub series: Vec<Series>,
    pub references: Vec<Reference>,
    pub marks: Vec<Mark>,
    /// One line under the plot: why there is no true RMSE.
    pub note: String,
    /// The note's hover text: what SURE is and how to read the curves.
    pub detail: String,
}

/// The no-clean-image curves of `view` (run with `config`).
pub fn no_clean_curves_of(view: &DenoiseView, config: Option<&DenoiseConfig>) -> NoCleanCurves {
    let sure = config.is_some_and(|c| c.sure_stop);
    // Names carry the algorithm only when two run.
    let whose = |label: &str| match &view.compare {
        Some(_) => format!(" · {label}"),
        None => String::new(),
    };
    let mut series = Vec::new();
    if sure {
        series.push(Series::metric(
            &format!("SURE estimate of RMSE{}", whose(&view.label)),
            "sure_rmse",
        ));
        if let Some(cmp) = &view.compare {
            series.push(Series::metric(
                &format!("SURE estimate of RMSE{}", whose(&cmp.label)),
                &format!("sure_rmse_{}", cmp.label),
            ));
        }
    }
    series.push(Series::metric(
        &format!("RMS distance to noisy{}", whose(&view.label)),
        "rms_to_noisy",
    ));
    let references = config
        .map(|c| Reference {
            name: format!(
                "noise σ {:.1} ({})",
                c.noise,
                if c.sigma_rule.is_some() {
                    "estimated, MAD"
                } else {
                    "given"
                }
            ),
            value: c.noise,
        })
        .into_iter()
        .collect();
    let mut marks: Vec<Mark> = view
        .kept
        .map(|k| Mark {
            name: format!("{}{}", k.label(), whose(&view.label)),
            x: k.iteration as f64,
            color: ESTIMATE_COLOR,
        })
        .into_iter()
        .collect();
    if let Some((cmp, k)) = view.compare.as_ref().and_then(|c| Some((c, c.kept?))) {
        marks.push(Mark {
            name: format!("{}{}", k.label(), whose(&cmp.label)),
            x: k.iteration as f64,
            color: Color32::from_rgb(120, 144, 156),
        });
    }
    let (note, detail) = if sure {
        (
            "No clean version, so no true RMSE: SURE estimates it from the noisy image and σ alone.",
            "SURE (Stein's unbiased risk estimate, Monte-Carlo: a second copy runs on the noisy \
             image plus a tiny random probe) is an unbiased estimate of the mean squared error for \
             Gaussian noise of the given σ. The shown estimate is the iterate of lowest SURE. A \
             good estimate's distance to the noisy image comes close to σ from below.",
        )
    } else {
        (
            "No clean version, so no true RMSE; Stop by SURE is off, so no estimate of it either.",
            "Only the distance to the noisy image is plotted: a good estimate brings it close to σ \
             from below. Turn on Stop by SURE for an estimate of the RMSE.",
        )
    };
    NoCleanCurves {
        title: if sure {
            "Estimated RMSE (SURE) · no clean image".into()
        } else {
            "Distance to the noisy image · no clean image".into()
        },
        series,
        references,
        marks,
        note: note.into(),
        detail: detail.into(),
    }
}

/// The error plot of a noisy image with no clean version (see [`no_clean_curves_of`]).
fn no_clean_curves(
    ui: &mut egui::Ui,
    snapshot: &Snapshot,
    view: &DenoiseView,
    config: Option<&DenoiseConfig>,
    height: f32,
) {
    let c = no_clean_curves_of(view, config);
    ui.strong(&c.title).on_hover_text(&c.detail);
    // The note's lines come out of the plot's height, so the panel keeps its size.
    let note_height = 2.0 * ui.text_style_height(&egui::TextStyle::Small) + 4.0;
    lines_plot(
        ui,
        "iteration",
        "denoise_rmse",
        "gray levels",
        &snapshot.history,
        &Lines {
            series: &c.series,
            references: &c.references,
            marks: &c.marks,
        },
        config.map(|c| c.max_iters),
        (height - note_height).max(60.0),
    );
    ui.add(egui::Label::new(RichText::new(&c.note).small()).wrap())
        .on_hover_text(&c.detail);
}

/// The residual plot's title and the stopping rule in full, as `Denoise::finished` applies it:
/// the run ends at `max_iters`, or once every method has stopped: settled below the tolerance
/// (a settled method takes no more steps while the others go on) or stopped by a rule. The
/// title names only what the rule does, so a residual that never comes down is not promised a
/// stop below the tolerance.
pub fn residual_title(config: Option<&DenoiseConfig>, comparing: bool) -> (String, String) {
    let Some(c) = config else {
        return ("Residual".into(), String::new());
    };
    let whose = if comparing {
        "every method's residual has fallen".to_string()
    } else {
        "the residual falls".into()
    };
    let title = if c.tolerance > 0.0 {
        let when = if comparing {
            " when every method's is"
        } else {
            ""
        };
        format!(
            "Residual · ends at iteration {} or{when} below {:.0e}",
            c.max_iters, c.tolerance
        )
    } else {
        format!("Residual · ends at iteration {}", c.max_iters)
    };
    let mut rule = if c.tolerance > 0.0 {
        format!(
            "The run ends after {} iterations, or earlier as soon as {whose} below {:.0e} (a \
             method that has settled takes no more steps); a residual that does not fall runs \
             all {} iterations.",
            c.max_iters, c.tolerance, c.max_iters
        )
    } else {
        format!(
            "The run ends after {} iterations (no residual tolerance).",
            c.max_iters
        )
    };
    if c.discrepancy_stop {
        rule.push_str(
            " The discrepancy stop also ends it once every method's estimate is as far from \
             the noisy image as the noise σ.",
        );
    }
    if c.sure_stop {
        rule.push_str(match c.sure_rule {
            SureRule::Guard => {
                " SURE guards every step: a step that raises SURE (the error estimate that needs \
                 no clean image) is taken back and the next one is half as long, so the residual \
                 falls once no full step helps (step_scale in results.json)."
            }
            SureRule::Stop => {
                " SURE stops each method after two iterations without a lower SURE and keeps \
                 its lowest-SURE iterate."
            }
        });
    }
    (title, rule)
}

/// The selected pixel's belief (or, for kernel BP, the messages into it), or a hint to select
/// one.
pub fn inspector(ui: &mut egui::Ui, view: &DenoiseView, tab: &mut InspectorTab, height: f32) {
    let Some(p) = &view.probe else {
        ui.strong("Belief");
        ui.weak("Click a pixel in an image to see its belief over the gray levels.");
        return;
    };
    ui.horizontal(|ui| {
        ui.strong(format!("Belief at ({}, {})", p.x, p.y));
        if p.kbp.is_some() {
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                ui.selectable_value(tab, InspectorTab::Messages, "Messages")
                    .on_hover_text(
                        "The kernel-BP messages into this pixel, the evidence and the prior",
                    );
                ui.selectable_value(tab, InspectorTab::Belief, "Belief")
                    .on_hover_text("The belief over the gray levels");
            });
        }
    });
    match (&p.kbp, *tab) {
        (Some(k), InspectorTab::Messages) => messages_plot(ui, p, k, height),
        _ => belief_view(ui, view, p, height),
    }
}

fn value_markers(p: &PixelProbe) -> [Marker; 3] {
    [
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
    ]
}

fn belief_view(ui: &mut egui::Ui, view: &DenoiseView, p: &PixelProbe, height: f32) {
    let lo = view.levels.first().copied().unwrap_or(0.0).min(p.noisy);
    let hi = view.levels.last().copied().unwrap_or(255.0).max(p.noisy);
    belief_plot(
        ui,
        "denoise_belief",
        &p.belief,
        &value_markers(p),
        Some([lo, hi]),
        height,
    );
    let note = match &p.belief {
        Belief::Discrete { states, probs } => {
            let at_truth = states
                .iter()
                .zip(probs)
                .min_by(|a, b| (a.0 - p.clean).abs().total_cmp(&(b.0 - p.clean).abs()))
                .map_or(0.0, |(_, q)| *q);
            let peak = probs.iter().copied().fold(0.0, f64::max);
            format!(
                "P(clean level) = {at_truth:.3} · largest P = {peak:.3} · {} states",
                states.len()
            )
        }
        Belief::Curve { xs, ys } => {
            let negative = ys.iter().any(|y| *y < 0.0);
            format!(
                "kernel-BP belief at {} candidate values, unnormalised, drawn scaled{}",
                xs.len(),
                if negative {
                    "; the negative lobes are real"
                } else {
                    ""
                }
            )
        }
        Belief::Grid2 { .. } => String::new(),
    };
    ui.label(RichText::new(note).small());
}

/// Kernel BP at the probed pixel: the messages from its neighbours, the learned evidence and the
/// prior, each scaled to a largest |value| of 1; their product is the belief.
fn messages_plot(ui: &mut egui::Ui, p: &PixelProbe, k: &KbpProbe, height: f32) {
    let curve = |ys: &[f64]| -> PlotPoints<'static> {
        PlotPoints::from(
            k.xs.iter()
                .zip(ys)
                .map(|(&x, &y)| [x, y])
                .collect::<Vec<_>>(),
        )
    };
    ticks::plot("denoise_messages", Scale::Real, Scale::Real)
        .height(height)
        .legend(
            Legend::default()
                .follow_insertion_order(true)
                .text_style(egui::TextStyle::Small)
                .background_alpha(0.7)
                .position(if p.estimate < 128.0 {
                    egui_plot::Corner::RightTop
                } else {
                    egui_plot::Corner::LeftTop
                }),
        )
        .include_y(0.0)
        .include_y(1.05)
        .include_x(0.0)
        .include_x(255.0)
        .allow_scroll(false)
        .x_axis_label("gray level")
        .y_axis_label("scaled to max |value| 1")
        .show(ui, |plot| {
            for (n, ((sx, sy), ys)) in k.incoming.iter().enumerate() {
                plot.line(
                    Line::new(format!("from ({sx}, {sy})"), curve(ys))
                        .color(MESSAGE_COLORS[n % MESSAGE_COLORS.len()])
                        .width(1.5),
                );
            }
            plot.line(
                Line::new("evidence", curve(&k.evidence))
                    .color(NOISY_COLOR)
                    .style(LineStyle::dashed_dense())
                    .width(1.5),
            );
            plot.line(
                Line::new("prior", curve(&k.prior))
                    .color(Color32::GRAY)
                    .style(LineStyle::dotted_dense())
                    .width(1.5),
            );
            plot.line(
                Line::new("belief", curve(&k.belief))
                    .color(crate::app::views::belief::BELIEF_COLOR)
                    .width(2.5),
            );
            plot.vline(VLine::new(format!("clean {:.0}", p.clean), p.clean).color(CLEAN_COLOR));
        });
    ui.label(
        RichText::new("belief = prior × evidence × Π incoming messages (each curve scaled)")
            .small(),
    );
}

/// A pane title with the iterate a stopping rule kept, if one stopped the run.
fn titled(title: String, kept: Option<KeptIterate>) -> String {
    match kept {
        // Under the SURE guard the estimate is the run's current one (the debugger says where
        // SURE was lowest); a title that long would cut off the RMSE.
        Some(k) if !k.guarded => format!("{title} · {}", k.label()),
        _ => title,
    }
}

/// Numbers for the status bar.
pub fn status(view: &DenoiseView) -> Vec<String> {
    if let Some(note) = &view.no_clean {
        return vec![note.clone(), view.label.clone()];
    }
    let mut out = vec![format!("RMSE {:.2} ({})", view.rmse, view.label)];
    if let Some(cmp) = &view.compare {
        out.push(format!("RMSE {:.2} ({})", cmp.rmse, cmp.label));
    }
    out.push(format!("noisy RMSE {:.2}", view.noisy_rmse));
    out.extend(view.settled.clone());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_residual_title_says_what_the_stopping_rule_does() {
        let c = DenoiseConfig {
            max_iters: 20,
            tolerance: 1e-6,
            ..DenoiseConfig::default()
        };
        let (title, rule) = residual_title(Some(&c), false);
        assert_eq!(title, "Residual · ends at iteration 20 or below 1e-6");
        assert!(rule.contains("runs all 20 iterations"), "{rule}");
        let (title, _) = residual_title(Some(&c), true);
        assert_eq!(
            title,
            "Residual · ends at iteration 20 or when every method's is below 1e-6"
        );
        let none = DenoiseConfig {
            tolerance: 0.0,
            discrepancy_stop: true,
            ..c
        };
        let (title, rule) = residual_title(Some(&none), false);
        assert_eq!(title, "Residual · ends at iteration 20");
        assert!(rule.contains("discrepancy stop"), "{rule}");
        assert!(!title.contains("stops below"));
    }
}
