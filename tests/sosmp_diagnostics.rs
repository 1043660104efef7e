//! Diagnostics behind the convergence numbers, not checks: run with
//! `cargo test --release --test sosmp_diagnostics -- --ignored --nocapture`.
//!
//! SOSMP's `1/(t+1)` steps give `E‖a_t - a_∞‖² ~ 1/t` only once the linearised expected update
//! has contracted the errors flowing in from upstream; on a tree the Jacobian is nilpotent, so
//! this always happens eventually, but the constant grows like the product of the per-edge gains
//! along a path. These tests print those gains on the default chain and the fitted slope
//! against the chain length.

use beliefscope::inference::sosmp::expected::{ExpectedScratch, expected_update};
use beliefscope::inference::sosmp::grid::StateGrid;
use beliefscope::scenarios::sosmp::{SosmpConfig, SosmpScenario};
use beliefscope::scenarios::{CancelFlag, Scenario};
use nalgebra::DMatrix;

#[test]
#[ignore = "diagnostic: prints the per-edge gains of the expected update"]
fn edge_gains_of_the_default_chain() {
    let config = SosmpConfig {
        iters: 1,
        ..SosmpConfig::default()
    };
    let s = SosmpScenario::new(config, &CancelFlag::default()).unwrap();
    let p = s.problem();
    let r = p.r();
    let a = s.baselines().floor.coefficients.clone();
    let g = &p.mrf.graph;
    let mut sc = ExpectedScratch::new(p.mrf.grid.len());
    let mut gains = Vec::new();
    // ∂G_{v -> v+1} / ∂a_{v-1 -> v} at a_∞ by central differences; its largest singular value.
    for v in 1..g.num_nodes() - 1 {
        let out = g.message_between(v, v + 1).unwrap();
        let inp = g.message_between(v - 1, v).unwrap();
        let mut jac = DMatrix::<f64>::zeros(r, r);
        let eps = 1e-6;
        for j in 0..r {
            let mut plus = a.clone();
            plus[inp * r + j] += eps;
            let mut minus = a.clone();
            minus[inp * r + j] -= eps;
            let (mut gp, mut gm) = (vec![0.0; r], vec![0.0; r]);
            expected_update(p, |w| &plus[w * r..(w + 1) * r], out, &mut sc, &mut gp);
            expected_update(p, |w| &minus[w * r..(w + 1) * r], out, &mut sc, &mut gm);
            for i in 0..r {
                jac[(i, j)] = (gp[i] - gm[i]) / (2.0 * eps);
            }
        }
        gains.push(jac.singular_values()[0]);
    }
    gains.sort_by(|x, y| x.partial_cmp(y).unwrap());
    let q = |f: f64| gains[((gains.len() - 1) as f64 * f) as usize];
    let geo = (gains.iter().map(|x| x.ln()).sum::<f64>() / gains.len() as f64).exp();
    println!(
        "gain of v -> v+1 with respect to v-1 -> v (spectral norm, coefficient space): \
         min {:.3} q25 {:.3} median {:.3} q75 {:.3} max {:.3}, geometric mean {geo:.3}",
        q(0.0),
        q(0.25),
        q(0.5),
        q(0.75),
        q(1.0)
    );
}

#[test]
#[ignore = "diagnostic: prints the fitted slope for chains of 10, 30 and 100 nodes"]
fn slope_against_chain_length() {
    for nodes in [10, 30, 100] {
        let config = SosmpConfig {
            nodes,
            ..SosmpConfig::default()
        };
        let mut s = SosmpScenario::new(config, &CancelFlag::default()).unwrap();
        while !s.finished() {
            s.step().unwrap();
        }
        println!(
            "chain n = {nodes:3}: floor e(a_inf)/e_0 = {:.4e}, final mean e_T/e_0 = {:.4e}, slope {:?}",
            s.floor(),
            s.curves().mean.last().unwrap(),
            s.slope()
        );
    }
}
