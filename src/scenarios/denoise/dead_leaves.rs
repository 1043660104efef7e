//! The dead-leaves image model (Matheron 1968; the scale-invariant form of Lee, Mumford & Huang,
//! "Occlusion models for natural images", IJCV 41, 2001): opaque disks ("leaves") fall at
//! uniformly random centres, each hiding what lies below it; radii follow a power law
//! `f(r) ∝ r^-α` on `[r_min, r_max]` and gray levels are drawn independently of everything else.
//! With α = 3 the model is scale invariant between the cut-offs and reproduces natural images'
//! edge and two-point statistics, which the smooth synthetic sunset lacks. It is a built-in
//! training image for kernel BP and discrete BP on loaded photographs (`data.rs`).
//!
//! Parameters ([`DeadLeavesParams::standard`]): α = 3 (Lee et al.'s scale-invariant exponent);
//! `r_min` = 1 pixel (the sampling scale: smaller leaves only add pixel noise); `r_max` = the
//! image's larger side (Lee et al. take the upper cut-off at or beyond the image's scale); gray
//! levels uniform on 0..255. [`Shading::Ramp`] is a variant (not in Lee et al.): each leaf is a
//! linear ramp across its diameter between two independent uniform gray levels, in a uniform
//! direction, so gradients scale as 1/r and the image stays scale invariant.
//!
//! Simulation is exact and front to back (Kendall & Thönnes 1999, "perfect simulation" of the
//! dead-leaves model): leaves are drawn from the top down and a leaf paints only the pixels no
//! earlier (higher) leaf covers, until every pixel is covered. Centres are uniform over the image
//! grown by `r_max` on each side, so every leaf that can reach the image is drawn and the image
//! is a window of the stationary model. A pixel is covered when its centre lies in the disk.
//! Cost: about `|window| / E[π r²] · ln(pixels)` draws (some 2 · 10⁵ for 256², E[π r²] ≈ 2π ln
//! r_max at α = 3), each O(1) plus O(r²) for the leaves that reach the image.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// How a leaf is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shading {
    /// One gray level per leaf (Lee, Mumford & Huang 2001).
    Flat,
    /// A linear ramp across the leaf's diameter between two independent gray levels.
    Ramp,
}

/// The model's parameters (radii in pixels).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeadLeavesParams {
    /// Power-law exponent α of the radius density `r^-α`.
    pub exponent: f64,
    pub r_min: f64,
    pub r_max: f64,
    pub shading: Shading,
}

impl DeadLeavesParams {
    /// α = 3, r_min = 1 pixel, r_max = the larger side (see the module doc).
    pub fn standard(width: usize, height: usize, shading: Shading) -> Self {
        DeadLeavesParams {
            exponent: 3.0,
            r_min: 1.0,
            r_max: width.max(height).max(2) as f64,
            shading,
        }
    }

    /// The radius at quantile `u` in [0, 1) of the truncated power law (inverse CDF).
    pub fn radius_at(&self, u: f64) -> f64 {
        let a = self.exponent;
        if (a - 1.0).abs() < 1e-12 {
            return self.r_min * (self.r_max / self.r_min).powf(u);
        }
        let lo = self.r_min.powf(1.0 - a);
        let hi = self.r_max.powf(1.0 - a);
        (lo + u * (hi - lo)).powf(1.0 / (1.0 - a))
    }
}

/// A drawn image: gray values in 0..255 and which leaf each pixel shows.
#[derive(Debug, Clone)]
pub struct DeadLeavesImage {
    pub width: usize,
    pub height: usize,
    /// Row-major gray values in 0..=255.
    pub values: Vec<f64>,
    /// Row-major index of the visible leaf (in drawing order, 0 = topmost).
    pub leaf: Vec<u32>,
    /// Leaves drawn (including those that fell outside the image or were hidden).
    pub draws: usize,
}

/// Draws at most this many leaves per pixel before painting what is left with one last leaf
/// (never reached with r_min ≥ 0.5: the expected count is ~ ln(pixels) · |window| / E[π r²]).
const MAX_DRAWS_PER_PIXEL: usize = 10_000;

