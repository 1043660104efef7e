//! The kernel on tuples of messages of Jitkrittum et al. 2015, Sec. 3.1–3.2:
//! the expected product of the inner Gaussian kernel `k(x − y) = exp(−½ (x−y)ᵀ Σ⁻¹ (x−y))`,
//! `⟨μ_r, μ_s⟩ = sqrt(det Σ / det(V_r + V_s + Σ)) exp(−½ Δmᵀ (V_r + V_s + Σ)⁻¹ Δm)` (Supp B.3,
//! diagonal here), the outer Gaussian kernel on embeddings (eq. 7), the median heuristic of
//! Supp A, and the two-stage random features of Alg. 1 / eq. (8):
//! `φ̂_i = sqrt(2/D_in) cos(ω_iᵀm + b_i) exp(−½ ω_iᵀVω_i)`, `ω_i ~ N(0, Σ⁻¹)`;
//! `ψ̂_j = sqrt(2/D_out) cos(ν_jᵀφ̂ + c_j)`, `ν_j ~ N(0, γ⁻² I)`.
//!
//! Cost: exact inner product O(c); features O(D_in c + D_in D_out) per tuple; median heuristic
//! O(B² c).

use nalgebra::DVector;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::kernel::{DrawMatrix, RandomFourierFeatures};

/// A tuple of messages as one diagonal Gaussian (after moment matching).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiagGaussian {
    pub mean: Vec<f64>,
    pub var: Vec<f64>,
}

impl DiagGaussian {
    pub fn new(mean: Vec<f64>, var: Vec<f64>) -> DiagGaussian {
        DiagGaussian { mean, var }
    }
}

/// The inner kernel's widths `σ_l²` and the outer kernel's `γ²`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelWidths {
    pub inner_var: Vec<f64>,
    pub outer_gamma2: f64,
}

/// `⟨μ_r, μ_s⟩` in closed form (Supp B.3) for diagonal Gaussians and `Σ = diag(inner_var)`.
pub fn expected_product(r: &DiagGaussian, s: &DiagGaussian, inner_var: &[f64]) -> f64 {
    let mut log = 0.0;
    for (l, &width) in inner_var.iter().enumerate() {
        let total = r.var[l] + s.var[l] + width;
        let dm = r.mean[l] - s.mean[l];
        log += 0.5 * (width / total).ln() - 0.5 * dm * dm / total;
    }
    log.exp()
}

/// `‖μ_r − μ_s‖²_H` from three closed-form inner products.
pub fn embedding_distance2(r: &DiagGaussian, s: &DiagGaussian, inner_var: &[f64]) -> f64 {
    (expected_product(r, r, inner_var) - 2.0 * expected_product(r, s, inner_var)
        + expected_product(s, s, inner_var))
    .max(0.0)
}

/// The Gaussian kernel on embeddings, eq. (7).
pub fn tuple_kernel(r: &DiagGaussian, s: &DiagGaussian, widths: &KernelWidths) -> f64 {
    (-embedding_distance2(r, s, &widths.inner_var) / (2.0 * widths.outer_gamma2)).exp()
}

/// Supp A as coded: `σ_l²` = mean variance of coordinate l over (at most 1500 of) the tuples;
/// `γ² = median_factor · median{‖μ_i − μ_j‖² : i ≤ j}` (zero diagonal pairs included).
pub fn median_heuristic(tuples: &[DiagGaussian], median_factor: f64) -> Result<KernelWidths> {
    let Some(first) = tuples.first() else {
        return Err(Error::Other("median heuristic: no tuples".into()));
    };
    if !(median_factor.is_finite() && median_factor > 0.0) {
        return Err(Error::param(
            "median_factor",
            format!("must be positive, got {median_factor}"),
        ));
    }
    let used = &tuples[..tuples.len().min(1500)];
    let c = first.mean.len();
    let inner_var: Vec<f64> = (0..c)
        .map(|l| used.iter().map(|t| t.var[l]).sum::<f64>() / used.len() as f64)
        .map(|v| v.max(1e-12))
        .collect();
    let mut d2 = Vec::with_capacity(used.len() * (used.len() + 1) / 2);
    for i in 0..used.len() {
        for j in i..used.len() {
            d2.push(embedding_distance2(&used[i], &used[j], &inner_var));
        }
    }
    d2.sort_by(f64::total_cmp);
    let n = d2.len();
    let median = if n % 2 == 1 {
        d2[n / 2]
    } else {
        0.5 * (d2[n / 2 - 1] + d2[n / 2])
    };
    let outer_gamma2 = (median_factor * median).max(1e-12);
    Ok(KernelWidths {
        inner_var,
        outer_gamma2,
    })
}

