//! `beliefscope run flow` flags.

use std::path::PathBuf;

use clap::Args;

use crate::error::Result;
use crate::inference::EstimateKind;
use crate::scenarios::flow::config::BuiltinPair;
use crate::scenarios::flow::{FlowAlgorithm, FlowConfig};
use crate::scenarios::{OutputArgs, RunFlags};

#[derive(Debug, Clone, Args)]
pub struct FlowArgs {
    #[arg(long, value_name = "A.png")]
    pub frame1: Option<PathBuf>,
    #[arg(long, value_name = "B.png")]
    pub frame2: Option<PathBuf>,
    #[arg(long, value_name = "FLOW.flo")]
    pub gt: Option<PathBuf>,
    #[arg(long)]
    pub pair: Option<BuiltinPair>,
    #[arg(long)]
    pub width: Option<usize>,
    #[arg(long)]
    pub height: Option<usize>,
    #[arg(long)]
    pub algorithm: Option<FlowAlgorithm>,
    #[arg(long)]
    pub compare: Option<FlowAlgorithm>,
    #[arg(long)]
    pub coefficients: Option<usize>,
    #[arg(long)]
    pub samples: Option<usize>,
    #[arg(long)]
    pub iters: Option<usize>,
    #[arg(long)]
    pub sosmp_iters: Option<usize>,
    #[arg(long)]
    pub stop_change: Option<f64>,
    #[arg(long)]
    pub max_displacement: Option<f64>,
    #[arg(long)]
    pub coarsest_displacement: Option<f64>,
    #[arg(long)]
    pub refine_displacement: Option<f64>,
    #[arg(long)]
    pub fine_levels: Option<usize>,
    #[arg(long)]
    pub max_mp_pixels: Option<usize>,
    #[arg(long)]
    pub subpixel: Option<usize>,
    #[arg(long)]
    pub levels: Option<usize>,
    /// Start from a preset: paper (one level, step 1/(t+1), Gaussian smoothness), default, or
    /// best (robust smoothness, census data term, d_r 1.5, every iteration of every level);
    /// the other flags then override it. Without it: default.
    #[arg(long)]
    pub preset: Option<String>,
    #[arg(long)]
    pub smooth_outlier: Option<f64>,
    #[arg(long)]
    pub gradient_weight: Option<f64>,
    /// Data term: brightness (the paper's brightness constancy) or census (5 x 5 ternary
    /// census Hamming distance, robust to a brightness change; sets --census-weight to its
    /// default 8 unless given). Without it: the preset's (brightness for default and paper).
    #[arg(long, value_name = "brightness|census")]
    pub data_term: Option<String>,
    #[arg(long)]
    pub census_weight: Option<f64>,
    #[arg(long)]
    pub variational_iters: Option<usize>,
    #[arg(long)]
    pub variational_warps: Option<usize>,
    #[arg(long)]
    pub refine_only_warps: Option<usize>,
    #[arg(long)]
    pub variational_alpha: Option<f64>,
    #[arg(long)]
    pub variational_stop_change: Option<f64>,
    #[arg(long)]
    pub variational_gamma: Option<f64>,
    #[arg(long)]
    pub variational_zeta: Option<f64>,
    #[arg(long)]
    pub refine_every_level: Option<bool>,
    #[arg(long)]
    pub median_handoff: Option<bool>,
    #[arg(long)]
    pub sigma_data: Option<f64>,
    #[arg(long)]
    pub sigma_smooth: Option<f64>,
    #[arg(long)]
    pub presmooth: Option<f64>,
    #[arg(long)]
    pub estimate: Option<EstimateKind>,
    #[arg(long)]
    pub step_gamma: Option<f64>,
    #[arg(long)]
    pub damping: Option<f64>,
    #[arg(long)]
    pub schedule: Option<crate::inference::Schedule>,
    #[arg(long)]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl FlowArgs {}

impl RunFlags for FlowArgs {
    type Config = FlowConfig;

    fn output(&self) -> &OutputArgs {
        &self.output
    }

    fn into_config(self) -> Result<FlowConfig> {
        let d = match &self.preset {
            Some(name) => FlowConfig::default().with_preset(name)?,
            None => FlowConfig::default(),
        };
        let c = FlowConfig {
            frame1: self.frame1,
            frame2: self.frame2,
            ground_truth: self.gt,
            pair: self.pair.unwrap_or(d.pair),
            width: self.width.unwrap_or(d.width),
            height: self.height.unwrap_or(d.height),
            seed: self.seed.unwrap_or(d.seed),
            algorithm: self.algorithm.unwrap_or(d.algorithm),
            compare: self.compare,
            coefficients: self.coefficients.unwrap_or(d.coefficients),
            samples: self.samples.unwrap_or(d.samples),
            step_gamma: self.step_gamma.unwrap_or(d.step_gamma),
            damping: self.damping.unwrap_or(d.damping),
            schedule: self.schedule.unwrap_or(d.schedule),
            schedule_changes: Vec::new(),
            iters: self.iters.unwrap_or(d.iters),
            sosmp_iters: self.sosmp_iters.unwrap_or(d.sosmp_iters),
            stop_change: self.stop_change.unwrap_or(d.stop_change),
            max_displacement: self.max_displacement.unwrap_or(d.max_displacement),
            coarsest_displacement: self
                .coarsest_displacement
                .unwrap_or(d.coarsest_displacement),
            refine_displacement: self.refine_displacement.unwrap_or(d.refine_displacement),
            fine_levels: self.fine_levels.unwrap_or(d.fine_levels),
            max_mp_pixels: self.max_mp_pixels.unwrap_or(d.max_mp_pixels),
            subpixel: self.subpixel.unwrap_or(d.subpixel),
            levels: self.levels.unwrap_or(d.levels),
            sigma_data: self.sigma_data.unwrap_or(d.sigma_data),
            sigma_smooth: self.sigma_smooth.unwrap_or(d.sigma_smooth),
            smooth_outlier: self.smooth_outlier.unwrap_or(d.smooth_outlier),
            gradient_weight: self.gradient_weight.unwrap_or(d.gradient_weight),
            census_weight: match self.data_term.as_deref() {
                None => self.census_weight.unwrap_or(d.census_weight),
                Some("census") => self
                    .census_weight
                    .unwrap_or(crate::scenarios::flow::config::DEFAULT_CENSUS_WEIGHT),
                Some("brightness") => 0.0,
                Some(other) => {
                    return Err(crate::error::Error::param(
                        "data-term",
                        format!("unknown data term '{other}' (expected brightness or census)"),
                    ));
                }
            },
            variational_iters: self.variational_iters.unwrap_or(d.variational_iters),
            variational_warps: self.variational_warps.unwrap_or(d.variational_warps),
            refine_only_warps: self.refine_only_warps.unwrap_or(d.refine_only_warps),
            variational_alpha: self.variational_alpha.unwrap_or(d.variational_alpha),
            variational_gamma: self.variational_gamma.unwrap_or(d.variational_gamma),
            variational_stop_change: self
                .variational_stop_change
                .unwrap_or(d.variational_stop_change),
            variational_zeta: self.variational_zeta.unwrap_or(d.variational_zeta),
            refine_every_level: self.refine_every_level.unwrap_or(d.refine_every_level),
            median_handoff: self.median_handoff.unwrap_or(d.median_handoff),
            presmooth: self.presmooth.unwrap_or(d.presmooth),
            estimate: self.estimate.unwrap_or(d.estimate),
            snapshots: d.snapshots,
        };
        Ok(c)
    }
}
