//! Exact collapsing of repeated sample values (gray levels repeat thousands of times), so that
//! kernel solves over m samples become solves over the U distinct values. For a Gram form
//! `(B^T K_u B + c I)^{-1} v`, with `B` (U x m) the indicator of each sample's value, the
//! push-through identity gives `B (B^T K_u B + c I)^{-1} v = (N K_u + c I)^{-1} B v`,
//! `N = B B^T = diag(counts)`: exact, and O(U^3 + m) instead of O(m^3).

use nalgebra::DMatrix;
use rayon::prelude::*;

use crate::error::Result;
use crate::kernel::{Lambda, RegularizedCholesky};

/// Sorted distinct values of a sample set, each sample's index into them, and the counts.
#[derive(Debug, Clone, PartialEq)]
pub struct Collapsed {
    pub values: Vec<f64>,
    pub counts: Vec<f64>,
    pub index: Vec<usize>,
}

/// Samples per parallel task when collapsing.
const CHUNK: usize = 1 << 16;

/// Sorted distinct values of all the given sample sets together (exact equality). Each chunk
/// of samples keeps a small sorted set (a gray-level template has a few hundred values among
/// millions of samples), so this is O(m log U) and parallel, not a sort of all m samples.
pub fn distinct_values(sets: &[&[f64]]) -> Vec<f64> {
    let mut v: Vec<f64> = sets
        .par_iter()
        .flat_map(|s| s.par_chunks(CHUNK))
        .map(|chunk| {
            let mut seen: Vec<f64> = Vec::new();
            let mut last = f64::NAN;
            for &x in chunk {
                if x.to_bits() == last.to_bits() {
                    continue;
                }
                last = x;
                if let Err(at) = seen.binary_search_by(|v| v.total_cmp(&x)) {
                    seen.insert(at, x);
                }
            }
            seen
        })
        .reduce(Vec::new, |mut a, b| {
            a.extend(b);
            a.sort_by(f64::total_cmp);
            a.dedup_by(|x, y| x.to_bits() == y.to_bits());
            a
        });
    v.sort_by(f64::total_cmp);
    v.dedup();
    v
}

/// Collapses `samples` onto `values` (which must contain every sample). O(m log U), parallel.
pub fn collapse_onto(samples: &[f64], values: &[f64]) -> Collapsed {
    let find = |s: &f64| {
        values
            .binary_search_by(|v| v.total_cmp(s))
            .expect("every sample is one of the distinct values")
    };
    let index: Vec<usize> = samples.par_iter().map(find).collect();
    let counts = index
        .par_chunks(CHUNK)
        .map(|chunk| {
            let mut counts = vec![0.0; values.len()];
            chunk.iter().for_each(|&i| counts[i] += 1.0);
            counts
        })
        .reduce(
            || vec![0.0; values.len()],
            |mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                a
            },
        );
    Collapsed {
        values: values.to_vec(),
        counts,
        index,
    }
}

/// Solves `(N K + c I) X = R` for a diagonal count matrix `N = diag(counts)` (counts >= 0),
/// through a Cholesky factor of the symmetric `N_P^{1/2} K_PP N_P^{1/2} + c I` on the values
/// with positive counts P (rows with a zero count reduce to `c x_j = r_j`). Set-up O(|P|³),
/// each solve O(U² · columns).
#[derive(Debug, Clone)]
pub struct CountWeightedSolver {
    positive: Vec<usize>,
    zero: Vec<usize>,
    sqrt_counts: Vec<f64>,
    /// `K[P, Z]`, to move the zero-count unknowns to the right-hand side.
    k_pz: DMatrix<f64>,
    factor: RegularizedCholesky,
    c: f64,
}