/// The frozen two-stage random feature map of Alg. 1.
#[derive(Debug, Clone)]
pub struct TwoStageFeatures {
    widths: KernelWidths,
    /// Stage 1 with unit bandwidth on inputs pre-scaled by `1/σ_l`.
    inner: RandomFourierFeatures,
    /// `D_out × D_in`, rows `ν_j`, stored in f32 and used in f64 (`kernel::DrawMatrix` says
    /// why).
    outer: DrawMatrix,
    outer_phase: DVector<f64>,
}

impl TwoStageFeatures {
    /// Draws (D_in, D_out) features with `ChaCha8Rng::seed_from_u64(seed)` (stage 1 from
    /// `seed`, stage 2 from `seed + 1`).
    pub fn new(widths: KernelWidths, d_in: usize, d_out: usize, seed: u64) -> Result<Self> {
        if d_in == 0 || d_out == 0 {
            return Err(Error::param(
                "d_in/d_out",
                format!("feature counts must be positive, got ({d_in}, {d_out})"),
            ));
        }
        let inner = RandomFourierFeatures::new(1.0, widths.inner_var.len(), d_in, seed)?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed.wrapping_add(1));
        let inv_gamma = 1.0 / widths.outer_gamma2.sqrt();
        // Row-by-row draws, so a map with more rows extends one with fewer.
        let mut outer = Vec::with_capacity(d_out * d_in);
        let mut outer_phase = DVector::zeros(d_out);
        for j in 0..d_out {
            for _ in 0..d_in {
                let z: f64 = rng.sample(StandardNormal);
                outer.push(z * inv_gamma);
            }
            outer_phase[j] = rng.random::<f64>() * std::f64::consts::TAU;
        }
        let outer = DrawMatrix::from_row_data(d_out, d_in, &outer);
        Ok(TwoStageFeatures {
            widths,
            inner,
            outer,
            outer_phase,
        })
    }

    pub fn widths(&self) -> &KernelWidths {
        &self.widths
    }

    pub fn d_in(&self) -> usize {
        self.outer.cols()
    }

    pub fn d_out(&self) -> usize {
        self.outer.rows()
    }

    /// Stage 1: `φ̂(r)`, whose dot products approximate `⟨μ_r, μ_s⟩`. O(D_in c).
    pub fn embedding(&self, r: &DiagGaussian) -> Result<DVector<f64>> {
        let scaled_mean: Vec<f64> = r
            .mean
            .iter()
            .zip(&self.widths.inner_var)
            .map(|(m, v)| m / v.sqrt())
            .collect();
        let scaled_var: Vec<f64> = r
            .var
            .iter()
            .zip(&self.widths.inner_var)
            .map(|(x, v)| x / v)
            .collect();
        Ok(self
            .inner
            .expected_features_diag(&scaled_mean, &scaled_var)?)
    }

    /// Stages 1 and 2: `ψ̂(r)`, whose dot products approximate eq. (7). O(D_in c + D_in D_out).
    pub fn features(&self, r: &DiagGaussian) -> Result<DVector<f64>> {
        let phi = self.embedding(r)?;
        let mut out = self.outer_phase.clone();
        self.outer.mul_add_into(phi.as_slice(), out.as_mut_slice());
        let scale = (2.0 / self.d_out() as f64).sqrt();
        out.apply(|v| *v = scale * v.cos());
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kjit_expected_product_of_points_is_the_kernel() {
        let r = DiagGaussian::new(vec![0.3, -1.0], vec![0.0, 0.0]);
        let s = DiagGaussian::new(vec![1.3, 0.0], vec![0.0, 0.0]);
        let want = (-0.5f64 * (1.0 / 2.0 + 1.0 / 0.5)).exp();
        assert!((expected_product(&r, &s, &[2.0, 0.5]) - want).abs() < 1e-15);
    }

    #[test]
    fn kjit_median_heuristic_refuses_empty_input() {
        assert!(median_heuristic(&[], 0.5).is_err());
        let t = vec![DiagGaussian::new(vec![0.0], vec![1.0])];
        assert!(median_heuristic(&t, 0.0).is_err());
    }
}
