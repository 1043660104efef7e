//! The built-in datasets of the tree scenario, generated in code from fixed seeds (the same
//! tables are written as examples under `assets/`), with their true models where the exact
//! posterior is known:
//!
//! * `gauss-tree`: a linear-Gaussian tree on `x1..xn` (default 8). The structure is the random
//!   recursive tree of [`Graph::random_tree`] with seed [`GAUSS_STRUCTURE_SEED`]; node `c`
//!   with parent `p` is `x_c = a_c x_p + b_c + N(0, 1 - a_c²)`, `|a_c|` in [0.65, 0.85],
//!   `b_c` in [-1, 1], `x1 ~ N(0, 1)` (so every variance is 1). Exact posteriors: Gaussian
//!   conditioning of the true model ([`GaussianTree`]).
//! * `nongauss-chain`: `x1 ~ 0.6 N(-1, 0.3²) + 0.4 N(1.1, 0.3²)`,
//!   `x_{k+1} = sin(2 x_k) + N(0, 0.25²)`, default 5 nodes. Posteriors are multimodal (for
//!   example `x1` given `x2 ≈ 0`); the reference is fine-grid BP with the true densities
//!   ([`GridTreeReference`], 600 points per node).
//! * `retrieval`: 9 variables in R⁵ (45 columns `xk_1..xk_5`, nodes `x1..x9`): `x1` from a
//!   three-component Gaussian mixture, `x_{k+1} = Q_k g(x_k) + N(0, 0.2² I)` with `Q_k` random
//!   orthogonal and `g(v) = sin(1.5 v)` elementwise; the mixture and the `Q_k` are fixed by
//!   [`RETRIEVAL_MODEL_SEED`](crate::model::retrieval_chain::RETRIEVAL_MODEL_SEED), only the draws depend on the seed. No reference.

use std::sync::Arc;

use nalgebra::{DMatrix, DVector};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

use super::config::NodeSpec;
use crate::error::labels::{Labelled, unknown};
use crate::error::{Error, Result};
use crate::inference::gaussian_bp::{GaussianTree, LinearGaussianEdge};
use crate::inference::grid_reference::{GridMarginal, GridTreeReference};
use crate::io::csv::Dataset;
use crate::model::Graph;
use crate::model::retrieval_chain::{RETRIEVAL_DIM, RetrievalModel};

/// Seed of the gauss-tree structure and coefficients (fixed: only the draws vary).
pub const GAUSS_STRUCTURE_SEED: u64 = 0x7EE5;
/// Grid points per node of the nongauss-chain reference.
pub const REFERENCE_GRID_POINTS: usize = 600;

/// Nongauss-chain parameters.
pub const CHAIN_MIX_WEIGHT: f64 = 0.6;
pub const CHAIN_MIX_MEANS: [f64; 2] = [-1.0, 1.1];
pub const CHAIN_MIX_SD: f64 = 0.3;
pub const CHAIN_NOISE_SD: f64 = 0.25;

/// The built-in datasets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[derive(strum::VariantArray, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "kebab-case", parse_err_ty = String, parse_err_fn = unknown::<Self>)]
pub enum BuiltinData {
    GaussTree,
    NongaussChain,
    Retrieval,
}

impl Labelled for BuiltinData {
    const WHAT: &str = "built-in dataset";
}

impl BuiltinData {
    pub fn label(self) -> &'static str {
        self.into()
    }

    /// Number of variables by default.
    pub fn default_size(self) -> usize {
        match self {
            BuiltinData::GaussTree => 8,
            BuiltinData::NongaussChain => 5,
            BuiltinData::Retrieval => 9,
        }
    }

    /// The file name of the example under `assets/`.
    pub fn asset_name(self) -> &'static str {
        match self {
            BuiltinData::GaussTree => "gauss_tree.csv",
            BuiltinData::NongaussChain => "nongauss_chain.csv",
            BuiltinData::Retrieval => "retrieval.csv",
        }
    }
}

/// The exact posterior of a built-in, where known.
#[derive(Clone)]
pub enum TrueModel {
    Gaussian(GaussianTree),
    Grid(Arc<GridTreeReference>),
}

