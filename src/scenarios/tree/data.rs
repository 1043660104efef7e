//! Builds a tree problem from a [`TreeConfig`]: the rows (CSV or built-in), the nodes (columns
//! or column groups), the tree (chain, star, binary, HSIC Chow-Liu or named edges), the
//! per-edge sample draws, the kernels, the evaluation grids, the kernel-BP model, the
//! Gaussian-BP baseline and, for built-ins, the true model.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::builtin::{self, TrueModel};
use super::config::{DataSource, NodeSpec, Topology, TreeConfig};
use crate::error::{Error, Result};
use crate::inference::gaussian_bp::GaussianTree;
use crate::inference::kbp::Bandwidth;
use crate::inference::tree_kbp::{
    KernelKind, NodeKernelSettings, ResolvedKernel, TreeKbpInput, TreeKbpModel, TreeKbpOptions,
    chow_liu_hsic, resolve_kernel,
};
use crate::io::csv::{Dataset, read_csv_with};
use crate::kernel::{LooCvOptions, Points, loo_cv_joint_bandwidths};
use crate::model::retrieval_chain::draw_rows;
use crate::model::{Graph, GraphError, NodeId};
use crate::scenarios::CancelFlag;
use crate::scenarios::ScenarioParams;

/// The pair search: 400 strided rows, 15 grid points and 20 golden-section steps per
/// coordinate (about 0.1 s an edge on 2 cores).
const JOINT_CV: LooCvOptions = LooCvOptions {
    sigma_min: None,
    sigma_max: None,
    grid_points: 15,
    refine_iterations: 20,
    max_points: 400,
};

