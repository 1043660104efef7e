//! Every parameter of a denoise run, with its checks.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::labels::{Labelled, one_of, parse_label, unknown};
use crate::error::{Error, Result, check_positive};
use crate::inference::kbp::{KbpSettings, KbpUpdate};
use crate::inference::schedule::ScheduleChange;
use crate::inference::{Damping, EstimateKind, Schedule};
use crate::run::budget::MemoryNeed;
use crate::scenarios::ScenarioParams;
use crate::scenarios::denoise::schedule_choice::{self, ScheduleChoice};
use crate::scenarios::denoise::sure_stop::{MAX_PROBES, SureProbes, SureRule};
use crate::scenarios::params::{Param, check_table, names_of};

/// The range of a typed SURE probe count (`sure_probes` may also be `auto`, so it is not a row
/// of [`PARAMS`]).
pub const SURE_PROBES_RANGE: Param =
    Param::int("sure_probes", "SURE probes", 1.0, MAX_PROBES as f64);

/// Help of a noisy image's sigma (`--sigma` and the room's row), written once here: it sets
/// `noise` and `estimate_sigma` together, outside the parameter table.
pub const NOISY_SIGMA_HELP: &str = "Noise sigma of --noisy-image in gray levels; without it, it \
     is estimated from the image by Donoho & Johnstone's rule (the MAD of its finest diagonal \
     db4 wavelet coefficients / 0.6745).";