/// A posterior of one variable under the true model.
#[derive(Debug, Clone, PartialEq)]
pub struct ReferenceMarginal {
    pub mean: f64,
    /// The density at arbitrary points (exact for Gaussians, interpolated for grids).
    pub kind: ReferenceKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ReferenceKind {
    Gaussian { sd: f64 },
    Grid(GridMarginal),
}

impl ReferenceMarginal {
    pub fn density(&self, xs: &[f64]) -> Vec<f64> {
        match &self.kind {
            ReferenceKind::Gaussian { sd } => xs
                .iter()
                .map(|x| {
                    let z = (x - self.mean) / sd;
                    (-0.5 * z * z).exp() / (sd * (2.0 * std::f64::consts::PI).sqrt())
                })
                .collect(),
            ReferenceKind::Grid(g) => g.interpolate(xs),
        }
    }

    pub fn label(&self) -> &'static str {
        match self.kind {
            ReferenceKind::Gaussian { .. } => "exact Gaussian posterior",
            ReferenceKind::Grid(_) => "fine-grid BP with the true densities",
        }
    }
}

impl TrueModel {
    /// Posterior of every variable (column) given `evidence[column]`; `None` for observed
    /// columns.
    pub fn posterior(&self, evidence: &[Option<f64>]) -> Result<Vec<Option<ReferenceMarginal>>> {
        match self {
            TrueModel::Gaussian(t) => {
                let ev: Vec<Option<Vec<f64>>> =
                    evidence.iter().map(|e| e.map(|v| vec![v])).collect();
                Ok(t.posterior(&ev)?
                    .into_iter()
                    .map(|m| {
                        (!m.observed).then(|| ReferenceMarginal {
                            mean: m.mean[0],
                            kind: ReferenceKind::Gaussian {
                                sd: m.cov[(0, 0)].sqrt(),
                            },
                        })
                    })
                    .collect())
            }
            TrueModel::Grid(r) => Ok(r
                .posterior(evidence)?
                .into_iter()
                .map(|m| {
                    m.observed.is_none().then_some(ReferenceMarginal {
                        mean: m.mean,
                        kind: ReferenceKind::Grid(m),
                    })
                })
                .collect()),
        }
    }
}

/// A generated dataset with its default nodes, its generating tree and its true model.
#[derive(Clone)]
pub struct Builtin {
    pub kind: BuiltinData,
    pub dataset: Dataset,
    /// Default nodes (one per variable; retrieval groups 5 columns per node).
    pub nodes: Vec<NodeSpec>,
    /// The generating tree over the default nodes.
    pub true_edges: Vec<(usize, usize)>,
    /// The exact posterior (columns = variables), for gauss-tree and nongauss-chain.
    pub truth: Option<TrueModel>,
}

fn normal(rng: &mut ChaCha8Rng) -> f64 {
    StandardNormal.sample(rng)
}

/// The gauss-tree's true model over `n` variables.
pub fn gauss_tree_model(n: usize) -> Result<(Graph, Vec<LinearGaussianEdge>)> {
    let graph = Graph::random_tree(n, GAUSS_STRUCTURE_SEED)?;
    let mut rng = ChaCha8Rng::seed_from_u64(GAUSS_STRUCTURE_SEED);
    let mut edges = Vec::new();
    for (c, p) in graph.bfs_order(0) {
        let Some(p) = p else { continue };
        let mag = rng.random_range(0.65..0.85);
        let a = if rng.random::<bool>() { mag } else { -mag };
        let b = rng.random_range(-1.0..1.0);
        edges.push(LinearGaussianEdge {
            parent: p,
            child: c,
            a: DMatrix::from_element(1, 1, a),
            b: DVector::from_element(1, b),
            noise: DMatrix::from_element(1, 1, 1.0 - a * a),
        });
    }
    Ok((graph, edges))
}

fn mixture_density(x: f64) -> f64 {
    let g = |m: f64| {
        let z = (x - m) / CHAIN_MIX_SD;
        (-0.5 * z * z).exp() / (CHAIN_MIX_SD * (2.0 * std::f64::consts::PI).sqrt())
    };
    CHAIN_MIX_WEIGHT * g(CHAIN_MIX_MEANS[0]) + (1.0 - CHAIN_MIX_WEIGHT) * g(CHAIN_MIX_MEANS[1])
}

fn chain_transition(x_child: f64, x_parent: f64) -> f64 {
    let z = (x_child - (2.0 * x_parent).sin()) / CHAIN_NOISE_SD;
    (-0.5 * z * z).exp() / (CHAIN_NOISE_SD * (2.0 * std::f64::consts::PI).sqrt())
}

