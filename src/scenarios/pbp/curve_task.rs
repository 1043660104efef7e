//! The pendigits accuracy curve (Wang & Gordon 2020, Sec. 6, Fig. 7) as a job of the worker:
//! [`CurveTask`] runs [`pendigits::curve`] with the sweep's sizes and seeds
//! ([`pendigits::DEFAULT_SIZES`], [`pendigits::DEFAULT_SEEDS`]) and the model settings of the
//! run on screen, reporting progress per (size, seed) and stopping on cancel; [`read_curve`]
//! reads a sweep's pendigits.json back. Cost: that of `sweep pbp --model pendigits`, one PBP
//! and one EM-HMM fit per size and seed.

use std::path::{Path, PathBuf};

use super::config::PbpConfig;
use super::pendigits::{self, PendigitsArgs, PendigitsReport};
use crate::error::{Error, Result};
use crate::run::CancelFlag;
use crate::scenarios::ScenarioTask;

/// Largest pendigits.json read (the default sweep writes about 8 KB).
pub const MAX_CURVE_FILE_BYTES: u64 = 4 << 20;

/// The job's label (in the status bar and the room's progress bar).
pub const LABEL: &str = "accuracy over N";

/// The accuracy-over-N sweep run on the worker.
#[derive(Debug, Clone)]
pub struct CurveTask {
    pub args: PendigitsArgs,
}

impl CurveTask {
    /// The sweep's defaults with the model settings of `config` (states, σ, D_f, λ₁, EM
    /// restarts, the data folder), so the curve is of the model on screen.
    pub fn for_config(config: &PbpConfig) -> CurveTask {
        CurveTask {
            args: PendigitsArgs {
                states: config.states,
                sigma: config.sigma,
                dim: config.feature_dim,
                lambda: config.lambda1,
                restarts: config.em_restarts,
                data: (!config.data_dir.is_empty()).then(|| PathBuf::from(&config.data_dir)),
                ..PendigitsArgs::default()
            },
        }
    }

    /// The command line that computes the same curve headless.
    pub fn command_line(&self) -> String {
        let a = &self.args;
        let sizes: Vec<String> = a.sizes.iter().map(|n| n.to_string()).collect();
        format!(
            "beliefscope sweep pbp --model pendigits --samples {} --seeds {} --first-seed {} \
             --states {} --sigma {} --dim {} --lambda {} --restarts {} --out DIR",
            sizes.join(","),
            a.seeds,
            a.first_seed,
            a.states,
            a.sigma,
            a.dim,
            a.lambda,
            a.restarts
        )
    }
}

impl ScenarioTask for CurveTask {
    type Output = PendigitsReport;

    fn label(&self) -> &'static str {
        LABEL
    }

    /// Progress in (size, seed) pairs.
    fn run(&self, cancel: &CancelFlag, progress: &dyn Fn(usize, usize)) -> Result<PendigitsReport> {
        pendigits::curve(&self.args, cancel, progress).map(|(report, _)| report)
    }
}

/// Reads a pendigits.json written by `sweep pbp --model pendigits`, refusing one without both
/// curves, with a size below 1 or an accuracy outside [0, 1].
pub fn read_curve(path: &Path) -> Result<PendigitsReport> {
    let meta = std::fs::metadata(path)
        .map_err(|e| Error::Io(format!("cannot read {}: {e}", path.display())))?;
    if meta.len() > MAX_CURVE_FILE_BYTES {
        return Err(Error::Io(format!(
            "{} is {} bytes; at most {MAX_CURVE_FILE_BYTES} are read",
            path.display(),
            meta.len()
        )));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Io(format!("cannot read {}: {e}", path.display())))?;
    let report: PendigitsReport = serde_json::from_str(&text).map_err(|e| {
        Error::Io(format!(
            "{}: not a pendigits.json of `sweep pbp --model pendigits` ({e})",
            path.display()
        ))
    })?;
    check_curve(&report).map_err(|e| Error::Io(format!("{}: {e}", path.display())))?;
    Ok(report)
}

/// The curve is drawable: both methods have points, every size is positive and every
/// accuracy lies in [0, 1].
pub fn check_curve(report: &PendigitsReport) -> std::result::Result<(), String> {
    for (name, points) in [("pbp", &report.pbp), ("em_hmm", &report.em_hmm)] {
        if points.is_empty() {
            return Err(format!("no {name} points"));
        }
        for p in points {
            if p.n == 0 {
                return Err(format!("{name}: training size 0"));
            }
            let all = [p.mean, p.min, p.max].into_iter().chain(p.per_seed.clone());
            if let Some(bad) = all.into_iter().find(|a| !(0.0..=1.0).contains(a)) {
                return Err(format!(
                    "{name} at N = {}: accuracy {bad} outside [0, 1]",
                    p.n
                ));
            }
        }
    }
    Ok(())
}
