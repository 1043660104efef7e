//! The flow engines against independent references: discrete flow BP against brute-force
//! enumeration (2 x 1 tree: exact; 2 x 2 loop: loopy BP's usual small error) and against the
//! generic dense discrete BP on the same model; the tensor basis; SOSMP on the built-in pair.

use std::sync::Arc;
use std::time::Instant;

use beliefscope::inference::discrete::{DiscreteBp, DiscreteMrf, EdgePotentials};
use beliefscope::inference::flow_bp::FlowBp;
use beliefscope::inference::sosmp::basis::{BasisKind, GridBasis};
use beliefscope::inference::sosmp::box_grid::BoxGrid;
use beliefscope::inference::sosmp::grid::StateGrid;
use beliefscope::inference::{Belief, Damping, EstimateKind, Inference, Schedule};
use beliefscope::io::GrayImage;
use beliefscope::model::NodeEvidence;
use beliefscope::model::flow::{FlowEvidence, FlowLabels, FlowMrf};
use beliefscope::scenarios::flow::{FlowConfig, FlowData, FlowScenario};
use beliefscope::scenarios::{CancelFlag, Scenario};

/// A small flow MRF on `w x h` pixels with 3 x 3 labels (d = 1 px, step 1 px): frame 2 is
/// frame 1 shifted right by one pixel, so the data favour (+1, 0) but not everywhere.
fn small_mrf(w: usize, h: usize, sigma_data: f64, sigma_smooth: f64) -> Arc<FlowMrf> {
    let f = |x: f64, y: f64| 100.0 + 40.0 * (0.9 * x + 0.4 * y).sin() + 25.0 * (0.7 * y).cos();
    let frame = |dx: f64| GrayImage {
        width: w,
        height: h,
        pixels: (0..w * h)
            .map(|i| f((i % w) as f64 - dx, (i / w) as f64))
            .collect(),
    };
    let labels = FlowLabels::new(1.0, 1).unwrap();
    let ev = FlowEvidence::new(&frame(0.0), &frame(1.0), labels, sigma_data, None).unwrap();
    Arc::new(FlowMrf::new(ev, sigma_smooth).unwrap())
}

/// `w(x) ψ_u(x)` of every pixel (the discrete node potentials), pixel-major.
fn node_tables(mrf: &FlowMrf) -> Vec<f64> {
    let l = mrf.labels.len();
    let n = mrf.labels.per_axis();
    let h = mrf.labels.step();
    let w1: Vec<f64> = (0..n)
        .map(|i| if i == 0 || i == n - 1 { 0.5 * h } else { h })
        .collect();
    let mut out = vec![0.0; mrf.graph.num_nodes() * l];
    for (u, row) in out.chunks_mut(l).enumerate() {
        mrf.evidence.fill(u, row);
        for (i, r) in row.iter_mut().enumerate() {
            *r *= w1[i % n] * w1[i / n];
        }
    }
    out
}

/// `ψ(x_a = i, x_b = j) = exp(-|x_i - x_j|² / (2σ²))` (zero shift).
fn edge_table(mrf: &FlowMrf) -> Vec<f64> {
    let values = mrf.labels.values();
    let s2 = 2.0 * mrf.sigma_smooth * mrf.sigma_smooth;
    let mut t = Vec::new();
    for a in &values {
        for b in &values {
            let d2 = (a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2);
            t.push((-d2 / s2).exp());
        }
    }
    t
}

/// Exact marginals by enumerating every joint labelling.
fn enumerate_marginals(mrf: &FlowMrf) -> Vec<Vec<f64>> {
    let l = mrf.labels.len();
    let nodes = mrf.graph.num_nodes();
    let phi = node_tables(mrf);
    let psi = edge_table(mrf);
    let mut marg = vec![vec![0.0; l]; nodes];
    let total = l.pow(nodes as u32);
    let mut x = vec![0usize; nodes];
    for code in 0..total {
        let mut c = code;
        for xi in x.iter_mut() {
            *xi = c % l;
            c /= l;
        }
        let mut p = 1.0;
        for (u, &xu) in x.iter().enumerate() {
            p *= phi[u * l + xu];
        }
        for &(a, b) in mrf.graph.edges() {
            p *= psi[x[a] * l + x[b]];
        }
        for (u, &xu) in x.iter().enumerate() {
            marg[u][xu] += p;
        }
    }
    for m in &mut marg {
        let z: f64 = m.iter().sum();
        m.iter_mut().for_each(|v| *v /= z);
    }
    marg
}

