//! The explorer window driven through egui_kittest (AccessKit queries, no GPU). The engine runs
//! on its own thread, so each test steps the harness until what it waits for appears.
//! None of these tests reads or writes the user's saved window state: kittest gives the app no
//! storage, and `App::with_config` never persists.

use std::path::PathBuf;

use crate::common::*;
use beliefscope::app::App;
use beliefscope::inference::kbp::KbpUpdate;
use beliefscope::scenarios::ScenarioConfig;
use beliefscope::scenarios::denoise::sure_stop::SureProbes;
use beliefscope::scenarios::denoise::{
    AlgorithmChoice, BuiltinTraining, DenoiseAlgorithm, DenoiseConfig,
};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT as _, Queryable as _};

/// The shared small run (iterations take microseconds), long enough (500 iterations, no SURE guard) that tests see it running.
fn long_small_denoise() -> DenoiseConfig {
    DenoiseConfig {
        max_iters: 500,
        sure_stop: false,
        ..small_denoise()
    }
}

fn small_config() -> ScenarioConfig {
    ScenarioConfig::Denoise(long_small_denoise())
}

fn small_app(autoplay: bool) -> Harness<'static, App> {
    Harness::builder()
        .with_size([1280.0, 800.0])
        .build_eframe(move |cc| App::with_config(cc, small_config(), autoplay))
}

/// The iteration the status bar shows ("iteration 3 / 500").
fn shown_iteration(harness: &Harness<'_, App>) -> Option<usize> {
    texts(harness).into_iter().find_map(|label| {
        label
            .strip_prefix("iteration ")?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    })
}

#[test]
fn the_app_starts_and_the_status_bar_shows_an_iteration() {
    // The same constructor the window uses (kittest provides no storage: defaults, no saving).
    let mut harness = Harness::builder()
        .with_size([1280.0, 800.0])
        .build_eframe(|cc| App::new(cc));
    wait_for(&mut harness, "a first iteration", |h| {
        shown_iteration(h).is_some_and(|i| i >= 1)
    });
    assert!(harness.query_by_label("Play").is_some() || harness.query_by_label("Pause").is_some());
    assert!(harness.query_by_label("Step").is_some());
    assert!(harness.query_by_label("estimate image").is_some());
    harness.check_accessibility();
}

#[test]
fn step_advances_the_iteration_in_the_status_bar() {
    let mut harness = small_app(false);
    wait_for(&mut harness, "the paused scenario", |h| {
        shown_iteration(h) == Some(0)
    });

    harness.get_by_label("Step").click();
    wait_for(&mut harness, "iteration 1", |h| {
        shown_iteration(h) == Some(1)
    });
    harness.get_by_label("Step").click();
    wait_for(&mut harness, "iteration 2", |h| {
        shown_iteration(h) == Some(2)
    });

    // The Right arrow is Step's shortcut.
    harness.key_press(eframe::egui::Key::ArrowRight);
    wait_for(&mut harness, "iteration 3", |h| {
        shown_iteration(h) == Some(3)
    });
    assert!(has_text(&harness, "paused"));
}

#[test]
fn clicking_a_pixel_shows_its_belief_and_it_follows_the_iterations() {
    let mut harness = small_app(false);
    wait_for(&mut harness, "the image panes", |h| {
        h.query_by_label("estimate image").is_some()
    });
    assert!(!has_text(&harness, "Belief at ("));

    harness.get_by_label("estimate image").click();
    wait_for(&mut harness, "the belief heading", |h| {
        has_text(h, "Belief at (")
    });
    let heading = text_containing(&harness, "Belief at (").unwrap();
    // The click lands in the middle of the 24 x 16 image.
    let xy: Vec<usize> = heading
        .trim_start_matches("Belief at (")
        .trim_end_matches(')')
        .split(", ")
        .map(|v| v.parse().unwrap())
        .collect();
    assert!(
        (11..=12).contains(&xy[0]) && (7..=8).contains(&xy[1]),
        "{heading}"
    );

    // Still shown, for the same pixel, after an iteration.
    harness.get_by_label("Step").click();
    wait_for(&mut harness, "iteration 1", |h| {
        shown_iteration(h) == Some(1)
    });
    assert!(has_text(&harness, &heading));

    // Kernel BP (the default) also shows the messages into the pixel.
    harness.get_by_label("Messages").click();
    wait_for(&mut harness, "the message plot", |h| {
        has_text(h, "incoming messages")
    });
}

