//! The tree a person draws on the canvas, as plain data the window edits and the engine reads:
//! nodes with a name, columns and a position, undirected edges, validation that names the
//! offending edge or node (so the canvas can highlight it), and edge-list files. Also the tidy
//! layout used to draw any tree.
//!
//! Every operation is O(n + |E|) or less.

use serde::{Deserialize, Serialize};

use super::config::{NodeSpec, Topology};
use crate::io::csv::{EdgeList, EdgeListNode};
use crate::model::{Graph, NodeId};

/// A node on the canvas.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DraftNode {
    pub name: String,
    /// Columns of the dataset this node stands for (empty: not assigned yet).
    pub columns: Vec<String>,
    /// Canvas position in [0, 1]² (x right, y down).
    pub position: [f64; 2],
}

/// Why a drawing is not (yet) a usable tree. `edge()` / `node()` say what to highlight.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum DraftProblem {
    Empty,
    SelfLoop {
        node: usize,
    },
    DuplicateEdge {
        edge: (usize, usize),
    },
    /// This edge closes a cycle.
    Cycle {
        edge: (usize, usize),
    },
    /// This node cannot be reached from node 0.
    Disconnected {
        node: usize,
    },
    NoColumns {
        node: usize,
    },
    UnknownColumn {
        node: usize,
        column: String,
    },
    ColumnTwice {
        column: String,
        nodes: (usize, usize),
    },
    DuplicateName {
        node: usize,
    },
}

impl DraftProblem {
    /// The edge to highlight.
    pub fn edge(&self) -> Option<(usize, usize)> {
        match self {
            DraftProblem::Cycle { edge } | DraftProblem::DuplicateEdge { edge } => Some(*edge),
            _ => None,
        }
    }

    /// The node to highlight.
    pub fn node(&self) -> Option<usize> {
        match self {
            DraftProblem::SelfLoop { node }
            | DraftProblem::Disconnected { node }
            | DraftProblem::NoColumns { node }
            | DraftProblem::UnknownColumn { node, .. }
            | DraftProblem::DuplicateName { node } => Some(*node),
            DraftProblem::ColumnTwice { nodes, .. } => Some(nodes.1),
            _ => None,
        }
    }

    /// One line for the user, with node names.
    pub fn message(&self, draft: &TreeDraft) -> String {
        let n = |i: usize| {
            draft
                .nodes
                .get(i)
                .map_or_else(|| format!("#{i}"), |x| x.name.clone())
        };
        match self {
            DraftProblem::Empty => "the tree has no nodes".into(),
            DraftProblem::SelfLoop { node } => {
                format!("edge {} - {} is a self loop", n(*node), n(*node))
            }
            DraftProblem::DuplicateEdge { edge: (a, b) } => {
                format!("edge {} - {} is already there", n(*a), n(*b))
            }
            DraftProblem::Cycle { edge: (a, b) } => {
                format!("edge {} - {} closes a cycle: a tree has none", n(*a), n(*b))
            }
            DraftProblem::Disconnected { node } => format!(
                "node {} is not connected to {}: connect every node",
                n(*node),
                n(0)
            ),
            DraftProblem::NoColumns { node } => {
                format!("node {} has no column assigned", n(*node))
            }
            DraftProblem::UnknownColumn { node, column } => {
                format!("node {}: the data has no column '{column}'", n(*node))
            }
            DraftProblem::ColumnTwice {
                column,
                nodes: (a, b),
            } => {
                format!(
                    "column '{column}' is assigned to both {} and {}",
                    n(*a),
                    n(*b)
                )
            }
            DraftProblem::DuplicateName { node } => {
                format!("two nodes are named '{}'", n(*node))
            }
        }
    }
}

/// A drawn tree.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TreeDraft {
    pub nodes: Vec<DraftNode>,
    pub edges: Vec<(usize, usize)>,
}

impl TreeDraft {
    /// Adds a node at `position` with a fresh name ("n1", "n2", ...) and no columns.
    pub fn add_node(&mut self, position: [f64; 2]) -> usize {
        let mut k = self.nodes.len() + 1;
        while self.nodes.iter().any(|n| n.name == format!("n{k}")) {
            k += 1;
        }
        self.nodes.push(DraftNode {
            name: format!("n{k}"),
            columns: Vec::new(),
            position,
        });
        self.nodes.len() - 1
    }

