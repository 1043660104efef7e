//! The image pyramid of a flow run (Noorshams & Wainwright 2013 solve one level; levels are
//! beyond the paper): a Gaussian anti-aliasing filter of σ = 1/√(2 · 1/2) = 1 px then 2 x 2
//! means halve the frames (Sun, Roth & Black 2014, Sec. 3: σ = 1/√(2d) for a downsampling
//! factor d), each level is pre-smoothed, and a level's flow
//! is brought to full resolution by upsampling and scaling level by level; a 3 x 3 median hands
//! a level's flow to the next, and the mean change of a level's flow decides its early stop.
//! Cost: O(pixels), rayon over rows.

use std::sync::{Arc, OnceLock};

use rayon::prelude::*;

use super::FlowData;
use crate::error::{Error, Result};
use crate::io::{FlowField, GrayImage};
use crate::model::flow::{downsample2, gaussian_blur};

/// The pre-smoothed frames of every level, finest first.
#[derive(Debug, Clone)]
pub struct Pyramid {
    pub levels: Vec<(GrayImage, GrayImage)>,
}

impl Pyramid {
    /// Halves the frames `levels - 1` times ([`halve`]), then smooths each level with the
    /// pre-smoothing Gaussian. Errors if the coarsest level would be under 4 px on a side.
    pub fn new(data: &FlowData, levels: usize, presmooth: f64) -> Result<Self> {
        let mut raw = vec![(data.frame1.clone(), data.frame2.clone())];
        for l in 1..levels {
            let (a, b) = raw.last().expect("one level");
            let next = (halve(a), halve(b));
            if next.0.width < 4 || next.0.height < 4 {
                return Err(Error::param(
                    "levels",
                    format!(
                        "{levels} levels would make level {l} {} x {} px; use fewer levels",
                        next.0.width, next.0.height
                    ),
                ));
            }
            raw.push(next);
        }
        Ok(Pyramid {
            levels: raw
                .iter()
                .map(|(a, b)| (gaussian_blur(a, presmooth), gaussian_blur(b, presmooth)))
                .collect(),
        })
    }

    pub fn size(&self, level: usize) -> (usize, usize) {
        (self.levels[level].0.width, self.levels[level].0.height)
    }

    /// A flow of level `level` brought to full resolution (upsampled and scaled level by level).
    pub fn to_full(&self, level: usize, u: &[f64], v: &[f64]) -> (Vec<f64>, Vec<f64>) {
        to_full(&self.sizes(), level, u, v)
    }

    /// The size of every level, finest first.
    pub fn sizes(&self) -> Vec<(usize, usize)> {
        (0..self.levels.len()).map(|l| self.size(l)).collect()
    }
}

/// The standard deviation of the anti-aliasing Gaussian applied before each halving, in
/// pixels of the finer level: `1/√(2d)` for the downsampling factor `d = 1/2` (Sun, Roth &
/// Black 2014). Three halvings by 2 x 2 means alone are an 8 x 8 mean, which keeps 24 % of the
/// amplitude of a texture of period 10 px, aliased into a moiré that moves unlike the texture;
/// with the filter the street and layered pairs' coarse levels found their large motions
/// better (docs/flow.md).
pub const ANTI_ALIAS_SIGMA: f64 = 1.0;

/// One level down: the [`ANTI_ALIAS_SIGMA`] Gaussian, then 2 x 2 means (which keep the pixel
/// centres where [`crate::model::flow::upsample_flow`] expects them). O(pixels).
pub fn halve(img: &GrayImage) -> GrayImage {
    downsample2(&gaussian_blur(img, ANTI_ALIAS_SIGMA))
}

