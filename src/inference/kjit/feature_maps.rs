//! The five random-feature operators compared in Supp C of Jitkrittum et al. 2015 (the
//! kernels of Supp B.2–B.5), each a finite map from a tuple of incoming messages
//! (moment-matched to a diagonal Gaussian) to features on which Bayesian linear regression
//! runs:
//! - **KJIT** (Secs. 3.1–3.2, Alg. 1): the Gaussian kernel on joint mean embeddings;
//!   inner widths the average message variances (Supp A), `γ² = scale · median`.
//! - **MV** (Supp B.2): a Gaussian kernel on the vector of means and variances
//!   (each coordinate standardised; width² = `scale · median` squared distance).
//! - **Joint EP** (B.3): the expected product kernel on the joint, linear outer kernel:
//!   `φ̂(r)` alone, with inner widths `scale · average variance`.
//! - **Sum** (B.5): `[φ̂⁽¹⁾; φ̂⁽²⁾]`, one expected-product map per message.
//! - **Product** (B.4): `φ̂⁽¹⁾ ⊗ φ̂⁽²⁾` (dimension `D₁ D₂`).
//!
//! `scale` is the factor of the median heuristic that Exp. 1 selects by leave-one-out
//! cross-validation. Cost per tuple: KJIT O(D_in c + D_in D_out); MV O(D c); joint and sum
//! O(D c); product O(D₁ c + D₁ D₂).

use nalgebra::DVector;
use serde::Serialize;

use super::embedding::{DiagGaussian, KernelWidths, TwoStageFeatures, median_heuristic};
use crate::error::{Error, Result};
use crate::kernel::RandomFourierFeatures;

/// The operators of the Supp C table, in its order (`VARIANTS` lists them so).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[derive(strum::VariantArray, strum::IntoStaticStr)]
#[strum(serialize_all = "kebab-case")]
pub enum OperatorKind {
    MeanVariance,
    JointExpectedProduct,
    SumOfExpectedProducts,
    ProductOfExpectedProducts,
    Kjit,
}

impl OperatorKind {
    pub fn name(self) -> &'static str {
        self.into()
    }

    /// Mean (s.d.) of log KL in the Supp C table.
    pub fn paper_log_kl(self) -> (f64, f64) {
        match self {
            OperatorKind::Kjit => (-8.97, 1.57),
            OperatorKind::MeanVariance => (-6.96, 1.67),
            OperatorKind::JointExpectedProduct => (-2.78, 1.82),
            OperatorKind::SumOfExpectedProducts => (-1.05, 1.93),
            OperatorKind::ProductOfExpectedProducts => (-2.64, 1.65),
        }
    }
}

/// How many features a map has: KJIT uses (`d_in`, `d_out`); the others `d_out` in total.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FeatureBudget {
    pub d_in: usize,
    pub d_out: usize,
}

enum Map {
    Kjit(Box<TwoStageFeatures>),
    /// Standardising shifts and scales of the (means, variances) vector.
    MeanVariance {
        rff: RandomFourierFeatures,
        shift: Vec<f64>,
        scale: Vec<f64>,
    },
    /// One expected-product map over all coordinates, inputs pre-scaled by `1/σ_l`.
    Joint {
        rff: RandomFourierFeatures,
        inner_var: Vec<f64>,
    },
    /// One map per coordinate.
    PerMessage {
        maps: Vec<RandomFourierFeatures>,
        inner_var: Vec<f64>,
        product: bool,
    },
}

/// A frozen feature map of one of the five operators.
pub struct FeatureMap {
    kind: OperatorKind,
    map: Map,
    dim: usize,
}

fn median_of(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        0.5 * (values[n / 2 - 1] + values[n / 2])
    }
}

/// Standardises the (means, variances) vector of every tuple.
fn mean_variance_vector(t: &DiagGaussian) -> Vec<f64> {
    t.mean.iter().chain(&t.var).copied().collect()
}

