//! `beliefscope run denoise` flags.

use std::path::PathBuf;

use clap::Args;

use super::OutputArgs;
use crate::error::Result;
use crate::inference::{EstimateKind, Schedule};
use crate::scenarios::denoise::{DenoiseAlgorithm, DenoiseConfig};

#[derive(Debug, Clone, Args)]
pub struct DenoiseArgs {
    /// Sunset width in pixels [default: 100].
    #[arg(long)]
    pub width: Option<usize>,
    /// Sunset height in pixels [default: 100].
    #[arg(long)]
    pub height: Option<usize>,
    /// Number of gray levels C [default: 50].
    #[arg(long)]
    pub colors: Option<usize>,
    /// Noise standard deviation in gray levels [default: 30].
    #[arg(long)]
    pub noise: Option<f64>,
    /// Noise seed [default: 0].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Use this image (any common format, converted to gray) as the clean image.
    #[arg(long, value_name = "PATH")]
    pub image: Option<PathBuf>,
    /// Keep a loaded image's gray values instead of quantising them to C levels.
    #[arg(long)]
    pub no_quantize: bool,
    /// Algorithm [default: discrete].
    #[arg(long)]
    pub algorithm: Option<DenoiseAlgorithm>,
    /// Maximum number of iterations [default: 30].
    #[arg(long)]
    pub iters: Option<usize>,
    /// Damping d in [0, 0.99]: new = d old + (1 - d) update [default: 0.5].
    #[arg(long)]
    pub damping: Option<f64>,
    /// Stop when the residual falls below this [default: 1e-6].
    #[arg(long)]
    pub tolerance: Option<f64>,
    /// synchronous or sweep [default: synchronous].
    #[arg(long)]
    pub schedule: Option<Schedule>,
    /// map or mean [default: map].
    #[arg(long)]
    pub estimate: Option<EstimateKind>,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl DenoiseArgs {
    /// Defaults overridden by the flags given, checked.
    pub fn into_config(self) -> Result<DenoiseConfig> {
        let d = DenoiseConfig::default();
        let config = DenoiseConfig {
            width: self.width.unwrap_or(d.width),
            height: self.height.unwrap_or(d.height),
            colors: self.colors.unwrap_or(d.colors),
            noise: self.noise.unwrap_or(d.noise),
            seed: self.seed.unwrap_or(d.seed),
            image: self.image,
            quantize: !self.no_quantize,
            algorithm: self.algorithm.unwrap_or(d.algorithm),
            schedule: self.schedule.unwrap_or(d.schedule),
            damping: self.damping.unwrap_or(d.damping),
            max_iters: self.iters.unwrap_or(d.max_iters),
            tolerance: self.tolerance.unwrap_or(d.tolerance),
            estimate: self.estimate.unwrap_or(d.estimate),
        };
        config.check()?;
        Ok(config)
    }
}
