//! The latent junction tree of predictive BP (Wang & Gordon, AAAI 2020, Sec. 3 "Junction Trees"
//! and Learning Step 1): moralise the DAG, triangulate by
//! min-fill, take the maximal cliques, join them by a maximum-weight spanning tree on separator
//! size; every observed variable (a sink, checked by [`LatentDag::check_for_pbp`]) gets its own
//! leaf clique {X} ∪ Pa(X).
//!
//! Observed sinks are simplicial in the moral graph (their neighbours are their parents, which
//! moralisation married), so min-fill on the whole moral graph would eliminate them first with
//! no fill; we therefore triangulate the latent part and hang each {X} ∪ Pa(X) below the
//! smallest latent clique containing Pa(X). This is the maximum-weight junction tree with the
//! constraint that observed variables sit in leaves (ties among equal-weight trees could
//! otherwise chain two leaf cliques {B,D}–{B,E}).
//!
//! Cost: min-fill O(V_h^3) on V_h latent nodes; Kruskal O(C^2 log C) on C cliques.

use crate::error::{Error, Result};

use super::latent_dag::LatentDag;

/// The unrooted latent junction tree.
#[derive(Debug, Clone, PartialEq)]
pub struct LatentJunctionTree {
    /// Node ids of each clique, sorted.
    pub cliques: Vec<Vec<usize>>,
    /// Tree neighbours of each clique.
    pub neighbours: Vec<Vec<usize>>,
    /// For a leaf clique, its observed variable.
    pub leaf_var: Vec<Option<usize>>,
    /// For an observed node, its leaf clique.
    pub leaf_of: Vec<Option<usize>>,
    /// The latent-only cliques (root candidates).
    pub core: Vec<usize>,
}

impl LatentJunctionTree {
    /// Builds the tree; errors name the variable that breaks our restriction (observed
    /// variables are sinks, so that each sits in a leaf clique; see [`LatentDag::check_for_pbp`]).
    pub fn build(dag: &LatentDag) -> Result<LatentJunctionTree> {
        dag.check_for_pbp()?;
        let v = dag.len();
        // Moral graph, restricted to latent nodes (observed sinks only marry their parents).
        let mut adj = vec![vec![false; v]; v];
        for x in 0..v {
            let pa = dag.parents(x);
            for (i, &a) in pa.iter().enumerate() {
                for &b in &pa[i + 1..] {
                    adj[a][b] = true;
                    adj[b][a] = true;
                }
                adj[a][x] = true;
                adj[x][a] = true;
            }
        }
        let latent = dag.latent();
        let core_cliques = min_fill_cliques(&latent, &mut adj, |u| dag.cardinality(u));
        let tree_edges = max_weight_spanning_tree(&core_cliques);
        let mut cliques = core_cliques;
        let core: Vec<usize> = (0..cliques.len()).collect();
        let mut neighbours = vec![Vec::new(); cliques.len()];
        for (a, b) in tree_edges {
            neighbours[a].push(b);
            neighbours[b].push(a);
        }
        let mut leaf_var = vec![None; cliques.len()];
        let mut leaf_of = vec![None; v];
        for x in dag.observed() {
            let pa = dag.parents(x);
            let host = core
                .iter()
                .copied()
                .filter(|&c| pa.iter().all(|p| cliques[c].contains(p)))
                .min_by_key(|&c| (cliques[c].len(), c))
                .ok_or_else(|| {
                    Error::Other(format!(
                        "no latent clique holds the parents of '{}' (triangulation error)",
                        dag.node(x).name
                    ))
                })?;
            let mut clique: Vec<usize> = pa.to_vec();
            clique.push(x);
            clique.sort_unstable();
            let id = cliques.len();
            cliques.push(clique);
            neighbours.push(vec![host]);
            neighbours[host].push(id);
            leaf_var.push(Some(x));
            leaf_of[x] = Some(id);
        }
        for &c in &core {
            if neighbours[c].len() < 2 && core.len() > 1 || neighbours[c].is_empty() {
                let names: Vec<&str> = cliques[c]
                    .iter()
                    .map(|&u| dag.node(u).name.as_str())
                    .collect();
                return Err(Error::Other(format!(
                    "latent clique {{{}}} has no observed variable below it; predictive BP needs observed variables in every leaf clique",
                    names.join(",")
                )));
            }
        }
        Ok(LatentJunctionTree {
            cliques,
            neighbours,
            leaf_var,
            leaf_of,
            core,
        })
    }

    pub fn len(&self) -> usize {
        self.cliques.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cliques.is_empty()
    }

