//! The grid-BP reference against an independent forward-backward pass, and the expected-update
//! floor against the reference.

use std::f64::consts::PI;

use beliefscope::inference::sosmp::expected::expected_fixed_point;
use beliefscope::inference::sosmp::grid::StateGrid;
use beliefscope::inference::sosmp::reference::grid_bp;
use beliefscope::scenarios::CancelFlag;
use beliefscope::scenarios::sosmp::{
    Baselines, GraphKind, PotentialKind, SosmpConfig, build_problem,
};

fn gauss_mixture(w: &[f64], mu: &[f64], var: &[f64], x: f64) -> f64 {
    (0..w.len())
        .map(|c| w[c] * (-(x - mu[c]).powi(2) / (2.0 * var[c])).exp() / (2.0 * PI * var[c]).sqrt())
        .sum()
}

#[test]
fn grid_reference_equals_forward_backward_on_a_chain() {
    let config = SosmpConfig {
        nodes: 7,
        points_per_unit: 20.0,
        seed: 3,
        ..SosmpConfig::default()
    };
    let (p, model) = build_problem(&config, &CancelFlag::default()).unwrap();
    let bp = grid_bp(&p.mrf, 1e-12, 100, &CancelFlag::default()).unwrap();
    assert_eq!(bp.schedule, "tree");
    // A verification sweep from the fixed point changes nothing (values are O(1)).
    assert!(bp.residual < 1e-12, "residual {}", bp.residual);

    // Independent forward-backward on the same trapezoid grid, evaluating the mixtures from
    // their parameters (not from the engine's tables).
    let xs = p.mrf.grid.points().to_vec();
    let w = p.mrf.grid.weights().to_vec();
    let n = xs.len();
    let nodes = 7;
    let node = |u: usize, x: f64| {
        let m = &model.node_mixtures[u];
        gauss_mixture(&m.weights, &m.means, &m.variances, x)
    };
    // Chain edge e joins e and e+1; ψ_e(x_e, x_{e+1}) = Σ w N(x_{e+1} - x_e; 0, σ²).
    let edge = |e: usize, xa: f64, xb: f64| {
        let m = &model.edge_mixtures[e];
        gauss_mixture(&m.weights, &m.means, &m.variances, xb - xa)
    };
    let normalise = |f: &mut Vec<f64>| {
        let z: f64 = f.iter().zip(&w).map(|(a, b)| a * b).sum();
        f.iter_mut().for_each(|v| *v /= z);
    };
    // forward[e]: message e -> e+1; backward[e]: message e+1 -> e.
    let mut forward: Vec<Vec<f64>> = Vec::new();
    for e in 0..nodes - 1 {
        let mut msg = vec![0.0; n];
        for (i, out) in msg.iter_mut().enumerate() {
            *out = (0..n)
                .map(|k| {
                    let incoming = if e == 0 { 1.0 } else { forward[e - 1][k] };
                    w[k] * node(e, xs[k]) * incoming * edge(e, xs[k], xs[i])
                })
                .sum();
        }
        normalise(&mut msg);
        forward.push(msg);
    }
    let mut backward: Vec<Vec<f64>> = vec![Vec::new(); nodes - 1];
    for e in (0..nodes - 1).rev() {
        let mut msg = vec![0.0; n];
        for (i, out) in msg.iter_mut().enumerate() {
            *out = (0..n)
                .map(|k| {
                    let incoming = if e == nodes - 2 {
                        1.0
                    } else {
                        backward[e + 1][k]
                    };
                    w[k] * node(e + 1, xs[k]) * incoming * edge(e, xs[i], xs[k])
                })
                .sum();
        }
        normalise(&mut msg);
        backward[e] = msg;
    }
    for e in 0..nodes - 1 {
        for (id, expect) in [(2 * e, &forward[e]), (2 * e + 1, &backward[e])] {
            let got = &bp.messages[id * n..(id + 1) * n];
            let worst = got
                .iter()
                .zip(expect.iter())
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            // Same sums in a different order: agreement to rounding (values are O(1)); a wrong
            // orientation of ψ or a missing/extra incoming message is off by O(0.1-1).
            assert!(worst < 1e-10, "message {id}: max difference {worst}");
        }
    }
    // Beliefs: ψ_u × forward × backward.
    for u in 0..nodes {
        let mut b: Vec<f64> = (0..n)
            .map(|i| {
                let f = if u == 0 { 1.0 } else { forward[u - 1][i] };
                let bk = if u == nodes - 1 { 1.0 } else { backward[u][i] };
                node(u, xs[i]) * f * bk
            })
            .collect();
        normalise(&mut b);
        let got = &bp.beliefs[u * n..(u + 1) * n];
        let worst = got
            .iter()
            .zip(&b)
            .map(|(a, c)| (a - c).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-10, "belief {u}: max difference {worst}");
    }
}

