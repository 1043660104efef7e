//! Every parameter of a flow run, with its checks and the reasons for the defaults.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::labels::{Labelled, unknown};
use crate::error::{Error, Result, check_positive};
use crate::inference::schedule::ScheduleChange;
use crate::inference::sosmp::SosmpParams;
use crate::inference::sosmp::basis::MAX_TENSOR_SIDE;
use crate::inference::{EstimateKind, Schedule};
use crate::io::MAX_IMAGE_SIDE;
use crate::model::flow::FlowLabels;
use crate::scenarios::ScenarioParams;
use crate::scenarios::params::{Param, check_table, names_of};

/// The tunable numbers of a flow run, described once.
pub const PARAMS: &[Param] = &[
    Param::int("width", "Width", 1.0, MAX_IMAGE_SIDE as f64)
        .slider(32.0, 512.0)
        .unit("pixels")
        .log()
        .help("Width of the built-in pair (8 to 2048); with frames, the frames' width as run."),
    Param::int("height", "Height", 1.0, MAX_IMAGE_SIDE as f64)
        .slider(32.0, 512.0)
        .unit("pixels")
        .log()
        .help("Height of the built-in pair (8 to 2048); with frames, the frames' height as run."),
    Param::int("samples", "Samples k", 1.0, 10_000.0)
        .slider(1.0, 50.0)
        .log()
        .help("Monte Carlo samples per message update."),
    Param::real("step_gamma", "Step γ", 1e-3, 1.999)
        .slider(0.1, 1.9).help(
        "Step size 1 / (γ (t + 1)), γ in (0, 2) (Theorem 2); smaller steps forget the first, poor iterations faster.",
    ),
    Param::real("damping", "Damping", 0.0, 0.99)
        .slider(0.0, 0.9)
        .help("Discrete BP: new = d old + (1 − d) update."),
    Param::int("iters", "Iterations", 1.0, 100_000.0)
        .slider(1.0, 200.0)
        .log()
        .help("Iterations at each pyramid level."),
    Param::int("sosmp_iters", "SOSMP iterations", 0.0, 100_000.0)
        .slider(0.0, 200.0)
        .help("At most this many iterations at each pyramid level for SOSMP (and never more than Iterations), whose flow keeps moving by its Monte Carlo noise so the level stop never ends a level; 0 = Iterations (the presets best and paper set 0). The variational refinement takes the finest level's flow from there."),
    Param::real("stop_change", "Level stop Δflow", 0.0, 10.0)
        .slider(0.0, 0.05)
        .unit("px")
        .help("End a pyramid level early once its flow's mean change over one iteration, in full-resolution pixels (level px x 2^level), is below this (after 5 iterations); 0 = always run every iteration."),
    Param::int("levels", "Pyramid levels", 0.0, MAX_LEVELS as f64)
        .slider(0.0, 6.0).help(
        "0 = from the image size (coarsest level 32 to 64 px on its short side); 1 = the paper's single level; L levels (beyond the paper) reach motions up to about the sum of their windows, each in full-resolution pixels (d_c 2^(L−1) + d (2^(L−1) − 4) + 3 d_r by default).",
    ),
    Param::real("max_displacement", "Max displacement d", 0.25, 64.0)
        .unit("px")
        .help("Displacements x in [−d, d]² around the base flow, in pixels of the level: at the single level without a pyramid, and in a pyramid at the levels between its coarsest (Coarsest window) and its finest (Fine window)."),
    Param::real("coarsest_displacement", "Coarsest window d_c", 0.0, 64.0)
        .unit("px")
        .help("Displacements in [−d_c, d_c]² at the coarsest level of a pyramid, which has no level above to centre its window, so that window alone must hold the motion (a finer level's only holds the error of its hand-off); pixels of that level, 32 to 64 px on its short side by default, so d_c = 4 holds motions up to 1/16 to 1/8 of the frame; 0 = d."),
    Param::real("refine_displacement", "Fine window d_r", 0.0, 64.0)
        .unit("px")
        .help("Displacements in [−d_r, d_r]² around the upsampled flow at the finest levels of a pyramid (Fine levels), which hold 15/16 of the pixels and set time and memory (the coarser levels give the reach; 0 = d; the preset best sets 1.5)."),
    Param::int("fine_levels", "Fine levels", 0.0, MAX_LEVELS as f64)
        .help("The finest this many levels of a pyramid that pass messages search the window d_r (never the coarsest level, which searches d); each starts from the refined flow of the level above, so it only corrects it."),
    Param::int("max_mp_pixels", "Message-passing pixels", 0.0, 1e9)
        .help("Levels of more pixels than this pass no messages: they start from the upsampled flow of the level above and only refine it variationally (as DIS stops its patch search above the finest scale), which bounds time and memory on large frames; the coarsest level always passes messages; 0 = every level (also whenever the refinement is off)."),
    Param::real("sigma_data", "σ data", 1e-6, 1e6)
        .slider(1.0, 50.0)
        .log()
        .unit("gray levels")
        .help("σ_u of the node potential (brightness constancy)."),
    Param::real("sigma_smooth", "σ smooth", 1e-6, 1e6)
        .slider(0.1, 5.0)
        .log()
        .unit("px")
        .help("σ_uv of the Gaussian smoothness prior on neighbouring flows."),
    Param::real("smooth_outlier", "Smoothness outlier ρ", 0.0, 0.5)
        .slider(0.0, 0.2).help(
        "Robust smoothness (1 − ρ) exp(−‖Δflow‖² / 2σ_uv²) + ρ (beyond the paper): a constant floor lets motion boundaries through; 0 is the paper's Gaussian.",
    ),
    Param::real("gradient_weight", "Gradient constancy λ", 0.0, 100.0)
        .slider(0.0, 10.0).help(
        "Data term (I1 − I2)² + λ ‖∇I1 − ∇I2‖² (beyond the paper): the gradient term is unchanged by a brightness change between the frames; 0 is the paper's brightness constancy.",
    ),
    Param::real("census_weight", "Census data term κ", 0.0, 1000.0)
        .slider(0.0, 32.0).help(
        "Data term κ · H(census(I1, p), census(I2, q)) in place of brightness constancy (beyond the paper): the Hamming distance of 5 × 5 ternary census signatures, unchanged by a gain or offset in brightness between the frames; κ in squared gray levels per differing trit; 0 = brightness constancy (the paper's).",
    ),
    Param::int("variational_iters", "Variational refinement", 0.0, 1000.0)
        .slider(0.0, 50.0).help(
        "Fixed-point iterations per warp of a continuous Charbonnier refinement of the finest level's flow (DIS's variational refinement, beyond the paper): sub-pixel flow and sharper motion boundaries; 0 = off (the paper's read-out).",
    ),
    Param::int("variational_warps", "Refinement warps", 1.0, 100.0)
        .slider(1.0, 20.0)
        .help("Times the variational refinement warps frame 2 by its current flow and linearises again (each runs the fixed-point iterations)."),
    Param::int("refine_only_warps", "Refine-only warps", 0.0, 100.0)
        .slider(0.0, 20.0)
        .help("At most this many warps of the refinement at a level that passes no messages (Message-passing pixels), which only corrects the flow handed down to it; 0 = Refinement warps. Past about 4 such a level's flow keeps creeping by more than the warp stop while its error grows (Dimetrodon at 2x)."),
    Param::real("variational_stop_change", "Refinement warp stop", 0.0, 10.0)
        .slider(0.0, 0.1)
        .unit("px")
        .help("The refinement's warps end once one moves the flow by less than this (mean, pixels of the level); 0 runs every warp."),
    Param::real("variational_alpha", "Refinement smoothness α", 0.0, 1000.0)
        .slider(0.0, 100.0)
        .help("Smoothness weight α of the variational refinement (data weight δ = 5)."),
    Param::real("variational_gamma", "Refinement gradient γ", 0.0, 1000.0)
        .slider(0.0, 50.0).help(
        "Gradient-constancy weight γ of the variational refinement (robust to brightness change; 0 = brightness constancy only).",
    ),
    Param::real("variational_zeta", "Refinement ζ", 1e-4, 100.0)
        .slider(0.01, 4.0)
        .help("ζ of the refinement's data-term normalisation 1 / (‖∇I‖² + ζ²), in gray levels per pixel: where a frame's derivatives are below it (their noise), its data terms weigh less and the smoothness fills in."),
    Param::real("presmooth", "Pre-smoothing", 0.0, 20.0)
        .slider(0.0, 3.0)
        .unit("px")
        .help("Gaussian blur of both frames before matching (0: none)."),
    Param::value("frame1", "Frame 1").help(
        "Frame 1 (any image format; converted to gray). Without frames: the built-in pair, with \
         its ground truth.",
    ),
    Param::value("frame2", "Frame 2").help("Frame 2 (any image format; converted to gray)."),
    Param::value("ground_truth", "Ground truth")
        .flag("gt")
        .help("Ground-truth flow, Middlebury .flo (frame 1 -> frame 2): EPE and AAE per iteration."),
    Param::choice("pair", "Built-in pair", names_of::<BuiltinPair>).help(
        "The built-in pair without frames: rotation (a texture rotated and translated, at most \
         about 3 px) or layers (three layers moving 20-30 px over a background, textured and \
         textureless, with occlusions).",
    ),
    Param::value("seed", "Seed").help("Seed of the built-in texture and of SOSMP's samples."),
    Param::choice("algorithm", "Algorithm", names_of::<FlowAlgorithm>).help(
        "sosmp: stochastic orthogonal-series message passing with the 2-D Fourier basis; \
         discrete: sum-product BP over the displacement labels.",
    ),
    Param::choice("compare", "Compare with", names_of::<FlowAlgorithm>)
        .help("Also run the other algorithm on the same frames and MRF (compare mode)."),
    Param::value("coefficients", "Coefficients r").help(
        "SOSMP coefficients per message, r = m × m tensor Fourier functions, a square: 9 \
         (3 × 3, the paper's), 25, 49, ...",
    ),
    Param::value("subpixel", "Labels per px")
        .help("Label lattice nodes per pixel (the step is 1/N px)."),
    Param::switch("refine_every_level", "Refine every level").help(
        "Refine every pyramid level's flow before it centres the next level's windows (as DIS \
         does at every scale); false refines only the finest level's.",
    ),
    Param::switch("median_handoff", "Median hand-off")
        .help("3 × 3 median of each level's flow before it centres the next level's windows."),
    Param::choice("estimate", "Flow read-out", names_of::<EstimateKind>)
        .help("The belief's mean or its most probable label (map)."),
    Param::choice("schedule", "Schedule", names_of::<Schedule>).help(
        "Message schedule (residual: residual BP, Elidan et al. 2006); discrete BP's synchronous \
         schedule is the checkerboard. SOSMP runs only synchronous (refused otherwise).",
    ),
];

