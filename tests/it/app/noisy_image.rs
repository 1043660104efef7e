//! The denoise room's "Open noisy image…" (form button and File menu), driven through
//! egui_kittest with the in-window file browser: the picked file runs as the noisy observation
//! (no clean image, no noise added), its sigma is estimated and shown, and can be given instead.

use std::path::{Path, PathBuf};

use crate::common::*;
use beliefscope::app::App;
use beliefscope::scenarios::denoise::DenoiseConfig;
use beliefscope::scenarios::denoise::sunset::add_noise;
use beliefscope::scenarios::{Registered as _, ScenarioConfig};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;

const OPEN_NOISY: &str = "Open noisy image…";

/// A smooth 48 x 40 image with Gaussian noise of `sigma` added, saved as 8-bit PNG.
fn noisy_png(dir: &Path, name: &str, sigma: f64) -> PathBuf {
    let (w, h) = (48, 40);
    let clean: Vec<f64> = (0..w * h)
        .map(|i| 80.0 + 2.0 * (i % w) as f64 + (i / w) as f64)
        .collect();
    let path = dir.join(name);
    beliefscope::io::save_gray_png(&path, w, h, &add_noise(&clean, sigma, 11)).unwrap();
    path
}

fn running(h: &Harness<'_, App>) -> Option<DenoiseConfig> {
    DenoiseConfig::of(&h.state().snapshot()?.config).cloned()
}

/// The browser lists `name`; pick it and press Open.
fn pick_in_browser(h: &mut Harness<'_, App>, name: &str) {
    wait_for(h, "the browser", |h| h.query_by_label(name).is_some());
    h.get_by_label(name).click();
    h.run_steps(3);
    h.get_by_label("Open").click();
    wait_for(h, "the dialog to close", |h| !h.state().file_dialog_open());
}

#[test]
fn open_noisy_image_runs_the_file_as_the_observation_with_its_estimated_sigma() {
    let dir = tempfile::tempdir().unwrap();
    let noisy = noisy_png(dir.path(), "noisy.png", 20.0);
    let clean = noisy_png(dir.path(), "clean.png", 0.0);
    let mut h = window_on(ScenarioConfig::Denoise(small_denoise()));
    // A clean image first, so the browser starts in this folder (beside the newest image).
    h.state_mut().open_image(clean.clone());
    wait_for(&mut h, "the clean image", |h| {
        running(h).is_some_and(|c| c.image.as_deref() == Some(clean.as_path()))
    });

    // The form's button.
    h.get_by_label(OPEN_NOISY).click();
    pick_in_browser(&mut h, "noisy.png");
    wait_for(&mut h, "the noisy image running", |h| {
        running(h).is_some_and(|c| c.noisy_image.is_some() && c.sigma_rule.is_some())
    });
    let ran = running(&h).unwrap();
    assert_eq!(ran.noisy_image.as_deref(), Some(noisy.as_path()));
    assert!(ran.image.is_none() && !ran.oracle && ran.estimate_sigma);
    assert!((ran.noise / 20.0 - 1.0).abs() < 0.2, "sigma {}", ran.noise);
    // The window says what it is and shows the estimate, in the form and where the RMSE was.
    wait_for(&mut h, "the estimate in the form", |h| {
        has_text(h, &format!("estimated σ = {:.2} (MAD)", ran.noise))
    });
    assert!(has_text(&h, "noisy, no clean version"));
    assert!(has_text(&h, "RMSE not available; sigma estimated"));
    // Not an Open Recent entry: from there it would reopen as a clean image.
    let recent = h
        .state()
        .state()
        .recent
        .list(beliefscope::app::recent::RecentKind::Images)
        .to_vec();
    assert!(!recent.contains(&noisy), "{recent:?}");

    // Giving sigma instead: the run uses the number, not the rule.
    h.get_by_label("estimate from the image").click();
    wait_for(&mut h, "sigma given", |h| {
        running(h).is_some_and(|c| !c.estimate_sigma && c.sigma_rule.is_none())
    });
    assert_eq!(running(&h).unwrap().noise, ran.noise);
    assert!(has_text(&h, "sigma given"));

    // Back to the sunset: noise is added again, no noisy file.
    h.get_by_label("Use sunset").click();
    wait_for(&mut h, "the sunset", |h| {
        running(h).is_some_and(|c| c.noisy_image.is_none() && c.image.is_none())
    });
    assert!(h.state().notices().is_empty(), "{:?}", h.state().notices());
}

