//! The exact reference our predictive-BP tests and runs compare with (the paper's ground truth
//! is the exact Shafer–Shenoy algorithm, Sec. 6): the joint distribution of the observed
//! variables by enumeration of a Bayesian network (all joint states), and exact queries
//! P(X_Q | evidence) and P(evidence) from it.
//!
//! Cost: O(Π_v |val(v)| · V) once; a query O(Π_{observed} |val|).

use crate::error::{Error, Result};
use crate::model::latent_dag::BayesNet;

/// Largest joint state space enumerated.
pub const MAX_ENUMERATION: usize = 20_000_000;

/// P(observed variables), row-major over `vars` (first slowest).
#[derive(Debug, Clone, PartialEq)]
pub struct ObservedJoint {
    /// Observed node ids, in node order.
    pub vars: Vec<usize>,
    pub cards: Vec<usize>,
    pub probs: Vec<f64>,
}

/// An evidence assignment indexed by node id (`None` = not observed).
pub type Evidence = [Option<usize>];

/// Steps `digits` through a mixed-radix odometer; false after the last state.
pub fn next_state(digits: &mut [usize], radix: &[usize]) -> bool {
    for k in (0..digits.len()).rev() {
        digits[k] += 1;
        if digits[k] < radix[k] {
            return true;
        }
        digits[k] = 0;
    }
    false
}

/// Number of joint states of `cards`, or an error when above `cap`.
pub fn state_count(cards: &[usize], cap: usize, what: &str) -> Result<usize> {
    cards.iter().try_fold(1usize, |acc, &c| {
        acc.checked_mul(c).filter(|&n| n <= cap).ok_or_else(|| {
            Error::Other(format!(
                "{what} has more than {cap} joint states; too large for exact enumeration"
            ))
        })
    })
}

impl ObservedJoint {
    /// Enumerates every joint state of the network.
    pub fn of(net: &BayesNet) -> Result<ObservedJoint> {
        let dag = &net.dag;
        let cards: Vec<usize> = (0..dag.len()).map(|v| dag.cardinality(v)).collect();
        state_count(&cards, MAX_ENUMERATION, "the model")?;
        let vars = dag.observed();
        let obs_cards: Vec<usize> = vars.iter().map(|&v| cards[v]).collect();
        let mut probs = vec![0.0; obs_cards.iter().product()];
        let mut x = vec![0usize; dag.len()];
        loop {
            let p: f64 = (0..dag.len()).map(|v| net.prob(v, &x)).product();
            let idx = vars.iter().fold(0, |i, &v| i * cards[v] + x[v]);
            probs[idx] += p;
            if !next_state(&mut x, &cards) {
                break;
            }
        }
        Ok(ObservedJoint {
            vars,
            cards: obs_cards,
            probs,
        })
    }

    /// The unnormalised P(X_Q = x, evidence) for every x, and P(evidence). Evidence on the
    /// query variable itself is ignored.
    pub fn joint_with_evidence(&self, query: usize, evidence: &Evidence) -> (Vec<f64>, f64) {
        let q = self
            .vars
            .iter()
            .position(|&v| v == query)
            .unwrap_or(usize::MAX);
        let mut out = vec![0.0; self.cards.get(q).copied().unwrap_or(1)];
        let mut x = vec![0usize; self.vars.len()];
        let mut total = 0.0;
        for &p in &self.probs {
            let consistent = self
                .vars
                .iter()
                .enumerate()
                .all(|(k, &v)| k == q || evidence[v].is_none_or(|e| e == x[k]));
            if consistent {
                total += p;
                if q < self.vars.len() {
                    out[x[q]] += p;
                } else {
                    out[0] += p;
                }
            }
            next_state(&mut x, &self.cards);
        }
        (out, total)
    }

    /// P(X_Q | evidence), normalised, and P(evidence).
    pub fn posterior(&self, query: usize, evidence: &Evidence) -> (Vec<f64>, f64) {
        let (mut dist, total) = self.joint_with_evidence(query, evidence);
        let s: f64 = dist.iter().sum();
        if s > 0.0 {
            dist.iter_mut().for_each(|p| *p /= s);
        }
        (dist, total)
    }

    /// The probability of one observed configuration (values in `vars` order).
    pub fn prob_of(&self, values: &[usize]) -> f64 {
        let idx = values
            .iter()
            .zip(&self.cards)
            .fold(0, |i, (&x, &c)| i * c + x);
        self.probs[idx]
    }
}

/// KL(p ‖ q) in nats, q's zeros floored at 1e-300.
pub fn kl_divergence(p: &[f64], q: &[f64]) -> f64 {
    p.iter()
        .zip(q)
        .filter(|(pi, _)| **pi > 0.0)
        .map(|(pi, qi)| pi * (pi / qi.max(1e-300)).ln())
        .sum()
}
