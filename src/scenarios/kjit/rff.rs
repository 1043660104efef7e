//! Supp B.3 and B.6 of Jitkrittum et al. 2015: the quality of random
//! features against the exact kernels. B.3: n univariate messages `N(m, v)`, `m ~ N(0, 9)`,
//! `v ~ Gamma(shape 3, rate 1/4)`, the expected-product kernel with σ² = 3, mean and max
//! |K − K̂| over the Gram matrix for D features (averaged over trials). B.6: 300 such messages,
//! the Gaussian kernel on embeddings (eq. 7; σ² = 3, γ² = the median squared embedding
//! distance, the supplement does not state its kernel), ‖K − K̂‖_F / n of Alg. 1 on a
//! (D_in, D_out) grid. Cost: B.3 O(trials n² D); B.6 O(repeats n (D_in D_out + n D_out)).

use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Gamma, Normal};
use serde::Serialize;

use crate::error::Result;
use crate::inference::kjit::embedding::{
    DiagGaussian, KernelWidths, TwoStageFeatures, expected_product, median_heuristic, tuple_kernel,
};
use crate::kernel::RandomFourierFeatures;

/// The inner kernel width σ² of Supp B.3.
pub const SUPP_B3_SIGMA2: f64 = 3.0;

/// One row of the B.3 table.
#[derive(Debug, Clone, Serialize)]
pub struct B3Row {
    pub features: usize,
    pub mean_abs_error: f64,
    pub max_abs_error: f64,
}

/// One cell of the B.6 grid.
#[derive(Debug, Clone, Serialize)]
pub struct B6Cell {
    pub d_in: usize,
    pub d_out: usize,
    pub frobenius_over_n: f64,
}

/// The Supp B.3 messages.
pub fn supp_b3_messages(n: usize, seed: u64) -> Vec<DiagGaussian> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let normal = Normal::new(0.0, 3.0).expect("positive sd");
    let gamma = Gamma::new(3.0, 4.0).expect("positive shape and scale");
    (0..n)
        .map(|_| DiagGaussian::new(vec![normal.sample(&mut rng)], vec![gamma.sample(&mut rng)]))
        .collect()
}

/// Supp B.3: mean and max |K − K̂| with `features` expected random features, averaged over
/// `trials` feature draws (seeds `seed + t`).
pub fn supp_b3_row(
    msgs: &[DiagGaussian],
    features: usize,
    trials: u64,
    seed: u64,
) -> Result<B3Row> {
    let n = msgs.len();
    let exact = DMatrix::from_fn(n, n, |i, j| {
        expected_product(&msgs[i], &msgs[j], &[SUPP_B3_SIGMA2])
    });
    let (mut mean_sum, mut max_sum) = (0.0, 0.0);
    for t in 0..trials {
        let rff = RandomFourierFeatures::new(SUPP_B3_SIGMA2.sqrt(), 1, features, seed + t)?;
        let mut phi = DMatrix::zeros(features, n);
        for (i, m) in msgs.iter().enumerate() {
            phi.set_column(i, &rff.expected_features_diag(&m.mean, &m.var)?);
        }
        let diff = (phi.transpose() * &phi - &exact).abs();
        mean_sum += diff.mean();
        max_sum += diff.max();
    }
    Ok(B3Row {
        features,
        mean_abs_error: mean_sum / trials as f64,
        max_abs_error: max_sum / trials as f64,
    })
}

/// The B.6 kernel: σ² = 3 and γ² = the median squared embedding distance.
pub fn supp_b6_widths(msgs: &[DiagGaussian]) -> Result<KernelWidths> {
    let median = median_heuristic(msgs, 1.0)?.outer_gamma2;
    Ok(KernelWidths {
        inner_var: vec![SUPP_B3_SIGMA2],
        outer_gamma2: median,
    })
}

/// Supp B.6: ‖K − K̂‖_F / n of Alg. 1 with (D_in, D_out), averaged over `repeats` draws.
pub fn supp_b6_cell(
    msgs: &[DiagGaussian],
    widths: &KernelWidths,
    d_in: usize,
    d_out: usize,
    repeats: u64,
    seed: u64,
) -> Result<B6Cell> {
    let n = msgs.len();
    let exact = DMatrix::from_fn(n, n, |i, j| tuple_kernel(&msgs[i], &msgs[j], widths));
    let mut total = 0.0;
    for r in 0..repeats {
        let map = TwoStageFeatures::new(widths.clone(), d_in, d_out, seed + r)?;
        let mut psi = DMatrix::zeros(d_out, n);
        for (i, m) in msgs.iter().enumerate() {
            psi.set_column(i, &map.features(m)?);
        }
        total += (psi.transpose() * &psi - &exact).norm() / n as f64;
    }
    Ok(B6Cell {
        d_in,
        d_out,
        frobenius_over_n: total / repeats as f64,
    })
}

/// K and K̂ side by side (the room's random-feature lab): the B.6 kernel on `n` of the B.6
/// messages sorted by mean, exact (eq. 7) and from one draw of Alg. 1's features at
/// (D_in, D_out); row-major n × n.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RffHeatmaps {
    pub n: usize,
    pub d_in: usize,
    pub d_out: usize,
    pub exact: Vec<f64>,
    pub approx: Vec<f64>,
    pub max_abs_error: f64,
    pub mean_abs_error: f64,
}