/// The tunable numbers of a denoise run, described once (ranges, units, scales).
pub const PARAMS: &[Param] = &[
    Param::int("width", "Width", 2.0, 4096.0)
        .unit("pixels")
        .help("Width of the built-in sunset (a loaded image keeps its own)."),
    Param::int("height", "Height", 2.0, 4096.0)
        .unit("pixels")
        .help("Height of the built-in sunset (a loaded image keeps its own)."),
    Param::int("colors", "Levels C", 2.0, 256.0)
        .help("Number of gray levels (the states of every pixel), evenly spaced over 0..255."),
    Param::real("noise", "Noise σ", 1e-6, 1e4)
        .slider(1.0, 100.0)
        .unit("gray levels")
        .help("Standard deviation of the Gaussian noise."),
    Param::real("damping", "Damping", 0.0, 0.99).help("new = d · old + (1 − d) · update."),
    Param::real("tolerance", "Tolerance", 0.0, 1e6)
        .log()
        .help("Stop once the residual (largest L1 change of a message) falls below this; 0 never stops early."),
    Param::int("max_iters", "Iterations", 1.0, 1e7)
        .flag("iters")
        .help("Maximum number of iterations."),
    Param::real("edge_appearance", "Edge appearance ρ (discrete)", 0.0, 1.0).help(
        "Discrete BP is tree-reweighted (Wainwright et al. 2003, the potentials' own method): \
         0 picks the grid's uniform spanning-tree value (pixels − 1) / edges ≈ 0.5, 1 is \
         ordinary loopy BP.",
    ),
    Param::real(
        "kbp_edge_appearance",
        "Edge appearance ρ (kernel BP)",
        0.0,
        1.0,
    )
    .help(
        "Tree-reweighted kernel-BP products at the class points (experimental): 1 is kernel BP \
         as published, 0 the grid's spanning-tree value.",
    ),
    Param::int("train_size", "Training size", 16.0, 4096.0)
        .unit("pixels")
        .help(
            "Largest side of each built-in training draw a loaded image trains on: a photograph \
             larger than this trains on draws of this size, so set-up does not grow with it.",
        ),
    Param::real("kbp.lambda", "λ", 1e-12, 10.0)
        .log()
        .help("Kernel-BP regulariser, Gram form L + λ m I."),
    Param::real("kbp.epsilon", "ε", 1e-12, 0.999)
        .log()
        .help("Incomplete-Cholesky tolerance."),
    Param::int("kbp.max_rank", "Max rank", 1.0, 2000.0).help("Largest incomplete-Cholesky rank."),
    Param::real("kbp.multiplier", "Bandwidth ×", 1e-6, 1e6)
        .flag("bandwidth-multiplier")
        .log()
        .help("Multiplier of the median-heuristic bandwidths (used where a bandwidth is auto)."),
    Param::value("seed", "Seed")
        .help("Seed of the test image's noise (the training pair uses a different one)."),
    Param::value("image", "Image").help(
        "Use this image (any common format, converted to gray) as the clean image instead of \
         the built-in sunset.",
    ),
    Param::value("noisy_image", "Noisy image").help(
        "Denoise this image (any common format, converted to gray) as it is: it already is the \
         noisy observation, with no clean version (no RMSE is reported).",
    ),
    Param::switch("quantize", "Quantise to the C levels")
        .sets(false)
        .flag("no-quantize")
        .help(
            "Round a loaded image to the C gray levels, so the discrete states can represent it \
             exactly; off keeps its gray values.",
        ),
    Param::value("train_image", "Training image").help(
        "Learn the potentials from this clean image (converted to gray, quantised like the test \
         image). None: a loaded image trains on the built-in image train_builtin names, the \
         sunset on its own generator.",
    ),
    Param::choice(
        "train_builtin",
        "Built-in training",
        names_of::<BuiltinTraining>,
    )
    .help(
        "The built-in image a loaded image learns from when no training image is given: the \
         synthetic sunset, or four dead-leaves draws side by side (occluding disks with \
         power-law radii, Lee, Mumford & Huang 2001, whose edges at every scale resemble a \
         photograph's), flat or with each leaf a linear ramp (shaded).",
    ),
    Param::switch("oracle", "oracle: train on the test image's clean version")
        .sets(true)
        .flag("oracle-training")
        .help(
            "Learn the potentials from the test image's own clean version: not a user's \
             situation (nobody has the clean test image), an upper reference only.",
        ),
    Param::switch(
        "kbp_expected_observations",
        "kernel BP: likelihood expected over the noise",
    )
    .sets(false)
    .flag("one-noise-draw")
    .help(
        "On: kernel BP learns its likelihood from the training pixels' expected noisy \
         observations, in closed form for the known Gaussian noise (the limit of infinitely \
         many noise draws). Off: from one noise draw per training pixel, as Song et al. 2011, \
         Sec. 6.1.",
    ),
    Param::choice("algorithm", "Algorithm", names_of::<DenoiseAlgorithm>).help(
        "discrete: sum-product BP over the C levels with the true likelihood; kbp: kernel BP \
         learned from the training pair, with the full (eq. 12), linear-time or constant-time \
         update (kbp.update).",
    ),
    Param::choice("kbp.update", "Kernel-BP update", names_of::<KbpUpdate>)
        .flag("update")
        .help("Kernel-BP update: full (eq. 12), linear-time or constant-time."),
    Param::value("compare", "Compare with").help(
        "A second algorithm run on the same noisy image, shown beside the first: discrete, \
         kbp-full, kbp-linear or kbp-constant.",
    ),
    Param::value("kbp.bandwidth", "σ hidden").help(
        "RBF bandwidth of the clean values in gray levels, or auto (median heuristic times the \
         multiplier).",
    ),
    Param::value("kbp.observation_bandwidth", "σ observed")
        .help("RBF bandwidth of the noisy values in gray levels, or auto."),
    Param::choice("candidates", "Candidates", names_of::<Candidates>).help(
        "Where kernel BP looks for its estimate: training (the distinct training levels) or all \
         (every level 0..255).",
    ),
    Param::value("template_shifts", "Template shifts").help(
        "Kernel BP: also train on the training pairs shifted by ± each of these gray levels \
         (comma separated; 0: the paper's templates), so the learned coupling depends mostly on \
         gray-level differences. None: 20,40,...,120 for a loaded image trained on another \
         image, 0 for the sunset and the oracle.",
    ),
    Param::choice("schedule", "Schedule", schedule_choice::names).help(
        "auto: sweeps for kernel BP on a loaded image (its guarded result is nearer TV there), \
         synchronous for the sunset and for discrete BP; synchronous: every message from the \
         previous iteration's messages; sweep: nodes in order and back with the freshest \
         messages; checkerboard: the even pixels, then the odd ones, from the freshest messages \
         (each message once, half a sweep's work); random; residual (residual BP, Elidan et \
         al. 2006).",
    ),
    Param::switch("discrepancy_stop", "Discrepancy stop")
        .sets(true)
        .help(
            "Stop each algorithm at the discrepancy principle: the first iterate whose RMS \
             distance to the noisy image reaches the noise sigma (no clean image needed).",
        ),
    Param::switch("sure_stop", "SURE")
        .sets(false)
        .flag("no-sure-stop")
        .help(
            "Monte-Carlo SURE estimates each iterate's error without the clean image (a second \
             copy runs on the noisy image plus a tiny random probe) and guards every step or \
             stops the run (sure_rule); off runs every algorithm to its iteration limit or \
             tolerance.",
        ),
    Param::choice("sure_rule", "SURE rule", names_of::<SureRule>).help(
        "What SURE does when an iteration raises it: guard (take the step back and halve the \
         step, so the messages settle at low SURE) or stop (keep the lowest-SURE iterate and stop \
         after two iterations without a lower one).",
    ),
    Param::value("sure_probes", "SURE probes").help(
        "Probe directions SURE averages its divergence over (1..16), or auto: enough that pixels \
         × probes reaches 65,536, at most 8 (7 on the 100 × 100 sunset, 1 from 256 × 256 on); \
         each runs another copy of the algorithm, and K probes divide the divergence's noise \
         variance by K.",
    ),
    Param::choice("estimate", "Estimate", names_of::<EstimateKind>).help(
        "How a belief becomes a gray value: map (the most probable level) or mean (the \
         posterior mean).",
    ),
];