/// The built-in pair run without frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(strum::VariantArray, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "lowercase", parse_err_ty = String, parse_err_fn = unknown::<Self>)]
pub enum BuiltinPair {
    /// A texture rotated and translated: at most about 3 px ([`super::synthetic`]).
    #[default]
    Rotation,
    /// A background and three layers moving 20 to 30 px, textured and textureless, with
    /// occlusions ([`super::layers`]).
    Layers,
}

impl Labelled for BuiltinPair {
    const WHAT: &str = "built-in pair";
}

impl BuiltinPair {
    pub fn label(self) -> &'static str {
        self.into()
    }
}

/// The algorithms the flow scenario runs on the same MRF.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(strum::VariantArray, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "lowercase", parse_err_ty = String, parse_err_fn = unknown::<Self>)]
pub enum FlowAlgorithm {
    /// SOSMP with the tensor Fourier basis (Noorshams & Wainwright 2013, Sec. 5.2).
    #[default]
    Sosmp,
    /// Discrete sum-product BP over the displacement lattice (separable Gaussian messages).
    Discrete,
}

impl Labelled for FlowAlgorithm {
    const WHAT: &str = "flow algorithm";
}

impl FlowAlgorithm {
    pub fn label(self) -> &'static str {
        self.into()
    }
}

