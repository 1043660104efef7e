//! Convergence debugger, engine side: on a frustrated Ising grid (a ±J spin glass, strong
//! couplings) synchronous BP without damping keeps oscillating while residual BP (Elidan et al.
//! 2006) reaches a fixed point; both are measured with the schedule-independent fixed-point
//! residual, and residual BP's marginals are checked against exact enumeration. The
//! oscillation detector flags the synchronous run's messages and none at the fixed point.

use beliefscope::inference::discrete::{DiscreteBp, DiscreteMrf, EdgePotentials};
use beliefscope::inference::{Belief, Damping, Inference, Schedule};
use beliefscope::model::Graph;
use beliefscope::run::residuals::ConvergenceTracker;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A `side x side` Ising spin glass: couplings ±`coupling` at random, fields in ±`field`.
pub fn frustrated_ising(side: usize, coupling: f64, field: f64, seed: u64) -> DiscreteMrf {
    let graph = Graph::grid(side, side).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let node_potentials = (0..graph.num_nodes())
        .flat_map(|_| {
            let h = rng.random_range(-field..field);
            [(-h).exp(), h.exp()]
        })
        .collect();
    let tables = (0..graph.num_edges())
        .map(|_| {
            let j = if rng.random_bool(0.5) {
                coupling
            } else {
                -coupling
            };
            vec![j.exp(), (-j).exp(), (-j).exp(), j.exp()]
        })
        .collect();
    DiscreteMrf {
        graph,
        state_values: vec![-1.0, 1.0],
        node_potentials,
        edge_potentials: EdgePotentials::PerEdge(tables),
    }
}

/// Exact P(x_t = +1) by enumeration.
fn exact_up(mrf: &DiscreteMrf) -> Vec<f64> {
    let n = mrf.graph.num_nodes();
    let EdgePotentials::PerEdge(tables) = &mrf.edge_potentials else {
        unreachable!()
    };
    let (mut up, mut z) = (vec![0.0; n], 0.0);
    for code in 0u64..(1 << n) {
        let x = |t: usize| ((code >> t) & 1) as usize;
        let mut p = 1.0;
        for t in 0..n {
            p *= mrf.node_potentials[t * 2 + x(t)];
        }
        for (e, &(a, b)) in mrf.graph.edges().iter().enumerate() {
            p *= tables[e][x(a) * 2 + x(b)];
        }
        z += p;
        for (t, u) in up.iter_mut().enumerate() {
            if x(t) == 1 {
                *u += p;
            }
        }
    }
    up.iter().map(|u| u / z).collect()
}

struct Outcome {
    fixed_point_residual: f64,
    oscillating_fraction: f64,
    max_oscillating_fraction: f64,
    up: Vec<f64>,
}

fn run(mrf: &DiscreteMrf, schedule: Schedule, damping: f64, iterations: usize) -> Outcome {
    let mut bp = DiscreteBp::new(mrf.clone(), schedule, Damping(damping)).unwrap();
    let mut tracker = ConvergenceTracker::new(0, None);
    let mut last = 0.0;
    let mut max_frac: f64 = 0.0;
    for _ in 0..iterations {
        let report = bp.step().unwrap();
        let stats = tracker.observe(report.iteration, &bp.message_changes().unwrap());
        last = stats.oscillating_fraction;
        max_frac = max_frac.max(last);
    }
    let up = (0..mrf.graph.num_nodes())
        .map(|t| match bp.belief(t) {
            Belief::Discrete { probs, .. } => probs[1],
            other => panic!("{other:?}"),
        })
        .collect();
    Outcome {
        fixed_point_residual: bp.fixed_point_residual(),
        oscillating_fraction: last,
        max_oscillating_fraction: max_frac,
        up,
    }
}

/// J = 1, fields in ±0.3, 4 x 4: seeds where undamped synchronous BP does not settle (found
/// with `explore_frustrated_grids`; seeds 1 and 5 are ones where it does or both struggle).
#[test]
fn residual_bp_converges_where_synchronous_oscillates() {
    for seed in [0, 2, 3, 4] {
        let mrf = frustrated_ising(4, 1.0, 0.3, seed);
        let exact = exact_up(&mrf);
        let err = |up: &[f64]| {
            up.iter()
                .zip(&exact)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max)
        };
        let sync = run(&mrf, Schedule::Synchronous, 0.0, 300);
        let rbp = run(&mrf, Schedule::Residual, 0.0, 300);
        println!(
            "seed {seed}: synchronous fixed-point residual {:.2e}, oscillating {:.2} (max {:.2}), max marginal error {:.3}; residual BP {:.2e}, oscillating {:.2}, error {:.3}",
            sync.fixed_point_residual,
            sync.oscillating_fraction,
            sync.max_oscillating_fraction,
            err(&sync.up),
            rbp.fixed_point_residual,
            rbp.oscillating_fraction,
            err(&rbp.up)
        );
        assert!(
            sync.fixed_point_residual > 0.1,
            "seed {seed}: synchronous settled"
        );
        assert!(
            sync.max_oscillating_fraction > 0.05,
            "seed {seed}: the detector saw no oscillation in the synchronous run"
        );
        assert!(
            rbp.fixed_point_residual < 1e-8,
            "seed {seed}: residual BP did not converge"
        );
        assert_eq!(
            rbp.oscillating_fraction, 0.0,
            "seed {seed}: oscillation flagged at a fixed point"
        );
        // Loopy BP is not exact on a frustrated grid, but its fixed point is far closer to the
        // exact marginals than the synchronous iterate.
        assert!(
            err(&rbp.up) < 0.25 && err(&rbp.up) < err(&sync.up),
            "seed {seed}"
        );
    }
}

