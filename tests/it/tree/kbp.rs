//! Tree kernel BP (Song et al. 2010, Algorithm 1) against closed forms: the delta-kernel
//! counting formulas on small alphabets with unequal samples per edge, the two-node weights,
//! and invariances (root, incremental updates, stored vs recomputed cross-Grams).

use std::sync::Arc;

use nalgebra::{DMatrix, DVector};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use beliefscope::inference::kbp::Bandwidth;
use beliefscope::inference::tree_kbp::{
    KernelKind, Message, NodeKernelSettings, ResolvedKernel, TreeKbp, TreeKbpInput, TreeKbpModel,
    TreeKbpOptions, resolve_kernel,
};
use beliefscope::kernel::{Kernel, Points, cross_gram, gram, kernel_column};
use beliefscope::model::Graph;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1.0)
}

fn delta_kernel(lambda: f64) -> ResolvedKernel {
    ResolvedKernel {
        settings: NodeKernelSettings {
            kernel: KernelKind::Delta,
            bandwidth: Bandwidth::Auto,
            multiplier: 1.0,
            lambda,
            ..NodeKernelSettings::default()
        },
        kernel: Kernel::delta(),
        sigma: None,
        median: 1.0,
        rule: "none".into(),
        parzen: Kernel::delta(),
    }
}

/// A joint table over `n` nodes with values in {0, 1, 2}, correlated along the tree.
fn small_alphabet_table(graph: &Graph, rows: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = graph.num_nodes();
    let table: Vec<Vec<f64>> = (0..rows)
        .map(|_| {
            let mut row = vec![0.0; n];
            for (node, parent) in graph.bfs_order(0) {
                row[node] = match parent {
                    None => rng.random_range(0..3) as f64,
                    Some(p) => {
                        if rng.random::<f64>() < 0.6 {
                            row[p]
                        } else {
                            rng.random_range(0..3) as f64
                        }
                    }
                };
            }
            row
        })
        .collect();
    (0..n)
        .map(|node| table.iter().map(|row| row[node]).collect())
        .collect()
}

fn subset(rng: &mut ChaCha8Rng, n: usize, k: usize) -> Vec<usize> {
    rand::seq::index::sample(rng, n, k).into_vec()
}

/// The message `t -> s` at value `v` (delta kernel), unscaled.
fn message_at(engine: &TreeKbp, model: &TreeKbpModel, msg: usize, v: f64) -> f64 {
    let Some(beta) = engine.unscaled_weights(msg) else {
        return match engine.message(msg) {
            Message::One => 1.0,
            other => panic!("message {msg} is {other:?}"),
        };
    };
    let (s, set) = model.receiver_set(msg);
    let pts = &model.node(s).sets[set].points;
    (0..pts.len())
        .filter(|&i| pts.row(i)[0] == v)
        .map(|i| beta[i])
        .sum()
}

