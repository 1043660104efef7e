//! One synchronous discrete-BP iteration on the 100 x 100 sunset for C in {10, 50, 100, 200}
//! (message cost O(C^2)): ordinary BP, and tree-reweighted BP with the grid's edge appearance
//! probability as the denoise scenario runs it; and the tree-reweighted iteration at 1
//! megapixel (1024 x 1024, C = 50); and the node powers of one such iteration at C = 50 (10^4
//! nodes x 50 states, in the 64-node blocks the iteration takes them in).

use criterion::{BenchmarkId, Criterion};

use beliefscope::inference::discrete::DiscreteBp;
use beliefscope::inference::powers::scaled_power_in_place;
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

    let mut group = c.benchmark_group("discrete_bp_trw_iteration_100x100");
    for colors in [10usize, 50] {
        let mut bp = trw(100, colors);
        group.bench_with_input(BenchmarkId::from_parameter(colors), &colors, |b, _| {
            b.iter(|| bp.step().unwrap())
        });
    }
    group.finish();

    let mut group = c.benchmark_group("discrete_bp_trw_iteration_1mp");
    group.sample_size(10);
    let mut bp = trw(1024, 50);
    group.bench_function("50", |b| b.iter(|| bp.step().unwrap()));
    group.finish();

    let block = 64 * 50;
    let products: Vec<f64> = (0..block)
        .map(|i| 1e-9 + (i as f64 * 0.37).sin().abs() * 1e-3)
        .collect();
    let scale = vec![1.0; block];
    let mut values = products.clone();
    c.bench_function("discrete_node_powers_10000x50", |b| {
        b.iter(|| {
            for _ in 0..10_000 / 64 {
                values.copy_from_slice(&products);
                assert!(scaled_power_in_place(&mut values, 0.6, &scale));
            }
        })
    });
}

/// Tree-reweighted discrete BP on the `side x side` sunset with C levels, as denoise runs it.
fn trw(side: usize, colors: usize) -> DiscreteBp {
    let config = DenoiseConfig {
        width: side,
        height: side,
        colors,
        ..DenoiseConfig::default()
    };
    let mrf = DenoiseData::generate(&config)
        .and_then(|d| d.discrete_mrf(config.noise))
        .unwrap();
    DiscreteBp::new(mrf, Schedule::Synchronous, Damping(0.5))
        .unwrap()
        .with_edge_appearance(config.resolved_edge_appearance(side, side))
        .unwrap()
}
