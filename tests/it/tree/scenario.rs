//! The tree scenario end to end: accuracy against the exact Gaussian posterior as m grows,
//! Chow-Liu recovery with HSIC, the live evidence path, and bad input (cycles, unknown
//! columns, evidence outside the data range, zero-variance columns, broken CSV files).

use std::collections::BTreeMap;

use beliefscope::scenarios::tree::{
    BuiltinData, DataSource, NodeSpec, Topology, TreeConfig, TreeControl, TreeScenario, builtin,
};
use beliefscope::scenarios::{CancelFlag, Scenario, ScenarioControl};

fn gauss_chain_config(m: usize, seed: u64) -> TreeConfig {
    // A 3-node linear-Gaussian tree is a chain; infer on the generating tree.
    let b = builtin::generate(BuiltinData::GaussTree, 3, 2, 0).unwrap();
    let names: Vec<String> = b.nodes.iter().map(|n| n.name.clone()).collect();
    let edges = b
        .true_edges
        .iter()
        .map(|&(a, c)| (names[a].clone(), names[c].clone()))
        .collect();
    let mut config = TreeConfig {
        data: DataSource::Builtin {
            name: BuiltinData::GaussTree,
            rows: 4000,
            size: Some(3),
            seed,
        },
        topology: Topology::Edges(edges),
        evidence: BTreeMap::from([("x3".to_string(), vec![1.5])]),
        samples_per_edge: m,
        sample_seed: seed,
        ..TreeConfig::default()
    };
    // λ in Gram-diagonal form grows like √m so the regularisation shrinks relative to the
    // Gram matrix (whose eigenvalues grow like m), but slower than 1/m.
    config.kernel.lambda = 0.15 * (m as f64).sqrt();
    config.kernel.multiplier = 0.25;
    config.kernel.rule = beliefscope::inference::tree_kbp::BandwidthRule::Median;
    config
}

#[test]
fn posterior_mean_error_falls_as_m_grows() {
    let cancel = CancelFlag::default();
    let repeats = 8;
    let mut errors = Vec::new();
    for m in [100, 200, 400, 800] {
        let mut total = 0.0;
        let mut l1 = 0.0;
        for r in 0..repeats {
            let mut s = TreeScenario::new(gauss_chain_config(m, 100 + r), &cancel).unwrap();
            s.run_all().unwrap();
            let e = s.mean_errors().unwrap();
            total += e.mean_error;
            l1 += e.l1_parzen;
        }
        errors.push(total / repeats as f64);
        eprintln!(
            "m {m}: mean |posterior mean error| {:.4}, L1 {:.4}",
            total / repeats as f64,
            l1 / repeats as f64
        );
    }
    for w in errors.windows(2) {
        assert!(
            w[1] < w[0],
            "errors over m = 100, 200, 400, 800: {errors:?}"
        );
    }
}

#[test]
fn chow_liu_with_hsic_recovers_the_generating_tree() {
    let config = TreeConfig {
        data: DataSource::Builtin {
            name: BuiltinData::GaussTree,
            rows: 2000,
            size: None,
            seed: 4,
        },
        topology: Topology::ChowLiu,
        evidence: BTreeMap::new(),
        samples_per_edge: 50,
        chow_liu_rows: 500,
        ..TreeConfig::default()
    };
    let s = TreeScenario::new(config, &CancelFlag::default()).unwrap();
    let p = s.problem();
    let norm = |v: &[(usize, usize)]| {
        let mut e: Vec<_> = v.iter().map(|&(a, b)| (a.min(b), a.max(b))).collect();
        e.sort_unstable();
        e
    };
    let truth = p.true_edges.clone().unwrap();
    assert_eq!(truth.len(), 7);
    assert_eq!(norm(p.graph.edges()), norm(&truth), "HSIC {:?}", p.hsic);
    // results.json says so too.
    let extra = s.extra_results();
    assert_eq!(extra["tree"]["matches_true_tree"], true);
    assert_eq!(extra["tree"]["hsic"].as_array().unwrap().len(), 8);
}

fn build(config: TreeConfig) -> Result<TreeScenario, String> {
    TreeScenario::new(config, &CancelFlag::default()).map_err(|e| e.to_string())
}

