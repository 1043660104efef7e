//! Discrete BP against brute-force enumeration (independent reference): on trees sum-product is
//! exact, so marginals must agree to 1e-10 for both schedules; on a loopy grid it must run,
//! converge with damping and report residuals.

use beliefscope::inference::discrete::{DiscreteBp, DiscreteMrf, EdgePotentials};
use beliefscope::inference::{Belief, Damping, EstimateKind, Inference, Schedule};
use beliefscope::model::Graph;
use beliefscope::scenarios::denoise::potentials::pseudo_moment_tables;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use strum::VariantArray;

fn random_mrf(graph: Graph, states: usize, seed: u64) -> DiscreteMrf {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = graph.num_nodes();
    let node_potentials = (0..n * states)
        .map(|_| rng.random_range(0.05..1.0))
        .collect();
    let tables = (0..graph.num_edges())
        .map(|_| {
            (0..states * states)
                .map(|_| rng.random_range(0.05..2.0))
                .collect()
        })
        .collect();
    DiscreteMrf {
        graph,
        state_values: (0..states).map(|s| s as f64).collect(),
        node_potentials,
        edge_potentials: EdgePotentials::PerEdge(tables),
    }
}

/// Exact marginals by summing the joint over all S^n configurations.
fn enumerate_marginals(mrf: &DiscreteMrf) -> Vec<Vec<f64>> {
    let n = mrf.graph.num_nodes();
    let s = mrf.num_states();
    let EdgePotentials::PerEdge(tables) = &mrf.edge_potentials else {
        unreachable!()
    };
    let mut marg = vec![vec![0.0; s]; n];
    let mut config = vec![0usize; n];
    for code in 0..s.pow(n as u32) {
        let mut c = code;
        for x in config.iter_mut() {
            *x = c % s;
            c /= s;
        }
        let mut p = 1.0;
        for (t, &x) in config.iter().enumerate() {
            p *= mrf.node_potentials[t * s + x];
        }
        for (e, &(a, b)) in mrf.graph.edges().iter().enumerate() {
            p *= tables[e][config[a] * s + config[b]];
        }
        for (t, &x) in config.iter().enumerate() {
            marg[t][x] += p;
        }
    }
    for m in &mut marg {
        let z: f64 = m.iter().sum();
        m.iter_mut().for_each(|v| *v /= z);
    }
    marg
}

fn probs(b: Belief) -> Vec<f64> {
    match b {
        Belief::Discrete { probs, .. } => probs,
        other => panic!("expected a discrete belief, got {other:?}"),
    }
}

