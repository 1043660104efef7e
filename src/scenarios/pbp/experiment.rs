//! Experiment P-E1 of spec `predictive_bp.md` P.2 (Wang & Gordon, AAAI 2020, Sec. 6 "Synthetic
//! Dataset"): a ground-truth network with Dirichlet(1) CPTs, N samples of its observed
//! variables, PBP / EM / online EM learned from them, and P(X_Q | evidence) for every joint
//! value of the evidence variables compared with exact enumeration by KL(true ‖ method).
//!
//! Cost: enumeration O(Π|val|); PBP O(N + solves); EM O(restarts · iterations · D · Π|val(ℋ)|);
//! online EM O(restarts · passes · N · Π|val(ℋ)|).

use std::time::Instant;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::inference::pbp::em::{EmFit, EmSettings, em_restarts, online_em_restarts};
use crate::inference::pbp::exact::{ObservedJoint, kl_divergence, next_state};
use crate::inference::pbp::features::{DiscreteSamples, TrainingData};
use crate::inference::pbp::{PbpModel, PbpSettings};
use crate::model::latent_dag::{BayesNet, LatentDag};

/// What each random draw is for (one ChaCha stream each, keyed by the run's seed).
#[derive(Debug, Clone, Copy)]
pub enum Stream {
    Truth = 1,
    Samples = 2,
    Em = 3,
    OnlineEm = 4,
}

/// The RNG for one purpose.
pub fn stream(seed: u64, purpose: Stream) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(purpose as u64);
    rng
}

/// The methods compared.
pub const METHODS: [&str; 3] = ["pbp", "em", "online_em"];

/// One learned method's answers to every query.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MethodRun {
    pub name: &'static str,
    /// Learning seconds (PBP: feature counts + regressions; EM: all restarts).
    pub seconds: f64,
    /// P̂(X_Q | e) per evidence configuration.
    pub dists: Vec<Vec<f64>>,
    /// P̂(e) per configuration.
    pub p_evidence: Vec<f64>,
    pub kl: Vec<f64>,
    pub kl_mean: f64,
    /// Entries clipped at 1e-12 over all queries (PBP only; EM is a proper model).
    pub clipped: usize,
    /// Training log-likelihood of the kept restart (EM methods).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_likelihood: Option<f64>,
}

/// A learned method, able to answer queries.
#[derive(Debug, Clone)]
pub enum Learned {
    Pbp(Box<PbpModel>),
    Net(Box<ObservedJoint>),
}

/// The answer to one query: distribution, P̂(e), clipped entries.
pub fn answer(learned: &Learned, evidence: &[Option<usize>], query: usize) -> Result<Answer> {
    Ok(match learned {
        Learned::Pbp(m) => {
            let q = m.query(evidence, query)?;
            Answer {
                dist: q.dist,
                p_evidence: q.p_evidence,
                clipped: q.clipped,
            }
        }
        Learned::Net(j) => {
            let mut ev = evidence.to_vec();
            ev[query] = None;
            let (dist, p_evidence) = j.posterior(query, &ev);
            Answer {
                dist,
                p_evidence,
                clipped: 0,
            }
        }
    })
}

#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub dist: Vec<f64>,
    pub p_evidence: f64,
    pub clipped: usize,
}

/// Every joint value of `vars` as evidence vectors (indexed by node id).
pub fn evidence_configs(dag: &LatentDag, vars: &[usize]) -> Vec<Vec<Option<usize>>> {
    let radix: Vec<usize> = vars.iter().map(|&v| dag.cardinality(v)).collect();
    let mut digits = vec![0usize; vars.len()];
    let mut out = Vec::new();
    loop {
        let mut ev = vec![None; dag.len()];
        for (k, &v) in vars.iter().enumerate() {
            ev[v] = Some(digits[k]);
        }
        out.push(ev);
        if !next_state(&mut digits, &radix) {
            return out;
        }
    }
}

/// The ground truth, the samples and the query set of one run.
#[derive(Debug, Clone)]
pub struct Problem {
    pub truth: BayesNet,
    pub exact: ObservedJoint,
    pub samples: DiscreteSamples,
    pub query: usize,
    pub evidence_vars: Vec<usize>,
    pub configs: Vec<Vec<Option<usize>>>,
    /// Exact P(X_Q | e) per configuration, and P(e).
    pub exact_dists: Vec<Vec<f64>>,
    pub exact_p_evidence: Vec<f64>,
}

/// Largest number of evidence configurations evaluated.
pub const MAX_CONFIGS: usize = 100_000;

