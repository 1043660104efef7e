//! Helpers shared by the window tests (egui_kittest drives the real `App`; the engine runs on
//! its own thread, so tests step frames until what they wait for appears).

#![allow(dead_code)]

use std::time::{Duration, Instant};

use beliefscope::app::App;
use beliefscope::app::debugger::graph::CanvasGeometry;
use beliefscope::run::residuals::ConvergenceGraph;
use beliefscope::scenarios::ScenarioConfig;
use beliefscope::scenarios::denoise::DenoiseConfig;
use eframe::egui::{self, accesskit::Role};
use egui_kittest::Harness;
use egui_kittest::kittest::NodeT as _;

/// Generous: the engine shares 2 cores with the test runner.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// Every text shown by a label (egui puts a label's text in its AccessKit value).
pub fn texts(harness: &Harness<'_, App>) -> Vec<String> {
    harness
        .root()
        .children_recursive()
        .filter(|n| n.accesskit_node().role() == Role::Label)
        .filter_map(|n| n.accesskit_node().value())
        .collect()
}

/// The first label text containing `part`.
pub fn text_containing(harness: &Harness<'_, App>, part: &str) -> Option<String> {
    texts(harness).into_iter().find(|t| t.contains(part))
}

pub fn has_text(harness: &Harness<'_, App>, part: &str) -> bool {
    text_containing(harness, part).is_some()
}

/// The window (1360 x 840) on `config`, stepped until the engine's first snapshot is there.
pub fn window_on(config: ScenarioConfig) -> Harness<'static, App> {
    let mut h = Harness::builder()
        .with_size([1360.0, 840.0])
        .build_eframe(move |cc| App::with_config(cc, config, false));
    wait_for(&mut h, "the first snapshot", |h| {
        h.state().snapshot().is_some()
    });
    h
}

/// A denoising run small enough for window tests: 24 x 16 pixels, 8 gray levels, 30
/// iterations, no early settling (tolerance 0).
pub fn small_denoise() -> DenoiseConfig {
    DenoiseConfig {
        width: 24,
        height: 16,
        colors: 8,
        max_iters: 30,
        tolerance: 0.0,
        ..DenoiseConfig::default()
    }
}

/// Runs frames (with short sleeps for the engine thread) until `done` holds.
pub fn wait_for(
    harness: &mut Harness<'_, App>,
    what: &str,
    done: impl Fn(&Harness<'_, App>) -> bool,
) {
    let start = Instant::now();
    loop {
        harness.step();
        if done(harness) {
            // One more frame so everything drawn from the new state is in the tree.
            harness.step();
            return;
        }
        assert!(
            start.elapsed() < TIMEOUT,
            "timed out waiting for {what}; notices: {:?}",
            harness.state().notices()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The rect of the widget labelled `label` once the layout has settled: the same in two
/// frames in a row (panics, naming the rects, if it keeps moving for 10 frames).
pub fn settled_rect(harness: &mut Harness<'_, App>, label: &str) -> egui::Rect {
    use egui_kittest::kittest::Queryable as _;
    let mut rect = harness.get_by_label(label).rect();
    for _ in 0..10 {
        harness.run_steps(1);
        let now = harness.get_by_label(label).rect();
        if now == rect {
            return now;
        }
        rect = now;
    }
    panic!("{label} keeps moving between frames (now {rect:?})");
}

/// Clicks message `m` on the convergence debugger's graph canvas, at the middle of its line
/// as drawn from the canvas's settled rect in this frame (not from constants), and checks the
/// canvas did not move between the press and the release.
pub fn click_message(harness: &mut Harness<'_, App>, graph: &ConvergenceGraph, m: usize) {
    use egui_kittest::kittest::Queryable as _;
    let rect = settled_rect(harness, "message graph");
    let at = CanvasGeometry::new(graph, rect).midpoint(m);
    harness.drag_at(at);
    harness.run_steps(1);
    assert_eq!(
        harness.get_by_label("message graph").rect(),
        rect,
        "the canvas moved under the press"
    );
    harness.drop_at(at);
    harness.run_steps(3);
}