/// A flow of level `level` of a pyramid whose level sizes are `sizes` (finest first) brought to
/// full resolution: upsampled and scaled level by level ([`crate::model::flow::upsample_flow`]). Bilinear
/// interpolation clamped to the frame is separable, so the chain is one 1-D operator per axis
/// (a few weights per output pixel), applied along x on the level's rows and then along y:
/// O(full pixels), rayon over rows, without the intermediate levels' fields.
pub fn to_full(
    sizes: &[(usize, usize)],
    level: usize,
    u: &[f64],
    v: &[f64],
) -> (Vec<f64>, Vec<f64>) {
    if level == 0 {
        return (u.to_vec(), v.to_vec());
    }
    let xs: Vec<usize> = (0..=level).rev().map(|l| sizes[l].0).collect();
    let ys: Vec<usize> = (0..=level).rev().map(|l| sizes[l].1).collect();
    let (wx, sx) = chain_weights(&xs);
    let (wy, sy) = chain_weights(&ys);
    let (cw, ch) = sizes[level];
    let fw = sizes[0].0;
    let apply = |f: &[f64], scale: f64| -> Vec<f64> {
        let mut rows = vec![0.0; ch * fw];
        rows.par_chunks_mut(fw).enumerate().for_each(|(j, row)| {
            let src = &f[j * cw..(j + 1) * cw];
            for (o, w) in row.iter_mut().zip(&wx) {
                *o = w.iter().map(|&(i, a)| a * src[i]).sum::<f64>();
            }
        });
        let mut out = vec![0.0; wy.len() * fw];
        out.par_chunks_mut(fw).zip(&wy).for_each(|(row, w)| {
            for &(j, b) in w {
                let b = b * scale;
                for (o, t) in row.iter_mut().zip(&rows[j * fw..(j + 1) * fw]) {
                    *o += b * t;
                }
            }
        });
        out
    };
    (apply(u, sx), apply(v, sy))
}

/// The 1-D weights of a chain of bilinear upsamplings along one axis through the sizes `sizes`
/// (coarse first), each at `(x + 0.5) c / f - 0.5` clamped to `[0, c - 1]` as
/// [`crate::model::flow::upsample_flow`] samples: per fine index its (coarse index, weight) pairs, and the product
/// of the size ratios that scales a flow component along the axis.
fn chain_weights(sizes: &[usize]) -> (Vec<Vec<(usize, f64)>>, f64) {
    let mut weights: Vec<Vec<(usize, f64)>> = (0..sizes[0]).map(|i| vec![(i, 1.0)]).collect();
    let mut scale = 1.0;
    for pair in sizes.windows(2) {
        let (c, f) = (pair[0], pair[1]);
        let ratio = f as f64 / c as f64;
        scale *= ratio;
        weights = (0..f)
            .map(|x| {
                let at = ((x as f64 + 0.5) / ratio - 0.5).clamp(0.0, (c - 1) as f64);
                let x0 = at.floor() as usize;
                let x1 = (x0 + 1).min(c - 1);
                let t = at - x0 as f64;
                let mut out: Vec<(usize, f64)> = Vec::new();
                for (src, share) in [(x0, 1.0 - t), (x1, t)] {
                    if share == 0.0 {
                        continue;
                    }
                    for &(i, a) in &weights[src] {
                        match out.iter_mut().find(|e| e.0 == i) {
                            Some(e) => e.1 += share * a,
                            None => out.push((i, share * a)),
                        }
                    }
                }
                out
            })
            .collect();
    }
    (weights, scale)
}

/// A level's flow kept for review, brought to full resolution once, when first asked for (a
/// stored full-resolution copy per snapshot would cost `4^level` times the level's flow).
#[derive(Debug)]
pub struct StoredFlow {
    level: usize,
    flow: Arc<FlowField>,
    sizes: Arc<[(usize, usize)]>,
    full: OnceLock<Arc<FlowField>>,
}

impl StoredFlow {
    /// `flow` of `level` in a pyramid of level sizes `sizes` (finest first).
    pub fn new(level: usize, flow: Arc<FlowField>, sizes: Arc<[(usize, usize)]>) -> Self {
        let full = OnceLock::new();
        if level == 0 {
            let _ = full.set(flow.clone());
        }
        StoredFlow {
            level,
            flow,
            sizes,
            full,
        }
    }

    /// The flow at full resolution (computed at the first call, O(full pixels)).
    pub fn full(&self) -> Arc<FlowField> {
        self.full
            .get_or_init(|| {
                let (u, v) = to_full(&self.sizes, self.level, &self.flow.u, &self.flow.v);
                let (width, height) = self.sizes[0];
                Arc::new(FlowField {
                    width,
                    height,
                    u,
                    v,
                })
            })
            .clone()
    }

    /// The flow at its level's size.
    pub fn at_level(&self) -> &Arc<FlowField> {
        &self.flow
    }
}

