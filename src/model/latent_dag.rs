//! A directed latent-variable model over discrete variables (Wang & Gordon, AAAI 2020, Sec. 2):
//! nodes with cardinalities and an observed flag, parent → child edges, optional CPTs; the JSON
//! model-file format; ancestral sampling; and our stand-in for the synthetic model of the
//! paper's Sec. 6 (its Fig. 4 is an image in the paper and its graph cannot be recovered; only
//! the names A…H, with D, E, G, H observed, are known).
//!
//! Cost: validation O(V + E); one ancestral sample O(Σ_v |Pa(v)|).

use std::collections::BTreeMap;

use rand::Rng;
use rand_distr::{Distribution, Gamma};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Largest cardinality a discrete node may have (a model file with more is refused).
pub const MAX_CARDINALITY: usize = 1000;
/// The largest conditional probability table accepted (entries: the node's values times its
/// parents' configurations; 80 MB of f64), so that a model file cannot ask for an absurd table.
pub const MAX_CPT_ENTRIES: usize = 10_000_000;
/// Largest number of nodes a model may have.
pub const MAX_NODES: usize = 64;

/// One variable of the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DagNode {
    pub name: String,
    pub cardinality: usize,
    pub observed: bool,
}

/// A checked DAG: names unique, edges between existing nodes, no self loops, no duplicates,
/// no cycle.
#[derive(Debug, Clone, PartialEq)]
pub struct LatentDag {
    nodes: Vec<DagNode>,
    /// parent → child, sorted, no duplicates.
    edges: Vec<(usize, usize)>,
    parents: Vec<Vec<usize>>,
    children: Vec<Vec<usize>>,
    topo: Vec<usize>,
}

impl LatentDag {
    /// Checks the nodes and edges; errors name the offending node, edge or cycle.
    pub fn new(nodes: Vec<DagNode>, edges: Vec<(usize, usize)>) -> Result<LatentDag> {
        if nodes.is_empty() {
            return Err(Error::Other("the model has no nodes".into()));
        }
        if nodes.len() > MAX_NODES {
            return Err(Error::Other(format!(
                "the model has {} nodes; at most {MAX_NODES} are supported",
                nodes.len()
            )));
        }
        for (i, n) in nodes.iter().enumerate() {
            if n.name.trim().is_empty() {
                return Err(Error::Other(format!("node {i} has an empty name")));
            }
            if nodes[..i].iter().any(|m| m.name == n.name) {
                return Err(Error::Other(format!(
                    "node name '{}' is used twice",
                    n.name
                )));
            }
            if n.cardinality < 2 || n.cardinality > MAX_CARDINALITY {
                return Err(Error::Other(format!(
                    "node '{}' has cardinality {}; it must be between 2 and {MAX_CARDINALITY}",
                    n.name, n.cardinality
                )));
            }
        }
        let v = nodes.len();
        let mut edges = edges;
        edges.sort_unstable();
        for w in edges.windows(2) {
            if w[0] == w[1] {
                return Err(Error::Other(format!(
                    "edge {} -> {} is listed twice",
                    nodes[w[0].0].name, nodes[w[0].1].name
                )));
            }
        }
        let mut parents = vec![Vec::new(); v];
        let mut children = vec![Vec::new(); v];
        for &(a, b) in &edges {
            if a >= v || b >= v {
                return Err(Error::Other(format!(
                    "edge ({a}, {b}) names a node that does not exist"
                )));
            }
            if a == b {
                return Err(Error::Other(format!(
                    "edge {0} -> {0} is a self loop",
                    nodes[a].name
                )));
            }
            parents[b].push(a);
            children[a].push(b);
        }
        for (b, node) in nodes.iter().enumerate() {
            let entries = parents[b].iter().try_fold(node.cardinality, |e, &p| {
                e.checked_mul(nodes[p].cardinality)
                    .filter(|&e| e <= MAX_CPT_ENTRIES)
            });
            if entries.is_none() {
                return Err(Error::Other(format!(
                    "node '{}' with {} parents needs a CPT of more than {MAX_CPT_ENTRIES} entries \
                     (its values times its parents' configurations); use fewer parents or \
                     smaller cardinalities",
                    node.name,
                    parents[b].len()
                )));
            }
        }
        let topo = topological_order(&parents, &children).map_err(|cycle| {
            let names: Vec<&str> = cycle.iter().map(|&i| nodes[i].name.as_str()).collect();
            Error::Other(format!(
                "the graph has a cycle ({}); a Bayesian network must be a DAG",
                names.join(" -> ")
            ))
        })?;
        Ok(LatentDag {
            nodes,
            edges,
            parents,
            children,
            topo,
        })
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    pub fn nodes(&self) -> &[DagNode] {
        &self.nodes
    }

    pub fn node(&self, v: usize) -> &DagNode {
        &self.nodes[v]
    }

    pub fn edges(&self) -> &[(usize, usize)] {
        &self.edges
    }

    /// Parents of `v`, in increasing node order (the CPT's parent order).
    pub fn parents(&self, v: usize) -> &[usize] {
        &self.parents[v]
    }

    pub fn children(&self, v: usize) -> &[usize] {
        &self.children[v]
    }

    /// Parents before children.
    pub fn topological_order(&self) -> &[usize] {
        &self.topo
    }

    pub fn cardinality(&self, v: usize) -> usize {
        self.nodes[v].cardinality
    }

    pub fn is_observed(&self, v: usize) -> bool {
        self.nodes[v].observed
    }

    pub fn observed(&self) -> Vec<usize> {
        (0..self.len()).filter(|&v| self.is_observed(v)).collect()
    }

    pub fn latent(&self) -> Vec<usize> {
        (0..self.len()).filter(|&v| !self.is_observed(v)).collect()
    }

    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.nodes.iter().position(|n| n.name == name)
    }