fn beliefs(engine: &dyn Inference, nodes: usize) -> Vec<Vec<f64>> {
    (0..nodes)
        .map(|u| match engine.belief(u) {
            Belief::Grid2 { values, .. } => values,
            Belief::Discrete { probs, .. } => probs,
            Belief::Curve { ys, .. } => ys,
        })
        .collect()
}

fn max_diff(a: &[Vec<f64>], b: &[Vec<f64>]) -> f64 {
    a.iter()
        .zip(b)
        .flat_map(|(x, y)| x.iter().zip(y).map(|(p, q)| (p - q).abs()))
        .fold(0.0, f64::max)
}

#[test]
fn discrete_flow_bp_is_exact_on_a_tree() {
    // 2 x 1 pixels: one edge, a tree; BP marginals are exact after two iterations.
    let mrf = small_mrf(2, 1, 20.0, 0.8);
    let exact = enumerate_marginals(&mrf);
    let mut bp = FlowBp::new(mrf.clone(), 0.0).unwrap();
    for _ in 0..3 {
        bp.step().unwrap();
    }
    let d = max_diff(&beliefs(&bp, 2), &exact);
    assert!(d < 1e-6, "tree marginals off by {d}");
}

#[test]
fn discrete_flow_bp_agrees_with_enumeration_on_a_2x2_grid() {
    // 2 x 2 pixels (one 4-cycle), 9 labels, 9^4 = 6561 joint labellings. Loopy BP is not exact
    // on a cycle; with this coupling its marginals are within 0.02 of the exact ones (measured
    // 0.014), and the most probable label of every pixel is the exact one.
    let mrf = small_mrf(2, 2, 20.0, 0.8);
    let exact = enumerate_marginals(&mrf);
    let mut bp = FlowBp::new(mrf.clone(), 0.0).unwrap();
    for _ in 0..60 {
        bp.step().unwrap();
    }
    let got = beliefs(&bp, 4);
    let d = max_diff(&got, &exact);
    eprintln!("2 x 2 loop: largest marginal error {d:.2e}");
    assert!(d < 0.02, "loopy marginals off by {d}");
    let argmax = |v: &Vec<f64>| (0..v.len()).max_by(|&a, &b| v[a].total_cmp(&v[b])).unwrap();
    for (g, e) in got.iter().zip(&exact) {
        assert_eq!(argmax(g), argmax(e));
    }
    // Weak coupling: nearly independent pixels, loopy BP nearly exact (measured 6e-8).
    let weak = small_mrf(2, 2, 20.0, 5.0);
    let exact = enumerate_marginals(&weak);
    let mut bp = FlowBp::new(weak, 0.0).unwrap();
    for _ in 0..60 {
        bp.step().unwrap();
    }
    let d = max_diff(&beliefs(&bp, 4), &exact);
    eprintln!("2 x 2 loop, weak coupling: largest marginal error {d:.2e}");
    assert!(d < 1e-6, "weakly coupled loop off by {d}");
}

#[test]
fn separable_messages_match_dense_discrete_bp() {
    // The same model through the generic O(S²) discrete BP: identical up to f32 storage.
    let mrf = small_mrf(3, 2, 15.0, 0.7);
    let l = mrf.labels.len();
    let dense = DiscreteMrf {
        graph: mrf.graph.clone(),
        state_values: (0..l).map(|i| i as f64).collect(),
        node_potentials: node_tables(&mrf),
        edge_potentials: EdgePotentials::Shared(edge_table(&mrf)),
    };
    let mut reference = DiscreteBp::new(dense, Schedule::Synchronous, Damping(0.0)).unwrap();
    let mut fast = FlowBp::new(mrf.clone(), 0.0).unwrap();
    for _ in 0..25 {
        reference.step().unwrap();
        fast.step().unwrap();
    }
    let d = max_diff(&beliefs(&fast, 6), &beliefs(&reference, 6));
    assert!(d < 1e-5, "separable vs dense beliefs differ by {d}");
}

