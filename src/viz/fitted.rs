//! Images shown at the size a screen can show: an image larger than [`SHOWN_MAX_SIDE`] on a side
//! is averaged down over square blocks before it is coloured, so a 12-megapixel photograph's
//! panes are textures of about a megapixel, drawn and uploaded in milliseconds, instead of
//! four 48 MB textures per iteration. Cost O(pixels) per image.

use rayon::prelude::*;

/// The longest side an image is shown at.
pub const SHOWN_MAX_SIDE: usize = 1024;

/// How an image of `width x height` is shown: block side `f` (1: as it is) and the shown size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fitted {
    pub block: usize,
    pub width: usize,
    pub height: usize,
}

impl Fitted {
    pub fn of(width: usize, height: usize) -> Fitted {
        let block = width.max(height).div_ceil(SHOWN_MAX_SIDE).max(1);
        Fitted {
            block,
            width: width.div_ceil(block),
            height: height.div_ceil(block),
        }
    }

    /// Block means of `value(i)` over the image's pixels `i` (`width x height` of the full
    /// image), in the shown size, rows in parallel. With block 1 the values themselves.
    pub fn means(
        &self,
        width: usize,
        height: usize,
        value: impl Fn(usize) -> f64 + Sync,
    ) -> Vec<f64> {
        let f = self.block;
        let mut out = vec![0.0; self.width * self.height];
        out.par_chunks_mut(self.width)
            .enumerate()
            .for_each(|(by, row)| {
                let y0 = by * f;
                let y1 = (y0 + f).min(height);
                for (bx, o) in row.iter_mut().enumerate() {
                    let x0 = bx * f;
                    let x1 = (x0 + f).min(width);
                    let mut sum = 0.0;
                    for y in y0..y1 {
                        for x in x0..x1 {
                            sum += value(y * width + x);
                        }
                    }
                    *o = sum / ((y1 - y0) * (x1 - x0)) as f64;
                }
            });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_images_are_shown_as_they_are_and_large_ones_averaged() {
        assert_eq!(
            Fitted::of(800, 600),
            Fitted {
                block: 1,
                width: 800,
                height: 600
            }
        );
        let f = Fitted::of(4000, 3000);
        assert_eq!((f.block, f.width, f.height), (4, 1000, 750));
        let values: Vec<f64> = (0..12).map(|i| i as f64).collect();
        // A 4 x 3 image in 2 x 2 blocks: the ragged right column and bottom row average what
        // they have.
        let g = Fitted {
            block: 2,
            width: 2,
            height: 2,
        };
        assert_eq!(g.means(4, 3, |i| values[i]), vec![2.5, 4.5, 8.5, 10.5]);
    }
}
