//! Long jobs the worker runs on request, beside the running scenario: auto-tune grids and
//! parameter sweeps. A task reports progress and can be cancelled between its steps; the
//! window stays live because it runs on the worker thread.

use std::sync::Arc;

use super::CancelFlag;
use super::denoise::{AutotuneResult, AutotuneSpec, DenoiseConfig, autotune};
use crate::error::Result;

/// A job for the worker.
#[derive(Debug, Clone)]
pub enum Task {
    /// Grid search of kernel-BP λ x bandwidth multiplier for a denoise config.
    DenoiseAutotune {
        config: DenoiseConfig,
        spec: AutotuneSpec,
    },
}

impl Task {
    pub fn label(&self) -> &'static str {
        match self {
            Task::DenoiseAutotune { .. } => "auto-tune",
        }
    }

    /// Runs the task; `progress(done, total)` after each step.
    pub fn run(&self, cancel: &CancelFlag, progress: &dyn Fn(usize, usize)) -> Result<TaskResult> {
        match self {
            Task::DenoiseAutotune { config, spec } => Ok(TaskResult::DenoiseAutotune(Arc::new(
                autotune(config, spec, cancel, progress)?,
            ))),
        }
    }
}

/// What a finished task produced.
#[derive(Debug, Clone)]
pub enum TaskResult {
    DenoiseAutotune(Arc<AutotuneResult>),
}
