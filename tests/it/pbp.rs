//! Predictive BP (Wang & Gordon, AAAI 2020) against the independent references of spec
//! `predictive_bp.md` P.3: exact enumeration of the stand-in model, the population learner, EM.

use beliefscope::inference::pbp::em::{EmSettings, em, em_restarts};
use beliefscope::inference::pbp::exact::{ObservedJoint, kl_divergence, next_state};
use beliefscope::inference::pbp::features::{DiscreteSamples, TrainingData};
use beliefscope::inference::pbp::two_stage::stage_one_a;
use beliefscope::inference::pbp::{PbpModel, PbpSettings};
use beliefscope::model::latent_dag::{BayesNet, LatentDag, synthetic_stand_in};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn stand_in(loop_free: bool, seed: u64) -> BayesNet {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    BayesNet::random(synthetic_stand_in(loop_free), 1.0, &mut rng).unwrap()
}

/// Every evidence assignment over the observed variables (each unobserved or one value).
fn all_evidence(dag: &LatentDag) -> Vec<Vec<Option<usize>>> {
    let obs = dag.observed();
    let radix: Vec<usize> = obs.iter().map(|&v| dag.cardinality(v) + 1).collect();
    let mut digits = vec![0usize; obs.len()];
    let mut out = Vec::new();
    loop {
        let mut ev = vec![None; dag.len()];
        for (k, &v) in obs.iter().enumerate() {
            ev[v] = digits[k].checked_sub(1);
        }
        out.push(ev);
        if !next_state(&mut digits, &radix) {
            return out;
        }
    }
}

/// Spec P.3 test 1: population PBP reproduces every query of the stand-in to 1e-9, P̂(∅) = 1.
#[test]
fn population_pbp_equals_enumeration() {
    for loop_free in [false, true] {
        for seed in [1, 2, 3] {
            let net = stand_in(loop_free, seed);
            let joint = ObservedJoint::of(&net).unwrap();
            let data = TrainingData::population(&joint);
            let settings = PbpSettings {
                lambda1: 0.0,
                ..PbpSettings::default()
            };
            let model = PbpModel::learn(&net.dag, &data, &settings).unwrap();
            let mut worst: f64 = 0.0;
            let mut clipped = 0;
            let mut queries = 0;
            for ev in all_evidence(&net.dag) {
                for q in net.dag.observed() {
                    if ev[q].is_some() {
                        continue;
                    }
                    let got = model.query(&ev, q).unwrap();
                    let (want, pe) = joint.posterior(q, &ev);
                    for (a, b) in got.dist.iter().zip(&want) {
                        worst = worst.max((a - b).abs());
                    }
                    assert!(
                        (got.p_evidence - pe).abs() <= 1e-10 * pe.max(1e-300) + 1e-15,
                        "P(e) {} vs {pe}",
                        got.p_evidence
                    );
                    clipped += got.clipped;
                    queries += 1;
                }
            }
            assert!(
                worst < 1e-9,
                "loop_free {loop_free} seed {seed}: max |Δ| = {worst:e}"
            );
            assert_eq!(clipped, 0, "population queries clipped entries");
            assert_eq!(queries, 1280, "5 · 4⁴ queries");
            eprintln!("loop_free {loop_free} seed {seed}: max |Δ| = {worst:e}");
            let none = vec![None; net.dag.len()];
            let q = model.query(&none, net.dag.observed()[0]).unwrap();
            assert!(
                (q.p_evidence - 1.0).abs() < 1e-10,
                "P(∅) = {}",
                q.p_evidence
            );
        }
    }
}