    /// Removes a node and its edges; later node ids shift down by one.
    pub fn remove_node(&mut self, node: usize) {
        if node >= self.nodes.len() {
            return;
        }
        self.nodes.remove(node);
        self.edges.retain(|&(a, b)| a != node && b != node);
        for (a, b) in &mut self.edges {
            if *a > node {
                *a -= 1;
            }
            if *b > node {
                *b -= 1;
            }
        }
    }

    /// Connects `a` and `b` unless that makes a self loop, a duplicate or a cycle; the refused
    /// edge comes back in the problem so the canvas can flash it.
    pub fn connect(&mut self, a: usize, b: usize) -> Result<(), DraftProblem> {
        if a == b {
            return Err(DraftProblem::SelfLoop { node: a });
        }
        if self
            .edges
            .iter()
            .any(|&(x, y)| (x, y) == (a, b) || (x, y) == (b, a))
        {
            return Err(DraftProblem::DuplicateEdge { edge: (a, b) });
        }
        if self.connected(a, b) {
            return Err(DraftProblem::Cycle { edge: (a, b) });
        }
        self.edges.push((a, b));
        Ok(())
    }

    /// Removes the edge between `a` and `b`, if any.
    pub fn disconnect(&mut self, a: usize, b: usize) -> bool {
        let before = self.edges.len();
        self.edges
            .retain(|&(x, y)| (x, y) != (a, b) && (x, y) != (b, a));
        self.edges.len() != before
    }

    pub fn assign_columns(&mut self, node: usize, columns: Vec<String>) {
        if let Some(n) = self.nodes.get_mut(node) {
            n.columns = columns;
        }
    }

    pub fn rename(&mut self, node: usize, name: &str) {
        if let Some(n) = self.nodes.get_mut(node) {
            n.name = name.trim().to_string();
        }
    }

    pub fn move_node(&mut self, node: usize, position: [f64; 2]) {
        if let Some(n) = self.nodes.get_mut(node) {
            n.position = [position[0].clamp(0.0, 1.0), position[1].clamp(0.0, 1.0)];
        }
    }

