//! Flow's convergence debugger in the window (egui_kittest): the scrubber spans every pyramid
//! level (coarse first), and scrubbing back to a coarse level's iteration shows that level's
//! map with its level named.

use crate::common::{has_text, wait_for};
use beliefscope::app::App;
use beliefscope::scenarios::ScenarioConfig;
use beliefscope::scenarios::flow::{FlowAlgorithm, FlowConfig};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;

/// Three levels of four iterations each: 24 x 20, 48 x 40, 96 x 80.
fn three_levels() -> FlowConfig {
    FlowConfig {
        width: 96,
        height: 80,
        levels: 3,
        iters: 4,
        stop_change: 0.0,
        variational_iters: 0,
        algorithm: FlowAlgorithm::Discrete,
        ..FlowConfig::default()
    }
}

#[test]
fn scrubbing_back_to_a_coarse_level_shows_that_levels_map() {
    let mut h = Harness::builder()
        .with_size([1360.0, 900.0])
        .build_eframe(|cc| App::with_config(cc, ScenarioConfig::Flow(three_levels()), true));
    wait_for(&mut h, "the finished run", |h| {
        h.state().snapshot().is_some_and(|s| s.finished)
    });
    let view = h.state().snapshot().unwrap().convergence.clone().unwrap();
    let iterations: Vec<usize> = view.maps.iter().map(|m| m.iteration).collect();
    assert_eq!(
        iterations,
        (1..=12).collect::<Vec<_>>(),
        "every level's maps"
    );
    let sizes: Vec<(usize, usize)> = view.maps.iter().map(|m| (m.width, m.height)).collect();
    assert_eq!(sizes[0], (24, 20), "the coarsest level's grid");
    assert_eq!(sizes[4], (48, 40));
    assert_eq!(sizes[11], (96, 80));
    assert_eq!(
        view.grid,
        Some((96, 80)),
        "clicks pick full-resolution pixels"
    );
    let newest = h.state().debugger().shown().unwrap().clone();
    assert_eq!((newest.width, newest.height), (96, 80));
    assert!(has_text(
        &h,
        "residual map of level 3 of 3 (96 x 80), iteration 4"
    ));
    // Back 9 stored iterations: run iteration 3, the coarsest level's third.
    for _ in 0..9 {
        h.get_by_label("◀").click();
        h.run_steps(2);
    }
    let shown = h.state().debugger().shown().unwrap().clone();
    assert_eq!(shown.iteration, 3);
    assert_eq!(
        &shown,
        view.maps[2].as_ref(),
        "the coarse level's stored map"
    );
    assert_eq!((shown.width, shown.height), (24, 20));
    assert!(
        has_text(
            &h,
            "residual map of level 1 of 3 (24 x 20), iteration 3 (run iteration 3"
        ),
        "the label names the level"
    );
    assert!(has_text(&h, "over 3 pyramid levels"));
}

/// "What if" on flow: discrete BP continued from the finest level's messages on a copy, within
/// the level's budget, numbered in the run's iterations and overlaid on the residual curve;
/// a finished flow run gets no automatic what-ifs (its levels stop by flow change, not by a
/// residual tolerance).
#[test]
fn a_what_if_on_flow_overlays_its_curve_from_the_current_level() {
    let mut h = Harness::builder()
        .with_size([1360.0, 900.0])
        .build_eframe(|cc| App::with_config(cc, ScenarioConfig::Flow(three_levels()), true));
    wait_for(&mut h, "the finished run", |h| {
        h.state().snapshot().is_some_and(|s| s.finished)
    });
    h.run_steps(4);
    assert!(
        h.state().debugger().what_ifs.is_empty(),
        "none started alone"
    );
    // Its message residual is shown, not judged against a tolerance the levels never used.
    assert!(has_text(&h, "each pyramid level stops"));
    assert!(!has_text(&h, "not converged"));
    h.get_by_label("What if").click();
    wait_for(&mut h, "the what-if run", |h| {
        h.state().debugger().what_ifs.len() == 1
    });
    let run = h.state().debugger().what_ifs[0].clone();
    assert_eq!(run.start_iteration, 12, "from the run's last iteration");
    assert!(
        !run.residuals.is_empty() && run.residuals.len() <= 4,
        "the level's budget"
    );
    assert_eq!(
        run.residuals[0].0, 13,
        "continues the run's iteration numbers"
    );
    // Its first iteration continues the finest level's messages: the same schedule and damping
    // give the residual the run would have had next, far below a fresh level's first.
    let history = h.state().snapshot().unwrap().history.clone();
    let level_first = history[8].residual;
    assert!(
        run.residuals[0].1 < level_first,
        "{} vs the level's first {level_first}",
        run.residuals[0].1
    );
    assert!(has_text(&h, &run.hint()));
}