/// Kernel-BP template shifts (gray levels, each used as +s and -s) when the training image is
/// another image than the test image: shifts up to ±120 make the learned coupling depend mostly
/// on gray-level differences (README, "Kernel BP trained on another image"). Measured at σ = 30,
/// C = 50 (kept RMSE, SURE stopping): cameraman trained on house 14.15 -> 12.10, house trained
/// on cameraman 9.95 -> 9.22, two synthetic piecewise-smooth images trained on each other
/// 6.23 -> 4.80 and 5.52 -> 4.39; on the sunset trained on its own generator it costs 8%
/// (3.23 -> 3.48), so that protocol keeps the paper's templates.
pub const CROSS_IMAGE_TEMPLATE_SHIFTS: [f64; 6] = [20.0, 40.0, 60.0, 80.0, 100.0, 120.0];

/// Added to the test seed to get the training pair's noise seed, so the two never coincide.
pub const TRAINING_SEED_OFFSET: u64 = 1_000_003;
/// Added to the test seed to get the seed of a built-in dead-leaves training image (its own
/// stream: not SURE's probes', `sure_stop::SURE_SEED_OFFSET`).
pub const DEAD_LEAVES_SEED_OFFSET: u64 = 4_000_037;
/// Independent dead-leaves draws a loaded image trains on, side by side. One draw of the test
/// image's size is dominated by its few largest leaves, so what kernel BP learns from it varies
/// from draw to draw (house over three draws: 9.22 / 9.53 / 9.55); four draws average that out
/// (README, "Built-in training: dead leaves").
pub const DEAD_LEAVES_DRAWS: usize = 4;
/// Added to the test seed for the held-out noisy copy that auto-tune scores on.
pub const VALIDATION_SEED_OFFSET: u64 = 2_000_006;

/// The algorithms the denoise scenario can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(strum::VariantArray, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "lowercase", parse_err_ty = String, parse_err_fn = unknown::<Self>)]
pub enum DenoiseAlgorithm {
    /// Discrete sum-product BP over the C gray levels with the true likelihood.
    Discrete,
    /// Kernel BP (Song et al. 2011) with the likelihood and the edge model learned from the
    /// training pair; the update mode is `kbp.update`.
    #[default]
    Kbp,
}

impl Labelled for DenoiseAlgorithm {
    const WHAT: &str = "denoise algorithm";
}

impl DenoiseAlgorithm {
    pub fn label(self) -> &'static str {
        self.into()
    }
}

/// One algorithm choice, e.g. for compare mode: "discrete", "kbp-full", "kbp-linear",
/// "kbp-constant".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlgorithmChoice {
    pub algorithm: DenoiseAlgorithm,
    pub update: KbpUpdate,
}

impl AlgorithmChoice {
    pub const ALL: [AlgorithmChoice; 4] = [
        AlgorithmChoice {
            algorithm: DenoiseAlgorithm::Discrete,
            update: KbpUpdate::Constant,
        },
        AlgorithmChoice {
            algorithm: DenoiseAlgorithm::Kbp,
            update: KbpUpdate::Full,
        },
        AlgorithmChoice {
            algorithm: DenoiseAlgorithm::Kbp,
            update: KbpUpdate::Linear,
        },
        AlgorithmChoice {
            algorithm: DenoiseAlgorithm::Kbp,
            update: KbpUpdate::Constant,
        },
    ];

    pub fn label(self) -> String {
        match self.algorithm {
            DenoiseAlgorithm::Discrete => "discrete".into(),
            DenoiseAlgorithm::Kbp => format!("kbp-{}", self.update.label()),
        }
    }
}

impl std::str::FromStr for AlgorithmChoice {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        AlgorithmChoice::ALL
            .into_iter()
            .find(|a| a.label() == s)
            .ok_or_else(|| {
                let names = AlgorithmChoice::ALL.map(AlgorithmChoice::label);
                let names = one_of(names.iter().map(String::as_str));
                format!("unknown algorithm '{s}' (expected {names})")
            })
    }
}

/// Where kernel BP looks for its estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(strum::VariantArray, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "lowercase", parse_err_ty = String, parse_err_fn = unknown::<Self>)]
pub enum Candidates {
    /// The distinct gray levels of the clean training image.
    #[default]
    Training,
    /// Every level 0..=255.
    All,
}