#[test]
fn delta_kernel_messages_equal_the_counting_formulas() {
    // 0 - 1, 1 - 2, 1 - 3, 2 - 4: node 1 has three neighbours, 2 is internal too.
    let graph = Graph::from_edges(5, &[(0, 1), (1, 2), (1, 3), (2, 4)]).unwrap();
    let rows = 80;
    let cols = small_alphabet_table(&graph, rows, 11);
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    // Unequal samples per edge.
    let edge_rows = vec![
        subset(&mut rng, rows, 23),
        subset(&mut rng, rows, 41),
        subset(&mut rng, rows, 17),
        subset(&mut rng, rows, 30),
    ];
    let lambdas = [0.37, 0.05, 1.3, 0.2, 2.5];
    let values: Vec<Points<'static>> = cols
        .iter()
        .map(|c| Points::from_slice(c).to_owned_points())
        .collect();
    let belief_rows: Vec<Vec<usize>> = (0..5)
        .map(|t| edge_rows[graph.neighbors(t)[0].edge].clone())
        .collect();
    let alphabet = Points::from_slice(&[0.0, 1.0, 2.0]).to_owned_points();
    let input = TreeKbpInput {
        graph: graph.clone(),
        values,
        edge_rows: edge_rows.clone(),
        belief_rows: belief_rows.clone(),
        eval_points: vec![alphabet; 5],
        kernels: lambdas.iter().map(|&l| delta_kernel(l)).collect(),
    };
    let model = Arc::new(TreeKbpModel::new(input, &TreeKbpOptions::default()).unwrap());
    // Evidence: x0 = 2, x3 = 0; root 4.
    let (a0, a3) = (2.0, 0.0);
    let mut engine = TreeKbp::new(model.clone(), 4).unwrap();
    engine.set_evidence(0, Some(vec![a0])).unwrap();
    engine.set_evidence(3, Some(vec![a3])).unwrap();
    engine.run().unwrap();

    // Counts on one edge's samples.
    let count = |e: usize, node: usize, v: f64| -> f64 {
        edge_rows[e].iter().filter(|&&r| cols[node][r] == v).count() as f64
    };
    let joint = |e: usize, t: usize, a: f64, s: usize, v: f64| -> f64 {
        edge_rows[e]
            .iter()
            .filter(|&&r| cols[t][r] == a && cols[s][r] == v)
            .count() as f64
    };
    let leaf = |e: usize, t: usize, a: f64, s: usize, v: f64| -> f64 {
        joint(e, t, a, s, v) / ((count(e, s, v) + lambdas[s]) * (count(e, t, a) + lambdas[t]))
    };
    let msg = |from: usize, to: usize| graph.message_between(from, to).unwrap();
    let mut checked = 0;
    for v in [0.0, 1.0, 2.0] {
        // Leaves 0 -> 1 (edge 0) and 3 -> 1 (edge 2).
        let expect = leaf(0, 0, a0, 1, v);
        let got = message_at(&engine, &model, msg(0, 1), v);
        assert!(
            close(got, expect, 1e-9),
            "m_01({v}) = {got}, formula {expect}"
        );
        let expect = leaf(2, 3, a3, 1, v);
        let got = message_at(&engine, &model, msg(3, 1), v);
        assert!(
            close(got, expect, 1e-9),
            "m_31({v}) = {got}, formula {expect}"
        );
        // Internal 1 -> 2 on edge 1: Σ_{i: x2 = v} W_i / (n_2(v) + λ_2),
        // W_i = m_01(x1^i) m_31(x1^i).
        let w_sum: f64 = edge_rows[1]
            .iter()
            .filter(|&&r| cols[2][r] == v)
            .map(|&r| {
                let x1 = cols[1][r];
                leaf(0, 0, a0, 1, x1) * leaf(2, 3, a3, 1, x1)
            })
            .sum();
        let expect_12 = w_sum / (count(1, 2, v) + lambdas[2]);
        let got = message_at(&engine, &model, msg(1, 2), v);
        assert!(
            close(got, expect_12, 1e-9),
            "m_12({v}) = {got}, formula {expect_12}"
        );
        // Internal 2 -> 4 on edge 3 (one child, itself internal).
        let w_sum: f64 = edge_rows[3]
            .iter()
            .filter(|&&r| cols[4][r] == v)
            .map(|&r| {
                let x2 = cols[2][r];
                let w: f64 = edge_rows[1]
                    .iter()
                    .filter(|&&q| cols[2][q] == x2)
                    .map(|&q| {
                        let x1 = cols[1][q];
                        leaf(0, 0, a0, 1, x1) * leaf(2, 3, a3, 1, x1)
                    })
                    .sum();
                w / (count(1, 2, x2) + lambdas[2])
            })
            .sum();
        let expect_24 = w_sum / (count(3, 4, v) + lambdas[4]);
        let got_24 = message_at(&engine, &model, msg(2, 4), v);
        assert!(
            close(got_24, expect_24, 1e-9),
            "m_24({v}) = {got_24}, formula {expect_24}"
        );
        // Root belief B(v) = n_r(v) Π_u m_ur(v), n_r on the root's belief samples.
        let (w, ls) = engine.belief_weights(4).unwrap().unwrap();
        let nm = model.node(4);
        let bpts = &nm.sets[nm.belief_set].points;
        let got_b: f64 = (0..bpts.len())
            .filter(|&i| bpts.row(i)[0] == v)
            .map(|i| w[i] * ls.exp())
            .sum();
        let n_r = belief_rows[4].iter().filter(|&&r| cols[4][r] == v).count() as f64;
        let expect_b = n_r * expect_24;
        assert!(
            close(got_b, expect_b, 1e-9),
            "B({v}) = {got_b}, formula {expect_b}"
        );
        checked += 1;
    }
    assert_eq!(checked, 3);
    // Pruned and constant messages.
    assert_eq!(engine.message(msg(1, 0)), &Message::Pruned);
    assert_eq!(engine.message(msg(1, 3)), &Message::Pruned);
    assert_eq!(engine.message(msg(4, 2)), &Message::One);
    // Without evidence at 3 its message is exactly 1 and drops out of the product.
    engine.set_evidence(3, None).unwrap();
    engine.run().unwrap();
    assert_eq!(engine.message(msg(3, 1)), &Message::One);
    for v in [0.0, 1.0, 2.0] {
        let w_sum: f64 = edge_rows[1]
            .iter()
            .filter(|&&r| cols[2][r] == v)
            .map(|&r| leaf(0, 0, a0, 1, cols[1][r]))
            .sum();
        let expect = w_sum / (count(1, 2, v) + lambdas[2]);
        let got = message_at(&engine, &model, msg(1, 2), v);
        assert!(
            close(got, expect, 1e-9),
            "m_12({v}) = {got}, formula {expect}"
        );
        // Downward 1 -> 3 now needed: Σ_{i ∈ e2: x3 = v} m_01(x1^i) / (n_3(v) + λ_3).
        let w_sum: f64 = edge_rows[2]
            .iter()
            .filter(|&&r| cols[3][r] == v)
            .map(|&r| leaf(0, 0, a0, 1, cols[1][r]))
            .sum();
        let expect = w_sum / (count(2, 3, v) + lambdas[3]);
        let got = message_at(&engine, &model, msg(1, 3), v);
        assert!(
            close(got, expect, 1e-9),
            "m_13({v}) = {got}, formula {expect}"
        );
    }
}