    /// Rows of `v`'s CPT: the number of joint parent configurations.
    pub fn parent_configs(&self, v: usize) -> usize {
        self.parents[v]
            .iter()
            .map(|&p| self.cardinality(p))
            .product()
    }

    /// The row of `v`'s CPT for a full assignment (parents row-major, first parent slowest).
    pub fn parent_row(&self, v: usize, assignment: &[usize]) -> usize {
        self.parents[v]
            .iter()
            .fold(0, |row, &p| row * self.cardinality(p) + assignment[p])
    }

    /// The restriction predictive BP needs here: at least one observed variable, every
    /// observed variable a sink with at least one latent parent, every latent variable with an
    /// observed descendant. The paper (Sec. 3, Learning Step 1) only asks that each observed
    /// variable be associated with one leaf clique; our restriction to sinks guarantees it, since
    /// a sink X then sits in the leaf clique {X} ∪ Pa(X). Errors name the variable.
    pub fn check_for_pbp(&self) -> Result<()> {
        if self.observed().is_empty() {
            return Err(Error::Other("the model has no observed variable".into()));
        }
        for v in self.observed() {
            let name = &self.nodes[v].name;
            if let Some(&c) = self.children[v].first() {
                return Err(Error::Other(format!(
                    "observed variable '{name}' has a child '{}'; predictive BP needs every observed variable to be a sink, so that it sits in a leaf clique with its parents",
                    self.nodes[c].name
                )));
            }
            if self.parents[v].is_empty() {
                return Err(Error::Other(format!(
                    "observed variable '{name}' has no parent; it is independent of the latent model and cannot sit in a leaf clique below a latent separator"
                )));
            }
        }
        for v in self.latent() {
            if !self.has_observed_descendant(v) {
                return Err(Error::Other(format!(
                    "latent variable '{}' has no observed descendant; nothing in the data can inform it (remove it or observe a child)",
                    self.nodes[v].name
                )));
            }
        }
        Ok(())
    }

    fn has_observed_descendant(&self, v: usize) -> bool {
        let mut stack = self.children[v].clone();
        let mut seen = vec![false; self.len()];
        while let Some(u) = stack.pop() {
            if seen[u] {
                continue;
            }
            seen[u] = true;
            if self.is_observed(u) {
                return true;
            }
            stack.extend_from_slice(&self.children[u]);
        }
        false
    }
}