impl Labelled for Candidates {
    const WHAT: &str = "candidate set";
}

/// The built-in clean image a loaded (or noisy) image trains on when no `train_image` is given.
/// The sunset scenario always trains on its own generator (Song et al. 2011, Sec. 6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::VariantArray, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum BuiltinTraining {
    /// The synthetic sunset of the test image's size.
    Sunset,
    /// [`DEAD_LEAVES_DRAWS`] dead-leaves images of the test image's size side by side
    /// (`dead_leaves.rs`: flat leaves, Lee, Mumford & Huang 2001), drawn from
    /// `seed + DEAD_LEAVES_SEED_OFFSET` on (the default: kernel BP measured nearer TV than with
    /// the sunset on 16 of 18 runs over six images and three noise seeds).
    #[default]
    DeadLeaves,
    /// The same with each leaf a linear ramp between two gray levels (`Shading::Ramp`).
    DeadLeavesShaded,
}

impl Labelled for BuiltinTraining {
    const WHAT: &str = "built-in training image";
}

impl BuiltinTraining {
    /// Its name on the command line and in results.json.
    pub fn label(self) -> &'static str {
        self.into()
    }

    /// What the window's picker shows.
    pub fn title(self) -> &'static str {
        match self {
            BuiltinTraining::Sunset => "built-in sunset",
            BuiltinTraining::DeadLeaves => "dead leaves",
            BuiltinTraining::DeadLeavesShaded => "dead leaves, shaded",
        }
    }
}

/// A name with `-` for `_` (`dead-leaves`) is the same name.
impl std::str::FromStr for BuiltinTraining {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        parse_label(&s.replace('-', "_")).map_err(|_| unknown::<Self>(s))
    }
}