impl CountWeightedSolver {
    pub fn new(k: &DMatrix<f64>, counts: &[f64], c: f64) -> Result<Self> {
        let positive: Vec<usize> = (0..counts.len()).filter(|&j| counts[j] > 0.0).collect();
        let zero: Vec<usize> = (0..counts.len()).filter(|&j| counts[j] <= 0.0).collect();
        let sqrt_counts: Vec<f64> = positive.iter().map(|&j| counts[j].sqrt()).collect();
        let s = DMatrix::from_fn(positive.len(), positive.len(), |a, b| {
            sqrt_counts[a] * k[(positive[a], positive[b])] * sqrt_counts[b]
        });
        let k_pz = DMatrix::from_fn(positive.len(), zero.len(), |a, b| k[(positive[a], zero[b])]);
        let factor = RegularizedCholesky::new(&s, Lambda::OperatorForm(c))?;
        Ok(CountWeightedSolver {
            positive,
            zero,
            sqrt_counts,
            k_pz,
            factor,
            c,
        })
    }

    /// Condition-number estimate of the factorised symmetric system.
    pub fn condition_estimate(&self) -> f64 {
        self.factor.condition_estimate()
    }

    pub fn solve(&self, r: &DMatrix<f64>) -> Result<DMatrix<f64>> {
        let cols = r.ncols();
        let mut x = DMatrix::zeros(r.nrows(), cols);
        let x_z = DMatrix::from_fn(self.zero.len(), cols, |a, j| r[(self.zero[a], j)] / self.c);
        let moved = &self.k_pz * &x_z;
        // (N K + cI)^{-1} = N^{1/2} (S + cI)^{-1} N^{-1/2}, applied to r_P - N K_PZ x_Z.
        let mut rhs = DMatrix::from_fn(self.positive.len(), cols, |a, j| {
            let d = self.sqrt_counts[a];
            (r[(self.positive[a], j)] - d * d * moved[(a, j)]) / d
        });
        self.factor.solve_in_place(&mut rhs)?;
        for (a, &p) in self.positive.iter().enumerate() {
            let d = self.sqrt_counts[a];
            for j in 0..cols {
                x[(p, j)] = rhs[(a, j)] * d;
            }
        }
        for (a, &z) in self.zero.iter().enumerate() {
            for j in 0..cols {
                x[(z, j)] = x_z[(a, j)];
            }
        }
        Ok(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_weighted_solve_matches_lu() {
        let u = 6;
        let k = DMatrix::from_fn(u, u, |i, j| (-((i as f64 - j as f64).powi(2)) / 4.0).exp());
        let counts = [3.0, 0.0, 1.0, 7.0, 0.0, 2.0];
        let c = 0.5;
        let r = DMatrix::from_fn(u, 3, |i, j| (i * 3 + j) as f64 - 4.0);
        let direct = DMatrix::from_fn(u, u, |i, j| {
            counts[i] * k[(i, j)] + if i == j { c } else { 0.0 }
        })
        .lu()
        .solve(&r)
        .unwrap();
        let x = CountWeightedSolver::new(&k, &counts, c)
            .unwrap()
            .solve(&r)
            .unwrap();
        assert!((x - direct).amax() < 1e-10);
    }

    #[test]
    fn distinct_values_of_many_chunks_are_those_of_a_sort() {
        let samples: Vec<f64> = (0..300_000)
            .map(|i| ((i * 7919) % 257) as f64 * 0.5)
            .collect();
        let other: Vec<f64> = (1..=1000).map(|i| -(i as f64)).collect();
        let mut want: Vec<f64> = samples.iter().chain(&other).copied().collect();
        want.sort_by(f64::total_cmp);
        want.dedup();
        assert_eq!(distinct_values(&[&samples, &other]), want);
        let c = collapse_onto(&samples, &want);
        assert_eq!(c.counts.iter().sum::<f64>(), 300_000.0);
        assert!(c.index.iter().zip(&samples).all(|(&i, s)| want[i] == *s));
    }

    #[test]
    fn collapses_with_counts() {
        let s = [3.0, 1.0, 3.0, 2.0, 3.0];
        let v = distinct_values(&[&s]);
        assert_eq!(v, vec![1.0, 2.0, 3.0]);
        let c = collapse_onto(&s, &v);
        assert_eq!(c.counts, vec![1.0, 1.0, 3.0]);
        assert_eq!(c.index, vec![2, 0, 2, 1, 2]);
    }
}
