//! Bandwidth selection for the RBF `sigma` (convention `exp(-||x-y||^2 / (2 sigma^2))`).
//!
//! * [`median_heuristic`]: `sigma = multiplier * median_{i<j} ||x_i - x_j||` (Euclidean
//!   distances, **not** squared) over a deterministic, evenly strided subsample of at most
//!   `max_points` points (default 2,000). For an even number of pairs the median is the
//!   mean of the two middle distances. Cost O(s^2 d) with `s = min(n, max_points)`.
//! * [`loo_cv_bandwidth`]: maximises the leave-one-out log-likelihood of a Gaussian kernel
//!   density estimate over `log sigma` (grid, then golden-section refinement). Cost
//!   O(s^2 d + (grid + iterations) s^2) with `s = min(n, max_points)`.
//! * [`silverman`]: Silverman's rule of thumb for 1-D data,
//!   `0.9 min(std, IQR / 1.34) n^{-1/5}`. O(n log n).

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::error::{KernelError, Result, check_finite};
use super::kernels::{exp_of_negative, sq_dist};
use super::params::{LOO_GRID_POINTS, MEDIAN_MAX_POINTS, MEDIAN_MULTIPLIER, SIGMA};
use super::points::Points;

/// Options of the median heuristic.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MedianHeuristic {
    /// `sigma = multiplier * median distance` ([`MEDIAN_MULTIPLIER`], default 1).
    pub multiplier: f64,
    /// Subsample size ([`MEDIAN_MAX_POINTS`], default 2000).
    pub max_points: usize,
}

impl Default for MedianHeuristic {
    fn default() -> Self {
        MedianHeuristic {
            multiplier: MEDIAN_MULTIPLIER.default,
            max_points: MEDIAN_MAX_POINTS.default as usize,
        }
    }
}

impl MedianHeuristic {
    /// Validate the options.
    pub fn check(&self) -> Result<()> {
        MEDIAN_MULTIPLIER.check(self.multiplier)?;
        MEDIAN_MAX_POINTS.check_usize(self.max_points)
    }
}

/// The deterministic subsample: all indices if `n <= s`, else `floor(k n / s)` for
/// `k = 0..s` (evenly strided; on sorted data this is a quantile sample).
fn subsample(n: usize, s: usize) -> Vec<usize> {
    if n <= s {
        (0..n).collect()
    } else {
        (0..s).map(|k| k * n / s).collect()
    }
}

/// Median Euclidean distance over distinct pairs `i < j` of a deterministic subsample of at
/// most `max_points` points. O(s^2 d) time, O(s^2) memory.
///
/// Errors on fewer than 2 points or non-finite coordinates; a zero median is returned as
/// `Ok(0.0)` (see [`median_heuristic`] for the error).
pub fn median_pairwise_distance(points: &Points, max_points: usize) -> Result<f64> {
    MEDIAN_MAX_POINTS.check_usize(max_points)?;
    points.check_finite()?;
    let n = points.len();
    if n < 2 {
        return Err(KernelError::TooFewPoints {
            what: "median pairwise distance",
            needed: 2,
            got: n,
        });
    }
    let idx = subsample(n, max_points);
    let s = idx.len();
    // Squared distances of all pairs i < j, row by row (order is deterministic).
    let mut sq: Vec<f64> = (0..s)
        .into_par_iter()
        .flat_map_iter(|a| {
            let xa = points.row(idx[a]);
            idx[a + 1..]
                .iter()
                .map(move |&b| sq_dist(xa, points.row(b)))
        })
        .collect();
    let pairs = sq.len();
    let mid = pairs / 2;
    // Squaring is monotone, so selecting on squared distances selects the same pairs.
    let (_, upper, _) = sq.select_nth_unstable_by(mid, f64::total_cmp);
    let upper = upper.sqrt();
    if pairs % 2 == 1 {
        Ok(upper)
    } else {
        let lower = sq[..mid]
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max)
            .sqrt();
        Ok(0.5 * (lower + upper))
    }
}