#[test]
fn bad_input_is_refused_with_the_offending_edge_or_column() {
    let base = TreeConfig {
        samples_per_edge: 40,
        data: DataSource::Builtin {
            name: BuiltinData::NongaussChain,
            rows: 200,
            size: None,
            seed: 0,
        },
        ..TreeConfig::default()
    };
    // A cycle: the edge that closes it is named.
    let e = |a: &str, b: &str| (a.to_string(), b.to_string());
    let cyc = TreeConfig {
        topology: Topology::Edges(vec![
            e("x1", "x2"),
            e("x2", "x3"),
            e("x3", "x1"),
            e("x3", "x4"),
            e("x4", "x5"),
        ]),
        ..base.clone()
    };
    let err = build(cyc).err().unwrap();
    assert!(err.contains("x3 - x1") && err.contains("cycle"), "{err}");
    // Disconnected.
    let disc = TreeConfig {
        topology: Topology::Edges(vec![e("x1", "x2"), e("x3", "x4"), e("x4", "x5")]),
        ..base.clone()
    };
    let err = build(disc).err().unwrap();
    assert!(err.contains("x3") && err.contains("not connected"), "{err}");
    // An unknown column, named with its node.
    let unknown = TreeConfig {
        nodes: vec![
            NodeSpec {
                name: "a".into(),
                columns: vec!["x1".into()],
            },
            NodeSpec {
                name: "b".into(),
                columns: vec!["x2".into(), "nope".into()],
            },
        ],
        evidence: BTreeMap::new(),
        ..base.clone()
    };
    let err = build(unknown).err().unwrap();
    assert!(
        err.contains("'nope'") && err.contains("'b'") && err.contains("x5"),
        "{err}"
    );
    // An unknown evidence node.
    let ev = TreeConfig {
        evidence: BTreeMap::from([("x9".to_string(), vec![0.0])]),
        ..base.clone()
    };
    let err = build(ev).err().unwrap();
    assert!(err.contains("'x9'"), "{err}");
    // Evidence outside the data range: allowed, but warned.
    let far = TreeConfig {
        evidence: BTreeMap::from([("x2".to_string(), vec![2.4])]),
        ..base.clone()
    };
    let mut s = build(far).unwrap();
    let w = s.warnings().join("\n");
    assert!(
        w.contains("'x2'") && w.contains("outside the data range"),
        "{w}"
    );
    s.run_all().unwrap();
    assert!(s.beliefs()[0].parzen.iter().all(|v| v.is_finite()));
    // Moving it back inside clears the warning.
    s.control(&ScenarioControl::Tree(TreeControl::SetEvidence {
        node: 1,
        value: Some(vec![0.1]),
    }))
    .unwrap();
    assert!(s.warnings().is_empty(), "{:?}", s.warnings());
    // Wrong dimension.
    let err = s
        .control(&ScenarioControl::Tree(TreeControl::SetEvidence {
            node: 1,
            value: Some(vec![0.1, 0.2]),
        }))
        .unwrap_err()
        .to_string();
    assert!(err.contains("'x2'") && err.contains("2 value"), "{err}");
}

#[test]
fn broken_and_constant_csv_files_name_the_line_or_column() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.csv");
    let csv_config = |p: &std::path::Path| TreeConfig {
        data: DataSource::Csv {
            path: p.to_path_buf(),
        },
        evidence: BTreeMap::new(),
        samples_per_edge: 10,
        ..TreeConfig::default()
    };
    let mut rows = String::from("a,b,c\n");
    for i in 0..30 {
        rows.push_str(&format!(
            "{},{},{}\n",
            i as f64 * 0.1,
            (i as f64).sin(),
            7.0
        ));
    }
    std::fs::write(&path, &rows).unwrap();
    let err = build(csv_config(&path)).err().unwrap();
    assert!(
        err.contains("'c'") && err.contains("zero variance"),
        "{err}"
    );
    std::fs::write(&path, rows.replacen(",7\n", ",x7\n", 1)).unwrap();
    let err = build(csv_config(&path)).err().unwrap();
    assert!(err.contains("line 2") && err.contains("'x7'"), "{err}");
    std::fs::write(&path, rows.replacen(",7\n", "\n", 1)).unwrap();
    let err = build(csv_config(&path)).err().unwrap();
    assert!(err.contains("line 2") && err.contains("2 fields"), "{err}");
    // Drop the constant column through the node list: now it runs.
    let ok = TreeConfig {
        nodes: vec![
            NodeSpec {
                name: "a".into(),
                columns: vec!["a".into()],
            },
            NodeSpec {
                name: "b".into(),
                columns: vec!["b".into()],
            },
        ],
        evidence: BTreeMap::from([("a".to_string(), vec![1.0])]),
        ..csv_config(&path)
    };
    std::fs::write(&path, &rows).unwrap();
    let mut s = build(ok).unwrap();
    s.run_all().unwrap();
    assert!(s.curves(1).unwrap().reference.is_none());
}

