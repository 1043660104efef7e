//! The checkerboard (red-black) schedule: the pixels with `x + y` even update together from
//! the freshest messages, then those with `x + y` odd. No two pixels of one colour are
//! neighbours on the 4-connected grid, so each colour updates in place and in parallel (bands
//! of rows, one task each), and the odd pixels already read what the even ones sent this
//! iteration: Gauss-Seidel on a bipartite graph. Every message is updated once per iteration,
//! half the work of a forward-and-back sweep, from one message store. Cost: one update per
//! message, two parallel steps per iteration.

use rayon::prelude::*;

use super::batch::with_scratch;
use super::{Halt, KbpEngine};

/// Pixels of one colour per task, about: enough to batch the updates, few enough that a
/// photograph's rows spread over every core.
const PIXELS_PER_TASK: usize = 512;

impl KbpEngine {
    /// One checkerboard iteration; the largest change of any update, or why it stopped (each
    /// task checks the interrupt flag before it starts; the messages updated so far are kept).
    pub(super) fn step_checkerboard(&mut self, damping: f64) -> std::result::Result<f64, Halt> {
        let (w, h) = (self.shape.width, self.shape.height);
        // At least eight bands, so that a small image still spreads over the cores.
        let rows_per_task = (2 * PIXELS_PER_TASK / w.max(1)).min(h.div_ceil(8)).max(1);
        let bands: Vec<usize> = (0..h).step_by(rows_per_task).collect();
        self.in_place(damping, |grid| {
            let mut largest: f64 = 0.0;
            for colour in 0..2 {
                let worst = bands
                    .par_iter()
                    .map(|&y0| {
                        if grid.interrupted() {
                            return Err(Halt::Interrupted);
                        }
                        let pixels = (y0..(y0 + rows_per_task).min(h))
                            .flat_map(|y| ((y + colour) % 2..w).step_by(2).map(move |x| y * w + x));
                        // SAFETY: pixels of one colour are never neighbours, and every task of
                        // this colour updates other rows.
                        with_scratch(|sc| unsafe { grid.update(pixels, sc) })
                    })
                    .try_reduce(|| 0.0, |a, b| Ok(a.max(b)))?;
                largest = largest.max(worst);
            }
            Ok(largest)
        })
    }
}