/// Median heuristic bandwidth `sigma = multiplier * median_{i<j} ||x_i - x_j||`.
///
/// Errors on invalid options, fewer than 2 points, NaN/infinite input, or a zero median
/// (constant data, or more than half of the pairs are duplicates) — never `sigma = 0`.
/// O(s^2 d) with `s = min(n, max_points)`.
///
/// ```
/// use beliefscope::kernel::{median_heuristic, MedianHeuristic, Points};
/// // Distances of {0, 1, 3}: 1, 3, 2 -> median 2.
/// let s = median_heuristic(&Points::from_slice(&[0.0, 1.0, 3.0]), &MedianHeuristic::default());
/// assert_eq!(s.unwrap(), 2.0);
/// assert!(median_heuristic(&Points::from_slice(&[5.0, 5.0, 5.0]), &MedianHeuristic::default()).is_err());
/// ```
pub fn median_heuristic(points: &Points, options: &MedianHeuristic) -> Result<f64> {
    options.check()?;
    let med = median_pairwise_distance(points, options.max_points)?;
    if med <= 0.0 {
        let s = points.len().min(options.max_points);
        return Err(KernelError::ZeroMedian {
            pairs: s * (s - 1) / 2,
        });
    }
    let sigma = options.multiplier * med;
    SIGMA.check(sigma)?;
    Ok(sigma)
}

/// Silverman's rule of thumb for 1-D data: `0.9 min(std, IQR / 1.34) n^{-1/5}` (std with
/// the `n - 1` denominator, IQR from linearly interpolated quartiles; if the IQR is zero the
/// std is used). Returns a bandwidth in the RBF `sigma` convention (the Gaussian KDE
/// standard deviation). Errors on fewer than 2 points, non-finite values or constant data.
/// O(n log n).
///
/// ```
/// use beliefscope::kernel::silverman;
/// let x: Vec<f64> = (0..100).map(|i| i as f64).collect();
/// let h = silverman(&x).unwrap();
/// assert!(h > 5.0 && h < 15.0);
/// ```
pub fn silverman(x: &[f64]) -> Result<f64> {
    check_finite("points", x)?;
    let n = x.len();
    if n < 2 {
        return Err(KernelError::TooFewPoints {
            what: "Silverman's rule",
            needed: 2,
            got: n,
        });
    }
    let nf = n as f64;
    let mean = x.iter().sum::<f64>() / nf;
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (nf - 1.0);
    let std = var.sqrt();
    if std <= 0.0 {
        return Err(KernelError::ZeroSpread {
            what: "Silverman's rule",
        });
    }
    let mut sorted = x.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    let quantile = |q: f64| {
        let pos = q * (nf - 1.0);
        let lo = pos.floor() as usize;
        let hi = (lo + 1).min(n - 1);
        sorted[lo] + (pos - lo as f64) * (sorted[hi] - sorted[lo])
    };
    let iqr = quantile(0.75) - quantile(0.25);
    let spread = if iqr > 0.0 { std.min(iqr / 1.34) } else { std };
    let h = 0.9 * spread * nf.powf(-0.2);
    SIGMA.check(h)?;
    Ok(h)
}

/// Options of the leave-one-out likelihood bandwidth search.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LooCvOptions {
    /// Lower end of the search; `None` = `1e-3 * s` with `s` the RMS distance to the mean.
    pub sigma_min: Option<f64>,
    /// Upper end of the search; `None` = `3 * s`.
    pub sigma_max: Option<f64>,
    /// Grid points over `log sigma` ([`LOO_GRID_POINTS`], default 25).
    pub grid_points: usize,
    /// Golden-section iterations around the best grid point (default 30).
    pub refine_iterations: usize,
    /// Deterministic subsample size (evenly strided, default 1000).
    pub max_points: usize,
}

impl Default for LooCvOptions {
    fn default() -> Self {
        LooCvOptions {
            sigma_min: None,
            sigma_max: None,
            grid_points: LOO_GRID_POINTS.default as usize,
            refine_iterations: 30,
            max_points: 1000,
        }
    }
}

/// Result of [`loo_cv_bandwidth`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LooCvResult {
    /// The selected bandwidth.
    pub sigma: f64,
    /// Mean leave-one-out log-likelihood per point at `sigma`.
    pub log_likelihood: f64,
    /// The grid `(sigma, mean LOO log-likelihood)`, e.g. for a plot.
    pub grid: Vec<(f64, f64)>,
    /// Whether the optimum lies at an end of the search range (widen it, or the data has
    /// duplicates, which drive the likelihood to infinity as `sigma -> 0`).
    pub at_boundary: bool,
}

