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

/// Index of the level nearest to `value` (levels sorted ascending).
pub fn nearest_level(levels: &[f64], value: f64) -> usize {
    let mut best = 0;
    for (i, l) in levels.iter().enumerate() {
        if (l - value).abs() < (levels[best] - value).abs() {
            best = i;
        }
    }
    best
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
}
