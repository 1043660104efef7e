//! `beliefscope run denoise` flags.

use std::path::PathBuf;

use clap::Args;

use crate::error::Result;
use crate::inference::EstimateKind;
use crate::inference::kbp::{Bandwidth, KbpSettings, KbpUpdate};
use crate::scenarios::ScenarioParams;
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
    /// Noise seed [default: 0].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Use this image (any common format, converted to gray) as the clean image.
    #[arg(long, value_name = "PATH")]
    pub image: Option<PathBuf>,
    /// Denoise this image (any common format, converted to gray) as it is: it already is the
    /// noisy observation, with no clean version (no RMSE is reported).
    #[arg(long, value_name = "PATH", conflicts_with = "image")]
    pub noisy_image: Option<PathBuf>,
    /// Noise sigma of --noisy-image in gray levels [default: estimated from the image, MAD of
    /// its finest diagonal db4 wavelet coefficients / 0.6745].
    #[arg(long, requires = "noisy_image", conflicts_with = "noise")]
    pub sigma: Option<f64>,
    /// Learn the potentials from this clean image (converted to gray, quantised like the test
    /// image) [default: the built-in image --train-builtin names for a loaded image; the sunset
    /// generator for the sunset].
    #[arg(long, value_name = "PATH")]
    pub train_image: Option<PathBuf>,
    /// The built-in image a loaded image trains on without --train-image: sunset, dead-leaves
    /// (Lee, Mumford & Huang 2001: occluding disks, radii ~ r^-3, independent gray levels) or
    /// dead-leaves-shaded (each leaf a linear ramp) [default: dead-leaves, four draws side by
    /// side].
    #[arg(long, value_name = "IMAGE", conflicts_with_all = ["train_image", "oracle_training"])]
    pub train_builtin: Option<BuiltinTraining>,
    /// Learn the potentials from the test image's own clean version: an oracle no user has.
    #[arg(long)]
    pub oracle_training: bool,
    /// Keep a loaded image's gray values instead of quantising them to C levels.
    #[arg(long)]
    pub no_quantize: bool,
    /// Algorithm: discrete or kbp [default: kbp].
    #[arg(long)]
    pub algorithm: Option<DenoiseAlgorithm>,
    /// Kernel-BP update: full, linear or constant [default: constant].
    #[arg(long)]
    pub update: Option<KbpUpdate>,
    #[arg(long)]
    pub lambda: Option<f64>,
    #[arg(long)]
    pub epsilon: Option<f64>,
    #[arg(long)]
    pub max_rank: Option<usize>,
    /// RBF bandwidth of the clean values in gray levels, or auto (median heuristic times the
    /// multiplier) [default: auto].
    #[arg(long)]
    pub bandwidth: Option<Bandwidth>,
    /// RBF bandwidth of the noisy observations, or auto [default: auto].
    #[arg(long)]
    pub observation_bandwidth: Option<Bandwidth>,
    #[arg(long)]
    pub bandwidth_multiplier: Option<f64>,
    /// Kernel-BP candidate set: training (distinct training levels) or all (0..255).
    #[arg(long)]
    pub candidates: Option<Candidates>,
    /// Kernel BP: also train on the training pairs shifted by +-each of these gray levels
    /// (comma separated; 0: the paper's templates), so the learned coupling depends mostly on
    /// gray-level differences [default: 20,40,...,120 for a loaded image trained on another
    /// image, 0 for the sunset and the oracle].
    #[arg(long, value_delimiter = ',', num_args = 1..)]
    pub template_shifts: Option<Vec<f64>>,
    /// Kernel BP: learn the likelihood from one noise draw per training pixel, as Song et al.
    /// 2011 Sec. 6.1 [default: the draws' expectation over the known noise, in closed form].
    #[arg(long)]
    pub one_noise_draw: bool,
    /// Also run this algorithm on the same noisy image: discrete, kbp-full, kbp-linear,
    /// kbp-constant.
    #[arg(long)]
    pub compare: Option<AlgorithmChoice>,
    #[arg(long)]
    pub iters: Option<usize>,
    #[arg(long)]
    pub damping: Option<f64>,
    #[arg(long)]
    pub tolerance: Option<f64>,
    /// Stop each algorithm at the discrepancy principle: the first iterate whose RMS distance
    /// to the noisy image reaches the noise sigma (no clean image needed).
    #[arg(long)]
    pub discrepancy_stop: bool,
    /// Run every algorithm to its iteration limit or tolerance without Monte-Carlo SURE (which
    /// needs no clean image and by default guards every step).
    #[arg(long)]
    pub no_sure_stop: bool,
    /// What SURE does when an iteration raises it: guard (take the step back, halve the step:
    /// the messages settle at low SURE) or stop (after two such iterations) [default: guard].
    #[arg(long)]
    pub sure_rule: Option<SureRule>,
    /// Probe directions SURE averages its divergence over (1..16), or auto: enough that pixels x
    /// probes reaches 65,536, at most 8 (7 on the 100 x 100 sunset, 1 from 256 x 256 on); each
    /// runs another copy of the algorithm [default: auto].
    #[arg(long)]
    pub sure_probes: Option<SureProbes>,
    /// auto, synchronous, sweep, random or residual (residual BP, Elidan et al. 2006); auto
    /// sweeps kernel BP on a loaded image and runs everything else synchronously [default:
    /// auto].
    #[arg(long)]
    pub schedule: Option<ScheduleChoice>,
    /// map or mean [default: mean].
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

    /// Defaults overridden by the flags given, checked.
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
        let config = self
            .output
            .apply_sets(config, crate::scenarios::denoise::PARAMS)?;
        config.check()?;
        Ok(config)
    }
}
