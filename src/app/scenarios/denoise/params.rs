//! The denoise scenario's parameters: image source, model (C, noise, seed), inference
//! (algorithm, compare mode, schedule, damping, iterations, tolerance, estimate) and the kernel-BP
//! settings with the values the set-up chose. Edits change the draft config; the app applies it
//! once the edit is complete (slider released, Enter pressed).

use eframe::egui::{self, RichText};
use strum::VariantArray;

use crate::app::commands::UiCommand;
use crate::app::form::{
    bounded_count, default_slider_width, entry, fitted_slider, param_checkbox, param_label,
    param_row, row_label, section,
};
use crate::inference::kbp::{Bandwidth, KbpSettings};
use crate::inference::{EstimateKind, Schedule};
use crate::scenarios::Task;
use crate::scenarios::denoise::config::NOISY_SIGMA_HELP;
use crate::scenarios::denoise::schedule_choice::ScheduleChoice;
use crate::scenarios::denoise::sure_stop::{MAX_PROBES, SureProbes, SureRule};
use crate::scenarios::denoise::{
    AlgorithmChoice, AutotuneResult, AutotuneSpec, AutotuneTask, BuiltinTraining, Candidates,
    DenoiseAlgorithm, DenoiseConfig, DenoiseView, PARAMS,
};

/// Widest sunset the panel offers (larger sizes work from the command line).
const MAX_SUNSET_SIDE: usize = 1024;
/// Where larger sunsets can be made.
const BEYOND: &str = " here (up to 4096 with beliefscope run denoise --width)";

