//! A request estimated above a minute asks first, with its estimate: nothing is sent until the
//! user answers, keeping the current run puts the parameters back, and running it loads it.

use beliefscope::scenarios::ScenarioConfig;
use beliefscope::scenarios::denoise::DenoiseConfig;
use beliefscope::scenarios::retrieval::RetrievalConfig;
use egui_kittest::kittest::Queryable as _;

use crate::common::*;

/// A retrieval over a pool of 10⁵ tuples: minutes per repeat by its estimate, instant to set up.
fn long_retrieval() -> ScenarioConfig {
    ScenarioConfig::Retrieval(RetrievalConfig {
        pool: 100_000,
        lengths: vec![2],
        repeats: 1,
        ..RetrievalConfig::default()
    })
}

#[test]
fn a_run_estimated_above_a_minute_asks_first_with_its_estimate() {
    let mut h = window_on(ScenarioConfig::Denoise(DenoiseConfig {
        sure_stop: false,
        ..small_denoise()
    }));
    let need = long_retrieval().time_need().unwrap();
    assert!(need.total() > 60.0, "{need:?}");

    h.state_mut().edit_config(long_retrieval());
    frames(&mut h, 3);
    assert!(h.state().asks_to_confirm());
    assert!(
        has_text(&h, "is estimated at"),
        "the question gives the estimate"
    );
    h.get_by_label("Keep the current run").click();
    frames(&mut h, 3);
    assert!(!h.state().asks_to_confirm());
    assert_eq!(h.state().edited_config().name(), "denoise");
    frames(&mut h, 5);
    assert_eq!(h.state().snapshot().unwrap().config.name(), "denoise");

    h.state_mut().edit_config(long_retrieval());
    frames(&mut h, 3);
    h.get_by_label("Run it").click();
    wait_for(&mut h, "the long run to load", |h| {
        h.state()
            .snapshot()
            .is_some_and(|s| s.config == long_retrieval())
    });
    assert!(!h.state().asks_to_confirm());
    // Closing the window (dropping the harness) interrupts the repeat at its next query.
}

#[test]
fn a_short_run_loads_without_a_question() {
    let mut h = window_on(ScenarioConfig::Denoise(small_denoise()));
    let quick = ScenarioConfig::Retrieval(RetrievalConfig {
        repeats: 1,
        ..RetrievalConfig::default()
    });
    assert!(quick.time_need().unwrap().total() < 60.0);
    h.state_mut().edit_config(quick.clone());
    frames(&mut h, 3);
    assert!(!h.state().asks_to_confirm());
    wait_for(&mut h, "the run to load", |h| {
        h.state().snapshot().is_some_and(|s| s.config == quick)
    });
}

/// A few frames, a little apart. Not `Harness::run`: a running scenario's status line and a
/// set-up's spinner keep asking for repaints, so the UI never "settles" in its sense.
fn frames(h: &mut egui_kittest::Harness<'_, beliefscope::app::App>, n: usize) {
    for _ in 0..n {
        h.step();
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