fn rbf_kernel(sigma: f64, lambda: f64) -> ResolvedKernel {
    ResolvedKernel {
        settings: NodeKernelSettings {
            kernel: KernelKind::Rbf,
            bandwidth: Bandwidth::Value(sigma),
            multiplier: 1.0,
            lambda,
            ..NodeKernelSettings::default()
        },
        kernel: Kernel::rbf(sigma).unwrap(),
        sigma: Some(sigma),
        median: sigma,
        rule: "given".into(),
        parzen: Kernel::rbf(sigma).unwrap(),
    }
}

#[test]
fn two_nodes_root_weights_equal_the_closed_form() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let m = 40;
    let xt: Vec<f64> = (0..m).map(|_| rng.random::<f64>() * 4.0 - 2.0).collect();
    let xs: Vec<f64> = xt
        .iter()
        .map(|x| x.sin() + 0.2 * rng.random::<f64>())
        .collect();
    let lambda = 0.1;
    let (sig_t, sig_s) = (0.7, 0.4);
    let graph = Graph::chain(2).unwrap();
    let rows: Vec<usize> = (0..m).collect();
    let grid = Points::from_vec((0..11).map(|i| -2.0 + 0.4 * i as f64).collect(), 1).unwrap();
    let input = TreeKbpInput {
        graph,
        values: vec![
            Points::from_slice(&xt).to_owned_points(),
            Points::from_slice(&xs).to_owned_points(),
        ],
        edge_rows: vec![rows.clone()],
        belief_rows: vec![rows.clone(), rows.clone()],
        eval_points: vec![grid.clone(), grid],
        kernels: vec![rbf_kernel(sig_t, lambda), rbf_kernel(sig_s, lambda)],
    };
    let model = Arc::new(TreeKbpModel::new(input, &TreeKbpOptions::default()).unwrap());
    let mut engine = TreeKbp::new(model, 1).unwrap();
    let xbar = 0.3;
    engine.set_evidence(0, Some(vec![xbar])).unwrap();
    engine.run().unwrap();
    let (w, ls) = engine.belief_weights(1).unwrap().unwrap();
    let w = w * ls.exp();
    // K_s (K_s + λI)^{-1} (K_t + λI)^{-1} k̄ with dense LU solves.
    let kt = gram(&Kernel::rbf(sig_t).unwrap(), &Points::from_slice(&xt)).unwrap();
    let ks = gram(&Kernel::rbf(sig_s).unwrap(), &Points::from_slice(&xs)).unwrap();
    let kbar = kernel_column(
        &Kernel::rbf(sig_t).unwrap(),
        &Points::from_slice(&xt),
        &[xbar],
    )
    .unwrap();
    let eye = DMatrix::<f64>::identity(m, m);
    let u = (&kt + &eye * lambda).lu().solve(&kbar).unwrap();
    let beta = (&ks + &eye * lambda).lu().solve(&u).unwrap();
    let expect: DVector<f64> = &ks * &beta;
    let scale = expect.amax();
    for i in 0..m {
        assert!(
            (w[i] - expect[i]).abs() <= 1e-9 * scale,
            "weight {i}: {} vs {}",
            w[i],
            expect[i]
        );
    }
    // The order of the solves matters: swapping them gives different weights.
    let u2 = (&ks + &eye * lambda).lu().solve(&kbar).unwrap();
    let swapped = &ks * (&kt + &eye * lambda).lu().solve(&u2).unwrap();
    assert!((swapped - &expect).amax() > 1e-3 * scale);
    // The message's own weights.
    let msg = engine.model().graph().message_between(0, 1).unwrap();
    let b = engine.unscaled_weights(msg).unwrap();
    assert!((b - &beta).amax() <= 1e-9 * beta.amax());
}

