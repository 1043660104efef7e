//! The sweep schedule (raster order, then back, each pixel from the freshest messages) as a
//! wavefront. In raster order pixel (x, y) reads the messages its left and upper neighbours
//! sent this pass and its right and lower neighbours' from before; those neighbours lie on the
//! anti-diagonals `x + y ∓ 1`. So updating the diagonals in turn, every pixel of one diagonal at
//! once, reads exactly what the serial sweep reads and gives its messages; the backward pass
//! runs the diagonals in reverse. Each diagonal is split into chunks of pixels updated in
//! parallel, in place (no two pixels of a diagonal are neighbours: each writes its own slots and
//! reads only its neighbours'). Cost: the serial sweep's work, `width + height - 1` parallel
//! steps per pass, one message store.

use rayon::prelude::*;

use super::batch::Scratch;
use super::store::SharedStore;
use super::{KbpEngine, degree_groups};

/// Pixels per parallel task along a diagonal.
const CHUNK_NODES: usize = 64;

impl KbpEngine {
    /// One forward and backward wavefront pass; the largest change of any update, or the slot
    /// of the first update without a finite norm.
    pub(super) fn step_wavefront(&mut self, damping: f64) -> std::result::Result<f64, usize> {
        let dim = self.dim;
        let slots = self.shape.num_slots();
        self.change.clear();
        self.change.resize(slots, 0.0);
        self.signed.clear();
        self.signed.resize(slots, 0.0);
        let mut messages = std::mem::take(&mut self.messages);
        let mut change = std::mem::take(&mut self.change);
        let mut signed = std::mem::take(&mut self.signed);
        let outcome = {
            let store = SharedStore::new(&mut messages, dim);
            let change_ptr = SharedRecord::new(&mut change);
            let signed_ptr = SharedRecord::new(&mut signed);
            let updater = self.updater(damping);
            let diagonals = self.shape.num_diagonals();
            let mut largest: f64 = 0.0;
            let mut failed = None;
            for k in (0..diagonals).chain((0..diagonals).rev()) {
                let pixels: Vec<usize> = self.shape.diagonal(k).collect();
                let outcome = pixels
                    .par_chunks(CHUNK_NODES)
                    .map_init(Scratch::default, |sc, chunk| {
                        let mut worst: f64 = 0.0;
                        for group in degree_groups(self.shape, chunk.iter().copied()) {
                            // SAFETY (all store and record accesses): this diagonal's pixels
                            // write only their own slots and read their neighbours', which lie
                            // on other diagonals (module doc).
                            updater.compute(
                                &group.nodes,
                                group.degree,
                                |s, o| unsafe { store.read(s, o) },
                                sc,
                            );
                            let mut old = std::mem::take(&mut sc.old);
                            old.resize(dim, 0.0);
                            for (j, new) in sc.out.chunks_exact_mut(dim).enumerate() {
                                let t = group.nodes[j / group.degree];
                                let d = self.shape.directions(t).0[j % group.degree];
                                let s = 4 * t + d;
                                unsafe { store.read(s, &mut old) };
                                let (l2, projected) = updater.mix(&old, new).ok_or(s)?;
                                unsafe {
                                    store.write(s, new);
                                    change_ptr.add(s, l2);
                                    signed_ptr.add(s, projected);
                                }
                                worst = worst.max(l2);
                            }
                            sc.old = old;
                        }
                        Ok(worst)
                    })
                    .try_reduce(|| 0.0, |a, b| Ok(a.max(b)));
                match outcome {
                    Ok(w) => largest = largest.max(w),
                    Err(slot) => {
                        failed = Some(slot);
                        break;
                    }
                }
            }
            failed.map_or(Ok(largest), Err)
        };
        self.messages = messages;
        self.change = change;
        self.signed = signed;
        self.serial.reset_queue();
        outcome
    }
}

/// A per-slot f32 record that the tasks of one diagonal add to through disjoint slots.
struct SharedRecord {
    ptr: *mut f32,
    len: usize,
}

// SAFETY: reached only through `add`, whose callers touch disjoint slots concurrently.
unsafe impl Send for SharedRecord {}
unsafe impl Sync for SharedRecord {}

impl SharedRecord {
    fn new(record: &mut [f32]) -> Self {
        SharedRecord {
            ptr: record.as_mut_ptr(),
            len: record.len(),
        }
    }

    /// Adds `value` to slot `s`.
    ///
    /// # Safety
    /// No other task touches slot `s` while this runs.
    unsafe fn add(&self, s: usize, value: f64) {
        assert!(s < self.len, "slot {s} out of range");
        // SAFETY: in bounds (checked); exclusive for the call (the caller's contract).
        unsafe { *self.ptr.add(s) += value as f32 };
    }
}