/// Every parameter of a flow run.
///
/// Defaults (see the scenario's module doc for the measurements behind them): labels on
/// `[-2, 2]²` at 1/2 px (9 x 9 = 81 nodes), the pyramid depth from the image size (beyond the
/// paper: coarsest level 32 to 64 px on its short side, searching `[-4, 4]²`; reach
/// [`FlowConfig::reach`]), `σ_u = 2` gray
/// levels, `σ_uv = 0.5` px, the Gaussian smoothness, no pre-smoothing, SOSMP with `r = 9`
/// (3 x 3), `k = 3` and step `min(1, 1 / (0.3 (t + 1)))`, 40 iterations per level, the belief
/// mean as read-out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FlowConfig {
    /// Frame 1 (any image the `image` crate reads; converted to gray). Without frames: the
    /// built-in synthetic pair.
    pub frame1: Option<PathBuf>,
    pub frame2: Option<PathBuf>,
    /// Ground truth (Middlebury `.flo`, frame 1 -> frame 2), optional with the user's frames.
    pub ground_truth: Option<PathBuf>,
    /// The built-in pair run without frames.
    pub pair: BuiltinPair,
    /// Size of the built-in pair. With frames the scenario echoes the frames' size here (the
    /// files fix it; the fields are then only a record of what ran).
    pub width: usize,
    pub height: usize,
    /// Seed of the built-in texture and of SOSMP's samples.
    pub seed: u64,
    pub algorithm: FlowAlgorithm,
    /// Compare mode: a second algorithm on the same frames and MRF.
    pub compare: Option<FlowAlgorithm>,
    /// SOSMP coefficients per message, r = m² (a square: 9 = 3 x 3 up to 400 = 20 x 20).
    pub coefficients: usize,
    /// SOSMP samples per message update, k.
    pub samples: usize,
    /// γ of SOSMP's step size `1 / (γ (t + 1))`, in (0, 2).
    pub step_gamma: f64,
    /// Discrete BP damping in [0, 0.99].
    pub damping: f64,
    /// Discrete BP's schedule (`synchronous` is the checkerboard); SOSMP runs only
    /// `synchronous`, so other schedules are refused when SOSMP runs.
    pub schedule: Schedule,
    /// Live switches of discrete BP's schedule and damping (the window's debugger), each from
    /// a global iteration on; replayed from the config.
    pub schedule_changes: Vec<ScheduleChange>,
    /// Iterations at each pyramid level (the most, with [`Self::stop_change`]).
    pub iters: usize,
    /// SOSMP's iterations at each level, at most (0: `iters`; never more than `iters`). Its flow moves by its Monte Carlo noise
    /// at every iteration (the step shrinks like `1/t`), so the level stop never ends its
    /// levels and it would run `iters` everywhere.
    pub sosmp_iters: usize,
    /// A level ends once the mean Euclidean change of its flow estimate over one iteration,
    /// in full-resolution pixels (pixels of level `l` times `2^l`, as its errors reach the
    /// finest level), falls below this, after at least [`MIN_LEVEL_ITERS`] iterations; 0 runs
    /// `iters` at every level (beyond the paper, which runs a fixed count).
    pub stop_change: f64,
    /// Half-width d of the displacement window `[-d, d]²`, in pixels of the level: at the
    /// single level without a pyramid, and at the levels of a pyramid between its coarsest
    /// ([`Self::coarsest_displacement`]) and its fine levels ([`Self::refine_displacement`]).
    pub max_displacement: f64,
    /// Half-width `d_c` of the window at the coarsest level of a pyramid, in pixels of that
    /// level (0: `d`). The coarsest level has no level above to centre its window, so its
    /// window alone must hold the motion; a finer level's only holds the error of its hand-off.
    pub coarsest_displacement: f64,
    /// Half-width `d_r` of the window at the [`Self::fine_levels`] finest levels of a pyramid,
    /// around the upsampled flow of the level above (0: `d`). The coarser levels give the
    /// reach, so a fine level only corrects its hand-off, and the two finest levels hold 15/16
    /// of the pixels: their labels set time and memory. (Without the refinement of every
    /// level's flow, a window this small at every finer level was measured worse: a level
    /// cannot undo a coarse error larger than its window.)
    pub refine_displacement: f64,
    /// How many of the finest levels that pass messages search `d_r` (never the coarsest
    /// level).
    pub fine_levels: usize,
    /// Levels of more pixels than this pass no messages and are only refined (see
    /// [`Self::refine_only_levels`]); 0 = no limit.
    pub max_mp_pixels: usize,
    /// Label lattice nodes per pixel (the step is `1 / subpixel` px).
    pub subpixel: usize,
    /// Pyramid levels (1 = the paper's single level; 0 = from the image size, see
    /// [`auto_levels`]).
    pub levels: usize,
    /// `σ_u` of the node potential, in gray levels (0..255).
    pub sigma_data: f64,
    /// `σ_uv` of the smoothness prior, in pixels (of the level).
    pub sigma_smooth: f64,
    /// Outlier weight `ρ` of the robust smoothness `(1 - ρ) g + ρ` (0: the paper's Gaussian).
    pub smooth_outlier: f64,
    /// Weight `λ` of gradient constancy in the data term `(ΔI)² + λ ‖Δ∇I‖²` (0: the paper's
    /// brightness constancy).
    pub gradient_weight: f64,
    /// Weight `κ` of the census data term `κ H(C1, C2)`, which replaces brightness constancy
    /// when positive (0: brightness constancy, the paper's).
    pub census_weight: f64,
    /// Fixed-point iterations of the variational refinement of the finest level's flow
    /// ([`crate::inference::flow_variational`], beyond the paper); 0 = off.
    pub variational_iters: usize,
    /// Times frame 2 is warped again by the refined flow (each warp runs `variational_iters`).
    pub variational_warps: usize,
    /// At most this many warps at a level that passes no messages ([`Self::refine_only_levels`]);
    /// 0 = `variational_warps`.
    pub refine_only_warps: usize,
    /// Its smoothness weight α (brightness-constancy weight δ = 5).
    pub variational_alpha: f64,
    /// Its gradient-constancy weight γ.
    pub variational_gamma: f64,
    /// Its warps end once one moves the flow by less than this (mean, pixels of the level).
    pub variational_stop_change: f64,
    /// ζ of its data-term normalisation `1 / (‖∇I‖² + ζ²)`, gray levels per pixel.
    pub variational_zeta: f64,
    /// Refine every level's flow before it centres the next level's windows (as DIS refines
    /// at every scale), not only the finest level's.
    pub refine_every_level: bool,
    /// Median-filter (3 x 3) each level's flow before it centres the next level's windows.
    pub median_handoff: bool,
    /// Standard deviation of the Gaussian pre-smoothing of both frames (pixels; 0 = none).
    pub presmooth: f64,
    /// Flow read-out: the belief mean or its mode.
    pub estimate: EstimateKind,
    /// Level-local iterations at which the flow is kept for review (the last iteration of each
    /// level is always kept).
    pub snapshots: Vec<usize>,
}

