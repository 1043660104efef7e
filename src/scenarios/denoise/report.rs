//! The denoise scenario's fields of results.json, as types: the image size, the training seed,
//! and per algorithm run its model (discrete BP) or its kernel read-outs (kernel BP: ranks,
//! bandwidths, lambda, condition numbers, set-up timings, template sizes).

use std::collections::BTreeMap;

use serde::Serialize;

use super::potentials::COOCCURRENCE_SMOOTHING;
use super::{AlgorithmRun, Engine};

#[derive(Debug, Clone, Serialize)]
pub struct DenoiseReport {
    pub image_size: [usize; 2],
    /// What the potentials were learned from.
    pub training: String,
    pub training_size: [usize; 2],
    /// Reference baselines, not message passing: (what, RMSE): TV (Chambolle, weight 0.1 on
    /// the 0..1 scale) and a Gaussian blur with sigma by SURE (no clean image).
    /// Empty for a noisy image with no clean version (no RMSE exists).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub baselines: Vec<(String, f64)>,
    /// The baselines run, with the parameters they chose (without the clean image).
    pub baseline_parameters: Vec<String>,
    /// For a noisy image with no clean version: why no RMSE is reported, and sigma.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_clean: Option<String>,
    pub training_seed: u64,
    pub update: String,
    /// The primary run's kernel read-outs, also at top level where scripts look first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ranks: Option<Ranks>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bandwidths: Option<Bandwidths>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lambda: Option<Lambda>,
    pub runs: Vec<RunReport>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    pub algorithm: String,
    /// The schedule this algorithm started with (the config's `schedule`, `auto` resolved).
    pub schedule: &'static str,
    pub setup_seconds: f64,
    /// The iteration whose estimate a stopping rule (SURE or the discrepancy principle) kept;
    /// absent when the run went to its iteration limit or tolerance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped_at: Option<usize>,
    /// With SURE stopping: the lowest SURE so far as an RMSE (estimated without the clean
    /// image) and its iteration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sure: Option<SureReadout>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<DiscreteModel>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<KernelReadout>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SureReadout {
    pub best_rmse: f64,
    pub best_iteration: usize,
    pub probe_epsilon: f64,
    /// The probe directions that ran (`config.sure_probes` resolved for the image's size).
    pub probes: usize,
    pub rule: &'static str,
    /// On a large image: the window SURE was measured on (`sure_window.rs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<String>,
    /// Why and at which iteration SURE stopped the run, once it has.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<SureStop>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SureStop {
    pub reason: super::sure_stop::StopReason,
    pub iteration: usize,
    pub note: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct DiscreteModel {
    pub states: &'static str,
    pub node_potential: &'static str,
    pub edge_potential: &'static str,
    pub cooccurrence_smoothing: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct KernelReadout {
    pub ranks: Ranks,
    pub bandwidths: Bandwidths,
    pub lambda: Lambda,
    pub condition_numbers: BTreeMap<String, f64>,
    pub setup_timings: BTreeMap<String, f64>,
    pub template: Template,
    pub candidates: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Ranks {
    pub feature: Option<usize>,
    /// Rank of the tensor basis per number of multiplied factors p.
    pub tensor: BTreeMap<String, usize>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Bandwidths {
    pub hidden: f64,
    pub observed: f64,
    pub convention: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct Lambda {
    pub value: f64,
    pub convention: &'static str,
}

#[derive(Debug, Clone, Serialize)]
pub struct Template {
    pub pairs: usize,
    pub observation_pairs: usize,
    pub distinct_values: usize,
    pub collapsed: &'static str,
}

impl RunReport {
    pub fn of(run: &AlgorithmRun, schedule: crate::inference::Schedule) -> RunReport {
        let (model, kernel) = match &run.engine {
            Engine::Discrete(_) => (
                Some(DiscreteModel {
                    states: "the C true gray levels (oracle discretisation)",
                    node_potential: "P(a) N(y; a, noise^2), the true likelihood",
                    edge_potential: "P(a,b)/(P(a)P(b)) from 4-neighbour co-occurrences of the clean training image",
                    cooccurrence_smoothing: COOCCURRENCE_SMOOTHING,
                }),
                None,
            ),
            Engine::Kbp(e) => {
                let model = e.model();
                let d = &model.diagnostics;
                (
                    None,
                    Some(KernelReadout {
                        ranks: Ranks {
                            feature: d.feature_rank,
                            tensor: d
                                .tensor_ranks
                                .iter()
                                .map(|(p, r)| (p.to_string(), *r))
                                .collect(),
                        },
                        bandwidths: Bandwidths {
                            hidden: model.sigma_hidden,
                            observed: model.sigma_observed,
                            convention: "RBF exp(-(x-y)^2 / (2 sigma^2)), sigma in gray levels",
                        },
                        lambda: Lambda {
                            value: model.lambda,
                            convention: "Gram form: L + lambda * m * I (m = template pairs; n = observation pairs for the evidence)",
                        },
                        condition_numbers: d.condition_numbers.clone(),
                        setup_timings: d.setup_timings.clone(),
                        template: Template {
                            pairs: d.template_pairs,
                            observation_pairs: d.observation_pairs,
                            distinct_values: d.distinct_values,
                            collapsed: "repeated values collapsed exactly with multiplicities (no subsampling)",
                        },
                        candidates: e.candidates().len(),
                    }),
                )
            }
        };
        RunReport {
            algorithm: run.choice.label(),
            schedule: schedule.label(),
            setup_seconds: run.setup_seconds,
            stopped_at: run.stopped_at,
            sure: run.sure.as_ref().map(|p| SureReadout {
                best_rmse: p.tracker.best_mse.max(0.0).sqrt(),
                best_iteration: p.tracker.best_iteration,
                probe_epsilon: p.tracker.epsilon,
                probes: p.tracker.directions.len(),
                rule: p.tracker.rule().description(),
                window: p.window.as_ref().map(|w| w.layout.describe()),
                stop: p.tracker.stop_reason.zip(p.tracker.stopped_iteration).map(
                    |(reason, iteration)| SureStop {
                        reason,
                        iteration,
                        note: reason.describe(),
                    },
                ),
            }),
            model,
            kernel,
        }
    }
}
