//! Helpers shared by the window tests (egui_kittest drives the real `App`; the engine runs on
//! its own thread, so tests step frames until what they wait for appears).

#![allow(dead_code)]

use std::time::{Duration, Instant};

use beliefscope::app::App;
use eframe::egui::accesskit::Role;
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
