//! The EM baseline of the pendigits experiment (Wang & Gordon, AAAI 2020, Sec. 6,
//! "Handwritten Digit Recognition", Fig. 7) on our stand-in model class (the paper's Fig. 6
//! graph is not recoverable): an HMM with k hidden states and 2-D Gaussian emissions (full
//! covariance, floored at `VARIANCE_FLOOR` on the diagonal), learned by Baum–Welch (scaled
//! forward–backward), best of several random restarts by training log-likelihood.
//!
//! Cost: one iteration O(N · T · k²) for N sequences of length T.

use rand::Rng;

/// Added to each emission covariance's diagonal (pen coordinates are integers in 0..100).
pub const VARIANCE_FLOOR: f64 = 1.0;

/// A Gaussian-emission HMM.
#[derive(Debug, Clone, PartialEq)]
pub struct GaussianHmm {
    pub initial: Vec<f64>,
    /// Row-major k × k, rows sum to 1.
    pub transition: Vec<f64>,
    pub means: Vec<[f64; 2]>,
    /// [σxx, σxy, σyy] per state.
    pub covariances: Vec<[f64; 3]>,
}

fn log_gaussian(x: &[f64; 2], mean: &[f64; 2], c: &[f64; 3]) -> f64 {
    let det = c[0] * c[2] - c[1] * c[1];
    let (dx, dy) = (x[0] - mean[0], x[1] - mean[1]);
    let q = (c[2] * dx * dx - 2.0 * c[1] * dx * dy + c[0] * dy * dy) / det;
    -0.5 * q - 0.5 * det.ln() - std::f64::consts::LN_2 - std::f64::consts::PI.ln()
}

impl GaussianHmm {
    pub fn states(&self) -> usize {
        self.initial.len()
    }

    /// A random start: means at random training points, the pooled covariance, Dirichlet-ish
    /// transitions.
    pub fn random(k: usize, data: &[Vec<[f64; 2]>], rng: &mut impl Rng) -> GaussianHmm {
        let points: Vec<&[f64; 2]> = data.iter().flatten().collect();
        let n = points.len().max(1) as f64;
        let mx = points.iter().map(|p| p[0]).sum::<f64>() / n;
        let my = points.iter().map(|p| p[1]).sum::<f64>() / n;
        let sxx = points.iter().map(|p| (p[0] - mx).powi(2)).sum::<f64>() / n + VARIANCE_FLOOR;
        let syy = points.iter().map(|p| (p[1] - my).powi(2)).sum::<f64>() / n + VARIANCE_FLOOR;
        let row = |rng: &mut dyn rand::RngCore| {
            let w: Vec<f64> = (0..k).map(|_| rng.random::<f64>() + 0.1).collect();
            let s: f64 = w.iter().sum();
            w.into_iter().map(|x| x / s).collect::<Vec<f64>>()
        };
        GaussianHmm {
            initial: row(rng),
            transition: (0..k).flat_map(|_| row(rng)).collect(),
            means: (0..k)
                .map(|_| {
                    if points.is_empty() {
                        [mx, my]
                    } else {
                        *points[rng.random_range(0..points.len())]
                    }
                })
                .collect(),
            covariances: vec![[sxx, 0.0, syy]; k],
        }
    }

    /// Scaled forward pass: log P(sequence).
    pub fn log_likelihood(&self, seq: &[[f64; 2]]) -> f64 {
        self.forward(seq).1
    }

    fn emissions(&self, seq: &[[f64; 2]]) -> (Vec<Vec<f64>>, Vec<f64>) {
        // Per step, the emission likelihoods scaled by their max (log scale returned).
        seq.iter()
            .map(|x| {
                let logs: Vec<f64> = (0..self.states())
                    .map(|j| log_gaussian(x, &self.means[j], &self.covariances[j]))
                    .collect();
                let m = logs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                (logs.iter().map(|l| (l - m).exp()).collect(), m)
            })
            .unzip()
    }

    /// Scaled α and log P(sequence).
    fn forward(&self, seq: &[[f64; 2]]) -> (Vec<Vec<f64>>, f64) {
        let k = self.states();
        let (b, shift) = self.emissions(seq);
        let mut alpha = Vec::with_capacity(seq.len());
        let mut ll = 0.0;
        for t in 0..seq.len() {
            let mut a: Vec<f64> = if t == 0 {
                (0..k).map(|j| self.initial[j] * b[0][j]).collect()
            } else {
                let prev: &Vec<f64> = &alpha[t - 1];
                (0..k)
                    .map(|j| {
                        (0..k)
                            .map(|i| prev[i] * self.transition[i * k + j])
                            .sum::<f64>()
                            * b[t][j]
                    })
                    .collect()
            };
            let c: f64 = a.iter().sum::<f64>().max(1e-300);
            a.iter_mut().for_each(|x| *x /= c);
            ll += c.ln() + shift[t];
            alpha.push(a);
        }
        (alpha, ll)
    }

