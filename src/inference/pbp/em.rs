//! The baselines of Wang & Gordon's Sec. 6 on the same model class: EM (Dempster, Laird &
//! Rubin 1977) with the exact E-step per distinct observed configuration weighted by its count,
//! M-step counts + 1e-6, stopping at relative log-likelihood change 1e-8 or 500 iterations,
//! best of 10 random restarts (footnote 5 says "take the best ones" without saying best by
//! what; we take the best training log-likelihood); and stepwise online EM (Liang & Klein 2009)
//! with step η_k = (k+2)^(−0.7), mini-batches of 100, 5 passes. The smoothing, stopping rule
//! and step schedule are our settings; the paper gives none.
//!
//! Cost: one EM iteration O(D · Π|val(ℋ)| · V) for D distinct configurations; one online-EM
//! pass O(N · Π|val(ℋ)| · V).

use rand::Rng;
use rand::seq::SliceRandom;
use serde::Serialize;

use super::exact::{next_state, state_count};
use super::features::DiscreteSamples;
use crate::error::Result;
use crate::model::latent_dag::{BayesNet, LatentDag, random_cpt};

/// Largest latent state space the exact E-step enumerates.
pub const MAX_LATENT_STATES: usize = 1_000_000;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EmSettings {
    pub restarts: usize,
    pub max_iterations: usize,
    pub tolerance: f64,
    pub smoothing: f64,
    /// Online EM: mini-batch size, passes, step exponent.
    pub batch: usize,
    pub passes: usize,
    pub step_exponent: f64,
}

impl Default for EmSettings {
    fn default() -> Self {
        EmSettings {
            restarts: 10,
            max_iterations: 500,
            tolerance: 1e-8,
            smoothing: 1e-6,
            batch: 100,
            passes: 5,
            step_exponent: 0.7,
        }
    }
}

/// A fitted model with its training log-likelihood (nats, summed over samples).
#[derive(Debug, Clone, PartialEq)]
pub struct EmFit {
    pub net: BayesNet,
    pub log_likelihood: f64,
    pub iterations: usize,
    /// Log-likelihood before each M-step (EM only).
    pub trace: Vec<f64>,
}

/// The exact E-step machinery: enumerates latent states for one observed configuration.
struct Enumerator {
    observed: Vec<usize>,
    latent: Vec<usize>,
    latent_cards: Vec<usize>,
}

impl Enumerator {
    fn new(dag: &LatentDag) -> Result<Enumerator> {
        let latent = dag.latent();
        let latent_cards: Vec<usize> = latent.iter().map(|&v| dag.cardinality(v)).collect();
        state_count(
            &latent_cards,
            MAX_LATENT_STATES,
            "the latent part of the model",
        )?;
        Ok(Enumerator {
            observed: dag.observed(),
            latent,
            latent_cards,
        })
    }

    /// Adds `weight · P(h | o)` to `counts` for every family; returns ln P(o).
    fn accumulate(
        &self,
        net: &BayesNet,
        obs: &[u16],
        weight: f64,
        counts: &mut [Vec<f64>],
        joint: &mut Vec<f64>,
        x: &mut [usize],
    ) -> f64 {
        for (k, &v) in self.observed.iter().enumerate() {
            x[v] = obs[k] as usize;
        }
        let mut h = vec![0usize; self.latent.len()];
        joint.clear();
        loop {
            for (k, &v) in self.latent.iter().enumerate() {
                x[v] = h[k];
            }
            joint.push((0..net.dag.len()).map(|v| net.prob(v, x)).product());
            if !next_state(&mut h, &self.latent_cards) {
                break;
            }
        }
        let total: f64 = joint.iter().sum();
        if total <= 0.0 {
            return f64::NEG_INFINITY;
        }
        let mut h = vec![0usize; self.latent.len()];
        for &p in joint.iter() {
            let post = weight * p / total;
            if post > 0.0 {
                for (k, &v) in self.latent.iter().enumerate() {
                    x[v] = h[k];
                }
                for (v, c) in counts.iter_mut().enumerate() {
                    let card = net.dag.cardinality(v);
                    c[net.dag.parent_row(v, x) * card + x[v]] += post;
                }
            }
            next_state(&mut h, &self.latent_cards);
        }
        total.ln()
    }
}

fn zero_counts(dag: &LatentDag) -> Vec<Vec<f64>> {
    (0..dag.len())
        .map(|v| vec![0.0; dag.parent_configs(v) * dag.cardinality(v)])
        .collect()
}

fn normalise_counts(dag: &LatentDag, counts: &[Vec<f64>], smoothing: f64) -> Vec<Vec<f64>> {
    counts
        .iter()
        .enumerate()
        .map(|(v, c)| {
            let card = dag.cardinality(v);
            c.chunks(card)
                .flat_map(|row| {
                    let s: f64 = row.iter().map(|x| x + smoothing).sum();
                    row.iter().map(move |x| (x + smoothing) / s)
                })
                .collect()
        })
        .collect()
}

/// Training log-likelihood of `net` on distinct configurations with counts.
pub fn log_likelihood(net: &BayesNet, distinct: &[(Vec<u16>, f64)]) -> Result<f64> {
    let en = Enumerator::new(&net.dag)?;
    let mut counts = zero_counts(&net.dag);
    let mut joint = Vec::new();
    let mut x = vec![0usize; net.dag.len()];
    Ok(distinct
        .iter()
        .map(|(o, w)| w * en.accumulate(net, o, 0.0, &mut counts, &mut joint, &mut x))
        .sum())
}