/// Mean leave-one-out log-likelihood of a Gaussian KDE with bandwidth `sigma`:
/// `(1/n) sum_i log( 1/(n-1) sum_{j != i} N(x_i; x_j, sigma^2 I) )`, evaluated with
/// log-sum-exp. O(n^2 d). Errors on fewer than 2 points, bad `sigma` or non-finite input.
pub fn loo_log_likelihood(points: &Points, sigma: f64) -> Result<f64> {
    SIGMA.check(sigma)?;
    points.check_finite()?;
    let n = points.len();
    if n < 2 {
        return Err(KernelError::TooFewPoints {
            what: "leave-one-out likelihood",
            needed: 2,
            got: n,
        });
    }
    let sq = pairwise_sq(points, &(0..n).collect::<Vec<_>>());
    Ok(loo_from_sq(&sq, n, points.dim(), sigma))
}

/// Full `n x n` squared distance matrix (row-major) of the selected points.
fn pairwise_sq(points: &Points, idx: &[usize]) -> Vec<f64> {
    let s = idx.len();
    let mut out = vec![0.0; s * s];
    out.par_chunks_mut(s).enumerate().for_each(|(a, row)| {
        let xa = points.row(idx[a]);
        for (b, v) in row.iter_mut().enumerate() {
            *v = sq_dist(xa, points.row(idx[b]));
        }
    });
    out
}

fn loo_from_sq(sq: &[f64], n: usize, d: usize, sigma: f64) -> f64 {
    let inv = 0.5 / (sigma * sigma);
    let log_norm =
        -0.5 * d as f64 * (2.0 * std::f64::consts::PI * sigma * sigma).ln() - ((n - 1) as f64).ln();
    let per_point: Vec<f64> = (0..n)
        .into_par_iter()
        .map(|i| {
            let row = &sq[i * n..(i + 1) * n];
            let min = row
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, &v)| v)
                .fold(f64::INFINITY, f64::min);
            let sum: f64 = row
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, &v)| exp_of_negative(-(v - min) * inv))
                .sum();
            -min * inv + sum.ln() + log_norm
        })
        .collect();
    per_point.iter().sum::<f64>() / n as f64
}

/// Bandwidth maximising the leave-one-out log-likelihood of a Gaussian KDE: a grid over
/// `log sigma` in `[sigma_min, sigma_max]`, then golden-section search between the grid
/// neighbours of the best point. Deterministic.
///
/// Errors on fewer than 2 points, non-finite input, constant data (when the range is
/// derived from the data), or an invalid range.
/// Cost: O(s^2 d + (grid_points + refine_iterations) s^2), `s = min(n, max_points)`.
///
/// ```
/// use beliefscope::kernel::{loo_cv_bandwidth, LooCvOptions, Points};
/// let x: Vec<f64> = (0..200).map(|i| ((i as f64) * 0.618).fract() * 4.0).collect();
/// let r = loo_cv_bandwidth(&Points::from_slice(&x), &LooCvOptions::default()).unwrap();
/// assert!(r.sigma > 0.0 && r.sigma < 4.0);
/// ```
pub fn loo_cv_bandwidth(points: &Points, options: &LooCvOptions) -> Result<LooCvResult> {
    LOO_GRID_POINTS.check_usize(options.grid_points)?;
    MEDIAN_MAX_POINTS.check_usize(options.max_points)?;
    points.check_finite()?;
    let n = points.len();
    if n < 2 {
        return Err(KernelError::TooFewPoints {
            what: "leave-one-out bandwidth selection",
            needed: 2,
            got: n,
        });
    }
    let idx = subsample(n, options.max_points);
    let s = idx.len();
    let d = points.dim();
    let (lo, hi) = match (options.sigma_min, options.sigma_max) {
        (Some(a), Some(b)) => (a, b),
        (a, b) => {
            let first = points.row(idx[0]);
            let constant = idx.iter().all(|&i| points.row(i) == first);
            let scale = rms_spread(points, &idx);
            if constant || scale <= 0.0 {
                return Err(KernelError::ZeroSpread {
                    what: "leave-one-out bandwidth selection",
                });
            }
            (a.unwrap_or(1e-3 * scale), b.unwrap_or(3.0 * scale))
        }
    };
    SIGMA.check(lo)?;
    SIGMA.check(hi)?;
    if lo >= hi {
        return Err(KernelError::InvalidParameter {
            name: "LOO-CV sigma_max",
            value: hi,
            range: format!("greater than sigma_min = {lo}"),
        });
    }
    let sq = pairwise_sq(points, &idx);
    let f = |log_sigma: f64| loo_from_sq(&sq, s, d, log_sigma.exp());
    let (llo, lhi) = (lo.ln(), hi.ln());
    let g = options.grid_points;
    let step = (lhi - llo) / (g - 1) as f64;
    let grid: Vec<(f64, f64)> = (0..g)
        .map(|k| {
            let ls = llo + step * k as f64;
            (ls.exp(), f(ls))
        })
        .collect();
    let best = (0..g)
        .max_by(|&a, &b| grid[a].1.total_cmp(&grid[b].1).then(b.cmp(&a)))
        .unwrap_or(0);
    // Golden-section maximisation on [best - 1, best + 1] (clipped to the grid).
    let mut a = llo + step * best.saturating_sub(1) as f64;
    let mut b = llo + step * (best + 1).min(g - 1) as f64;
    let phi = 0.5 * (5f64.sqrt() - 1.0);
    let mut c = b - phi * (b - a);
    let mut e = a + phi * (b - a);
    let (mut fc, mut fe) = (f(c), f(e));
    for _ in 0..options.refine_iterations {
        if fc >= fe {
            b = e;
            e = c;
            fe = fc;
            c = b - phi * (b - a);
            fc = f(c);
        } else {
            a = c;
            c = e;
            fc = fe;
            e = a + phi * (b - a);
            fe = f(e);
        }
    }
    let (mut ls, mut ll) = if fc >= fe { (c, fc) } else { (e, fe) };
    if grid[best].1 > ll {
        ls = grid[best].0.ln();
        ll = grid[best].1;
    }
    let sigma = ls.exp();
    let at_boundary = best == 0 || best == g - 1;
    Ok(LooCvResult {
        sigma,
        log_likelihood: ll,
        grid,
        at_boundary,
    })
}

