//! Training data as per-variable feature vectors (Wang & Gordon, Sec. 3 "Sufficient Statistics
//! Feature Vector", Learning Step 2): one-hot indicators for discrete variables,
//! and the feature of a group of variables is the vectorised outer (Kronecker) product, first
//! variable slowest. Rows carry weights, so the same learner reads i.i.d. samples (distinct
//! configurations weighted by their counts: the one-hot moments only depend on those counts),
//! the exact population joint (weights = probabilities: the population learner, which isolates
//! the algebra from sampling noise), or dense continuous features (our realisation of Sec. 5,
//! see `scenarios::pbp::pendigits`).
//!
//! Cost: compressing N discrete samples O(N · |𝒪| log N); a group feature O(Π nnz).

use std::collections::BTreeMap;

use rand::Rng;

use super::exact::{ObservedJoint, next_state};
use crate::error::{Error, Result};
use crate::model::latent_dag::BayesNet;

/// A sparse feature vector: (index, value) pairs, indices increasing.
pub type Sparse = Vec<(usize, f64)>;

/// The Kronecker product a ⊗ b of sparse vectors (`dim_b` = length of b).
pub fn kron(a: &[(usize, f64)], b: &[(usize, f64)], dim_b: usize) -> Sparse {
    let mut out = Vec::with_capacity(a.len() * b.len());
    for &(i, x) in a {
        for &(j, y) in b {
            out.push((i * dim_b + j, x * y));
        }
    }
    out
}

/// Dense Kronecker product of several vectors (first slowest).
pub fn kron_dense(parts: &[&[f64]]) -> Vec<f64> {
    let mut out = vec![1.0];
    for p in parts {
        let mut next = Vec::with_capacity(out.len() * p.len());
        for &x in &out {
            next.extend(p.iter().map(|&y| x * y));
        }
        out = next;
    }
    out
}

/// Weighted rows of per-observed-variable features.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainingData {
    /// Observed node ids, one column each.
    pub vars: Vec<usize>,
    /// Feature dimension of each column.
    pub dims: Vec<usize>,
    /// `rows[r][k]`: the feature of column k in row r.
    pub rows: Vec<Vec<Sparse>>,
    pub weights: Vec<f64>,
    /// Whether every column is one-hot (then leaf messages are indicator vectors).
    pub one_hot: bool,
}

/// Observed samples of a discrete model: `values[r * vars.len() + k]`.
#[derive(Debug, Clone, PartialEq)]
pub struct DiscreteSamples {
    pub vars: Vec<usize>,
    pub cards: Vec<usize>,
    pub values: Vec<u16>,
}

impl DiscreteSamples {
    /// `n` ancestral samples of the network, observed variables kept.
    pub fn draw(net: &BayesNet, n: usize, rng: &mut impl Rng) -> DiscreteSamples {
        let vars = net.dag.observed();
        let cards = vars.iter().map(|&v| net.dag.cardinality(v)).collect();
        let mut x = vec![0usize; net.dag.len()];
        let mut values = Vec::with_capacity(n * vars.len());
        for _ in 0..n {
            net.sample(rng, &mut x);
            values.extend(vars.iter().map(|&v| x[v] as u16));
        }
        DiscreteSamples {
            vars,
            cards,
            values,
        }
    }

    pub fn len(&self) -> usize {
        self.values.len() / self.vars.len().max(1)
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    pub fn row(&self, r: usize) -> &[u16] {
        let k = self.vars.len();
        &self.values[r * k..(r + 1) * k]
    }

    /// The first `n` samples.
    pub fn prefix(&self, n: usize) -> DiscreteSamples {
        let k = self.vars.len();
        DiscreteSamples {
            vars: self.vars.clone(),
            cards: self.cards.clone(),
            values: self.values[..n.min(self.len()) * k].to_vec(),
        }
    }

    /// Distinct configurations with their counts (sorted).
    pub fn distinct(&self) -> Vec<(Vec<u16>, f64)> {
        let mut counts: BTreeMap<&[u16], f64> = BTreeMap::new();
        for r in 0..self.len() {
            *counts.entry(self.row(r)).or_insert(0.0) += 1.0;
        }
        counts.into_iter().map(|(k, c)| (k.to_vec(), c)).collect()
    }
}

impl TrainingData {
    /// One-hot rows from discrete samples (distinct configurations weighted by count).
    pub fn from_samples(samples: &DiscreteSamples) -> TrainingData {
        let (rows, weights) = samples
            .distinct()
            .into_iter()
            .map(|(config, count)| {
                let row = config.iter().map(|&x| vec![(x as usize, 1.0)]).collect();
                (row, count)
            })
            .unzip();
        TrainingData {
            vars: samples.vars.clone(),
            dims: samples.cards.clone(),
            rows,
            weights,
            one_hot: true,
        }
    }

    /// The exact population: every observed configuration weighted by its probability.
    pub fn population(joint: &ObservedJoint) -> TrainingData {
        let mut rows = Vec::new();
        let mut weights = Vec::new();
        let mut x = vec![0usize; joint.vars.len()];
        for &p in &joint.probs {
            if p > 0.0 {
                rows.push(x.iter().map(|&v| vec![(v, 1.0)]).collect());
                weights.push(p);
            }
            next_state(&mut x, &joint.cards);
        }
        TrainingData {
            vars: joint.vars.clone(),
            dims: joint.cards.clone(),
            rows,
            weights,
            one_hot: true,
        }
    }

    /// Dense features (continuous variables, our realisation of Sec. 5), unit weights.
    pub fn dense(vars: Vec<usize>, dims: Vec<usize>, rows: Vec<Vec<Vec<f64>>>) -> Result<Self> {
        for (r, row) in rows.iter().enumerate() {
            if row.len() != vars.len() || row.iter().zip(&dims).any(|(f, &d)| f.len() != d) {
                return Err(Error::Other(format!("feature row {r} has the wrong shape")));
            }
        }
        let weights = vec![1.0; rows.len()];
        let rows = rows
            .into_iter()
            .map(|row| {
                row.into_iter()
                    .map(|f| f.into_iter().enumerate().collect())
                    .collect()
            })
            .collect();
        Ok(TrainingData {
            vars,
            dims,
            rows,
            weights,
            one_hot: false,
        })
    }

    pub fn total_weight(&self) -> f64 {
        self.weights.iter().sum()
    }

    /// Column of node `v`.
    pub fn column(&self, v: usize) -> Option<usize> {
        self.vars.iter().position(|&u| u == v)
    }

    /// Feature dimension of a group of observed nodes (product of their dims).
    pub fn group_dim(&self, group: &[usize]) -> usize {
        group
            .iter()
            .map(|&v| self.column(v).map_or(1, |k| self.dims[k]))
            .product()
    }

    /// Column indices of a group.
    pub fn columns(&self, group: &[usize]) -> Vec<usize> {
        group.iter().filter_map(|&v| self.column(v)).collect()
    }

    /// θ(group) for row `r`, as a sparse vector (group given as column indices).
    pub fn group_feature(&self, r: usize, cols: &[usize]) -> Sparse {
        let mut out: Sparse = vec![(0, 1.0)];
        for &k in cols {
            out = kron(&out, &self.rows[r][k], self.dims[k]);
        }
        out
    }
}
