//! Tree kernel BP, the explorer's slider path: one evidence value moves and every node's
//! belief is recomputed (messages away from the moved node, read-outs of all 20 nodes on a
//! 200-point grid, Gaussian BP and the reference). m = 500 samples per edge, 20 nodes; target
//! < 50 ms per update. Also the model set-up (factorisations and cross-Grams) once.

use std::collections::BTreeMap;

use criterion::{BenchmarkId, Criterion};

use beliefscope::scenarios::CancelFlag;
use beliefscope::scenarios::tree::{BuiltinData, DataSource, Topology, TreeConfig, TreeScenario};

fn config(name: BuiltinData, topology: Topology, shared: bool) -> TreeConfig {
    TreeConfig {
        data: DataSource::Builtin {
            name,
            rows: 2000,
            size: Some(20),
            seed: 0,
        },
        topology,
        evidence: BTreeMap::from([("x1".to_string(), vec![0.5])]),
        samples_per_edge: 500,
        shared_samples: shared,
        ..TreeConfig::default()
    }
}

pub fn benches(c: &mut Criterion) {
    let cancel = CancelFlag::default();
    let mut group = c.benchmark_group("tree_slider_update_m500_n20");
    group.sample_size(20);
    let cases = [
        (
            "chain-per-edge",
            BuiltinData::NongaussChain,
            Topology::Chain,
            false,
        ),
        (
            "chain-shared",
            BuiltinData::NongaussChain,
            Topology::Chain,
            true,
        ),
        (
            "binary-per-edge",
            BuiltinData::GaussTree,
            Topology::Binary,
            false,
        ),
        (
            "gauss-tree-chowliu-per-edge",
            BuiltinData::GaussTree,
            Topology::ChowLiu,
            false,
        ),
    ];
    for (label, data, topology, shared) in cases {
        let mut s = TreeScenario::new(config(data, topology, shared), &cancel).unwrap();
        s.run_all().unwrap();
        let mut flip = false;
        group.bench_with_input(BenchmarkId::from_parameter(label), &label, |b, _| {
            b.iter(|| {
                flip = !flip;
                let v = if flip { 0.4 } else { 0.6 };
                s.set_evidence(0, Some(vec![v])).unwrap();
            })
        });
    }
    group.finish();

    // The default config on the 1000-row built-ins (every row an edge sample since session
    // 10) beside the old default m = 300: one slider move, and the set-up.
    let mut group = c.benchmark_group("tree_default_1000_rows");
    group.sample_size(20);
    for (label, data) in [
        ("nongauss-chain", BuiltinData::NongaussChain),
        ("gauss-tree", BuiltinData::GaussTree),
    ] {
        for m in [300, TreeConfig::default().samples_per_edge] {
            let config = TreeConfig {
                samples_per_edge: m,
                ..TreeConfig::builtin(data)
            };
            let node = if data == BuiltinData::NongaussChain {
                1
            } else {
                3
            };
            let mut s = TreeScenario::new(config.clone(), &cancel).unwrap();
            s.run_all().unwrap();
            let mut flip = false;
            group.bench_function(format!("slider-{label}-m{m}"), |b| {
                b.iter(|| {
                    flip = !flip;
                    let v = if flip { -0.1 } else { 0.1 };
                    s.set_evidence(node, Some(vec![v])).unwrap();
                })
            });
            group.bench_function(format!("setup-{label}-m{m}"), |b| {
                b.iter(|| TreeScenario::new(config.clone(), &cancel).unwrap())
            });
        }
    }
    group.finish();

    let mut group = c.benchmark_group("tree_setup_m500_n20");
    group.sample_size(10);
    group.bench_function("chain-per-edge", |b| {
        b.iter(|| {
            TreeScenario::new(
                config(BuiltinData::NongaussChain, Topology::Chain, false),
                &cancel,
            )
            .unwrap()
        })
    });
    group.finish();
}