    /// The tree rooted at `root` (must be a latent clique).
    pub fn rooted(&self, root: usize) -> Result<RootedTree> {
        if !self.core.contains(&root) {
            return Err(Error::Other(format!(
                "clique {root} cannot be the root: the root must be a non-leaf (latent) clique"
            )));
        }
        let n = self.len();
        let mut parent = vec![None; n];
        let mut children = vec![Vec::new(); n];
        let mut depth = vec![0; n];
        let mut order = vec![root];
        let mut seen = vec![false; n];
        seen[root] = true;
        let mut k = 0;
        while k < order.len() {
            let c = order[k];
            k += 1;
            for &d in &self.neighbours[c] {
                if !seen[d] {
                    seen[d] = true;
                    parent[d] = Some(c);
                    depth[d] = depth[c] + 1;
                    children[c].push(d);
                    order.push(d);
                }
            }
        }
        for ch in &mut children {
            ch.sort_unstable();
        }
        let separators = (0..n)
            .map(|c| match parent[c] {
                Some(p) => self.cliques[c]
                    .iter()
                    .copied()
                    .filter(|u| self.cliques[p].contains(u))
                    .collect(),
                None => Vec::new(),
            })
            .collect();
        Ok(RootedTree {
            root,
            parent,
            children,
            depth,
            order,
            separators,
            leaf_var: self.leaf_var.clone(),
        })
    }
}

/// A junction tree with a root. A separator is named by its child clique `c` (between `c` and
/// `parent[c]`).
#[derive(Debug, Clone, PartialEq)]
pub struct RootedTree {
    pub root: usize,
    pub parent: Vec<Option<usize>>,
    /// Children of each clique, sorted.
    pub children: Vec<Vec<usize>>,
    pub depth: Vec<usize>,
    /// Breadth-first from the root (parents before children).
    pub order: Vec<usize>,
    /// Variables of the separator above each clique (empty for the root).
    pub separators: Vec<Vec<usize>>,
    pub leaf_var: Vec<Option<usize>>,
}

impl RootedTree {
    pub fn is_leaf(&self, c: usize) -> bool {
        self.leaf_var[c].is_some()
    }

    /// The observed variables in In(S_c) (the subtree of `c`), nearest first (by tree distance
    /// from `c`, ties by node id).
    pub fn inside_observed(&self, c: usize) -> Vec<usize> {
        let mut found = Vec::new();
        let mut stack = vec![(c, 0usize)];
        while let Some((d, dist)) = stack.pop() {
            if let Some(x) = self.leaf_var[d] {
                found.push((dist, x));
            }
            for &e in &self.children[d] {
                stack.push((e, dist + 1));
            }
        }
        found.sort_unstable();
        found.into_iter().map(|(_, x)| x).collect()
    }

    /// The observed variables in Out(S_c), nearest to `parent[c]` first.
    pub fn outside_observed(&self, c: usize) -> Vec<usize> {
        let Some(p) = self.parent[c] else {
            return Vec::new();
        };
        let n = self.parent.len();
        let mut dist = vec![usize::MAX; n];
        let mut queue = std::collections::VecDeque::from([p]);
        dist[p] = 0;
        let mut found = Vec::new();
        while let Some(d) = queue.pop_front() {
            if let Some(x) = self.leaf_var[d] {
                found.push((dist[d], x));
            }
            let mut next: Vec<usize> = self.children[d].clone();
            next.extend(self.parent[d]);
            for e in next {
                if e != c && dist[e] == usize::MAX {
                    dist[e] = dist[d] + 1;
                    queue.push_back(e);
                }
            }
        }
        found.sort_unstable();
        found.into_iter().map(|(_, x)| x).collect()
    }

    /// The non-root latent cliques: their separators carry learned operators W_S.
    pub fn inner_separators(&self) -> Vec<usize> {
        self.order
            .iter()
            .copied()
            .filter(|&c| c != self.root && !self.is_leaf(c))
            .collect()
    }
}

