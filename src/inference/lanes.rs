//! Sums and maxima over short slices in 4 interleaved lanes, so that the additions do not wait
//! on each other: a single running sum is latency-bound and cannot be vectorised, four
//! independent ones fill a vector register. The hot per-message reductions of discrete and
//! kernel BP (norms, totals, changes) use them; `lane_dots` and `change_sums` keep the four
//! lanes in one AVX register where the processor has one (the same additions in the same
//! order, so the same bits). Cost O(n).

/// Runs `body` compiled for AVX2 (four f64 lanes) when the processor has it, else as it is: the
/// closure and the `#[inline(always)]` code it calls are inlined into a function with the AVX2
/// target feature, so one body serves both without a wrapper per hot loop. Mark the closure
/// `#[inline(always)]` too: a large one is otherwise left outside, compiled without AVX2.
#[inline(always)]
pub fn with_avx2<R>(body: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, checked just above.
        return unsafe { in_avx2(body) };
    }
    body()
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn in_avx2<R>(body: impl FnOnce() -> R) -> R {
    body()
}

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

/// `[Σ_i x_k[i] · y_k[i]]` for K pairs of slices of one length: [`lane_sums`] of the K
/// products, the same additions in the same order (so the same bits), with the four lanes in
/// one AVX register where the processor has it (a closure over indices stays scalar there).
#[inline(always)]
pub fn lane_dots<const K: usize>(pairs: [(&[f64], &[f64]); K]) -> [f64; K] {
    let n = pairs.first().map_or(0, |(x, _)| x.len());
    let pairs = pairs.map(|(x, y)| (&x[..n], &y[..n]));
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: the processor has AVX (checked); every slice holds n values (cut above).
        return unsafe { avx::lane_dots(pairs, n) };
    }
    lane_sums(n, |i| {
        std::array::from_fn(|k| pairs[k].0[i] * pairs[k].1[i])
    })
}

/// `[Σ_i δ_i², Σ_i w_i δ_i]` with `δ = new - old` (slices of one length; the second sum is 0
/// without `w`), in [`lane_sums`]' order: a message's change and its projection.
#[inline(always)]
pub fn change_sums(new: &[f64], old: &[f64], w: Option<&[f64]>) -> [f64; 2] {
    let n = new.len();
    let old = &old[..n];
    let w = w.map(|w| &w[..n]);
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: the processor has AVX (checked); every slice holds n values (cut above).
        return unsafe { avx::change_sums(new, old, w, n) };
    }
    let delta = |i: usize| new[i] - old[i];
    match w {
        Some(w) => lane_sums(n, |i| [delta(i) * delta(i), w[i] * delta(i)]),
        None => [lane_sums(n, |i| [delta(i) * delta(i)])[0], 0.0],
    }
}

/// [`map_max_dot`] of the quotient `out[i] = p[i] / max(r[i], MIN_POSITIVE)`: a
/// tree-reweighted sender product (the node product over the reverse message), its largest
/// value and its mass, four lanes in one AVX register where the processor has it (the same
/// operations in the same order, so the same bits).
#[inline(always)]
pub fn quotient_max_dot(out: &mut [f64], p: &[f64], r: &[f64], w: &[f64]) -> (f64, f64) {
    let n = out.len();
    let (p, r, w) = (&p[..n], &r[..n], &w[..n]);
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: the processor has AVX (checked); every slice holds n values (cut above).
        return unsafe { avx::quotient_max_dot(out, p, r, w, n) };
    }
    map_max_dot(out, p, r, w, |_, p, r| p / at_least_min_positive(r))
}

/// The AVX forms of the sums above: lane `l` of a register holds what lane `l` of
/// [`lane_sums`] holds, the tail is added to lane 0 value by value, and the lanes are added
/// as there.
#[cfg(target_arch = "x86_64")]
mod avx {
    use std::arch::x86_64::*;

    /// `((l0 + tail terms one by one) + l1) + (l2 + l3)` of the register `v`.
    #[inline]
    #[target_feature(enable = "avx")]
    fn finish(v: __m256d, tail: impl Iterator<Item = f64>) -> f64 {
        let mut l = [0.0; 4];
        // SAFETY: `l` holds four f64.
        unsafe { _mm256_storeu_pd(l.as_mut_ptr(), v) };
        let lane0 = tail.fold(l[0], |s, t| s + t);
        (lane0 + l[1]) + (l[2] + l[3])
    }