impl Default for FlowConfig {
    fn default() -> Self {
        FlowConfig {
            frame1: None,
            frame2: None,
            ground_truth: None,
            pair: BuiltinPair::Rotation,
            width: 128,
            height: 128,
            seed: 0,
            algorithm: FlowAlgorithm::Sosmp,
            compare: None,
            coefficients: 9,
            samples: 3,
            step_gamma: 0.3,
            damping: 0.0,
            schedule: Schedule::Synchronous,
            schedule_changes: Vec::new(),
            iters: 40,
            sosmp_iters: DEFAULT_SOSMP_ITERS,
            stop_change: DEFAULT_STOP_CHANGE,
            max_displacement: 2.0,
            coarsest_displacement: DEFAULT_COARSEST_DISPLACEMENT,
            refine_displacement: DEFAULT_REFINE_DISPLACEMENT,
            fine_levels: DEFAULT_FINE_LEVELS,
            max_mp_pixels: DEFAULT_MAX_MP_PIXELS,
            subpixel: 2,
            levels: 0,
            sigma_data: 2.0,
            sigma_smooth: 0.5,
            smooth_outlier: 0.0,
            gradient_weight: 0.0,
            census_weight: 0.0,
            variational_iters: DEFAULT_VARIATIONAL_ITERS,
            variational_warps: DEFAULT_VARIATIONAL_WARPS,
            refine_only_warps: DEFAULT_REFINE_ONLY_WARPS,
            variational_alpha: 20.0,
            variational_gamma: 10.0,
            variational_stop_change: DEFAULT_VARIATIONAL_STOP_CHANGE,
            variational_zeta: DEFAULT_VARIATIONAL_ZETA,
            refine_every_level: true,
            median_handoff: true,
            presmooth: 0.0,
            estimate: EstimateKind::Mean,
            snapshots: vec![1, 10, 40],
        }
    }
}