/// The heat maps' messages: the first `n` B.6 messages, sorted by mean so that the kernel's
/// band structure shows.
pub fn rff_heatmaps(
    msgs: &[DiagGaussian],
    widths: &KernelWidths,
    n: usize,
    d_in: usize,
    d_out: usize,
    seed: u64,
) -> Result<RffHeatmaps> {
    let mut chosen: Vec<&DiagGaussian> = msgs.iter().take(n).collect();
    chosen.sort_by(|a, b| a.mean[0].total_cmp(&b.mean[0]));
    let n = chosen.len();
    let map = TwoStageFeatures::new(widths.clone(), d_in, d_out, seed)?;
    let features = chosen
        .iter()
        .map(|m| map.features(m))
        .collect::<Result<Vec<_>>>()?;
    let mut exact = Vec::with_capacity(n * n);
    let mut approx = Vec::with_capacity(n * n);
    for i in 0..n {
        for j in 0..n {
            exact.push(tuple_kernel(chosen[i], chosen[j], widths));
            approx.push(features[i].dot(&features[j]));
        }
    }
    let errors = exact.iter().zip(&approx).map(|(a, b)| (a - b).abs());
    let max_abs_error = errors.clone().fold(0.0, f64::max);
    let mean_abs_error = errors.sum::<f64>() / (n * n).max(1) as f64;
    Ok(RffHeatmaps {
        n,
        d_in,
        d_out,
        exact,
        approx,
        max_abs_error,
        mean_abs_error,
    })
}

/// How many messages the heat maps show.
pub const HEATMAP_MESSAGES: usize = 60;

/// The whole laboratory: the B.3 table (n = 1000, 10 trials) and the B.6 grid (n = 300,
/// 5 repeats), seeded from `seed`.
#[derive(Debug, Clone, Serialize)]
pub struct RffReport {
    pub experiment: &'static str,
    pub supp_b3: Vec<B3Row>,
    pub supp_b6: Vec<B6Cell>,
    pub supp_b6_gamma2: f64,
    pub heatmaps: RffHeatmaps,
}

/// The settings of the laboratory's steps: B.3 rows first, then B.6 cells.
pub const B3_FEATURES: [usize; 3] = [500, 1000, 2000];
pub const B6_D_IN: [usize; 3] = [100, 300, 600];
pub const B6_D_OUT: [usize; 4] = [100, 300, 500, 700];

/// The laboratory, one table entry per step.
pub struct RffLab {
    seed: u64,
    b3_messages: Vec<DiagGaussian>,
    b6_messages: Vec<DiagGaussian>,
    b6_widths: KernelWidths,
    pub report: RffReport,
}

impl RffLab {
    /// The lab with its heat maps at the run's (D_in, D_out).
    pub fn new(seed: u64, d_in: usize, d_out: usize) -> Result<RffLab> {
        let b6_messages = supp_b3_messages(300, seed.wrapping_add(1));
        let b6_widths = supp_b6_widths(&b6_messages)?;
        let heatmaps = rff_heatmaps(
            &b6_messages,
            &b6_widths,
            HEATMAP_MESSAGES,
            d_in,
            d_out,
            seed.wrapping_add(300),
        )?;
        Ok(RffLab {
            seed,
            b3_messages: supp_b3_messages(1000, seed),
            report: RffReport {
                experiment: "rff",
                supp_b3: Vec::new(),
                supp_b6: Vec::new(),
                supp_b6_gamma2: b6_widths.outer_gamma2,
                heatmaps,
            },
            b6_messages,
            b6_widths,
        })
    }

    pub fn steps() -> usize {
        B3_FEATURES.len() + B6_D_IN.len() * B6_D_OUT.len()
    }

    /// Computes step k; returns (name, value) for the iteration's metrics.
    pub fn step(&mut self, k: usize) -> Result<(String, f64)> {
        if k < B3_FEATURES.len() {
            let row = supp_b3_row(&self.b3_messages, B3_FEATURES[k], 10, self.seed + 100)?;
            let out = (
                format!("b3_mean_abs_error_D{}", row.features),
                row.mean_abs_error,
            );
            self.report.supp_b3.push(row);
            return Ok(out);
        }
        let c = k - B3_FEATURES.len();
        let (d_in, d_out) = (B6_D_IN[c / B6_D_OUT.len()], B6_D_OUT[c % B6_D_OUT.len()]);
        let cell = supp_b6_cell(
            &self.b6_messages,
            &self.b6_widths,
            d_in,
            d_out,
            5,
            self.seed + 200,
        )?;
        let out = (
            format!("b6_frobenius_over_n_{d_in}_{d_out}"),
            cell.frobenius_over_n,
        );
        self.report.supp_b6.push(cell);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heatmaps_are_exact_on_the_diagonal_and_improve_with_more_features() {
        let msgs = supp_b3_messages(300, 4);
        let widths = supp_b6_widths(&msgs).unwrap();
        let coarse = rff_heatmaps(&msgs, &widths, 40, 20, 20, 9).unwrap();
        let fine = rff_heatmaps(&msgs, &widths, 40, 600, 1500, 9).unwrap();
        assert_eq!(fine.n, 40);
        for i in 0..40 {
            // The Gaussian kernel on embeddings is 1 at zero distance, and symmetric.
            assert!((fine.exact[i * 40 + i] - 1.0).abs() < 1e-12);
            for j in 0..40 {
                assert!((fine.exact[i * 40 + j] - fine.exact[j * 40 + i]).abs() < 1e-12);
            }
        }
        // Sorted by mean: neighbours are more alike than the two ends.
        assert!(fine.exact[1] > fine.exact[39]);
        assert!(fine.mean_abs_error < 0.5 * coarse.mean_abs_error);
        assert!(fine.max_abs_error < 0.2, "{}", fine.max_abs_error);
    }
}
