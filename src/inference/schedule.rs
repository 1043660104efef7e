//! Update schedules and damping shared by the loopy algorithms. The random order and the
//! residual queue that the serial schedules use live in [`super::schedule_order`].

use serde::{Deserialize, Serialize};

use crate::error::labels::{Labelled, unknown};
use crate::error::{Result, check_range};

/// The order in which messages are recomputed.
/// Parsing also takes `sync`, `sequential` and `rbp` (configs only the names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(strum::VariantArray, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "lowercase", parse_err_ty = String, parse_err_fn = unknown::<Self>)]
pub enum Schedule {
    /// Jacobi: every message is recomputed from the previous iteration's messages (parallel).
    #[default]
    #[strum(to_string = "synchronous", serialize = "sync")]
    Synchronous,
    /// Gauss-Seidel: nodes in id order and then in reverse, each using the freshest messages
    /// (serial; one sweep updates every message twice).
    #[strum(to_string = "sweep", serialize = "sequential")]
    Sweep,
    /// Gauss-Seidel by colour: the nodes of one colour class of a greedy colouring (on a grid
    /// the two colours of a checkerboard, "red-black") send their messages together from the
    /// freshest messages, then the next class. Every message once per iteration; parallel
    /// within a colour where the engine supports it (kernel BP on the grid).
    #[strum(to_string = "checkerboard", serialize = "red-black")]
    Checkerboard,
    /// Every message once per iteration, in a fresh seeded random order, each using the
    /// freshest messages (serial).
    Random,
    /// Residual BP (Elidan, McGraw, Koller 2006): always update the message whose pending
    /// change is largest (a priority queue); one iteration is as many updates as messages.
    #[strum(to_string = "residual", serialize = "rbp")]
    Residual,
}

impl Labelled for Schedule {
    const WHAT: &str = "schedule";
}

impl Schedule {
    pub fn label(self) -> &'static str {
        self.into()
    }
}

/// Damping `d` in `[0, 1)`: `new = d * old + (1 - d) * update`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Damping(pub f64);

impl Damping {
    pub fn check(self) -> Result<Self> {
        check_range("damping", self.0, 0.0, 0.99)?;
        Ok(self)
    }

    /// The damping that takes `scale` times this damping's step towards the update:
    /// `1 - (1 - d) scale` (scale in (0, 1]; a step guard shrinks it, see
    /// `scenarios::denoise::sure_stop`). Not checked against the user range: it may exceed 0.99.
    pub fn with_step_scale(self, scale: f64) -> Damping {
        Damping(1.0 - (1.0 - self.0) * scale)
    }

    /// Mixes `update` into `old` in place.
    pub fn mix(self, old: &mut [f64], update: &[f64]) {
        let d = self.0;
        for (o, u) in old.iter_mut().zip(update) {
            *o = d * *o + (1.0 - d) * u;
        }
    }
}

/// Copies messages saved earlier back over `messages` (a step guard returning to an earlier
/// state), refusing a copy of another length.
pub fn restore_saved(messages: &mut [f64], saved: &[f64]) -> Result<()> {
    if saved.len() != messages.len() {
        return Err(crate::error::Error::param(
            "messages",
            format!("expected {} values, got {}", messages.len(), saved.len()),
        ));
    }
    messages.copy_from_slice(saved);
    Ok(())
}

/// A schedule switch made while a run was going (the debugger's "Switch live"): from iteration
/// `from_iteration` on (the first iteration under it, counted from 1), the run uses `schedule`
/// with `damping`. Configs keep these so the echoed config replays the run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ScheduleChange {
    pub from_iteration: usize,
    pub schedule: Schedule,
    pub damping: f64,
}

impl ScheduleChange {
    /// Checks a list of changes: iterations from 1, strictly increasing, dampings in range.
    pub fn check_all(changes: &[ScheduleChange]) -> Result<()> {
        let mut previous = 0;
        for c in changes {
            if c.from_iteration <= previous {
                return Err(crate::error::Error::param(
                    "schedule_changes",
                    format!(
                        "iterations must start at 1 and increase (got {} after {previous})",
                        c.from_iteration
                    ),
                ));
            }
            previous = c.from_iteration;
            check_range("schedule_changes.damping", c.damping, 0.0, 0.99)?;
        }
        Ok(())
    }

    /// The change that starts at `iteration`, if any.
    pub fn at(changes: &[ScheduleChange], iteration: usize) -> Option<ScheduleChange> {
        changes
            .iter()
            .rev()
            .find(|c| c.from_iteration == iteration)
            .copied()
    }

    /// Records a switch from `iteration` on, replacing one already made there.
    pub fn record(changes: &mut Vec<ScheduleChange>, change: ScheduleChange) {
        changes.retain(|c| c.from_iteration < change.from_iteration);
        changes.push(change);
    }

    /// Records a live switch that takes effect at the iteration after the `done` ones already
    /// run, and returns that iteration (where the caller applies it, as a replay will).
    pub fn record_next(
        changes: &mut Vec<ScheduleChange>,
        done: usize,
        schedule: Schedule,
        damping: f64,
    ) -> usize {
        let from_iteration = done + 1;
        Self::record(
            changes,
            ScheduleChange {
                from_iteration,
                schedule,
                damping,
            },
        );
        from_iteration
    }
}