    /// The node whose centre is within `radius` of `position` (the nearest), for hit tests.
    pub fn node_at(&self, position: [f64; 2], radius: f64) -> Option<usize> {
        self.nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let dx = n.position[0] - position[0];
                let dy = n.position[1] - position[1];
                (i, dx * dx + dy * dy)
            })
            .filter(|&(_, d2)| d2 <= radius * radius)
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
    }

    /// Whether `a` and `b` are joined by a path of edges. O(n + |E|).
    fn connected(&self, a: usize, b: usize) -> bool {
        let n = self.nodes.len();
        let mut parent: Vec<usize> = (0..n).collect();
        fn find(p: &mut [usize], mut x: usize) -> usize {
            while p[x] != x {
                p[x] = p[p[x]];
                x = p[x];
            }
            x
        }
        for &(x, y) in &self.edges {
            let (rx, ry) = (find(&mut parent, x), find(&mut parent, y));
            parent[rx] = ry;
        }
        a < n && b < n && find(&mut parent, a) == find(&mut parent, b)
    }

    /// Checks that the drawing is a tree whose nodes all have columns of `columns` (the
    /// dataset's names), each column used once. The first problem found is returned.
    pub fn validate(&self, columns: &[String]) -> Result<(), DraftProblem> {
        let n = self.nodes.len();
        if n == 0 {
            return Err(DraftProblem::Empty);
        }
        for (i, node) in self.nodes.iter().enumerate() {
            if self.nodes[..i].iter().any(|o| o.name == node.name) || node.name.is_empty() {
                return Err(DraftProblem::DuplicateName { node: i });
            }
        }
        let mut seen = std::collections::BTreeSet::new();
        for &(a, b) in &self.edges {
            if a == b {
                return Err(DraftProblem::SelfLoop { node: a });
            }
            if !seen.insert((a.min(b), a.max(b))) {
                return Err(DraftProblem::DuplicateEdge { edge: (a, b) });
            }
        }
        match self.graph() {
            Err(_) => return Err(DraftProblem::Empty),
            Ok(g) => match g.check_tree() {
                Ok(()) => {}
                Err(crate::model::GraphError::Cycle { a, b }) => {
                    return Err(DraftProblem::Cycle { edge: (a, b) });
                }
                Err(crate::model::GraphError::Disconnected { node }) => {
                    return Err(DraftProblem::Disconnected { node });
                }
                Err(_) => return Err(DraftProblem::Empty),
            },
        }
        let mut owner: std::collections::BTreeMap<&str, usize> = Default::default();
        for (i, node) in self.nodes.iter().enumerate() {
            if node.columns.is_empty() {
                return Err(DraftProblem::NoColumns { node: i });
            }
            for c in &node.columns {
                if !columns.contains(c) {
                    return Err(DraftProblem::UnknownColumn {
                        node: i,
                        column: c.clone(),
                    });
                }
                if let Some(&j) = owner.get(c.as_str()) {
                    return Err(DraftProblem::ColumnTwice {
                        column: c.clone(),
                        nodes: (j, i),
                    });
                }
                owner.insert(c, i);
            }
        }
        Ok(())
    }

    /// The drawing as a graph (no tree check).
    pub fn graph(&self) -> Result<Graph, crate::model::GraphError> {
        Graph::from_edges(self.nodes.len(), &self.edges)
    }

    /// The nodes and named edges for a [`super::TreeConfig`].
    pub fn to_config(&self) -> (Vec<NodeSpec>, Topology) {
        let nodes = self
            .nodes
            .iter()
            .map(|n| NodeSpec {
                name: n.name.clone(),
                columns: n.columns.clone(),
            })
            .collect();
        let edges = self
            .edges
            .iter()
            .map(|&(a, b)| (self.nodes[a].name.clone(), self.nodes[b].name.clone()))
            .collect();
        (nodes, Topology::Edges(edges))
    }

    /// A draft of an existing tree (for example the one the scenario is running), laid out
    /// tidily from `root`.
    pub fn from_tree(
        names: &[String],
        columns: &[Vec<String>],
        edges: &[(usize, usize)],
        root: NodeId,
    ) -> TreeDraft {
        let mut d = TreeDraft {
            nodes: names
                .iter()
                .zip(columns)
                .map(|(n, c)| DraftNode {
                    name: n.clone(),
                    columns: c.clone(),
                    position: [0.5, 0.5],
                })
                .collect(),
            edges: edges.to_vec(),
        };
        d.relayout(root);
        d
    }

    /// Tidy layout from `root` (see [`tidy_layout`]); leaves positions alone if the drawing is
    /// not a tree.
    pub fn relayout(&mut self, root: NodeId) {
        if let Ok(g) = self.graph()
            && g.check_tree().is_ok()
            && root < self.nodes.len()
        {
            for (n, p) in self.nodes.iter_mut().zip(wide_layout(&g, root)) {
                n.position = p;
            }
        }
    }

    /// The edge-list file of this drawing (names, columns, positions).
    pub fn to_edge_list(&self) -> EdgeList {
        EdgeList {
            nodes: self
                .nodes
                .iter()
                .map(|n| EdgeListNode {
                    name: n.name.clone(),
                    columns: n.columns.clone(),
                    position: Some(n.position),
                })
                .collect(),
            edges: self.edges.clone(),
        }
    }

    /// A drawing from an edge-list file: nodes without columns get the column of their own
    /// name, nodes without positions are laid out tidily (when the edges form a tree).
    pub fn from_edge_list(list: &EdgeList) -> TreeDraft {
        let mut d = TreeDraft {
            nodes: list
                .nodes
                .iter()
                .map(|n| DraftNode {
                    name: n.name.clone(),
                    columns: if n.columns.is_empty() {
                        vec![n.name.clone()]
                    } else {
                        n.columns.clone()
                    },
                    position: n.position.unwrap_or([0.5, 0.5]),
                })
                .collect(),
            edges: list.edges.clone(),
        };
        if list.nodes.iter().any(|n| n.position.is_none()) {
            d.relayout(0);
        }
        d
    }
}

