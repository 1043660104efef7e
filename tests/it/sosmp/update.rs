//! The SOSMP update itself: unbiasedness of b, a_t as the running mean of the b's, the mass
//! invariant of a constant φ_1, and independence from the thread count.

use std::sync::Arc;

use beliefscope::inference::Inference;
use beliefscope::inference::sosmp::basis::BasisKind;
use beliefscope::inference::sosmp::expected::{ExpectedScratch, expected_update};
use beliefscope::inference::sosmp::grid::{IntervalGrid, StateGrid};
use beliefscope::inference::sosmp::update::{PathState, PathStep, sampling_density, step_path};
use beliefscope::inference::sosmp::{Sosmp, SosmpProblem};
use beliefscope::scenarios::CancelFlag;
use beliefscope::scenarios::sosmp::{SosmpConfig, build_problem};

fn problem(config: &SosmpConfig) -> Arc<SosmpProblem<IntervalGrid>> {
    Arc::new(build_problem(config, &CancelFlag::default()).unwrap().0)
}

/// A non-trivial coefficient state: what one path reaches after 30 iterations (message order).
fn warm_coefficients(p: &Arc<SosmpProblem<IntervalGrid>>) -> Vec<f64> {
    let config = SosmpConfig::default();
    let params = SosmpConfig { paths: 1, ..config }.params();
    let mut e = Sosmp::new(p.clone(), params).unwrap();
    for _ in 0..30 {
        e.step().unwrap();
    }
    e.coefficients_by_message(0)
}

#[test]
fn b_is_unbiased_for_the_grid_integral_of_gamma() {
    // The default grid (1001 points), and a coarse one (101 points) on which a table look-up
    // one cell off moves the mean of b by h γ' ≈ 0.01, about 10 standard errors.
    for points_per_unit in [100.0, 10.0] {
        check_unbiased(points_per_unit);
    }
}

fn check_unbiased(points_per_unit: f64) {
    // A 4-node chain; every message is checked.
    let config = SosmpConfig {
        nodes: 4,
        coefficients: 6,
        points_per_unit,
        ..SosmpConfig::default()
    };
    let p = problem(&config);
    let (r, n) = (p.r(), p.mrf.grid.len());
    let a = warm_coefficients(&p);
    let messages = p.num_messages();
    // Draws: 12000 independent updates with eta = 1 (so a_{t+1} = b), k = 5 each, from the
    // same state a; every (path, iteration) pair is a separate random stream.
    let draws = 12_000;
    let k = 5;
    let mut sum = vec![0.0; messages * r];
    let mut sum_sq = vec![0.0; messages * r];
    let mut state = PathState::new(messages, r, k);
    for d in 0..draws {
        for m in 0..messages {
            let s = p.layout.slot_of[m];
            state.coeffs[s * r..(s + 1) * r].copy_from_slice(&a[m * r..(m + 1) * r]);
        }
        let step = PathStep {
            seed: 7,
            samples: k,
            path: d,
            iteration: 0,
            eta: 1.0,
            interrupt: None,
        };
        step_path(&p, step, &mut state).unwrap();
        for m in 0..messages {
            let s = p.layout.slot_of[m];
            for j in 0..r {
                let b = state.last_b[s * r + j];
                sum[m * r + j] += b;
                sum_sq[m * r + j] += b * b;
            }
        }
    }
    let weights = p.mrf.grid.weights().to_vec();
    let h = p.mrf.grid.spacing();
    let mut sc = ExpectedScratch::new(n);
    let mut exact = vec![0.0; r];
    let mut eval = vec![0.0; n];
    let mut density = vec![0.0; n];
    for m in 0..messages {
        expected_update(&p, |w| &a[w * r..(w + 1) * r], m, &mut sc, &mut exact);
        // The trapezoid integral of γ_j against the normalised density, computed here.
        sampling_density(&p, |w| &a[w * r..(w + 1) * r], m, &mut eval, &mut density);
        let z: f64 = density.iter().zip(&weights).map(|(d, w)| d * w).sum();
        let gamma = p.tables.gamma(m);
        for j in 0..r {
            let mean = sum[m * r + j] / draws as f64;
            let var = sum_sq[m * r + j] / draws as f64 - mean * mean;
            let se = (var.max(0.0) / draws as f64).sqrt();
            // 4.5 standard errors: a false alarm has probability ~1e-5 per coefficient (72
            // here); a wrong table row, a shifted cell or the wrong message in the density moves
            // the mean by 0.01-0.1, i.e. 10-100 standard errors (se is about 1e-3).
            assert!(
                (mean - exact[j]).abs() < 4.5 * se + 1e-12,
                "message {m} coefficient {j}: mean of b {mean} vs exact expectation {}, se {se}",
                exact[j]
            );
            let trapezoid: f64 = (0..n)
                .map(|i| weights[i] * density[i] * gamma[i * r + j])
                .sum::<f64>()
                / z;
            // The sampler's cell rule differs from the trapezoid rule by exactly
            // (h/4) Σ (p_{i+1} - p_i)(γ_{i+1} - γ_i) / Z, an O(h²) term; allow that much.
            let discretisation: f64 = (0..n - 1)
                .map(|i| {
                    ((density[i + 1] - density[i]) * (gamma[(i + 1) * r + j] - gamma[i * r + j]))
                        .abs()
                })
                .sum::<f64>()
                * h
                / 4.0
                / z;
            assert!(
                (mean - trapezoid).abs() < 4.5 * se + discretisation + 1e-12,
                "message {m} coefficient {j}: mean of b {mean} vs trapezoid integral {trapezoid}"
            );
            assert!(
                discretisation < 1e-2,
                "the cell rule is O(h²): {discretisation}"
            );
        }
    }
}