/// Kahn's algorithm; on failure, one cycle (as node ids, closed).
fn topological_order(
    parents: &[Vec<usize>],
    children: &[Vec<usize>],
) -> std::result::Result<Vec<usize>, Vec<usize>> {
    let v = parents.len();
    let mut indegree: Vec<usize> = parents.iter().map(Vec::len).collect();
    let mut ready: Vec<usize> = (0..v).rev().filter(|&i| indegree[i] == 0).collect();
    let mut order = Vec::with_capacity(v);
    while let Some(i) = ready.pop() {
        order.push(i);
        for &c in children[i].iter().rev() {
            indegree[c] -= 1;
            if indegree[c] == 0 {
                ready.push(c);
            }
        }
    }
    if order.len() == v {
        return Ok(order);
    }
    // Walk parents among the unplaced nodes until a node repeats: that is a cycle.
    let start = (0..v).find(|&i| indegree[i] > 0).unwrap_or(0);
    let mut path = vec![start];
    let mut at = start;
    loop {
        let Some(&p) = parents[at].iter().find(|&&p| indegree[p] > 0) else {
            return Err(path);
        };
        if let Some(k) = path.iter().position(|&q| q == p) {
            let mut cycle: Vec<usize> = path[k..].to_vec();
            cycle.reverse();
            cycle.push(cycle[0]);
            return Err(cycle);
        }
        path.push(p);
        at = p;
    }
}

/// A DAG with its conditional probability tables: `cpts[v]` is row-major
/// `parent_configs(v) × cardinality(v)`, each row a distribution.
#[derive(Debug, Clone, PartialEq)]
pub struct BayesNet {
    pub dag: LatentDag,
    pub cpts: Vec<Vec<f64>>,
}

impl BayesNet {
    /// Checks the CPTs' shapes, signs and row sums (to 1e-6; rows are renormalised).
    pub fn new(dag: LatentDag, cpts: Vec<Vec<f64>>) -> Result<BayesNet> {
        if cpts.len() != dag.len() {
            return Err(Error::Other(format!(
                "{} CPTs given for {} nodes",
                cpts.len(),
                dag.len()
            )));
        }
        let mut cpts = cpts;
        for (v, cpt) in cpts.iter_mut().enumerate() {
            let card = dag.cardinality(v);
            let rows = dag.parent_configs(v);
            let name = &dag.node(v).name;
            if cpt.len() != rows * card {
                return Err(Error::Other(format!(
                    "the CPT of '{name}' has {} entries; expected {rows} rows of {card}",
                    cpt.len()
                )));
            }
            for (r, row) in cpt.chunks_mut(card).enumerate() {
                if row.iter().any(|p| !p.is_finite() || *p < 0.0) {
                    return Err(Error::Other(format!(
                        "the CPT of '{name}', row {r}, has a negative or non-finite entry"
                    )));
                }
                let s: f64 = row.iter().sum();
                if (s - 1.0).abs() > 1e-6 {
                    return Err(Error::Other(format!(
                        "the CPT of '{name}', row {r}, sums to {s}, not 1"
                    )));
                }
                row.iter_mut().for_each(|p| *p /= s);
            }
        }
        Ok(BayesNet { dag, cpts })
    }

    /// Every CPT row drawn from Dirichlet(concentration).
    pub fn random(dag: LatentDag, concentration: f64, rng: &mut impl Rng) -> Result<BayesNet> {
        let cpts = (0..dag.len())
            .map(|v| {
                random_cpt(
                    dag.parent_configs(v),
                    dag.cardinality(v),
                    concentration,
                    rng,
                )
            })
            .collect::<Result<Vec<_>>>()?;
        BayesNet::new(dag, cpts)
    }

    /// P(X_v = x | parents as in `assignment`).
    pub fn prob(&self, v: usize, assignment: &[usize]) -> f64 {
        let card = self.dag.cardinality(v);
        self.cpts[v][self.dag.parent_row(v, assignment) * card + assignment[v]]
    }

