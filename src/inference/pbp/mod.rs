//! Predictive belief propagation (Borui Wang and Geoffrey Gordon, "Learning General
//! Latent-Variable Graphical Models with Predictive Belief Propagation", AAAI 2020), Secs. 3–4,
//! with two corrections and one rule of our own. Eq. (1) prints the outer product of the
//! conditional expectations ⊗_k E[θ^{S_k} | Ω]; Learning Step 4 regresses per-sample outer
//! products, and only E[⊗_k θ^{S_k} | Ω] makes message passing exact, so we use the latter.
//! Eq. (5) prints "×_{S_j}" without "j ≠ k"; we contract the upward messages of the other
//! children only. The core groups follow our rank rule ([`core_groups`]), since the paper's
//! procedure (App. A.2) is not in the paper's text. Learning: the latent junction tree
//! ([`crate::model::latent_junction_tree`]), core groups ([`core_groups`]), two-stage
//! regression and the root tensor ([`two_stage`]); inference: predictive messages
//! ([`passing`]). Baselines on the same model: exact enumeration ([`exact`]), EM and stepwise
//! online EM ([`em`]).
//!
//! Cost: learning is one pass over the (distinct, weighted) training rows per separator plus
//! small dense solves; one query is one upward and downward pass.

pub mod core_groups;
pub mod em;
pub mod exact;
pub mod features;
pub mod hmm_em;
pub mod passing;
pub mod two_stage;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::model::latent_dag::LatentDag;
use crate::model::latent_junction_tree::{LatentJunctionTree, RootedTree};
use core_groups::{Groups, choose_groups, root_cost};
use exact::Evidence;
use features::{TrainingData, kron_dense};
use passing::{Scaled, SignedLog, contract};
use two_stage::{Operator, StageTwo, learn_operator, root_tensor};

/// Entries of a PBP query below this are clipped before normalising. Like spectral methods,
/// PBP can output negative or zero probabilities; we clip, renormalise and count the clips
/// (KL uses the clipped values).
pub const CLIP_FLOOR: f64 = 1e-12;

/// Learning settings (Wang & Gordon 2020, Sec. 4 "The Learning Algorithm", Steps 3–6).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PbpSettings {
    /// λ₁ of S1A/S1B (sklearn convention).
    pub lambda1: f64,
    /// S2 rank; `None` = k_S per separator.
    pub rank: Option<usize>,
    /// Ridge λ₂ in S2 instead of rank truncation.
    pub ridge2: Option<f64>,
    /// Root clique; `None` = the non-leaf clique with the smallest root tensor (the product of
    /// its adjacent θ sizes).
    pub root: Option<usize>,
    /// (clique, α, β) overrides of the rank rule.
    pub overrides: Vec<(usize, Vec<usize>, Vec<usize>)>,
    /// Most instrument variables per separator (our rank rule takes the nearest one or two).
    pub max_instruments: usize,
}

impl Default for PbpSettings {
    fn default() -> Self {
        PbpSettings {
            lambda1: 1e-3,
            rank: None,
            ridge2: None,
            root: None,
            overrides: Vec::new(),
            max_instruments: 2,
        }
    }
}

/// A learned PBP model: the junction tree, α/β, the operators W_S and the root tensor.
#[derive(Debug, Clone)]
pub struct PbpModel {
    pub jt: LatentJunctionTree,
    pub tree: RootedTree,
    pub groups: Vec<Option<Groups>>,
    /// W_S for each inner separator (by child clique).
    pub operators: Vec<Option<Operator>>,
    pub root_tensor: Vec<f64>,
    pub root_dims: Vec<usize>,
    /// θ dimension of each separator (by child clique).
    pub dims: Vec<usize>,
    /// The observed node of each data column and its feature dimension.
    pub vars: Vec<usize>,
    pub var_dims: Vec<usize>,
    pub one_hot: bool,
}

/// The result of one query (Wang & Gordon 2020, Sec. 4 "The Inference Algorithm", Step 4).
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// P̂(X_Q | e), clipped at [`CLIP_FLOOR`] and normalised.
    pub dist: Vec<f64>,
    /// P̂(X_Q = x, e) before clipping.
    pub raw: Vec<f64>,
    /// Entries clipped.
    pub clipped: usize,
    /// P̂(e) at the query's leaf (the sum of `raw`).
    pub p_evidence: f64,
}

/// Upward and downward messages of one pass.
#[derive(Debug, Clone, PartialEq)]
pub struct Messages {
    /// Upward message of each non-root clique (to its parent).
    pub up: Vec<Scaled>,
    /// Downward message into each non-root clique.
    pub down: Vec<Scaled>,
    /// P̂(e) from Eq. (4) at the root.
    pub root_evidence: SignedLog,
}

