//! Predictive BP's messages on the convergence debugger's canvas: a frame per exact pass (after
//! learning and after each evidence change), the junction tree's two messages per separator,
//! an evidence change moving some messages and leaving others, and the schedules refused with
//! the reason (PBP does not iterate).

use beliefscope::inference::Schedule;
use beliefscope::scenarios::pbp::{PbpConfig, PbpControl, PbpScenario, PbpView};
use beliefscope::scenarios::{CancelFlag, Registered, Scenario, ScenarioControl};

#[test]
fn pbp_passes_are_frames_and_schedules_are_refused() {
    let config = PbpConfig {
        samples: 2000,
        run_em: false,
        run_online_em: false,
        ..PbpConfig::default()
    };
    let mut s = PbpScenario::new(config, &CancelFlag::default()).unwrap();
    assert!(s.convergence().is_none(), "nothing passed before learning");
    while !s.finished() {
        s.step().unwrap();
    }
    let view = s.convergence().expect("a pass after learning");
    assert!(view.fixed_schedule.unwrap().contains("does not iterate"));
    let graph = view.graph.clone().unwrap();
    let v = s.view(None);
    let pbp = <Box<PbpView>>::of(&v).unwrap();
    let separators = pbp.cliques.iter().filter(|c| c.parent.is_some()).count();
    assert_eq!(graph.messages.len(), 2 * separators);
    assert_eq!(view.edges.len(), 1);
    // Observe a node that has no evidence yet (not the query).
    let node = (0..pbp.nodes.len())
        .find(|&v| pbp.nodes[v].observed && v != pbp.query && pbp.evidence[v].is_none())
        .expect("a free observed node");
    s.control(&ScenarioControl::Pbp(PbpControl::SetEvidence {
        node,
        value: Some(1),
    }))
    .unwrap();
    let view = s.convergence().unwrap();
    assert_eq!(view.edges.len(), 2);
    let last = view.edges.last().unwrap();
    let moved = last.change().iter().filter(|&&c| c > 1e-9).count();
    assert!(moved >= 1, "{:?}", last.change());
    assert!(moved < last.change().len(), "{:?}", last.change());
    let e = s
        .set_schedule(Schedule::Random, 0.0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("does not iterate"), "{e}");
}