    /// One Baum–Welch iteration over `data`; returns the log-likelihood before the update.
    pub fn em_step(&mut self, data: &[Vec<[f64; 2]>]) -> f64 {
        let k = self.states();
        let mut init = vec![1e-6; k];
        let mut trans = vec![1e-6; k * k];
        let mut w = vec![1e-12; k];
        let mut sx = vec![[0.0; 2]; k];
        let mut sxx = vec![[0.0; 3]; k];
        let mut total = 0.0;
        for seq in data {
            let (b, _) = self.emissions(seq);
            let (alpha, ll) = self.forward(seq);
            total += ll;
            let t_len = seq.len();
            let mut beta = vec![vec![1.0; k]; t_len];
            for t in (0..t_len.saturating_sub(1)).rev() {
                let mut bt: Vec<f64> = (0..k)
                    .map(|i| {
                        (0..k)
                            .map(|j| self.transition[i * k + j] * b[t + 1][j] * beta[t + 1][j])
                            .sum()
                    })
                    .collect();
                let c: f64 = bt.iter().sum::<f64>().max(1e-300);
                bt.iter_mut().for_each(|x| *x /= c);
                beta[t] = bt;
            }
            for t in 0..t_len {
                let mut g: Vec<f64> = (0..k).map(|j| alpha[t][j] * beta[t][j]).collect();
                let s: f64 = g.iter().sum::<f64>().max(1e-300);
                g.iter_mut().for_each(|x| *x /= s);
                if t == 0 {
                    init.iter_mut().zip(&g).for_each(|(a, b)| *a += b);
                }
                let x = seq[t];
                for j in 0..k {
                    w[j] += g[j];
                    sx[j][0] += g[j] * x[0];
                    sx[j][1] += g[j] * x[1];
                    sxx[j][0] += g[j] * x[0] * x[0];
                    sxx[j][1] += g[j] * x[0] * x[1];
                    sxx[j][2] += g[j] * x[1] * x[1];
                }
                if t + 1 < t_len {
                    let mut xi = vec![0.0; k * k];
                    for i in 0..k {
                        for j in 0..k {
                            xi[i * k + j] = alpha[t][i]
                                * self.transition[i * k + j]
                                * b[t + 1][j]
                                * beta[t + 1][j];
                        }
                    }
                    let s: f64 = xi.iter().sum::<f64>().max(1e-300);
                    trans.iter_mut().zip(&xi).for_each(|(a, b)| *a += b / s);
                }
            }
        }
        let s: f64 = init.iter().sum();
        self.initial = init.iter().map(|x| x / s).collect();
        for i in 0..k {
            let s: f64 = trans[i * k..(i + 1) * k].iter().sum();
            for j in 0..k {
                self.transition[i * k + j] = trans[i * k + j] / s;
            }
            let m = [sx[i][0] / w[i], sx[i][1] / w[i]];
            self.means[i] = m;
            self.covariances[i] = [
                sxx[i][0] / w[i] - m[0] * m[0] + VARIANCE_FLOOR,
                sxx[i][1] / w[i] - m[0] * m[1],
                sxx[i][2] / w[i] - m[1] * m[1] + VARIANCE_FLOOR,
            ];
        }
        total
    }

    /// Baum–Welch to relative change `tolerance` or `max_iterations`, best of `restarts`.
    pub fn fit(
        k: usize,
        data: &[Vec<[f64; 2]>],
        restarts: usize,
        max_iterations: usize,
        tolerance: f64,
        rng: &mut impl Rng,
    ) -> (GaussianHmm, f64) {
        let mut best: Option<(GaussianHmm, f64)> = None;
        for _ in 0..restarts.max(1) {
            let mut hmm = GaussianHmm::random(k, data, rng);
            let mut previous = f64::NEG_INFINITY;
            for _ in 0..max_iterations {
                let ll = hmm.em_step(data);
                if (ll - previous).abs() <= tolerance * ll.abs() {
                    break;
                }
                previous = ll;
            }
            let ll: f64 = data.iter().map(|s| hmm.log_likelihood(s)).sum();
            if best.as_ref().is_none_or(|b| ll > b.1) {
                best = Some((hmm, ll));
            }
        }
        best.unwrap_or_else(|| unreachable!("at least one restart"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn baum_welch_never_lowers_the_likelihood() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(4);
        let data: Vec<Vec<[f64; 2]>> = (0..40)
            .map(|i| {
                (0..8)
                    .map(|t| {
                        let a = (i * 7 + t * 13) as f64;
                        [
                            (a * 0.37).sin() * 30.0 + 50.0,
                            (t as f64) * 10.0 + (a * 0.11).cos(),
                        ]
                    })
                    .collect()
            })
            .collect();
        let mut hmm = GaussianHmm::random(3, &data, &mut rng);
        let mut previous = f64::NEG_INFINITY;
        for _ in 0..30 {
            let ll = hmm.em_step(&data);
            assert!(ll >= previous - 1e-7 * ll.abs(), "{ll} < {previous}");
            previous = ll;
        }
    }
}