impl PbpModel {
    /// Learning Steps 1–6 from weighted training rows.
    pub fn learn(dag: &LatentDag, data: &TrainingData, settings: &PbpSettings) -> Result<Self> {
        check_settings(settings)?;
        for v in dag.observed() {
            if data.column(v).is_none() {
                return Err(Error::Other(format!(
                    "the training data has no column for observed variable '{}'",
                    dag.node(v).name
                )));
            }
        }
        let jt = LatentJunctionTree::build(dag)?;
        let (tree, groups) = match settings.root {
            Some(r) => {
                let tree = jt.rooted(r)?;
                let groups = choose_groups(
                    dag,
                    &tree,
                    data,
                    &settings.overrides,
                    settings.max_instruments,
                )?;
                (tree, groups)
            }
            None => {
                let mut best: Option<(usize, RootedTree, Vec<Option<Groups>>)> = None;
                let mut first_error = None;
                for &r in &jt.core {
                    let tree = jt.rooted(r)?;
                    match choose_groups(
                        dag,
                        &tree,
                        data,
                        &settings.overrides,
                        settings.max_instruments,
                    ) {
                        Ok(groups) => {
                            let cost = root_cost(&tree, &groups, data);
                            if best.as_ref().is_none_or(|(c, _, _)| cost < *c) {
                                best = Some((cost, tree, groups));
                            }
                        }
                        Err(e) => {
                            first_error.get_or_insert(e);
                        }
                    }
                }
                match best {
                    Some((_, tree, groups)) => (tree, groups),
                    None => {
                        return Err(first_error
                            .unwrap_or_else(|| Error::Other("the model has no root".into())));
                    }
                }
            }
        };
        let n = jt.len();
        let cols = |c: usize| {
            groups[c]
                .as_ref()
                .map_or_else(Vec::new, |g| data.columns(&g.alpha))
        };
        let dims: Vec<usize> = (0..n)
            .map(|c| groups[c].as_ref().map_or(1, |g| data.group_dim(&g.alpha)))
            .collect();
        let mut operators = vec![None; n];
        for c in tree.inner_separators() {
            let g = groups[c]
                .as_ref()
                .ok_or_else(|| Error::Other("missing groups".into()))?;
            let children: Vec<Vec<usize>> = tree.children[c].iter().map(|&d| cols(d)).collect();
            let stage_two = match settings.ridge2 {
                Some(l2) => StageTwo::Ridge(l2),
                None => StageTwo::Rank(settings.rank.unwrap_or(g.k)),
            };
            operators[c] = Some(learn_operator(
                data,
                &data.columns(&g.alpha),
                &data.columns(&g.beta),
                &children,
                settings.lambda1,
                stage_two,
            ));
        }
        let root_children: Vec<Vec<usize>> =
            tree.children[tree.root].iter().map(|&d| cols(d)).collect();
        let (root_tensor, root_dims) = root_tensor(data, &root_children);
        Ok(PbpModel {
            jt,
            tree,
            groups,
            operators,
            root_tensor,
            root_dims,
            dims,
            vars: data.vars.clone(),
            var_dims: data.dims.clone(),
            one_hot: data.one_hot,
        })
    }

    /// Leaf messages ζ (Eq. 2 with Φ = I) for discrete evidence indexed by node id.
    pub fn leaf_messages(&self, evidence: &Evidence) -> Vec<Option<Vec<f64>>> {
        (0..self.jt.len())
            .map(|c| {
                self.tree.leaf_var[c].map(|x| {
                    let d = self.dims[c];
                    match evidence.get(x).copied().flatten() {
                        Some(v) => (0..d).map(|i| f64::from(u8::from(i == v))).collect(),
                        None => vec![1.0; d],
                    }
                })
            })
            .collect()
    }

