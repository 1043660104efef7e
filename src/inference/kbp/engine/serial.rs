//! Kernel BP's serial schedules beside the synchronous and sweep ones.
//!
//! * Random: the pixels in a seeded random order per iteration; each pixel sends all its
//!   messages from the freshest ones (a pixel's messages share one leave-one-out pass, so the
//!   order is over senders, as in the sweep).
//! * Residual BP (Elidan, McGraw, Koller 2006, Sec. 3): every message's pending update (the
//!   undamped, normalised, oriented coefficients) and its distance `||c_pending - c||` sit in a
//!   priority queue; the largest is committed (damped), then the receiver's outgoing messages
//!   that read it are recomputed (one pixel update, O(class cost · degree)). One iteration is as
//!   many commits as messages. Reported residual: the largest pending distance times `1 - d`,
//!   about the change the next commit would make.
//!
//! Both update a copy of the store, so a failure leaves the messages as they were; memory one
//! more store (and for residual BP the pending updates in f64).

use super::batch::{Scratch, mix_normalised};
use super::{KbpEngine, store};
use crate::error::Result;
use crate::inference::Schedule;
use crate::inference::schedule_order::{ResidualQueue, random_order};

/// Pixels (or committed messages) between two checks of the interrupt flag.
const SERIAL_CHUNK: usize = 4096;

/// Buffers of the residual schedule.
#[derive(Debug, Clone, Default)]
pub(super) struct SerialState {
    pending: Vec<f64>,
    queue: Option<ResidualQueue>,
}

impl SerialState {
    /// Forgets the residual queue (after a schedule change, a restore or a failure).
    pub(super) fn reset_queue(&mut self) {
        self.queue = None;
    }
}

impl KbpEngine {
    /// Changes schedule and damping from the next iteration on, keeping the messages.
    pub fn set_schedule(
        &mut self,
        schedule: Schedule,
        damping: crate::inference::Damping,
    ) -> Result<()> {
        self.damping = damping.check()?;
        self.schedule = schedule;
        self.serial.reset_queue();
        if schedule != Schedule::Synchronous {
            // Only the synchronous schedule needs the second store.
            self.next = Vec::new();
        }
        Ok(())
    }

    /// Pixel `t`'s new outgoing messages (undamped, normalised and oriented by `mix` later)
    /// computed from `messages` into `sc.out`, `dim` per direction present.
    fn pixel_update(&self, messages: &[f32], t: usize, sc: &mut Scratch) -> usize {
        let degree = self.shape.degree(t);
        self.updater(0.0).compute(
            &[t],
            degree,
            |s, o| store::read(messages, self.dim, s, o),
            sc,
        );
        degree
    }

    /// `Err(Cancelled)` once the interrupt flag is set.
    fn check_interrupt(&self) -> Result<()> {
        self.interrupt.as_ref().map_or(Ok(()), |f| f.check())
    }

    /// One random-order iteration; returns the largest change.
    pub(super) fn step_random(&mut self, iteration: usize, damping: f64) -> Result<f64> {
        let dim = self.dim;
        let order = random_order(self.shape.num_nodes(), iteration);
        let mut messages = self.messages.clone();
        let slots = self.shape.num_slots();
        let (mut change, mut signed) = (vec![0.0f32; slots], vec![0.0f32; slots]);
        let updater = self.updater(damping);
        let mut sc = Scratch::default();
        let mut old = vec![0.0; dim];
        let mut residual: f64 = 0.0;
        for (i, t) in order.into_iter().enumerate() {
            if i % SERIAL_CHUNK == 0 {
                self.check_interrupt()?;
            }
            let degree = self.pixel_update(&messages, t, &mut sc);
            let dirs = self.shape.directions(t).0;
            for (k, new) in sc.out.chunks_exact_mut(dim).take(degree).enumerate() {
                let s = 4 * t + dirs[k];
                store::read(&messages, dim, s, &mut old);
                let (l2, projected) = updater
                    .mix(&old, new)
                    .ok_or_else(|| self.divergence(s, iteration))?;
                store::write(&mut messages, dim, s, new);
                change[s] += l2 as f32;
                signed[s] += projected as f32;
                residual = residual.max(l2);
            }
        }
        self.messages = messages;
        (self.change, self.signed) = (change, signed);
        Ok(residual)
    }