#[test]
fn tensor_fourier_basis_is_orthonormal_and_evaluates_separably() {
    let grid = BoxGrid::square(2.0, 9).unwrap();
    for m in [1, 3, 5, 7] {
        let b = GridBasis::tensor(BasisKind::Fourier, m, &grid).unwrap();
        assert_eq!(b.len(), m * m);
        assert!(b.orthonormality_defect(grid.weights()) < 1e-12);
        // Separable evaluation against the node-major table.
        let coeffs: Vec<f64> = (0..m * m).map(|j| (j as f64 * 0.7).sin()).collect();
        let mut fast = vec![0.0; grid.len()];
        b.evaluate(&coeffs, &mut fast);
        for (i, f) in fast.iter().enumerate() {
            let slow: f64 = (0..m * m)
                .map(|j| coeffs[j] * b.rows()[i * m * m + j])
                .sum();
            assert!((f - slow).abs() < 1e-12);
        }
    }
    // 9 nodes per axis resolve frequencies up to 3 (m = 7); m = 8 or 9 would alias.
    assert!(GridBasis::tensor(BasisKind::Fourier, 8, &grid).is_err());
    assert!(GridBasis::tensor(BasisKind::Fourier, 9, &grid).is_err());
}

#[test]
fn sosmp_reduces_epe_well_below_zero_flow_on_the_built_in_pair() {
    // The default model on a 96 x 96 built-in pair (2 levels from the image size), 40 iterations
    // per level (not the default's cap of 8 for SOSMP, so the t = 40 snapshots exist).
    let config = FlowConfig {
        width: 96,
        height: 96,
        sosmp_iters: 0,
        ..FlowConfig::default()
    };
    let start = Instant::now();
    let mut s = FlowScenario::new(config, &CancelFlag::default()).unwrap();
    let zero = s.zero_errors().unwrap();
    while !s.finished() {
        s.step().unwrap();
    }
    let e = s.runs()[0].errors().unwrap();
    assert!(
        e.epe < 0.4 * zero.epe,
        "EPE {} against zero flow {}",
        e.epe,
        zero.epe
    );
    assert!(e.aae < 0.4 * zero.aae, "AAE {} against {}", e.aae, zero.aae);
    // Speed is measured by the benches and results.json, not here (2 shared cores).
    eprintln!(
        "built-in 96 x 96 run: {:.1} s",
        start.elapsed().as_secs_f64()
    );
    // Snapshots at t = 1, 10, 40 of every level.
    let kept: Vec<(usize, usize)> = s.runs()[0]
        .snapshots()
        .iter()
        .map(|k| (k.level, k.level_iteration))
        .collect();
    assert!(kept.contains(&(0, 1)) && kept.contains(&(0, 10)) && kept.contains(&(0, 40)));
}

#[test]
fn user_frames_with_a_mismatched_ground_truth_are_refused() {
    let (f1, f2, gt) = beliefscope::scenarios::flow::synthetic::synthetic_pair(20, 16, 3);
    let dir = tempfile::tempdir().unwrap();
    let p1 = dir.path().join("a.png");
    let p2 = dir.path().join("b.png");
    beliefscope::io::save_gray_png(&p1, 20, 16, &f1.pixels).unwrap();
    beliefscope::io::save_gray_png(&p2, 20, 16, &f2.pixels).unwrap();
    let small = beliefscope::io::FlowField::zeros(19, 16);
    let bad = dir.path().join("bad.flo");
    beliefscope::io::write_flo(&bad, &small).unwrap();
    let config = FlowConfig {
        frame1: Some(p1.clone()),
        frame2: Some(p2.clone()),
        ground_truth: Some(bad),
        levels: 1,
        ..FlowConfig::default()
    };
    let e = FlowData::load(&config).unwrap_err().to_string();
    assert!(e.contains("19 x 16") && e.contains("20 x 16"), "{e}");
    // The right size loads and is used.
    let good = dir.path().join("good.flo");
    beliefscope::io::write_flo(&good, &gt).unwrap();
    let config = FlowConfig {
        ground_truth: Some(good),
        iters: 2,
        ..config
    };
    let mut s = FlowScenario::new(config, &CancelFlag::default()).unwrap();
    let r = s.step().unwrap();
    assert!(r.metrics.contains_key("epe") && r.metrics.contains_key("aae"));
}

