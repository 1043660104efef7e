//! Per-edge gains of the expected update (the exact Jacobian blocks against central finite
//! differences of `expected_update`, and a constant edge potential's zero gain), and the
//! noise-free damped iteration against its closed form on short chains.

use std::sync::Arc;

use beliefscope::inference::sosmp::SosmpProblem;
use beliefscope::inference::sosmp::basis::{BasisKind, GridBasis};
use beliefscope::inference::sosmp::expected::{
    ExpectedScratch, expected_fixed_point, expected_update, noise_free_iteration,
};
use beliefscope::inference::sosmp::gains::{edge_gains, jacobian_block, spectral_norm};
use beliefscope::inference::sosmp::grid::{IntervalGrid, StateGrid};
use beliefscope::inference::sosmp::model::GridMrf;
use beliefscope::inference::sosmp::potentials::{
    DifferencePotential, GaussianMixture, MixtureForm,
};
use beliefscope::model::Graph;
use beliefscope::scenarios::CancelFlag;
use beliefscope::scenarios::sosmp::{GraphKind, SosmpConfig, build_problem};

#[test]
fn jacobian_blocks_match_finite_differences() {
    // A random tree (nodes of degree 3 and more: several inputs per message), eq. 37 mixtures,
    // at the expected update's fixed point and at a point away from it.
    let config = SosmpConfig {
        graph: GraphKind::Tree,
        nodes: 7,
        points_per_unit: 30.0,
        coefficients: 6,
        seed: 4,
        ..SosmpConfig::default()
    };
    let (p, _) = build_problem(&config, &CancelFlag::default()).unwrap();
    assert!((0..7).any(|v| p.mrf.graph.degree(v) >= 3));
    let r = p.r();
    let a_inf = expected_fixed_point(&p, 1e-12, 100, &CancelFlag::default())
        .unwrap()
        .coefficients;
    let shifted: Vec<f64> = a_inf
        .iter()
        .enumerate()
        .map(|(i, a)| a + 0.01 * ((i * 7 % 5) as f64 - 2.0))
        .collect();
    let g = &p.mrf.graph;
    let mut sc = ExpectedScratch::new(p.mrf.grid.len());
    let mut checked = 0;
    for a in [&a_inf, &shifted] {
        for out in 0..g.num_messages() {
            let (v, u) = (g.source(out), g.target(out));
            for nb in g.neighbors(v).iter().filter(|nb| nb.node != u) {
                let exact = jacobian_block(&p, |w| &a[w * r..(w + 1) * r], out, nb.incoming)
                    .expect("the density has mass");
                let eps = 1e-6;
                let scale = exact.iter().fold(0.0f64, |m, x| m.max(x.abs())).max(1e-3);
                for l in 0..r {
                    let (mut plus, mut minus) = (a.clone(), a.clone());
                    plus[nb.incoming * r + l] += eps;
                    minus[nb.incoming * r + l] -= eps;
                    let (mut gp, mut gm) = (vec![0.0; r], vec![0.0; r]);
                    expected_update(&p, |w| &plus[w * r..(w + 1) * r], out, &mut sc, &mut gp);
                    expected_update(&p, |w| &minus[w * r..(w + 1) * r], out, &mut sc, &mut gm);
                    for j in 0..r {
                        let fd = (gp[j] - gm[j]) / (2.0 * eps);
                        let e = exact[j * r + l];
                        // Central differences: O(eps²) truncation, O(1e-16 / eps) rounding.
                        assert!(
                            (fd - e).abs() < 1e-6 * scale,
                            "out {out} input {} ({j}, {l}): exact {e}, differences {fd}",
                            nb.incoming
                        );
                    }
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 10, "{checked} blocks");
    // The summary counts every (output, input) pair of the tree: Σ_v deg(v) (deg(v) - 1).
    let (gains, summary) = edge_gains(&p, &a_inf);
    let pairs: usize = (0..7).map(|v| g.degree(v) * (g.degree(v) - 1)).sum();
    assert_eq!(gains.len(), pairs);
    let s = summary.unwrap();
    assert_eq!(s.count, pairs);
    assert!(s.min <= s.median && s.median <= s.max);
    let block = jacobian_block(
        &p,
        |w| &a_inf[w * r..(w + 1) * r],
        gains[0].output,
        gains[0].input,
    )
    .unwrap();
    assert_eq!(gains[0].gain, spectral_norm(&block, r));
}

/// A chain of `nodes` with one node bump and one edge potential `g` everywhere.
fn chain(nodes: usize, g: impl Fn(f64) -> f64, r: usize) -> SosmpProblem<IntervalGrid> {
    let grid = IntervalGrid::with_density(-5.0, 5.0, 20.0).unwrap();
    let bump = GaussianMixture {
        weights: vec![0.6, 0.4],
        means: vec![-1.0, 2.0],
        variances: vec![0.3, 0.2],
        form: MixtureForm::Eq37,
    };
    let node_potentials: Vec<f64> = (0..nodes).flat_map(|_| bump.on_grid(&grid)).collect();
    let pair = Arc::new(DifferencePotential::new(&grid, g, serde_json::Value::Null));
    let mrf = GridMrf {
        graph: Graph::chain(nodes).unwrap(),
        grid: grid.clone(),
        node_potentials: node_potentials.into(),
        edge_potential: vec![0; nodes - 1],
        pair_potentials: vec![pair],
    };
    let basis = GridBasis::on_interval(BasisKind::Fourier, r, &grid).unwrap();
    SosmpProblem::new(mrf, basis, &CancelFlag::default()).unwrap()
}

#[test]
fn a_constant_edge_potential_passes_nothing_on() {
    // ψ_uv ≡ 1: γ_j(y) = ∫ φ_j / L does not depend on y, so G is constant and every gain is 0
    // (the same chain with a bump edge potential has gains of order 0.1-1).
    let flat = chain(5, |_| 1.0, 7);
    let a: Vec<f64> = (0..flat.num_messages() * 7)
        .map(|i| 0.05 + 0.01 * (i % 3) as f64)
        .collect();
    let (gains, summary) = edge_gains(&flat, &a);
    assert_eq!(gains.len(), 6);
    assert!(summary.unwrap().max < 1e-13, "{gains:?}");
    let bumpy = chain(5, |d| (-d * d / 0.5).exp(), 7);
    let a_inf = expected_fixed_point(&bumpy, 1e-12, 100, &CancelFlag::default())
        .unwrap()
        .coefficients;
    assert!(edge_gains(&bumpy, &a_inf).1.unwrap().median > 0.05);
}

#[test]
fn noise_free_iteration_has_its_closed_form_on_short_chains() {
    // η_0 = 1, so a_1 = G(a_0) and a leaf's message (no inputs) is exact from t = 1: on two
    // nodes the distance is 0 from then on. On three, the middle node's messages see exact
    // inputs from t = 1, so a_{t+1} = (t a_t + a_∞) / (t + 1), a_t = a_∞ + (G(a_0) - a_∞) / t,
    // and the distance is ‖G(a_0) - a_∞‖² / t² (averaged over the 4 messages): the noise-free
    // transient of depth 2 falls like t^-2, not t^-1.
    let cancel = CancelFlag::default();
    let two = chain(2, |d| (-d * d / 0.5).exp(), 7);
    let a_inf = expected_fixed_point(&two, 1e-12, 100, &cancel)
        .unwrap()
        .coefficients;
    let d = noise_free_iteration(&two, &a_inf, 1.0, 20, &cancel).unwrap();
    assert!(d.iter().all(|&x| x < 1e-28), "{d:?}");

    let three = chain(3, |d| (-d * d / 0.5).exp(), 7);
    let r = 7;
    let a_inf = expected_fixed_point(&three, 1e-12, 100, &cancel)
        .unwrap()
        .coefficients;
    let a0 = vec![1.0 / r as f64; three.num_messages() * r];
    let g = &three.mrf.graph;
    let mut sc = ExpectedScratch::new(three.mrf.grid.len());
    let mut first = 0.0;
    for (from, to) in [(1, 0), (1, 2)] {
        let m = g.message_between(from, to).unwrap();
        let mut out = vec![0.0; r];
        expected_update(&three, |w| &a0[w * r..(w + 1) * r], m, &mut sc, &mut out);
        first += out
            .iter()
            .zip(&a_inf[m * r..(m + 1) * r])
            .map(|(x, y)| (x - y) * (x - y))
            .sum::<f64>();
    }
    first /= 4.0;
    assert!(first > 1e-4, "a_0 should be far from a_inf: {first}");
    let d = noise_free_iteration(&three, &a_inf, 1.0, 50, &cancel).unwrap();
    for (t, &x) in d.iter().enumerate() {
        let t = (t + 1) as f64;
        assert!(
            (x * t * t - first).abs() < 1e-12 * first,
            "t = {t}: {x} against {}",
            first / (t * t)
        );
    }
}
