//! The sweep schedule (raster order, then back, each pixel from the freshest messages) as a
//! blocked wavefront. In raster order pixel (x, y) reads the messages its left and upper
//! neighbours sent this pass and its right and lower neighbours' from before; any order that
//! updates every pixel after its left and upper neighbours and before its right and lower ones
//! reads the same messages and gives the serial sweep's messages. So the image is cut into
//! square blocks; block (I, J) runs after blocks (I - 1, J) and (I, J - 1), the blocks of one
//! block anti-diagonal `I + J` run in parallel (they touch only at corners, so none reads
//! another's messages), and inside a block the pixels of each anti-diagonal `x + y` are updated
//! together as one batch (no two are neighbours), diagonal after diagonal. The backward pass
//! runs every order in reverse. A block's messages stay in cache while its diagonals run,
//! which whole-image diagonals (one pixel per row) would not. Cost: the serial sweep's work,
//! `blocks_x + blocks_y - 1` parallel steps per pass, one message store.

use rayon::prelude::*;

use super::batch::with_scratch;
use super::{Halt, KbpEngine};

/// Side of a block: at most 64 pixels, at least 16, and about an eighth of the image's shorter
/// side so that a small image still has blocks for every core.
fn block_side(width: usize, height: usize) -> usize {
    (width.min(height) / 8).clamp(16, 64)
}

impl KbpEngine {
    /// One forward and backward wavefront pass; the largest change of any update, or why it
    /// stopped (each block checks the interrupt flag before it starts).
    pub(super) fn step_wavefront(&mut self, damping: f64) -> std::result::Result<f64, Halt> {
        let (w, h) = (self.shape.width, self.shape.height);
        let side = block_side(w, h);
        let (bw, bh) = (w.div_ceil(side), h.div_ceil(side));
        let block_diagonals = bw + bh - 1;
        self.in_place(damping, |grid| {
            let mut largest: f64 = 0.0;
            for backward in [false, true] {
                for step in 0..block_diagonals {
                    let d = if backward {
                        block_diagonals - 1 - step
                    } else {
                        step
                    };
                    let blocks: Vec<(usize, usize)> = (d.saturating_sub(bh - 1)..=d.min(bw - 1))
                        .map(|bx| (bx, d - bx))
                        .collect();
                    let worst = blocks
                        .par_iter()
                        .map(|&(bx, by)| {
                            if grid.interrupted() {
                                return Err(Halt::Interrupted);
                            }
                            with_scratch(|sc| {
                                let (x0, y0) = (bx * side, by * side);
                                let (x1, y1) = ((x0 + side).min(w), (y0 + side).min(h));
                                let local = (x1 - x0) + (y1 - y0) - 1;
                                // The pixels of the block's `i`-th diagonal in this pass's order.
                                let diagonal = |i: usize| {
                                    let k = if backward { local - 1 - i } else { i };
                                    (k.saturating_sub(y1 - y0 - 1)..=k.min(x1 - x0 - 1))
                                        .map(move |lx| (y0 + k - lx) * w + x0 + lx)
                                };
                                let mut worst: f64 = 0.0;
                                grid.prefetch((0..local.min(2)).flat_map(diagonal));
                                for i in 0..local {
                                    // Diagonal i + 1 reads diagonal i + 2's messages (its
                                    // right and lower neighbours', or left and upper ones
                                    // backward): fetched while diagonal i runs.
                                    if i + 2 < local {
                                        grid.prefetch(diagonal(i + 2));
                                    }
                                    let pixels = diagonal(i);
                                    // SAFETY: the pixels of one anti-diagonal are never
                                    // neighbours, and blocks of one block diagonal touch only
                                    // at corners (module doc).
                                    worst = worst.max(unsafe { grid.update(pixels, sc) }?);
                                }
                                Ok(worst)
                            })
                        })
                        .try_reduce(|| 0.0, |a, b| Ok(a.max(b)))?;
                    largest = largest.max(worst);
                }
            }
            Ok(largest)
        })
    }
}