/// Mean Euclidean distance between two flows of one level, `∞` when their sizes differ (the
/// first iteration of a level, compared with the level above). O(pixels).
pub fn mean_change(old: &FlowField, new: (&[f64], &[f64])) -> f64 {
    let n = new.0.len();
    if old.u.len() != n || n == 0 {
        return f64::INFINITY;
    }
    // Fixed chunks added in order: the same number whatever the thread count (the level stop
    // compares it with a tolerance, and a replay must stop where the run stopped).
    const CHUNK: usize = 1 << 14;
    let parts: Vec<f64> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            (c * CHUNK..((c + 1) * CHUNK).min(n))
                .map(|i| {
                    let (a, b) = (new.0[i] - old.u[i], new.1[i] - old.v[i]);
                    (a * a + b * b).sqrt()
                })
                .sum::<f64>()
        })
        .collect();
    parts.iter().sum::<f64>() / n as f64
}

/// The 3 x 3 median of a `w x h` field (the border uses the pixels inside the frame). Removes
/// isolated wrong vectors of a coarse level before they become the next level's search centres
/// (Sun, Roth & Black 2010). O(pixels).
pub fn median3(f: &[f64], (w, h): (usize, usize)) -> Vec<f64> {
    let mut out = vec![0.0; f.len()];
    out.par_chunks_mut(w.max(1))
        .enumerate()
        .for_each(|(y, row)| {
            let mut window = [0.0f64; 9];
            for (x, o) in row.iter_mut().enumerate() {
                let mut k = 0;
                for yy in y.saturating_sub(1)..(y + 2).min(h) {
                    for xx in x.saturating_sub(1)..(x + 2).min(w) {
                        window[k] = f[yy * w + xx];
                        k += 1;
                    }
                }
                let win = &mut window[..k];
                win.sort_unstable_by(f64::total_cmp);
                *o = if k % 2 == 1 {
                    win[k / 2]
                } else {
                    0.5 * (win[k / 2 - 1] + win[k / 2])
                };
            }
        });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::flow::upsample_flow;

    /// The spread of a row of `img` (largest minus smallest value), away from the borders.
    fn spread(img: &GrayImage) -> f64 {
        let y = img.height / 2;
        let row = &img.pixels[y * img.width + 3..(y + 1) * img.width - 3];
        let (lo, hi) = row
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &p| {
                (a.min(p), b.max(p))
            });
        hi - lo
    }

    #[test]
    fn halving_removes_what_the_coarser_level_cannot_hold_and_keeps_the_rest() {
        // Stripes of period 2.5 px (above the coarser level's Nyquist frequency of 1/4 cycle
        // per pixel of the finer level) and of period 40 px, 100 gray levels peak to peak.
        let stripes = |period: f64| {
            let (w, h) = (120, 16);
            let pixels = (0..w * h)
                .map(|i| 50.0 * (2.0 * std::f64::consts::PI * (i % w) as f64 / period).cos())
                .collect();
            GrayImage {
                width: w,
                height: h,
                pixels,
            }
        };
        let fast = stripes(2.5);
        // The 2 x 2 mean alone keeps cos(0.4 π) = 31 % of them (as a moiré of period 5 px);
        // the Gaussian before it exp(-2 π² σ² f²) = 4 % of that.
        assert!(
            spread(&downsample2(&fast)) > 25.0,
            "{}",
            spread(&downsample2(&fast))
        );
        assert!(spread(&halve(&fast)) < 2.0, "{}", spread(&halve(&fast)));
        let slow = stripes(40.0);
        assert!(spread(&halve(&slow)) > 90.0, "{}", spread(&halve(&slow)));
    }

    #[test]
    fn the_separable_chain_matches_upsampling_level_by_level() {
        let sizes = [(37, 23), (19, 12), (10, 6), (5, 3)];
        let (cw, ch) = sizes[3];
        let u: Vec<f64> = (0..cw * ch)
            .map(|i| ((i * 7919) % 13) as f64 - 6.0)
            .collect();
        let v: Vec<f64> = (0..cw * ch)
            .map(|i| ((i * 104_729) % 11) as f64 * 0.3)
            .collect();
        let (fu, fv) = to_full(&sizes, 3, &u, &v);
        let (mut uu, mut vv) = (u.clone(), v.clone());
        for l in (0..3).rev() {
            (uu, vv) = upsample_flow(&uu, &vv, sizes[l + 1], sizes[l]);
        }
        assert_eq!(fu.len(), 37 * 23);
        for i in 0..fu.len() {
            assert!((fu[i] - uu[i]).abs() < 1e-12, "{i}: {} {}", fu[i], uu[i]);
            assert!((fv[i] - vv[i]).abs() < 1e-12, "{i}: {} {}", fv[i], vv[i]);
        }
    }
}