impl FeatureMap {
    /// The map of `kind` with its widths from `train` (at most 1500 tuples are used for the
    /// heuristics, as Supp A) times `scale`, features drawn from `seed`.
    pub fn new(
        kind: OperatorKind,
        train: &[DiagGaussian],
        scale: f64,
        budget: FeatureBudget,
        seed: u64,
    ) -> Result<FeatureMap> {
        let Some(first) = train.first() else {
            return Err(Error::Other("feature map: no training tuples".into()));
        };
        if !(scale.is_finite() && scale > 0.0) {
            return Err(Error::param(
                "median_factor",
                format!("must be positive, got {scale}"),
            ));
        }
        if budget.d_in == 0 || budget.d_out < 4 {
            return Err(Error::param(
                "d_in/d_out",
                format!(
                    "need at least 1 and 4 features, got ({}, {})",
                    budget.d_in, budget.d_out
                ),
            ));
        }
        let used = &train[..train.len().min(1500)];
        let c = first.mean.len();
        let average_var: Vec<f64> = (0..c)
            .map(|l| (used.iter().map(|t| t.var[l]).sum::<f64>() / used.len() as f64).max(1e-12))
            .collect();
        let (map, dim) = match kind {
            OperatorKind::Kjit => {
                let widths = median_heuristic(used, scale)?;
                let f = TwoStageFeatures::new(widths, budget.d_in, budget.d_out, seed)?;
                (Map::Kjit(Box::new(f)), budget.d_out)
            }
            OperatorKind::MeanVariance => {
                let vectors: Vec<Vec<f64>> = used.iter().map(mean_variance_vector).collect();
                let k = 2 * c;
                let shift: Vec<f64> = (0..k)
                    .map(|j| vectors.iter().map(|v| v[j]).sum::<f64>() / vectors.len() as f64)
                    .collect();
                let scale_sd: Vec<f64> = (0..k)
                    .map(|j| {
                        let var = vectors
                            .iter()
                            .map(|v| (v[j] - shift[j]).powi(2))
                            .sum::<f64>()
                            / vectors.len() as f64;
                        var.sqrt().max(1e-12)
                    })
                    .collect();
                let z: Vec<Vec<f64>> = vectors
                    .iter()
                    .map(|v| (0..k).map(|j| (v[j] - shift[j]) / scale_sd[j]).collect())
                    .collect();
                let mut d2 = Vec::with_capacity(z.len() * (z.len() + 1) / 2);
                for i in 0..z.len() {
                    for j in i..z.len() {
                        d2.push(z[i].iter().zip(&z[j]).map(|(a, b)| (a - b).powi(2)).sum());
                    }
                }
                let width2 = (scale * median_of(d2)).max(1e-12);
                let rff = RandomFourierFeatures::new(width2.sqrt(), k, budget.d_out, seed)?;
                (
                    Map::MeanVariance {
                        rff,
                        shift,
                        scale: scale_sd,
                    },
                    budget.d_out,
                )
            }
            OperatorKind::JointExpectedProduct => {
                let inner_var: Vec<f64> = average_var.iter().map(|v| v * scale).collect();
                let rff = RandomFourierFeatures::new(1.0, c, budget.d_out, seed)?;
                (Map::Joint { rff, inner_var }, budget.d_out)
            }
            OperatorKind::SumOfExpectedProducts | OperatorKind::ProductOfExpectedProducts => {
                let product = kind == OperatorKind::ProductOfExpectedProducts;
                let each = if product {
                    (budget.d_out as f64).powf(1.0 / c as f64).round().max(2.0) as usize
                } else {
                    (budget.d_out / c).max(2)
                };
                let maps = (0..c)
                    .map(|l| RandomFourierFeatures::new(1.0, 1, each, seed.wrapping_add(l as u64)))
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                let inner_var: Vec<f64> = average_var.iter().map(|v| v * scale).collect();
                let dim = if product {
                    each.pow(c as u32)
                } else {
                    each * c
                };
                (
                    Map::PerMessage {
                        maps,
                        inner_var,
                        product,
                    },
                    dim,
                )
            }
        };
        Ok(FeatureMap { kind, map, dim })
    }

