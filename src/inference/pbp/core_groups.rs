//! Core groups α(S) and instruments β(S) (Wang & Gordon, Def. 1 and Learning Step 2). The
//! paper's procedure is in its App. A.2, which is not in the paper's text, so this is our rank
//! rule. Def. 1 asks for a conditional independence given α(S) that observed variables cannot
//! give when the separator is latent; the usable condition is that P[α(S) | Ω] determine
//! P[OV[In(S)] | Ω], i.e. that O_S = [E[θ^S | H_S = h]]_h have full column rank k_S. So:
//! α(S) = the observed variables of In(S), nearest first, until Π|val| ≥ k_S and the cross
//! moment Ĉ_θη has σ_k / σ_1 > 1e-3; β(S) = the nearest one or two observed variables of
//! Out(S) under the same test (a weak instrument makes two-stage regression unstable). Leaf
//! separators take α = their observed variable. Also our root choice: the paper only asks for
//! a non-leaf root; we take the latent clique whose adjacent θ sizes have the smallest product
//! (the size of the root tensor T).
//!
//! Cost: per separator at most |In| × 2 rank tests, each O(N nnz² + p q min(p, q)).

use serde::Serialize;

use super::features::TrainingData;
use super::two_stage::{cross_moment, singular_values};
use crate::error::{Error, Result};
use crate::model::latent_dag::LatentDag;
use crate::model::latent_junction_tree::RootedTree;

/// The instrument-relevance threshold of our rank rule (σ_k / σ_1).
pub const RANK_THRESHOLD: f64 = 1e-3;
/// Refuse models whose W_S would exceed this many entries: θ of a multi-variable core group is
/// an outer product, so sizes multiply (our memory cap).
pub const MAX_OPERATOR_ENTRIES: usize = 50_000_000;

/// α(S), β(S) for one separator (named by its child clique), with the rank test's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Groups {
    /// Observed node ids.
    pub alpha: Vec<usize>,
    pub beta: Vec<usize>,
    /// k_S: joint states of the latent separator.
    pub k: usize,
    /// σ_k / σ_1 of Ĉ_θη (1 for leaf separators).
    pub rank_ratio: f64,
    /// True when no choice passed the test (weak instrument; the largest choice is kept).
    pub weak: bool,
}

/// σ_k / σ_1 of Ĉ_θη for α, β (as node ids).
pub fn rank_ratio(data: &TrainingData, alpha: &[usize], beta: &[usize], k: usize) -> f64 {
    let (a, b) = (data.columns(alpha), data.columns(beta));
    let (p, q) = (data.group_dim(alpha), data.group_dim(beta));
    if p.min(q) < k {
        return 0.0;
    }
    let c = cross_moment(
        data,
        |r| data.group_feature(r, &a),
        p,
        |r| data.group_feature(r, &b),
        q,
    );
    let s = singular_values(&c);
    match (s.first(), s.get(k - 1)) {
        (Some(&s1), Some(&sk)) if s1 > 0.0 => sk / s1,
        _ => 0.0,
    }
}

