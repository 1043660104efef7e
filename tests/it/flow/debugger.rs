//! Flow's convergence debugger (the residual map recorded by discrete BP's
//! update, live schedule switching echoed and replayed, SOSMP's refusal) and the variational
//! refinement of the finest level (accuracy).

use beliefscope::inference::flow_variational::{VariationalParams, refine_flow};
use beliefscope::inference::{Inference, Schedule};
use beliefscope::scenarios::flow::{FlowAlgorithm, FlowConfig, FlowEngine, FlowScenario};
use beliefscope::scenarios::{CancelFlag, Scenario, ScenarioConfig};

fn discrete(width: usize, iters: usize) -> FlowConfig {
    FlowConfig {
        width,
        height: width,
        algorithm: FlowAlgorithm::Discrete,
        iters,
        stop_change: 0.0,
        ..FlowConfig::default()
    }
}

fn run_to_end(s: &mut FlowScenario) -> Vec<f64> {
    let mut epe = Vec::new();
    while !s.finished() {
        let r = s.step().unwrap();
        epe.push(r.metrics["epe"]);
    }
    epe
}

#[test]
fn variational_refinement_lowers_the_epe_of_discrete_bp_on_the_built_in_pair() {
    let off = FlowConfig {
        variational_iters: 0,
        ..discrete(64, 15)
    };
    let mut plain = FlowScenario::new(off, &CancelFlag::default()).unwrap();
    run_to_end(&mut plain);
    let before = plain.runs()[0].errors().unwrap().epe;
    assert!(plain.runs()[0].refinement().is_none());

    let mut refined = FlowScenario::new(discrete(64, 15), &CancelFlag::default()).unwrap();
    let history = run_to_end(&mut refined);
    let run = &refined.runs()[0];
    let after = run.errors().unwrap().epe;
    let info = run
        .refinement()
        .expect("the default refines the finest level");
    // It started from exactly the message-passing flow of the unrefined run.
    assert_eq!(info.errors_before.unwrap().epe, before);
    // The label lattice's 1/2 px quantisation and the Gaussian smoothness leave sub-pixel
    // error that the continuous refinement removes.
    eprintln!("built-in pair, discrete BP: EPE {before} -> {after}");
    assert!(after < 0.5 * before, "before {before}, after {after}");
    // The last iteration's record shows the refined flow.
    assert_eq!(*history.last().unwrap(), after);
}

#[test]
fn refinement_of_the_exact_flow_stays_near_it() {
    // Started at the ground truth of the built-in pair, the refinement must not wander off
    // (far below the 1/2 px label step; OpenCV's VariationalRefinement drifts 0.079 px on a
    // similar rotating pair: the Charbonnier smoothness flattens an affine flow a little).
    let config = FlowConfig {
        width: 64,
        height: 64,
        ..FlowConfig::default()
    };
    let data = beliefscope::scenarios::flow::FlowData::load(&config).unwrap();
    let gt = data.ground_truth.clone().unwrap();
    let (mut u, mut v) = (gt.u.clone(), gt.v.clone());
    refine_flow(
        &data.frame1,
        &data.frame2,
        &mut u,
        &mut v,
        &VariationalParams::default(),
        &CancelFlag::default(),
    )
    .unwrap();
    // Inside a 4 px margin: pixels whose motion leaves the frame have only the replicated
    // border to match, so no method is near the truth there.
    let (w, h) = (gt.width, gt.height);
    let inner: Vec<usize> = (0..w * h)
        .filter(|&i| (4..w - 4).contains(&(i % w)) && (4..h - 4).contains(&(i / w)))
        .collect();
    let epe: f64 = inner
        .iter()
        .map(|&i| (u[i] - gt.u[i]).hypot(v[i] - gt.v[i]))
        .sum::<f64>()
        / inner.len() as f64;
    eprintln!("epe from the exact flow: {epe}");
    assert!(epe < 0.075, "{epe}");
}