/// Min-fill elimination over `nodes` of the graph `adj` (fill edges added in place); returns
/// the maximal cliques, each sorted. Ties: fewer fill edges, then smaller clique weight
/// (product of cardinalities), then the smaller node id.
fn min_fill_cliques(
    nodes: &[usize],
    adj: &mut [Vec<bool>],
    card: impl Fn(usize) -> usize,
) -> Vec<Vec<usize>> {
    let mut alive: Vec<usize> = nodes.to_vec();
    let mut cliques: Vec<Vec<usize>> = Vec::new();
    while !alive.is_empty() {
        let neighbours_of = |u: usize, alive: &[usize]| -> Vec<usize> {
            alive
                .iter()
                .copied()
                .filter(|&w| w != u && adj[u][w])
                .collect()
        };
        let (pick, _) = alive
            .iter()
            .map(|&u| {
                let nb = neighbours_of(u, &alive);
                let mut fill = 0;
                for (i, &a) in nb.iter().enumerate() {
                    for &b in &nb[i + 1..] {
                        if !adj[a][b] {
                            fill += 1;
                        }
                    }
                }
                let weight: usize = nb.iter().map(|&w| card(w)).product::<usize>() * card(u);
                (u, (fill, weight, u))
            })
            .min_by_key(|&(_, key)| key)
            .unwrap_or((alive[0], (0, 0, 0)));
        let nb = neighbours_of(pick, &alive);
        for (i, &a) in nb.iter().enumerate() {
            for &b in &nb[i + 1..] {
                adj[a][b] = true;
                adj[b][a] = true;
            }
        }
        let mut clique = nb;
        clique.push(pick);
        clique.sort_unstable();
        if !cliques.iter().any(|c| clique.iter().all(|u| c.contains(u))) {
            cliques.retain(|c| !c.iter().all(|u| clique.contains(u)));
            cliques.push(clique);
        }
        alive.retain(|&u| u != pick);
    }
    // Order the cliques by their smallest member, so the tree does not depend on elimination.
    cliques.sort();
    cliques
}

/// Kruskal on the complete clique graph with weight |C_a ∩ C_b| (zero-weight edges join
/// disconnected parts). Returns the tree's edges.
fn max_weight_spanning_tree(cliques: &[Vec<usize>]) -> Vec<(usize, usize)> {
    let n = cliques.len();
    let mut candidates = Vec::new();
    for a in 0..n {
        for b in a + 1..n {
            let w = cliques[a].iter().filter(|u| cliques[b].contains(u)).count();
            candidates.push((std::cmp::Reverse(w), a, b));
        }
    }
    candidates.sort_unstable();
    let mut root: Vec<usize> = (0..n).collect();
    fn find(root: &mut [usize], mut x: usize) -> usize {
        while root[x] != x {
            root[x] = root[root[x]];
            x = root[x];
        }
        x
    }
    let mut edges = Vec::new();
    for (_, a, b) in candidates {
        let (ra, rb) = (find(&mut root, a), find(&mut root, b));
        if ra != rb {
            root[ra] = rb;
            edges.push((a, b));
        }
    }
    edges
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::latent_dag::synthetic_stand_in;

    fn names(dag: &LatentDag, c: &[usize]) -> String {
        c.iter().map(|&u| dag.node(u).name.as_str()).collect()
    }

    #[test]
    fn the_stand_in_gives_the_spec_tree() {
        let dag = synthetic_stand_in(false);
        let jt = LatentJunctionTree::build(&dag).unwrap();
        let core: Vec<String> = jt
            .core
            .iter()
            .map(|&c| names(&dag, &jt.cliques[c]))
            .collect();
        assert_eq!(core, ["ABC", "CI"]);
        let root = jt.rooted(0).unwrap();
        let mut leaves: Vec<(String, String)> = (0..jt.len())
            .filter(|&c| root.is_leaf(c))
            .map(|c| {
                let p = root.parent[c].unwrap();
                (names(&dag, &jt.cliques[c]), names(&dag, &jt.cliques[p]))
            })
            .collect();
        leaves.sort();
        let expect = [
            ("AF", "ABC"),
            ("BD", "ABC"),
            ("BE", "ABC"),
            ("GI", "CI"),
            ("HI", "CI"),
        ];
        for (got, want) in leaves.iter().zip(expect) {
            assert_eq!((got.0.as_str(), got.1.as_str()), want);
        }
        assert_eq!(names(&dag, &root.separators[1]), "C");
        let c = 1;
        let inside: String = names(&dag, &root.inside_observed(c));
        assert_eq!(inside, "GH");
        assert_eq!(names(&dag, &root.outside_observed(c)), "DEF");
    }

    #[test]
    fn the_loop_free_variant_has_edge_cliques() {
        let dag = synthetic_stand_in(true);
        let jt = LatentJunctionTree::build(&dag).unwrap();
        let core: Vec<String> = jt
            .core
            .iter()
            .map(|&c| names(&dag, &jt.cliques[c]))
            .collect();
        assert_eq!(core, ["AB", "AC", "CI"]);
    }
}