/// The nongauss chain's fine-grid reference over `n` variables.
pub fn nongauss_reference(n: usize) -> Result<GridTreeReference> {
    let pad = 5.0 * CHAIN_NOISE_SD;
    let supports: Vec<(f64, f64)> = (0..n)
        .map(|k| {
            if k == 0 {
                (
                    CHAIN_MIX_MEANS[0] - 6.0 * CHAIN_MIX_SD,
                    CHAIN_MIX_MEANS[1] + 6.0 * CHAIN_MIX_SD,
                )
            } else {
                (-1.0 - pad, 1.0 + pad)
            }
        })
        .collect();
    GridTreeReference::new(
        Graph::chain(n)?,
        0,
        &supports,
        REFERENCE_GRID_POINTS,
        Arc::new(mixture_density),
        Arc::new(|_, xc, xp| chain_transition(xc, xp)),
    )
}

/// Generates `rows` rows of a built-in with `size` variables from `seed`.
pub fn generate(kind: BuiltinData, size: usize, rows: usize, seed: u64) -> Result<Builtin> {
    if rows < 2 {
        return Err(Error::param(
            "rows",
            format!("need at least 2 rows, got {rows}"),
        ));
    }
    if !(2..=200).contains(&size) {
        return Err(Error::param(
            "size",
            format!("a built-in has 2 to 200 variables, got {size}"),
        ));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let names1 = |n: usize| -> Vec<String> { (1..=n).map(|k| format!("x{k}")).collect() };
    let single_nodes = |names: &[String]| -> Vec<NodeSpec> {
        names
            .iter()
            .map(|n| NodeSpec {
                name: n.clone(),
                columns: vec![n.clone()],
            })
            .collect()
    };
    match kind {
        BuiltinData::GaussTree => {
            let (graph, edges) = gauss_tree_model(size)?;
            let mut values = vec![0.0; rows * size];
            let mut parent_edge = vec![None; size];
            for (k, e) in edges.iter().enumerate() {
                parent_edge[e.child] = Some(k);
            }
            let order = graph.bfs_order(0);
            for r in 0..rows {
                for &(c, p) in &order {
                    let v = match (p, parent_edge[c]) {
                        (Some(p), Some(k)) => {
                            let e = &edges[k];
                            e.a[(0, 0)] * values[r * size + p]
                                + e.b[0]
                                + e.noise[(0, 0)].sqrt() * normal(&mut rng)
                        }
                        _ => normal(&mut rng),
                    };
                    values[r * size + c] = v;
                }
            }
            let names = names1(size);
            let truth = GaussianTree::linear_gaussian(
                graph.clone(),
                vec![1; size],
                0,
                DVector::from_element(1, 0.0),
                DMatrix::from_element(1, 1, 1.0),
                &edges,
            )?;
            Ok(Builtin {
                kind,
                nodes: single_nodes(&names),
                dataset: Dataset::new(names, values)?,
                true_edges: graph.edges().to_vec(),
                truth: Some(TrueModel::Gaussian(truth)),
            })
        }
        BuiltinData::NongaussChain => {
            let mut values = vec![0.0; rows * size];
            for r in 0..rows {
                let m = if rng.random::<f64>() < CHAIN_MIX_WEIGHT {
                    CHAIN_MIX_MEANS[0]
                } else {
                    CHAIN_MIX_MEANS[1]
                };
                let mut x = m + CHAIN_MIX_SD * normal(&mut rng);
                values[r * size] = x;
                for k in 1..size {
                    x = (2.0 * x).sin() + CHAIN_NOISE_SD * normal(&mut rng);
                    values[r * size + k] = x;
                }
            }
            let names = names1(size);
            Ok(Builtin {
                kind,
                nodes: single_nodes(&names),
                dataset: Dataset::new(names, values)?,
                true_edges: (1..size).map(|k| (k - 1, k)).collect(),
                truth: Some(TrueModel::Grid(Arc::new(nongauss_reference(size)?))),
            })
        }
        BuiltinData::Retrieval => {
            let model = RetrievalModel::fixed(size);
            let d = RETRIEVAL_DIM;
            let mut names = Vec::new();
            let mut nodes = Vec::new();
            for k in 1..=size {
                let cols: Vec<String> = (1..=d).map(|j| format!("x{k}_{j}")).collect();
                names.extend(cols.iter().cloned());
                nodes.push(NodeSpec {
                    name: format!("x{k}"),
                    columns: cols,
                });
            }
            let mut values = Vec::with_capacity(rows * size * d);
            for _ in 0..rows {
                for x in model.sample(&mut rng) {
                    values.extend(x.iter());
                }
            }
            Ok(Builtin {
                kind,
                nodes,
                dataset: Dataset::new(names, values)?,
                true_edges: (1..size).map(|k| (k - 1, k)).collect(),
                truth: None,
            })
        }
    }
}