    pub fn kind(&self) -> OperatorKind {
        self.kind
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    /// KJIT's kernel widths (None for the other operators).
    pub fn kjit_widths(&self) -> Option<&KernelWidths> {
        match &self.map {
            Map::Kjit(f) => Some(f.widths()),
            _ => None,
        }
    }

    /// The features of one tuple.
    pub fn features(&self, t: &DiagGaussian) -> Result<DVector<f64>> {
        match &self.map {
            Map::Kjit(f) => f.features(t),
            Map::MeanVariance { rff, shift, scale } => {
                let z: Vec<f64> = mean_variance_vector(t)
                    .iter()
                    .zip(shift.iter().zip(scale))
                    .map(|(v, (s, sd))| (v - s) / sd)
                    .collect();
                Ok(rff.features(&z)?)
            }
            Map::Joint { rff, inner_var } => {
                let (m, v) = scaled(t, inner_var);
                Ok(rff.expected_features_diag(&m, &v)?)
            }
            Map::PerMessage {
                maps,
                inner_var,
                product,
            } => {
                let (m, v) = scaled(t, inner_var);
                let parts = maps
                    .iter()
                    .enumerate()
                    .map(|(l, rff)| rff.expected_features_diag(&[m[l]], &[v[l]]))
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                if *product {
                    let mut out = DVector::from_element(1, 1.0);
                    for p in &parts {
                        out = out.kronecker(p);
                    }
                    Ok(out)
                } else {
                    let mut out = Vec::with_capacity(self.dim);
                    for p in &parts {
                        out.extend(p.iter());
                    }
                    Ok(DVector::from_vec(out))
                }
            }
        }
    }
}

/// Means and variances divided by the inner widths (unit-bandwidth features then give the
/// expected product kernel with `Σ = diag(inner_var)`).
fn scaled(t: &DiagGaussian, inner_var: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let m = t
        .mean
        .iter()
        .zip(inner_var)
        .map(|(m, w)| m / w.sqrt())
        .collect();
    let v = t.var.iter().zip(inner_var).map(|(v, w)| v / w).collect();
    (m, v)
}

#[cfg(test)]
mod tests {
    use strum::VariantArray;

    use super::*;
    use crate::inference::kjit::embedding::expected_product;

    fn tuples() -> Vec<DiagGaussian> {
        (0..40)
            .map(|i| {
                let x = i as f64 / 10.0;
                DiagGaussian::new(vec![x - 2.0, 0.3 + 0.01 * x], vec![1.0 + x, 0.02])
            })
            .collect()
    }

    #[test]
    fn kjit_feature_maps_have_their_stated_dimensions() {
        let train = tuples();
        let budget = FeatureBudget {
            d_in: 50,
            d_out: 100,
        };
        for &kind in OperatorKind::VARIANTS {
            let map = FeatureMap::new(kind, &train, 1.0, budget, 3).unwrap();
            let f = map.features(&train[0]).unwrap();
            assert_eq!(f.len(), map.dim(), "{}", kind.name());
            assert!(f.iter().all(|v| v.is_finite()));
        }
        let product = FeatureMap::new(
            OperatorKind::ProductOfExpectedProducts,
            &train,
            1.0,
            budget,
            3,
        )
        .unwrap();
        assert_eq!(product.dim(), 100);
    }

    #[test]
    fn kjit_sum_map_approximates_the_sum_of_per_message_kernels() {
        // With many features, ⟨f(r), f(s)⟩ ≈ Σ_l ⟨μ_r^(l), μ_s^(l)⟩ (Supp B.5).
        let train = tuples();
        let budget = FeatureBudget {
            d_in: 1,
            d_out: 40_000,
        };
        let map =
            FeatureMap::new(OperatorKind::SumOfExpectedProducts, &train, 1.0, budget, 5).unwrap();
        let (r, s) = (&train[3], &train[20]);
        let approx = map.features(r).unwrap().dot(&map.features(s).unwrap());
        let avg: Vec<f64> = (0..2)
            .map(|l| train.iter().map(|t| t.var[l]).sum::<f64>() / train.len() as f64)
            .collect();
        let exact: f64 = (0..2)
            .map(|l| {
                let a = DiagGaussian::new(vec![r.mean[l]], vec![r.var[l]]);
                let b = DiagGaussian::new(vec![s.mean[l]], vec![s.var[l]]);
                expected_product(&a, &b, &[avg[l]])
            })
            .sum();
        assert!((approx - exact).abs() < 0.03, "{approx} vs {exact}");
    }
}
