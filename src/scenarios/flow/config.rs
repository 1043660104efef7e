//! Every parameter of a flow run, with its checks and the reasons for the defaults.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result, check_positive};
use crate::inference::EstimateKind;
use crate::inference::sosmp::SosmpParams;
use crate::inference::sosmp::basis::MAX_TENSOR_SIDE;
use crate::io::MAX_IMAGE_SIDE;
use crate::model::flow::FlowLabels;
use crate::scenarios::ScenarioParams;
use crate::scenarios::params::{Param, check_table};

/// The tunable numbers of a flow run, described once.
pub const PARAMS: &[Param] = &[
    Param::int("width", "Width", 1.0, MAX_IMAGE_SIDE as f64)
        .unit("pixels")
        .log()
        .help("Width of the built-in pair (8 to 2048); with frames, the frames' width as run."),
    Param::int("height", "Height", 1.0, MAX_IMAGE_SIDE as f64)
        .unit("pixels")
        .log()
        .help("Height of the built-in pair (8 to 2048); with frames, the frames' height as run."),
    Param::int("samples", "Samples k", 1.0, 10_000.0)
        .log()
        .help("Monte Carlo samples per message update."),
    Param::real("step_gamma", "Step γ", 1e-3, 1.999).help(
        "Step size 1 / (γ (t + 1)), γ in (0, 2) (Theorem 2); smaller steps forget the first, poor iterations faster.",
    ),
    Param::real("damping", "Damping", 0.0, 0.99)
        .help("Discrete BP: new = d old + (1 − d) update."),
    Param::int("iters", "Iterations", 1.0, 100_000.0)
        .log()
        .help("Iterations at each pyramid level."),
    Param::int("levels", "Pyramid levels", 1.0, MAX_LEVELS as f64).help(
        "1 = the paper's single level; more levels (beyond the paper) reach motions up to about d · 2^(levels−1).",
    ),
    Param::real("max_displacement", "Max displacement d", 0.25, 64.0)
        .unit("px")
        .help("Displacements x in [−d, d]² around the base flow, at each level."),
    Param::real("sigma_data", "σ data", 1e-6, 1e6)
        .log()
        .unit("gray levels")
        .help("σ_u of the node potential (brightness constancy)."),
    Param::real("sigma_smooth", "σ smooth", 1e-6, 1e6)
        .log()
        .unit("px")
        .help("σ_uv of the Gaussian smoothness prior on neighbouring flows."),
    Param::real("presmooth", "Pre-smoothing", 0.0, 20.0)
        .unit("px")
        .help("Gaussian blur of both frames before matching (0: none)."),
];

/// The algorithms the flow scenario runs on the same MRF.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FlowAlgorithm {
    /// SOSMP with the tensor Fourier basis (Noorshams & Wainwright 2013, Sec. 5.2).
    #[default]
    Sosmp,
    /// Discrete sum-product BP over the displacement lattice (separable Gaussian messages).
    Discrete,
}

impl FlowAlgorithm {
    pub const ALL: [FlowAlgorithm; 2] = [FlowAlgorithm::Sosmp, FlowAlgorithm::Discrete];

    pub fn label(self) -> &'static str {
        match self {
            FlowAlgorithm::Sosmp => "sosmp",
            FlowAlgorithm::Discrete => "discrete",
        }
    }
}

impl std::str::FromStr for FlowAlgorithm {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        FlowAlgorithm::ALL
            .into_iter()
            .find(|a| a.label() == s)
            .ok_or_else(|| format!("unknown algorithm '{s}' for flow (expected sosmp or discrete)"))
    }
}

/// Every parameter of a flow run.
///
/// Defaults (see the scenario's module doc for the measurements behind them): labels on
/// `[-2, 2]²` at 1/2 px (9 x 9 = 81 nodes), a 3-level pyramid (beyond the paper: it reaches
/// motions up to about `d · 2^(L-1)` = 8 px), `σ_u = 2` gray levels, `σ_uv = 0.5` px, no
/// pre-smoothing (the pyramid's 2 x 2 means smooth the coarse levels), SOSMP with `r = 9`
/// (3 x 3), `k = 3` and step `1 / (0.3 (t + 1))`, 40 iterations per level, the belief mean as
/// read-out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FlowConfig {
    /// Frame 1 (any image the `image` crate reads; converted to gray). Without frames: the
    /// built-in synthetic pair.
    pub frame1: Option<PathBuf>,
    pub frame2: Option<PathBuf>,
    /// Ground truth (Middlebury `.flo`, frame 1 -> frame 2), optional with the user's frames.
    pub ground_truth: Option<PathBuf>,
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
    /// Iterations at each pyramid level.
    pub iters: usize,
    /// Half-width d of the displacement window `[-d, d]²`, in pixels (at each level).
    pub max_displacement: f64,
    /// Label lattice nodes per pixel (the step is `1 / subpixel` px).
    pub subpixel: usize,
    /// Pyramid levels (1 = the paper's single level).
    pub levels: usize,
    /// `σ_u` of the node potential, in gray levels (0..255).
    pub sigma_data: f64,
    /// `σ_uv` of the smoothness prior, in pixels (of the level).
    pub sigma_smooth: f64,
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
            width: 128,
            height: 128,
            seed: 0,
            algorithm: FlowAlgorithm::Sosmp,
            compare: None,
            coefficients: 9,
            samples: 3,
            step_gamma: 0.3,
            damping: 0.0,
            iters: 40,
            max_displacement: 2.0,
            subpixel: 2,
            levels: 3,
            sigma_data: 2.0,
            sigma_smooth: 0.5,
            presmooth: 0.0,
            estimate: EstimateKind::Mean,
            snapshots: vec![1, 10, 40],
        }
    }
}

/// Largest side of the built-in pair.
pub const MAX_SYNTHETIC_SIDE: usize = 2048;
/// Largest number of pyramid levels.
pub const MAX_LEVELS: usize = 6;

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

    pub fn labels(&self) -> Result<FlowLabels> {
        FlowLabels::new(self.max_displacement, self.subpixel)
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

    /// Total iterations over all levels.
    pub fn total_iters(&self) -> usize {
        self.iters * self.levels
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

        FlowLabels::new(self.max_displacement, self.subpixel)?;

        check_positive("sigma data", self.sigma_data)?;
        check_positive("sigma smooth", self.sigma_smooth)?;
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
}
