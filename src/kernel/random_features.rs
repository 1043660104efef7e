//! Random Fourier features for the Gaussian RBF kernel (Rahimi & Recht 2007), as used for
//! kernel EP messages (Jitkrittum et al. 2015):
//! `z(x) = sqrt(2/D) cos(W x + b)`, rows of `W` drawn from `N(0, sigma^-2 I)`,
//! `b ~ U[0, 2 pi]`, so `E[z(x)^T z(y)] = exp(-||x - y||^2 / (2 sigma^2))`.
//!
//! Expected features of a Gaussian input `X ~ N(m, V)` in closed form:
//! `E[z(X)]_j = sqrt(2/D) cos(w_j . m + b_j) exp(-w_j^T V w_j / 2)`
//! (the characteristic function of a Gaussian).
//!
//! Cost: O(D d) per feature vector, O(D d^2) per expected feature vector.

use nalgebra::{DMatrix, DVector};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use rayon::prelude::*;

use super::error::{KernelError, Result, check_finite};
use super::gram::zeros_lazy;
use super::kernels::Kernel;
use super::params::{NUM_FEATURES, SIGMA};
use super::points::Points;

/// A seeded random Fourier feature map for the Gaussian RBF kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct RandomFourierFeatures {
    sigma: f64,
    /// `D x d`, row-major: frequency `w_j` is `omega[j*d..(j+1)*d]`.
    omega: Vec<f64>,
    phase: Vec<f64>,
    dim: usize,
    scale: f64,
}

impl RandomFourierFeatures {
    /// Draw `num_features` (D) features for inputs of dimension `dim` with bandwidth
    /// `sigma`, from `ChaCha8Rng::seed_from_u64(seed)`. O(D d).
    ///
    /// ```
    /// use beliefscope::kernel::RandomFourierFeatures;
    /// let rff = RandomFourierFeatures::new(1.0, 1, 20_000, 7).unwrap();
    /// let approx = rff.approx_kernel(&[0.0], &[1.0]).unwrap();
    /// assert!((approx - (-0.5f64).exp()).abs() < 0.03);
    /// ```
    pub fn new(sigma: f64, dim: usize, num_features: usize, seed: u64) -> Result<Self> {
        SIGMA.check(sigma)?;
        NUM_FEATURES.check_usize(num_features)?;
        if dim == 0 {
            return Err(KernelError::DimensionMismatch {
                what: "random Fourier features: input dimension (must be >= 1)",
                expected: 1,
                got: 0,
            });
        }
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut omega = Vec::with_capacity(num_features * dim);
        let mut phase = Vec::with_capacity(num_features);
        for _ in 0..num_features {
            for _ in 0..dim {
                let z: f64 = rng.sample(StandardNormal);
                omega.push(z / sigma);
            }
            phase.push(rng.random::<f64>() * std::f64::consts::TAU);
        }
        Ok(RandomFourierFeatures {
            sigma,
            omega,
            phase,
            dim,
            scale: (2.0 / num_features as f64).sqrt(),
        })
    }

    /// Features for an RBF [`Kernel`]; errors for any other kernel.
    pub fn for_kernel(kernel: &Kernel, dim: usize, num_features: usize, seed: u64) -> Result<Self> {
        match *kernel {
            Kernel::Rbf { sigma } => Self::new(sigma, dim, num_features, seed),
            _ => Err(KernelError::InvalidKernel(format!(
                "random Fourier features need an rbf kernel, got {}",
                kernel.name()
            ))),
        }
    }

    /// Bandwidth `sigma`.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// Number of features `D`.
    pub fn num_features(&self) -> usize {
        self.phase.len()
    }

    /// Input dimension `d`.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The frequencies as a `D x d` matrix (row `j` = `w_j`).
    pub fn omega(&self) -> DMatrix<f64> {
        DMatrix::from_row_slice(self.num_features(), self.dim, &self.omega)
    }

    /// The phases `b` (length D).
    pub fn phase(&self) -> &[f64] {
        &self.phase
    }

    #[inline]
    fn w(&self, j: usize) -> &[f64] {
        &self.omega[j * self.dim..(j + 1) * self.dim]
    }

    fn check_point(&self, x: &[f64]) -> Result<()> {
        if x.len() != self.dim {
            return Err(KernelError::DimensionMismatch {
                what: "random Fourier features: point dimension",
                expected: self.dim,
                got: x.len(),
            });
        }
        check_finite("point", x)
    }

