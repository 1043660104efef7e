//! The convergence debugger in the window (egui_kittest): the residual map of a grid scenario
//! with its scrubber (stepping back shows that iteration's stored map).

use crate::common::*;
use beliefscope::app::App;
use beliefscope::scenarios::ScenarioConfig;
use beliefscope::scenarios::denoise::{DenoiseAlgorithm, DenoiseConfig};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;

fn discrete_config() -> ScenarioConfig {
    ScenarioConfig::Denoise(DenoiseConfig {
        width: 32,
        height: 24,
        colors: 8,
        max_iters: 12,
        tolerance: 0.0,
        sure_stop: false,
        algorithm: DenoiseAlgorithm::Discrete,
        ..DenoiseConfig::default()
    })
}

fn app(config: ScenarioConfig) -> Harness<'static, App> {
    let mut h = Harness::builder()
        .with_size([1360.0, 900.0])
        .build_eframe(move |cc| App::with_config(cc, config, true));
    wait_for(&mut h, "the run to finish", |h| {
        h.state().snapshot().is_some_and(|s| s.finished)
    });
    h
}

#[test]
fn scrubbing_back_shows_that_iterations_map() {
    let mut h = app(discrete_config());
    let maps = h
        .state()
        .snapshot()
        .unwrap()
        .convergence
        .clone()
        .unwrap()
        .maps;
    assert_eq!(maps.len(), 12, "every iteration stored in a small run");
    let newest = h.state().debugger().shown().unwrap().clone();
    assert_eq!(newest.iteration, 12);
    assert!(has_text(&h, "residual map of iteration 12"));
    for _ in 0..3 {
        h.get_by_label("◀").click();
        h.run_steps(2);
    }
    let shown = h.state().debugger().shown().unwrap().clone();
    assert_eq!(shown.iteration, 9);
    assert_eq!(
        &shown,
        maps[8].as_ref(),
        "the stored map of iteration 9 is drawn"
    );
    assert_ne!(shown.residual, newest.residual);
    assert!(has_text(&h, "residual map of iteration 9"));
}

/// A run that ends above its tolerance gets two what-if runs from its final state (residual BP,
/// and more damping), overlaid on the residual curve, and their measured outcome as hints; the
/// What if button adds another.
#[test]
fn unconverged_run_gets_measured_what_ifs_overlaid() {
    let config = ScenarioConfig::Denoise(DenoiseConfig {
        width: 32,
        height: 24,
        colors: 8,
        max_iters: 10,
        tolerance: 1e-9,
        sure_stop: false,
        damping: 0.0,
        algorithm: DenoiseAlgorithm::Discrete,
        ..DenoiseConfig::default()
    });
    let mut h = app(config);
    let last = h
        .state()
        .snapshot()
        .unwrap()
        .history
        .last()
        .unwrap()
        .residual;
    assert!(
        last >= 1e-9,
        "the run converged ({last}); the test needs one that does not"
    );
    wait_for(&mut h, "two automatic what-if runs", |h| {
        h.state().debugger().what_ifs.len() == 2
    });
    let runs = h.state().debugger().what_ifs.clone();
    for run in &runs {
        assert_eq!(run.start_iteration, 10);
        assert!(!run.residuals.is_empty());
        assert_eq!(
            run.residuals[0].0, 11,
            "continues the run's iteration numbers"
        );
    }
    assert!(has_text(&h, "not converged"));
    assert!(has_text(&h, &runs[0].hint()), "hint shown: {:?}", texts(&h));
    h.get_by_label("What if").click();
    wait_for(&mut h, "a third what-if run", |h| {
        h.state().debugger().what_ifs.len() == 3
    });
}

/// A run that the SURE guard settled above the tolerance says why it ended, as the status bar
/// does, instead of calling itself unconverged.
#[test]
fn a_run_the_sure_guard_settled_says_so_instead_of_not_converged() {
    let mut h = app(ScenarioConfig::Denoise(DenoiseConfig {
        width: 48,
        height: 48,
        ..DenoiseConfig::default()
    }));
    let snapshot = h.state().snapshot().unwrap();
    let last = snapshot.history.last().unwrap().residual;
    assert!(
        last > 1e-6,
        "the run needs to end above its tolerance ({last})"
    );
    let ended_by = snapshot
        .convergence
        .clone()
        .unwrap()
        .ended_by
        .expect("the guard settled the run");
    h.run_steps(4);
    assert!(has_text(&h, &ended_by), "{:?}", texts(&h));
    assert!(!has_text(&h, "not converged"), "{:?}", texts(&h));
}

/// In a 1400-point window with both side panels open, the measured hints wrap inside the
/// debugger's controls column instead of running past it.
#[test]
fn hints_wrap_in_a_1400_point_window() {
    let config = ScenarioConfig::Denoise(DenoiseConfig {
        width: 32,
        height: 24,
        colors: 8,
        max_iters: 10,
        tolerance: 1e-9,
        damping: 0.0,
        algorithm: DenoiseAlgorithm::Discrete,
        ..DenoiseConfig::default()
    });
    let mut h = Harness::builder()
        .with_size([1400.0, 900.0])
        .build_eframe(move |cc| App::with_config(cc, config, true));
    wait_for(&mut h, "two automatic what-if runs", |h| {
        h.state().debugger().what_ifs.len() == 2
    });
    let hint = h.state().debugger().what_ifs[0].hint();
    assert!(
        hint.len() > 80,
        "a hint long enough to need wrapping: {hint}"
    );
    let rect = h.get_by_label(&hint).rect();
    assert!(
        rect.width() <= 291.0 && rect.height() > 20.0,
        "the hint is one line {rect:?}"
    );
    assert!(rect.max.x <= 1400.0, "past the window: {rect:?}");
}

/// A live switch made in the window is recorded in the running config (so results.json
/// replays it) and shown by the parameters.
#[test]
fn switch_live_is_recorded_in_the_config() {
    let mut h = app(discrete_config());
    h.get_by_label("Switch live").click();
    wait_for(&mut h, "the switch in the running config", |h| {
        matches!(&h.state().snapshot().unwrap().config,
            ScenarioConfig::Denoise(c) if c.schedule_changes.len() == 1)
    });
    let ScenarioConfig::Denoise(c) = &h.state().snapshot().unwrap().config else {
        panic!("denoise")
    };
    assert_eq!(c.schedule_changes[0].from_iteration, 13);
}

/// View > Convergence debugger panel hides the panel and shows it again.
#[test]
fn the_view_menu_hides_the_debugger_panel() {
    let mut h = app(discrete_config());
    assert!(has_text(&h, "residual map of iteration"));
    h.get_by_label("View").click();
    h.run_steps(2);
    h.get_by_label("Convergence debugger panel").click();
    h.run_steps(2);
    assert!(!h.state().state().show_debugger);
    assert!(!has_text(&h, "residual map of iteration"));
}