/// A dead-leaves image of `width x height`, seeded.
pub fn dead_leaves(
    width: usize,
    height: usize,
    params: &DeadLeavesParams,
    seed: u64,
) -> DeadLeavesImage {
    let n = width * height;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut values = vec![0.0; n];
    let mut leaf = vec![u32::MAX; n];
    let mut uncovered = n;
    let margin = params.r_max;
    let (wx, wy) = (width as f64 + 2.0 * margin, height as f64 + 2.0 * margin);
    let mut draws = 0usize;
    let mut id = 0u32;
    while uncovered > 0 && draws < MAX_DRAWS_PER_PIXEL * n.max(1) {
        draws += 1;
        let r = params.radius_at(rng.random::<f64>());
        let cx = rng.random::<f64>() * wx - margin;
        let cy = rng.random::<f64>() * wy - margin;
        let gray = 255.0 * rng.random::<f64>();
        let ramp = match params.shading {
            Shading::Flat => None,
            Shading::Ramp => {
                let angle = std::f64::consts::TAU * rng.random::<f64>();
                Some((255.0 * rng.random::<f64>(), angle.cos(), angle.sin()))
            }
        };
        // Pixel (x, y) has its centre at (x + 0.5, y + 0.5).
        let x0 = (cx - r - 0.5).ceil().max(0.0);
        let x1 = (cx + r - 0.5).floor().min(width as f64 - 1.0);
        let y0 = (cy - r - 0.5).ceil().max(0.0);
        let y1 = (cy + r - 0.5).floor().min(height as f64 - 1.0);
        if x0 > x1 || y0 > y1 {
            continue;
        }
        let mut painted = false;
        for y in y0 as usize..=y1 as usize {
            let dy = y as f64 + 0.5 - cy;
            for x in x0 as usize..=x1 as usize {
                let p = y * width + x;
                if leaf[p] != u32::MAX {
                    continue;
                }
                let dx = x as f64 + 0.5 - cx;
                if dx * dx + dy * dy > r * r {
                    continue;
                }
                values[p] = match ramp {
                    None => gray,
                    // From `gray` on one side of the diameter to `far` on the other.
                    Some((far, ux, uy)) => {
                        let t = ((dx * ux + dy * uy) / (2.0 * r) + 0.5).clamp(0.0, 1.0);
                        gray + t * (far - gray)
                    }
                };
                leaf[p] = id;
                uncovered -= 1;
                painted = true;
            }
        }
        if painted {
            id += 1;
        }
    }
    if uncovered > 0 {
        let gray = 255.0 * rng.random::<f64>();
        for p in 0..n {
            if leaf[p] == u32::MAX {
                values[p] = gray;
                leaf[p] = id;
            }
        }
    }
    DeadLeavesImage {
        width,
        height,
        values,
        leaf,
        draws,
    }
}