/// Every parameter of a denoise run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DenoiseConfig {
    /// Sunset width in pixels. With `image` set the scenario echoes the image's size here (the
    /// file fixes it; the fields are then only a record of what ran).
    pub width: usize,
    /// Sunset height in pixels (see `width`).
    pub height: usize,
    /// Number of gray levels C, evenly spaced over 0..255.
    pub colors: usize,
    /// Standard deviation of the additive Gaussian noise, in gray levels.
    pub noise: f64,
    /// Seed of the test image's noise; the training pair uses `seed + TRAINING_SEED_OFFSET`.
    pub seed: u64,
    /// An image file to use as the clean image instead of the sunset.
    pub image: Option<PathBuf>,
    /// An image file that already is the noisy observation y (a user's own noisy photograph):
    /// no noise is added, and there is no clean image, so no RMSE is reported.
    pub noisy_image: Option<PathBuf>,
    /// With `noisy_image`: estimate `noise` from y (`noise_estimate.rs`) instead of taking it
    /// as given. The estimate that ran is echoed in `noise`, the rule in `sigma_rule`.
    pub estimate_sigma: bool,
    /// How `noise` was estimated (echo only; None: it was given).
    pub sigma_rule: Option<String>,
    /// Quantise a loaded image to the C levels (the sunset is always on them).
    pub quantize: bool,
    /// The clean image the potentials are learned from (quantised like the test image). None:
    /// for the sunset its own generator (the paper's protocol); for a loaded image the built-in
    /// image of its size that `train_builtin` names.
    pub train_image: Option<PathBuf>,
    /// The built-in image a loaded or noisy image trains on without `train_image` (ignored by
    /// the sunset, which trains on its own generator, and by the oracle).
    pub train_builtin: BuiltinTraining,
    /// Largest side, in pixels, of each built-in training draw (`train_builtin`): a loaded
    /// image trains on draws of its own size up to this, so set-up and memory stay fixed for
    /// a photograph of any size (measured: docs/denoise.md, "Training size").
    pub train_size: usize,
    /// Learn the potentials from the test image's own clean version (an oracle no user has).
    pub oracle: bool,
    pub algorithm: DenoiseAlgorithm,
    /// Kernel-BP parameters (used when `algorithm` or `compare` is kernel BP).
    pub kbp: KbpSettings,
    /// Candidate set of kernel-BP estimates.
    pub candidates: Candidates,
    /// Gray-level shifts (in gray levels, each side of 0; rounded to whole level spacings) of
    /// the kernel-BP training templates: every edge pair `(a, b)` of the training image is added
    /// again as `(a + s, b + s)` for `s` in `±template_shifts` (pairs leaving 0..255 dropped),
    /// and the observation template takes each pixel at one of the shifts. Empty: the paper's
    /// templates (Song et al. 2011, Sec. 6.1). None: [`DenoiseConfig::resolved_template_shifts`],
    /// a rule of the config alone, so None re-runs the same run; the list that ran is named in
    /// the training description (results.json `training`, the window). See `data::KbpTemplates`.
    pub template_shifts: Option<Vec<f64>>,
    /// Kernel BP learns its likelihood from the observation template's expectation over the
    /// known Gaussian noise `noise` (closed form, the limit of infinitely many noise draws per
    /// training pixel; `inference::kbp::model`, README "The expected observation template");
    /// false: from one noise draw per training pixel, as Song et al. 2011, Sec. 6.1.
    pub kbp_expected_observations: bool,
    /// A second algorithm run on the same noisy image, for comparison.
    pub compare: Option<AlgorithmChoice>,
    /// `auto` (the default: kernel BP on a loaded image sweeps, the rest is synchronous; see
    /// `schedule_choice.rs`) or one schedule for every algorithm; [`Self::schedule_for`].
    pub schedule: ScheduleChoice,
    /// `new = d * old + (1 - d) * update`, d in [0, 0.99].
    pub damping: f64,
    /// Schedule switches made during the run (the debugger's "Switch live"), applied before
    /// their iteration, so the echoed config replays the run. `schedule` and `damping` are
    /// what the run started with.
    pub schedule_changes: Vec<ScheduleChange>,
    /// Iterations to run at most.
    pub max_iters: usize,
    /// Stop once the residual falls below this (0: never).
    pub tolerance: f64,
    /// Discrepancy-principle stopping (Morozov): an algorithm stops at the first iterate whose
    /// RMS distance to the noisy image reaches the noise sigma (the distance the clean image
    /// itself has). Needs no clean image. Off by default (see `Default`).
    pub discrepancy_stop: bool,
    /// Stop each algorithm by Monte-Carlo SURE (Ramani et al. 2008; `sure_stop.rs`): a second
    /// copy runs on the noisy image plus a small random probe, which estimates the current
    /// estimate's mean squared error without the clean image; the run keeps the estimate of
    /// lowest SURE and stops once SURE has not improved for two iterations. On by default.
    pub sure_stop: bool,
    /// What SURE does when an iteration raises it: `guard` (default) takes the step back and
    /// halves the step size, so the messages settle at low SURE; `stop` stops after two
    /// iterations without a lower SURE (`sure_stop.rs`).
    pub sure_rule: SureRule,
    /// Probe directions Monte-Carlo SURE averages its divergence over: `auto` (the default,
    /// [`SureProbes::resolve`]: more on small images, whose SURE is noisier) or a count. Each
    /// is another copy of every algorithm, and K of them divide the divergence's noise
    /// variance by K.
    pub sure_probes: SureProbes,
    pub estimate: EstimateKind,
    /// Edge appearance probability ρ of tree-reweighted message passing, for both algorithms:
    /// 1 is ordinary (loopy) BP, 0 means the uniform spanning-tree value of the grid,
    /// (pixels - 1) / edges. See [`DenoiseConfig::resolved_edge_appearance`].
    pub edge_appearance: f64,
    /// The same for kernel BP (1: as published; see `inference::kbp::engine`).
    pub kbp_edge_appearance: f64,
}