    /// Four values of `x` from `at`.
    ///
    /// # Safety
    /// `at + 4 <= x.len()`.
    #[inline]
    #[target_feature(enable = "avx")]
    unsafe fn load(x: &[f64], at: usize) -> __m256d {
        debug_assert!(at + 4 <= x.len());
        // SAFETY: the caller's contract.
        unsafe { _mm256_loadu_pd(x.as_ptr().add(at)) }
    }

    /// # Safety
    /// Every slice holds at least `n` values.
    #[inline]
    #[target_feature(enable = "avx")]
    pub(super) unsafe fn lane_dots<const K: usize>(
        pairs: [(&[f64], &[f64]); K],
        n: usize,
    ) -> [f64; K] {
        let mut acc = [_mm256_setzero_pd(); K];
        for at in (0..n / 4).map(|q| 4 * q) {
            for (a, (x, y)) in acc.iter_mut().zip(&pairs) {
                // SAFETY: at + 4 <= n (the caller's contract).
                let (x, y) = unsafe { (load(x, at), load(y, at)) };
                *a = _mm256_add_pd(*a, _mm256_mul_pd(x, y));
            }
        }
        std::array::from_fn(|k| {
            let (x, y) = pairs[k];
            finish(acc[k], (n / 4 * 4..n).map(|i| x[i] * y[i]))
        })
    }

    /// # Safety
    /// Every slice holds at least `n` values.
    #[inline]
    #[target_feature(enable = "avx")]
    pub(super) unsafe fn change_sums(
        new: &[f64],
        old: &[f64],
        w: Option<&[f64]>,
        n: usize,
    ) -> [f64; 2] {
        let (mut squares, mut projected) = (_mm256_setzero_pd(), _mm256_setzero_pd());
        for at in (0..n / 4).map(|q| 4 * q) {
            // SAFETY: at + 4 <= n (the caller's contract).
            let delta = unsafe { _mm256_sub_pd(load(new, at), load(old, at)) };
            squares = _mm256_add_pd(squares, _mm256_mul_pd(delta, delta));
            if let Some(w) = w {
                // SAFETY: as above.
                let w = unsafe { load(w, at) };
                projected = _mm256_add_pd(projected, _mm256_mul_pd(w, delta));
            }
        }
        let tail = n / 4 * 4..n;
        let delta = |i: usize| new[i] - old[i];
        [
            finish(squares, tail.clone().map(|i| delta(i) * delta(i))),
            w.map_or(0.0, |w| finish(projected, tail.map(|i| w[i] * delta(i)))),
        ]
    }

    /// # Safety
    /// Every slice holds at least `n` values.
    #[inline]
    #[target_feature(enable = "avx")]
    pub(super) unsafe fn quotient_max_dot(
        out: &mut [f64],
        p: &[f64],
        r: &[f64],
        w: &[f64],
        n: usize,
    ) -> (f64, f64) {
        // `max_pd(a, b)` is `a > b ? a : b`: the floor of `at_least_min_positive` and the
        // NaN-ignoring maximum of `map_max_dot`.
        let floor = _mm256_set1_pd(f64::MIN_POSITIVE);
        let (mut top, mut dot) = (_mm256_setzero_pd(), _mm256_setzero_pd());
        for at in (0..n / 4).map(|q| 4 * q) {
            // SAFETY: at + 4 <= n (the caller's contract).
            let (p, r, w) = unsafe { (load(p, at), load(r, at), load(w, at)) };
            let x = _mm256_div_pd(p, _mm256_max_pd(r, floor));
            // SAFETY: as above.
            unsafe { _mm256_storeu_pd(out.as_mut_ptr().add(at), x) };
            top = _mm256_max_pd(x, top);
            dot = _mm256_add_pd(dot, _mm256_mul_pd(x, w));
        }
        let mut lanes = [0.0; 4];
        // SAFETY: `lanes` holds four f64.
        unsafe { _mm256_storeu_pd(lanes.as_mut_ptr(), top) };
        let larger = |t: f64, x: f64| if x > t { x } else { t };
        let tail = n / 4 * 4..n;
        for i in tail.clone() {
            out[i] = p[i] / super::at_least_min_positive(r[i]);
            lanes[0] = larger(lanes[0], out[i]);
        }
        let top = larger(larger(lanes[0], lanes[1]), larger(lanes[2], lanes[3]));
        (top, finish(dot, tail.map(|i| out[i] * w[i])))
    }