/// A label in the grid's first column; returns its id to label the widget beside it.
pub fn ui(
    ui: &mut egui::Ui,
    c: &mut DenoiseConfig,
    running: Option<&DenoiseView>,
    task_running: bool,
    autotune: Option<&AutotuneResult>,
    commands: &mut Vec<UiCommand>,
) {
    let running_size = running.map(|v| [v.width, v.height]);
    default_slider_width(ui);

    section(ui, "Image");
    ui.horizontal_wrapped(|ui| {
        match c.noisy_image.as_ref().or(c.image.as_ref()) {
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
        if c.noisy_image.is_some() {
            ui.weak("noisy, no clean version");
        }
        if let (true, Some([w, h])) = (c.loads_image(), running_size) {
            ui.weak(format!("{w} × {h}"));
        }
    });
    ui.horizontal_wrapped(|ui| {
        for command in [UiCommand::OpenImageDialog, UiCommand::OpenNoisyImageDialog] {
            let open = ui
                .button(command.label())
                .on_hover_text(command.tooltip(ui.ctx()));
            if open.clicked() {
                commands.push(command);
            }
        }
        let loaded = c.loads_image();
        let sunset = ui
            .add_enabled(loaded, egui::Button::new("Use sunset"))
            .on_hover_text("Go back to the built-in sunset image");
        if sunset.clicked() {
            c.image = None;
            forget_noisy_image(c);
        }
    });
    egui::Grid::new("denoise_image")
        .num_columns(2)
        .spacing([8.0, 6.0])
        .show(ui, |ui| {
            if c.noisy_image.is_some() {
                noisy_sigma_row(ui, c);
                ui.end_row();
            } else if c.image.is_none() {
                let id = param_label(ui, PARAMS, "width");
                bounded_count(ui, &mut c.width, 2, MAX_SUNSET_SIDE, " px", id, BEYOND);
                ui.end_row();
                let id = param_label(ui, PARAMS, "height");
                bounded_count(ui, &mut c.height, 2, MAX_SUNSET_SIDE, " px", id, BEYOND);
                ui.end_row();
            } else {
                ui.label("");
                param_checkbox(ui, &mut c.quantize, PARAMS, "quantize");
                ui.end_row();
            }
        });

    if let Some(v) = running {
        let text: Vec<String> = v
            .baselines
            .iter()
            // NaN: a noisy image with no clean version, so no RMSE exists.
            .map(|(l, r)| match r.is_finite() {
                true => format!("{l}: RMSE {r:.2}"),
                false => format!("{l}: RMSE not available"),
            })
            .collect();
        ui.weak(format!(
            "baselines, not message passing: {}",
            text.join(", ")
        ))
        .on_hover_text(
            "Total-variation denoising (Chambolle) and a Gaussian blur whose sigma is \
                 chosen by SURE without the clean image, on the same noisy image",
        );
    }
    section(ui, "Training");
    if let Some(v) = running {
        ui.label(format!("trained on {}", v.training))
            .on_hover_text("The image the potentials of both methods are learned from");
    }
    ui.horizontal(|ui| {
        let mut path = c
            .train_image
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let id = param_label(ui, PARAMS, "train_image");
        let edit = ui
            .add_enabled(
                !c.oracle,
                egui::TextEdit::singleline(&mut path)
                    // The sunset trains on its own generator whatever the picker says.
                    .hint_text(if !c.loads_image() {
                        "sunset generator"
                    } else {
                        c.train_builtin.title()
                    })
                    .desired_width(160.0),
            )
            .labelled_by(id);
        if edit.lost_focus() {
            let path = path.trim();
            c.train_image = (!path.is_empty()).then(|| std::path::PathBuf::from(path));
        }
    });
    builtin_training_row(ui, c);
    let oracle = entry(PARAMS, "oracle");
    ui.add_enabled(
        c.noisy_image.is_none(),
        egui::Checkbox::new(&mut c.oracle, oracle.label),
    )
    .on_hover_text(oracle.help)
    .on_disabled_hover_text("A noisy image has no clean version to train on");
    if c.oracle {
        c.train_image = None;
    }
    param_checkbox(
        ui,
        &mut c.kbp_expected_observations,
        PARAMS,
        "kbp_expected_observations",
    );

    section(ui, "Model");
    egui::Grid::new("denoise_model")
        .num_columns(2)
        .spacing([8.0, 6.0])
        .show(ui, |ui| {
            param_row(ui, c, PARAMS, "colors");
            ui.end_row();
            // A noisy image's sigma is set beside the image (estimated or given), not added.
            if c.noisy_image.is_none() {
                param_row(ui, c, PARAMS, "noise");
                ui.end_row();
            }
            let id = param_label(ui, PARAMS, "seed");
            ui.add(egui::DragValue::new(&mut c.seed).speed(0.2))
                .labelled_by(id);
            ui.end_row();
        });

    section(ui, "Inference");
    egui::Grid::new("denoise_inference")
        .num_columns(2)
        .spacing([8.0, 6.0])
        .show(ui, |ui| {
            let id = param_label(ui, PARAMS, "algorithm");
            let primary = c.primary();
            egui::ComboBox::from_id_salt("denoise_algorithm")
                .selected_text(primary.label())
                .show_ui(ui, |ui| {
                    for a in AlgorithmChoice::ALL {
                        if ui.selectable_label(a == primary, a.label()).clicked() {
                            c.algorithm = a.algorithm;
                            if a.algorithm == DenoiseAlgorithm::Kbp {
                                c.kbp.update = a.update;
                            }
                        }
                    }
                })
                .response
                .labelled_by(id);
            ui.end_row();
            let id = param_label(ui, PARAMS, "compare");
            let compare_text = c.compare.map_or("nothing".to_string(), |a| a.label());
            egui::ComboBox::from_id_salt("denoise_compare")
                .selected_text(compare_text)
                .show_ui(ui, |ui| {
                    ui.selectable_value(&mut c.compare, None, "nothing");
                    for a in AlgorithmChoice::ALL.into_iter().filter(|a| *a != primary) {
                        ui.selectable_value(&mut c.compare, Some(a), a.label());
                    }
                })
                .response
                .labelled_by(id);
            ui.end_row();
            let id = param_label(ui, PARAMS, "schedule");
            let auto_text = format!("auto ({})", c.schedule_for(c.algorithm).label());
            let selected = match c.schedule {
                ScheduleChoice::Auto => auto_text.clone(),
                ScheduleChoice::Fixed(s) => s.label().to_string(),
            };
            egui::ComboBox::from_id_salt("denoise_schedule")
                .selected_text(selected)
                .show_ui(ui, |ui| {
                    ui.selectable_value(&mut c.schedule, ScheduleChoice::Auto, auto_text);
                    for &s in Schedule::VARIANTS {
                        ui.selectable_value(&mut c.schedule, ScheduleChoice::Fixed(s), s.label());
                    }
                })
                .response
                .labelled_by(id);
            ui.end_row();
            param_row(ui, c, PARAMS, "damping");
            ui.end_row();
            param_row(ui, c, PARAMS, "edge_appearance");
            ui.end_row();
            param_row(ui, c, PARAMS, "kbp_edge_appearance");
            ui.end_row();
            let id = param_label(ui, PARAMS, "max_iters");
            bounded_count(ui, &mut c.max_iters, 1, 100_000, "", id, "");
            ui.end_row();
            let id = param_label(ui, PARAMS, "tolerance");
            fitted_slider(
                ui,
                egui::Slider::new(&mut c.tolerance, 0.0..=1.0)
                    .logarithmic(true)
                    .smallest_positive(1e-10)
                    .custom_formatter(|v, _| {
                        if v == 0.0 {
                            "0".into()
                        } else {
                            format!("{v:.0e}")
                        }
                    })
                    .custom_parser(|s| s.trim().parse::<f64>().ok()),
            )
            .labelled_by(id);
            ui.end_row();
            let id = param_label(ui, PARAMS, "sure_stop");
            ui.horizontal(|ui| {
                ui.checkbox(&mut c.sure_stop, "on").labelled_by(id);
                ui.add_enabled_ui(c.sure_stop, |ui| {
                    egui::ComboBox::from_id_salt("denoise_sure_rule")
                        .selected_text(sure_rule_label(c.sure_rule))
                        .show_ui(ui, |ui| {
                            for &r in SureRule::VARIANTS {
                                ui.selectable_value(&mut c.sure_rule, r, sure_rule_label(r));
                            }
                        })
                        .response
                        .labelled_by(id);
                    sure_probes_row(ui, c, running_size, id);
                });
            });
            ui.end_row();
            let id = param_label(ui, PARAMS, "estimate");
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
    let uses_kbp = c.algorithm == DenoiseAlgorithm::Kbp
        || c.compare
            .is_some_and(|a| a.algorithm == DenoiseAlgorithm::Kbp);
    if uses_kbp {
        kbp_section(ui, &mut c.kbp, &mut c.candidates, running);
        autotune_section(ui, c, task_running, autotune, commands);
    }
}

/// SURE's probe count: `auto` (by the image's size, the count shown where the size is known)
/// or a number typed in.
fn sure_probes_row(
    ui: &mut egui::Ui,
    c: &mut DenoiseConfig,
    running_size: Option<[usize; 2]>,
    id: egui::Id,
) {
    let pixels = if !c.loads_image() {
        Some(c.width * c.height)
    } else {
        running_size.map(|[w, h]| w * h)
    };
    let resolved = pixels.map(|p| SureProbes::Auto.resolve(p));
    let mut auto = c.sure_probes == SureProbes::Auto;
    // While auto, the checkbox names the count it resolves to.
    let text = match (auto, resolved) {
        (true, Some(1)) => "auto (1 probe)".to_string(),
        (true, Some(k)) => format!("auto ({k} probes)"),
        (true, None) => "auto (by image size)".to_string(),
        (false, _) => "auto".to_string(),
    };
    let toggled = ui
        .checkbox(&mut auto, text)
        .on_hover_text(entry(PARAMS, "sure_probes").help)
        .changed();
    if toggled {
        c.sure_probes = if auto {
            SureProbes::Auto
        } else {
            SureProbes::Count(resolved.unwrap_or(1) as u8)
        };
    }
    if let SureProbes::Count(k) = &mut c.sure_probes {
        ui.add(
            egui::DragValue::new(k)
                .range(1..=MAX_PROBES as u8)
                .suffix(" probe(s)"),
        )
        .labelled_by(id);
    }
}

fn sure_rule_label(rule: SureRule) -> &'static str {
    match rule {
        SureRule::Guard => "guard steps",
        SureRule::Stop => "stop at lowest",
    }
}

/// Makes `path`, an image that already is noisy, the test image: no clean image, no oracle,
/// sigma estimated from it until the user gives one.
pub fn use_noisy_image(c: &mut DenoiseConfig, path: std::path::PathBuf) {
    c.noisy_image = Some(path);
    c.image = None;
    c.oracle = false;
    c.estimate_sigma = true;
    c.sigma_rule = None;
}

/// Back to a clean test image (the sunset or a loaded one): noise is added again, with the
/// sigma in `noise`.
pub fn forget_noisy_image(c: &mut DenoiseConfig) {
    c.noisy_image = None;
    c.estimate_sigma = false;
    c.sigma_rule = None;
}

/// A noisy image's sigma: estimated from the image (the value the run estimated is shown once
/// it has run) or typed in.
fn noisy_sigma_row(ui: &mut egui::Ui, c: &mut DenoiseConfig) {
    let id = row_label(ui, "Noise σ (gray levels)", NOISY_SIGMA_HELP);
    ui.vertical(|ui| {
        let was_estimated = c.estimate_sigma;
        ui.checkbox(&mut c.estimate_sigma, "estimate from the image");
        if was_estimated && !c.estimate_sigma {
            // From now on the number is given: the last estimate is a good start.
            c.sigma_rule = None;
        }
        if c.estimate_sigma {
            let text = match &c.sigma_rule {
                Some(_) => format!("estimated σ = {:.2} (MAD)", c.noise),
                None => "estimated when the run starts".to_string(),
            };
            ui.label(text);
        } else {
            ui.add(
                egui::DragValue::new(&mut c.noise)
                    .range(0.01..=1000.0)
                    .speed(0.1)
                    .max_decimals(2)
                    .suffix(" given"),
            )
            .labelled_by(id);
        }
    });
}

/// Which built-in image a loaded image trains on when no training image is given. The sunset
/// itself always trains on its own generator, and the oracle on the test image, so the picker
/// is enabled only for a loaded image without a training image or the oracle.
fn builtin_training_row(ui: &mut egui::Ui, c: &mut DenoiseConfig) {
    let loaded = c.loads_image();
    let enabled = loaded && c.train_image.is_none() && !c.oracle;
    ui.horizontal(|ui| {
        let id = param_label(ui, PARAMS, "train_builtin");
        ui.add_enabled_ui(enabled, |ui| {
            egui::ComboBox::from_id_salt("denoise_train_builtin")
                .selected_text(c.train_builtin.title())
                .show_ui(ui, |ui| {
                    for &b in BuiltinTraining::VARIANTS {
                        ui.selectable_value(&mut c.train_builtin, b, b.title());
                    }
                })
                .response
                .labelled_by(id)
                .on_disabled_hover_text(if loaded {
                    "A training image or the oracle is chosen"
                } else {
                    "The sunset trains on its own generator (Song et al. 2011, Sec. 6.1)"
                });
        });
    });
}

/// Auto-tune of λ × bandwidth multiplier (on a held-out noisy copy of the training image, never
/// the test noise), its scored grid and a button to use the best pair.
fn autotune_section(
    ui: &mut egui::Ui,
    c: &mut DenoiseConfig,
    task_running: bool,
    result: Option<&AutotuneResult>,
    commands: &mut Vec<UiCommand>,
) {
    let spec = AutotuneSpec::default();
    ui.add_space(4.0);
    let start = ui
        .add_enabled(
            !task_running,
            egui::Button::new("Auto-tune λ and bandwidth ×"),
        )
        .on_hover_text(format!(
            "Grid search over {} λ × {} multipliers, {} iterations each, scored by the RMSE on a \
             held-out noisy copy of the training image (the test noise is never looked at). \
             Runs on the engine thread; iterations pause meanwhile.",
            spec.lambdas.len(),
            spec.multipliers.len(),
            spec.iterations
        ));
    if start.clicked() {
        commands.push(UiCommand::RunTask(Task::Denoise(AutotuneTask {
            config: c.clone(),
            spec,
        })));
    }
    let Some(r) = result else {
        return;
    };
    ui.label(
        RichText::new(format!(
            "best: λ {:.0e}, × {} → validation RMSE {:.2} (noisy {:.1})",
            r.best_lambda, r.best_multiplier, r.best_rmse, r.noisy_rmse
        ))
        .small(),
    );
    // The scored grid: rows λ, columns multiplier; the best in bold.
    egui::Grid::new("autotune_grid")
        .spacing([6.0, 1.0])
        .show(ui, |ui| {
            ui.label(RichText::new("λ \\ ×").small().weak());
            for m in &r.spec.multipliers {
                ui.label(RichText::new(format!("{m}")).small().weak());
            }
            ui.end_row();
            for (i, l) in r.spec.lambdas.iter().enumerate() {
                ui.label(RichText::new(format!("{l:.0e}")).small().weak());
                for (j, m) in r.spec.multipliers.iter().enumerate() {
                    let v = r.rmse[i][j];
                    let text = if v.is_finite() {
                        format!("{v:.1}")
                    } else {
                        "–".into()
                    };
                    let mut t = RichText::new(text).small().monospace();
                    if *l == r.best_lambda && *m == r.best_multiplier {
                        t = t.strong().color(ui.visuals().selection.stroke.color);
                    }
                    ui.label(t);
                }
                ui.end_row();
            }
        });
    let is_applied = c.kbp.lambda == r.best_lambda && c.kbp.multiplier == r.best_multiplier;
    let apply = ui
        .add_enabled(!is_applied, egui::Button::new("Use the best pair"))
        .on_hover_text("Set λ and the bandwidth multiplier to the best pair of the grid");
    if apply.clicked() {
        c.kbp.lambda = r.best_lambda;
        c.kbp.multiplier = r.best_multiplier;
    }
}

/// Kernel-BP settings (when kernel BP runs) and what the set-up chose.
fn kbp_section(
    ui: &mut egui::Ui,
    k: &mut KbpSettings,
    candidates: &mut Candidates,
    running: Option<&DenoiseView>,
) {
    section(ui, "Kernel BP");
    egui::Grid::new("denoise_kbp")
        .num_columns(2)
        .spacing([8.0, 6.0])
        .show(ui, |ui| {
            let id = param_label(ui, PARAMS, "kbp.lambda");
            fitted_slider(ui, log_slider(&mut k.lambda, 1e-6, 10.0)).labelled_by(id);
            ui.end_row();
            let id = param_label(ui, PARAMS, "kbp.multiplier");
            fitted_slider(ui, log_slider(&mut k.multiplier, 1e-3, 100.0)).labelled_by(id);
            ui.end_row();
            bandwidth_row(
                ui,
                "kbp.bandwidth",
                &mut k.bandwidth,
                running.and_then(|v| v.kbp.as_ref()).map(|i| i.sigma_hidden),
            );
            bandwidth_row(
                ui,
                "kbp.observation_bandwidth",
                &mut k.observation_bandwidth,
                running
                    .and_then(|v| v.kbp.as_ref())
                    .map(|i| i.sigma_observed),
            );
            let id = param_label(ui, PARAMS, "kbp.epsilon");
            fitted_slider(ui, log_slider(&mut k.epsilon, 1e-8, 0.5)).labelled_by(id);
            ui.end_row();
            let id = param_label(ui, PARAMS, "kbp.max_rank");
            bounded_count(ui, &mut k.max_rank, 1, 2000, "", id, "");
            ui.end_row();
            let id = param_label(ui, PARAMS, "candidates");
            egui::ComboBox::from_id_salt("denoise_candidates")
                .selected_text(candidates_label(*candidates))
                .show_ui(ui, |ui| {
                    for v in [Candidates::Training, Candidates::All] {
                        ui.selectable_value(candidates, v, candidates_label(v));
                    }
                })
                .response
                .labelled_by(id);
            ui.end_row();
        });
    if let Some(info) = running.and_then(|v| v.kbp.as_ref()) {
        let d = &info.diagnostics;
        let mut lines = vec![format!(
            "running {}: σ hidden {:.2}, σ observed {:.2}, λ {:.0e}",
            info.update, info.sigma_hidden, info.sigma_observed, info.lambda
        )];
        let mut sizes = format!(
            "{} distinct values, {} template and {} observation pairs",
            d.distinct_values, d.template_pairs, d.observation_pairs
        );
        if let Some(r) = d.feature_rank {
            sizes.push_str(&format!(", feature rank {r}"));
        }
        lines.push(sizes);
        if let Some(worst) = d.condition_numbers.values().copied().reduce(f64::max) {
            lines.push(format!(
                "largest condition number {worst:.1e}; set-up {:.2} s",
                info.setup_seconds
            ));
        }
        for line in lines {
            ui.add(egui::Label::new(RichText::new(line).small().weak()).wrap());
        }
    }
}

/// "auto" or a value of the table's bandwidth `key`, with the value in use shown beside "auto".
fn bandwidth_row(ui: &mut egui::Ui, key: &str, b: &mut Bandwidth, in_use: Option<f64>) {
    let id = param_label(ui, PARAMS, key);
    ui.horizontal(|ui| {
        let mut auto = matches!(b, Bandwidth::Auto);
        if ui
            .checkbox(&mut auto, "auto")
            .on_hover_text("Median heuristic times the multiplier")
            .changed()
        {
            *b = if auto {
                Bandwidth::Auto
            } else {
                Bandwidth::Value(in_use.unwrap_or(10.0).max(0.01))
            };
        }
        match b {
            Bandwidth::Value(v) => {
                ui.add(
                    egui::DragValue::new(v)
                        .range(0.01..=1000.0)
                        .speed(0.1)
                        .max_decimals(2),
                )
                .labelled_by(id);
            }
            Bandwidth::Auto => {
                if let Some(s) = in_use {
                    ui.weak(format!("{s:.2}"));
                }
            }
        }
    });
    ui.end_row();
}

fn log_slider(value: &mut f64, lo: f64, hi: f64) -> egui::Slider<'_> {
    egui::Slider::new(value, lo..=hi)
        .logarithmic(true)
        .custom_formatter(|v, _| format!("{v:.1e}"))
        .custom_parser(|s| s.trim().parse::<f64>().ok())
}

fn candidates_label(c: Candidates) -> &'static str {
    match c {
        Candidates::Training => "training levels",
        Candidates::All => "all 256 levels",
    }
}

fn estimate_label(e: EstimateKind) -> &'static str {
    match e {
        EstimateKind::Map => "MAP (most probable level)",
        EstimateKind::Mean => "posterior mean",
    }
}