impl Default for DenoiseConfig {
    fn default() -> Self {
        DenoiseConfig {
            width: 100,
            height: 100,
            colors: 50,
            noise: 30.0,
            seed: 0,
            image: None,
            noisy_image: None,
            estimate_sigma: false,
            sigma_rule: None,
            quantize: true,
            train_image: None,
            // Four dead-leaves draws: kernel BP came nearer TV than with the sunset on 16 of 18
            // runs (six images, three noise seeds; README "Built-in training: dead leaves").
            train_builtin: BuiltinTraining::DeadLeaves,
            // The 256 x 256 photographs' own size; larger photographs keep accuracy with it.
            train_size: 256,
            oracle: false,
            algorithm: DenoiseAlgorithm::Kbp,
            kbp: KbpSettings::default(),
            candidates: Candidates::Training,
            // Chosen by the training image's relation to the test image, see
            // `resolved_template_shifts`.
            template_shifts: None,
            // Measured better on both photographs trained on each other, the synthetic pair
            // and the sunset, at a lower set-up cost (README).
            kbp_expected_observations: true,
            compare: None,
            schedule: ScheduleChoice::Auto,
            // Undamped synchronous discrete BP oscillates on the sunset (residual stays near
            // 2); 0.5 settles it (RMSE 3.0 against 9.1 undamped at C = 50, 30 iterations).
            damping: 0.5,
            schedule_changes: Vec::new(),
            // Room for the SURE guard to settle: kernel BP reaches its lowest SURE after 5-15
            // iterations and its halved steps fall below the tolerance some 20 iterations later
            // (31-41 in all on the sunset and the shared photographs, README "SURE step guard").
            max_iters: 60,
            tolerance: 1e-6,
            // Off: on the shared real images it stops within 1-5% of the best iterate with the
            // default training, but on the sunset it stops too early (kernel BP 4.96 against a
            // best of 3.17) and with a mismatched training image up to 57% above the best.
            discrepancy_stop: false,
            // On: kernel BP's iterates drift after their best one (ordinary loopy updates with
            // pseudo-moment potentials over-count around the grid's loops, README "Denoising
            // defaults"), and a photograph denoised with sunset-trained potentials drifts under
            // either algorithm; SURE needs no clean image and stops near the best iterate.
            sure_stop: true,
            // Guard: the run converges (its steps shrink once no full step lowers SURE) and
            // ends at its lowest-SURE messages instead of stopping mid-drift (README
            // "Denoising: SURE step guard").
            sure_rule: SureRule::Guard,
            sure_probes: SureProbes::Auto,
            // The posterior mean minimises the expected squared error, the metric shown; the
            // argmax of a belief over 50 levels throws that away (cameraman trained on house,
            // discrete BP: 15.9 against 17.7).
            estimate: EstimateKind::Mean,
            // Tree-reweighted discrete BP converges where ordinary loopy BP with the same
            // pseudo-moment potentials oscillates and drifts (README, "Denoising defaults").
            edge_appearance: 0.0,
            kbp_edge_appearance: 1.0,
        }
    }
}

impl DenoiseConfig {
    /// ρ for a grid of `width x height`: the configured value, or for 0 the edge appearance
    /// probability of the uniform distribution over spanning trees, (pixels - 1) / edges.
    pub fn resolved_edge_appearance(&self, width: usize, height: usize) -> f64 {
        Self::resolve_rho(self.edge_appearance, width, height)
    }

    /// ρ of kernel BP on a `width x height` grid (see [`Self::resolved_edge_appearance`]).
    pub fn resolved_kbp_edge_appearance(&self, width: usize, height: usize) -> f64 {
        Self::resolve_rho(self.kbp_edge_appearance, width, height)
    }

    fn resolve_rho(rho: f64, width: usize, height: usize) -> f64 {
        if rho > 0.0 {
            return rho;
        }
        let edges = (width.saturating_sub(1)) * height + width * height.saturating_sub(1);
        if edges == 0 {
            1.0
        } else {
            ((width * height - 1) as f64 / edges as f64).min(1.0)
        }
    }

    /// The schedule `algorithm` starts with: the configured one, `auto` resolved.
    pub fn schedule_for(&self, algorithm: DenoiseAlgorithm) -> Schedule {
        self.schedule
            .resolve(algorithm == DenoiseAlgorithm::Kbp, self.loads_image())
    }

    /// Whether the test image is a file (`image` or `noisy_image`) rather than the sunset.
    /// The size that will run, for the estimates: a loaded image's from its header.
    fn estimated_size(&self) -> (usize, usize) {
        match self.image.as_ref().or(self.noisy_image.as_ref()) {
            Some(path) => crate::io::image_size(path).unwrap_or((self.width, self.height)),
            None => (self.width, self.height),
        }
    }

    pub fn loads_image(&self) -> bool {
        self.image.is_some() || self.noisy_image.is_some()
    }

    /// The kernel-BP template shifts that run: the configured list, or for None
    /// [`CROSS_IMAGE_TEMPLATE_SHIFTS`] when the training image is another image than the test
    /// image (a loaded or noisy image trained on `train_image` or a built-in image) and none
    /// when it shares the test image's histogram (the sunset's own generator, the oracle).
    pub fn resolved_template_shifts(&self) -> Vec<f64> {
        match &self.template_shifts {
            Some(shifts) => shifts.clone(),
            None if self.oracle => Vec::new(),
            None if self.loads_image() => CROSS_IMAGE_TEMPLATE_SHIFTS.to_vec(),
            None => Vec::new(),
        }
    }

    /// The primary algorithm as a choice (algorithm + update).
    pub fn primary(&self) -> AlgorithmChoice {
        AlgorithmChoice {
            algorithm: self.algorithm,
            update: self.kbp.update,
        }
    }
}

/// Iterations the time estimate counts when SURE's guard may settle the run earlier: the
/// built-in image settles in 15-22 (docs/denoise.md), kernel BP's sweep on a photograph in 4-9.
const SURE_TYPICAL_ITERATIONS: usize = 25;
/// The same for kernel BP's sweep (a loaded photograph), which settles in 4-9.
const SURE_TYPICAL_ITERATIONS_PHOTOGRAPH: usize = 10;

