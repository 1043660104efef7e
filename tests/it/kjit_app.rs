//! The KJIT room in the explorer window, driven through egui_kittest (AccessKit queries, no
//! GPU): a short Exp. 3 run to the end, read back from the uncertainty trace's caption and the
//! status bar, and the experiment chooser switching to Exp. 1.

use crate::common::*;
use beliefscope::app::App;
use beliefscope::scenarios::ScenarioConfig;
use beliefscope::scenarios::kjit::{Experiment, KjitConfig};
use eframe::egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT as _, Queryable as _};

/// Three small problems: a minibatch of 50, 5000 particles; a run takes about a second.
fn small() -> KjitConfig {
    KjitConfig {
        problems: 3,
        examples: 60,
        test_points: 1000,
        particles: 5000,
        minibatch: 50,
        d_in: 50,
        d_out: 80,
        ..KjitConfig::default()
    }
}

fn app(config: KjitConfig, autoplay: bool) -> Harness<'static, App> {
    Harness::builder()
        .with_size([1360.0, 840.0])
        .build_eframe(move |cc| App::with_config(cc, ScenarioConfig::Kjit(config), autoplay))
}

fn number_after(text: &str, key: &str) -> usize {
    let rest = text
        .split(key)
        .nth(1)
        .unwrap_or_else(|| panic!("{key} in {text}"));
    rest.trim_start()
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .unwrap()
        .parse()
        .unwrap_or_else(|_| panic!("a number after {key} in {text}"))
}

#[test]
fn the_kjit_room_runs_exp3_to_the_end_and_shows_the_trace() {
    let mut harness = app(small(), true);
    wait_for(&mut harness, "the finished run", |h| {
        has_text(h, "problem 3/3")
    });
    assert!(has_text(&harness, "Classification error per problem"));
    let caption = text_containing(&harness, "oracle when ≥ τ = -8.5").unwrap();
    let oracle = number_after(&caption, "-8.5;");
    let calls = number_after(&caption, "oracle calls of");
    // Three problems of 60 examples and 10 sweeps: at most 1800 calls, the first 50 all oracle.
    assert!(calls > 0 && calls <= 1800, "{caption}");
    assert!((50..=calls).contains(&oracle), "{caption}");
    let status = text_containing(&harness, "calls (").unwrap();
    assert!(
        status.contains(&format!("oracle {oracle}/{calls} calls")),
        "{status}"
    );
}

#[test]
fn the_experiment_chooser_switches_to_the_batch_table() {
    let config = KjitConfig {
        experiment: Experiment::Rff,
        ..small()
    };
    let mut harness = app(config, false);
    harness.run_steps(3);
    harness
        .query_all_by_label("Experiment")
        .find(|n| n.accesskit_node().role() != Role::Label)
        .expect("the experiment chooser")
        .click();
    harness.run_steps(3);
    harness
        .get_by_label("Batch operators (Exp. 1, Supp C)")
        .click();
    wait_for(&mut harness, "the batch settings", |h| {
        has_text(h, "Training tuples (Exp. 1)")
    });
    assert!(has_text(&harness, "Five random-feature operators"));
}
