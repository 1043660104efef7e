//! The retrieval chain shared by the tree scenario's `retrieval` dataset and the retrieval
//! scenario (Song et al. 2010, Section 7's image-retrieval stand-in): nine variables in R⁵,
//! `x1` from a three-component Gaussian mixture, `x_{k+1} = Q_k g(x_k) + N(0, 0.2² I)` with
//! `Q_k` random orthogonal and `g(v) = sin(1.5 v)` elementwise. The mixture and the `Q_k` are
//! fixed by [`RETRIEVAL_MODEL_SEED`]; only the draws depend on the caller's generator.
//!
//! Cost: building is O(variables · 5³) (one QR per rotation); a tuple is O(variables · 5²).

use nalgebra::{DMatrix, DVector};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

/// Seed of the retrieval model's mixture and rotations.
pub const RETRIEVAL_MODEL_SEED: u64 = 0x5EA7C4;
/// Dimension of each variable.
pub const RETRIEVAL_DIM: usize = 5;
/// Standard deviation of the transition noise.
pub const RETRIEVAL_NOISE_SD: f64 = 0.2;
/// Components of `x1`'s mixture.
pub const RETRIEVAL_COMPONENTS: usize = 3;

fn normal(rng: &mut ChaCha8Rng) -> f64 {
    StandardNormal.sample(rng)
}

/// The retrieval model: mixture means (3 x 5) and the 8 rotations.
pub struct RetrievalModel {
    pub means: Vec<DVector<f64>>,
    pub rotations: Vec<DMatrix<f64>>,
}

impl RetrievalModel {
    pub fn fixed(variables: usize) -> RetrievalModel {
        let mut rng = ChaCha8Rng::seed_from_u64(RETRIEVAL_MODEL_SEED);
        let d = RETRIEVAL_DIM;
        let means = (0..RETRIEVAL_COMPONENTS)
            .map(|_| DVector::from_fn(d, |_, _| 1.2 * normal(&mut rng)))
            .collect();
        let rotations = (1..variables)
            .map(|_| {
                let g = DMatrix::from_fn(d, d, |_, _| normal(&mut rng));
                let qr = g.qr();
                let (q, r) = (qr.q(), qr.r());
                // Fix signs so Q is Haar-distributed (not needed, but tidy).
                let mut q = q;
                for j in 0..d {
                    if r[(j, j)] < 0.0 {
                        q.column_mut(j).neg_mut();
                    }
                }
                q
            })
            .collect();
        RetrievalModel { means, rotations }
    }

    /// The elementwise nonlinearity `g(v) = sin(1.5 v)`.
    pub fn g(v: &DVector<f64>) -> DVector<f64> {
        v.map(|x| (1.5 * x).sin())
    }

    /// One tuple `(x1, ..., x_n)`, each in R⁵.
    pub fn sample(&self, rng: &mut ChaCha8Rng) -> Vec<DVector<f64>> {
        let d = RETRIEVAL_DIM;
        let c = rng.random_range(0..self.means.len());
        let mut x = DVector::from_fn(d, |i, _| self.means[c][i] + 0.5 * normal(rng));
        let mut out = vec![x.clone()];
        for q in &self.rotations {
            x = q * Self::g(&x) + DVector::from_fn(d, |_, _| RETRIEVAL_NOISE_SD * normal(rng));
            out.push(x.clone());
        }
        out
    }
}

/// Draws `m` distinct rows out of `n` (all rows, in order, when `m >= n`), sorted.
pub fn draw_rows(rng: &mut ChaCha8Rng, n: usize, m: usize) -> Vec<usize> {
    if m >= n {
        (0..n).collect()
    } else {
        let mut r = rand::seq::index::sample(rng, n, m).into_vec();
        r.sort_unstable();
        r
    }
}
