//! One synchronous discrete-BP iteration on the 100 x 100 sunset for C in {10, 50, 100, 200}
//! (message cost O(C^2); target: C = 50 in at most 50 ms on 2 cores).

use criterion::{BenchmarkId, Criterion};

use beliefscope::inference::discrete::DiscreteBp;
use beliefscope::inference::{Damping, Inference, Schedule};
use beliefscope::scenarios::denoise::{DenoiseConfig, DenoiseData};

pub fn benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("discrete_bp_iteration_100x100");
    for colors in [10usize, 50, 100, 200] {
        let config = DenoiseConfig {
            colors,
            ..DenoiseConfig::default()
        };
        let mrf = DenoiseData::generate(&config)
            .and_then(|d| d.discrete_mrf(config.noise))
            .unwrap();
        let mut bp = DiscreteBp::new(mrf, Schedule::Synchronous, Damping(0.5)).unwrap();
        group.bench_with_input(BenchmarkId::from_parameter(colors), &colors, |b, _| {
            b.iter(|| bp.step().unwrap())
        });
    }
    group.finish();
}
