//! The small models teaching mode steps through, with a layout for the canvas.
//!
//! * chain, tree, grid: `states` labels per variable, node potentials
//!   `φ_t(x) = exp(field · z)` with `z ~ N(0, 1)` (seeded), and the Potts table
//!   `ψ(i, j) = exp(coupling)` when `i = j`, else 1, on every edge;
//! * the predictive-BP stand-in (our stand-in for the synthetic model of Wang & Gordon 2020,
//!   Fig. 4: `latent_dag::synthetic_stand_in` in its loop-free form, so every factor is
//!   pairwise): CPTs drawn from Dirichlet(1) (seeded),
//!   one joint sample fixes the observed D..H as evidence (one-hot node potentials), the root's
//!   prior is its node potential and each CPT `P(child | parent)` is the table of its edge.
//!   Latent variables have 2 states and observed ones 3, so 2-state nodes are padded to 3 with
//!   zero potential (see [`crate::inference::message_stepper`]).
//!
//! Cost: O(n · S + |E| · S²).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

use super::config::{TeachConfig, TeachGraph};
use crate::error::Result;
use crate::inference::discrete::{DiscreteMrf, EdgePotentials};
use crate::model::latent_dag::{BayesNet, synthetic_stand_in};
use crate::model::{Graph, NodeId};

/// A model with its drawing: node names, positions in the unit square, real states per node.
#[derive(Debug, Clone)]
pub struct TeachModel {
    pub mrf: DiscreteMrf,
    pub cards: Vec<usize>,
    pub names: Vec<String>,
    /// `(x, y)` in `[0, 1]²`, y down.
    pub positions: Vec<(f64, f64)>,
    /// What the model is, in one line (for the window and results.json).
    pub description: String,
}

/// A graph with its drawing and which variables are observed (the stand-in's D..H).
#[derive(Debug, Clone)]
pub struct Shape {
    pub graph: Graph,
    pub names: Vec<String>,
    /// `(x, y)` in `[0, 1]²`, y down.
    pub positions: Vec<(f64, f64)>,
    pub observed: Vec<bool>,
}

/// The graph of `config.graph`, drawn: the same for every kind of message.
pub fn shape(config: &TeachConfig) -> Result<Shape> {
    let (graph, positions, names, observed) = match config.graph {
        TeachGraph::Chain => {
            let g = Graph::chain(6)?;
            (
                g,
                (0..6).map(|i| (i as f64 / 5.0, 0.5)).collect(),
                None,
                None,
            )
        }
        TeachGraph::Tree => {
            let g = Graph::balanced_tree(2, 2)?;
            let positions = tree_layout(&g, 0);
            (g, positions, None, None)
        }
        TeachGraph::Grid => {
            let g = Graph::grid(3, 3)?;
            let positions = (0..9)
                .map(|i| ((i % 3) as f64 / 2.0, (i / 3) as f64 / 2.0))
                .collect();
            (g, positions, None, None)
        }
        TeachGraph::Pbp => {
            let dag = synthetic_stand_in(true);
            let n = dag.len();
            let graph = Graph::from_edges(n, dag.edges())?;
            let root = (0..n).find(|&v| dag.parents(v).is_empty()).unwrap_or(0);
            let names = dag.nodes().iter().map(|d| d.name.clone()).collect();
            let observed = (0..n).map(|v| dag.is_observed(v)).collect();
            let positions = tree_layout(&graph, root);
            (graph, positions, Some(names), Some(observed))
        }
    };
    let n = graph.num_nodes();
    Ok(Shape {
        names: names.unwrap_or_else(|| (0..n).map(|i| format!("x{i}")).collect()),
        observed: observed.unwrap_or_else(|| vec![false; n]),
        graph,
        positions,
    })
}

/// Seed streams, one per purpose.
const POTENTIALS_KEY: u64 = 0x7eac_0001;
const CPT_KEY: u64 = 0x7eac_0002;
const EVIDENCE_KEY: u64 = 0x7eac_0003;