/// Fewest iterations a level runs before [`FlowConfig::stop_change`] may end it: SOSMP's first
/// steps (η = 1 while `1 / (γ (t + 1)) >= 1`) replace its messages outright, so the flow's
/// change over them says nothing about convergence.
pub const MIN_LEVEL_ITERS: usize = 5;

/// The default level stop (full-resolution pixels per iteration).
pub const DEFAULT_STOP_CHANGE: f64 = 0.002;

/// Largest side of the built-in pair.
pub const MAX_SYNTHETIC_SIDE: usize = 2048;
/// Largest number of pyramid levels.
pub const MAX_LEVELS: usize = 6;

/// Fixed-point iterations of the variational refinement by default (and in `best`).
pub const DEFAULT_VARIATIONAL_ITERS: usize = 5;

/// Warps of the variational refinement by default.
pub const DEFAULT_VARIATIONAL_WARPS: usize = 10;

/// Warps of the refinement at a level that passes no messages by default. Such a level only
/// corrects the refined flow of the level above, brought to twice its resolution; there the
/// energy keeps falling past the fourth warp while the error grows (each warp moving the flow
/// by more than the warp stop: Dimetrodon at 2x ran 8 warps, 0.186 -> 0.225 px with SOSMP),
/// where RubberWhale at 2x and 3x stop by themselves after 4 (docs/flow.md has the trade on
/// every large pair).
pub const DEFAULT_REFINE_ONLY_WARPS: usize = 4;

/// The named presets of [`FlowConfig::with_preset`].
pub const PRESETS: [&str; 3] = ["paper", "default", "best"];

/// SOSMP's iterations per level by default (`sosmp_iters`; the `best` and `paper` presets run
/// `iters`). Its flow moves by its Monte Carlo noise at every iteration, so the level stop never
/// ends a level; measured EPE at 4 / 6 / 8 / 10 / 12 a level (RubberWhale 0.208 / 0.178 / 0.171
/// / 0.176 / 0.171, Dimetrodon 0.293 / 0.265 / 0.245 / 0.251 / 0.248, the built-in pair and a
/// synthetic one the same or better at 8 than at 12) levels off by 8 (README).
pub const DEFAULT_SOSMP_ITERS: usize = 8;

/// The fine levels' window `d_r` by default (25 labels at 1/2 px); the `best` preset's is
/// [`BEST_REFINE_DISPLACEMENT`].
pub const DEFAULT_REFINE_DISPLACEMENT: f64 = 1.0;

/// The coarsest level's window `d_c` by default, pixels of that level (17 x 17 = 289 labels at
/// 1/2 px): twice `d`, the window of the levels that correct a hand-off. The coarsest level is
/// 32 to 64 px on its short side ([`auto_levels`]), so it holds motions up to 1/16 to 1/8 of
/// the frame (32 px on a 640 x 480 frame, against 16 px with `d`). Measured on the street and
/// layered pairs with 3 and 4 (docs/flow.md); it costs the coarsest level, 1/64 of the pixels
/// of a 4-level pyramid, 6 times the work per message of `d`.
pub const DEFAULT_COARSEST_DISPLACEMENT: f64 = 4.0;

/// Levels that search the window `d_r` by default: the two finest (15/16 of the pixels).
pub const DEFAULT_FINE_LEVELS: usize = 2;