/// Mean leave-one-out log-likelihood of the product-kernel KDE of paired points `(a_i, b_i)`
/// with bandwidths `sa`, `sb`, from the two squared-distance matrices.
fn joint_loo_from_sq(sq: [&[f64]; 2], n: usize, dims: [usize; 2], sa: f64, sb: f64) -> f64 {
    let (ia, ib) = (0.5 / (sa * sa), 0.5 / (sb * sb));
    let tau = 2.0 * std::f64::consts::PI;
    let log_norm = -0.5 * dims[0] as f64 * (tau * sa * sa).ln()
        - 0.5 * dims[1] as f64 * (tau * sb * sb).ln()
        - ((n - 1) as f64).ln();
    let per_point: Vec<f64> = (0..n)
        .into_par_iter()
        .map(|i| {
            let (ra, rb) = (&sq[0][i * n..(i + 1) * n], &sq[1][i * n..(i + 1) * n]);
            let e = |j: usize| ra[j] * ia + rb[j] * ib;
            let min = (0..n)
                .filter(|&j| j != i)
                .map(e)
                .fold(f64::INFINITY, f64::min);
            let sum: f64 = (0..n)
                .filter(|&j| j != i)
                .map(|j| exp_of_negative(min - e(j)))
                .sum();
            -min + sum.ln() + log_norm
        })
        .collect();
    per_point.iter().sum::<f64>() / n as f64
}

/// Maximises `f(log sigma)` over `[lo, hi]`: a grid of `g` points, then golden section
/// between the best point's neighbours. Returns `(sigma, f, at_boundary)`.
fn maximise_log_sigma(
    f: impl Fn(f64) -> f64,
    lo: f64,
    hi: f64,
    g: usize,
    iterations: usize,
) -> (f64, f64, bool) {
    let (llo, lhi) = (lo.ln(), hi.ln());
    let step = (lhi - llo) / (g - 1) as f64;
    let vals: Vec<f64> = (0..g).map(|k| f(llo + step * k as f64)).collect();
    let best = (0..g)
        .max_by(|&a, &b| vals[a].total_cmp(&vals[b]).then(b.cmp(&a)))
        .unwrap_or(0);
    let mut a = llo + step * best.saturating_sub(1) as f64;
    let mut b = llo + step * (best + 1).min(g - 1) as f64;
    let phi = 0.5 * (5f64.sqrt() - 1.0);
    let (mut c, mut e) = (b - phi * (b - a), a + phi * (b - a));
    let (mut fc, mut fe) = (f(c), f(e));
    for _ in 0..iterations {
        if fc >= fe {
            (b, e, fe) = (e, c, fc);
            c = b - phi * (b - a);
            fc = f(c);
        } else {
            (a, c, fc) = (c, e, fe);
            e = a + phi * (b - a);
            fe = f(e);
        }
    }
    let (mut ls, mut ll) = if fc >= fe { (c, fc) } else { (e, fe) };
    if vals[best] > ll {
        (ls, ll) = (llo + step * best as f64, vals[best]);
    }
    (ls.exp(), ll, best == 0 || best == g - 1)
}