    /// One residual-BP iteration (see the module doc).
    pub(super) fn step_residual(&mut self, iteration: usize, damping: f64) -> Result<f64> {
        let mut serial = std::mem::take(&mut self.serial);
        let outcome = self.residual_commits(&mut serial, iteration, damping);
        if outcome.is_err() {
            serial.queue = None;
        }
        self.serial = serial;
        let (residual, messages, change, signed) = outcome?;
        self.messages = messages;
        (self.change, self.signed) = (change, signed);
        Ok(residual)
    }

    /// Computes pixel `t`'s pending updates from `messages` and queues their distances,
    /// skipping the message to `skip`.
    fn queue_pixel(
        &self,
        messages: &[f32],
        t: usize,
        skip: Option<usize>,
        serial: &mut SerialState,
        sc: &mut Scratch,
        iteration: usize,
    ) -> Result<()> {
        let dim = self.dim;
        let degree = self.pixel_update(messages, t, sc);
        let dirs = self.shape.directions(t).0;
        let mut old = vec![0.0; dim];
        for (k, new) in sc.out.chunks_exact_mut(dim).take(degree).enumerate() {
            let s = 4 * t + dirs[k];
            if self.shape.neighbour(t, dirs[k]) == skip {
                continue;
            }
            store::read(messages, dim, s, &mut old);
            let r = mix_normalised(&old, new, &self.orientation, 0.0)
                .ok_or_else(|| self.divergence(s, iteration))?;
            serial.pending[s * dim..(s + 1) * dim].copy_from_slice(new);
            serial
                .queue
                .as_mut()
                .expect("a queue while queueing")
                .set(s, r);
        }
        Ok(())
    }

    #[allow(clippy::type_complexity)]
    fn residual_commits(
        &self,
        serial: &mut SerialState,
        iteration: usize,
        damping: f64,
    ) -> Result<(f64, Vec<f32>, Vec<f32>, Vec<f32>)> {
        let dim = self.dim;
        let slots = self.shape.num_slots();
        let mut sc = Scratch::default();
        if serial.queue.is_none() {
            serial.pending.resize(slots * dim, 0.0);
            serial.queue = Some(ResidualQueue::new(slots));
            for t in 0..self.shape.num_nodes() {
                if t % SERIAL_CHUNK == 0 {
                    self.check_interrupt()?;
                }
                self.queue_pixel(&self.messages, t, None, serial, &mut sc, iteration)?;
            }
        }
        let updater = self.updater(damping);
        let mut messages = self.messages.clone();
        let (mut change, mut signed) = (vec![0.0f32; slots], vec![0.0f32; slots]);
        let mut old = vec![0.0; dim];
        let mut committed = vec![0.0; dim];
        for i in 0..self.shape.num_messages() {
            if i % SERIAL_CHUNK == 0 {
                self.check_interrupt()?;
            }
            let queue = serial.queue.as_mut().expect("queue set above");
            let Some((s, r)) = queue.peek() else { break };
            if r <= 0.0 {
                break;
            }
            committed.copy_from_slice(&serial.pending[s * dim..(s + 1) * dim]);
            store::read(&messages, dim, s, &mut old);
            let (l2, projected) = updater
                .mix(&old, &mut committed)
                .ok_or_else(|| self.divergence(s, iteration))?;
            store::write(&mut messages, dim, s, &committed);
            change[s] += l2 as f32;
            signed[s] += projected as f32;
            let left: f64 = serial.pending[s * dim..(s + 1) * dim]
                .iter()
                .zip(&committed)
                .map(|(p, c)| (p - c) * (p - c))
                .sum::<f64>()
                .sqrt();
            queue.set(s, left);
            let (from, u) = self.shape.slot_ends(s).expect("a queued message exists");
            self.queue_pixel(&messages, u, Some(from), serial, &mut sc, iteration)?;
        }
        let queue = serial.queue.as_mut().expect("queue set above");
        let next = queue.peek().map_or(0.0, |(_, r)| r) * (1.0 - damping);
        Ok((next, messages, change, signed))
    }
}
