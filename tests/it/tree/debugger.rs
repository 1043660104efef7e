//! Tree kernel BP on the convergence debugger's canvas: a frame per message pass while a run
//! steps (only the message just computed changes) and per evidence change (only the messages
//! carrying the new evidence away from it change); no schedules, with the reason; in the window
//! a click on a message opens its history.

use std::collections::BTreeMap;

use beliefscope::inference::Schedule;
use beliefscope::scenarios::tree::{BuiltinData, DataSource, Topology, TreeConfig, TreeScenario};
use beliefscope::scenarios::{CancelFlag, Scenario, ScenarioConfig};

/// The chain x1 - x2 - x3 with x3 observed.
fn chain() -> TreeConfig {
    TreeConfig {
        data: DataSource::Builtin {
            name: BuiltinData::GaussTree,
            rows: 600,
            size: Some(3),
            seed: 3,
        },
        topology: Topology::Edges(vec![
            ("x1".to_string(), "x2".to_string()),
            ("x2".to_string(), "x3".to_string()),
        ]),
        evidence: BTreeMap::from([("x3".to_string(), vec![1.0])]),
        samples_per_edge: 80,
        ..TreeConfig::default()
    }
}

#[test]
fn frames_follow_message_passes_and_evidence_changes() {
    let mut s = TreeScenario::new(chain(), &CancelFlag::default()).unwrap();
    let mut steps = 0;
    while !s.finished() {
        s.step().unwrap();
        steps += 1;
    }
    let view = s.convergence().unwrap();
    assert!(
        view.fixed_schedule
            .unwrap()
            .contains("no iterative residual")
    );
    assert_eq!(view.edges.len(), steps, "one frame per message pass");
    for f in &view.edges {
        let changed = f.change().iter().filter(|&&c| c > 0.0).count();
        assert!(changed <= 1, "frame {}: {:?}", f.iteration, f.change());
    }
    let graph = s.engine().model().graph().clone();
    let id = |a: usize, b: usize| graph.message_between(a, b).unwrap();
    let (x1, x2, x3) = (0, 1, 2);
    // Move the evidence: what flows away from x3 changes, what flows into it does not.
    s.set_evidence(x3, Some(vec![-1.0])).unwrap();
    let view = s.convergence().unwrap();
    let last = view.edges.last().unwrap();
    assert_eq!(last.iteration, steps + 1);
    assert!(last.change()[id(x3, x2)] > 1e-3, "{:?}", last.change());
    assert!(last.change()[id(x2, x1)] > 1e-3, "{:?}", last.change());
    assert_eq!(last.change()[id(x1, x2)], 0.0);
    assert_eq!(last.change()[id(x2, x3)], 0.0);
    let e = s
        .set_schedule(Schedule::Residual, 0.0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("no iterative residual"), "{e}");
}

mod window {
    use super::*;
    use crate::common::*;
    use beliefscope::app::App;
    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable as _;

    #[test]
    fn clicking_a_tree_message_shows_its_history() {
        let config = ScenarioConfig::Tree(chain());
        let mut h = Harness::builder()
            .with_size([1400.0, 900.0])
            .build_eframe(move |cc| App::with_config(cc, config, true));
        wait_for(&mut h, "the run to finish", |h| {
            h.state().snapshot().is_some_and(|s| s.finished)
        });
        h.run_steps(2);
        let view = h.state().snapshot().unwrap().convergence.clone().unwrap();
        let graph = view.graph.clone().unwrap();
        assert_eq!(graph.messages.len(), 4);
        let frames = view.edges.len();
        assert!(frames >= 2);
        assert!(has_text(&h, "no iterative residual"), "{:?}", texts(&h));
        h.get_by_label("◀").click();
        h.run_steps(2);
        assert_eq!(
            h.state().debugger().shown_edges().unwrap().iteration,
            frames - 1
        );
        let m = 1;
        click_message(&mut h, &graph, m);
        assert_eq!(h.state().debugger().history_message(), Some(m));
        let [from, to] = graph.messages[m];
        assert!(
            has_text(
                &h,
                &format!("history of message {from} → {to}: {frames} stored iterations")
            ),
            "{:?}",
            texts(&h)
        );
    }
}
