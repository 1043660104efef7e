//! What the in-place schedules (the wavefront sweep, the checkerboard) share: the message
//! store and the change records opened to parallel tasks, and the update of a set of pixels
//! in place from the freshest messages. Pixels updated at the same time are never neighbours,
//! so each writes only its own slots and reads only its neighbours', which nobody writes
//! meanwhile ([`super::store`]).

use super::batch::{Scratch, Updater};
use super::store::{SharedRecord, SharedStore};
use super::{Halt, KbpEngine, degree_groups};
use crate::run::CancelFlag;

/// The store, the change records and the update rule of one in-place iteration.
pub(super) struct InPlace<'a> {
    store: SharedStore,
    change: SharedRecord,
    signed: SharedRecord,
    updater: Updater<'a>,
    interrupt: Option<&'a CancelFlag>,
}

impl InPlace<'_> {
    /// Whether the run was asked to stop (checked by each task before it starts).
    pub(super) fn interrupted(&self) -> bool {
        self.interrupt.is_some_and(|f| f.check().is_err())
    }

    /// Brings the message slots of `pixels` into cache ahead of their update (a hint).
    pub(super) fn prefetch(&self, pixels: impl IntoIterator<Item = usize>) {
        for t in pixels {
            self.store.prefetch(4 * t, 4);
        }
    }

    /// Updates `pixels` in place, batched by neighbour count; the largest change.
    ///
    /// # Safety
    /// While this runs, no other task updates any of `pixels` or a neighbour of one, and no
    /// two of `pixels` are neighbours.
    pub(super) unsafe fn update(
        &self,
        pixels: impl IntoIterator<Item = usize>,
        sc: &mut Scratch,
    ) -> Result<f64, Halt> {
        let mut worst: f64 = 0.0;
        for group in degree_groups(self.updater.shape, pixels) {
            // SAFETY (all store and record accesses): the caller's contract.
            let u = self
                .updater
                .update_group(
                    &group.nodes,
                    group.degree,
                    |s, o| unsafe { self.store.read(s, o) },
                    sc,
                    |s, new, l2, projected| unsafe {
                        self.store.write(s, new);
                        self.change.add(s, l2);
                        self.signed.add(s, projected);
                    },
                )
                .map_err(Halt::NoFiniteNorm)?;
            worst = worst.max(u);
        }
        Ok(worst)
    }
}

impl KbpEngine {
    /// Clears the change records, opens the store to `passes` and puts everything back; what
    /// `passes` returns (an interrupted or failed iteration keeps the messages updated so far).
    pub(super) fn in_place(
        &mut self,
        damping: f64,
        passes: impl FnOnce(&InPlace<'_>) -> Result<f64, Halt>,
    ) -> Result<f64, Halt> {
        let slots = self.shape.num_slots();
        self.change.clear();
        self.change.resize(slots, 0.0);
        self.signed.clear();
        self.signed.resize(slots, 0.0);
        let mut messages = std::mem::take(&mut self.messages);
        let mut change = std::mem::take(&mut self.change);
        let mut signed = std::mem::take(&mut self.signed);
        let outcome = passes(&InPlace {
            store: SharedStore::new(&mut messages, self.dim),
            change: SharedRecord::new(&mut change),
            signed: SharedRecord::new(&mut signed),
            updater: self.updater(damping),
            interrupt: self.interrupt.as_ref(),
        });
        self.messages = messages;
        self.change = change;
        self.signed = signed;
        self.serial.reset_queue();
        outcome
    }
}
