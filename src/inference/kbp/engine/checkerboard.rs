//! The checkerboard (red-black) schedule: the pixels with `x + y` even update together from
//! the freshest messages, then those with `x + y` odd. No two pixels of one colour are
//! neighbours on the 4-connected grid, so each colour updates in place and in parallel (bands
//! of rows, one task each), and the odd pixels already read what the even ones sent this
//! iteration: Gauss-Seidel on a bipartite graph. Every message is updated once per iteration,
//! half the work of a forward-and-back sweep, from one message store. Cost: one update per
//! message, two parallel steps per iteration.

use rayon::prelude::*;

use super::batch::with_scratch;
use super::store::{SharedRecord, SharedStore};
use super::{Halt, KbpEngine, degree_groups};

/// Pixels of one colour per task, about: enough to batch the updates, few enough that a
/// photograph's rows spread over every core.
const PIXELS_PER_TASK: usize = 512;

impl KbpEngine {
    /// One checkerboard iteration; the largest change of any update, or why it stopped (each
    /// task checks the interrupt flag before it starts; the messages updated so far are kept).
    pub(super) fn step_checkerboard(&mut self, damping: f64) -> std::result::Result<f64, Halt> {
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
            let interrupt = self.interrupt.as_ref();
            let (w, h) = (self.shape.width, self.shape.height);
            // At least eight bands, so that a small image still spreads over the cores.
            let rows_per_task = (2 * PIXELS_PER_TASK / w.max(1)).min(h.div_ceil(8)).max(1);
            let bands: Vec<usize> = (0..h).step_by(rows_per_task).collect();
            let mut largest: f64 = 0.0;
            let mut failed = None;
            for colour in 0..2 {
                let outcome = bands
                    .par_iter()
                    .map(|&y0| {
                        if interrupt.is_some_and(|f| f.check().is_err()) {
                            return Err(Halt::Interrupted);
                        }
                        with_scratch(|sc| {
                            let rows = y0..(y0 + rows_per_task).min(h);
                            let pixels = rows.flat_map(|y| {
                                ((y + colour) % 2..w).step_by(2).map(move |x| y * w + x)
                            });
                            let mut worst: f64 = 0.0;
                            for group in degree_groups(self.shape, pixels) {
                                // SAFETY (all store and record accesses): pixels of one colour
                                // write only their own slots and read their neighbours', of
                                // the other colour, which nobody writes meanwhile.
                                let u = updater
                                    .update_group(
                                        &group.nodes,
                                        group.degree,
                                        |s, o| unsafe { store.read(s, o) },
                                        sc,
                                        |s, new, l2, projected| unsafe {
                                            store.write(s, new);
                                            change_ptr.add(s, l2);
                                            signed_ptr.add(s, projected);
                                        },
                                    )
                                    .map_err(Halt::NoFiniteNorm)?;
                                worst = worst.max(u);
                            }
                            Ok(worst)
                        })
                    })
                    .try_reduce(|| 0.0, |a, b| Ok(a.max(b)));
                match outcome {
                    Ok(u) => largest = largest.max(u),
                    Err(halt) => {
                        failed = Some(halt);
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