#[test]
fn the_slider_path_updates_every_hidden_node() {
    let mut s = build(TreeConfig {
        samples_per_edge: 100,
        ..TreeConfig::builtin(BuiltinData::NongaussChain)
    })
    .unwrap();
    while !s.finished() {
        s.step().unwrap();
    }
    assert_eq!(s.history().len(), 8);
    let before: Vec<Vec<f64>> = (0..5)
        .map(|t| s.curves(t).map(|c| c.parzen).unwrap_or_default())
        .collect();
    s.control(&ScenarioControl::Tree(TreeControl::SetEvidence {
        node: 1,
        value: Some(vec![0.8]),
    }))
    .unwrap();
    assert!(s.finished());
    for t in [0, 2, 3, 4] {
        let after = s.curves(t).unwrap().parzen;
        let diff: f64 = after
            .iter()
            .zip(&before[t])
            .map(|(a, b)| (a - b).abs())
            .sum();
        assert!(diff > 1e-3, "node {t} did not change");
    }
    // The reference follows the evidence too: x3 given x2 = 0.8 has mean sin(1.6).
    let r = s.reference(2).unwrap();
    assert!((r.mean - 1.6f64.sin()).abs() < 1e-3, "{}", r.mean);
    // The view carries what the explorer draws.
    let beliefscope::scenarios::ScenarioView::Tree(v) =
        s.view(Some(beliefscope::scenarios::Probe::Message(
            s.engine().model().graph().message_between(1, 2).unwrap(),
        )))
    else {
        panic!("not a tree view")
    };
    assert_eq!(v.nodes.len(), 5);
    assert_eq!(v.nodes[1].observed, Some(vec![0.8]));
    let insp = v.inspector.as_ref().unwrap();
    assert_eq!(insp.weights.len(), 100);
    assert_eq!(insp.positions.len(), 100);
    assert!(v.nodes[0].kernel.median > 0.0);
    assert!(v.nodes[2].curves.as_ref().unwrap().reference.is_some());
    // Re-rooting keeps the beliefs.
    let b0 = s.curves(4).unwrap().parzen;
    s.control(&ScenarioControl::Tree(TreeControl::SetRoot(4)))
        .unwrap();
    s.control(&ScenarioControl::Tree(TreeControl::RunAll))
        .unwrap();
    assert_eq!(s.curves(4).unwrap().parzen, b0);
    // Clearing the evidence gives the prior back.
    s.control(&ScenarioControl::Tree(TreeControl::ClearEvidence))
        .unwrap();
    assert!(s.engine().evidence().iter().all(|e| e.is_none()));
}

/// Latency of the slider path at a large size (m = 500 per edge, 20 nodes). A timing, not
/// a gate (the machine is shared): `cargo test --release --test it tree::scenario -- --ignored
/// --nocapture`.
#[test]
#[ignore = "timing; run with --ignored --nocapture"]
fn slider_latency_m500_n20() {
    for (name, topology, shared) in [
        (BuiltinData::NongaussChain, Topology::Chain, false),
        (BuiltinData::NongaussChain, Topology::Chain, true),
        (BuiltinData::GaussTree, Topology::Binary, false),
        (BuiltinData::GaussTree, Topology::Star, false),
    ] {
        let label = format!("{} {} shared={shared}", name.label(), topology.label());
        let config = TreeConfig {
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
        };
        let t = std::time::Instant::now();
        let mut s = TreeScenario::new(config, &CancelFlag::default()).unwrap();
        let setup = t.elapsed().as_secs_f64();
        s.run_all().unwrap();
        let mut times = Vec::new();
        let mut parts: BTreeMap<String, f64> = BTreeMap::new();
        for k in 0..21 {
            let node = if k % 3 == 0 { 0 } else { 7 };
            s.set_evidence(node, Some(vec![0.3 + 0.02 * k as f64]))
                .unwrap();
            times.push(s.query_seconds());
            for (p, v) in s.query_timings() {
                *parts.entry(p.clone()).or_default() += v / 21.0;
            }
        }
        times.sort_by(f64::total_cmp);
        let parts: Vec<String> = parts
            .iter()
            .map(|(k, v)| format!("{k} {:.1} ms", v * 1e3))
            .collect();
        eprintln!(
            "{label}: set-up {setup:.2} s; update median {:.1} ms, max {:.1} ms ({})",
            times[10] * 1e3,
            times[20] * 1e3,
            parts.join(", ")
        );
    }
}