    fn fill(&self, x: &[f64], out: &mut [f64]) {
        for (j, o) in out.iter_mut().enumerate() {
            let arg: f64 = self.w(j).iter().zip(x).map(|(a, b)| a * b).sum::<f64>() + self.phase[j];
            *o = self.scale * arg.cos();
        }
    }

    /// Features `z(x) = sqrt(2/D) cos(W x + b)` (length D). O(D d).
    pub fn features(&self, x: &[f64]) -> Result<DVector<f64>> {
        self.check_point(x)?;
        let mut out = DVector::zeros(self.num_features());
        self.fill(x, out.as_mut_slice());
        Ok(out)
    }

    /// Features of many points: `D x n`, parallel over points. O(n D d).
    pub fn features_of(&self, x: &Points) -> Result<DMatrix<f64>> {
        x.check_dim("random Fourier features: point dimension", self.dim)?;
        x.check_finite()?;
        let big_d = self.num_features();
        let mut out = zeros_lazy(big_d, x.len());
        out.as_mut_slice()
            .par_chunks_mut(big_d)
            .enumerate()
            .for_each(|(i, col)| self.fill(x.row(i), col));
        Ok(out)
    }

    /// `z(x)^T z(y)`, the random-feature approximation of `k(x, y)`. O(D d).
    pub fn approx_kernel(&self, x: &[f64], y: &[f64]) -> Result<f64> {
        Ok(self.features(x)?.dot(&self.features(y)?))
    }

    /// Closed-form `E[z(X)]` for `X ~ N(mean, cov)`:
    /// `sqrt(2/D) cos(w_j . mean + b_j) exp(-w_j^T cov w_j / 2)`. `cov` must be `d x d`
    /// (symmetric PSD, not checked beyond shape and finiteness). O(D d^2).
    ///
    /// ```
    /// use beliefscope::kernel::RandomFourierFeatures;
    /// use nalgebra::DMatrix;
    /// let rff = RandomFourierFeatures::new(1.0, 1, 100, 3).unwrap();
    /// // A zero covariance gives the features of the mean.
    /// let e = rff.expected_features(&[0.4], &DMatrix::zeros(1, 1)).unwrap();
    /// assert!((e - rff.features(&[0.4]).unwrap()).amax() < 1e-15);
    /// ```
    pub fn expected_features(&self, mean: &[f64], cov: &DMatrix<f64>) -> Result<DVector<f64>> {
        self.check_point(mean)?;
        let d = self.dim;
        if cov.shape() != (d, d) {
            return Err(KernelError::DimensionMismatch {
                what: "expected features: covariance size",
                expected: d,
                got: cov.nrows().max(cov.ncols()),
            });
        }
        check_finite("covariance", cov.as_slice())?;
        let mut out = DVector::zeros(self.num_features());
        for (j, o) in out.iter_mut().enumerate() {
            let w = self.w(j);
            let arg: f64 = w.iter().zip(mean).map(|(a, b)| a * b).sum::<f64>() + self.phase[j];
            let mut quad = 0.0;
            for a in 0..d {
                let mut s = 0.0;
                for b in 0..d {
                    s += cov[(a, b)] * w[b];
                }
                quad += w[a] * s;
            }
            *o = self.scale * arg.cos() * (-0.5 * quad).exp();
        }
        Ok(out)
    }

    /// [`Self::expected_features`] for a diagonal covariance given by its variances. O(D d).
    pub fn expected_features_diag(&self, mean: &[f64], variances: &[f64]) -> Result<DVector<f64>> {
        self.check_point(mean)?;
        if variances.len() != self.dim {
            return Err(KernelError::DimensionMismatch {
                what: "expected features: number of variances",
                expected: self.dim,
                got: variances.len(),
            });
        }
        check_finite("variances", variances)?;
        let mut out = DVector::zeros(self.num_features());
        for (j, o) in out.iter_mut().enumerate() {
            let w = self.w(j);
            let arg: f64 = w.iter().zip(mean).map(|(a, b)| a * b).sum::<f64>() + self.phase[j];
            let quad: f64 = w.iter().zip(variances).map(|(a, v)| a * a * v).sum();
            *o = self.scale * arg.cos() * (-0.5 * quad).exp();
        }
        Ok(out)
    }
}