/// The refinement's warp stop by default, pixels: a warp that moves the flow by less than
/// 0.01 px on average ends it (at most [`DEFAULT_VARIATIONAL_WARPS`]). Measured on RubberWhale
/// at 1x and 2x: 25 % less time for 0.004 and 0.009 px of EPE (docs/flow.md).
pub const DEFAULT_VARIATIONAL_STOP_CHANGE: f64 = 0.01;

/// The refinement's ζ by default, gray levels per pixel.
pub const DEFAULT_VARIATIONAL_ZETA: f64 = 0.05;

/// The most pixels of a level that passes messages by default, 2^18 (a 512 x 512 level): the
/// Middlebury frames (584 x 388) pass messages at every level, a 1 MP frame at all but the
/// finest, which is only refined (its message passing took 3/4 of the time and memory, and the
/// refined hand-off alone was better: RubberWhale at 2x, EPE 0.156 against 0.171; see
/// docs/flow.md).
pub const DEFAULT_MAX_MP_PIXELS: usize = 1 << 18;

/// The fine levels' window of the `best` preset (49 labels).
pub const BEST_REFINE_DISPLACEMENT: f64 = 1.5;

/// The census weight `κ` that `--data-term census` sets (squared gray levels per differing
/// trit: with `σ_u = 2`, one differing trit costs `κ / 8` nats).
pub const DEFAULT_CENSUS_WEIGHT: f64 = 8.0;

/// The outlier weight of the `best` preset.
pub const BEST_SMOOTH_OUTLIER: f64 = 0.002;

/// Largest short side of the coarsest level chosen by [`auto_levels`].
pub const COARSEST_SIDE: usize = 64;

/// Pyramid levels for `width x height` frames: halve until the short side is at most
/// [`COARSEST_SIDE`] px (so the coarsest level is 32 to 64 px on its short side, or the frame
/// itself when it is smaller), at most [`MAX_LEVELS`].
pub fn auto_levels(width: usize, height: usize) -> usize {
    let mut side = width.min(height).max(1);
    let mut levels = 1;
    while side > COARSEST_SIDE && levels < MAX_LEVELS {
        side = side.div_ceil(2);
        levels += 1;
    }
    levels
}

impl FlowConfig {
    /// Functions per axis of the tensor basis, `√r`. Errors unless r is a square in 1..=400.
    pub fn side(&self) -> Result<usize> {
        let m = (self.coefficients as f64).sqrt().round() as usize;
        if m * m != self.coefficients || m == 0 || m > MAX_TENSOR_SIDE {
            return Err(Error::param(
                "coefficients",
                format!(
                    "must be a square m x m (9, 16, 25, 36, 49, ... up to {}), got {}",
                    MAX_TENSOR_SIDE * MAX_TENSOR_SIDE,
                    self.coefficients
                ),
            ));
        }
        Ok(m)
    }

    /// The label lattice of the coarsest level (the only one without a pyramid).
    pub fn labels(&self) -> Result<FlowLabels> {
        FlowLabels::new(self.max_displacement, self.subpixel)
    }

    /// How many of the finest of `levels` levels on frames of `width x height` pass no
    /// messages: those of more than [`Self::max_mp_pixels`] pixels, never the coarsest, and
    /// none when the variational refinement is off (it is all such a level does).
    pub fn refine_only_levels(&self, width: usize, height: usize, levels: usize) -> usize {
        if self.variational_iters == 0 || self.max_mp_pixels == 0 {
            return 0;
        }
        let (mut w, mut h, mut skipped) = (width.max(1), height.max(1), 0);
        while skipped + 1 < levels && w * h > self.max_mp_pixels {
            (w, h) = (w.div_ceil(2), h.div_ceil(2));
            skipped += 1;
        }
        skipped
    }

    /// True when `level` of `levels` (0 = finest) passes messages on this config's frames
    /// ([`Self::width`] x [`Self::height`]).
    pub fn passes_messages(&self, level: usize, levels: usize) -> bool {
        level >= self.refine_only_levels(self.width, self.height, levels)
    }

    /// The window half-width at `level` of `levels` (0 = finest): `d_c` at the coarsest level of
    /// a pyramid (`d` when `d_c = 0`), `d_r` at the [`Self::fine_levels`] finest levels of a
    /// pyramid that pass messages but never at its coarsest (`d` when `d_r = 0`), `d` at every
    /// other level and without a pyramid; 0 at a level that passes no messages.
    pub fn displacement_at(&self, level: usize, levels: usize) -> f64 {
        let skipped = self.refine_only_levels(self.width, self.height, levels);
        if level < skipped {
            return 0.0;
        }
        if levels > 1 && level + 1 == levels && self.coarsest_displacement > 0.0 {
            return self.coarsest_displacement;
        }
        let fine = level < skipped + self.fine_levels && level + 1 < levels;
        if !fine || self.refine_displacement == 0.0 {
            self.max_displacement
        } else {
            self.refine_displacement
        }
    }