#[test]
fn the_file_menu_offers_open_noisy_image_and_a_clean_open_replaces_it() {
    let dir = tempfile::tempdir().unwrap();
    noisy_png(dir.path(), "noisy.png", 15.0);
    let clean = noisy_png(dir.path(), "clean.png", 0.0);
    let mut h = window_on(ScenarioConfig::Denoise(small_denoise()));
    h.state_mut().open_image(clean.clone());
    wait_for(&mut h, "the clean image", |h| {
        running(h).is_some_and(|c| c.image.is_some())
    });
    h.get_by_label("File").click();
    h.run_steps(3);
    // The menu's item and the form's button.
    let items = h.get_all_by_label(OPEN_NOISY).count();
    assert_eq!(items, 2, "the File menu offers it beside the form's button");
    // The menu's item comes first (its popup is drawn above the panels).
    h.get_all_by_label(OPEN_NOISY).next().unwrap().click();
    wait_for(&mut h, "the browser", |h| h.state().file_dialog_open());
    pick_in_browser(&mut h, "noisy.png");
    wait_for(&mut h, "the noisy image running", |h| {
        running(h).is_some_and(|c| c.noisy_image.is_some() && c.sigma_rule.is_some())
    });
    // Opening a clean image afterwards leaves noisy mode (the two are exclusive).
    h.state_mut().open_image(clean.clone());
    wait_for(&mut h, "the clean image again", |h| {
        running(h).is_some_and(|c| c.image.is_some())
    });
    let c = running(&h).unwrap();
    assert!(c.noisy_image.is_none() && !c.estimate_sigma && c.sigma_rule.is_none());
    assert!(h.state().notices().is_empty(), "{:?}", h.state().notices());
}

/// Every name and text in the AccessKit tree (labels' values, and the names of other widgets
/// such as a plot's legend entries, which are checkboxes).
fn names(h: &Harness<'_, App>) -> Vec<String> {
    use egui_kittest::kittest::NodeT as _;
    h.root()
        .children_recursive()
        .flat_map(|n| {
            let node = n.accesskit_node();
            [node.label(), node.value()]
        })
        .flatten()
        .collect()
}

fn shows(h: &Harness<'_, App>, part: &str) -> bool {
    names(h).iter().any(|t| t.contains(part))
}

/// A noisy image has no true RMSE, so its error plot draws what there is: SURE's estimate of
/// the RMSE per iteration (named as an estimate, the kept iteration marked) and the RMS
/// distance to the noisy image against the noise σ, with a note why; a clean image keeps its
/// RMSE plot.
#[test]
fn a_noisy_image_plots_sures_estimate_and_the_distance_to_the_noisy_image() {
    let dir = tempfile::tempdir().unwrap();
    noisy_png(dir.path(), "noisy.png", 20.0);
    let clean = noisy_png(dir.path(), "clean.png", 0.0);
    let mut h = window_on(ScenarioConfig::Denoise(small_denoise()));
    h.state_mut().open_image(clean.clone());
    wait_for(&mut h, "the clean image", |h| {
        running(h).is_some_and(|c| c.image.is_some())
    });
    assert!(shows(&h, "RMSE per iteration"));
    assert!(!shows(&h, "SURE estimate of RMSE"));

    h.get_by_label(OPEN_NOISY).click();
    pick_in_browser(&mut h, "noisy.png");
    wait_for(&mut h, "the noisy image loaded", |h| {
        running(h).is_some_and(|c| c.noisy_image.is_some())
    });
    h.get_by_label("Play").click();
    wait_for(&mut h, "the noisy run to stop", |h| {
        running(h).is_some_and(|c| c.noisy_image.is_some())
            && h.state().snapshot().is_some_and(|s| s.finished)
    });
    h.run_steps(3);
    let snapshot = h.state().snapshot().unwrap();
    let config = running(&h).unwrap();
    assert!(config.sure_stop, "SURE stopping is the default");
    let view = beliefscope::scenarios::denoise::DenoiseView::of(&snapshot.view)
        .unwrap()
        .clone();
    let kept = view.kept.expect("SURE kept an iterate").iteration;
    // The curves come from the run's own records: SURE's estimate up to the stop, the
    // distance to the noisy image every iteration.
    let history = &snapshot.history;
    assert!(history.len() > kept, "the run went past its kept iterate");
    assert!(
        history
            .iter()
            .all(|r| r.metrics.contains_key("rms_to_noisy"))
    );
    assert!(history.iter().all(|r| !r.metrics.contains_key("rmse")));
    assert!(history[..kept].iter().all(|r| r.metrics["sure_rmse"] > 0.0));

    for part in [
        "Estimated RMSE (SURE) · no clean image".to_string(),
        "SURE estimate of RMSE".to_string(),
        "RMS distance to noisy".to_string(),
        format!("noise σ {:.1} (estimated, MAD)", config.noise),
        format!("kept iteration {kept} (lowest SURE)"),
        "No clean version, so no true RMSE".to_string(),
    ] {
        assert!(shows(&h, &part), "{part:?} not in {:?}", names(&h));
    }
    assert!(
        !shows(&h, "RMSE per iteration"),
        "the empty RMSE plot is gone"
    );
    assert!(h.state().notices().is_empty(), "{:?}", h.state().notices());
}