pub fn build(config: &TeachConfig) -> Result<TeachModel> {
    match config.graph {
        TeachGraph::Chain => {
            let g = Graph::chain(6)?;
            let positions = (0..6).map(|i| (i as f64 / 5.0, 0.5)).collect();
            potts(config, g, positions, "x")
        }
        TeachGraph::Tree => {
            let g = Graph::balanced_tree(2, 2)?;
            let positions = tree_layout(&g, 0);
            potts(config, g, positions, "x")
        }
        TeachGraph::Grid => {
            let g = Graph::grid(3, 3)?;
            let positions = (0..9)
                .map(|i| ((i % 3) as f64 / 2.0, (i / 3) as f64 / 2.0))
                .collect();
            potts(config, g, positions, "x")
        }
        TeachGraph::Pbp => stand_in(config),
    }
}

fn potts(
    config: &TeachConfig,
    graph: Graph,
    positions: Vec<(f64, f64)>,
    prefix: &str,
) -> Result<TeachModel> {
    let s = config.states;
    let n = graph.num_nodes();
    let mut rng = ChaCha8Rng::seed_from_u64(config.seed ^ POTENTIALS_KEY);
    let node_potentials = (0..n * s)
        .map(|_| {
            let z: f64 = StandardNormal.sample(&mut rng);
            (config.field * z).exp()
        })
        .collect();
    let table = (0..s * s)
        .map(|k| {
            if k / s == k % s {
                config.coupling.exp()
            } else {
                1.0
            }
        })
        .collect();
    let description = format!(
        "{}: {n} variables with {s} labels, Potts coupling {} (psi = e^coupling on equal labels), random fields of strength {}",
        config.graph.label(),
        config.coupling,
        config.field
    );
    Ok(TeachModel {
        mrf: DiscreteMrf {
            graph,
            state_values: (0..s).map(|x| x as f64).collect(),
            node_potentials,
            edge_potentials: EdgePotentials::Shared(table),
        },
        cards: vec![s; n],
        names: (0..n).map(|i| format!("{prefix}{i}")).collect(),
        positions,
        description,
    })
}

fn stand_in(config: &TeachConfig) -> Result<TeachModel> {
    let dag = synthetic_stand_in(true);
    let net = BayesNet::random(
        dag.clone(),
        1.0,
        &mut ChaCha8Rng::seed_from_u64(config.seed ^ CPT_KEY),
    )?;
    let mut sample = vec![0; dag.len()];
    net.sample(
        &mut ChaCha8Rng::seed_from_u64(config.seed ^ EVIDENCE_KEY),
        &mut sample,
    );
    let n = dag.len();
    let s = (0..n).map(|v| dag.cardinality(v)).max().unwrap_or(1);
    let cards: Vec<usize> = (0..n).map(|v| dag.cardinality(v)).collect();
    let mut node_potentials = vec![0.0; n * s];
    for v in 0..n {
        let phi = &mut node_potentials[v * s..v * s + cards[v]];
        if dag.is_observed(v) {
            phi[sample[v]] = 1.0;
        } else if dag.parents(v).is_empty() {
            phi.copy_from_slice(&net.cpts[v]);
        } else {
            phi.fill(1.0);
        }
    }
    // One pairwise factor per DAG edge (every node has at most one parent): ψ(parent, child).
    let edges: Vec<(NodeId, NodeId)> = dag.edges().to_vec();
    let graph = Graph::from_edges(n, &edges)?;
    let tables = edges
        .iter()
        .map(|&(p, c)| {
            let mut t = vec![0.0; s * s];
            for i in 0..cards[p] {
                for j in 0..cards[c] {
                    t[i * s + j] = net.cpts[c][i * cards[c] + j];
                }
            }
            t
        })
        .collect();
    let names: Vec<String> = dag.nodes().iter().map(|d| d.name.clone()).collect();
    let evidence: Vec<String> = (0..n)
        .filter(|&v| dag.is_observed(v))
        .map(|v| format!("{}={}", names[v], sample[v]))
        .collect();
    let root = (0..n).find(|&v| dag.parents(v).is_empty()).unwrap_or(0);
    Ok(TeachModel {
        positions: tree_layout(&graph, root),
        description: format!(
            "predictive-BP stand-in (for Wang & Gordon's Fig. 4, loop-free): latent A, B, C, I (2 states), observed D..H (3 states) with evidence {}; CPTs Dirichlet(1), seed {}",
            evidence.join(", "),
            config.seed
        ),
        mrf: DiscreteMrf {
            graph,
            state_values: (0..s).map(|x| x as f64).collect(),
            node_potentials,
            edge_potentials: EdgePotentials::PerEdge(tables),
        },
        cards,
        names,
    })
}

