//! Powers `v^e` of many values at once, for the tree-reweighted products of discrete BP
//! (Wainwright, Jaakkola, Willsky 2003, eq. 11: every incoming message is raised to the edge
//! appearance probability ρ).
//!
//! A libm `powf` call per value dominated a tree-reweighted iteration, and neither `powf` nor a
//! SIMD crate's `ln`/`exp` vectorise on the x86-64 baseline (`wide` falls back to a libm call
//! for rounding without SSE4.1; glibc's vector `pow` cannot be called from stable Rust). So
//! `v^e = exp(e ln v)` is computed here in plain f64 arithmetic that the compiler vectorises,
//! four lanes at a time where the processor has AVX2 (detected at run time), and a product's
//! power is taken once, from its factors' binary exponents and mantissas:
//! * `ln v = k ln 2 + 2 atanh(s)`, `v = 2^k m` with `m` in [√½, √2), `s = (m - 1)/(m + 1)`
//!   (|s| < 0.172), the atanh series to s^25 (truncation below 1e-18 relative);
//! * `exp y = 2^j exp(r)`, `j = round(y / ln 2)`, `|r| <= ln 2 / 2`, Taylor to r^13 (below
//!   5e-18), `ln 2` split in two parts so `j ln 2` is exact to double precision.
//!
//! Exponents are edge appearance probabilities, in (0, 1]. Accuracy: a few ulp of the exponent
//! `e ln v` (the conditioning of a power), tested against `powf`. Cost O(n) per factor, about
//! 40 flops and one division a value.

use super::lanes::{at_least_min_positive, with_avx2};

const MANTISSA: u64 = 0x000f_ffff_ffff_ffff;
const ONE_BITS: u64 = 0x3ff0_0000_0000_0000;
/// 2^52: `from_bits(TWO52_BITS | n) - 2^52 = n` for integers n < 2^52.
const TWO52_BITS: u64 = 0x4330_0000_0000_0000;
const TWO52: f64 = 4_503_599_627_370_496.0;
/// 1.5 · 2^52: adding and subtracting it rounds to the nearest integer, which sits in the low
/// mantissa bits as 2^51 + n.
const ROUND_SHIFT: f64 = 6_755_399_441_055_744.0;
const TWO51: u64 = 1 << 51;
/// ln 2 = LN2_HI + LN2_LO, LN2_HI with 32 trailing zero bits so that `j · LN2_HI` is exact.
const LN2_HI: f64 = 6.931_471_803_691_238e-1;
const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;

/// `out[x] = scale[x] · Π_j max(factors[j][x], f64::MIN_POSITIVE)^exponent` for an exponent in
/// (0, 1]: a node's tree-reweighted product of its incoming messages. The factors' binary
/// exponents and mantissas are accumulated apart, so the product never underflows however
/// small or many the factors are, and each x takes one `ln` and one `exp` instead of a power
/// per factor. Results below 2^-1022 (far below anything a normalised message can use) are
/// returned as 2^-1022 · scale. Cost O(x · (factors + 1)).
pub fn scaled_power_of_product(factors: &[&[f64]], exponent: f64, scale: &[f64], out: &mut [f64]) {
    assert!(factors.iter().all(|f| f.len() == out.len()) && scale.len() == out.len());
    assert!(
        exponent > 0.0 && exponent <= 1.0,
        "exponent {exponent} outside (0, 1]"
    );
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the processor has AVX2, checked just above.
            unsafe { product_power_avx2(factors, exponent, scale, out) };
            return;
        }
    }
    product_power(factors, exponent, scale, out);
}

/// `values[x] = scale[x] · values[x]^exponent` for values that are all at least
/// [`UNDERFLOW_GUARD`] (a plain product that did not underflow), exponent in (0, 1]: one
/// vectorised pass over many nodes' products at once, so short state vectors leave no scalar
/// tails. Returns false, leaving `values` untouched, when some value is below the guard (the
/// caller then takes [`scaled_power_of_product`] per node). Cost O(n).
pub fn scaled_power_in_place(values: &mut [f64], exponent: f64, scale: &[f64]) -> bool {
    assert_eq!(values.len(), scale.len());
    assert!(
        exponent > 0.0 && exponent <= 1.0,
        "exponent {exponent} outside (0, 1]"
    );
    if lane_min(values) < UNDERFLOW_GUARD {
        return false;
    }
    with_avx2(
        #[inline(always)]
        || power_in_place(values, exponent, scale),
    );
    true
}

