//! The convergence debugger on a graph scenario (egui_kittest): SOSMP's canvas coloured by each
//! message's change with the scrubber over the stored iterations, and a click on a message
//! opening that message's history; headless, the per-iteration residual quantiles and
//! oscillating fraction in results.json.

use crate::common::*;
use beliefscope::app::App;
use beliefscope::scenarios::ScenarioConfig;
use beliefscope::scenarios::sosmp::{GraphKind, SosmpConfig};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;

fn sosmp(graph: GraphKind, nodes: usize, iters: usize) -> SosmpConfig {
    SosmpConfig {
        graph,
        nodes,
        iters,
        paths: 2,
        coefficients: 5,
        points_per_unit: 20.0,
        ..SosmpConfig::default()
    }
}

fn app(config: SosmpConfig) -> Harness<'static, App> {
    let config = ScenarioConfig::Sosmp(config);
    let mut h = Harness::builder()
        .with_size([1400.0, 900.0])
        .build_eframe(move |cc| App::with_config(cc, config, true));
    wait_for(&mut h, "the run to finish", |h| {
        h.state().snapshot().is_some_and(|s| s.finished)
    });
    h.run_steps(2);
    h
}

#[test]
fn scrubbing_recolours_the_graph_with_that_iterations_changes() {
    let mut h = app(sosmp(GraphKind::Chain, 4, 15));
    let view = h.state().snapshot().unwrap().convergence.clone().unwrap();
    let graph = view
        .graph
        .clone()
        .expect("a graph scenario has a graph view");
    assert_eq!(graph.messages.len(), 6, "a chain of 4 has 6 messages");
    assert_eq!(
        view.edges.len(),
        15,
        "every iteration stored in a small run"
    );
    assert!(view.edges.iter().all(|f| f.per_message == 5));
    let newest = h.state().debugger().shown_edges().unwrap().clone();
    assert_eq!(newest.iteration, 15);
    assert!(has_text(&h, "message changes of iteration 15"));
    for _ in 0..4 {
        h.get_by_label("◀").click();
        h.run_steps(2);
    }
    let shown = h.state().debugger().shown_edges().unwrap().clone();
    assert_eq!(shown.iteration, 11);
    assert_eq!(&shown, view.edges[10].as_ref());
    assert_ne!(
        shown.change(),
        newest.change(),
        "another iteration's colours"
    );
    assert!(has_text(&h, "message changes of iteration 11"));
}

#[test]
fn clicking_a_message_plots_its_history() {
    let mut h = app(sosmp(GraphKind::Grid, 9, 12));
    let view = h.state().snapshot().unwrap().convergence.clone().unwrap();
    let graph = view.graph.clone().unwrap();
    assert!(h.state().debugger().history_message().is_none());
    let m = 5;
    click_message(&mut h, &graph, m);
    assert_eq!(h.state().debugger().history_message(), Some(m));
    let [from, to] = graph.messages[m];
    assert!(
        has_text(
            &h,
            &format!("history of message {from} → {to}: 12 stored iterations")
        ),
        "{:?}",
        texts(&h)
    );
    assert!(has_text(&h, "coefficient j over time"));
}

/// Headless, a loopy SOSMP grid writes per-iteration residual quantiles (ordered) and the
/// oscillating fraction into results.json, and a live switch away from its one schedule is
/// refused with the reason.
#[test]
fn sosmp_grid_results_carry_convergence_stats() {
    use crate::cli_common::{beliefscope, read_json, stderr};
    use beliefscope::inference::Schedule;
    use beliefscope::scenarios::{CancelFlag, Scenario};
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("grid");
    let o = beliefscope(&[
        "run",
        "sosmp",
        "--graph",
        "grid",
        "--nodes",
        "9",
        "--iters",
        "12",
        "--paths",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = read_json(&out.join("results.json"));
    let iterations = doc["iterations"].as_array().unwrap();
    assert_eq!(iterations.len(), 12);
    for it in iterations {
        let m = &it["metrics"];
        let q = |k: &str| m[k].as_f64().unwrap_or_else(|| panic!("{k} missing: {m}"));
        assert!(q("residual_p50") <= q("residual_p90") && q("residual_p90") <= q("residual_p99"));
        assert!(q("residual_p99") <= it["residual"].as_f64().unwrap() * 10.0 + 1e-12);
        assert!((0.0..=1.0).contains(&q("oscillating_fraction")));
    }
    let mut s = beliefscope::scenarios::sosmp::SosmpScenario::new(
        sosmp(GraphKind::Grid, 9, 3),
        &CancelFlag::default(),
    )
    .unwrap();
    s.step().unwrap();
    let e = s
        .set_schedule(Schedule::Residual, 0.0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("does not apply"), "{e}");
    assert!(s.set_schedule(Schedule::Synchronous, 0.0).is_ok());
    let view = s.convergence().unwrap();
    assert!(view.fixed_schedule.is_some(), "no what-if runs offered");
    assert_eq!(view.edges.len(), 1);
    assert_eq!(
        view.graph.unwrap().messages.len(),
        24,
        "a 3x3 grid has 24 messages"
    );
}

/// A graph view's debugger panel opens at its taller default and keeps its height frame after
/// frame: it used to lose 5 points a frame (egui sizes a panel to what its content used, and
/// the canvas used a little less than the height left) until a clamp stopped it, so the
/// canvas moved under a click and ended far smaller than the panel's default.
#[test]
fn a_graph_views_debugger_panel_opens_tall_and_keeps_its_height() {
    use beliefscope::app::debugger::GRAPH_PANEL_HEIGHT;
    let mut h = app(sosmp(GraphKind::Grid, 9, 12));
    let first = h.get_by_label("message graph").rect();
    h.run_steps(40);
    let later = h.get_by_label("message graph").rect();
    assert_eq!(first, later, "the canvas moved while nothing changed");
    // The canvas is the panel's height less its margins and the legend below it.
    assert!(
        later.height() > GRAPH_PANEL_HEIGHT - 80.0,
        "canvas {later:?} in a {GRAPH_PANEL_HEIGHT}-point panel"
    );
    // Nothing of it falls outside the window.
    assert!(later.max.y <= 900.0 && later.min.y >= 0.0, "{later:?}");
}