    /// One joint draw of every variable (ancestral sampling).
    pub fn sample(&self, rng: &mut impl Rng, assignment: &mut [usize]) {
        for &v in self.dag.topological_order() {
            let card = self.dag.cardinality(v);
            let row = self.dag.parent_row(v, assignment) * card;
            let u: f64 = rng.random();
            let mut acc = 0.0;
            let mut x = card - 1;
            for (k, p) in self.cpts[v][row..row + card].iter().enumerate() {
                acc += p;
                if u < acc {
                    x = k;
                    break;
                }
            }
            assignment[v] = x;
        }
    }
}

/// `rows` distributions over `card` values, each Dirichlet(concentration).
pub fn random_cpt(
    rows: usize,
    card: usize,
    concentration: f64,
    rng: &mut impl Rng,
) -> Result<Vec<f64>> {
    let gamma =
        Gamma::new(concentration, 1.0).map_err(|e| Error::param("concentration", e.to_string()))?;
    let mut out = Vec::with_capacity(rows * card);
    for _ in 0..rows {
        let draws: Vec<f64> = (0..card).map(|_| gamma.sample(rng).max(1e-300)).collect();
        let s: f64 = draws.iter().sum();
        out.extend(draws.iter().map(|g| g / s));
    }
    Ok(out)
}

/// The model-file format (JSON), as the editor saves it:
/// `{"nodes": [{"name": "A", "cardinality": 2, "observed": false}, ...],
///   "edges": [["A", "B"], ...], "cpts": {"B": [[0.3, 0.7], [0.6, 0.4]], ...}}`.
/// CPT rows are parent configurations, parents in node order, first parent slowest; `cpts` is
/// optional (absent ones are drawn from Dirichlet(1) with the run's seed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelFile {
    pub nodes: Vec<DagNode>,
    pub edges: Vec<(String, String)>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub cpts: BTreeMap<String, Vec<Vec<f64>>>,
}

impl ModelFile {
    /// Parses the JSON text; errors say what is malformed.
    pub fn parse(text: &str) -> Result<ModelFile> {
        serde_json::from_str(text).map_err(|e| Error::Other(format!("model file: {e}")))
    }

    /// The checked DAG.
    pub fn dag(&self) -> Result<LatentDag> {
        let index = |name: &str| {
            self.nodes
                .iter()
                .position(|n| n.name == name)
                .ok_or_else(|| Error::Other(format!("edge names an unknown node '{name}'")))
        };
        let edges = self
            .edges
            .iter()
            .map(|(a, b)| Ok((index(a)?, index(b)?)))
            .collect::<Result<Vec<_>>>()?;
        LatentDag::new(self.nodes.clone(), edges)
    }

    /// The model with its CPTs; missing CPTs drawn from Dirichlet(1) with `rng`.
    pub fn bayes_net(&self, rng: &mut impl Rng) -> Result<BayesNet> {
        let dag = self.dag()?;
        for name in self.cpts.keys() {
            if dag.index_of(name).is_none() {
                return Err(Error::Other(format!("CPT for an unknown node '{name}'")));
            }
        }
        let mut cpts = Vec::with_capacity(dag.len());
        for v in 0..dag.len() {
            let node = dag.node(v);
            match self.cpts.get(&node.name) {
                Some(rows) => {
                    if rows.len() != dag.parent_configs(v) {
                        return Err(Error::Other(format!(
                            "the CPT of '{}' has {} rows; its parents have {} configurations",
                            node.name,
                            rows.len(),
                            dag.parent_configs(v)
                        )));
                    }
                    if let Some(r) = rows.iter().position(|r| r.len() != node.cardinality) {
                        return Err(Error::Other(format!(
                            "the CPT of '{}', row {r}, has {} entries; the node has {} values",
                            node.name,
                            rows[r].len(),
                            node.cardinality
                        )));
                    }
                    cpts.push(rows.concat());
                }
                None => cpts.push(random_cpt(
                    dag.parent_configs(v),
                    node.cardinality,
                    1.0,
                    rng,
                )?),
            }
        }
        BayesNet::new(dag, cpts)
    }