/// Values per block of [`power_in_place`]: four registers of four lanes.
const INTERLEAVED: usize = 16;

#[inline(always)]
fn power_in_place(values: &mut [f64], exponent: f64, scale: &[f64]) {
    let power = |v: f64, c: f64| c * exp_fast(log_of_power(ln_fast(v), exponent));
    // A value's ln and exp are one long chain of dependent operations; a block of several
    // registers' values at a time lets independent chains fill the pipelines, where one
    // register at a time waited on each step (the same operations per value: the same bits).
    let mut blocks = values.chunks_exact_mut(INTERLEAVED);
    let mut scales = scale.chunks_exact(INTERLEAVED);
    for (block, scale) in (&mut blocks).zip(&mut scales) {
        let block: &mut [f64; INTERLEAVED] = block.try_into().expect("a whole block");
        let scale: &[f64; INTERLEAVED] = scale.try_into().expect("a whole block");
        // A plain loop, not `array::from_fn`: that may be left outside the AVX2 function.
        let mut logs = [0.0; INTERLEAVED];
        for (y, &v) in logs.iter_mut().zip(block.iter()) {
            *y = log_of_power(ln_fast(v), exponent);
        }
        for ((o, &y), &c) in block.iter_mut().zip(&logs).zip(scale) {
            *o = c * exp_fast(y);
        }
    }
    for (o, &c) in blocks.into_remainder().iter_mut().zip(scales.remainder()) {
        *o = power(*o, c);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn product_power_avx2(factors: &[&[f64]], exponent: f64, scale: &[f64], out: &mut [f64]) {
    product_power(factors, exponent, scale, out);
}

#[inline(always)]
fn product_power(factors: &[&[f64]], exponent: f64, scale: &[f64], out: &mut [f64]) {
    const BLOCK: usize = 64;
    let mut exps = [0.0f64; BLOCK];
    for (b, (out, scale)) in out.chunks_mut(BLOCK).zip(scale.chunks(BLOCK)).enumerate() {
        let range = b * BLOCK..b * BLOCK + out.len();
        // The plain product first: unless a value may have underflowed, one ln of it will do.
        out.fill(1.0);
        for f in factors {
            for (o, &v) in out.iter_mut().zip(&f[range.clone()]) {
                *o *= at_least_min_positive(v);
            }
        }
        if lane_min(out) >= UNDERFLOW_GUARD {
            for (o, &c) in out.iter_mut().zip(scale) {
                *o = c * exp_fast(log_of_power(ln_fast(*o), exponent));
            }
            continue;
        }
        // Binary exponents and mantissas apart: `out` holds the mantissa product, in [1, 2).
        let exps = &mut exps[..out.len()];
        exps.fill(0.0);
        out.fill(1.0);
        for f in factors {
            for ((m, k), &v) in out.iter_mut().zip(exps.iter_mut()).zip(&f[range.clone()]) {
                let (kv, mv) = split(at_least_min_positive(v));
                let (kp, mp) = split(*m * mv);
                *k += kv + kp;
                *m = mp;
            }
        }
        for ((o, &k), &c) in out.iter_mut().zip(exps.iter()).zip(scale) {
            let log = k * LN2_HI + (ln_fast(*o) + k * LN2_LO);
            *o = c * exp_fast(log_of_power(log, exponent));
        }
    }
}

/// `ln(v^exponent)` from `ln v`, kept where [`exp_fast`] is defined: below [`MIN_LOG`] the power
/// is returned as f64::MIN_POSITIVE.
#[inline(always)]
fn log_of_power(log: f64, exponent: f64) -> f64 {
    (exponent * log).clamp(MIN_LOG, 709.0)
}

/// ln 2^-1022: the smallest power returned is f64::MIN_POSITIVE.
const MIN_LOG: f64 = -708.396_418_532_264_1;

/// Below this a product may have lost digits to underflow (or be 0).
pub const UNDERFLOW_GUARD: f64 = 1e-290;

/// The smallest of `values`, in 4 lanes.
#[inline(always)]
fn lane_min(values: &[f64]) -> f64 {
    let mut lanes = [f64::INFINITY; 4];
    let mut chunks = values.chunks_exact(4);
    for c in &mut chunks {
        for (l, v) in lanes.iter_mut().zip(c) {
            *l = l.min(*v);
        }
    }
    for v in chunks.remainder() {
        lanes[0] = lanes[0].min(*v);
    }
    lanes[0].min(lanes[1]).min(lanes[2].min(lanes[3]))
}

/// `(k, m)` with `v = 2^k m`, m in [1, 2), for a positive normal v (k as a double, without an
/// integer conversion, which would not vectorise).
#[inline(always)]
fn split(v: f64) -> (f64, f64) {
    let bits = v.to_bits();
    let m = f64::from_bits((bits & MANTISSA) | ONE_BITS);
    let field = f64::from_bits(TWO52_BITS | (bits >> 52)) - TWO52;
    (field - 1023.0, m)
}

/// ln v for a positive normal v (see the module doc).
#[inline(always)]
fn ln_fast(v: f64) -> f64 {
    let (k, m) = split(v);
    let high = m > std::f64::consts::SQRT_2;
    let m = if high { 0.5 * m } else { m };
    let k = k + if high { 1.0 } else { 0.0 };
    let s = (m - 1.0) / (m + 1.0);
    // atanh(s) / s = Σ_{i <= 12} z^i / (2i + 1), z = s², by Estrin's scheme (pairs, then
    // powers z², z⁴, z⁸): a short dependency chain, so several lanes' evaluations overlap.
    let z = s * s;
    let z2 = z * z;
    let z4 = z2 * z2;
    let z8 = z4 * z4;
    // Multiplied by the series' reciprocals: a division by a constant stays a division.
    let c = &INVERSE_ODD;
    let pair = |i: usize| c[i] + c[i + 1] * z;
    let low = pair(0) + pair(2) * z2 + (pair(4) + pair(6) * z2) * z4;
    let high = pair(8) + pair(10) * z2 + c[12] * z4;
    let p = low + high * z8;
    k * LN2_HI + (2.0 * s * p + k * LN2_LO)
}

/// exp y for y in [ln f64::MIN_POSITIVE, ln f64::MAX] (see the module doc).
#[inline(always)]
fn exp_fast(y: f64) -> f64 {
    let shifted = y * std::f64::consts::LOG2_E + ROUND_SHIFT;
    let j = shifted - ROUND_SHIFT;
    // 2^j from the integer in the low mantissa bits (2^51 + j), j in [-1022, 1023].
    let biased = (shifted.to_bits() & MANTISSA)
        .wrapping_sub(TWO51)
        .wrapping_add(1023);
    let two_j = f64::from_bits(biased << 52);
    let r = (y - j * LN2_HI) - j * LN2_LO;
    // Taylor series of exp(r) to r^13 by Estrin's scheme (see `ln_fast`).
    let c = &INVERSE_FACTORIALS;
    let r2 = r * r;
    let r4 = r2 * r2;
    let r8 = r4 * r4;
    let pair = |n: usize| c[n] + c[n + 1] * r;
    let low = pair(0) + pair(2) * r2 + (pair(4) + pair(6) * r2) * r4;
    let high = pair(8) + pair(10) * r2 + pair(12) * r4;
    let p = low + high * r8;
    p * two_j
}

/// 1 / (2i + 1) for i = 0..=12: the atanh series' coefficients.
const INVERSE_ODD: [f64; 13] = [
    1.0,
    1.0 / 3.0,
    1.0 / 5.0,
    1.0 / 7.0,
    1.0 / 9.0,
    1.0 / 11.0,
    1.0 / 13.0,
    1.0 / 15.0,
    1.0 / 17.0,
    1.0 / 19.0,
    1.0 / 21.0,
    1.0 / 23.0,
    1.0 / 25.0,
];

/// 1 / n! for n = 0..=13.
const INVERSE_FACTORIALS: [f64; 14] = [
    1.0,
    1.0,
    1.0 / 2.0,
    1.0 / 6.0,
    1.0 / 24.0,
    1.0 / 120.0,
    1.0 / 720.0,
    1.0 / 5_040.0,
    1.0 / 40_320.0,
    1.0 / 362_880.0,
    1.0 / 3_628_800.0,
    1.0 / 39_916_800.0,
    1.0 / 479_001_600.0,
    1.0 / 6_227_020_800.0,
];

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    /// Within `ulps` units in the last place of the exponent `e ln v`: a power's own
    /// conditioning (an error δ in `e ln v` is a relative error δ in `v^e`).
    fn close(got: f64, want: f64, v: f64, e: f64, ulps: f64) -> bool {
        let tolerance = ulps * f64::EPSILON * (1.0 + (e * v.ln()).abs());
        ((got - want) / want).abs() <= tolerance
    }

    #[test]
    fn a_single_factor_matches_powf_within_a_few_ulp_of_the_exponent() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        // Log-uniform over the normal range below 1, plus the ends and values near √2 · 2^k.
        let mut values: Vec<f64> = (0..20_001)
            .map(|_| 10f64.powf(rng.random_range(-307.5..0.0)))
            .collect();
        values.extend([
            1.0,
            0.5,
            0.75,
            f64::MIN_POSITIVE,
            std::f64::consts::FRAC_1_SQRT_2,
        ]);
        values.extend((1..60).map(|k| std::f64::consts::SQRT_2 / 2f64.powi(k)));
        let ones = vec![1.0; values.len()];
        for exponent in [0.505_050_5, 0.5, 0.25, 0.999, 1e-3, 1.0] {
            let mut got = vec![0.0; values.len()];
            scaled_power_of_product(&[&values], exponent, &ones, &mut got);
            let mut portable = vec![0.0; values.len()];
            product_power(&[&values], exponent, &ones, &mut portable);
            for ((&v, &g), &p) in values.iter().zip(&got).zip(&portable) {
                let want = v.powf(exponent);
                assert!(
                    close(g, want, v, exponent, 4.0),
                    "{v}^{exponent}: {g} against {want}"
                );
                assert!(close(p, want, v, exponent, 4.0), "{v}^{exponent}: {p}");
            }
        }
    }

    #[test]
    fn a_block_in_place_matches_powf_and_refuses_what_may_have_underflowed() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let values: Vec<f64> = (0..1_003)
            .map(|_| 10f64.powf(rng.random_range(-289.0..0.0)))
            .collect();
        let scale: Vec<f64> = (0..values.len()).map(|i| 1.0 + i as f64 * 1e-3).collect();
        for exponent in [0.505_050_5, 0.5, 1e-3, 1.0] {
            let mut got = values.clone();
            assert!(scaled_power_in_place(&mut got, exponent, &scale));
            for ((&v, &g), &c) in values.iter().zip(&got).zip(&scale) {
                let want = c * v.powf(exponent);
                assert!(close(g, want, v, exponent, 4.0), "{v}^{exponent}: {g}");
            }
        }
        // Whole blocks and the remainder take the same operations per value: the same bits as
        // one value at a time.
        let mut whole = values.clone();
        assert!(scaled_power_in_place(&mut whole, 0.6, &scale));
        let mut one_by_one = values.clone();
        for (v, c) in one_by_one.iter_mut().zip(&scale) {
            let (v, c) = (std::slice::from_mut(v), std::slice::from_ref(c));
            assert!(scaled_power_in_place(v, 0.6, c));
        }
        assert_eq!(whole, one_by_one);
        let mut tiny = values.clone();
        tiny[500] = 1e-300;
        let before = tiny.clone();
        assert!(!scaled_power_in_place(&mut tiny, 0.5, &scale));
        assert_eq!(tiny, before, "a refused block is left as it was");
    }

    #[test]
    fn a_product_of_tiny_factors_keeps_its_digits() {
        let a = [1e-200, 0.5, 0.3, 1.0, 0.0];
        let b = [1e-200, 0.25, 1e-300, 1.0, 0.7];
        let c = [1e-200, 0.125, 1e-300, 1.0, 0.2];
        let scale = [2.0, 1.0, 1.0, 3.0, 1.0];
        let mut out = [0.0; 5];
        for exponent in [0.505_050_5, 0.5, 1.0, 0.01] {
            scaled_power_of_product(&[&a, &b, &c], exponent, &scale, &mut out);
            for x in 0..5 {
                // The exact value's logarithm, from the factors' logarithms.
                let log: f64 = [a[x], b[x], c[x]]
                    .iter()
                    .map(|v| v.max(f64::MIN_POSITIVE).ln())
                    .sum::<f64>()
                    * exponent;
                let want = scale[x] * log.max(MIN_LOG).exp();
                let tolerance = 8.0 * f64::EPSILON * (1.0 + log.abs());
                assert!(
                    ((out[x] - want) / want).abs() <= tolerance,
                    "x {x}, exponent {exponent}: {} against {want}",
                    out[x]
                );
            }
        }
        // 1e-600 to the power 0.5 is 1e-300, though the product itself underflows.
        assert!(out[0] > 0.0);
    }
}