    /// # Safety
    /// Every slice holds at least `n` values.
    #[inline]
    #[target_feature(enable = "avx")]
    pub(super) unsafe fn damp_in_place(
        new: &mut [f64],
        old: &[f64],
        w: &[f64],
        damping: f64,
        scale: f64,
        n: usize,
    ) -> (f64, f64) {
        let (d, s) = (_mm256_set1_pd(damping), _mm256_set1_pd(scale));
        let sign = _mm256_set1_pd(-0.0);
        let (mut l1, mut projected) = (_mm256_setzero_pd(), _mm256_setzero_pd());
        for at in (0..n / 4).map(|q| 4 * q) {
            // SAFETY: at + 4 <= n (the caller's contract).
            let (x, o, w) = unsafe { (load(new, at), load(old, at), load(w, at)) };
            let x = _mm256_add_pd(_mm256_mul_pd(d, o), _mm256_mul_pd(s, x));
            // SAFETY: as above.
            unsafe { _mm256_storeu_pd(new.as_mut_ptr().add(at), x) };
            let delta = _mm256_sub_pd(x, o);
            l1 = _mm256_add_pd(l1, _mm256_andnot_pd(sign, delta));
            projected = _mm256_add_pd(projected, _mm256_mul_pd(w, delta));
        }
        let tail = n / 4 * 4..n;
        for i in tail.clone() {
            new[i] = damping * old[i] + scale * new[i];
        }
        let delta = |i: usize| new[i] - old[i];
        (
            finish(l1, tail.clone().map(|i| delta(i).abs())),
            finish(projected, tail.map(|i| w[i] * delta(i))),
        )
    }
}

/// `f64::max(v, f64::MIN_POSITIVE)` (MIN_POSITIVE for a NaN `v` too), written as a comparison
/// so that loops over it vectorise: `f64::max`'s NaN rule does not map to a vector max.
#[inline(always)]
pub fn at_least_min_positive(v: f64) -> f64 {
    if v > f64::MIN_POSITIVE {
        v
    } else {
        f64::MIN_POSITIVE
    }
}

/// `out[i] = value(out[i], a[i], b[i])` for every `i` (the slices of one length), returning
/// the largest new value (and 0; NaN is ignored, as `f64::max` does) and `Σ_i out[i] w[i]`,
/// 4 lanes at a time: a message's sender product, its scale and its mass in one pass.
#[inline(always)]
pub fn map_max_dot(
    out: &mut [f64],
    a: &[f64],
    b: &[f64],
    w: &[f64],
    value: impl Fn(f64, f64, f64) -> f64,
) -> (f64, f64) {
    let n = out.len();
    let (a, b, w) = (&a[..n], &b[..n], &w[..n]);
    let (mut top, mut dot) = ([0.0f64; 4], [0.0f64; 4]);
    // `x > t ? x : t` keeps t for a NaN x and compiles to a vector max (`f64::max` does not).
    let larger = |t: f64, x: f64| if x > t { x } else { t };
    let mut quads = out.chunks_exact_mut(4);
    let mut rest = (a.chunks_exact(4), b.chunks_exact(4), w.chunks_exact(4));
    for (((o, a), b), w) in (&mut quads)
        .zip(&mut rest.0)
        .zip(&mut rest.1)
        .zip(&mut rest.2)
    {
        let x: [f64; 4] = std::array::from_fn(|l| value(o[l], a[l], b[l]));
        o.copy_from_slice(&x);
        top = std::array::from_fn(|l| larger(top[l], x[l]));
        dot = std::array::from_fn(|l| dot[l] + x[l] * w[l]);
    }
    let tail = quads.into_remainder();
    let (a, b, w) = (rest.0.remainder(), rest.1.remainder(), rest.2.remainder());
    for (((o, &a), &b), &w) in tail.iter_mut().zip(a).zip(b).zip(w) {
        let x = value(*o, a, b);
        *o = x;
        top[0] = larger(top[0], x);
        dot[0] += x * w;
    }
    (
        larger(larger(top[0], top[1]), larger(top[2], top[3])),
        (dot[0] + dot[1]) + (dot[2] + dot[3]),
    )
}