    /// The file for a model (with its CPTs when given).
    pub fn from_model(dag: &LatentDag, cpts: Option<&[Vec<f64>]>) -> ModelFile {
        let name = |v: usize| dag.node(v).name.clone();
        ModelFile {
            nodes: dag.nodes().to_vec(),
            edges: dag
                .edges()
                .iter()
                .map(|&(a, b)| (name(a), name(b)))
                .collect(),
            cpts: cpts
                .map(|cpts| {
                    (0..dag.len())
                        .map(|v| {
                            let card = dag.cardinality(v);
                            (name(v), cpts[v].chunks(card).map(<[f64]>::to_vec).collect())
                        })
                        .collect()
                })
                .unwrap_or_default(),
        }
    }
}

/// Our stand-in for the synthetic model of the paper's Fig. 4 (Sec. 6 "Synthetic Dataset"; the
/// figure's graph is not recoverable, so this is our choice): latent A, B, C, I (2 states),
/// observed D, E, F, G, H (3 states); edges A→B, A→C, B→C (a loop among latents), C→I, B→D,
/// B→E, A→F, I→G, I→H. `loop_free` drops B→C.
pub fn synthetic_stand_in(loop_free: bool) -> LatentDag {
    let names = ["A", "B", "C", "D", "E", "F", "G", "H", "I"];
    let nodes = names
        .iter()
        .map(|&n| DagNode {
            name: n.into(),
            cardinality: if matches!(n, "A" | "B" | "C" | "I") {
                2
            } else {
                3
            },
            observed: !matches!(n, "A" | "B" | "C" | "I"),
        })
        .collect();
    let id = |n: &str| names.iter().position(|&m| m == n).unwrap_or(0);
    let mut edges = vec![
        ("A", "B"),
        ("A", "C"),
        ("C", "I"),
        ("B", "D"),
        ("B", "E"),
        ("A", "F"),
        ("I", "G"),
        ("I", "H"),
    ];
    if !loop_free {
        edges.push(("B", "C"));
    }
    let edges = edges.iter().map(|&(a, b)| (id(a), id(b))).collect();
    // The stand-in is valid by construction (no cycle, unique names).
    LatentDag::new(nodes, edges).unwrap_or_else(|e| unreachable!("stand-in model: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, observed: bool) -> DagNode {
        DagNode {
            name: name.into(),
            cardinality: 2,
            observed,
        }
    }

    #[test]
    fn an_absurd_cpt_is_refused_before_anything_is_allocated() {
        let big = |name: &str| DagNode {
            name: name.into(),
            cardinality: 1000,
            observed: false,
        };
        let nodes = vec![big("A"), big("B"), big("C"), node("D", true)];
        // D's table: 2 x 1000^3 entries.
        let err = LatentDag::new(nodes, vec![(0, 3), (1, 3), (2, 3)]).unwrap_err();
        assert!(err.to_string().contains("node 'D' with 3 parents"), "{err}");
    }

    #[test]
    fn a_cycle_is_refused_and_named() {
        let nodes = vec![node("X", false), node("Y", false), node("Z", true)];
        let err = LatentDag::new(nodes, vec![(0, 1), (1, 0), (1, 2)]).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("cycle"), "{text}");
        assert!(text.contains('X') && text.contains('Y'), "{text}");
    }

    #[test]
    fn an_observed_parent_is_refused_with_its_name() {
        let nodes = vec![node("H", false), node("O", true), node("P", true)];
        let dag = LatentDag::new(nodes, vec![(0, 1), (1, 2)]).unwrap();
        let text = dag.check_for_pbp().unwrap_err().to_string();
        assert!(text.contains("'O'") && text.contains("sink"), "{text}");
    }

    #[test]
    fn the_model_file_round_trips() {
        let dag = synthetic_stand_in(false);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let net = BayesNet::random(dag.clone(), 1.0, &mut rng).unwrap();
        let file = ModelFile::from_model(&dag, Some(&net.cpts));
        let text = serde_json::to_string(&file).unwrap();
        let back = ModelFile::parse(&text)
            .unwrap()
            .bayes_net(&mut rng)
            .unwrap();
        assert_eq!(back.dag, dag);
        for (a, b) in back.cpts.iter().zip(&net.cpts) {
            for (x, y) in a.iter().zip(b) {
                assert!((x - y).abs() < 1e-15);
            }
        }
    }

    use rand::SeedableRng;
}