/// The serial schedules of discrete flow BP (sweep, random order, residual BP at pixel
/// granularity) reach the fixed point of the checkerboard schedule, checked against the dense
/// generic discrete BP; and SOSMP refuses them with its reason.
#[test]
fn serial_schedules_reach_the_same_fixed_point() {
    let mrf = small_mrf(5, 4, 15.0, 0.7);
    let l = mrf.labels.len();
    let dense = DiscreteMrf {
        graph: mrf.graph.clone(),
        state_values: (0..l).map(|i| i as f64).collect(),
        node_potentials: node_tables(&mrf),
        edge_potentials: EdgePotentials::Shared(edge_table(&mrf)),
    };
    let mut reference = DiscreteBp::new(dense, Schedule::Synchronous, Damping(0.0)).unwrap();
    for _ in 0..200 {
        reference.step().unwrap();
    }
    let want = beliefs(&reference, 20);
    for schedule in [Schedule::Sweep, Schedule::Random, Schedule::Residual] {
        let mut bp = FlowBp::new(mrf.clone(), 0.0).unwrap();
        bp.set_schedule(schedule, 0.0).unwrap();
        let first = bp.step().unwrap();
        assert!(first.residual > 1e-3, "{schedule:?}: nothing moved");
        let mut last = first.residual;
        for _ in 0..80 {
            last = bp.step().unwrap().residual;
        }
        assert!(last < 1e-9, "{schedule:?}: residual {last}");
        let d = max_diff(&beliefs(&bp, 20), &want);
        assert!(
            d < 1e-6,
            "{schedule:?}: beliefs differ from the reference by {d}"
        );
    }
    let refused = FlowConfig {
        schedule: Schedule::Residual,
        ..FlowConfig::default()
    };
    let err = beliefscope::scenarios::ScenarioParams::check(&refused)
        .unwrap_err()
        .to_string();
    assert!(err.contains("SOSMP") && err.contains("residual"), "{err}");
    let allowed = FlowConfig {
        schedule: Schedule::Residual,
        algorithm: beliefscope::scenarios::flow::FlowAlgorithm::Discrete,
        ..FlowConfig::default()
    };
    beliefscope::scenarios::ScenarioParams::check(&allowed).unwrap();
}

#[test]
fn discrete_flow_bp_fused_read_out_matches_the_beliefs() {
    // The checkerboard iteration reads the belief means out inside its update (odd pixels)
    // and in a pass after it (even pixels); both must be the means of the beliefs the stored
    // messages give, whichever schedule ran last.
    let mrf = small_mrf(7, 6, 12.0, 0.8);
    let mut bp = FlowBp::new(mrf.clone(), 0.0).unwrap();
    let check = |bp: &FlowBp| {
        let est = bp.estimates(EstimateKind::Mean).values;
        for t in 0..mrf.graph.num_nodes() {
            let Belief::Grid2 { xs, ys, values } = bp.belief(t) else {
                panic!("flow beliefs are 2-D grids");
            };
            let n = xs.len();
            let (mut mx, mut my) = (0.0, 0.0);
            for (i, p) in values.iter().enumerate() {
                mx += p * xs[i % n];
                my += p * ys[i / n];
            }
            assert!(
                (est[2 * t] - mx).abs() < 1e-12 && (est[2 * t + 1] - my).abs() < 1e-12,
                "pixel {t}: read-out ({}, {}) against belief mean ({mx}, {my})",
                est[2 * t],
                est[2 * t + 1]
            );
        }
    };
    for _ in 0..3 {
        bp.step().unwrap();
        check(&bp);
    }
    bp.set_schedule(Schedule::Sweep, 0.0).unwrap();
    bp.step().unwrap();
    check(&bp);
    bp.set_schedule(Schedule::Synchronous, 0.3).unwrap();
    bp.step().unwrap();
    check(&bp);
}