    /// The label lattice at `level` of `levels` (0 = finest).
    pub fn labels_at(&self, level: usize, levels: usize) -> Result<FlowLabels> {
        FlowLabels::new(self.displacement_at(level, levels), self.subpixel)
    }

    /// The largest motion `levels` levels can follow, in full-resolution pixels: each level's
    /// window in its own pixels (`d_c 2^(L-1) + d (2^(L-1) - 4) + 3 d_r` with the coarsest level
    /// at `d_c` and the two finest at `d_r`; a
    /// level that passes no messages adds nothing).
    pub fn reach(&self, levels: usize) -> f64 {
        (0..levels.max(1))
            .map(|l| self.displacement_at(l, levels.max(1)) * (1usize << l) as f64)
            .sum()
    }

    /// SOSMP's run parameters (one sample path).
    pub fn sosmp_params(&self) -> SosmpParams {
        SosmpParams {
            samples: self.samples,
            paths: 1,
            step_gamma: self.step_gamma,
            seed: self.seed,
        }
    }

    /// The algorithms run: the primary one, then the compared one.
    pub fn algorithms(&self) -> Vec<FlowAlgorithm> {
        std::iter::once(self.algorithm)
            .chain(self.compare)
            .collect()
    }

    /// The number of pyramid levels that runs on `width x height` frames: `levels`, or
    /// [`auto_levels`] when it is 0.
    pub fn levels_for(&self, width: usize, height: usize) -> usize {
        if self.levels == 0 {
            auto_levels(width, height)
        } else {
            self.levels
        }
    }

    /// Discrete BP's schedule and damping at global iteration `iteration` (after the switches
    /// in [`Self::schedule_changes`] made by then).
    pub fn schedule_at(&self, iteration: usize) -> (Schedule, f64) {
        self.schedule_changes
            .iter()
            .rev()
            .find(|c| c.from_iteration <= iteration)
            .map_or((self.schedule, self.damping), |c| (c.schedule, c.damping))
    }

    /// The variational refinement's settings.
    pub fn variational(&self) -> crate::inference::flow_variational::VariationalParams {
        crate::inference::flow_variational::VariationalParams {
            warps: self.variational_warps,
            iterations: self.variational_iters,
            alpha: self.variational_alpha,
            gamma: self.variational_gamma,
            warp_tolerance: self.variational_stop_change,
            zeta: self.variational_zeta,
            // With the census data term the frames may differ in brightness: the refinement
            // keeps only its gradient-constancy term then.
            delta: if self.census_weight > 0.0 {
                0.0
            } else {
                crate::inference::flow_variational::VariationalParams::default().delta
            },
            ..Default::default()
        }
    }

    /// The refinement's settings at `level` of `levels` (0 = finest). A level that passes no
    /// messages has `2^k` times smaller pixels than the finest level that does (`k` levels
    /// below it), so the same flow error is `2^k` times more of its pixels: its normalised
    /// data terms grow against the smoothness, whose flow gradient is the same at every
    /// scale, and with the same `α` it fitted the frames' noise (Dimetrodon at 2x: 0.225 ->
    /// 0.280 px). Its `α` is scaled by `√2^k`: the full ratio `2^k` smoothed RubberWhale's
    /// motion boundaries at 3x (docs/flow.md).
    pub fn variational_at(
        &self,
        level: usize,
        levels: usize,
    ) -> crate::inference::flow_variational::VariationalParams {
        let mut p = self.variational();
        let skipped = self.refine_only_levels(self.width, self.height, levels);
        if level < skipped {
            p.alpha *= std::f64::consts::SQRT_2.powi((skipped - level) as i32);
            if self.refine_only_warps > 0 {
                p.warps = p.warps.min(self.refine_only_warps);
            }
        }
        p
    }

    /// True when the flow of `level` (0 = finest) is refined at the end of the level: the
    /// finest level's whenever the refinement is on, the others' with
    /// [`Self::refine_every_level`].
    pub fn refines_level(&self, level: usize) -> bool {
        self.variational_iters > 0 && (level == 0 || self.refine_every_level)
    }

    /// Total iterations over all levels (at the size in `width` x `height`, which the scenario
    /// sets to the frames' size).
    pub fn total_iters(&self) -> usize {
        let most = self
            .algorithms()
            .iter()
            .map(|&a| self.iters_for(a))
            .max()
            .unwrap_or(self.iters);
        most * self.levels_for(self.width, self.height)
    }

    /// The most iterations per level `algorithm` runs: `iters`, and for SOSMP at most
    /// `sosmp_iters` (when not 0).
    pub fn iters_for(&self, algorithm: FlowAlgorithm) -> usize {
        match algorithm {
            FlowAlgorithm::Sosmp if self.sosmp_iters > 0 => self.iters.min(self.sosmp_iters),
            _ => self.iters,
        }
    }

