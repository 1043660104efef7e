//! The pbp scenario's settings (our defaults for the synthetic model of Wang & Gordon 2020,
//! Sec. 6, whose λ₁ and rank the paper does not state: λ₁ = 1e-3, r_S = k_S; EM with 10
//! restarts, as its footnote 5) and their parameter table.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::scenarios::ScenarioParams;
use crate::scenarios::params::{Param, check_table};

/// Every parameter of a pbp run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct PbpConfig {
    /// `synthetic` (our stand-in for the paper's Fig. 4), `synthetic-tree` (its loop-free
    /// variant), `pendigits`,
    /// or the path of a JSON model file.
    pub model: String,
    /// N, training samples.
    pub samples: usize,
    /// One seed for the true CPTs, the samples and the EM restarts (separate streams).
    pub seed: u64,
    /// S2 rank r_S (0 = k_S, the latent separator's states).
    pub rank: usize,
    /// λ₁ of S1A/S1B (sklearn convention, no N scaling).
    pub lambda1: f64,
    /// λ₂: ridge in S2 instead of rank truncation (0 = rank truncation).
    pub ridge2: f64,
    /// Random restarts of EM and of online EM.
    pub em_restarts: usize,
    pub run_em: bool,
    pub run_online_em: bool,
    /// The query variable (empty = D for the stand-ins, else the first observed variable).
    pub query: String,
    /// Evidence variables whose joint values the KL averages over (empty = G, H, E for the
    /// stand-ins, else every other observed variable).
    pub evidence_vars: Vec<String>,
    /// The evidence shown in the window (variable → value).
    pub evidence: BTreeMap<String, usize>,
    /// The root clique as its variables' names joined, e.g. "ABC" (empty = the non-leaf clique
    /// with the smallest root tensor).
    pub root: String,
    /// Pendigits: latent states k of each H_t (our default 6).
    pub states: usize,
    /// Pendigits: RBF bandwidth σ of the Nystrom features (the paper's 10).
    pub sigma: f64,
    /// Pendigits: D_f, principal directions of the features kept (our default 24).
    pub feature_dim: usize,
    /// Pendigits: the test digit shown (index into pendigits.tes).
    pub digit: usize,
    /// Pendigits: folder with pendigits.tra and pendigits.tes (empty = ../shared/data/pendigits).
    pub data_dir: String,
}

/// λ₁ of a pendigits run (the paper's ridge λ = 0.1 in S1A/S1B).
pub const PENDIGITS_LAMBDA1: f64 = 0.1;
/// N of a pendigits run: the paper's 7000 training digits.
pub const PENDIGITS_SAMPLES: usize = 7000;

impl Default for PbpConfig {
    fn default() -> Self {
        PbpConfig {
            model: "synthetic".into(),
            samples: 20_000,
            seed: 1,
            rank: 0,
            lambda1: 1e-3,
            ridge2: 0.0,
            em_restarts: 10,
            run_em: true,
            run_online_em: true,
            query: String::new(),
            evidence_vars: Vec::new(),
            evidence: BTreeMap::new(),
            root: String::new(),
            states: 6,
            sigma: 10.0,
            feature_dim: 24,
            digit: 0,
            data_dir: String::new(),
        }
    }
}

