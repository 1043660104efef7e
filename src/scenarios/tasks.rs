//! Long jobs the worker runs on request, beside the running scenario: auto-tune grids and
//! parameter sweeps. A task reports progress and can be cancelled between its steps; the
//! window stays live because it runs on the worker thread.

use std::sync::Arc;

use super::CancelFlag;
use super::denoise::{AutotuneResult, AutotuneSpec, DenoiseConfig, autotune};
use super::sosmp::sweep::SweepProgress;
use super::sosmp::{SosmpConfig, SweepResult, SweepSpec, run_sweep};
use crate::error::Result;

/// A job for the worker.
#[derive(Debug, Clone)]
pub enum Task {
    /// Grid search of kernel-BP λ x bandwidth multiplier for a denoise config.
    DenoiseAutotune {
        config: DenoiseConfig,
        spec: AutotuneSpec,
    },
    /// An SOSMP sweep (Figs. 6-8): the config run once per value; the window overlays the
    /// curves.
    SosmpSweep {
        config: SosmpConfig,
        spec: SweepSpec,
    },
}

impl Task {
    pub fn label(&self) -> &'static str {
        match self {
            Task::DenoiseAutotune { .. } => "auto-tune",
            Task::SosmpSweep { .. } => "sweep",
        }
    }

    /// Runs the task; `progress(done, total)` after each step.
    pub fn run(&self, cancel: &CancelFlag, progress: &dyn Fn(usize, usize)) -> Result<TaskResult> {
        match self {
            Task::DenoiseAutotune { config, spec } => Ok(TaskResult::DenoiseAutotune(Arc::new(
                autotune(config, spec, cancel, progress)?,
            ))),
            Task::SosmpSweep { config, spec } => {
                // Progress in iterations over all runs.
                let total = spec.values.len() * config.iters;
                let mut report = |p: SweepProgress| {
                    if let SweepProgress::Iteration { index, iter, iters } = p {
                        progress(index * iters + iter, total);
                    }
                };
                Ok(TaskResult::SosmpSweep(Arc::new(run_sweep(
                    config,
                    spec,
                    cancel,
                    &mut report,
                )?)))
            }
        }
    }
}

/// What a finished task produced.
#[derive(Debug, Clone)]
pub enum TaskResult {
    DenoiseAutotune(Arc<AutotuneResult>),
    SosmpSweep(Arc<SweepResult>),
}
