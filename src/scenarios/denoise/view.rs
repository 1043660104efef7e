//! What the denoise views draw: produced on the worker, sent inside snapshots.

use std::sync::Arc;

use crate::inference::Belief;
use crate::inference::kbp::KbpDiagnostics;

/// Kernel-BP curves at a probed pixel over the gray levels, each scaled so its largest
/// |value| is 1 (only shapes matter; negative lobes are kept as they are).
#[derive(Debug, Clone)]
pub struct KbpProbe {
    pub xs: Vec<f64>,
    /// `B(x) = P(x) m_obs(x) Π_u m_us(x)`.
    pub belief: Vec<f64>,
    /// The Parzen prior P(x) of the clean training pixels.
    pub prior: Vec<f64>,
    /// The learned evidence message m_obs(x).
    pub evidence: Vec<f64>,
    /// Incoming messages m_us(x), with the sender's pixel (x, y).
    pub incoming: Vec<((usize, usize), Vec<f64>)>,
}

/// A pixel under the probe.
#[derive(Debug, Clone)]
pub struct PixelProbe {
    pub x: usize,
    pub y: usize,
    pub clean: f64,
    pub noisy: f64,
    pub estimate: f64,
    /// The primary algorithm's belief (discrete: probabilities over the levels; kernel BP: the
    /// belief at its candidate values).
    pub belief: Belief,
    /// Kernel-BP curves, when the primary algorithm is kernel BP.
    pub kbp: Option<KbpProbe>,
}

/// Kernel-BP read-outs for the kernel panel.
#[derive(Debug, Clone)]
pub struct KbpInfo {
    pub update: String,
    pub sigma_hidden: f64,
    pub sigma_observed: f64,
    pub lambda: f64,
    pub diagnostics: KbpDiagnostics,
    pub setup_seconds: f64,
}

/// The second algorithm of compare mode.
#[derive(Debug, Clone)]
pub struct CompareView {
    pub label: String,
    pub estimate: Arc<Vec<f64>>,
    pub rmse: f64,
    /// The iteration a stopping rule kept (see [`DenoiseView::kept`]).
    pub kept: Option<KeptIterate>,
}

/// Which iterate a stopping rule kept, shown beside the estimate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KeptIterate {
    pub iteration: usize,
    /// True: Monte-Carlo SURE; false: the discrepancy principle.
    pub by_sure: bool,
    /// The SURE guard settled the messages there and the run goes on from them, so the shown
    /// estimate is the run's own (no "kept" in the image titles).
    pub guarded: bool,
}

impl KeptIterate {
    pub fn label(&self) -> String {
        let rule = if self.by_sure {
            "lowest SURE"
        } else {
            "discrepancy"
        };
        format!("kept iteration {} ({rule})", self.iteration)
    }
}

/// What the denoise views draw.
#[derive(Debug, Clone)]
pub struct DenoiseView {
    pub width: usize,
    pub height: usize,
    pub levels: Arc<Vec<f64>>,
    pub clean: Arc<Vec<f64>>,
    pub noisy: Arc<Vec<f64>>,
    /// The primary algorithm's estimate.
    pub estimate: Arc<Vec<f64>>,
    /// NaN (with `no_clean` set) for a noisy image with no clean version.
    pub noisy_rmse: f64,
    pub rmse: f64,
    /// For a noisy image with no clean version (`clean` then holds the noisy image): what to
    /// show where the RMSE would be.
    pub no_clean: Option<String>,
    /// What the potentials were learned from.
    pub training: String,
    /// Reference baselines (not message passing): (label, RMSE).
    pub baselines: Vec<(String, f64)>,
    /// Label of the primary algorithm (e.g. "kbp-constant").
    pub label: String,
    pub compare: Option<CompareView>,
    /// The iteration a stopping rule kept for the primary algorithm, once it stopped.
    pub kept: Option<KeptIterate>,
    /// Once SURE's guard has settled the primary algorithm: where and why, for the status bar.
    pub settled: Option<String>,
    pub kbp: Option<KbpInfo>,
    pub probe: Option<PixelProbe>,
}