/// A layered drawing of a tree: depth from `root` down, leaves spread evenly left to right in
/// depth-first order, a parent centred over its children.
pub fn tree_layout(g: &Graph, root: NodeId) -> Vec<(f64, f64)> {
    let n = g.num_nodes();
    let mut pos = vec![(0.5, 0.5); n];
    let mut depth = vec![0usize; n];
    let mut leaves = 0usize;
    // Iterative post-order: x of a leaf is its leaf index, of an inner node its children's mean.
    let mut stack = vec![(root, usize::MAX, false)];
    let mut x = vec![0.0; n];
    while let Some((t, parent, done)) = stack.pop() {
        let children: Vec<NodeId> = (g.neighbors(t).iter())
            .map(|nb| nb.node)
            .filter(|&c| c != parent)
            .collect();
        if done {
            x[t] = if children.is_empty() {
                leaves += 1;
                (leaves - 1) as f64
            } else {
                children.iter().map(|&c| x[c]).sum::<f64>() / children.len() as f64
            };
            continue;
        }
        stack.push((t, parent, true));
        for &c in children.iter().rev() {
            depth[c] = depth[t] + 1;
            stack.push((c, t, false));
        }
    }
    let max_depth = depth.iter().copied().max().unwrap_or(0).max(1) as f64;
    let width = (leaves.max(2) - 1) as f64;
    for t in 0..n {
        pos[t] = (x[t] / width, depth[t] as f64 / max_depth);
    }
    pos
}

#[cfg(test)]
mod tests {
    use strum::VariantArray;

    use super::*;
    use crate::inference::message_stepper::{MessageStepper, exact_marginals};
    use crate::inference::{Damping, Schedule};

    #[test]
    fn every_model_is_exact_after_one_sweep_where_it_is_a_tree() {
        for &graph in TeachGraph::VARIANTS {
            let config = TeachConfig {
                graph,
                ..TeachConfig::default()
            };
            let m = build(&config).unwrap();
            assert_eq!(m.names.len(), m.mrf.graph.num_nodes());
            assert!(m.positions.iter().all(|p| (0.0..=1.0).contains(&p.0)));
            let exact = exact_marginals(&m.mrf, &m.cards, 1 << 20).unwrap();
            let mut bp = MessageStepper::new(
                m.mrf.clone(),
                m.cards.clone(),
                Schedule::Sweep,
                Damping(0.0),
            )
            .unwrap();
            for _ in 0..m.mrf.graph.num_messages() {
                bp.step().unwrap();
            }
            let err = (bp.beliefs().iter().flatten())
                .zip(exact.iter().flatten())
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            if graph.is_tree() {
                assert!(err < 1e-9, "{graph:?}: {err}");
            } else {
                assert!(
                    err > 1e-9,
                    "{graph:?}: one sweep cannot be exact on a loopy grid"
                );
            }
        }
    }

    #[test]
    fn the_stand_in_clamps_its_evidence() {
        let m = build(&TeachConfig {
            graph: TeachGraph::Pbp,
            ..TeachConfig::default()
        })
        .unwrap();
        let exact = exact_marginals(&m.mrf, &m.cards, 1 << 20).unwrap();
        for (v, name) in m.names.iter().enumerate() {
            let observed = ["D", "E", "F", "G", "H"].contains(&name.as_str());
            let top = exact[v].iter().copied().fold(0.0, f64::max);
            assert_eq!(
                observed,
                (top - 1.0).abs() < 1e-12,
                "{name}: {:?}",
                exact[v]
            );
            assert_eq!(exact[v].len(), if observed { 3 } else { 2 });
        }
    }
}