/// A random tree with continuous data, per-edge samples.
fn continuous_model(budget: usize) -> (Arc<TreeKbpModel>, usize) {
    let n = 8;
    let graph = Graph::random_tree(n, 21).unwrap();
    let rows = 150;
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let table: Vec<Vec<f64>> = (0..rows)
        .map(|_| {
            let mut row = vec![0.0; n];
            for (node, parent) in graph.bfs_order(0) {
                let noise = rng.random::<f64>() - 0.5;
                row[node] = match parent {
                    None => 2.0 * rng.random::<f64>() - 1.0,
                    Some(p) => (2.0 * row[p]).sin() + 0.4 * noise,
                };
            }
            row
        })
        .collect();
    let cols: Vec<Vec<f64>> = (0..n)
        .map(|node| table.iter().map(|row| row[node]).collect())
        .collect();
    let edge_rows: Vec<Vec<usize>> = (0..graph.num_edges())
        .map(|_| subset(&mut rng, rows, 60))
        .collect();
    let values: Vec<Points<'static>> = cols
        .iter()
        .map(|c| Points::from_slice(c).to_owned_points())
        .collect();
    let settings = NodeKernelSettings {
        lambda: 0.05,
        ..NodeKernelSettings::default()
    };
    let kernels = values
        .iter()
        .map(|v| resolve_kernel(&settings, v).unwrap())
        .collect();
    let grid = Points::from_vec((0..21).map(|i| -1.5 + 0.15 * i as f64).collect(), 1).unwrap();
    let input = TreeKbpInput {
        belief_rows: (0..n)
            .map(|t| edge_rows[graph.neighbors(t)[0].edge].clone())
            .collect(),
        graph,
        values,
        edge_rows,
        eval_points: vec![grid; n],
        kernels,
    };
    let options = TreeKbpOptions {
        max_cross_entries: budget,
    };
    (Arc::new(TreeKbpModel::new(input, &options).unwrap()), n)
}