/// The tunable numbers, described once.
pub const PARAMS: &[Param] = &[
    Param::int("samples", "Samples N", 10.0, 10_000_000.0)
        .slider(100.0, 200_000.0)
        .log()
        .help("Training samples of the observed variables (a pendigits model: 7000 unless given)."),
    Param::int("seed", "Seed", 0.0, 1e15)
        .slider(0.0, 100.0)
        .help("True CPTs, samples and EM restarts."),
    Param::int("rank", "S2 rank r", 0.0, 1000.0)
        .slider(0.0, 6.0)
        .help("Rank of the truncated pseudo-inverse in stage 2 (0 = k_S)."),
    Param::real("lambda1", "λ₁ (S1)", 0.0, 1e6)
        .flag("lambda")
        .slider(0.0, 10.0)
        .help(
            "Ridge of stage-1 regressions, sklearn convention (no N scaling; a pendigits model: \
             0.1 unless given).",
        ),
    Param::real("ridge2", "λ₂ (S2 ridge)", 0.0, 1e6)
        .slider(0.0, 10.0)
        .help("Ridge in stage 2 instead of rank truncation (0 = truncation)."),
    Param::int("em_restarts", "EM restarts", 1.0, 1000.0)
        .flag("restarts")
        .slider(1.0, 20.0)
        .help("Random restarts of EM and online EM (best training log-likelihood kept)."),
    Param::int("states", "Latent states k", 2.0, 64.0)
        .slider(2.0, 16.0)
        .help("Pendigits: states of each latent H_t of the per-class chain."),
    Param::real("sigma", "RBF σ", 1e-3, 1e4)
        .slider(1.0, 50.0)
        .log()
        .help("Pendigits: bandwidth of the Nystrom RBF features of a pen point."),
    Param::int("feature_dim", "Features D_f", 1.0, 36.0)
        .flag("dim")
        .slider(4.0, 36.0)
        .help("Pendigits: principal directions of the 36 Nystrom features kept."),
    Param::int("digit", "Test digit", 0.0, 1e6).help("Pendigits: the test digit shown."),
    Param::value("model", "Model").help(
        "synthetic (our stand-in for the model of Wang & Gordon's Fig. 4), synthetic-tree \
         (its loop-free variant), pendigits, or the path of a JSON model file.",
    ),
    Param::switch("run_em", "EM").sets(false).flag("no-em").help("Run EM as a baseline."),
    Param::switch("run_online_em", "Online EM")
        .sets(false)
        .flag("no-online-em")
        .help("Run online EM as a baseline (never for the continuous pendigits chains)."),
    Param::value("query", "Query")
        .help("The query variable (empty: D on the stand-ins, else the first observed)."),
    Param::value("evidence_vars", "Evidence variables").help(
        "Evidence variables the KL averages over, e.g. G,H,E (empty: G, H, E on the stand-ins, \
         else every other observed variable).",
    ),
    Param::value("root", "Root clique").help(
        "Root clique by its variables, e.g. ABC (empty: the non-leaf clique with the smallest \
         root tensor).",
    ),
    Param::value("data_dir", "Pendigits folder")
        .flag("data")
        .help("Pendigits: folder with pendigits.tra and pendigits.tes (empty: ../shared/data/pendigits)."),
];

impl ScenarioParams for PbpConfig {
    const PARAMS: &'static [Param] = PARAMS;

    /// The training samples and their features, about 3 values per sample (measured at
    /// N = 2 x 10^4 and 2 x 10^5); the rest is the process's base.
    fn memory_need(&self) -> Option<crate::run::budget::MemoryNeed> {
        Some(
            crate::run::budget::MemoryNeed::new(format!("pbp with {} samples", self.samples))
                .doubles("training samples and features", 3.0 * self.samples as f64),
        )
    }

    /// The whole run about 2.2 s plus 0.11 ms per training sample (measured at N = 5000 and
    /// 20000), spread over its stages.
    fn time_need(&self) -> Option<crate::run::time_need::TimeNeed> {
        let stages =
            <super::PbpScenario as crate::scenarios::registry::ScenarioDef>::max_iters(self)
                .unwrap_or(1)
                .max(1);
        let total = 2.2 + 1.1e-4 * self.samples as f64;
        Some(crate::run::time_need::TimeNeed::scaled(
            0.0,
            total / stages as f64,
            stages,
        ))
    }

    fn check(&self) -> Result<()> {
        check_table(self, PARAMS)?;
        if self.model.trim().is_empty() {
            return Err(Error::param(
                "model",
                "must be synthetic, synthetic-tree, pendigits or a model file",
            ));
        }
        Ok(())
    }
}