#[test]
fn discrete_bp_beliefs_are_probabilities_over_the_levels() {
    let config = ScenarioConfig::Denoise(DenoiseConfig {
        algorithm: DenoiseAlgorithm::Discrete,
        ..long_small_denoise()
    });
    let mut harness = Harness::builder()
        .with_size([1280.0, 800.0])
        .build_eframe(move |cc| App::with_config(cc, config, false));
    wait_for(&mut harness, "the image panes", |h| {
        h.query_by_label("noisy image").is_some()
    });
    harness.get_by_label("noisy image").click();
    wait_for(&mut harness, "the belief", |h| {
        has_text(h, "P(clean level)")
    });
}

#[test]
fn compare_mode_shows_both_estimates_and_their_errors() {
    let config = ScenarioConfig::Denoise(DenoiseConfig {
        compare: Some(AlgorithmChoice {
            algorithm: DenoiseAlgorithm::Discrete,
            update: KbpUpdate::Constant,
        }),
        ..long_small_denoise()
    });
    let mut harness = Harness::builder()
        .with_size([1280.0, 800.0])
        .build_eframe(move |cc| App::with_config(cc, config, false));
    wait_for(&mut harness, "the compare panes", |h| {
        h.query_by_label("compare error image").is_some()
    });
    for name in [
        "clean image",
        "noisy image",
        "estimate image",
        "error image",
        "compare image",
    ] {
        assert!(harness.query_by_label(name).is_some(), "{name}");
    }
    assert!(has_text(&harness, "(discrete)"));
}

#[test]
fn auto_tune_runs_on_the_worker_and_its_best_pair_can_be_used() {
    let mut harness = small_app(false);
    wait_for(&mut harness, "the paused scenario", |h| {
        shown_iteration(h) == Some(0)
    });
    let button = "Auto-tune λ and bandwidth ×";
    harness.get_by_label(button).scroll_to_me();
    harness.run_steps(3);
    harness.get_by_label(button).click();
    wait_for(&mut harness, "the auto-tune result", |h| {
        has_text(h, "validation RMSE")
    });
    // "best: λ 1e-4, × 0.05 → validation RMSE …"
    let best = text_containing(&harness, "best: λ ").unwrap();
    let numbers: Vec<f64> = best
        .trim_start_matches("best: λ ")
        .split(" →")
        .next()
        .unwrap()
        .split(", × ")
        .map(|v| v.parse().unwrap())
        .collect();
    let use_best = "Use the best pair";
    if !harness
        .get_by_label(use_best)
        .accesskit_node()
        .is_disabled()
    {
        harness.get_by_label(use_best).scroll_to_me();
        harness.run_steps(3);
        harness.get_by_label(use_best).click();
    }
    // The best pair becomes the running config (a rebuild on the worker).
    wait_for(&mut harness, "the best pair running", |h| {
        h.state().snapshot().is_some_and(|s| match &s.config {
            ScenarioConfig::Denoise(c) => {
                c.kbp.lambda == numbers[0] && c.kbp.multiplier == numbers[1]
            }
            _ => false,
        })
    });
    assert!(
        harness.state().notices().is_empty(),
        "{:?}",
        harness.state().notices()
    );
}

/// A file dropped on the window, as the windowing backend reports it.
#[derive(Debug)]
struct Dropped(PathBuf);

impl eframe::egui::DroppedFile for Dropped {
    fn path(&self) -> &std::path::Path {
        &self.0
    }
    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

#[test]
fn a_dropped_image_becomes_the_clean_image() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gradient.png");
    image::GrayImage::from_fn(32, 20, |x, y| image::Luma([(x * 8 + y * 4) as u8]))
        .save(&path)
        .unwrap();

    let mut harness = small_app(false);
    wait_for(&mut harness, "the paused scenario", |h| {
        shown_iteration(h) == Some(0)
    });
    harness
        .input_mut()
        .dropped_files
        .push(std::sync::Arc::new(Dropped(path)));
    wait_for(&mut harness, "the dropped image", |h| {
        has_text(h, "32 × 20 pixels")
    });
    assert!(has_text(&harness, "gradient.png"));
    assert!(harness.state().notices().is_empty());
}

