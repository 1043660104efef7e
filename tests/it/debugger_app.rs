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
    let maps = h.state().snapshot().unwrap().convergence.clone().unwrap().maps;
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
    assert_eq!(&shown, maps[8].as_ref(), "the stored map of iteration 9 is drawn");
    assert_ne!(shown.residual, newest.residual);
    assert!(has_text(&h, "residual map of iteration 9"));
}