fn assert_beliefs_equal(a: &TreeKbp, b: &TreeKbp, tol: f64) {
    let (ba, bb) = (a.beliefs().unwrap(), b.beliefs().unwrap());
    for (x, y) in ba.iter().zip(&bb) {
        assert_eq!(x.observed, y.observed);
        for (p, q) in x.parzen.iter().zip(&y.parzen) {
            assert!((p - q).abs() <= tol, "node {}: parzen {p} vs {q}", x.node);
        }
        for (p, q) in x.embedding.iter().zip(&y.embedding) {
            assert!(
                (p - q).abs() <= tol,
                "node {}: embedding {p} vs {q}",
                x.node
            );
        }
        for (p, q) in x.mean.iter().zip(&y.mean) {
            assert!((p - q).abs() <= tol, "node {}: mean {p} vs {q}", x.node);
        }
    }
}

#[test]
fn root_increments_and_storage_do_not_change_beliefs() {
    let (model, n) = continuous_model(usize::MAX);
    let mut a = TreeKbp::new(model.clone(), 0).unwrap();
    let mut b = TreeKbp::new(model.clone(), n - 1).unwrap();
    for e in [&mut a, &mut b] {
        e.set_evidence(2, Some(vec![0.4])).unwrap();
        e.set_evidence(5, Some(vec![-0.3])).unwrap();
        e.run().unwrap();
    }
    assert_beliefs_equal(&a, &b, 1e-10);
    // Incremental: move one value, rerun, compare with a fresh engine.
    a.set_evidence(2, Some(vec![-0.1])).unwrap();
    let recomputed = a.run().unwrap();
    assert!(recomputed < model.graph().num_messages());
    let mut fresh = TreeKbp::new(model.clone(), 3).unwrap();
    fresh.set_evidence(5, Some(vec![-0.3])).unwrap();
    fresh.set_evidence(2, Some(vec![-0.1])).unwrap();
    fresh.run().unwrap();
    assert_beliefs_equal(&a, &fresh, 1e-10);
    // Remove and re-add evidence: status changes invalidate the incoming messages too.
    a.set_evidence(5, None).unwrap();
    a.run().unwrap();
    a.set_evidence(5, Some(vec![-0.3])).unwrap();
    a.run().unwrap();
    assert_beliefs_equal(&a, &fresh, 1e-10);
    // Cross-Grams recomputed on the fly give the same numbers.
    let (lean, _) = continuous_model(0);
    assert_eq!(lean.cross_entries(), 0);
    assert!(model.cross_entries() > 0);
    let mut c = TreeKbp::new(lean, 0).unwrap();
    c.set_evidence(5, Some(vec![-0.3])).unwrap();
    c.set_evidence(2, Some(vec![-0.1])).unwrap();
    c.run().unwrap();
    assert_beliefs_equal(&c, &fresh, 1e-10);
}

#[test]
fn stepping_follows_the_up_down_schedule() {
    let (model, _) = continuous_model(usize::MAX);
    let mut e = TreeKbp::new(model.clone(), 0).unwrap();
    e.set_evidence(4, Some(vec![0.2])).unwrap();
    let graph = model.graph().clone();
    let mut seen = Vec::new();
    while let Some(m) = e.step().unwrap() {
        seen.push(m);
    }
    assert!(e.done());
    assert_eq!(seen.len(), graph.num_messages());
    // Every message towards the root comes before every message away from it.
    let order = graph.bfs_order(0);
    let depth = |v: usize| {
        let mut d = 0;
        let mut cur = v;
        while let Some(p) = order.iter().find(|(u, _)| *u == cur).unwrap().1 {
            d += 1;
            cur = p;
        }
        d
    };
    let up = graph.num_edges();
    for &m in &seen[..up] {
        assert!(depth(graph.source(m)) > depth(graph.target(m)));
    }
    for &m in &seen[up..] {
        assert!(depth(graph.source(m)) < depth(graph.target(m)));
    }
    // A cross-Gram of the model equals the kernel directly.
    let nm = model.node(1);
    if nm.sets.len() > 1 {
        let k = cross_gram(
            &model.kernel(1).kernel,
            &nm.sets[0].points,
            &nm.sets[1].points,
        )
        .unwrap();
        assert_eq!(k.nrows(), nm.sets[0].rows.len());
    }
}