impl Problem {
    pub fn new(
        truth: BayesNet,
        samples: usize,
        seed: u64,
        query: usize,
        evidence_vars: Vec<usize>,
    ) -> Result<Problem> {
        let exact = ObservedJoint::of(&truth)?;
        let count: usize = evidence_vars
            .iter()
            .map(|&v| truth.dag.cardinality(v))
            .product();
        if count > MAX_CONFIGS {
            return Err(Error::Other(format!(
                "the evidence variables have {count} joint values; at most {MAX_CONFIGS} are evaluated"
            )));
        }
        let samples = DiscreteSamples::draw(&truth, samples, &mut stream(seed, Stream::Samples));
        let configs = evidence_configs(&truth.dag, &evidence_vars);
        let (exact_dists, exact_p_evidence) =
            configs.iter().map(|ev| exact.posterior(query, ev)).unzip();
        Ok(Problem {
            truth,
            exact,
            samples,
            query,
            evidence_vars,
            configs,
            exact_dists,
            exact_p_evidence,
        })
    }

    /// Answers every configuration with `learned`, timed `seconds`.
    pub fn evaluate(
        &self,
        name: &'static str,
        learned: &Learned,
        seconds: f64,
        log_likelihood: Option<f64>,
    ) -> Result<MethodRun> {
        let mut dists = Vec::with_capacity(self.configs.len());
        let mut p_evidence = Vec::with_capacity(self.configs.len());
        let mut kl = Vec::with_capacity(self.configs.len());
        let mut clipped = 0;
        for (ev, truth) in self.configs.iter().zip(&self.exact_dists) {
            let a = answer(learned, ev, self.query)?;
            kl.push(kl_divergence(truth, &a.dist));
            clipped += a.clipped;
            dists.push(a.dist);
            p_evidence.push(a.p_evidence);
        }
        let kl_mean = kl.iter().sum::<f64>() / kl.len().max(1) as f64;
        Ok(MethodRun {
            name,
            seconds,
            dists,
            p_evidence,
            kl,
            kl_mean,
            clipped,
            log_likelihood,
        })
    }

    /// PBP learned from the first `n` samples (all when `None`).
    pub fn learn_pbp(&self, settings: &PbpSettings, n: Option<usize>) -> Result<(PbpModel, f64)> {
        let start = Instant::now();
        let samples = match n {
            Some(n) => self.samples.prefix(n),
            None => self.samples.clone(),
        };
        let data = TrainingData::from_samples(&samples);
        let model = PbpModel::learn(&self.truth.dag, &data, settings)?;
        Ok((model, start.elapsed().as_secs_f64()))
    }

    pub fn run_pbp(&self, settings: &PbpSettings) -> Result<(PbpModel, MethodRun)> {
        let (model, seconds) = self.learn_pbp(settings, None)?;
        let learned = Learned::Pbp(Box::new(model));
        let run = self.evaluate("pbp", &learned, seconds, None)?;
        let Learned::Pbp(model) = learned else {
            unreachable!()
        };
        Ok((*model, run))
    }

    pub fn run_em(&self, settings: &EmSettings, seed: u64) -> Result<(EmFit, MethodRun)> {
        let start = Instant::now();
        let distinct = self.samples.distinct();
        let (best, _) = em_restarts(
            &self.truth.dag,
            &distinct,
            settings,
            &mut stream(seed, Stream::Em),
        )?;
        let seconds = start.elapsed().as_secs_f64();
        let learned = Learned::Net(Box::new(ObservedJoint::of(&best.net)?));
        let run = self.evaluate("em", &learned, seconds, Some(best.log_likelihood))?;
        Ok((best, run))
    }

    pub fn run_online_em(&self, settings: &EmSettings, seed: u64) -> Result<(EmFit, MethodRun)> {
        let start = Instant::now();
        let (best, _) = online_em_restarts(
            &self.truth.dag,
            &self.samples,
            settings,
            &mut stream(seed, Stream::OnlineEm),
        )?;
        let seconds = start.elapsed().as_secs_f64();
        let learned = Learned::Net(Box::new(ObservedJoint::of(&best.net)?));
        let run = self.evaluate("online_em", &learned, seconds, Some(best.log_likelihood))?;
        Ok((best, run))
    }
}

/// Least-squares slope of log y against log x (points with y > 0).
pub fn log_log_slope(points: &[(f64, f64)]) -> Option<f64> {
    let pts: Vec<(f64, f64)> = points
        .iter()
        .filter(|(x, y)| *x > 0.0 && *y > 0.0)
        .map(|(x, y)| (x.ln(), y.ln()))
        .collect();
    if pts.len() < 2 {
        return None;
    }
    let n = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}
