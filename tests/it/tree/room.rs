//! The tree explorer in the window, through egui_kittest (no GPU): the run finishes, a node's
//! belief shows, observing it with the evidence switch and moving its slider update the other
//! nodes live (a control to the worker, not a rebuild), and the draw mode validates the drawing.

use crate::common::*;
use beliefscope::app::App;
use beliefscope::scenarios::tree::{BuiltinData, DataSource, TreeConfig};
use beliefscope::scenarios::{Probe, ScenarioConfig, ScenarioView};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;

fn small_tree() -> ScenarioConfig {
    ScenarioConfig::Tree(TreeConfig {
        data: DataSource::Builtin {
            name: BuiltinData::NongaussChain,
            rows: 300,
            size: None,
            seed: 0,
        },
        samples_per_edge: 60,
        evidence: Default::default(),
        ..TreeConfig::default()
    })
}

/// The evidence of node `i` in the latest snapshot.
fn evidence(harness: &Harness<'_, App>, i: usize) -> Option<Vec<f64>> {
    match &harness.state().snapshot()?.view {
        ScenarioView::Tree(v) => v.nodes[i].observed.clone(),
        _ => None,
    }
}

fn parzen(harness: &Harness<'_, App>, i: usize) -> Vec<f64> {
    match &harness.state().snapshot().unwrap().view {
        ScenarioView::Tree(v) => v.nodes[i]
            .curves
            .as_ref()
            .map(|c| c.parzen.clone())
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

#[test]
fn observing_a_node_updates_the_others_live() {
    let mut harness = Harness::builder()
        .with_size([1400.0, 900.0])
        .build_eframe(|cc| App::with_config(cc, small_tree(), true));
    wait_for(&mut harness, "the finished schedule", |h| {
        h.state().snapshot().is_some_and(|s| s.finished)
    });
    let setup = harness.state().snapshot().unwrap().setup_seconds;
    harness.state_mut().select(Probe::Node(1));
    wait_for(&mut harness, "the belief of x2", |h| {
        has_text(h, "kernel BP mean")
    });
    // Without evidence every belief weight is 1: all 60 samples count.
    assert!(has_text(
        &harness,
        "belief rests on 60 effective samples of 60"
    ));
    let before = parzen(&harness, 0);
    assert!(!before.is_empty());

    harness.get_by_label("Observe x2").click();
    wait_for(&mut harness, "x2 observed", |h| evidence(h, 1).is_some());
    let first = evidence(&harness, 1).unwrap()[0];
    // No rebuild: the scenario is the same one (same set-up time), already finished.
    let s = harness.state().snapshot().unwrap();
    assert_eq!(s.setup_seconds, setup);
    assert!(s.finished);
    wait_for(&mut harness, "x1 changed", |h| parzen(h, 0) != before);

    // The slider moves the evidence (arrow keys on the focused slider).
    harness.get_by_label("Value of x2").focus();
    harness.step();
    for _ in 0..5 {
        harness.key_press(eframe::egui::Key::ArrowRight);
    }
    wait_for(&mut harness, "x2 moved", |h| {
        evidence(h, 1).is_some_and(|v| v[0] > first)
    });
    // The panel lists the evidence; removing it gives the prior back.
    assert!(has_text(&harness, "x2 = "));
    harness.get_by_label("Remove evidence x2").click();
    wait_for(&mut harness, "x2 hidden", |h| evidence(h, 1).is_none());
}

#[test]
fn the_draw_mode_shows_the_running_tree_as_ready() {
    let mut harness = Harness::builder()
        .with_size([1400.0, 900.0])
        .build_eframe(|cc| App::with_config(cc, small_tree(), true));
    wait_for(&mut harness, "the finished schedule", |h| {
        h.state().snapshot().is_some_and(|s| s.finished)
    });
    harness.get_by_label("Draw tree").click();
    wait_for(&mut harness, "the validation line", |h| {
        has_text(h, "a tree over 5 nodes: ready to apply")
    });
    assert!(harness.query_by_label("Apply tree").is_some());
    assert!(harness.query_by_label("Save tree…").is_some());
    harness.get_by_label("Clear").click();
    wait_for(&mut harness, "the empty drawing", |h| {
        has_text(h, "the tree has no nodes")
    });
}

/// Node names of the running tree.
fn running_nodes(harness: &Harness<'_, App>) -> Vec<String> {
    match &harness.state().snapshot().unwrap().view {
        ScenarioView::Tree(v) => v.nodes.iter().map(|n| n.name.clone()).collect(),
        _ => Vec::new(),
    }
}

#[test]
fn an_opened_edge_list_is_read_on_the_worker_and_a_bad_one_keeps_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("star.edges");
    std::fs::write(&good, "x3 - x1\nx3 - x2\nx3 - x4\n").unwrap();
    let cycle = dir.path().join("cycle.edges");
    std::fs::write(&cycle, "x1 - x2\nx2 - x3\nx3 - x1\n").unwrap();
    let mut harness = Harness::builder()
        .with_size([1400.0, 900.0])
        .build_eframe(|cc| App::with_config(cc, small_tree(), true));
    wait_for(&mut harness, "the first run", |h| {
        h.state().snapshot().is_some_and(|s| s.finished)
    });
    assert_eq!(running_nodes(&harness).len(), 5);

    harness.state_mut().open_image(good.clone());
    wait_for(&mut harness, "the star from the file", |h| {
        h.state().snapshot().is_some_and(|s| match &s.view {
            ScenarioView::Tree(v) => v.nodes.len() == 4,
            _ => false,
        })
    });
    let mut names = running_nodes(&harness);
    names.sort();
    assert_eq!(names, ["x1", "x2", "x3", "x4"]);
    // The running config carries the tree itself, not the file.
    let ScenarioConfig::Tree(c) = &harness.state().snapshot().unwrap().config else {
        panic!("not a tree")
    };
    assert!(c.tree_file.is_none() && c.nodes.len() == 4);

    harness.state_mut().open_image(cycle);
    wait_for(&mut harness, "the cycle refused", |h| {
        h.state().notices().iter().any(|n| n.contains("cycle"))
    });
    // The star still runs, and its config is what the panel shows again.
    let mut names = running_nodes(&harness);
    names.sort();
    assert_eq!(names, ["x1", "x2", "x3", "x4"]);
}