#[test]
fn residual_map_is_recorded_by_the_update_and_matches_the_engine_residual() {
    let mut s = FlowScenario::new(discrete(48, 4), &CancelFlag::default()).unwrap();
    while !s.finished() {
        let record = s.step().unwrap();
        let run = &s.runs()[0];
        let FlowEngine::Discrete(bp) = run.engine() else {
            panic!("discrete BP runs")
        };
        let changes = bp.message_changes().expect("recorded at every iteration");
        // The mean of the recorded changes is the residual the engine reports, and their
        // largest is its max_change: the record is the update's own numbers.
        let mean = changes.change.iter().sum::<f64>() / changes.change.len() as f64;
        assert!((mean - record.residual).abs() <= 1e-12 * mean.max(1.0));
        let largest = changes.change.iter().cloned().fold(0.0, f64::max);
        assert_eq!(largest, bp.max_change());
        // The debugger's map: the level's grid, the newest iteration, its largest cell the
        // largest change.
        let view = s
            .convergence()
            .expect("discrete flow has a convergence view");
        // (Clicks on any level's map pick full-resolution pixels.)
        assert_eq!(view.grid, Some(s.size()));
        let map = view.maps.last().unwrap();
        assert_eq!(map.iteration, record.iter);
        assert_eq!((map.width, map.height), s.pyramid().size(run.level()));
        let span = beliefscope::run::level_maps::span_of(&view.levels, map.iteration).unwrap();
        assert_eq!(span.index, run.level());
        let top = map.residual.iter().cloned().fold(0.0f32, f32::max);
        assert_eq!(top, largest as f32);
        for key in [
            "residual_p50",
            "residual_p90",
            "residual_p99",
            "oscillating_fraction",
        ] {
            assert!(record.metrics.contains_key(key), "{key}");
        }
    }
}

#[test]
fn a_live_schedule_switch_is_echoed_and_replays_exactly() {
    let mut live = FlowScenario::new(discrete(40, 5), &CancelFlag::default()).unwrap();
    let mut epe = Vec::new();
    let mut residual = Vec::new();
    while !live.finished() {
        if live.log().history().len() == 3 {
            live.set_schedule(Schedule::Residual, 0.3).unwrap();
        }
        let r = live.step().unwrap();
        epe.push(r.metrics["epe"]);
        residual.push(r.residual);
    }
    let ScenarioConfig::Flow(echo) = live.config() else {
        panic!("a flow config")
    };
    assert_eq!(echo.schedule_changes.len(), 1);
    assert_eq!(echo.schedule_changes[0].from_iteration, 4);
    assert_eq!(echo.schedule_changes[0].schedule, Schedule::Residual);
    // The switch holds on the levels set up after it.
    let view = live.convergence().unwrap();
    assert_eq!(view.schedule, Schedule::Residual.label());
    assert_eq!(view.damping, 0.3);

    let mut replay = FlowScenario::new(echo, &CancelFlag::default()).unwrap();
    let mut replay_residual = Vec::new();
    let replay_epe: Vec<f64> = std::iter::from_fn(|| {
        (!replay.finished()).then(|| {
            let r = replay.step().unwrap();
            replay_residual.push(r.residual);
            r.metrics["epe"]
        })
    })
    .collect();
    assert_eq!(replay_epe, epe);
    assert_eq!(replay_residual, residual);

    // And it changed the run: without it the residuals differ from iteration 4 on.
    let mut plain = FlowScenario::new(discrete(40, 5), &CancelFlag::default()).unwrap();
    let mut plain_residual = Vec::new();
    while !plain.finished() {
        plain_residual.push(plain.step().unwrap().residual);
    }
    assert_eq!(plain_residual[..3], residual[..3]);
    assert_ne!(plain_residual[3], residual[3]);
}

#[test]
fn sosmp_flow_refuses_a_schedule_switch_with_its_reason() {
    let config = FlowConfig {
        width: 32,
        height: 32,
        ..FlowConfig::default()
    };
    let mut s = FlowScenario::new(config, &CancelFlag::default()).unwrap();
    s.step().unwrap();
    let err = s
        .set_schedule(Schedule::Residual, 0.0)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("SOSMP") && err.contains("synchronous"),
        "{err}"
    );
    let err = s
        .set_schedule(Schedule::Synchronous, 0.5)
        .unwrap_err()
        .to_string();
    assert!(err.contains("damping"), "{err}");
    assert!(s.convergence().is_none());
    let ScenarioConfig::Flow(echo) = s.config() else {
        panic!("a flow config")
    };
    assert!(echo.schedule_changes.is_empty());
}
