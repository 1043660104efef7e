//! The synthetic experiment of Wang & Gordon, AAAI 2020, Sec. 6 "Synthetic Dataset" (Figs. 4–5),
//! on our stand-in for the Fig. 4 graph: a ground-truth network with Dirichlet(1) CPTs (the
//! paper says "random CPTs"), N samples of its observed
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

/// The fitted slopes of a learning curve over seeds (the synthetic experiment of Fig. 5), from
/// `kl[seed][i]` at `sizes[i]` (only sizes ≥ `from` enter the fits).
///
/// Our acceptance test (the paper gives no numbers) asks for a log-log slope between −1.3 and
/// −0.6 over N ≥ 2000 of the "average KL over all (g, h, e)", a per-run quantity (the bound
/// was calibrated once and frozen with the seed); our sweep repeats the run over 20 seeds.
/// Both readings are kept:
/// `of_mean_kl` fits the seed-averaged curve the log-log plot shows, `mean_per_seed` averages
/// the per-run slopes (equal to the slope of the mean log KL, since every run shares the N
/// grid). A run whose stage 2 clips an entry at 1e-12 adds about p·ln(p/1e-12)/27 ≈ 0.1–0.3 to
/// its average KL, and such runs dominate the seed-average at small N; the two readings part
/// when they do.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SlopeStats {
    pub from_n: usize,
    pub of_mean_kl: Option<f64>,
    pub of_median_kl: Option<f64>,
    pub mean_per_seed: Option<f64>,
    pub per_seed: Vec<f64>,
}

impl SlopeStats {
    pub fn of(sizes: &[usize], kl: &[Vec<f64>], from: usize) -> SlopeStats {
        let keep: Vec<usize> = (0..sizes.len()).filter(|&i| sizes[i] >= from).collect();
        let at = |f: &dyn Fn(usize) -> f64| -> Vec<(f64, f64)> {
            keep.iter().map(|&i| (sizes[i] as f64, f(i))).collect()
        };
        let seeds = kl.len().max(1) as f64;
        let mean = at(&|i| kl.iter().map(|k| k[i]).sum::<f64>() / seeds);
        let median = at(&|i| {
            let mut v: Vec<f64> = kl.iter().map(|k| k[i]).collect();
            v.sort_by(f64::total_cmp);
            match v.len() {
                0 => f64::NAN,
                n if n % 2 == 1 => v[n / 2],
                n => 0.5 * (v[n / 2 - 1] + v[n / 2]),
            }
        });
        let per_seed: Vec<f64> = kl
            .iter()
            .filter_map(|k| log_log_slope(&at(&|i| k[i])))
            .collect();
        SlopeStats {
            from_n: from,
            of_mean_kl: log_log_slope(&mean),
            of_median_kl: log_log_slope(&median),
            mean_per_seed: (!per_seed.is_empty())
                .then(|| per_seed.iter().sum::<f64>() / per_seed.len() as f64),
            per_seed,
        }
    }
}

/// The synthetic problem of one seed as `sweep pbp` builds it: the config's model with CPTs from
/// the seed's truth stream, `config.samples` samples, the config's query set.
pub fn seed_problem(config: &super::PbpConfig, seed: u64) -> Result<Problem> {
    let c = super::PbpConfig {
        seed,
        ..config.clone()
    };
    let (truth, stand_in) = super::load_truth(&c)?;
    let (query, evidence) = super::query_set(&c, &truth, stand_in)?;
    Problem::new(truth, c.samples, seed, query, evidence)
}

/// One point of PBP's learning curve on one ground truth (the room's KL-against-N plot).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LearningPoint {
    pub n: usize,
    /// Mean and standard deviation of the average KL over the sample draws.
    pub kl_mean: f64,
    pub kl_sd: f64,
    pub seconds_mean: f64,
}

/// Sample draws per point of the window's learning curve.
pub const CURVE_DRAWS: u64 = 5;
/// The N grid of our synthetic sweep (250 to 10⁵; the paper's Fig. 5 grid is not in its text).
pub const CURVE_SIZES: [usize; 9] = [250, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000];

/// PBP's KL against N on `problem`'s ground truth: for each of [`CURVE_DRAWS`] sample streams
/// (the first is the run's own) the prefixes of one draw of the largest N, each learned and
/// scored on the same query set. Cost O(draws · Σ N) plus one PBP learning per point.
pub fn pbp_learning_curve(
    problem: &Problem,
    settings: &PbpSettings,
    seed: u64,
    sizes: &[usize],
) -> Result<Vec<LearningPoint>> {
    let largest = sizes.iter().copied().max().unwrap_or(0);
    let mut kl = vec![Vec::new(); sizes.len()];
    let mut seconds = vec![0.0; sizes.len()];
    for draw in 0..CURVE_DRAWS {
        let mut rng = if draw == 0 {
            stream(seed, Stream::Samples)
        } else {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(16 + draw);
            rng
        };
        let all = DiscreteSamples::draw(&problem.truth, largest, &mut rng);
        for (i, &n) in sizes.iter().enumerate() {
            let p = Problem {
                samples: all.prefix(n),
                ..problem.clone()
            };
            let (_, run) = p.run_pbp(settings)?;
            kl[i].push(run.kl_mean);
            seconds[i] += run.seconds / CURVE_DRAWS as f64;
        }
    }
    Ok(sizes
        .iter()
        .zip(kl)
        .zip(seconds)
        .map(|((&n, v), seconds_mean)| {
            let k = v.len() as f64;
            let mean = v.iter().sum::<f64>() / k;
            let sd =
                (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (k - 1.0).max(1.0)).sqrt();
            LearningPoint {
                n,
                kl_mean: mean,
                kl_sd: sd,
                seconds_mean,
            }
        })
        .collect())
}