/// The kernel-BP feature rank the memory estimate assumes when the levels and `max_rank`
/// allow more (the rank is learned, so the exact value is known only after set-up).
const TYPICAL_FEATURE_RANK: f64 = 40.0;

impl ScenarioParams for DenoiseConfig {
    const PARAMS: &'static [Param] = PARAMS;

    /// Checks every parameter before any data is made.
    fn check(&self) -> Result<()> {
        check_table(self, PARAMS)?;
        // Not in the table, whose rows are numbers: `auto` or a count.
        if let SureProbes::Count(k) = self.sure_probes {
            SURE_PROBES_RANGE.check(f64::from(k))?;
        }
        check_positive("noise", self.noise)?;
        Damping(self.damping).check()?;
        ScheduleChange::check_all(&self.schedule_changes)?;
        for &s in self.template_shifts.iter().flatten() {
            if !(s.is_finite() && (0.0..=255.0).contains(&s)) {
                return Err(Error::param(
                    "template shifts",
                    format!("{s} is not a gray-level shift in 0..255 (each is used as +s and -s)"),
                ));
            }
        }
        if self.oracle && self.train_image.is_some() {
            return Err(Error::param(
                "training",
                "choose one: a training image (--train-image) or the oracle (--oracle-training)",
            ));
        }
        if self.noisy_image.is_some() {
            if self.image.is_some() {
                return Err(Error::param(
                    "image",
                    "choose one: a clean image to add noise to (--image) or an already noisy \
                     image (--noisy-image)",
                ));
            }
            if self.oracle {
                return Err(Error::param(
                    "training",
                    "--oracle-training needs the test image's clean version, and a noisy image \
                     (--noisy-image) has none: train on the sunset or --train-image",
                ));
            }
        } else if self.estimate_sigma {
            return Err(Error::param(
                "sigma",
                "sigma is only estimated for a noisy image (--noisy-image); give --noise",
            ));
        }
        if self.algorithm == DenoiseAlgorithm::Kbp
            || self
                .compare
                .is_some_and(|c| c.algorithm == DenoiseAlgorithm::Kbp)
        {
            self.kbp.check()?;
        }
        Ok(())
    }