    /// One upward and downward pass from the given leaf messages (indexed by clique).
    pub fn propagate(&self, leaf: &[Option<Vec<f64>>]) -> Messages {
        let tree = &self.tree;
        let n = self.jt.len();
        let mut up = vec![Scaled::default(); n];
        let mut down = vec![Scaled::default(); n];
        for &c in tree.order.iter().rev() {
            if c == tree.root {
                continue;
            }
            if let Some(Some(msg)) = leaf.get(c).filter(|_| tree.is_leaf(c)) {
                up[c] = Scaled::new(msg.clone(), 0.0);
            } else if let Some(op) = &self.operators[c] {
                let parts: Vec<&[f64]> = tree.children[c].iter().map(|&d| &up[d].v[..]).collect();
                let scale: f64 = tree.children[c].iter().map(|&d| up[d].log_scale).sum();
                let x = nalgebra::DVector::from_vec(kron_dense(&parts));
                let u = op.w.tr_mul(&x);
                up[c] = Scaled::new(u.iter().copied().collect(), scale);
            }
        }
        let root = tree.root;
        let kids = &tree.children[root];
        let vecs: Vec<&[f64]> = kids.iter().map(|&d| &up[d].v[..]).collect();
        let total_scale: f64 = kids.iter().map(|&d| up[d].log_scale).sum();
        let value = contract(&self.root_tensor, &self.root_dims, &vecs, None)
            .first()
            .copied()
            .unwrap_or(0.0);
        let root_evidence = SignedLog::new(value, total_scale);
        for (k, &d) in kids.iter().enumerate() {
            let msg = contract(&self.root_tensor, &self.root_dims, &vecs, Some(k));
            down[d] = Scaled::new(msg, total_scale - up[d].log_scale);
        }
        for &c in &tree.order {
            let Some(op) = &self.operators[c] else {
                continue;
            };
            let kids = &tree.children[c];
            let v = &op.w * nalgebra::DVector::from_column_slice(&down[c].v);
            let vecs: Vec<&[f64]> = kids.iter().map(|&d| &up[d].v[..]).collect();
            let scale: f64 = down[c].log_scale + kids.iter().map(|&d| up[d].log_scale).sum::<f64>();
            for (k, &d) in kids.iter().enumerate() {
                let msg = contract(v.as_slice(), &op.child_dims, &vecs, Some(k));
                down[d] = Scaled::new(msg, scale - up[d].log_scale);
            }
        }
        Messages {
            up,
            down,
            root_evidence,
        }
    }

    /// P̂(e) at every leaf clique (Step 4's sum, d_l · u_l), as (clique, value).
    pub fn leaf_evidence(&self, messages: &Messages) -> Vec<(usize, SignedLog)> {
        (0..self.jt.len())
            .filter(|&c| self.tree.is_leaf(c))
            .map(|c| {
                let (d, u) = (&messages.down[c], &messages.up[c]);
                let dot: f64 = d.v.iter().zip(&u.v).map(|(a, b)| a * b).sum();
                (c, SignedLog::new(dot, d.log_scale + u.log_scale))
            })
            .collect()
    }

    /// P̂(X_Q | e) for a discrete observed query (its own evidence ignored), clipped and
    /// normalised, with P̂(e).
    pub fn query(&self, evidence: &Evidence, query: usize) -> Result<Query> {
        let leaf = self
            .jt
            .leaf_of
            .get(query)
            .copied()
            .flatten()
            .ok_or_else(|| {
                Error::Other(format!(
                    "node {query} is not an observed variable of the model"
                ))
            })?;
        let mut ev = evidence.to_vec();
        if let Some(e) = ev.get_mut(query) {
            *e = None;
        }
        let messages = self.propagate(&self.leaf_messages(&ev));
        let (d, u) = (&messages.down[leaf], &messages.up[leaf]);
        let scale = (d.log_scale + u.log_scale).exp();
        let raw: Vec<f64> = d.v.iter().zip(&u.v).map(|(a, b)| a * b * scale).collect();
        let (dist, clipped) = clip_normalise(&raw);
        Ok(Query {
            dist,
            p_evidence: raw.iter().sum(),
            raw,
            clipped,
        })
    }
}

/// Normalises by the sum (by the absolute sum when that is not positive), clips entries below
/// [`CLIP_FLOOR`] and renormalises; returns the distribution and the number clipped.
pub fn clip_normalise(raw: &[f64]) -> (Vec<f64>, usize) {
    let s: f64 = raw.iter().sum();
    let norm = if s > 0.0 {
        s
    } else {
        raw.iter().map(|x| x.abs()).sum::<f64>()
    };
    let mut clipped = 0;
    let mut dist: Vec<f64> = raw
        .iter()
        .map(|&x| {
            let p = if norm > 0.0 { x / norm } else { 0.0 };
            if p < CLIP_FLOOR || !p.is_finite() {
                clipped += 1;
                CLIP_FLOOR
            } else {
                p
            }
        })
        .collect();
    let t: f64 = dist.iter().sum();
    dist.iter_mut().for_each(|p| *p /= t);
    (dist, clipped)
}

fn check_settings(s: &PbpSettings) -> Result<()> {
    if !(s.lambda1.is_finite() && s.lambda1 >= 0.0) {
        return Err(Error::param(
            "lambda1",
            format!("must be finite and non-negative, got {}", s.lambda1),
        ));
    }
    if let Some(l2) = s.ridge2
        && !(l2.is_finite() && l2 > 0.0)
    {
        return Err(Error::param(
            "ridge2",
            format!("must be positive and finite, got {l2}"),
        ));
    }
    if s.rank == Some(0) {
        return Err(Error::param("rank", "must be at least 1"));
    }
    Ok(())
}