/// EM from `init` on distinct configurations with counts; `max_iterations` overrides the
/// settings' limit when given (the test that EM started at the true CPTs moves little runs 50).
pub fn em(
    init: &BayesNet,
    distinct: &[(Vec<u16>, f64)],
    settings: &EmSettings,
    max_iterations: Option<usize>,
) -> Result<EmFit> {
    let dag = &init.dag;
    let en = Enumerator::new(dag)?;
    let mut net = init.clone();
    let mut joint = Vec::new();
    let mut x = vec![0usize; dag.len()];
    let mut trace = Vec::new();
    let limit = max_iterations.unwrap_or(settings.max_iterations);
    let mut iterations = 0;
    let mut previous = f64::NEG_INFINITY;
    while iterations < limit {
        let mut counts = zero_counts(dag);
        let ll: f64 = distinct
            .iter()
            .map(|(o, w)| w * en.accumulate(&net, o, *w, &mut counts, &mut joint, &mut x))
            .sum();
        trace.push(ll);
        if (ll - previous).abs() <= settings.tolerance * ll.abs() {
            break;
        }
        previous = ll;
        net.cpts = normalise_counts(dag, &counts, settings.smoothing);
        iterations += 1;
    }
    let log_likelihood = log_likelihood(&net, distinct)?;
    Ok(EmFit {
        net,
        log_likelihood,
        iterations,
        trace,
    })
}

/// A model with every CPT row drawn from Dirichlet(1) (a random restart).
pub fn random_start(dag: &LatentDag, rng: &mut impl Rng) -> Result<BayesNet> {
    let cpts = (0..dag.len())
        .map(|v| random_cpt(dag.parent_configs(v), dag.cardinality(v), 1.0, rng))
        .collect::<Result<Vec<_>>>()?;
    BayesNet::new(dag.clone(), cpts)
}

/// EM from `settings.restarts` random starts; the best by training log-likelihood first, then
/// every restart's fit.
pub fn em_restarts(
    dag: &LatentDag,
    distinct: &[(Vec<u16>, f64)],
    settings: &EmSettings,
    rng: &mut impl Rng,
) -> Result<(EmFit, Vec<EmFit>)> {
    let mut fits = Vec::new();
    for _ in 0..settings.restarts.max(1) {
        let init = random_start(dag, rng)?;
        fits.push(em(&init, distinct, settings, None)?);
    }
    let best = best_fit(&fits);
    Ok((best, fits))
}

fn best_fit(fits: &[EmFit]) -> EmFit {
    fits.iter()
        .max_by(|a, b| a.log_likelihood.total_cmp(&b.log_likelihood))
        .cloned()
        .unwrap_or_else(|| unreachable!("at least one restart runs"))
}

/// Stepwise online EM from `init` over `samples` (shuffled each pass with `rng`).
pub fn online_em(
    init: &BayesNet,
    samples: &DiscreteSamples,
    settings: &EmSettings,
    rng: &mut impl Rng,
) -> Result<EmFit> {
    let dag = &init.dag;
    let en = Enumerator::new(dag)?;
    let mut net = init.clone();
    // μ starts at the initial parameters on a per-sample scale (each family's mass 1/rows).
    let mut mu: Vec<Vec<f64>> = net
        .cpts
        .iter()
        .enumerate()
        .map(|(v, c)| {
            let rows = dag.parent_configs(v) as f64;
            c.iter().map(|p| p / rows).collect()
        })
        .collect();
    let mut joint = Vec::new();
    let mut x = vec![0usize; dag.len()];
    let mut order: Vec<usize> = (0..samples.len()).collect();
    let mut k = 0usize;
    let batch = settings.batch.max(1);
    for _ in 0..settings.passes {
        order.shuffle(rng);
        for chunk in order.chunks(batch) {
            let mut counts = zero_counts(dag);
            let w = 1.0 / chunk.len() as f64;
            for &r in chunk {
                en.accumulate(&net, samples.row(r), w, &mut counts, &mut joint, &mut x);
            }
            let eta = (k as f64 + 2.0).powf(-settings.step_exponent);
            for (m, c) in mu.iter_mut().zip(&counts) {
                for (a, b) in m.iter_mut().zip(c) {
                    *a = (1.0 - eta) * *a + eta * b;
                }
            }
            net.cpts = normalise_counts(dag, &mu, settings.smoothing);
            k += 1;
        }
    }
    let log_likelihood = log_likelihood(&net, &samples.distinct())?;
    Ok(EmFit {
        net,
        log_likelihood,
        iterations: k,
        trace: Vec::new(),
    })
}

/// Online EM from `settings.restarts` random starts, best by training log-likelihood.
pub fn online_em_restarts(
    dag: &LatentDag,
    samples: &DiscreteSamples,
    settings: &EmSettings,
    rng: &mut impl Rng,
) -> Result<(EmFit, Vec<EmFit>)> {
    let mut fits = Vec::new();
    for _ in 0..settings.restarts.max(1) {
        let init = random_start(dag, rng)?;
        fits.push(online_em(&init, samples, settings, rng)?);
    }
    Ok((best_fit(&fits), fits))
}