#[test]
fn bad_images_show_an_error_and_the_running_scenario_keeps_going() {
    let dir = tempfile::tempdir().unwrap();
    let not_an_image = dir.path().join("notes.png");
    std::fs::write(&not_an_image, b"this is text, not a picture").unwrap();
    let too_wide = dir.path().join("wide.png");
    image::GrayImage::new(4097, 1).save(&too_wide).unwrap();
    let missing = PathBuf::from("/nonexistent/beliefscope-test.png");

    let mut harness = small_app(false);
    wait_for(&mut harness, "the paused scenario", |h| {
        shown_iteration(h) == Some(0)
    });

    for (path, expected) in [
        (missing, "cannot load denoise"),
        (not_an_image, "notes.png"),
        (too_wide, "4096"),
    ] {
        harness.state_mut().open_image(path.clone());
        wait_for(
            &mut harness,
            &format!("the error about {}", path.display()),
            |h| h.state().notices().iter().any(|n| n.contains(expected)),
        );
        assert!(
            has_text(&harness, expected),
            "the message is not visible: {:?}",
            harness.state().notices()
        );
    }
    // The parameters show the scenario that still runs (the sunset), and it still steps.
    wait_for(&mut harness, "the sunset again", |h| {
        has_text(h, "built-in sunset")
    });
    harness.get_by_label("Step").click();
    wait_for(&mut harness, "iteration 1", |h| {
        shown_iteration(h) == Some(1)
    });

    // Messages close with their button.
    let before = harness.state().notices().len();
    harness
        .get_all_by_label("Dismiss message")
        .next()
        .unwrap()
        .click();
    wait_for(&mut harness, "one message fewer", |h| {
        h.state().notices().len() == before - 1
    });
}

/// A noisy image with no clean version shows where the RMSE would be that there is
/// none, and the sigma estimated from the image with its rule.
#[test]
fn a_noisy_image_without_a_clean_version_says_rmse_not_available() {
    use beliefscope::scenarios::denoise::sunset::add_noise;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("noisy.png");
    let (w, h) = (24, 16);
    let clean: Vec<f64> = (0..w * h).map(|i| 60.0 + 5.0 * (i % w) as f64).collect();
    beliefscope::io::save_gray_png(&path, w, h, &add_noise(&clean, 20.0, 3)).unwrap();
    let config = ScenarioConfig::Denoise(DenoiseConfig {
        noisy_image: Some(path),
        estimate_sigma: true,
        ..long_small_denoise()
    });
    let mut harness = Harness::builder()
        .with_size([1280.0, 800.0])
        .build_eframe(move |cc| App::with_config(cc, config, false));
    wait_for(&mut harness, "the no-clean note", |h| {
        has_text(h, "RMSE not available; sigma estimated")
    });
    assert!(has_text(&harness, "(MAD)"));
    assert!(!has_text(&harness, "RMSE NaN"));
}

/// Kernel BP's likelihood: the checkbox switches between the expected observation template
/// (the default) and one noise draw per training pixel, and the training line says which ran.
#[test]
fn the_likelihood_checkbox_switches_kernel_bps_observation_template() {
    let mut harness = small_app(false);
    wait_for(&mut harness, "the expected template named", |h| {
        texts(h)
            .iter()
            .any(|t| t.contains("its likelihood the expectation over the noise draws"))
    });
    let label = "kernel BP: likelihood expected over the noise";
    harness.get_by_label(label).scroll_to_me();
    harness.run_steps(3);
    harness.get_by_label(label).click();
    harness.run_steps(2);
    harness.get_by_label("Reset").click();
    wait_for(&mut harness, "one draw running", |h| {
        h.state().snapshot().is_some_and(
            |s| matches!(&s.config, ScenarioConfig::Denoise(c) if !c.kbp_expected_observations),
        )
    });
    wait_for(&mut harness, "the one-draw template named", |h| {
        texts(h)
            .iter()
            .any(|t| t.contains("its likelihood from one noise draw per pixel"))
    });
}

/// SURE's probes: `auto` (the default) names the count it resolves to for the image (8 on
/// 24 x 16); unticking it keeps that count as a number to type, and the next run uses it.
#[test]
fn the_sure_probes_checkbox_shows_auto_s_count_and_unticks_to_a_number() {
    let mut h = window_on(ScenarioConfig::Denoise(small_denoise()));
    let label = "auto (8 probes)";
    h.get_by_label(label).scroll_to_me();
    h.run_steps(3);
    h.get_by_label(label).click();
    h.run_steps(2);
    assert!(h.query_by_label(label).is_none(), "still auto");
    h.get_by_label("Reset").click();
    wait_for(&mut h, "a run with 8 typed probes", |h| {
        h.state().snapshot().is_some_and(|s| {
            matches!(&s.config, ScenarioConfig::Denoise(c) if c.sure_probes == SureProbes::Count(8))
        })
    });
}

