//! The SOSMP views in the explorer window, driven through egui_kittest (AccessKit queries, no
//! GPU). The engine runs on its own thread, so each test steps the harness until what it waits
//! for appears. No saved window state is read or written (`App::with_config`).

use crate::common::*;
use beliefscope::app::App;
use beliefscope::scenarios::ScenarioConfig;
use beliefscope::scenarios::sosmp::SosmpConfig;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT as _, Queryable as _};

/// A tiny run: 6 nodes, 201 grid points, 2 paths; an iteration takes microseconds.
fn small() -> SosmpConfig {
    SosmpConfig {
        nodes: 6,
        points_per_unit: 20.0,
        paths: 2,
        iters: 60,
        ..SosmpConfig::default()
    }
}

fn app(autoplay: bool) -> Harness<'static, App> {
    Harness::builder()
        .with_size([1360.0, 840.0])
        .build_eframe(move |cc| App::with_config(cc, ScenarioConfig::Sosmp(small()), autoplay))
}

#[test]
fn the_lab_runs_and_inspects_a_message_and_a_node() {
    let mut harness = app(true);
    wait_for(&mut harness, "the error plot", |h| {
        has_text(h, "Normalised error e_t / e_0")
    });
    wait_for(&mut harness, "the finished run", |h| {
        has_text(h, "iteration 60 / 60")
    });
    // The numbers under the plot name the floor and the fitted slope.
    assert!(has_text(&harness, "floor e(a∞)/e_0"));
    assert!(has_text(&harness, "slope of log(mean − floor)"));
    // The distance to a_inf has its own fitted slope once t >= 10 has data: a number, not "–".
    let numbers = crate::common::text_containing(&harness, "(distance to a∞: ").unwrap();
    let after = numbers.split("(distance to a∞: ").nth(1).unwrap();
    assert!(after.starts_with('-'), "{numbers}");
    // Beside the slope, why it is not -1: Theorem 1's bound and this chain's measured gains.
    let why = crate::common::text_containing(&harness, "apart from logarithmic factors").unwrap();
    assert!(
        why.contains("Theorem 1") && why.contains("(5 edges here)"),
        "{why}"
    );
    assert!(why.contains("have median "), "{why}");
    // The error plot starts on eq. 38 (Fig. 5) and names it.
    assert!(has_widget(&harness, "mean of 2 paths (eq. 38)"));

    harness.get_by_label("Inspect message").click();
    wait_for(&mut harness, "the message inspector", |h| {
        has_text(h, "Message 0 → 1")
    });
    assert!(has_text(&harness, "Coefficients a_j"));
    assert!(has_text(&harness, "samples over the sampling density"));

    harness.get_by_label("Inspect node").click();
    wait_for(&mut harness, "the node inspector", |h| {
        has_text(h, "Belief at node 0")
    });
    assert!(has_text(&harness, "Potentials at node 0"));
}

#[test]
fn a_sweep_runs_on_the_worker_and_is_overlaid() {
    let mut harness = app(false);
    wait_for(&mut harness, "the error plot", |h| {
        has_text(h, "Normalised error e_t / e_0")
    });
    let clear = |h: &Harness<'_, App>| {
        h.get_by_label("Clear overlays")
            .accesskit_node()
            .is_disabled()
    };
    assert!(clear(&harness), "nothing to clear before a sweep");
    harness.get_by_label("k ∈ {1, 2, 5, 10}").click();
    // Four runs of 60 iterations; the overlay makes "Clear overlays" available.
    wait_for(&mut harness, "the sweep", |h| !clear(h));
    harness.get_by_label("Clear overlays").click();
    wait_for(&mut harness, "the overlays cleared", |h| clear(h));
}

#[test]
fn an_r_sweep_switches_the_plots_to_l2_and_the_depth_sweep_plots_slopes() {
    let mut harness = app(false);
    wait_for(&mut harness, "the error plot", |h| {
        has_text(h, "Normalised error e_t / e_0 (eq. 38)")
    });
    harness.get_by_label("r ∈ {2, 3, 5, 10}").click();
    // With an r sweep shown, the plots use the L2 error (Fig. 6a, Fig. 8) and say so.
    wait_for(&mut harness, "the r sweep in L2", |h| {
        has_text(h, "Final error against r (Fig. 8)")
    });
    assert!(has_text(&harness, "(L2), log-log"));
    assert!(has_widget(&harness, "r = 2 (L2)"));
    assert!(has_widget(&harness, "final ‖m_T − m*‖² (L2)"));
    harness.get_by_label("depth: n ∈ {2 … 100}").click();
    wait_for(&mut harness, "the depth sweep", |h| {
        has_text(h, "Slope against chain length n")
    });
    assert!(has_widget(&harness, "fitted slope (eq. 38)"));
    assert!(has_widget(&harness, "noise-free iteration"));
}

/// A widget (a plot's legend entry is a check box) whose label contains `part`.
fn has_widget(harness: &Harness<'_, App>, part: &str) -> bool {
    harness.query_all_by_label_contains(part).next().is_some()
}