/// A tidy drawing of a tree rooted at `root` in [0, 1]²: depth goes down (root at the top),
/// leaves are spaced evenly from left to right in depth-first order, and every parent sits
/// centred over its children (the classic layered layout of Wetherell and Shannon, simplified).
/// O(n).
pub fn tidy_layout(graph: &Graph, root: NodeId) -> Vec<[f64; 2]> {
    let n = graph.num_nodes();
    let order = graph.bfs_order(root);
    let mut children = vec![Vec::new(); n];
    let mut depth = vec![0usize; n];
    for &(u, p) in &order {
        if let Some(p) = p {
            children[p].push(u);
            depth[u] = depth[p] + 1;
        }
    }
    // Depth-first: leaves get consecutive slots; parents the mean of their children.
    let mut x = vec![0.0; n];
    let mut next_leaf = 0.0;
    let mut stack = vec![(root, false)];
    while let Some((u, expanded)) = stack.pop() {
        if children[u].is_empty() {
            x[u] = next_leaf;
            next_leaf += 1.0;
        } else if expanded {
            x[u] = children[u].iter().map(|&c| x[c]).sum::<f64>() / children[u].len() as f64;
        } else {
            stack.push((u, true));
            for &c in children[u].iter().rev() {
                stack.push((c, false));
            }
        }
    }
    let leaves = next_leaf.max(1.0);
    let max_depth = depth.iter().copied().max().unwrap_or(0).max(1) as f64;
    (0..n)
        .map(|u| {
            let px = if leaves <= 1.0 {
                0.5
            } else {
                0.08 + 0.84 * x[u] / (leaves - 1.0)
            };
            let py = 0.1 + 0.8 * depth[u] as f64 / max_depth;
            [px, py]
        })
        .collect()
}

/// [`tidy_layout`] for a wide canvas: when the tree is deeper than it is wide (a chain), depth
/// runs left to right instead of top to bottom. O(n).
pub fn wide_layout(graph: &Graph, root: NodeId) -> Vec<[f64; 2]> {
    let p = tidy_layout(graph, root);
    let levels = {
        let mut ys: Vec<f64> = p.iter().map(|q| q[1]).collect();
        ys.sort_by(f64::total_cmp);
        ys.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
        ys.len()
    };
    let leaves = (0..graph.num_nodes())
        .filter(|&v| graph.degree(v) <= 1 && (v != root || graph.num_nodes() == 1))
        .count();
    if levels > leaves.max(1) {
        p.into_iter().map(|[x, y]| [y, x]).collect()
    } else {
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn editing_refuses_cycles_and_validates() {
        let mut d = TreeDraft::default();
        let a = d.add_node([0.1, 0.1]);
        let b = d.add_node([0.5, 0.1]);
        let c = d.add_node([0.9, 0.1]);
        assert!(d.connect(a, b).is_ok());
        assert!(d.connect(b, c).is_ok());
        assert_eq!(d.connect(c, a), Err(DraftProblem::Cycle { edge: (c, a) }));
        assert_eq!(d.connect(a, a), Err(DraftProblem::SelfLoop { node: a }));
        let cols: Vec<String> = ["p", "q", "r"].iter().map(|s| s.to_string()).collect();
        assert_eq!(d.validate(&cols), Err(DraftProblem::NoColumns { node: 0 }));
        d.assign_columns(a, vec!["p".into()]);
        d.assign_columns(b, vec!["q".into(), "r".into()]);
        d.assign_columns(c, vec!["zz".into()]);
        let p = d.validate(&cols).unwrap_err();
        assert_eq!(p.node(), Some(c));
        assert!(p.message(&d).contains("zz"), "{}", p.message(&d));
        d.assign_columns(c, vec!["p".into()]);
        assert!(matches!(
            d.validate(&cols),
            Err(DraftProblem::ColumnTwice { .. })
        ));
        d.assign_columns(c, vec![]);
        d.remove_node(c);
        assert!(d.validate(&cols).is_ok());
        // A loaded edge list with a cycle: the closing edge is named.
        d.edges.push((0, 1));
        let p = d.validate(&cols).unwrap_err();
        assert!(p.edge().is_some());
        d.edges.pop();
        let e = d.add_node([0.5, 0.9]);
        d.assign_columns(e, vec!["r".into()]);
        d.assign_columns(b, vec!["q".into()]);
        assert_eq!(
            d.validate(&cols),
            Err(DraftProblem::Disconnected { node: e })
        );
        let back = TreeDraft::from_edge_list(&d.to_edge_list());
        assert_eq!(back, d);
        assert_eq!(d.node_at([0.49, 0.88], 0.05), Some(e));
    }

    #[test]
    fn tidy_layout_centres_parents() {
        let g = Graph::from_edges(5, &[(0, 1), (0, 2), (1, 3), (1, 4)]).unwrap();
        let p = tidy_layout(&g, 0);
        assert!((p[1][0] - 0.5 * (p[3][0] + p[4][0])).abs() < 1e-12);
        assert!(p[0][1] < p[1][1] && p[1][1] < p[3][1]);
        assert!(p.iter().all(|q| (0.0..=1.0).contains(&q[0])));
    }
}
