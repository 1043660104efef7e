//! Kernel BP's serial schedules beside the synchronous and sweep ones, and the per-message
//! change record of every schedule (for the convergence debugger).
//!
//! * Random: the nodes in a seeded random order per iteration; each node sends all its
//!   messages from the freshest ones (a node's messages share one leave-one-out pass, so the
//!   order is over senders, as in the sweep).
//! * Residual BP (Elidan, McGraw, Koller 2006, Sec. 3): every message's pending update (the
//!   undamped, normalised, oriented coefficients) and its distance `||c_pending - c||` sit in a
//!   priority queue; the largest is committed (damped), then the receiver's outgoing messages
//!   that read it are recomputed (one node update, O(class cost · degree)). One iteration is as
//!   many commits as messages. Reported residual: the largest pending distance times `1 - d`,
//!   about the change the next commit would make.

use rayon::prelude::*;

use super::{KbpEngine, NodeScratch, mix_normalised};
use crate::error::Result;
use crate::inference::schedule_order::{ResidualQueue, random_order};
use crate::inference::{MessageChanges, Schedule};
use crate::run::residuals::projection_weight;

/// Buffers of the serial schedules and of the change record.
#[derive(Debug, Clone, Default)]
pub(super) struct SerialState {
    pending: Vec<f64>,
    queue: Option<ResidualQueue>,
    changes: Vec<f64>,
    signed: Vec<f64>,
    /// Per slot: the node it goes into and the node that sends it.
    targets: Vec<usize>,
    senders: Vec<usize>,
}

impl SerialState {
    /// Records each slot's change `||after - before||` and its signed projection.
    pub(super) fn record(&mut self, before: &[f64], after: &[f64], dim: usize) {
        let num = before.len() / dim.max(1);
        self.changes.resize(num, 0.0);
        self.signed.resize(num, 0.0);
        self.changes
            .par_iter_mut()
            .zip(self.signed.par_iter_mut())
            .zip(before.par_chunks(dim).zip(after.par_chunks(dim)))
            .for_each(|((c, g), (a, b))| {
                let (mut sq, mut proj) = (0.0, 0.0);
                for (i, (x, y)) in a.iter().zip(b).enumerate() {
                    let d = y - x;
                    sq += d * d;
                    proj += projection_weight(i) * d;
                }
                (*c, *g) = (sq.sqrt(), proj);
            });
    }

    /// Forgets the residual queue (after a schedule change or a failure).
    pub(super) fn reset_queue(&mut self) {
        self.queue = None;
    }
}

impl KbpEngine {
    fn ensure_slot_maps(&mut self) {
        if !self.serial.targets.is_empty() {
            return;
        }
        let num_slots = self.messages.len() / self.dim.max(1);
        let (mut targets, mut senders) = (vec![0; num_slots], vec![0; num_slots]);
        for t in 0..self.graph.num_nodes() {
            for (k, nb) in self.graph.neighbors(t).iter().enumerate() {
                targets[self.offset[t] + k] = nb.node;
                senders[self.offset[t] + k] = t;
            }
        }
        self.serial.targets = targets;
        self.serial.senders = senders;
    }

