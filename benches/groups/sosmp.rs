//! SOSMP: one synchronous iteration on the default chain (n = 100, 198 directed messages,
//! [-5, 5] at 100 points per unit = 1001 nodes, r = 10, k = 5), for all 10 paths and for one.
//! The state advances from iteration to iteration; the cost per iteration does not depend on t.

use std::sync::Arc;

use criterion::Criterion;

use beliefscope::inference::Inference;
use beliefscope::inference::sosmp::Sosmp;
use beliefscope::scenarios::CancelFlag;
use beliefscope::scenarios::sosmp::{SosmpConfig, build_problem};

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
    group.finish();
}
