//! Pseudo-moment-matched potentials for the discrete BP baseline of Song et al. 2011 (Sec. 7):
//! from the training image's 4-neighbour co-occurrences (both directions, both axes),
//! `Ψ(a, b) = P(a, b) / (P(a) P(b))` and node prior `P(a)`, with additive smoothing so no entry
//! is zero; node potential `φ_t(a) = P(a) · N(y_t; a, σ²)` (the true noise model).
//! Cost O(pixels + C²) for the tables, O(pixels · C) for the node potentials.

/// Added to every co-occurrence count (in pair units) so that no table entry is zero.
pub const COOCCURRENCE_SMOOTHING: f64 = 1e-3;

/// `(Ψ as a C x C row-major table, P)` from a training image given as level indices.
pub fn pseudo_moment_tables(
    indices: &[usize],
    width: usize,
    height: usize,
    colors: usize,
) -> (Vec<f64>, Vec<f64>) {
    let mut joint = vec![COOCCURRENCE_SMOOTHING; colors * colors];
    let mut add = |a: usize, b: usize| {
        joint[a * colors + b] += 1.0;
        joint[b * colors + a] += 1.0;
    };
    for y in 0..height {
        for x in 0..width {
            let a = indices[y * width + x];
            if x + 1 < width {
                add(a, indices[y * width + x + 1]);
            }
            if y + 1 < height {
                add(a, indices[(y + 1) * width + x]);
            }
        }
    }
    let total: f64 = joint.iter().sum();
    joint.iter_mut().for_each(|v| *v /= total);
    let marginal: Vec<f64> = (0..colors)
        .map(|a| joint[a * colors..(a + 1) * colors].iter().sum())
        .collect();
    let psi = (0..colors * colors)
        .map(|k| joint[k] / (marginal[k / colors] * marginal[k % colors]))
        .collect();
    (psi, marginal)
}

/// φ_t(a) = P(a) N(y_t; level_a, σ²), scaled per pixel so the largest entry is 1 (keeps products
/// far from underflow; BP normalises anyway).
pub fn node_potentials(noisy: &[f64], levels: &[f64], prior: &[f64], sigma: f64) -> Vec<f64> {
    let c = levels.len();
    let mut out = vec![0.0; noisy.len() * c];
    for (t, y) in noisy.iter().enumerate() {
        let row = &mut out[t * c..(t + 1) * c];
        // Work in logs first so a far-off observation does not underflow every state to zero.
        let mut best = f64::NEG_INFINITY;
        for (a, r) in row.iter_mut().enumerate() {
            let z = (y - levels[a]) / sigma;
            *r = prior[a].ln() - 0.5 * z * z;
            best = best.max(*r);
        }
        row.iter_mut().for_each(|r| *r = (*r - best).exp());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_symmetric_positive_and_normalised() {
        let idx = vec![0, 0, 1, 1, 2, 2, 0, 1, 2];
        let (psi, p) = pseudo_moment_tables(&idx, 3, 3, 3);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        for a in 0..3 {
            for b in 0..3 {
                assert!(psi[a * 3 + b] > 0.0);
                assert!((psi[a * 3 + b] - psi[b * 3 + a]).abs() < 1e-12);
            }
        }
    }
}
