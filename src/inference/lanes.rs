//! Sums and maxima over short slices in 4 interleaved lanes, so that the additions do not wait
//! on each other: a single running sum is latency-bound and cannot be vectorised, four
//! independent ones fill a vector register. The hot per-message reductions of discrete and
//! kernel BP (norms, totals, changes) use them. Cost O(n).

/// `Σ_i terms(i)` for `i < n`, each of the K sums in 4 lanes.
#[inline(always)]
pub fn lane_sums<const K: usize>(n: usize, terms: impl Fn(usize) -> [f64; K]) -> [f64; K] {
    let mut lanes = [[0.0; K]; 4];
    let full = n / 4 * 4;
    for i in (0..full).step_by(4) {
        for (l, lane) in lanes.iter_mut().enumerate() {
            for (acc, t) in lane.iter_mut().zip(terms(i + l)) {
                *acc += t;
            }
        }
    }
    for i in full..n {
        for (acc, t) in lanes[0].iter_mut().zip(terms(i)) {
            *acc += t;
        }
    }
    std::array::from_fn(|k| (lanes[0][k] + lanes[1][k]) + (lanes[2][k] + lanes[3][k]))
}

/// The largest of `values` and 0, in 4 lanes (NaN is ignored, as `f64::max` does).
#[inline(always)]
pub fn lane_max(values: &[f64]) -> f64 {
    let mut lanes = [0.0f64; 4];
    let mut chunks = values.chunks_exact(4);
    for c in &mut chunks {
        for (l, v) in lanes.iter_mut().zip(c) {
            *l = l.max(*v);
        }
    }
    for v in chunks.remainder() {
        lanes[0] = lanes[0].max(*v);
    }
    lanes[0].max(lanes[1]).max(lanes[2].max(lanes[3]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_sums_and_max_agree_with_plain_loops() {
        for n in [0usize, 1, 3, 4, 5, 50, 51] {
            let v: Vec<f64> = (0..n).map(|i| ((i * 7919) % 101) as f64 - 40.0).collect();
            let [sum, squares] = lane_sums(n, |i| [v[i], v[i] * v[i]]);
            assert_eq!(sum, v.iter().sum::<f64>(), "n = {n}");
            assert_eq!(squares, v.iter().map(|x| x * x).sum::<f64>());
            assert_eq!(lane_max(&v), v.iter().fold(0.0f64, |a, &x| a.max(x)));
        }
    }
}