#[test]
fn floor_vanishes_when_the_basis_resolves_the_messages() {
    // With r = 120 Fourier functions (periods down to 1/6 unit) the messages, which are
    // convolutions with edge Gaussians of sd >= 0.03, are resolved, clipping removes nothing
    // that matters, and the expected update's fixed point is the projection of grid BP: the
    // tables (Z, β, γ) and the reference are computed by different code, so this ties them.
    let config = SosmpConfig {
        nodes: 6,
        coefficients: 120,
        points_per_unit: 50.0,
        ..SosmpConfig::default()
    };
    let (p, _) = build_problem(&config, &CancelFlag::default()).unwrap();
    let b = Baselines::new(&p, &CancelFlag::default()).unwrap();
    assert!(b.floor.converged);
    // e_0 is O(0.1-1); a floor of 1e-6 of it means the two fixed points agree to about 1e-3
    // per coefficient at worst. With r = 10 the same model's floor is about 1e-2 of e_0.
    assert!(
        b.floor_raw < 1e-6 * b.e0,
        "floor {} vs e0 {}",
        b.floor_raw,
        b.e0
    );
    assert!(b.truncation < 1e-6, "truncation {}", b.truncation);
}

#[test]
fn loopy_grid_reference_and_floor_converge() {
    let config = SosmpConfig {
        graph: GraphKind::Grid,
        nodes: 9,
        points_per_unit: 10.0,
        coefficients: 8,
        step_gamma: 0.9,
        ..SosmpConfig::default()
    };
    let (p, _) = build_problem(&config, &CancelFlag::default()).unwrap();
    let bp = grid_bp(&p.mrf, 1e-12, 2000, &CancelFlag::default()).unwrap();
    assert_eq!(bp.schedule, "synchronous");
    assert!(
        bp.converged,
        "grid BP residual {} after {} sweeps",
        bp.residual, bp.sweeps
    );
    let fp = expected_fixed_point(&p, 1e-12, 20_000, &CancelFlag::default()).unwrap();
    assert!(fp.converged, "expected update residual {}", fp.residual);
}

#[test]
fn kernel_potentials_report_their_clipping() {
    // At 20 points per unit (201 nodes) the grid samples the J = 1000 term kernel where its
    // fine oscillations cancel (discrete orthogonality of the sine modes), so it is nonnegative
    // up to rounding on the nodes; between the nodes α = 0.1 is negative on a large fraction
    // of pairs (about 45% of random pairs in [-5, 5]², minimum about -8), α = 1 is not.
    for (alpha, negative) in [(0.1, true), (1.0, false)] {
        let config = SosmpConfig {
            nodes: 4,
            potentials: PotentialKind::Kernel,
            alpha,
            points_per_unit: 20.0,
            ..SosmpConfig::default()
        };
        let (_, model) = build_problem(&config, &CancelFlag::default()).unwrap();
        let clip = model.kernel_clip.unwrap();
        // The kernel vanishes on the boundary (sin((2j-1)π·0) = 0), so something is always
        // clipped; α = 0.1 is far from positive (it approximates a delta function).
        assert!(clip.clipped_fraction > 0.0);
        assert_eq!(
            clip.offgrid_negative_fraction > 0.1,
            negative,
            "alpha {alpha}: {clip:?}"
        );
        // On the nodes: nothing negative beyond rounding, for either alpha.
        assert_eq!(clip.negative_fraction, 0.0, "{clip:?}");
        if negative {
            assert!(clip.offgrid_min_value < -1.0, "{clip:?}");
        } else {
            assert_eq!(clip.offgrid_negative_fraction, 0.0, "{clip:?}");
        }
        assert!(model.clip_warning(alpha).is_some());
    }
}
