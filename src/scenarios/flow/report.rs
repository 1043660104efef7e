//! The flow scenario's fields of results.json, as types: the model (potentials, labels, pyramid),
//! zero flow's errors, the ground truth's extent, and per algorithm its levels, errors,
//! snapshots and settings.

use serde::Serialize;

use super::{FlowAlgorithm, FlowRun, FlowScenario};
use crate::inference::EstimateKind;
use crate::model::flow::FlowLabels;

#[derive(Debug, Clone, Serialize)]
pub struct FlowReport {
    pub source: String,
    pub image_size: [usize; 2],
    pub model: Model,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zero_flow: Option<ZeroFlow>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ground_truth: Option<GroundTruth>,
    pub runs: Vec<RunReport>,
    pub warnings: Vec<String>,
    pub metric_definitions: MetricDefinitions,
}

#[derive(Debug, Clone, Serialize)]
pub struct Model {
    pub node_potential: &'static str,
    pub edge_potential: &'static str,
    pub sigma_data_gray_levels: f64,
    pub sigma_smooth_px: f64,
    pub smooth_outlier: f64,
    pub gradient_weight: f64,
    /// Weight of the census data term (0: brightness constancy).
    pub census_weight: f64,
    pub presmooth_px: f64,
    /// The window of the coarsest level (the only level without a pyramid).
    pub labels: Option<Labels>,
    /// The window of every finer level (with a pyramid).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refine_labels: Option<Labels>,
    /// Levels run (the config's `levels`, or the number chosen from the image size when 0).
    pub levels: usize,
    pub levels_chosen_from_image_size: bool,
    /// The largest motion the pyramid can follow, `d (2^levels - 1)` px.
    pub reach_px: f64,
    pub pyramid: &'static str,
    pub readout: EstimateKind,
}