    /// Per-slot changes of the last iteration, once one has run.
    pub(super) fn recorded_changes(&self) -> Option<MessageChanges<'_>> {
        (!self.serial.changes.is_empty() && !self.serial.targets.is_empty()).then_some(
            MessageChanges {
                change: &self.serial.changes,
                signed: &self.serial.signed,
                target: &self.serial.targets,
            },
        )
    }

    /// Records the change from the current messages to `after`.
    pub(super) fn record_changes(&mut self, after_is_next: bool, after: Option<&[f64]>) {
        self.ensure_slot_maps();
        let mut serial = std::mem::take(&mut self.serial);
        let after = match after {
            Some(a) => a,
            None if after_is_next => &self.next,
            None => &self.messages,
        };
        serial.record(&self.messages, after, self.dim);
        self.serial = serial;
    }

    /// Changes schedule and damping from the next iteration on, keeping the messages.
    pub fn set_schedule(
        &mut self,
        schedule: Schedule,
        damping: crate::inference::Damping,
    ) -> Result<()> {
        self.damping = damping.check()?;
        self.schedule = schedule;
        self.serial.reset_queue();
        Ok(())
    }

    /// One random-order iteration; returns the largest change.
    pub(super) fn step_random(&mut self, iteration: usize, damping: f64) -> Result<f64> {
        let order = random_order(self.graph.num_nodes(), iteration);
        self.serial_pass(order, iteration, damping)
    }

    /// Node updates in `order`, each using the freshest messages (the sweep and random
    /// schedules); returns the largest change.
    pub(super) fn serial_pass(
        &mut self,
        order: impl IntoIterator<Item = usize>,
        iteration: usize,
        damping: f64,
    ) -> Result<f64> {
        let dim = self.dim;
        let mut scratch = NodeScratch::default();
        let mut residual: f64 = 0.0;
        let mut messages = self.messages.clone();
        let mut out = vec![0.0; dim * 8];
        for t in order {
            let d = self.graph.degree(t);
            out.resize(d * dim, 0.0);
            self.node_update(&messages, t, &mut scratch, &mut out);
            for k in 0..d {
                let s = self.offset[t] + k;
                let old = &mut messages[s * dim..(s + 1) * dim];
                let new = &mut out[k * dim..(k + 1) * dim];
                match mix_normalised(old, new, &self.orientation, damping) {
                    Some(r) => residual = residual.max(r),
                    None => return Err(self.divergence(s, iteration)),
                }
                old.copy_from_slice(new);
            }
        }
        self.record_changes(false, Some(&messages));
        self.messages = messages;
        Ok(residual)
    }

    /// One residual-BP iteration (see the module doc).
    pub(super) fn step_residual(&mut self, iteration: usize, damping: f64) -> Result<f64> {
        self.ensure_slot_maps();
        let mut serial = std::mem::take(&mut self.serial);
        let outcome = self.residual_commits(&mut serial, iteration, damping);
        if outcome.is_err() {
            serial.queue = None;
        }
        self.serial = serial;
        let (residual, messages) = outcome?;
        self.record_changes(false, Some(&messages));
        self.messages = messages;
        Ok(residual)
    }

    fn residual_commits(
        &self,
        serial: &mut SerialState,
        iteration: usize,
        damping: f64,
    ) -> Result<(f64, Vec<f64>)> {
        let dim = self.dim;
        let num_slots = self.messages.len() / dim.max(1);
        let mut scratch = NodeScratch::default();
        let mut out = vec![0.0; dim * 8];
        if serial.queue.is_none() {
            serial.pending.resize(self.messages.len(), 0.0);
            let mut queue = ResidualQueue::new(num_slots);
            for t in 0..self.graph.num_nodes() {
                let d = self.graph.degree(t);
                out.resize(d * dim, 0.0);
                self.node_update(&self.messages, t, &mut scratch, &mut out);
                for k in 0..d {
                    let s = self.offset[t] + k;
                    let new = &mut out[k * dim..(k + 1) * dim];
                    let Some(r) = mix_normalised(
                        &self.messages[s * dim..(s + 1) * dim],
                        new,
                        &self.orientation,
                        0.0,
                    ) else {
                        return Err(self.divergence(s, iteration));
                    };
                    serial.pending[s * dim..(s + 1) * dim].copy_from_slice(new);
                    queue.set(s, r);
                }
            }
            serial.queue = Some(queue);
        }
        let queue = serial.queue.as_mut().expect("queue set above");
        let mut messages = self.messages.clone();
        let mut committed = vec![0.0; dim];
        for _ in 0..num_slots {
            let Some((s, r)) = queue.peek() else { break };
            if r <= 0.0 {
                break;
            }
            committed.copy_from_slice(&serial.pending[s * dim..(s + 1) * dim]);
            let slot = &mut messages[s * dim..(s + 1) * dim];
            if mix_normalised(slot, &mut committed, &self.orientation, damping).is_none() {
                return Err(self.divergence(s, iteration));
            }
            slot.copy_from_slice(&committed);
            let left: f64 = serial.pending[s * dim..(s + 1) * dim]
                .iter()
                .zip(&committed)
                .map(|(p, c)| (p - c) * (p - c))
                .sum::<f64>()
                .sqrt();
            queue.set(s, left);
            let (from, u) = (serial.senders[s], serial.targets[s]);
            let d = self.graph.degree(u);
            out.resize(d * dim, 0.0);
            self.node_update(&messages, u, &mut scratch, &mut out);
            for k in 0..d {
                let s2 = self.offset[u] + k;
                if serial.targets[s2] == from {
                    continue;
                }
                let new = &mut out[k * dim..(k + 1) * dim];
                let Some(r2) = mix_normalised(
                    &messages[s2 * dim..(s2 + 1) * dim],
                    new,
                    &self.orientation,
                    0.0,
                ) else {
                    return Err(self.divergence(s2, iteration));
                };
                serial.pending[s2 * dim..(s2 + 1) * dim].copy_from_slice(new);
                queue.set(s2, r2);
            }
        }
        let next = queue.peek().map_or(0.0, |(_, r)| r) * (1.0 - damping);
        Ok((next, messages))
    }
}