/// Closed form of the dead-leaves model (Matheron): the probability that two points at
/// distance `d` show the same leaf, `E|D ∩ (D + d)| / E|D ∪ (D + d)|` over the radius law, by
/// midpoint quadrature in log r (`steps` nodes). For the tests.
pub fn same_leaf_probability(params: &DeadLeavesParams, d: f64, steps: usize) -> f64 {
    let (lo, hi) = (params.r_min.ln(), params.r_max.ln());
    let h = (hi - lo) / steps as f64;
    let (mut inter, mut union) = (0.0, 0.0);
    for i in 0..steps {
        let r = (lo + (i as f64 + 0.5) * h).exp();
        // f(r) dr = r^-α · r d(ln r)
        let weight = r.powf(1.0 - params.exponent) * h;
        let lens = if d >= 2.0 * r {
            0.0
        } else {
            2.0 * r * r * (d / (2.0 * r)).acos() - 0.5 * d * (4.0 * r * r - d * d).sqrt()
        };
        inter += weight * lens;
        union += weight * (2.0 * std::f64::consts::PI * r * r - lens);
    }
    inter / union
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_draws_the_same_image_and_another_seed_another() {
        let p = DeadLeavesParams::standard(64, 48, Shading::Flat);
        let a = dead_leaves(64, 48, &p, 7);
        let b = dead_leaves(64, 48, &p, 7);
        let c = dead_leaves(64, 48, &p, 8);
        assert_eq!(a.values, b.values);
        assert_eq!(a.leaf, b.leaf);
        assert_ne!(a.values, c.values);
        assert!(a.values.iter().all(|v| (0.0..=255.0).contains(v)));
        assert!(a.leaf.iter().all(|&l| l != u32::MAX));
    }

    /// The maximum-likelihood exponent of the drawn radii, `1 + n / Σ ln(r / r_min)` (the
    /// Pareto MLE, whose truncation bias at r_max = 256 is below 1e-4 for α = 3), recovers α.
    #[test]
    fn drawn_radii_follow_the_power_law() {
        for alpha in [2.5, 3.0, 3.5] {
            let p = DeadLeavesParams {
                exponent: alpha,
                ..DeadLeavesParams::standard(256, 256, Shading::Flat)
            };
            let mut rng = ChaCha8Rng::seed_from_u64(3);
            let n = 40_000;
            let radii: Vec<f64> = (0..n).map(|_| p.radius_at(rng.random::<f64>())).collect();
            assert!(radii.iter().all(|&r| (p.r_min..=p.r_max).contains(&r)));
            let fitted = 1.0 + n as f64 / radii.iter().map(|r| (r / p.r_min).ln()).sum::<f64>();
            // Standard error (α − 1)/√n ≈ 0.01; 0.05 would still catch α ± 0.5 or a flipped CDF.
            assert!((fitted - alpha).abs() < 0.05, "α {alpha}: fitted {fitted}");
        }
    }

    /// Occlusion statistics against Matheron's closed form: the share of pixel pairs at
    /// horizontal distance d that show the same leaf, over 6 images of 256².
    #[test]
    fn same_leaf_pairs_match_the_closed_form() {
        let (w, h) = (256, 256);
        let p = DeadLeavesParams::standard(w, h, Shading::Flat);
        for d in [1usize, 2, 4, 8, 16] {
            let (mut same, mut pairs) = (0usize, 0usize);
            for seed in 0..6 {
                let img = dead_leaves(w, h, &p, seed);
                for y in 0..h {
                    for x in 0..w - d {
                        same += usize::from(img.leaf[y * w + x] == img.leaf[y * w + x + d]);
                        pairs += 1;
                    }
                }
            }
            let measured = same as f64 / pairs as f64;
            let expected = same_leaf_probability(&p, d as f64, 20_000);
            eprintln!("d {d}: measured {measured:.4}, closed form {expected:.4}");
            assert!(
                (measured - expected).abs() < 0.02,
                "d {d}: measured {measured}, closed form {expected}"
            );
        }
    }

    #[test]
    fn ramp_leaves_stay_in_range_and_vary_inside_a_leaf() {
        let p = DeadLeavesParams::standard(64, 64, Shading::Ramp);
        let img = dead_leaves(64, 64, &p, 1);
        assert!(img.values.iter().all(|v| (0.0..=255.0).contains(v)));
        // Some leaf shows more than one value.
        let varies = (0..64 * 63).any(|p| {
            img.leaf[p] == img.leaf[p + 1] && { (img.values[p] - img.values[p + 1]).abs() > 1e-9 }
        });
        assert!(varies);
    }

    /// Writes 256² samples (flat and shaded) to the temp directory, to look at.
    #[test]
    #[ignore]
    fn write_samples_to_look_at() {
        for (shading, name) in [(Shading::Flat, "flat"), (Shading::Ramp, "shaded")] {
            let p = DeadLeavesParams::standard(256, 256, shading);
            let img = dead_leaves(256, 256, &p, 3_000_009);
            let path = std::env::temp_dir().join(format!("dead_leaves_{name}.png"));
            crate::io::save_gray_png(&path, 256, 256, &img.values).unwrap();
            eprintln!("{} ({} draws)", path.display(), img.draws);
        }
    }
}