#[test]
fn a_t_is_the_running_mean_of_the_bs() {
    let config = SosmpConfig {
        nodes: 6,
        paths: 2,
        points_per_unit: 30.0,
        ..SosmpConfig::default()
    };
    let p = problem(&config);
    let r = p.r();
    let mut e = Sosmp::new(p.clone(), config.params()).unwrap();
    let m_total = p.num_messages();
    let mut sums = vec![0.0; 2 * m_total * r];
    for t in 1..=200 {
        e.step().unwrap();
        for path in 0..2 {
            for m in 0..m_total {
                let b = e.last_b(path, m);
                let a = e.coefficients(path, m);
                for j in 0..r {
                    let s = &mut sums[(path * m_total + m) * r + j];
                    *s += b[j];
                    // Exact in real arithmetic; the recursive average and the plain sum round
                    // differently by a few ulps per step (values are O(0.3)).
                    assert!(
                        (a[j] - *s / t as f64).abs() < 1e-12,
                        "t {t} path {path} message {m} j {j}: {} vs {}",
                        a[j],
                        *s / t as f64
                    );
                }
            }
        }
    }
}

#[test]
fn a_constant_first_basis_function_keeps_the_mass() {
    for basis in [BasisKind::Fourier, BasisKind::Cosine, BasisKind::Legendre] {
        let config = SosmpConfig {
            nodes: 8,
            paths: 3,
            basis: Some(basis),
            graph: beliefscope::scenarios::sosmp::GraphKind::Tree,
            points_per_unit: 40.0,
            ..SosmpConfig::default()
        };
        let p = problem(&config);
        let target = 1.0 / p.mrf.grid.volume().sqrt();
        let mut e = Sosmp::new(p.clone(), config.params()).unwrap();
        for _ in 0..25 {
            e.step().unwrap();
            for path in 0..3 {
                for m in 0..p.num_messages() {
                    let a1 = e.coefficients(path, m)[0];
                    // γ_1(y) = Σ_i w_i Γ(x_i, y) / √L and Σ_i w_i Γ(x_i, y) = 1 on the grid by
                    // construction of Z, so only rounding remains.
                    assert!(
                        (a1 - target).abs() < 1e-13,
                        "{basis:?}: a_1 = {a1}, 1/sqrt(L) = {target}"
                    );
                }
            }
        }
    }
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let config = SosmpConfig {
        nodes: 12,
        paths: 3,
        points_per_unit: 30.0,
        graph: beliefscope::scenarios::sosmp::GraphKind::Tree,
        ..SosmpConfig::default()
    };
    let p = problem(&config);
    let run = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                let mut e = Sosmp::new(p.clone(), config.params()).unwrap();
                for _ in 0..15 {
                    e.step().unwrap();
                }
                (0..3)
                    .flat_map(|path| e.coefficients_by_message(path))
                    .collect::<Vec<f64>>()
            })
    };
    assert_eq!(run(1), run(3));
}
