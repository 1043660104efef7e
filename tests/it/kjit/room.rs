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

/// Where the uncertainty trace's plot maps the plot point (x, y) on screen.
fn trace_screen_pos(harness: &Harness<'_, App>, y: f64) -> eframe::egui::Pos2 {
    use beliefscope::app::scenarios::kjit::view::TRACE_PLOT_ID;
    let memory = egui_plot::PlotMemory::load(&harness.ctx, eframe::egui::Id::unique(TRACE_PLOT_ID))
        .expect("the trace plot was drawn");
    let transform = memory.transform();
    let x = transform.value_from_position(transform.frame().center()).x;
    transform.position_from_point(&egui_plot::PlotPoint::new(x, y))
}

#[test]
fn dragging_the_tau_line_sets_tau_once_on_release() {
    let mut harness = app(small(), true);
    wait_for(&mut harness, "the finished run", |h| {
        has_text(h, "problem 3/3")
    });
    let tau_changes = |h: &Harness<'_, App>| match &h.state().snapshot().unwrap().config {
        ScenarioConfig::Kjit(c) => c.tau_changes.clone(),
        other => panic!("not kjit: {other:?}"),
    };
    assert!(tau_changes(&harness).is_empty());

    // Grab the line at τ = -8.5 and drop it at -7: the plot does not pan meanwhile.
    let start = trace_screen_pos(&harness, -8.5);
    let target = trace_screen_pos(&harness, -7.0);
    harness.hover_at(start);
    harness.run_steps(2);
    harness.drag_at(start);
    harness.run_steps(2);
    for k in 1..=5 {
        harness.hover_at(start + (target - start) * (k as f32 / 5.0));
        harness.run_steps(1);
    }
    assert!(
        tau_changes(&harness).is_empty(),
        "nothing is sent while the line is dragged"
    );
    // The axes hold still under the pointer (the plot neither pans nor re-fits to the line).
    let during = trace_screen_pos(&harness, -8.5);
    assert!((during.y - start.y).abs() < 1.0, "{during:?} vs {start:?}");
    harness.drop_at(target);
    wait_for(&mut harness, "the new τ", |h| !tau_changes(h).is_empty());
    let changes = tau_changes(&harness);
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert!(
        (changes[0].tau + 7.0).abs() < 0.05,
        "{changes:?}; dragged from {start:?} to {target:?}"
    );
}

#[test]
fn the_random_feature_lab_shows_k_against_k_hat() {
    let config = KjitConfig {
        experiment: Experiment::Rff,
        d_in: 50,
        d_out: 80,
        ..KjitConfig::default()
    };
    let mut harness = app(config, false);
    wait_for(&mut harness, "the lab", |h| has_text(h, "K (exact, eq. 7)"));
    assert!(has_text(&harness, "K̂ (Alg. 1, D_in = 50, D_out = 80)"));
    assert!(text_containing(&harness, "|K − K̂|: mean").is_some());
    assert!(has_text(
        &harness,
        "Supp B.6: ‖K − K̂‖_F / n (300 messages, 5 draws)"
    ));
}