/// `new[i] = damping · old[i] + scale · new[i]` in place, returning the change's L1 norm
/// `Σ |new[i] - old[i]|` and its projection `Σ w[i] (new[i] - old[i])`: a damped message update
/// and its change in one pass over the three slices (of one length), 4 lanes at a time.
/// Four lanes in one AVX register where the processor has it (the same operations in the same
/// order, so the same bits).
#[inline(always)]
pub fn damp_in_place(
    new: &mut [f64],
    old: &[f64],
    w: &[f64],
    damping: f64,
    scale: f64,
) -> (f64, f64) {
    let n = new.len();
    let (old, w) = (&old[..n], &w[..n]);
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx") {
        // SAFETY: the processor has AVX (checked); every slice holds n values (cut above).
        return unsafe { avx::damp_in_place(new, old, w, damping, scale, n) };
    }
    damp_lanes(new, old, w, damping, scale)
}

/// [`damp_in_place`] in plain code, lane by lane.
#[inline(always)]
fn damp_lanes(new: &mut [f64], old: &[f64], w: &[f64], damping: f64, scale: f64) -> (f64, f64) {
    let n = new.len();
    let (old, w) = (&old[..n], &w[..n]);
    let (mut l1, mut projected) = ([0.0f64; 4], [0.0f64; 4]);
    let mut update = |x: &mut f64, o: f64, w: f64, lane: usize| {
        *x = damping * o + scale * *x;
        let delta = *x - o;
        l1[lane] += delta.abs();
        projected[lane] += w * delta;
    };
    let mut tail = n / 4 * 4;
    for ((x, o), w) in new
        .chunks_exact_mut(4)
        .zip(old.chunks_exact(4))
        .zip(w.chunks_exact(4))
    {
        for lane in 0..4 {
            update(&mut x[lane], o[lane], w[lane], lane);
        }
    }
    while tail < n {
        update(&mut new[tail], old[tail], w[tail], 0);
        tail += 1;
    }
    (
        (l1[0] + l1[1]) + (l1[2] + l1[3]),
        (projected[0] + projected[1]) + (projected[2] + projected[3]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_sums_agree_with_plain_loops() {
        for n in [0usize, 1, 3, 4, 5, 50, 51] {
            let v: Vec<f64> = (0..n).map(|i| ((i * 7919) % 101) as f64 - 40.0).collect();
            let [sum, squares] = lane_sums(n, |i| [v[i], v[i] * v[i]]);
            assert_eq!(sum, v.iter().sum::<f64>(), "n = {n}");
            assert_eq!(squares, v.iter().map(|x| x * x).sum::<f64>());
        }
    }

    #[test]
    fn dots_and_change_sums_are_lane_sums_to_the_bit() {
        for n in [0usize, 1, 3, 4, 5, 37, 50, 51] {
            let x: Vec<f64> = (0..n)
                .map(|i| ((i * 7919) % 101) as f64 / 7.0 - 6.0)
                .collect();
            let y: Vec<f64> = (0..n)
                .map(|i| ((i * 31) % 17) as f64 * 0.37 - 2.5)
                .collect();
            let w: Vec<f64> = (0..n).map(|i| 1e-3 * ((i * 13) % 11) as f64).collect();
            let want = lane_sums(n, |i| [x[i] * y[i], x[i] * x[i], y[i] * w[i]]);
            assert_eq!(lane_dots([(&x, &y), (&x, &x), (&y, &w)]), want, "n = {n}");
            let d = |i: usize| x[i] - y[i];
            let want = lane_sums(n, |i| [d(i) * d(i), w[i] * d(i)]);
            assert_eq!(change_sums(&x, &y, Some(&w)), want, "n = {n}");
            assert_eq!(change_sums(&x, &y, None), [want[0], 0.0], "n = {n}");
        }
    }

    #[test]
    fn quotients_and_damping_are_the_plain_loops_to_the_bit() {
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for n in [0usize, 1, 3, 4, 5, 10, 37, 50, 51] {
            let p: Vec<f64> = (0..n)
                .map(|i| ((i * 7919) % 101) as f64 / 7.0 + 1e-3)
                .collect();
            // Zeros, a subnormal and a NaN in the divisor meet the floor.
            let r: Vec<f64> = (0..n)
                .map(|i| match i % 9 {
                    2 => 0.0,
                    5 => 1e-310,
                    7 => f64::NAN,
                    _ => ((i * 31) % 17) as f64 * 0.37 + 0.01,
                })
                .collect();
            let w: Vec<f64> = (0..n).map(|i| ((i * 13) % 11) as f64 - 4.5).collect();
            let (mut fast, mut plain) = (vec![0.0; n], vec![0.0; n]);
            let got = quotient_max_dot(&mut fast, &p, &r, &w);
            let want = map_max_dot(&mut plain, &p, &r, &w, |_, p, r| {
                p / at_least_min_positive(r)
            });
            assert_eq!(bits(&fast), bits(&plain), "n = {n}");
            assert_eq!(
                (got.0.to_bits(), got.1.to_bits()),
                (want.0.to_bits(), want.1.to_bits())
            );

            let old: Vec<f64> = (0..n).map(|i| ((i * 17) % 23) as f64 / 5.0 - 2.0).collect();
            let (mut fast, mut plain) = (p.clone(), p.clone());
            let got = damp_in_place(&mut fast, &old, &w, 0.3, 0.7 / 3.0);
            let want = damp_lanes(&mut plain, &old, &w, 0.3, 0.7 / 3.0);
            assert_eq!(bits(&fast), bits(&plain), "n = {n}");
            assert_eq!(
                (got.0.to_bits(), got.1.to_bits()),
                (want.0.to_bits(), want.1.to_bits())
            );
        }
    }

    #[test]
    fn mapping_returns_the_largest_value_and_the_weighted_sum() {
        for n in [0usize, 1, 3, 4, 5, 50, 51] {
            let a: Vec<f64> = (0..n).map(|i| ((i * 7919) % 101) as f64 / 8.0).collect();
            let b: Vec<f64> = (0..n).map(|i| 1.0 + (i % 3) as f64).collect();
            let w: Vec<f64> = (0..n).map(|i| ((i * 31) % 7) as f64 - 2.0).collect();
            let mut out: Vec<f64> = (0..n).map(|i| i as f64).collect();
            let want: Vec<f64> = (0..n).map(|i| i as f64 + a[i] / b[i]).collect();
            let (top, dot) = map_max_dot(&mut out, &a, &b, &w, |o, a, b| o + a / b);
            assert_eq!(out, want, "n = {n}");
            assert_eq!(top, want.iter().fold(0.0f64, |t, &x| t.max(x)));
            let sum: f64 = want.iter().zip(&w).map(|(x, w)| x * w).sum();
            assert!(
                (dot - sum).abs() <= 1e-12 * sum.abs().max(1.0),
                "{dot} {sum}"
            );
        }
        // A NaN is left out of the largest value, as f64::max leaves it, and reaches the sum.
        let mut out = vec![1.0, f64::NAN, 3.0, 2.0, 0.5];
        let (top, dot) = map_max_dot(
            &mut out.clone(),
            &out.clone(),
            &[0.0; 5],
            &[1.0; 5],
            |_, a, _| a,
        );
        assert_eq!(top, 3.0);
        assert!(dot.is_nan());
        out[4] = f64::NAN;
        let (top, _) = map_max_dot(&mut out.clone(), &out, &[0.0; 5], &[1.0; 5], |_, a, _| a);
        assert_eq!(top, 3.0);
    }

    #[test]
    fn the_floor_is_f64_max_with_min_positive() {
        for v in [
            f64::NAN,
            -1.0,
            -0.0,
            0.0,
            1e-310,
            f64::MIN_POSITIVE,
            1e-300,
            0.5,
            f64::INFINITY,
        ] {
            assert_eq!(
                at_least_min_positive(v).to_bits(),
                v.max(f64::MIN_POSITIVE).to_bits(),
                "{v}"
            );
        }
    }

    #[test]
    fn damping_in_place_matches_the_plain_update() {
        for n in [1usize, 3, 4, 7, 50] {
            let old: Vec<f64> = (0..n).map(|i| ((i * 31) % 17) as f64 / 17.0).collect();
            let fresh: Vec<f64> = (0..n).map(|i| ((i * 13) % 11) as f64).collect();
            let w: Vec<f64> = (0..n).map(|i| i as f64 - 2.5).collect();
            let (d, scale) = (0.3, 0.05);
            let want: Vec<f64> = old
                .iter()
                .zip(&fresh)
                .map(|(o, x)| d * o + scale * x)
                .collect();
            let mut got = fresh.clone();
            let (l1, projected) = damp_in_place(&mut got, &old, &w, d, scale);
            assert_eq!(got, want, "n = {n}");
            let deltas = want.iter().zip(&old).map(|(x, o)| x - o);
            let want_l1: f64 = deltas.clone().map(f64::abs).sum();
            let want_projected: f64 = deltas.zip(&w).map(|(delta, w)| w * delta).sum();
            assert!((l1 - want_l1).abs() <= 1e-12 * (1.0 + want_l1), "n = {n}");
            assert!((projected - want_projected).abs() <= 1e-12 * (1.0 + want_l1));
        }
    }
}