#[test]
fn tree_marginals_match_enumeration() {
    let trees = [
        Graph::chain(8).unwrap(),
        Graph::star(7).unwrap(),
        Graph::balanced_tree(2, 2).unwrap(),
        Graph::random_tree(8, 3).unwrap(),
        Graph::from_edges(5, &[(3, 1), (1, 4), (0, 4), (2, 0)]).unwrap(),
    ];
    for (k, graph) in trees.into_iter().enumerate() {
        let mrf = random_mrf(graph, 3, 100 + k as u64);
        let exact = enumerate_marginals(&mrf);
        for &schedule in Schedule::VARIANTS {
            for damping in [0.0, 0.3] {
                let mut bp = DiscreteBp::new(mrf.clone(), schedule, Damping(damping)).unwrap();
                for _ in 0..200 {
                    if bp.step().unwrap().residual < 1e-14 {
                        break;
                    }
                }
                for (t, ex) in exact.iter().enumerate() {
                    let b = probs(bp.belief(t));
                    for (x, (got, want)) in b.iter().zip(ex).enumerate() {
                        assert!(
                            (got - want).abs() < 1e-10,
                            "tree {k}, {schedule:?}, damping {damping}: node {t} state {x}: BP {got} vs exact {want}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn loopy_grid_converges_with_damping() {
    let mrf = random_mrf(Graph::grid(6, 5).unwrap(), 3, 9);
    for &schedule in Schedule::VARIANTS {
        let mut bp = DiscreteBp::new(mrf.clone(), schedule, Damping(0.5)).unwrap();
        let residuals: Vec<f64> = (0..300).map(|_| bp.step().unwrap().residual).collect();
        assert!(residuals.iter().all(|r| r.is_finite()));
        assert!(
            residuals[299] < 1e-8,
            "{schedule:?}: final residual {}",
            residuals[299]
        );
        assert!(residuals[299] < residuals[0]);
        let est = bp.estimates(EstimateKind::Mean);
        assert_eq!(est.values.len(), 30);
        assert!(est.values.iter().all(|v| (0.0..=2.0).contains(v)));
    }
}

#[test]
fn zero_potentials_stop_with_an_error() {
    let mut mrf = random_mrf(Graph::chain(3).unwrap(), 2, 1);
    mrf.node_potentials[0] = 0.0;
    mrf.node_potentials[1] = 0.0;
    let mut bp = DiscreteBp::new(mrf, Schedule::Synchronous, Damping(0.0)).unwrap();
    let err = bp.step().unwrap_err().to_string();
    assert!(err.contains("diverged at iteration 1"), "{err}");
}

#[test]
fn bad_inputs_are_refused() {
    let mut mrf = random_mrf(Graph::chain(3).unwrap(), 2, 1);
    mrf.node_potentials[2] = f64::NAN;
    let err = DiscreteBp::new(mrf, Schedule::Synchronous, Damping(0.0))
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("node 1 state 0"), "{err}");
    let mrf = random_mrf(Graph::chain(3).unwrap(), 2, 1);
    let err = DiscreteBp::new(mrf, Schedule::Synchronous, Damping(1.5))
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("damping"), "{err}");
}

/// One table shared by every edge goes through the batched update (matrix products, and for up
/// to 16 states the register kernel); the same table given per edge goes message by message.
/// Both must send the same messages, with the same changes, for every state count around the
/// register widths, symmetric or not, ordinary or tree-reweighted.
/// The batched synchronous step with `table` shared sends, over four iterations, the messages
/// (and changes) of the message-by-message update with the table given per edge.
fn assert_shared_table_sends_per_edge_messages(
    base: &DiscreteMrf,
    table: &[f64],
    rho: f64,
    label: &str,
) {
    let graph = &base.graph;
    let shared = DiscreteMrf {
        edge_potentials: EdgePotentials::Shared(table.to_vec()),
        ..base.clone()
    };
    let per_edge = DiscreteMrf {
        edge_potentials: EdgePotentials::PerEdge(vec![table.to_vec(); graph.num_edges()]),
        ..base.clone()
    };
    let run = |mrf: DiscreteMrf| {
        DiscreteBp::new(mrf, Schedule::Synchronous, Damping(0.3))
            .unwrap()
            .with_edge_appearance(rho)
            .unwrap()
    };
    let (mut batched, mut reference) = (run(shared), run(per_edge));
    for iteration in 1..=4 {
        let (a, b) = (batched.step().unwrap(), reference.step().unwrap());
        let at = format!("{label}, iteration {iteration}");
        assert!((a.residual - b.residual).abs() < 1e-12, "{at}: residual");
        for m in 0..graph.num_messages() {
            for (x, y) in batched.message(m).iter().zip(reference.message(m)) {
                assert!((x - y).abs() < 1e-12, "{at}, message {m}: {x} against {y}");
            }
        }
        let (ca, cb) = (
            batched.message_changes().unwrap(),
            reference.message_changes().unwrap(),
        );
        for m in 0..graph.num_messages() {
            assert!(
                (ca.change[m] - cb.change[m]).abs() < 1e-12,
                "{at}: change {m}"
            );
            assert!(
                (ca.signed[m] - cb.signed[m]).abs() < 1e-12,
                "{at}: signed {m}"
            );
        }
    }
}

/// Tables that are scaled constants plus a few lines (smoothed pseudo-moments, Potts, truncated
/// linear, and one scaled apart on rows and columns) take the batched step's product by lines:
/// it sends the messages of the dense update.
#[test]
fn tables_of_a_floor_and_a_few_lines_send_the_messages_of_the_dense_update() {
    let graph = Graph::grid(6, 5).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(77);
    for states in [20, 33, 50] {
        let base = random_mrf(graph.clone(), states, 90 + states as u64);
        // A smooth training image: a slow ramp of levels with a few jumps.
        let (w, h) = (40, 30);
        let training: Vec<usize> = (0..w * h)
            .map(|p| {
                let ramp = (p % w + p / w) * (states - 1) / (w + h - 2);
                if rng.random_range(0.0..1.0) < 0.03 {
                    0
                } else {
                    ramp
                }
            })
            .collect();
        let (pseudo_moments, _) = pseudo_moment_tables(&training, w, h, states);
        let potts: Vec<f64> = (0..states * states)
            .map(|k| if k / states == k % states { 2.5 } else { 0.4 })
            .collect();
        let truncated: Vec<f64> = (0..states * states)
            .map(|k| (-0.5 * (k / states).abs_diff(k % states).min(2) as f64).exp())
            .collect();
        let row_scale: Vec<f64> = (0..states).map(|_| rng.random_range(0.5..2.0)).collect();
        let apart: Vec<f64> = (0..states * states)
            .map(|k| row_scale[k / states] * truncated[k])
            .collect();
        for (name, table) in [
            ("pseudo-moments", pseudo_moments),
            ("Potts", potts),
            ("truncated linear", truncated),
            ("scaled rows", apart),
        ] {
            for rho in [1.0, 0.6] {
                let at = format!("{name}, S = {states}, ρ = {rho}");
                assert_shared_table_sends_per_edge_messages(&base, &table, rho, &at);
            }
        }
    }
}

#[test]
fn a_shared_table_sends_the_messages_of_the_message_by_message_update() {
    let graph = Graph::grid(7, 5).unwrap();
    for states in [1, 2, 3, 4, 5, 7, 8, 10, 13, 16, 17, 24] {
        let base = random_mrf(graph.clone(), states, 40 + states as u64);
        let EdgePotentials::PerEdge(tables) = &base.edge_potentials else {
            unreachable!()
        };
        let asymmetric = tables[0].clone();
        let symmetric: Vec<f64> = (0..states * states)
            .map(|k| asymmetric[k] + asymmetric[(k % states) * states + k / states])
            .collect();
        for table in [symmetric, asymmetric] {
            for rho in [1.0, 0.6] {
                let at = format!("S = {states}, ρ = {rho}");
                assert_shared_table_sends_per_edge_messages(&base, &table, rho, &at);
            }
        }
    }
}

/// An engine built sharing another's prepared table sends the messages of one built on its own,
/// both when the tables match and when they differ (the other's is then not taken).
#[test]
fn sharing_a_prepared_table_sends_the_messages_of_a_fresh_engine() {
    let graph = Graph::grid(6, 5).unwrap();
    let states = 24;
    let base = random_mrf(graph.clone(), states, 5);
    let potts = |diagonal: f64| -> Vec<f64> {
        (0..states * states)
            .map(|k| {
                if k / states == k % states {
                    diagonal
                } else {
                    0.4
                }
            })
            .collect()
    };
    let with_table = |table: Vec<f64>, seed: u64| DiscreteMrf {
        edge_potentials: EdgePotentials::Shared(table),
        node_potentials: random_mrf(graph.clone(), states, seed).node_potentials,
        ..base.clone()
    };
    let other = DiscreteBp::new(
        with_table(potts(2.5), 1),
        Schedule::Synchronous,
        Damping(0.3),
    )
    .unwrap();
    for table in [potts(2.5), potts(6.0)] {
        let mrf = with_table(table, 2);
        let mut fresh = DiscreteBp::new(mrf.clone(), Schedule::Synchronous, Damping(0.3)).unwrap();
        let mut sharing =
            DiscreteBp::sharing_table_with(mrf, Schedule::Synchronous, Damping(0.3), &other)
                .unwrap();
        for _ in 0..3 {
            fresh.step().unwrap();
            sharing.step().unwrap();
        }
        for m in 0..graph.num_messages() {
            assert_eq!(fresh.message(m), sharing.message(m), "message {m}");
        }
    }
}
