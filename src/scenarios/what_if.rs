//! "What if": the running problem continued from its current messages with another schedule
//! or damping, on a copy of the engine, so the window can overlay the two residual curves and
//! say, from the measurement, what would converge ("with damping 0.5 the residual falls below
//! 1e-6 in 37 iterations"). Cost: `iterations` iterations of the chosen schedule plus one copy
//! of the engine's messages.

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::inference::{Damping, Inference, Schedule};
use crate::run::CancelFlag;

/// What to try.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WhatIfRequest {
    pub schedule: Schedule,
    pub damping: f64,
    /// Iterations to run at most.
    pub iterations: usize,
    /// Stop once the residual falls below this.
    pub tolerance: f64,
}

/// What was measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WhatIfRun {
    pub request: WhatIfRequest,
    /// The iteration of the main run the copy started from.
    pub start_iteration: usize,
    /// (main-run iteration number, residual) per iteration of the copy.
    pub residuals: Vec<(usize, f64)>,
    /// Iterations the copy needed to fall below the tolerance, if it did.
    pub converged_after: Option<usize>,
    pub seconds: f64,
}

impl WhatIfRun {
    /// One sentence saying what was measured.
    pub fn hint(&self) -> String {
        let r = &self.request;
        let how = format!(
            "with the {} schedule and damping {}",
            r.schedule.label(),
            r.damping
        );
        match self.converged_after {
            Some(n) => format!(
                "{how} the residual falls below {:.0e} in {n} iterations (measured from iteration {})",
                r.tolerance, self.start_iteration
            ),
            None => format!(
                "{how} the residual stays above {:.0e} for {} iterations (last {:.2e}; measured from iteration {})",
                r.tolerance,
                self.residuals.len(),
                self.residuals.last().map_or(f64::NAN, |p| p.1),
                self.start_iteration
            ),
        }
    }
}

/// Engines the what-if can copy and re-schedule.
pub trait Reschedulable: Inference {
    /// A copy with the same messages.
    fn boxed_copy(&self) -> Box<dyn Reschedulable>;
    /// Switches schedule and damping from the next iteration on, keeping the messages.
    fn reschedule(&mut self, schedule: Schedule, damping: Damping) -> Result<()>;
}

/// Runs `request` on a copy of `engine` (the running engine is untouched).
pub fn run_what_if(
    engine: &dyn Reschedulable,
    request: WhatIfRequest,
    cancel: &CancelFlag,
) -> Result<WhatIfRun> {
    let start = std::time::Instant::now();
    let mut copy = engine.boxed_copy();
    copy.reschedule(request.schedule, Damping(request.damping))?;
    let start_iteration = copy.iteration();
    let mut residuals = Vec::with_capacity(request.iterations);
    let mut converged_after = None;
    for k in 1..=request.iterations {
        cancel.check()?;
        let report = copy.step()?;
        residuals.push((report.iteration, report.residual));
        if report.residual < request.tolerance {
            converged_after = Some(k);
            break;
        }
    }
    Ok(WhatIfRun {
        request,
        start_iteration,
        residuals,
        converged_after,
        seconds: start.elapsed().as_secs_f64(),
    })
}

impl Reschedulable for crate::inference::discrete::DiscreteBp {
    fn boxed_copy(&self) -> Box<dyn Reschedulable> {
        Box::new(self.clone())
    }
    fn reschedule(&mut self, schedule: Schedule, damping: Damping) -> Result<()> {
        self.set_schedule(schedule, damping)
    }
}

impl Reschedulable for crate::inference::kbp::KbpEngine {
    fn boxed_copy(&self) -> Box<dyn Reschedulable> {
        Box::new(self.clone())
    }
    fn reschedule(&mut self, schedule: Schedule, damping: Damping) -> Result<()> {
        self.set_schedule(schedule, damping)
    }
}