/// `x1 ~ N(0, 1.5²)`, `x2 = x1² + N(0, 0.6²)`; rows in a CSV with header `x1,x2`.
fn squared_chain_csv(path: &std::path::Path, rows: usize, seed: u64) {
    use rand::SeedableRng;
    use rand_distr::{Distribution, StandardNormal};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut text = String::from("x1,x2\n");
    for _ in 0..rows {
        let z1: f64 = StandardNormal.sample(&mut rng);
        let z2: f64 = StandardNormal.sample(&mut rng);
        let x1 = 1.5 * z1;
        text.push_str(&format!("{x1},{}\n", x1 * x1 + 0.6 * z2));
    }
    std::fs::write(path, text).unwrap();
}

/// L1 distance between the Parzen belief of `x1` given `x2 = 4` and the exact posterior
/// `p(x1 | x2 = 4) ∝ N(x1; 0, 1.5²) N(4; x1², 0.6²)`: two modes near ±2 with std about 0.15.
fn squared_chain_l1(
    kernel: beliefscope::inference::tree_kbp::NodeKernelSettings,
    seed: u64,
) -> f64 {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sq.csv");
    squared_chain_csv(&path, 1000, seed);
    let config = TreeConfig {
        data: DataSource::Csv { path },
        topology: Topology::Chain,
        evidence: BTreeMap::from([("x2".to_string(), vec![4.0])]),
        sample_seed: seed,
        kernel,
        ..TreeConfig::default()
    };
    let mut s = build(config).unwrap();
    s.run_all().unwrap();
    let c = s.curves(0).unwrap();
    let xs = &c.xs;
    let dx = xs[1] - xs[0];
    let exact: Vec<f64> = xs
        .iter()
        .map(|&x| (-x * x / (2.0 * 2.25) - (4.0 - x * x).powi(2) / (2.0 * 0.36)).exp())
        .collect();
    let z: f64 = exact.iter().sum::<f64>() * dx;
    // The exact posterior must lie inside the grid for the distance to mean anything.
    assert!(exact[0] / z < 1e-6 && exact[xs.len() - 1] / z < 1e-6);
    c.parzen
        .iter()
        .zip(&exact)
        .map(|(p, e)| (p - e / z).abs())
        .sum::<f64>()
        * dx
}

#[test]
fn the_default_bandwidth_does_not_over_smooth_a_bimodal_posterior() {
    use beliefscope::inference::tree_kbp::{BandwidthRule, NodeKernelSettings};
    let default = NodeKernelSettings::default();
    let median = NodeKernelSettings {
        rule: BandwidthRule::Median,
        ..default
    };
    for seed in 0..3 {
        let l1_default = squared_chain_l1(default, seed);
        let l1_median = squared_chain_l1(median, seed);
        let l1_median1 = squared_chain_l1(
            NodeKernelSettings {
                multiplier: 1.0,
                ..median
            },
            seed,
        );
        eprintln!(
            "seed {seed}: L1 default (loo-cv) {l1_default:.3}, median x 0.35 {l1_median:.3}, median x 1 {l1_median1:.3}"
        );
        // At m = 300 measured 0.51 / 0.81 / 1.39 on seed 0 (README); the median rule (x 0.35)
        // is above 0.6 on every seed. At the default m (every one of the 1000 rows an edge
        // sample) `tree_bimodal.rs` asserts L1 < 0.35 on eight seeds.
        assert!(
            l1_default < 0.65 && l1_default < 0.8 * l1_median,
            "seed {seed}: L1 {l1_default} (median x 0.35: {l1_median})"
        );
    }
}

/// On a table with fewer rows than the samples per edge asked for, every edge uses every row;
/// the window's header and results.json say how many, whether m was typed or the default
/// (which asks for more than a small table has on purpose), and only a typed m is warned.
#[test]
fn every_row_is_an_edge_sample_when_the_table_is_smaller_than_m() {
    let cancel = CancelFlag::default();
    let small = |m: usize| TreeConfig {
        data: DataSource::Builtin {
            name: BuiltinData::NongaussChain,
            rows: 300,
            size: None,
            seed: 0,
        },
        samples_per_edge: m,
        ..TreeConfig::default()
    };
    for (m, warned) in [(TreeConfig::default().samples_per_edge, false), (500, true)] {
        let s = TreeScenario::new(small(m), &cancel).unwrap();
        let beliefscope::scenarios::ScenarioView::Tree(v) = s.view(None) else {
            panic!("not a tree view")
        };
        assert_eq!(v.samples_per_edge, 300, "m = {m}");
        let samples = &s.extra_results()["samples"];
        assert_eq!(samples["per_edge"], 300, "m = {m}: {samples}");
        assert_eq!(samples["rows"], 300, "m = {m}: {samples}");
        let warning = s.warnings().iter().any(|w| w.contains("> 300 rows"));
        assert_eq!(warning, warned, "m = {m}: {:?}", s.warnings());
    }
}