/// The LOO-CV rule on the tree: every node whose bandwidth is `auto` by `loo-cv` gets, instead
/// of its marginal's LOO-CV σ, the geometric mean over its tree edges of the σ that maximises
/// the LOO likelihood of the edge's pairs (`loo_cv_joint_bandwidths`). The marginal optimum
/// is the width of the node's own spread; the pair optimum is the width at which a neighbour
/// pins the node down, which is the width the messages and the read-out need (a broad
/// marginal can hide a narrow posterior). Edges to nodes of another rule still count: the
/// neighbour's σ there is only a nuisance parameter. The marginal σ stays on nodes without
/// edges. A Chow-Liu tree is learned with the marginal σ (it is needed to find the edges).
/// Cost: O(s²) per likelihood evaluation, about 210 evaluations per edge, s <= 400 rows.
fn refine_cv_bandwidths(
    kernels: &mut [ResolvedKernel],
    values: &[Points<'static>],
    graph: &Graph,
    names: &[String],
) -> Result<()> {
    let wants = |k: &ResolvedKernel| k.rule == "loo-cv";
    let mut logs: Vec<Vec<f64>> = vec![Vec::new(); kernels.len()];
    for &(a, b) in graph.edges() {
        if !wants(&kernels[a]) && !wants(&kernels[b]) {
            continue;
        }
        let (sa, sb) = loo_cv_joint_bandwidths(&values[a], &values[b], &JOINT_CV).map_err(|e| {
            Error::Other(format!(
                "bandwidth by LOO-CV on edge '{}' - '{}': {e}",
                names[a], names[b]
            ))
        })?;
        logs[a].push(sa.ln());
        logs[b].push(sb.ln());
    }
    for (t, k) in kernels.iter_mut().enumerate() {
        if !wants(k) || logs[t].is_empty() {
            continue;
        }
        let sigma = (logs[t].iter().sum::<f64>() / logs[t].len() as f64).exp();
        let settings = k.settings;
        let given = NodeKernelSettings {
            bandwidth: Bandwidth::Value(sigma),
            ..settings
        };
        *k = ResolvedKernel {
            settings,
            rule: format!("loo-cv, {} edge(s)", logs[t].len()),
            ..resolve_kernel(&given, &values[t])?
        };
    }
    Ok(())
}

/// Largest number of distinct values a delta-kernel node may have (its read-outs are over
/// those values).
pub const MAX_DELTA_VALUES: usize = 2000;
/// Largest candidate set of a multi-dimensional node (distinct rows, strided beyond).
pub const MAX_CANDIDATES: usize = 1000;

/// Loads the rows a config names, with the built-in's extras.
pub fn load_data(config: &TreeConfig) -> Result<(Dataset, Option<builtin::Builtin>)> {
    match &config.data {
        DataSource::Csv { path } => Ok((read_csv_with(path, !config.csv_no_header)?, None)),
        DataSource::Builtin {
            name,
            rows,
            size,
            seed,
        } => {
            let b = builtin::generate(*name, size.unwrap_or(name.default_size()), *rows, *seed)?;
            Ok((b.dataset.clone(), Some(b)))
        }
    }
}

/// Maps a graph error on node indices to one naming the nodes.
pub fn name_graph_error(e: GraphError, names: &[String]) -> Error {
    let n = |i: usize| names.get(i).cloned().unwrap_or_else(|| format!("#{i}"));
    Error::Other(match e {
        GraphError::Cycle { a, b } => format!(
            "edge {} - {} closes a cycle, but a tree is needed; remove it or another edge of \
             the cycle",
            n(a),
            n(b)
        ),
        GraphError::Disconnected { node } => format!(
            "node {} is not connected to node {}: a tree must connect every node",
            n(node),
            n(0)
        ),
        GraphError::SelfLoop { node } => format!("edge {} - {} is a self loop", n(node), n(node)),
        GraphError::DuplicateEdge { a, b } => {
            format!("edge {} - {} appears twice", n(a), n(b))
        }
        other => other.to_string(),
    })
}

/// A tree problem ready for inference.
pub struct TreeProblem {
    pub dataset: Arc<Dataset>,
    pub names: Vec<String>,
    /// Per node: its column indices and names.
    pub columns: Vec<Vec<usize>>,
    pub column_names: Vec<Vec<String>>,
    pub graph: Graph,
    /// Pairwise HSIC when the tree was learned by Chow-Liu.
    pub hsic: Option<DMatrix<f64>>,
    pub root: NodeId,
    pub kernels: Vec<ResolvedKernel>,
    /// Per node, per dimension: `(min, max)` of the data.
    pub ranges: Vec<Vec<(f64, f64)>>,
    pub model: Arc<TreeKbpModel>,
    pub gaussian: GaussianTree,
    /// The true model over the dataset's columns, with each node's column when the node is a
    /// single column.
    pub truth: Option<(TrueModel, Vec<Option<usize>>)>,
    /// The generating tree over the default nodes (built-ins only).
    pub true_edges: Option<Vec<(usize, usize)>>,
    pub warnings: Vec<String>,
    pub timings: BTreeMap<String, f64>,
}

impl TreeProblem {
    pub fn node_index(&self, name: &str) -> Result<NodeId> {
        self.names.iter().position(|n| n == name).ok_or_else(|| {
            Error::Other(format!(
                "unknown node '{name}' (the nodes are: {})",
                self.names.join(", ")
            ))
        })
    }

    /// Builds everything (see the module docs). Errors name the column, node or edge.
    pub fn build(config: &TreeConfig, cancel: &CancelFlag) -> Result<TreeProblem> {
        config.check()?;
        let mut timings = BTreeMap::new();
        let mut clock = Instant::now();
        let mut lap = |name: &str, timings: &mut BTreeMap<String, f64>| {
            timings.insert(name.to_string(), clock.elapsed().as_secs_f64());
            clock = Instant::now();
        };
        let (dataset, builtin) = load_data(config)?;
        lap("data", &mut timings);
        let mut warnings = Vec::new();

        // Nodes.
        let specs: Vec<NodeSpec> = if !config.nodes.is_empty() {
            config.nodes.clone()
        } else if let Some(b) = &builtin {
            b.nodes.clone()
        } else {
            dataset
                .names
                .iter()
                .map(|n| NodeSpec {
                    name: n.clone(),
                    columns: vec![n.clone()],
                })
                .collect()
        };
        let mut used: BTreeMap<usize, String> = BTreeMap::new();
        let mut columns = Vec::with_capacity(specs.len());
        for s in &specs {
            let mut cols = Vec::with_capacity(s.columns.len());
            for c in &s.columns {
                let i = dataset
                    .require_column(c)
                    .map_err(|e| Error::Other(format!("node '{}': {e}", s.name)))?;
                if let Some(other) = used.insert(i, s.name.clone()) {
                    return Err(Error::Other(format!(
                        "column '{c}' is used by two nodes ('{other}' and '{}')",
                        s.name
                    )));
                }
                cols.push(i);
            }
            dataset
                .check_variance(&cols)
                .map_err(|e| Error::Other(format!("node '{}': {e}", s.name)))?;
            columns.push(cols);
        }
        let names: Vec<String> = specs.iter().map(|s| s.name.clone()).collect();
        let n = names.len();
        let values: Vec<Points<'static>> = columns
            .iter()
            .map(|c| Points::from_vec(dataset.select_columns(c), c.len()))
            .collect::<std::result::Result<_, _>>()?;
        let ranges: Vec<Vec<(f64, f64)>> = columns
            .iter()
            .map(|c| c.iter().map(|&i| dataset.column_range(i)).collect())
            .collect();
        let rows = dataset.rows();

        // Kernels.
        let mut kernels: Vec<ResolvedKernel> = (0..n)
            .map(|t| {
                resolve_kernel(&config.kernel_for(&names[t]), &values[t])
                    .map_err(|e| Error::Other(format!("node '{}': {e}", names[t])))
            })
            .collect::<Result<_>>()?;
        lap("kernels", &mut timings);
        cancel.check()?;

        // Tree.
        let mut hsic = None;
        let edges: Vec<(usize, usize)> = match &config.topology {
            Topology::Chain => (1..n).map(|i| (i - 1, i)).collect(),
            Topology::Star => (1..n).map(|i| (0, i)).collect(),
            Topology::Binary => (1..n).map(|i| ((i - 1) / 2, i)).collect(),
            Topology::ChowLiu => {
                let mut rng = ChaCha8Rng::seed_from_u64(config.sample_seed ^ 0x000C_4011_u64);
                let r = draw_rows(&mut rng, rows, config.chow_liu_rows);
                let ks: Vec<_> = kernels.iter().map(|k| k.kernel.clone()).collect();
                let (g, w) = chow_liu_hsic(&values, &ks, &r)?;
                hsic = Some(w);
                lap("chow-liu", &mut timings);
                g.edges().to_vec()
            }
            Topology::Edges(named) => {
                let index = |name: &str| -> Result<usize> {
                    names.iter().position(|x| x == name).ok_or_else(|| {
                        Error::Other(format!(
                            "edge names node '{name}', which is not a node (the nodes are: {})",
                            names.join(", ")
                        ))
                    })
                };
                named
                    .iter()
                    .map(|(a, b)| Ok((index(a)?, index(b)?)))
                    .collect::<Result<_>>()?
            }
        };
        let graph = Graph::from_edges(n, &edges).map_err(|e| name_graph_error(e, &names))?;
        graph
            .check_tree()
            .map_err(|e| name_graph_error(e, &names))?;
        refine_cv_bandwidths(&mut kernels, &values, &graph, &names)?;
        lap("bandwidth cv", &mut timings);
        cancel.check()?;
        let root = match &config.root {
            None => 0,
            Some(r) => names.iter().position(|x| x == r).ok_or_else(|| {
                Error::Other(format!(
                    "root '{r}' is not a node (the nodes are: {})",
                    names.join(", ")
                ))
            })?,
        };

        // Samples.
        let m = config.samples_per_edge;
        // The default asks for more than a small table has on purpose (every row an edge
        // sample), so only a chosen m is worth a warning; the header and results.json show the
        // m each edge uses either way.
        if m > rows && m != super::config::DEFAULT_SAMPLES_PER_EDGE {
            warnings.push(format!(
                "samples per edge {m} > {rows} rows: every edge uses all {rows} rows"
            ));
        }
        let mut rng = ChaCha8Rng::seed_from_u64(config.sample_seed);
        let shared = draw_rows(&mut rng, rows, m);
        let edge_rows: Vec<Vec<usize>> = (0..graph.num_edges())
            .map(|_| {
                if config.shared_samples {
                    shared.clone()
                } else {
                    draw_rows(&mut rng, rows, m)
                }
            })
            .collect();
        let belief_rows: Vec<Vec<usize>> = (0..n)
            .map(|t| match graph.neighbors(t).first() {
                Some(nb) => edge_rows[nb.edge].clone(),
                None => shared.clone(),
            })
            .collect();

        // Evaluation points.
        let eval_points: Vec<Points<'static>> = (0..n)
            .map(|t| eval_points_for(&values[t], &kernels[t], &ranges[t], config.grid, &names[t]))
            .collect::<Result<_>>()?;
        cancel.check()?;

        let model = TreeKbpModel::new(
            TreeKbpInput {
                graph: graph.clone(),
                values: values.clone(),
                edge_rows: edge_rows.clone(),
                belief_rows: belief_rows.clone(),
                eval_points,
                kernels: kernels.clone(),
            },
            &TreeKbpOptions::default(),
        )?;
        lap("kernel BP set-up", &mut timings);
        cancel.check()?;
        let gaussian =
            GaussianTree::fit_least_squares(&graph, 0, &values, &edge_rows, &belief_rows[0], 1e-9)?;
        lap("Gaussian BP fit", &mut timings);

        let truth = builtin.as_ref().and_then(|b| {
            b.truth.clone().map(|t| {
                let map: Vec<Option<usize>> = columns
                    .iter()
                    .map(|c| (c.len() == 1).then_some(c[0]))
                    .collect();
                (t, map)
            })
        });
        let true_edges = builtin.as_ref().and_then(|b| {
            // Only meaningful when the nodes are the built-in's own.
            (b.nodes == specs).then(|| b.true_edges.clone())
        });

        Ok(TreeProblem {
            dataset: Arc::new(dataset),
            column_names: specs.iter().map(|s| s.columns.clone()).collect(),
            names,
            columns,
            graph,
            hsic,
            root,
            kernels,
            ranges,
            model: Arc::new(model),
            gaussian,
            truth,
            true_edges,
            warnings,
            timings,
        })
    }

    /// A warning when `value` lies outside the node's data range (evidence is allowed there,
    /// but kernel messages decay away from the samples).
    pub fn range_warning(&self, node: NodeId, value: &[f64]) -> Option<String> {
        let outside: Vec<String> = value
            .iter()
            .zip(&self.ranges[node])
            .zip(&self.column_names[node])
            .filter(|((v, (lo, hi)), _)| *v < lo || *v > hi)
            .map(|((v, (lo, hi)), c)| format!("{c} = {v} outside [{lo:.4}, {hi:.4}]"))
            .collect();
        (!outside.is_empty()).then(|| {
            format!(
                "evidence on node '{}' is outside the data range ({}): kernel BP extrapolates \
                 there and its messages decay towards 0 away from the samples",
                self.names[node],
                outside.join(", ")
            )
        })
    }
}

/// The points where a node's beliefs are read out: a grid over the data range padded by 10%
/// (1-D), the distinct values (delta kernel), or the distinct rows (multi-dimensional, at most
/// [`MAX_CANDIDATES`], strided).
pub fn eval_points_for(
    values: &Points,
    kernel: &ResolvedKernel,
    ranges: &[(f64, f64)],
    grid: usize,
    name: &str,
) -> Result<Points<'static>> {
    let d = values.dim();
    if kernel.settings.kernel == KernelKind::Delta || d > 1 {
        let mut rows: Vec<Vec<f64>> = values.rows().map(|r| r.to_vec()).collect();
        rows.sort_by(|a, b| {
            a.iter()
                .zip(b)
                .map(|(x, y)| x.total_cmp(y))
                .find(|o| o.is_ne())
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        rows.dedup();
        if d == 1 && rows.len() > MAX_DELTA_VALUES {
            return Err(Error::Other(format!(
                "node '{name}': the delta kernel needs a discrete variable, but it has {} \
                 distinct values (at most {MAX_DELTA_VALUES}); use rbf or laplacian",
                rows.len()
            )));
        }
        if rows.len() > MAX_CANDIDATES && d > 1 {
            let stride = rows.len().div_ceil(MAX_CANDIDATES);
            rows = rows.into_iter().step_by(stride).collect();
        }
        return Ok(Points::from_vec(rows.concat(), d)?);
    }
    let (lo, hi) = ranges[0];
    let pad = 0.1 * (hi - lo);
    let (a, b) = (lo - pad, hi + pad);
    let xs: Vec<f64> = (0..grid)
        .map(|i| a + (b - a) * i as f64 / (grid - 1) as f64)
        .collect();
    Ok(Points::from_vec(xs, 1)?)
}