/// The detector on a real engine: weakly coupled BP converges and no message is ever flagged;
/// a constructed message flipping between two values is, its geometrically shrinking twin is not.
#[test]
fn detector_flags_a_flipping_message_not_a_converging_one() {
    use beliefscope::run::residuals::{MessageChanges, OscillationDetector};
    let mrf = frustrated_ising(3, 0.5, 0.3, 7);
    let mut bp = DiscreteBp::new(mrf, Schedule::Synchronous, Damping(0.0)).unwrap();
    let mut tracker = ConvergenceTracker::new(0, None);
    for _ in 0..40 {
        let r = bp.step().unwrap();
        let stats = tracker.observe(r.iteration, &bp.message_changes().unwrap());
        assert_eq!(stats.oscillating_fraction, 0.0, "iteration {}", r.iteration);
    }
    assert!(
        bp.fixed_point_residual() < 1e-6,
        "{}",
        bp.fixed_point_residual()
    );
    // A constructed message alternating between (0.3, 0.7) and (0.7, 0.3).
    let mut d = OscillationDetector::new(2);
    let target = [0, 0];
    for k in 0..8 {
        let flip = if k % 2 == 0 { 0.4 } else { -0.4 };
        let converge = 0.4 * 0.5f64.powi(k);
        let changes = [0.8, 0.8];
        let ch = MessageChanges {
            change: &changes,
            signed: &[flip, converge * if k % 2 == 0 { 1.0 } else { -1.0 }],
            target: &target,
        };
        d.observe(ch.signed);
    }
    assert_eq!(d.period_of(0), Some(2));
    assert_eq!(d.period_of(1), None);
    assert_eq!(d.fraction(), 0.5);
}

#[test]
#[ignore = "exploration: prints synchronous vs residual BP over seeds and couplings"]
fn explore_frustrated_grids() {
    for coupling in [0.6, 0.8, 1.0, 1.5] {
        for seed in 0..6 {
            let mrf = frustrated_ising(4, coupling, 0.3, seed);
            let exact = exact_up(&mrf);
            let err = |up: &[f64]| {
                up.iter()
                    .zip(&exact)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f64::max)
            };
            let sync = run(&mrf, Schedule::Synchronous, 0.0, 300);
            let rbp = run(&mrf, Schedule::Residual, 0.0, 300);
            let rnd = run(&mrf, Schedule::Random, 0.0, 300);
            println!(
                "J {coupling} seed {seed}: sync fp {:.2e} osc {:.2} err {:.3} | rbp fp {:.2e} osc {:.2} err {:.3} | random fp {:.2e} err {:.3}",
                sync.fixed_point_residual,
                sync.oscillating_fraction,
                err(&sync.up),
                rbp.fixed_point_residual,
                rbp.oscillating_fraction,
                err(&rbp.up),
                rnd.fixed_point_residual,
                err(&rnd.up),
            );
        }
    }
}

