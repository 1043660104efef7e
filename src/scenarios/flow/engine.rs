//! The engine of one pyramid level: 2-D SOSMP (Noorshams & Wainwright 2013, Sec. 5.2) or
//! discrete flow BP, behind one [`Inference`]; a live schedule switch reaches discrete BP and is
//! refused by SOSMP with the reason. Cost: that of the engine it forwards to.

use crate::error::{Error, Result};
use crate::inference::flow_bp::FlowBp;
use crate::inference::sosmp::Sosmp;
use crate::inference::sosmp::box_grid::BoxGrid;
use crate::inference::{Belief, Inference, Schedule};

/// An algorithm set up on one level (2-D SOSMP or discrete flow BP), or nothing between two
/// levels.
pub enum FlowEngine {
    /// Coefficients stored as `f32` (f64 arithmetic), the draws not kept.
    Sosmp(Box<Sosmp<BoxGrid, f32>>),
    Discrete(Box<FlowBp>),
    /// Between two levels (nothing to step or read out).
    Vacant,
}

impl FlowEngine {
    /// Switches discrete BP's schedule and damping from its next iteration on (keeping its
    /// messages); SOSMP refuses with the reason ([`crate::inference::sosmp::check_schedule`]).
    pub fn reschedule(&mut self, schedule: Schedule, damping: f64) -> Result<()> {
        match self {
            FlowEngine::Discrete(bp) => bp.set_schedule(schedule, damping),
            FlowEngine::Sosmp(_) => refuse_sosmp_switch(schedule, damping),
            FlowEngine::Vacant => Ok(()),
        }
    }
}

/// SOSMP's answer to a schedule switch: it runs only the synchronous schedule, and its step
/// size `1/(γ(t+1))` is its damping.
pub(super) fn refuse_sosmp_switch(schedule: Schedule, damping: f64) -> Result<()> {
    crate::inference::sosmp::check_schedule(schedule)?;
    Err(Error::param(
        "damping",
        format!(
            "SOSMP has no damping to switch to {damping}: its step size 1/(γ(t+1)) averages the \
             messages, and it runs only the synchronous schedule (switch the discrete-BP run)"
        ),
    ))
}

impl Inference for FlowEngine {
    fn step(&mut self) -> Result<crate::inference::StepReport> {
        match self {
            FlowEngine::Sosmp(e) => e.step(),
            FlowEngine::Discrete(e) => e.step(),
            FlowEngine::Vacant => Err(Error::param("pyramid", "the next level is not set up")),
        }
    }

    fn set_interrupt(&mut self, flag: crate::run::CancelFlag) {
        match self {
            FlowEngine::Sosmp(e) => e.set_interrupt(flag),
            FlowEngine::Discrete(e) => e.set_interrupt(flag),
            FlowEngine::Vacant => {}
        }
    }

    fn iteration(&self) -> usize {
        match self {
            FlowEngine::Sosmp(e) => e.iteration(),
            FlowEngine::Discrete(e) => e.iteration(),
            FlowEngine::Vacant => 0,
        }
    }

    fn belief(&self, node: usize) -> Belief {
        match self {
            FlowEngine::Sosmp(e) => e.belief(node),
            FlowEngine::Discrete(e) => e.belief(node),
            FlowEngine::Vacant => Belief::Grid2 {
                xs: Vec::new(),
                ys: Vec::new(),
                values: Vec::new(),
            },
        }
    }

    fn estimates(&self, kind: crate::inference::EstimateKind) -> crate::inference::Estimates {
        match self {
            FlowEngine::Sosmp(e) => e.estimates(kind),
            FlowEngine::Discrete(e) => e.estimates(kind),
            FlowEngine::Vacant => crate::inference::Estimates {
                dim: 2,
                values: Vec::new(),
            },
        }
    }

    fn fallbacks(&self) -> u64 {
        match self {
            FlowEngine::Sosmp(e) => e.fallbacks(),
            FlowEngine::Discrete(e) => e.fallbacks(),
            FlowEngine::Vacant => 0,
        }
    }

    fn message_changes(&self) -> Option<crate::inference::MessageChanges<'_>> {
        match self {
            FlowEngine::Sosmp(e) => e.message_changes(),
            FlowEngine::Discrete(e) => e.message_changes(),
            FlowEngine::Vacant => None,
        }
    }
}
