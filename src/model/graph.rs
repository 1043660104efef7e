//! Undirected pairwise graphs with directed-message bookkeeping.
//!
//! Every undirected edge `e = (a, b)` carries two directed messages: id `2e` for `a -> b` and
//! id `2e + 1` for `b -> a`, so the reverse of message `m` is `m ^ 1` (O(1)). Each node keeps its
//! neighbours with the incoming and outgoing message ids, so a leave-one-out product over a
//! node's incoming messages needs no search. Building a graph costs O(n + |E| log |E|)
//! (duplicate detection); every query afterwards is O(1) or O(degree).

use std::collections::BTreeSet;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

pub type NodeId = usize;
pub type EdgeId = usize;
/// A directed message id: `2 * edge` for `edge.0 -> edge.1`, `2 * edge + 1` for the reverse.
pub type MsgId = usize;

pub use crate::error::graph::GraphError;

/// One neighbour of a node, with the ids of the two messages on the shared edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Neighbor {
    pub node: NodeId,
    pub edge: EdgeId,
    /// The message `node -> self`.
    pub incoming: MsgId,
    /// The message `self -> node`.
    pub outgoing: MsgId,
}

/// An undirected pairwise graph (no self loops, no duplicate edges).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Graph {
    num_nodes: usize,
    edges: Vec<(NodeId, NodeId)>,
    adjacency: Vec<Vec<Neighbor>>,
}

impl Graph {
    /// Builds a graph on nodes `0..n` from undirected edges, refusing self loops, duplicates
    /// (in either orientation) and out-of-range ids. O(n + |E| log |E|).
    pub fn from_edges(n: usize, edges: &[(NodeId, NodeId)]) -> Result<Graph, GraphError> {
        if n == 0 {
            return Err(GraphError::Empty);
        }
        let mut seen = BTreeSet::new();
        for &(a, b) in edges {
            for node in [a, b] {
                if node >= n {
                    return Err(GraphError::OutOfRange { a, b, node, n });
                }
            }
            if a == b {
                return Err(GraphError::SelfLoop { node: a });
            }
            if !seen.insert((a.min(b), a.max(b))) {
                return Err(GraphError::DuplicateEdge { a, b });
            }
        }
        let mut adjacency = vec![Vec::new(); n];
        for (e, &(a, b)) in edges.iter().enumerate() {
            adjacency[a].push(Neighbor {
                node: b,
                edge: e,
                incoming: 2 * e + 1,
                outgoing: 2 * e,
            });
            adjacency[b].push(Neighbor {
                node: a,
                edge: e,
                incoming: 2 * e,
                outgoing: 2 * e + 1,
            });
        }
        Ok(Graph {
            num_nodes: n,
            edges: edges.to_vec(),
            adjacency,
        })
    }

    /// A path `0 - 1 - ... - (n-1)`.
    pub fn chain(n: usize) -> Result<Graph, GraphError> {
        let edges: Vec<_> = (1..n).map(|i| (i - 1, i)).collect();
        Graph::from_edges(n, &edges)
    }

    /// Node 0 joined to each of `1..n`.
    pub fn star(n: usize) -> Result<Graph, GraphError> {
        let edges: Vec<_> = (1..n).map(|i| (0, i)).collect();
        Graph::from_edges(n, &edges)
    }

    /// A complete `branching`-ary tree of the given depth (depth 0 is a single root), nodes in
    /// breadth-first order.
    pub fn balanced_tree(branching: usize, depth: usize) -> Result<Graph, GraphError> {
        let mut n = 1usize;
        let mut level = 1usize;
        for _ in 0..depth {
            level *= branching.max(1);
            n += level;
        }
        let edges: Vec<_> = if branching == 0 {
            Vec::new()
        } else {
            (1..n).map(|i| ((i - 1) / branching, i)).collect()
        };
        Graph::from_edges(if branching == 0 { 1 } else { n }, &edges)
    }