    /// From the engines' own layouts, per pixel of the image (and of the SURE window, whose
    /// copies are counted at its size): kernel BP keeps four f32 message slots of the feature
    /// rank (at most `min(max_rank, levels)` coefficients: the rank cannot exceed the distinct
    /// training values) per store, one store (two for the synchronous schedule, whose update
    /// reads one and writes the other), and a change record; discrete BP two f64 stores of
    /// four messages of C values, its node potentials and products. The images (clean, noisy,
    /// estimate and its predecessor, the baselines, the evidence lookup) add ten doubles per
    /// pixel. SURE on every pixel (up to 512 x 512) runs each algorithm again per probe and
    /// keeps every copy's messages at their lowest SURE; on a larger image only the window's
    /// copies run. Checked against the peak RSS of runs from 100² to 12 MP (the memory test).
    fn memory_need(&self) -> Option<MemoryNeed> {
        let (w, h) = self.estimated_size();
        let train_pixels = match self.train_image.as_deref() {
            Some(p) => crate::io::image_size(p).map_or(0.0, |(tw, th)| (tw * th) as f64),
            None if self.oracle => (w * h) as f64,
            None if self.loads_image() => {
                let draws = match self.train_builtin {
                    BuiltinTraining::Sunset => 1,
                    _ => DEAD_LEAVES_DRAWS,
                };
                (draws * w.min(self.train_size) * h.min(self.train_size)) as f64
            }
            None => (w * h) as f64,
        };
        let pixels = (w * h) as f64;
        let c = self.colors as f64;
        let mut choices = vec![self.primary()];
        choices.extend(self.compare);
        // Kernel-BP templates: every 4-neighbour pair both ways, per shifted copy, as f64 and
        // its collapsed index (set-up only).
        let copies_of_templates = 1.0 + 2.0 * self.resolved_template_shifts().len() as f64;
        let mut need = MemoryNeed::new(format!("denoise {w} x {h} with {} levels", self.colors))
            .doubles("images, baselines and estimates", 10.0 * pixels)
            .doubles("training image", 3.0 * train_pixels);
        let window = crate::scenarios::denoise::sure_window::SureWindow::of(w, h);
        let sure_pixels = match (&window, self.sure_stop) {
            (_, false) => 0.0,
            (Some(win), true) => win.pixels.len() as f64,
            (None, true) => pixels,
        };
        let probes = if self.sure_stop {
            self.sure_probes.resolve(sure_pixels as usize) as f64
        } else {
            0.0
        };
        // SURE's copies: a window's run and probes, or the probes on every pixel; the guard
        // saves each copy's messages (the image's too when SURE runs on every pixel).
        let (copies, saved) = match (&window, self.sure_stop) {
            (_, false) => (0.0, 0.0),
            (Some(_), true) => (probes + 1.0, probes + 1.0),
            (None, true) => (probes, probes + 1.0),
        };
        let saved = if self.sure_rule == SureRule::Guard {
            saved
        } else {
            0.0
        };
        let mut per_pixel = 10.0 * 8.0;
        for choice in choices {
            let bytes_per_pixel = match choice.algorithm {
                DenoiseAlgorithm::Discrete => {
                    let store = 4.0 * c * 8.0;
                    // Two stores, node potentials and products, change record.
                    (2.0 * store + 2.0 * c * 8.0 + 4.0 * 24.0, store)
                }
                DenoiseAlgorithm::Kbp => {
                    // The message dimension is the learned feature rank: at most the
                    // levels and max_rank, and in practice near 40 or below (25-37 measured
                    // for 50 and 100 levels on the built-in image and photographs).
                    let rank = (self.kbp.max_rank as f64)
                        .min(if self.quantize {
                            c
                        } else {
                            self.kbp.max_rank as f64
                        })
                        .min(TYPICAL_FEATURE_RANK);
                    let store = 4.0 * rank * 4.0;
                    let stores = match self.schedule_for(DenoiseAlgorithm::Kbp) {
                        Schedule::Synchronous => 2.0,
                        _ => 1.0,
                    };
                    need = need.setup_bytes(
                        "kernel-BP templates (set-up)",
                        8.0 * copies_of_templates * 4.0 * 2.0 * 2.0 * train_pixels,
                    );
                    (stores * store + 4.0 * 8.0, store)
                }
            };
            let (engine, store) = bytes_per_pixel;
            need = need
                .bytes(
                    format!("{} messages on the image", choice.label()),
                    engine * pixels,
                )
                .bytes(
                    format!("{} SURE copies and saved messages", choice.label()),
                    (copies * engine + saved * store) * sure_pixels,
                );
            per_pixel += engine
                + if window.is_none() {
                    copies * engine + saved * store
                } else {
                    0.0
                };
        }
        Some(need.per_pixel(w, h, per_pixel))
    }

    /// Fitted to runs on this project's reference machine: kernel BP about 2.9 µs per pixel
    /// per sweep iteration (with SURE's window; 0.25 to 12 MP photographs) and 1.1 µs per
    /// synchronous one (the built-in image), discrete BP about 0.41 ns per pixel and level²
    /// (with SURE's probes); set-up about 0.45 µs per pixel plus the training (0.25 to 12 MP
    /// photographs).
    fn time_need(&self) -> Option<crate::run::time_need::TimeNeed> {
        let (w, h) = self.estimated_size();
        let pixels = (w * h) as f64;
        let c = self.colors as f64;
        let mut choices = vec![self.primary()];
        choices.extend(self.compare);
        let training = if self.loads_image() { 0.7 } else { 0.1 };
        let mut setup = 0.2 + training;
        let mut per_iteration = 0.0;
        for choice in choices {
            per_iteration += match choice.algorithm {
                DenoiseAlgorithm::Discrete => 4.1e-10 * pixels * c * c,
                DenoiseAlgorithm::Kbp => match self.schedule_for(DenoiseAlgorithm::Kbp) {
                    Schedule::Synchronous => 1.1e-6 * pixels,
                    _ if crate::scenarios::denoise::sure_window::SureWindow::of(w, h).is_some() => {
                        0.3 + 2.9e-6 * pixels
                    }
                    _ => 2.9e-6 * pixels,
                },
            };
            setup += 0.45e-6 * pixels;
        }
        // SURE's guard settles a run in 4-22 iterations (photographs and the built-in image):
        // the estimate counts the usual, not the limit.
        let iterations = match self.sure_stop {
            true if self.algorithm == DenoiseAlgorithm::Kbp
                && self.schedule_for(DenoiseAlgorithm::Kbp) == Schedule::Sweep =>
            {
                self.max_iters.min(SURE_TYPICAL_ITERATIONS_PHOTOGRAPH)
            }
            true => self.max_iters.min(SURE_TYPICAL_ITERATIONS),
            false => self.max_iters,
        };
        let need = crate::run::time_need::TimeNeed::scaled(setup, per_iteration, iterations);
        Some(if self.sure_stop || self.tolerance > 0.0 {
            need.stopping_early()
        } else {
            need
        })
    }
}