#[derive(Debug, Clone, Serialize)]
pub struct Labels {
    pub window: [f64; 2],
    pub step_px: f64,
    pub per_axis: usize,
    pub count: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct ZeroFlow {
    pub epe: f64,
    pub aae: f64,
    pub counted_pixels: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct GroundTruth {
    pub unknown_pixels: usize,
    pub max_speed: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    pub algorithm: &'static str,
    pub setup_seconds: f64,
    pub levels: Vec<LevelReport>,
    pub epe: Vec<f64>,
    pub aae: Vec<f64>,
    pub snapshots: Vec<SnapshotReport>,
    /// The variational refinement of the finest level's flow, when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variational_refinement: Option<RefinementReport>,
    #[serde(flatten)]
    pub settings: Settings,
}

#[derive(Debug, Clone, Serialize)]
pub struct RefinementReport {
    pub method: &'static str,
    pub warps: usize,
    pub fixed_point_iterations: usize,
    pub sor_iterations: usize,
    pub alpha: f64,
    pub delta: f64,
    pub gamma: f64,
    pub seconds: f64,
    /// Errors of the message-passing flow before the refinement.
    pub epe_before: Option<f64>,
    pub aae_before: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LevelReport {
    pub level: usize,
    pub size: [usize; 2],
    pub setup_seconds: f64,
    pub run_seconds: f64,
    pub iterations: usize,
    pub edge_shift_classes: usize,
    /// Displacement labels of this level's window.
    pub labels: usize,
    pub message_updates: u64,
    /// SOSMP: updates whose sampling density was zero on the whole box (sampled from β).
    pub fallbacks: u64,
    pub fallback_fraction: f64,
    /// Mean change of the level's flow over its last iteration, pixels of the level.
    pub final_flow_change: Option<f64>,
    /// The level ended on `stop_change` before `iters`.
    pub stopped_early: bool,
    /// Seconds of the variational refinement of the level's flow (0: not refined).
    pub refine_seconds: f64,
    /// Warps of that refinement (0: not refined).
    pub refine_warps: usize,
    /// Full-resolution errors of the level's message-passing flow before its refinement.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub epe_before_refinement: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aae_before_refinement: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SnapshotReport {
    pub iteration: usize,
    pub level: usize,
    pub level_iteration: usize,
    pub epe: Option<f64>,
    pub aae: Option<f64>,
}

/// What only one of the algorithms has.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Settings {
    Sosmp {
        basis: Basis,
        samples: usize,
        step_gamma: f64,
        step_rule: &'static str,
        start: &'static str,
        fallbacks: u64,
    },
    Discrete {
        messages: &'static str,
        damping: f64,
        schedule: &'static str,
    },
}

#[derive(Debug, Clone, Serialize)]
pub struct Basis {
    pub kind: &'static str,
    pub coefficients: usize,
    pub per_axis: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct MetricDefinitions {
    pub epe: &'static str,
    pub aae: &'static str,
    pub unknown: &'static str,
}

impl FlowReport {
    pub fn of(s: &FlowScenario) -> FlowReport {
        let c = &s.config;
        let levels = s.pyramid.levels.len();
        let describe = |l: FlowLabels| Labels {
            window: [-l.max_displacement(), l.max_displacement()],
            step_px: l.step(),
            per_axis: l.per_axis(),
            count: l.len(),
        };
        let coarsest = c.labels_at(levels - 1, levels).ok().map(describe);
        let finer = (levels > 1)
            .then(|| c.labels_at(0, levels).ok().map(describe))
            .flatten();
        let (w, h) = s.size();
        FlowReport {
            source: s.source.clone(),
            image_size: [w, h],
            model: Model {
                node_potential: if c.census_weight > 0.0 {
                    "exp(-(census_weight H(C1(p), C2(q)) + gradient_weight |grad I1(p) - grad I2(q)|^2) / (2 sigma_data^2)), H the Hamming distance of 5x5 ternary census signatures (dead zone 2 gray levels; C2 on the lattice of I2, neighbours 1 px apart), q = p + c_p + x, positions clamped to the frame"
                } else {
                    "exp(-((I1(p) - I2(q))^2 + gradient_weight |grad I1(p) - grad I2(q)|^2) / (2 sigma_data^2)), q = p + c_p + x, I2 and its gradient bilinear, positions clamped to the frame"
                },
                edge_potential: "(1 - smooth_outlier) exp(-|(c_u + x_u) - (c_v + x_v)|^2 / (2 sigma_smooth^2)) + smooth_outlier, on the total flow",
                sigma_data_gray_levels: c.sigma_data,
                sigma_smooth_px: c.sigma_smooth,
                smooth_outlier: c.smooth_outlier,
                gradient_weight: c.gradient_weight,
                census_weight: c.census_weight,
                presmooth_px: c.presmooth,
                labels: coarsest,
                refine_labels: finer,
                levels: s.pyramid.levels.len(),
                levels_chosen_from_image_size: c.levels == 0,
                reach_px: s.reach(),
                pyramid: "2x2 means per level; each finer level searches the window around the upsampled, doubled flow of the level above (beyond the paper)",
                readout: c.estimate,
            },
            zero_flow: s.zero_errors.map(|z| ZeroFlow {
                epe: z.epe,
                aae: z.aae,
                counted_pixels: z.counted,
            }),
            ground_truth: s.ground_truth.as_ref().map(|g| GroundTruth {
                unknown_pixels: g.unknown_count(),
                max_speed: g.max_speed(),
            }),
            runs: s.runs.iter().map(|r| RunReport::of(r, s)).collect(),
            warnings: s.warnings(),
            metric_definitions: MetricDefinitions {
                epe: "mean over known ground-truth pixels of |(u,v) - (u_gt,v_gt)|, pixels",
                aae: "mean angle between (u,v,1) and (u_gt,v_gt,1), degrees",
                unknown: "ground-truth components above 1e9 in magnitude are excluded",
            },
        }
    }
}

impl RunReport {
    fn of(r: &FlowRun, s: &FlowScenario) -> RunReport {
        let c = &s.config;
        RunReport {
            algorithm: r.algorithm.label(),
            setup_seconds: r.setup_seconds(),
            levels: r
                .levels
                .iter()
                .map(|l| LevelReport {
                    level: l.level,
                    size: [l.width, l.height],
                    setup_seconds: l.setup_seconds,
                    run_seconds: l.run_seconds,
                    iterations: l.iterations,
                    edge_shift_classes: l.shift_classes,
                    labels: l.labels,
                    message_updates: l.message_updates,
                    fallbacks: l.fallbacks,
                    fallback_fraction: l.fallback_fraction(),
                    final_flow_change: l.flow_change.is_finite().then_some(l.flow_change),
                    stopped_early: l.stopped_early,
                    refine_seconds: l.refine_seconds,
                    refine_warps: l.refine_warps,
                    epe_before_refinement: l.errors_before_refinement.map(|e| e.epe),
                    aae_before_refinement: l.errors_before_refinement.map(|e| e.aae),
                })
                .collect(),
            epe: r.epe.clone(),
            aae: r.aae.clone(),
            snapshots: r
                .snapshots
                .iter()
                .map(|x| SnapshotReport {
                    iteration: x.iteration,
                    level: x.level,
                    level_iteration: x.level_iteration,
                    epe: x.errors.map(|e| e.epe),
                    aae: x.errors.map(|e| e.aae),
                })
                .collect(),
            variational_refinement: r.refinement().map(|info| {
                let p = c.variational_at(0, c.levels_for(c.width, c.height));
                RefinementReport {
                    method: "Charbonnier brightness + gradient constancy (normalised) and Charbonnier smoothness, linearised at the message-passing flow, lagged non-linearity with red-black SOR (Brox et al. 2004; DIS, Kroeger et al. 2016)",
                    warps: p.warps,
                    fixed_point_iterations: p.iterations,
                    sor_iterations: p.sor_iterations,
                    alpha: p.alpha,
                    delta: p.delta,
                    gamma: p.gamma,
                    seconds: info.seconds,
                    epe_before: info.errors_before.map(|e| e.epe),
                    aae_before: info.errors_before.map(|e| e.aae),
                }
            }),
            settings: match r.algorithm {
                FlowAlgorithm::Sosmp => Settings::Sosmp {
                    basis: Basis {
                        kind: "tensor fourier",
                        coefficients: c.coefficients,
                        per_axis: c.side().unwrap_or(0),
                    },
                    samples: c.samples,
                    step_gamma: c.step_gamma,
                    step_rule: "eta_t = min(1, 1 / (step_gamma (t + 1))), t from 0 at each level",
                    start: "uniform message (1/sqrt(V), 0, ..., 0)",
                    fallbacks: r.total_fallbacks(),
                },
                FlowAlgorithm::Discrete => Settings::Discrete {
                    messages: "separable Gaussian filter over the label lattice; synchronous = checkerboard (even pixels, then odd), sweep/random/residual = one pixel at a time from the freshest messages; f64 messages; residual = mean L1 change per message update",
                    damping: c.damping,
                    schedule: c.schedule.label(),
                },
            },
        }
    }
}
