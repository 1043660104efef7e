//! The predictive-BP room in the window (egui_kittest, no GPU): after learning, clicking an
//! evidence value sends a live control (no relearning) and the query's bars update to what the
//! engine computes for that evidence, exact and PBP alike.

use crate::common::*;
use beliefscope::app::App;
use beliefscope::inference::pbp::PbpModel;
use beliefscope::inference::pbp::features::TrainingData;
use beliefscope::scenarios::pbp::experiment::Problem;
use beliefscope::scenarios::pbp::{MethodAnswer, PbpConfig, load_truth};
use beliefscope::scenarios::{ScenarioConfig, ScenarioView};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;

fn config() -> PbpConfig {
    PbpConfig {
        samples: 3000,
        em_restarts: 1,
        run_online_em: false,
        ..PbpConfig::default()
    }
}

fn answers(harness: &Harness<'_, App>) -> Vec<MethodAnswer> {
    match harness.state().snapshot().map(|s| &s.view) {
        Some(ScenarioView::Pbp(v)) => v.answers.clone(),
        _ => Vec::new(),
    }
}

fn evidence_of(harness: &Harness<'_, App>, node: usize) -> Option<usize> {
    match harness.state().snapshot().map(|s| &s.view) {
        Some(ScenarioView::Pbp(v)) => v.evidence[node],
        _ => None,
    }
}

#[test]
fn clicking_evidence_updates_the_query_live() {
    let c = config();
    let mut harness = Harness::builder()
        .with_size([1400.0, 900.0])
        .build_eframe(|cc| App::with_config(cc, ScenarioConfig::Pbp(config()), true));
    wait_for(&mut harness, "learning to finish", |h| {
        h.state().snapshot().is_some_and(|s| s.finished) && answers(h).len() == 3
    });
    let setup = harness.state().snapshot().unwrap().setup_seconds;
    let before = answers(&harness);

    let (truth, _) = load_truth(&c).unwrap();
    let g = truth.dag.index_of("G").unwrap();
    let d = truth.dag.index_of("D").unwrap();
    harness.get_by_label("G=1").click();
    wait_for(&mut harness, "G observed", |h| evidence_of(h, g) == Some(1));
    wait_for(&mut harness, "the bars to change", |h| answers(h) != before);
    // A live control, not a rebuild.
    assert_eq!(harness.state().snapshot().unwrap().setup_seconds, setup);

    // The engine's own answer for D given G = 1, computed here independently of the window.
    let problem = Problem::new(truth, c.samples, c.seed, d, vec![g]).unwrap();
    let mut ev = vec![None; problem.truth.dag.len()];
    ev[g] = Some(1);
    let (exact, _) = problem.exact.posterior(d, &ev);
    let data = TrainingData::from_samples(&problem.samples);
    let model = PbpModel::learn(&problem.truth.dag, &data, &c.pbp_settings()).unwrap();
    let pbp = model.query(&ev, d).unwrap().dist;
    let shown = answers(&harness);
    assert_eq!(shown[0].name, "exact");
    assert_eq!(shown[1].name, "pbp");
    for (a, b) in shown[0].dist.iter().zip(&exact) {
        assert!(
            (a - b).abs() < 1e-12,
            "exact {:?} vs {exact:?}",
            shown[0].dist
        );
    }
    for (a, b) in shown[1].dist.iter().zip(&pbp) {
        assert!((a - b).abs() < 1e-12, "pbp {:?} vs {pbp:?}", shown[1].dist);
    }
    assert!(has_text(&harness, "P(D | G=1)"));

    // Clearing the evidence brings the unconditioned query back.
    harness.get_by_label("G free").click();
    wait_for(&mut harness, "G cleared", |h| evidence_of(h, g).is_none());
    wait_for(&mut harness, "the bars to return", |h| {
        answers(h).first().map(|a| &a.dist) == before.first().map(|a| &a.dist)
    });
}
