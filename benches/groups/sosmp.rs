//! SOSMP: one synchronous iteration on the default chain (n = 100, 198 directed messages,
//! [-5, 5] at 100 points per unit = 1001 nodes, r = 10, k = 5), for all 10 paths and for one.
//! The state advances from iteration to iteration; the cost per iteration does not depend on t.
//! Also an iteration and a snapshot of a small chain's scenario 100,000 iterations into its run,
//! with the previous snapshot still held (as the window holds what it shows): what a snapshot
//! costs late in a long run.

use std::sync::Arc;

use criterion::Criterion;

use beliefscope::inference::Inference;
use beliefscope::inference::sosmp::Sosmp;
use beliefscope::scenarios::sosmp::{SosmpConfig, SosmpScenario, build_problem};
use beliefscope::scenarios::{CancelFlag, Scenario};

pub fn benches(c: &mut Criterion) {
    let config = SosmpConfig::default();
    let (problem, _) = build_problem(&config, &CancelFlag::default()).expect("default model");
    let problem = Arc::new(problem);
    let mut group = c.benchmark_group("sosmp");
    for paths in [10, 1] {
        let params = SosmpConfig {
            paths,
            ..config.clone()
        }
        .params();
        let mut engine = Sosmp::new(problem.clone(), params).expect("engine");
        // Start from a warmed-up state so the timed iterations see realistic messages.
        for _ in 0..20 {
            engine.step().expect("step");
        }
        group.bench_function(format!("iteration_chain100_r10_k5_paths{paths}"), |b| {
            b.iter(|| engine.step().expect("step"))
        });
    }
    snapshot_late_in_a_long_run(&mut group);
    group.finish();
}

fn snapshot_late_in_a_long_run(
    group: &mut criterion::BenchmarkGroup<criterion::measurement::WallTime>,
) {
    const DONE: usize = 100_000;
    let config = SosmpConfig {
        nodes: 2,
        coefficients: 2,
        samples: 1,
        points_per_unit: 10.0,
        iters: 10 * DONE,
        ..SosmpConfig::default()
    };
    let mut scenario = SosmpScenario::new(config, &CancelFlag::default()).expect("small chain");
    for _ in 0..DONE {
        scenario.step().expect("step");
    }
    let mut shown = scenario.view(None);
    group.bench_function(format!("step_and_snapshot_after_{DONE}"), |b| {
        b.iter(|| {
            scenario.step().expect("step");
            shown = scenario.view(None);
        })
    });
}