/// Chooses α, β for every separator of the rooted tree (`overrides[c]` replaces the choice for
/// the separator above clique c).
pub fn choose_groups(
    dag: &LatentDag,
    tree: &RootedTree,
    data: &TrainingData,
    overrides: &[(usize, Vec<usize>, Vec<usize>)],
    max_instruments: usize,
) -> Result<Vec<Option<Groups>>> {
    let n = tree.parent.len();
    let mut out: Vec<Option<Groups>> = vec![None; n];
    for (c, slot) in out.iter_mut().enumerate() {
        if c == tree.root {
            continue;
        }
        let k: usize = tree.separators[c]
            .iter()
            .map(|&v| dag.cardinality(v))
            .product();
        if let Some(x) = tree.leaf_var[c] {
            *slot = Some(Groups {
                alpha: vec![x],
                beta: Vec::new(),
                k,
                rank_ratio: 1.0,
                weak: false,
            });
            continue;
        }
        if let Some((_, alpha, beta)) = overrides.iter().find(|(o, _, _)| *o == c) {
            let inside = tree.inside_observed(c);
            let outside = tree.outside_observed(c);
            let name = |v: &usize| dag.node(*v).name.clone();
            if let Some(v) = alpha.iter().find(|v| !inside.contains(v)) {
                return Err(Error::Other(format!(
                    "core group override: '{}' is not an observed variable inside the separator's subtree",
                    name(v)
                )));
            }
            if let Some(v) = beta.iter().find(|v| !outside.contains(v)) {
                return Err(Error::Other(format!(
                    "instrument override: '{}' is not an observed variable outside the separator's subtree",
                    name(v)
                )));
            }
            if alpha.is_empty() || beta.is_empty() {
                return Err(Error::Other(
                    "a core group or instrument override is empty".into(),
                ));
            }
            let ratio = rank_ratio(data, alpha, beta, k);
            *slot = Some(Groups {
                alpha: alpha.clone(),
                beta: beta.clone(),
                k,
                rank_ratio: ratio,
                weak: ratio <= RANK_THRESHOLD,
            });
            continue;
        }
        *slot = Some(rank_rule(tree, data, c, k, max_instruments)?);
    }
    for c in tree.inner_separators() {
        let Some(g) = &out[c] else { continue };
        let p = data.group_dim(&g.alpha);
        let rows: usize = tree.children[c]
            .iter()
            .map(|&d| out[d].as_ref().map_or(1, |h| data.group_dim(&h.alpha)))
            .product();
        if rows.saturating_mul(p) > MAX_OPERATOR_ENTRIES {
            return Err(Error::Other(format!(
                "the operator of the separator above clique {c} would have {rows} x {p} entries (more than {MAX_OPERATOR_ENTRIES}); choose smaller core groups or fewer children per clique"
            )));
        }
    }
    Ok(out)
}

fn rank_rule(
    tree: &RootedTree,
    data: &TrainingData,
    c: usize,
    k: usize,
    max_instruments: usize,
) -> Result<Groups> {
    let inside = tree.inside_observed(c);
    let outside = tree.outside_observed(c);
    if inside.is_empty() || outside.is_empty() {
        return Err(Error::Other(format!(
            "the separator above clique {c} has no observed variable on one side; it cannot be learned"
        )));
    }
    // For one and for two instruments, the smallest α that passes; the stronger of the two
    // (larger σ_k / σ_1) is kept, else the least weak candidate seen.
    let mut passed: Option<Groups> = None;
    let mut best: Option<Groups> = None;
    for nb in 1..=outside.len().min(max_instruments.max(1)) {
        let beta = &outside[..nb];
        for na in 1..=inside.len() {
            let alpha = &inside[..na];
            if data.group_dim(alpha) < k {
                continue;
            }
            let ratio = rank_ratio(data, alpha, beta, k);
            let candidate = Groups {
                alpha: alpha.to_vec(),
                beta: beta.to_vec(),
                k,
                rank_ratio: ratio,
                weak: ratio <= RANK_THRESHOLD,
            };
            if !candidate.weak {
                if passed.as_ref().is_none_or(|p| ratio > p.rank_ratio) {
                    passed = Some(candidate);
                }
                break;
            }
            if best.as_ref().is_none_or(|b| ratio > b.rank_ratio) {
                best = Some(candidate);
            }
            // α only grows while the test fails; stop at a size that already covers k_S
            // four times over (larger groups only add noise directions).
            if data.group_dim(alpha) >= 4 * k.max(2) {
                break;
            }
        }
    }
    if let Some(p) = passed {
        return Ok(p);
    }
    best.ok_or_else(|| {
        Error::Other(format!(
            "the observed variables below the separator above clique {c} have fewer joint values than its {k} latent states; the model is not identifiable by predictive BP"
        ))
    })
}

/// The product of the root's adjacent θ sizes (our root rule) for a choice of groups.
pub fn root_cost(tree: &RootedTree, groups: &[Option<Groups>], data: &TrainingData) -> usize {
    tree.children[tree.root]
        .iter()
        .map(|&c| groups[c].as_ref().map_or(1, |g| data.group_dim(&g.alpha)))
        .product()
}
