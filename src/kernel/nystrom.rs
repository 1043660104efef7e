//! Nyström features (Williams & Seeger 2001): with landmarks `L` and landmark Gram
//! `K_LL = U Λ U^T`, the features `z(y) = Λ_r^{-1/2} U_r^T k_L(y)` satisfy
//! `z(x)^T z(y) = k_L(x)^T K_LL^+ k_L(y) ≈ k(x, y)`; eigenvalues below `rcond * λ_max`
//! are dropped, so duplicate landmarks are harmless.
//!
//! Cost: O(L^2 d + L^3) to build, O(L d + r L) per feature vector.

use nalgebra::{DMatrix, DVector};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::error::{KernelError, Result, check_finite};
use super::gram::{check_inputs, gram};
use super::kernels::Kernel;
use super::params::{NUM_LANDMARKS, NYSTROM_RCOND};
use super::points::Points;

/// How to choose the Nyström landmarks from the training points.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Landmarks {
    /// These training point indices.
    Indices(Vec<usize>),
    /// `count` distinct training points drawn uniformly with `ChaCha8Rng::seed_from_u64(seed)`
    /// (all points if `count >= n`).
    Random {
        /// Number of landmarks ([`NUM_LANDMARKS`]).
        count: usize,
        /// RNG seed.
        seed: u64,
    },
}

/// A Nyström feature map.
#[derive(Debug, Clone)]
pub struct Nystrom {
    kernel: Kernel,
    landmarks: Points<'static>,
    indices: Vec<usize>,
    /// `r x L`: `Λ_r^{-1/2} U_r^T`.
    projection: DMatrix<f64>,
}

impl Nystrom {
    /// Build the feature map from training points `x` and a landmark choice.
    ///
    /// `rcond` ([`NYSTROM_RCOND`]) drops landmark-Gram eigenvalues below `rcond * max`.
    /// Errors on invalid inputs, out-of-range indices or an all-zero landmark Gram.
    ///
    /// ```
    /// use beliefscope::kernel::{Kernel, Landmarks, Nystrom, Points};
    /// let x: Vec<f64> = (0..200).map(|i| i as f64 / 20.0).collect();
    /// let k = Kernel::rbf(1.0).unwrap();
    /// let ny = Nystrom::new(&k, &Points::from_slice(&x),
    ///     Landmarks::Random { count: 40, seed: 1 }, 1e-10).unwrap();
    /// let (a, b) = (ny.features(&[1.0]).unwrap(), ny.features(&[1.5]).unwrap());
    /// assert!((a.dot(&b) - k.eval(&[1.0], &[1.5])).abs() < 1e-4);
    /// ```
    pub fn new(kernel: &Kernel, x: &Points, landmarks: Landmarks, rcond: f64) -> Result<Self> {
        check_inputs(kernel, x)?;
        NYSTROM_RCOND.check(rcond)?;
        let indices = match landmarks {
            Landmarks::Indices(ix) => ix,
            Landmarks::Random { count, seed } => {
                NUM_LANDMARKS.check_usize(count)?;
                let n = x.len();
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                let mut ix = rand::seq::index::sample(&mut rng, n, count.min(n)).into_vec();
                ix.sort_unstable();
                ix
            }
        };
        if indices.is_empty() {
            return Err(KernelError::TooFewPoints {
                what: "Nyström landmarks",
                needed: 1,
                got: 0,
            });
        }
        let lm = x.select(&indices)?;
        Self::build(kernel, lm, indices, rcond)
    }

    /// Build from explicit landmark points (not necessarily training points).
    pub fn from_landmarks(kernel: &Kernel, landmarks: &Points, rcond: f64) -> Result<Self> {
        check_inputs(kernel, landmarks)?;
        NYSTROM_RCOND.check(rcond)?;
        if landmarks.is_empty() {
            return Err(KernelError::TooFewPoints {
                what: "Nyström landmarks",
                needed: 1,
                got: 0,
            });
        }
        Self::build(kernel, landmarks.to_owned_points(), vec![], rcond)
    }

    fn build(
        kernel: &Kernel,
        lm: Points<'static>,
        indices: Vec<usize>,
        rcond: f64,
    ) -> Result<Self> {
        let kll = gram(kernel, &lm)?;
        let eig = kll.symmetric_eigen();
        let lmax = eig.eigenvalues.iter().copied().fold(0.0, f64::max);
        if lmax <= 0.0 {
            return Err(KernelError::InvalidKernel(
                "Nyström landmark Gram matrix has no positive eigenvalue".into(),
            ));
        }
        let keep: Vec<usize> = (0..eig.eigenvalues.len())
            .filter(|&i| eig.eigenvalues[i] > rcond * lmax && eig.eigenvalues[i] > 0.0)
            .collect();
        let l = lm.len();
        let projection = DMatrix::from_fn(keep.len(), l, |r, j| {
            let i = keep[r];
            eig.eigenvectors[(j, i)] / eig.eigenvalues[i].sqrt()
        });
        Ok(Nystrom {
            kernel: kernel.clone(),
            landmarks: lm,
            indices,
            projection,
        })
    }

    /// Feature dimension `r` (kept eigenvalues, `<= L`).
    pub fn rank(&self) -> usize {
        self.projection.nrows()
    }

    /// The landmark points.
    pub fn landmarks(&self) -> &Points<'static> {
        &self.landmarks
    }

    /// Training indices of the landmarks (empty if built with [`Nystrom::from_landmarks`]).
    pub fn landmark_indices(&self) -> &[usize] {
        &self.indices
    }

    /// Features `z(y)` (length r). O(L d + r L).
    pub fn features(&self, y: &[f64]) -> Result<DVector<f64>> {
        if y.len() != self.landmarks.dim() {
            return Err(KernelError::DimensionMismatch {
                what: "Nyström features: point dimension",
                expected: self.landmarks.dim(),
                got: y.len(),
            });
        }
        check_finite("query point", y)?;
        let kl = DVector::from_iterator(
            self.landmarks.len(),
            self.landmarks.rows().map(|l| self.kernel.eval(y, l)),
        );
        Ok(&self.projection * kl)
    }

    /// Features of many points: `r x n`, parallel over points. O(n (L d + r L)).
    pub fn features_of(&self, y: &Points) -> Result<DMatrix<f64>> {
        y.check_dim("Nyström features: point dimension", self.landmarks.dim())?;
        y.check_finite()?;
        let cols: Vec<DVector<f64>> = (0..y.len())
            .into_par_iter()
            .map(|j| {
                let kl = DVector::from_iterator(
                    self.landmarks.len(),
                    self.landmarks.rows().map(|l| self.kernel.eval(y.row(j), l)),
                );
                &self.projection * kl
            })
            .collect();
        Ok(if cols.is_empty() {
            DMatrix::zeros(self.rank(), 0)
        } else {
            DMatrix::from_columns(&cols)
        })
    }
}