/// `--schedule residual|random` on the denoise CLI: results.json echoes the schedule and has
/// the residual quantiles and oscillating fraction per iteration.
#[test]
fn denoise_cli_schedules_write_convergence_stats() {
    use crate::cli_common::{beliefscope, read_json, stderr};
    let dir = tempfile::tempdir().unwrap();
    for (schedule, algorithm) in [
        ("residual", "discrete"),
        ("random", "kbp"),
        ("residual", "kbp"),
    ] {
        let out = dir.path().join(format!("{schedule}-{algorithm}"));
        let o = beliefscope(&[
            "run",
            "denoise",
            "--width",
            "20",
            "--height",
            "16",
            "--colors",
            "8",
            "--iters",
            "4",
            "--tolerance",
            "0",
            "--no-sure-stop",
            "--algorithm",
            algorithm,
            "--schedule",
            schedule,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let doc = read_json(&out.join("results.json"));
        assert_eq!(doc["config"]["schedule"], schedule);
        let iterations = doc["iterations"].as_array().unwrap();
        assert_eq!(iterations.len(), 4);
        for it in iterations {
            let m = &it["metrics"];
            let (p50, p90, p99) = (
                m["residual_p50"].as_f64().unwrap(),
                m["residual_p90"].as_f64().unwrap(),
                m["residual_p99"].as_f64().unwrap(),
            );
            assert!(0.0 <= p50 && p50 <= p90 && p90 <= p99, "{m}");
            let f = m["oscillating_fraction"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&f));
        }
    }
}

/// A schedule switched live (the debugger's "Switch live") is recorded in the config; the config
/// as results.json echoes it replays the run: the same residuals and quantiles every iteration.
#[test]
fn live_schedule_switches_replay_from_the_echoed_config() {
    use beliefscope::scenarios::denoise::{Denoise, DenoiseAlgorithm, DenoiseConfig};
    use beliefscope::scenarios::{CancelFlag, Scenario, ScenarioConfig};
    for algorithm in [DenoiseAlgorithm::Discrete, DenoiseAlgorithm::Kbp] {
        let config = DenoiseConfig {
            width: 20,
            height: 16,
            colors: 8,
            max_iters: 9,
            tolerance: 0.0,
            damping: 0.0,
            algorithm,
            ..DenoiseConfig::default()
        };
        let cancel = CancelFlag::default();
        let mut live = Denoise::new(config.clone(), &cancel).unwrap();
        let mut records = Vec::new();
        for k in 1..=9 {
            if k == 4 {
                live.set_schedule(Schedule::Residual, 0.3).unwrap();
            }
            if k == 7 {
                live.set_schedule(Schedule::Random, 0.0).unwrap();
            }
            records.push(live.step().unwrap());
        }
        let ScenarioConfig::Denoise(echoed) = live.config() else {
            panic!("a denoise config")
        };
        assert_eq!(
            echoed.schedule,
            beliefscope::scenarios::denoise::schedule_choice::ScheduleChoice::Auto,
            "the starting schedule"
        );
        let changes: Vec<(usize, Schedule, f64)> = echoed
            .schedule_changes
            .iter()
            .map(|c| (c.from_iteration, c.schedule, c.damping))
            .collect();
        assert_eq!(
            changes,
            [(4, Schedule::Residual, 0.3), (7, Schedule::Random, 0.0)]
        );
        // Through JSON, as `run --config results.json` reads it.
        let json = serde_json::to_string(&ScenarioConfig::Denoise(echoed)).unwrap();
        let ScenarioConfig::Denoise(replayed) = serde_json::from_str(&json).unwrap() else {
            panic!("a denoise config")
        };
        let mut replay = Denoise::new(replayed, &cancel).unwrap();
        let mut plain = Denoise::new(config.clone(), &cancel).unwrap();
        let mut differs = false;
        for want in &records {
            let got = replay.step().unwrap();
            assert_eq!(got.iter, want.iter);
            assert_eq!(
                got.residual, want.residual,
                "{algorithm:?}: iteration {}",
                want.iter
            );
            for key in ["residual_p50", "residual_p90", "residual_p99"] {
                assert_eq!(got.metrics.get(key), want.metrics.get(key), "{key}");
            }
            differs |= plain.step().unwrap().residual != want.residual;
        }
        assert!(
            differs,
            "{algorithm:?}: the switches must change the run, else the test shows nothing"
        );
    }
}

/// `--schedule` on the flow and sosmp CLIs: discrete flow BP runs the serial schedules and
/// echoes them; SOSMP (flow's default algorithm, and the sosmp scenario) refuses them and says
/// why.
#[test]
fn flow_and_sosmp_cli_schedules() {
    use crate::cli_common::{beliefscope, read_json, stderr};
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("flow-random");
    let o = beliefscope(&[
        "run",
        "flow",
        "--width",
        "24",
        "--height",
        "20",
        "--levels",
        "1",
        "--iters",
        "3",
        "--algorithm",
        "discrete",
        "--schedule",
        "random",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = read_json(&out.join("results.json"));
    assert_eq!(doc["config"]["schedule"], "random");
    assert_eq!(doc["iterations"].as_array().unwrap().len(), 3);
    for args in [
        &["run", "flow", "--schedule", "residual"][..],
        &["run", "sosmp", "--schedule", "random"][..],
    ] {
        let o = beliefscope(args);
        assert!(!o.status.success(), "{args:?} should be refused");
        let e = stderr(&o);
        assert!(
            e.contains("SOSMP") && e.contains("does not apply"),
            "{args:?}: {e}"
        );
        assert!(!e.contains("panicked"), "{e}");
    }
}