/// Bandwidths `(sigma_a, sigma_b)` of two paired variables (row `i` of `a` goes with row `i`
/// of `b`) maximising the leave-one-out log-likelihood of the product-kernel Gaussian KDE of
/// the pairs. Unlike each marginal's own LOO-CV this sees how narrowly one variable is pinned
/// down by the other: on `b = a² + noise` it picks `sigma_a` at the width of `a` given `b`, not
/// at the width of `a`'s broad marginal. Coordinate ascent from the marginal optima, two
/// rounds of a search over `[sigma / 100, 3 sigma]` per coordinate.
///
/// Errors as [`loo_cv_bandwidth`] does, and when the two have different numbers of rows.
/// Cost: O(s² (d_a + d_b)) for the distances plus O(s²) per likelihood evaluation (about 4
/// (grid + iterations) evaluations, plus the two marginal searches), `s = min(n, max_points)`.
pub fn loo_cv_joint_bandwidths(
    a: &Points,
    b: &Points,
    options: &LooCvOptions,
) -> Result<(f64, f64)> {
    if a.len() != b.len() {
        return Err(KernelError::InvalidParameter {
            name: "paired points",
            value: b.len() as f64,
            range: format!("the same number of rows as the first set ({})", a.len()),
        });
    }
    let mut sa = loo_cv_bandwidth(a, options)?.sigma;
    let mut sb = loo_cv_bandwidth(b, options)?.sigma;
    let idx = subsample(a.len(), options.max_points);
    let s = idx.len();
    let (qa, qb) = (pairwise_sq(a, &idx), pairwise_sq(b, &idx));
    let dims = [a.dim(), b.dim()];
    let (g, it) = (options.grid_points, options.refine_iterations);
    for _ in 0..2 {
        let fa = |l: f64| joint_loo_from_sq([&qa, &qb], s, dims, l.exp(), sb);
        sa = maximise_log_sigma(fa, sa / 100.0, sa * 3.0, g, it).0;
        let fb = |l: f64| joint_loo_from_sq([&qa, &qb], s, dims, sa, l.exp());
        sb = maximise_log_sigma(fb, sb / 100.0, sb * 3.0, g, it).0;
    }
    SIGMA.check(sa)?;
    SIGMA.check(sb)?;
    Ok((sa, sb))
}

/// RMS distance to the mean of the selected points (`sqrt` of the total variance).
fn rms_spread(points: &Points, idx: &[usize]) -> f64 {
    let d = points.dim();
    let s = idx.len() as f64;
    let mut mean = vec![0.0; d];
    for &i in idx {
        for (m, v) in mean.iter_mut().zip(points.row(i)) {
            *m += v;
        }
    }
    mean.iter_mut().for_each(|m| *m /= s);
    let total: f64 = idx.iter().map(|&i| sq_dist(points.row(i), &mean)).sum();
    (total / s).sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subsample_is_strided_and_distinct() {
        let s = subsample(10_000, 2000);
        assert_eq!(s.len(), 2000);
        assert_eq!(s[0], 0);
        assert_eq!(s[1], 5);
        assert!(s.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(subsample(5, 2000), vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn even_number_of_pairs_averages() {
        // 4 points on a line, 6 pairs: distances 1,2,3,1,2,1 -> sorted 1,1,1,2,2,3 -> 1.5
        let x = [0.0, 1.0, 2.0, 3.0];
        let m = median_pairwise_distance(&Points::from_slice(&x), 2000).unwrap();
        assert_eq!(m, 1.5);
    }
}
