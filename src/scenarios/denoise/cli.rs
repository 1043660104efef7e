//! `beliefscope run denoise` flags.

use std::path::PathBuf;

use clap::Args;

use crate::error::Result;
use crate::inference::EstimateKind;
use crate::inference::kbp::{Bandwidth, KbpSettings, KbpUpdate};
use crate::scenarios::denoise::schedule_choice::ScheduleChoice;
use crate::scenarios::denoise::sure_stop::{SureProbes, SureRule};
use crate::scenarios::denoise::{
    AlgorithmChoice, BuiltinTraining, Candidates, DenoiseAlgorithm, DenoiseConfig,
};
use crate::scenarios::{OutputArgs, RunFlags};

#[derive(Debug, Clone, Args)]
pub struct DenoiseArgs {
    #[arg(long)]
    pub width: Option<usize>,
    #[arg(long)]
    pub height: Option<usize>,
    #[arg(long)]
    pub colors: Option<usize>,
    #[arg(long)]
    pub noise: Option<f64>,
    #[arg(long)]
    pub seed: Option<u64>,
    #[arg(long, value_name = "PATH")]
    pub image: Option<PathBuf>,
    #[arg(long, value_name = "PATH", conflicts_with = "image")]
    pub noisy_image: Option<PathBuf>,
    #[arg(
        long,
        requires = "noisy_image",
        conflicts_with = "noise",
        help = super::config::NOISY_SIGMA_HELP
    )]
    pub sigma: Option<f64>,
    #[arg(long, value_name = "PATH")]
    pub train_image: Option<PathBuf>,
    #[arg(long, value_name = "IMAGE", conflicts_with_all = ["train_image", "oracle_training"])]
    pub train_builtin: Option<BuiltinTraining>,
    #[arg(long)]
    pub oracle_training: bool,
    #[arg(long)]
    pub no_quantize: bool,
    #[arg(long)]
    pub algorithm: Option<DenoiseAlgorithm>,
    #[arg(long)]
    pub update: Option<KbpUpdate>,
    #[arg(long)]
    pub lambda: Option<f64>,
    #[arg(long)]
    pub epsilon: Option<f64>,
    #[arg(long)]
    pub max_rank: Option<usize>,
    #[arg(long)]
    pub bandwidth: Option<Bandwidth>,
    #[arg(long)]
    pub observation_bandwidth: Option<Bandwidth>,
    #[arg(long)]
    pub bandwidth_multiplier: Option<f64>,
    #[arg(long)]
    pub candidates: Option<Candidates>,
    #[arg(long, value_delimiter = ',', num_args = 1..)]
    pub template_shifts: Option<Vec<f64>>,
    #[arg(long)]
    pub one_noise_draw: bool,
    #[arg(long)]
    pub compare: Option<AlgorithmChoice>,
    #[arg(long)]
    pub iters: Option<usize>,
    #[arg(long)]
    pub damping: Option<f64>,
    #[arg(long)]
    pub tolerance: Option<f64>,
    #[arg(long)]
    pub discrepancy_stop: bool,
    #[arg(long)]
    pub no_sure_stop: bool,
    #[arg(long)]
    pub sure_rule: Option<SureRule>,
    #[arg(long)]
    pub sure_probes: Option<SureProbes>,
    #[arg(long)]
    pub schedule: Option<ScheduleChoice>,
    #[arg(long)]
    pub estimate: Option<EstimateKind>,
    #[arg(long)]
    pub edge_appearance: Option<f64>,
    #[arg(long)]
    pub kbp_edge_appearance: Option<f64>,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl DenoiseArgs {}

impl RunFlags for DenoiseArgs {
    type Config = DenoiseConfig;

    fn output(&self) -> &OutputArgs {
        &self.output
    }

    fn into_config(self) -> Result<DenoiseConfig> {
        let d = DenoiseConfig::default();
        let config = DenoiseConfig {
            width: self.width.unwrap_or(d.width),
            height: self.height.unwrap_or(d.height),
            colors: self.colors.unwrap_or(d.colors),
            noise: self.sigma.or(self.noise).unwrap_or(d.noise),
            estimate_sigma: self.noisy_image.is_some()
                && self.sigma.is_none()
                && self.noise.is_none(),
            noisy_image: self.noisy_image,
            sigma_rule: None,
            seed: self.seed.unwrap_or(d.seed),
            image: self.image,
            quantize: !self.no_quantize,
            train_image: self.train_image,
            train_builtin: self.train_builtin.unwrap_or(d.train_builtin),
            train_size: d.train_size,
            oracle: self.oracle_training,
            algorithm: self.algorithm.unwrap_or(d.algorithm),
            kbp: KbpSettings {
                update: self.update.unwrap_or(d.kbp.update),
                lambda: self.lambda.unwrap_or(d.kbp.lambda),
                epsilon: self.epsilon.unwrap_or(d.kbp.epsilon),
                max_rank: self.max_rank.unwrap_or(d.kbp.max_rank),
                bandwidth: self.bandwidth.unwrap_or(d.kbp.bandwidth),
                observation_bandwidth: self
                    .observation_bandwidth
                    .unwrap_or(d.kbp.observation_bandwidth),
                multiplier: self.bandwidth_multiplier.unwrap_or(d.kbp.multiplier),
            },
            candidates: self.candidates.unwrap_or(d.candidates),
            template_shifts: self.template_shifts.or(d.template_shifts),
            kbp_expected_observations: d.kbp_expected_observations && !self.one_noise_draw,
            compare: self.compare,
            schedule: self.schedule.unwrap_or(d.schedule),
            damping: self.damping.unwrap_or(d.damping),
            schedule_changes: Vec::new(),
            max_iters: self.iters.unwrap_or(d.max_iters),
            tolerance: self.tolerance.unwrap_or(d.tolerance),
            discrepancy_stop: self.discrepancy_stop,
            sure_stop: !self.no_sure_stop,
            sure_rule: self.sure_rule.unwrap_or(d.sure_rule),
            sure_probes: self.sure_probes.unwrap_or(d.sure_probes),
            estimate: self.estimate.unwrap_or(d.estimate),
            edge_appearance: self.edge_appearance.unwrap_or(d.edge_appearance),
            kbp_edge_appearance: self.kbp_edge_appearance.unwrap_or(d.kbp_edge_appearance),
        };
        Ok(config)
    }
}