/// A 24 x 16 image of gray blocks in `dir`, for window tests on a loaded image.
fn blocks_image(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("blocks.png");
    image::GrayImage::from_fn(24, 16, |x, y| image::Luma([((x / 6 + y / 4) * 40) as u8]))
        .save(&path)
        .unwrap();
    path
}

/// The Schedule box names what `auto` runs: synchronous updates on the sunset, sweeps for
/// kernel BP on a loaded image; picking a schedule fixes it for the next run.
#[test]
fn the_schedule_box_names_what_auto_runs() {
    use beliefscope::inference::Schedule;
    use beliefscope::scenarios::denoise::schedule_choice::ScheduleChoice;
    use eframe::egui::accesskit::Role;
    let shown = |h: &Harness<'_, App>| {
        h.get_by_role_and_label(Role::ComboBox, "Schedule")
            .value()
            .unwrap_or_default()
    };
    let sunset = window_on(ScenarioConfig::Denoise(small_denoise()));
    assert_eq!(shown(&sunset), "auto (synchronous)");

    let dir = tempfile::tempdir().unwrap();
    let path = blocks_image(dir.path());
    let config = DenoiseConfig {
        image: Some(path),
        ..small_denoise()
    };
    let mut h = window_on(ScenarioConfig::Denoise(config));
    assert_eq!(shown(&h), "auto (sweep)");
    h.get_by_role_and_label(Role::ComboBox, "Schedule")
        .scroll_to_me();
    h.run_steps(3);
    h.get_by_role_and_label(Role::ComboBox, "Schedule").click();
    h.run_steps(3);
    h.get_by_label("synchronous").click();
    h.run_steps(2);
    assert_eq!(shown(&h), "synchronous");
    h.get_by_label("Reset").click();
    wait_for(&mut h, "a run with the synchronous schedule fixed", |h| {
        h.state().snapshot().is_some_and(|s| {
            matches!(&s.config, ScenarioConfig::Denoise(c)
                if c.schedule == ScheduleChoice::Fixed(Schedule::Synchronous))
        })
    });
}

/// The built-in training picker: disabled on the sunset (which trains on its own generator);
/// a loaded image trains on dead leaves by default, and the picker switches it to the sunset:
/// the running config echoes the choice and the training line names it.
#[test]
fn the_built_in_training_picker_switches_a_loaded_images_training() {
    use eframe::egui::accesskit::Role;
    let picker = "Built-in training";
    let disabled = |h: &Harness<'_, App>| {
        h.get_by_role_and_label(Role::ComboBox, picker)
            .accesskit_node()
            .is_disabled()
    };
    let mut sunset = small_app(false);
    wait_for(&mut sunset, "the sunset running", |h| {
        h.state().snapshot().is_some()
    });
    assert!(disabled(&sunset), "the sunset's picker is enabled");

    let dir = tempfile::tempdir().unwrap();
    let path = blocks_image(dir.path());
    let config = DenoiseConfig {
        image: Some(path),
        ..long_small_denoise()
    };
    let mut harness = Harness::builder()
        .with_size([1280.0, 800.0])
        .build_eframe(move |cc| App::with_config(cc, ScenarioConfig::Denoise(config), false));
    wait_for(&mut harness, "dead leaves named as training", |h| {
        has_text(h, "trained on built-in dead leaves, 4 draws of 24 x 16")
    });
    assert!(!disabled(&harness), "a loaded image's picker is disabled");
    harness
        .get_by_role_and_label(Role::ComboBox, picker)
        .scroll_to_me();
    harness.run_steps(3);
    harness
        .get_by_role_and_label(Role::ComboBox, picker)
        .click();
    harness.run_steps(3);
    harness.get_by_label("built-in sunset").click();
    harness.run_steps(2);
    harness.get_by_label("Reset").click();
    wait_for(&mut harness, "the sunset running as training", |h| {
        h.state().snapshot().is_some_and(|s| {
            matches!(&s.config, ScenarioConfig::Denoise(c)
                if c.train_builtin == BuiltinTraining::Sunset)
        })
    });
    wait_for(&mut harness, "the sunset named as training", |h| {
        has_text(h, "trained on the built-in sunset, 24 x 16")
    });
}
