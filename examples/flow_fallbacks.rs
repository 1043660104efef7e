//! Diagnostic: why SOSMP's sampling density is zero over the whole box on a real pair.
//! For every message of every iteration at one pyramid level, recomputes the density
//! `β Π m̂` from the coefficients the engine sampled with and sorts the zero ones into
//! "the clipped incoming messages have disjoint supports" (their product is exactly zero) and
//! "underflow" (the product is positive somewhere but β times it is not).
//!
//! `cargo run --release --example flow_fallbacks -- FRAME1 FRAME2 LEVEL` runs the default model
//! at pyramid level LEVEL (0 = full size) with the engine's uncapped step (as before the cap).
//! On RubberWhale's level 2 every zero density was of the first kind (disjoint supports).
use std::sync::Arc;

use beliefscope::inference::Inference;
use beliefscope::inference::sosmp::Sosmp;
use beliefscope::inference::sosmp::flow::{flow_problem, uniform_start};
use beliefscope::inference::sosmp::grid::StateGrid;
use beliefscope::model::flow::{FlowEvidence, FlowMrf, downsample2};
use beliefscope::scenarios::CancelFlag;
use beliefscope::scenarios::flow::FlowConfig;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut a = beliefscope::io::load_gray(std::path::Path::new(&args[1])).unwrap();
    let mut b = beliefscope::io::load_gray(std::path::Path::new(&args[2])).unwrap();
    let level: usize = args[3].parse().unwrap();
    for _ in 0..level {
        a = downsample2(&a);
        b = downsample2(&b);
    }
    let c = FlowConfig::default();
    let ev = FlowEvidence::new(&a, &b, c.labels().unwrap(), c.sigma_data, None).unwrap();
    let mrf = FlowMrf::new(ev, c.sigma_smooth).unwrap();
    let problem = Arc::new(flow_problem(&mrf, 3, &CancelFlag::default()).unwrap());
    let start = uniform_start(&problem);
    let mut s = Sosmp::with_start(problem.clone(), c.sosmp_params(), &start).unwrap();
    let n = problem.mrf.grid.len();
    let g = &problem.mrf.graph;
    for it in 0..c.iters {
        let before = s.fallbacks();
        // Coefficients the next step samples with.
        let coeffs = s.coefficients_by_message(0);
        s.step().unwrap();
        let fb = s.fallbacks() - before;
        let (mut disjoint, mut underflow, mut psi_zero) = (0, 0, 0);
        let r = problem.r();
        let mut eval = vec![0.0; n];
        let mut prod = vec![0.0; n];
        let mut psi = vec![0.0; n];
        for m in 0..g.num_messages() {
            let (v, u) = (g.source(m), g.target(m));
            prod.iter_mut().for_each(|p| *p = 1.0);
            for nb in g.neighbors(v) {
                if nb.node == u {
                    continue;
                }
                problem
                    .basis
                    .evaluate_clipped(&coeffs[nb.incoming * r..(nb.incoming + 1) * r], &mut eval);
                prod.iter_mut().zip(&eval).for_each(|(p, e)| *p *= e);
            }
            let p = problem.mrf.node_potential_into(v, &mut psi).to_vec();
            let z = problem.tables.normaliser(m);
            let mut mass = 0.0;
            let mut prod_mass = 0.0;
            let mut psi_mass = 0.0;
            // Cell masses as the sampler forms them (a quarter of the cell area per corner).
            let (nx, ny) = problem.mrf.grid.shape();
            let q = 0.25 * problem.mrf.grid.volume() / ((nx - 1) * (ny - 1)) as f64;
            for cy in 0..ny - 1 {
                for cx in 0..nx - 1 {
                    let i0 = cy * nx + cx;
                    for i in [i0, i0 + 1, i0 + nx, i0 + nx + 1] {
                        mass += q * p[i] * z[i] * prod[i];
                        prod_mass += prod[i];
                        psi_mass += p[i] * prod[i];
                    }
                }
            }
            if mass <= 0.0 || mass.is_nan() {
                if prod_mass == 0.0 {
                    disjoint += 1;
                } else if psi_mass == 0.0 {
                    psi_zero += 1;
                } else {
                    underflow += 1;
                }
            }
        }
        println!(
            "iter {it}: fallbacks {fb} / {}: disjoint clipped supports {disjoint}, psi*prod zero {psi_zero}, other underflow {underflow}",
            g.num_messages()
        );
    }
}