    /// A random recursive tree: node `i` attaches to a uniformly chosen earlier node (seeded).
    pub fn random_tree(n: usize, seed: u64) -> Result<Graph, GraphError> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let edges: Vec<_> = (1..n).map(|i| (rng.random_range(0..i), i)).collect();
        Graph::from_edges(n, &edges)
    }

    /// A 4-connected `w x h` grid; node id of pixel `(x, y)` is `y * w + x`. Horizontal edges
    /// come first, then vertical ones.
    pub fn grid(w: usize, h: usize) -> Result<Graph, GraphError> {
        let mut edges = Vec::with_capacity(2 * w * h);
        for y in 0..h {
            for x in 1..w {
                edges.push((y * w + x - 1, y * w + x));
            }
        }
        for y in 1..h {
            for x in 0..w {
                edges.push(((y - 1) * w + x, y * w + x));
            }
        }
        Graph::from_edges(w * h, &edges)
    }

    pub fn num_nodes(&self) -> usize {
        self.num_nodes
    }

    pub fn num_edges(&self) -> usize {
        self.edges.len()
    }

    /// Number of directed messages, `2 |E|`.
    pub fn num_messages(&self) -> usize {
        2 * self.edges.len()
    }

    pub fn edges(&self) -> &[(NodeId, NodeId)] {
        &self.edges
    }

    pub fn neighbors(&self, node: NodeId) -> &[Neighbor] {
        &self.adjacency[node]
    }

    pub fn degree(&self, node: NodeId) -> usize {
        self.adjacency[node].len()
    }

    /// The colour classes of a greedy colouring in id order (each node takes the smallest
    /// colour none of its lower-id neighbours has), in colour order, ids ascending within a
    /// class. No two nodes of a class are neighbours, so a class can send its messages
    /// together; on a grid numbered in raster order the classes are the two colours of a
    /// checkerboard. Cost O(n + |E|).
    pub fn colour_classes(&self) -> Vec<Vec<NodeId>> {
        let n = self.num_nodes();
        let mut colour = vec![usize::MAX; n];
        let mut classes: Vec<Vec<NodeId>> = Vec::new();
        let mut taken: Vec<usize> = Vec::new();
        for t in 0..n {
            taken.clear();
            taken.extend(
                self.neighbors(t)
                    .iter()
                    .map(|nb| colour[nb.node])
                    .filter(|&c| c != usize::MAX),
            );
            let c = (0..).find(|c| !taken.contains(c)).unwrap_or(0);
            colour[t] = c;
            if c == classes.len() {
                classes.push(Vec::new());
            }
            classes[c].push(t);
        }
        classes
    }

    /// The node a message leaves.
    pub fn source(&self, msg: MsgId) -> NodeId {
        let (a, b) = self.edges[msg / 2];
        if msg.is_multiple_of(2) { a } else { b }
    }

    /// The node a message arrives at.
    pub fn target(&self, msg: MsgId) -> NodeId {
        let (a, b) = self.edges[msg / 2];
        if msg.is_multiple_of(2) { b } else { a }
    }

    /// The message in the other direction on the same edge.
    pub fn reverse(msg: MsgId) -> MsgId {
        msg ^ 1
    }

    /// The id of message `from -> to`, if the two are neighbours. O(degree).
    pub fn message_between(&self, from: NodeId, to: NodeId) -> Option<MsgId> {
        self.adjacency[from]
            .iter()
            .find(|nb| nb.node == to)
            .map(|nb| nb.outgoing)
    }

    /// Ok if the graph is a spanning tree (connected, no cycle); otherwise the first edge that
    /// closes a cycle or a node that cannot be reached. O(n + |E|) with union-find.
    pub fn check_tree(&self) -> Result<(), GraphError> {
        let mut parent: Vec<usize> = (0..self.num_nodes).collect();
        fn find(parent: &mut [usize], mut x: usize) -> usize {
            while parent[x] != x {
                parent[x] = parent[parent[x]];
                x = parent[x];
            }
            x
        }
        for &(a, b) in &self.edges {
            let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
            if ra == rb {
                return Err(GraphError::Cycle { a, b });
            }
            parent[ra] = rb;
        }
        let root = find(&mut parent, 0);
        for node in 1..self.num_nodes {
            if find(&mut parent, node) != root {
                return Err(GraphError::Disconnected { node });
            }
        }
        Ok(())
    }

    /// Nodes in breadth-first order from `root`, with each node's parent (`None` for the root).
    /// On a tree, reversing the order gives a valid leaves-to-root schedule. O(n + |E|).
    pub fn bfs_order(&self, root: NodeId) -> Vec<(NodeId, Option<NodeId>)> {
        let mut visited = vec![false; self.num_nodes];
        self.bfs_within(root, |_| true, &mut visited)
    }

    /// [`Self::bfs_order`] restricted to the nodes where `keep` holds, marking what it reaches
    /// in `visited` (nodes already marked are skipped).
    fn bfs_within(
        &self,
        root: NodeId,
        keep: impl Fn(NodeId) -> bool,
        visited: &mut [bool],
    ) -> Vec<(NodeId, Option<NodeId>)> {
        let mut order = vec![(root, None)];
        visited[root] = true;
        let mut head = 0;
        while head < order.len() {
            let (node, _) = order[head];
            head += 1;
            for nb in &self.adjacency[node] {
                if keep(nb.node) && !visited[nb.node] {
                    visited[nb.node] = true;
                    order.push((nb.node, Some(node)));
                }
            }
        }
        order
    }

    /// The two-pass tree schedule on the forest induced by the nodes where `keep` holds (the
    /// hidden nodes, say): per component, every edge (child, parent) leaves to root, then
    /// (parent, child) root to leaves. Each pair `(i, j)` is the message i -> j, computed after
    /// all of i's other incoming messages within the forest. O(n + |E|).
    pub fn two_pass_schedule(&self, keep: impl Fn(NodeId) -> bool) -> Vec<(NodeId, NodeId)> {
        let mut visited = vec![false; self.num_nodes];
        let mut schedule = Vec::new();
        for start in 0..self.num_nodes {
            if visited[start] || !keep(start) {
                continue;
            }
            let order = self.bfs_within(start, &keep, &mut visited);
            schedule.extend(order.iter().rev().filter_map(|&(u, p)| p.map(|p| (u, p))));
            schedule.extend(order.iter().filter_map(|&(u, p)| p.map(|p| (p, u))));
        }
        schedule
    }

    /// The longest shortest path (in edges) from `start`; used for "exact after diameter sweeps".
    pub fn eccentricity(&self, start: NodeId) -> usize {
        let mut dist = vec![usize::MAX; self.num_nodes];
        dist[start] = 0;
        let mut queue = std::collections::VecDeque::from([start]);
        let mut far = 0;
        while let Some(node) = queue.pop_front() {
            far = far.max(dist[node]);
            for nb in &self.adjacency[node] {
                if dist[nb.node] == usize::MAX {
                    dist[nb.node] = dist[node] + 1;
                    queue.push_back(nb.node);
                }
            }
        }
        far
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_classes_on_a_grid_are_the_checkerboard() {
        let (w, h) = (5, 4);
        let g = Graph::grid(w, h).unwrap();
        let classes = g.colour_classes();
        assert_eq!(classes.len(), 2);
        for (c, class) in classes.iter().enumerate() {
            assert_eq!(class.len(), 10);
            assert!(class.iter().all(|&t| (t % w + t / w) % 2 == c), "{class:?}");
        }
    }

    #[test]
    fn colour_classes_hold_every_node_once_and_no_neighbours() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let edges: Vec<(usize, usize)> = (0..90)
            .map(|_| {
                let (a, b) = (rng.random_range(0..40), rng.random_range(0..40));
                (a.min(b), a.max(b))
            })
            .filter(|(a, b)| a != b)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let g = Graph::from_edges(40, &edges).unwrap();
        let classes = g.colour_classes();
        assert!(
            classes.len() > 2,
            "a random graph with triangles needs 3+ colours"
        );
        let mut class = vec![usize::MAX; 40];
        for (c, members) in classes.iter().enumerate() {
            for &t in members {
                assert_eq!(class[t], usize::MAX, "node {t} twice");
                class[t] = c;
            }
        }
        assert!(class.iter().all(|&c| c != usize::MAX));
        for &(a, b) in g.edges() {
            assert_ne!(class[a], class[b], "edge ({a}, {b}) inside one class");
        }
    }

    #[test]
    fn two_pass_schedule_covers_each_hidden_component_in_dependency_order() {
        // A tree 0-1-2-3 with 1-4, 4-5; hiding node 4 leaves the components {0,1,2,3} and {5}.
        let g = Graph::from_edges(6, &[(0, 1), (1, 2), (2, 3), (1, 4), (4, 5)]).unwrap();
        let schedule = g.two_pass_schedule(|v| v != 4);
        let mut seen = std::collections::HashSet::new();
        for &(i, j) in &schedule {
            for nb in g.neighbors(i) {
                if nb.node != j && nb.node != 4 {
                    assert!(
                        seen.contains(&(nb.node, i)),
                        "{:?} before {:?}",
                        (nb.node, i),
                        (i, j)
                    );
                }
            }
            assert!(seen.insert((i, j)), "({i}, {j}) twice");
        }
        // Both directions of the three edges among 0..=3, nothing touching 4 or 5.
        assert_eq!(schedule.len(), 6);
        assert!(schedule.iter().all(|&(i, j)| i < 4 && j < 4));
    }

    #[test]
    fn message_ids_are_consistent() {
        let g = Graph::grid(3, 2).unwrap();
        assert_eq!(g.num_edges(), 7);
        for m in 0..g.num_messages() {
            let (s, t) = (g.source(m), g.target(m));
            assert_eq!(g.source(Graph::reverse(m)), t);
            assert_eq!(g.message_between(s, t), Some(m));
            let nb = g.neighbors(t).iter().find(|nb| nb.node == s).unwrap();
            assert_eq!(nb.incoming, m);
            assert_eq!(nb.outgoing, Graph::reverse(m));
        }
    }

    #[test]
    fn builders_have_the_right_shape() {
        assert_eq!(Graph::chain(5).unwrap().num_edges(), 4);
        assert_eq!(Graph::star(6).unwrap().degree(0), 5);
        let t = Graph::balanced_tree(2, 3).unwrap();
        assert_eq!(t.num_nodes(), 15);
        assert!(t.check_tree().is_ok());
        let r = Graph::random_tree(50, 7).unwrap();
        assert!(r.check_tree().is_ok());
        assert_eq!(r, Graph::random_tree(50, 7).unwrap());
        let g = Graph::grid(4, 3).unwrap();
        assert_eq!(g.num_edges(), 3 * 3 + 4 * 2);
        assert!(matches!(g.check_tree(), Err(GraphError::Cycle { .. })));
        assert_eq!(Graph::chain(10).unwrap().eccentricity(0), 9);
    }

    #[test]
    fn invalid_edges_are_refused() {
        assert_eq!(
            Graph::from_edges(3, &[(0, 0)]),
            Err(GraphError::SelfLoop { node: 0 })
        );
        assert_eq!(
            Graph::from_edges(3, &[(0, 1), (1, 0)]),
            Err(GraphError::DuplicateEdge { a: 1, b: 0 })
        );
        assert!(matches!(
            Graph::from_edges(3, &[(0, 5)]),
            Err(GraphError::OutOfRange { node: 5, .. })
        ));
        assert_eq!(Graph::from_edges(0, &[]), Err(GraphError::Empty));
        let g = Graph::from_edges(4, &[(0, 1), (2, 3)]).unwrap();
        assert_eq!(g.check_tree(), Err(GraphError::Disconnected { node: 2 }));
    }
}
