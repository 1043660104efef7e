//! Flow's what-if run: discrete flow BP continued from the current pyramid level's
//! current messages on a copy of the engine, with another schedule or damping, for at most the
//! level's iteration budget (a what-if stays on its level: the hand-off to the next level is
//! the run's own). Its residuals are numbered in the run's global iterations so the window
//! overlays them on the residual curve. SOSMP cannot take part: it runs only the synchronous
//! schedule and its step size 1/(γ(t+1)) is its damping, so any other schedule or damping would
//! not be SOSMP (the refusal says so). Cost: one copy of the level's messages (at RubberWhale's
//! finest level, 49 labels, about 0.4 GB) and up to `iters` iterations of the level.

use crate::error::{Error, Result};
use crate::inference::Damping;
use crate::inference::Schedule;
use crate::inference::flow_bp::FlowBp;
use crate::run::CancelFlag;
use crate::scenarios::what_if::{Reschedulable, WhatIfRequest, WhatIfRun, run_what_if};

use super::engine::FlowEngine;

impl Reschedulable for FlowBp {
    fn boxed_copy(&self) -> Box<dyn Reschedulable> {
        Box::new(self.clone())
    }

    fn reschedule(&mut self, schedule: Schedule, damping: Damping) -> Result<()> {
        self.set_schedule(schedule, damping.0)
    }
}

/// Runs `request` from `engine`'s current messages; `level_start` is the run's global
/// iteration before the level's first (so a level iteration `k` is global `level_start + k`)
/// and `level_iters` the level's budget.
pub fn flow_what_if(
    engine: &FlowEngine,
    mut request: WhatIfRequest,
    level_start: usize,
    level_iters: usize,
    cancel: &CancelFlag,
) -> Result<WhatIfRun> {
    let bp = match engine {
        FlowEngine::Discrete(bp) => bp,
        FlowEngine::Sosmp(_) => {
            return Err(Error::Other(
                "SOSMP has no what-if runs: it runs only the synchronous schedule and its step \
                 size 1/(γ(t+1)) is its damping, so another schedule or damping would not be \
                 SOSMP (run discrete BP, or compare with it)"
                    .into(),
            ));
        }
        FlowEngine::Vacant => {
            return Err(Error::Other(
                "no level is running yet: try the what-if once the next level has started".into(),
            ));
        }
    };
    request.iterations = request.iterations.min(level_iters.max(1));
    let mut run = run_what_if(bp.as_ref(), request, cancel)?;
    run.start_iteration += level_start;
    for point in &mut run.residuals {
        point.0 += level_start;
    }
    Ok(run)
}
