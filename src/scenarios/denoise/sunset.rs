//! The synthetic "sunset" image of Song et al., "Kernel Belief Propagation" (AISTATS 2011,
//! Sec. 7): concentric rings in the top half, level 0 below, plus additive Gaussian noise.
//! Cost O(width · height).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

/// `colors` gray levels spaced evenly over 0..255 (`[0]` for a single colour).
pub fn gray_levels(colors: usize) -> Vec<f64> {
    if colors <= 1 {
        return vec![0.0; colors];
    }
    (0..colors)
        .map(|i| 255.0 * i as f64 / (colors - 1) as f64)
        .collect()
}

/// Ring index of pixel `(x, y)`: `floor(min(1, dist / (min(rows, cols) / 2)) * (C - 1))` in
/// the top half (rows `y < height / 2`), 0 in the bottom half. `dist` is measured from the
/// image centre `((width - 1) / 2, (height - 1) / 2)`.
pub fn sunset_level_index(x: usize, y: usize, width: usize, height: usize, colors: usize) -> usize {
    if y >= height / 2 || colors <= 1 {
        return 0;
    }
    let cx = (width as f64 - 1.0) / 2.0;
    let cy = (height as f64 - 1.0) / 2.0;
    let dist = ((x as f64 - cx).powi(2) + (y as f64 - cy).powi(2)).sqrt();
    let radius = width.min(height) as f64 / 2.0;
    ((dist / radius).min(1.0) * (colors - 1) as f64).floor() as usize
}

/// The clean sunset as level indices, row-major.
pub fn sunset_indices(width: usize, height: usize, colors: usize) -> Vec<usize> {
    let mut out = Vec::with_capacity(width * height);
    for y in 0..height {
        for x in 0..width {
            out.push(sunset_level_index(x, y, width, height, colors));
        }
    }
    out
}

/// `clean + N(0, sigma^2)` per pixel, not clipped, seeded.
pub fn add_noise(clean: &[f64], sigma: f64, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    clean
        .iter()
        .map(|v| {
            let z: f64 = StandardNormal.sample(&mut rng);
            v + sigma * z
        })
        .collect()
}

/// Index of the level nearest to `value` (levels sorted ascending; of two equally near, the
/// lower; 0 for NaN). A binary search: a photograph has millions of pixels to quantise.
pub fn nearest_level(levels: &[f64], value: f64) -> usize {
    let above = levels.partition_point(|l| *l < value);
    match (above.checked_sub(1), levels.get(above)) {
        (Some(below), Some(up)) if up - value < value - levels[below] => above,
        (Some(below), _) => below,
        (None, _) => 0,
    }
}

pub fn rmse(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().max(1) as f64;
    (a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum::<f64>() / n).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_span_0_255() {
        let l = gray_levels(50);
        assert_eq!(l.len(), 50);
        assert_eq!(l[0], 0.0);
        assert_eq!(l[49], 255.0);
        assert_eq!(nearest_level(&l, 130.0), 25);
    }

    /// The binary search against a scan of every level, ties, ends and NaN included.
    #[test]
    fn nearest_level_is_the_nearest_of_all() {
        let scan = |levels: &[f64], v: f64| {
            let mut best = 0;
            for (i, l) in levels.iter().enumerate() {
                if (l - v).abs() < (levels[best] - v).abs() {
                    best = i;
                }
            }
            best
        };
        for colors in [1, 2, 3, 10, 50, 256] {
            let l = gray_levels(colors);
            let mut values: Vec<f64> = (-40..=1200).map(|k| k as f64 * 0.25 - 10.0).collect();
            values.extend(l.windows(2).map(|w| 0.5 * (w[0] + w[1])));
            values.push(f64::NAN);
            for v in values {
                assert_eq!(
                    nearest_level(&l, v),
                    scan(&l, v),
                    "{colors} levels, value {v}"
                );
            }
            assert_eq!(nearest_level(&l, f64::INFINITY), colors - 1);
            assert_eq!(nearest_level(&l, f64::NEG_INFINITY), 0);
        }
        assert_eq!(nearest_level(&[], 3.0), 0);
    }
}