    /// A named bundle of settings over this config (the data fields are kept):
    /// * `paper`: Noorshams & Wainwright's setting, one level, step `1/(t+1)` (γ = 1), the
    ///   Gaussian smoothness and the brightness-constancy data term, every iteration run;
    /// * `default`: the defaults (pyramid depth from the image size, levels end once their
    ///   flow settles);
    /// * `best`: the defaults with the robust smoothness, the census data term, the wider
    ///   finest window, every iteration of every level (SOSMP's too), every warp of the refinement
    ///   and message passing at every level.
    ///
    /// Errors on another name.
    pub fn with_preset(&self, name: &str) -> Result<FlowConfig> {
        let d = FlowConfig::default();
        let mut c = FlowConfig {
            frame1: self.frame1.clone(),
            frame2: self.frame2.clone(),
            ground_truth: self.ground_truth.clone(),
            pair: self.pair,
            width: self.width,
            height: self.height,
            seed: self.seed,
            algorithm: self.algorithm,
            compare: self.compare,
            snapshots: self.snapshots.clone(),
            ..d
        };
        match name {
            "default" => {}
            "paper" => {
                c.levels = 1;
                c.refine_displacement = 0.0;
                c.step_gamma = 1.0;
                c.smooth_outlier = 0.0;
                c.gradient_weight = 0.0;
                c.census_weight = 0.0;
                c.sosmp_iters = 0;
                c.stop_change = 0.0;
                c.variational_iters = 0;
            }
            "best" => {
                c.smooth_outlier = BEST_SMOOTH_OUTLIER;
                c.refine_displacement = BEST_REFINE_DISPLACEMENT;
                c.census_weight = DEFAULT_CENSUS_WEIGHT;
                c.sosmp_iters = 0;
                c.stop_change = 0.0;
                c.max_mp_pixels = 0;
                c.variational_stop_change = 0.0;
            }
            other => {
                return Err(Error::param(
                    "preset",
                    format!("unknown preset '{other}' (expected {})", PRESETS.join(", ")),
                ));
            }
        }
        Ok(c)
    }
}

impl ScenarioParams for FlowConfig {
    const PARAMS: &'static [Param] = PARAMS;

    /// Checks every parameter (files are checked when loaded).
    fn check(&self) -> Result<()> {
        if self.frame1.is_some() != self.frame2.is_some() {
            return Err(Error::param(
                "frames",
                "give both frames (--frame1 and --frame2) or neither",
            ));
        }
        if self.ground_truth.is_some() && self.frame1.is_none() {
            return Err(Error::param(
                "ground truth",
                "a .flo file goes with the user's frames; the built-in pair has its own",
            ));
        }
        check_table(self, PARAMS)?;
        if self.frame1.is_none() {
            for (name, side) in [("width", self.width), ("height", self.height)] {
                if !(8..=MAX_SYNTHETIC_SIDE).contains(&side) {
                    return Err(Error::param(
                        name,
                        format!(
                            "the built-in pair is 8 to {MAX_SYNTHETIC_SIDE} pixels on a side, got {side}"
                        ),
                    ));
                }
            }
        }
        self.side()?;
        self.sosmp_params().check()?;
        if self.algorithm == FlowAlgorithm::Sosmp || self.compare == Some(FlowAlgorithm::Sosmp) {
            crate::inference::sosmp::check_schedule(self.schedule)?;
            if !self.schedule_changes.is_empty() {
                return Err(Error::param(
                    "schedule_changes",
                    "SOSMP runs only the synchronous schedule with its step size; schedule switches apply to discrete BP alone",
                ));
            }
        }
        ScheduleChange::check_all(&self.schedule_changes)?;

        FlowLabels::new(self.max_displacement, self.subpixel)?;
        if self.refine_displacement > 0.0 {
            FlowLabels::new(self.refine_displacement, self.subpixel)?;
        }
        if self.coarsest_displacement > 0.0 {
            FlowLabels::new(self.coarsest_displacement, self.subpixel)?;
        }

        self.variational().check()?;
        check_positive("sigma data", self.sigma_data)?;
        check_positive("sigma smooth", self.sigma_smooth)?;
        if !(0.0..=0.5).contains(&self.smooth_outlier) {
            return Err(Error::param(
                "smooth_outlier",
                format!("must be in [0, 0.5], got {}", self.smooth_outlier),
            ));
        }
        if self.compare == Some(self.algorithm) {
            return Err(Error::param(
                "compare",
                format!(
                    "compare with the other algorithm, not {} itself",
                    self.algorithm.label()
                ),
            ));
        }
        Ok(())
    }

    fn memory_need(&self) -> Option<crate::run::budget::MemoryNeed> {
        super::memory::flow_memory_need(self)
    }

    fn time_need(&self) -> Option<crate::run::time_need::TimeNeed> {
        Some(super::memory::flow_time_need(self))
    }
}
