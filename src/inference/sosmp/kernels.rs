//! Small numeric loops written so that LLVM vectorises them (independent partial sums instead
//! of one serial accumulator). Floating-point sums therefore group terms in four lanes; every
//! caller tolerates that reordering (it is deterministic, so results stay reproducible).

/// `Σ x_i`, four lanes.
#[inline]
pub fn sum(xs: &[f64]) -> f64 {
    let mut acc = [0.0f64; 4];
    let chunks = xs.chunks_exact(4);
    let rem = chunks.remainder();
    for c in chunks {
        for l in 0..4 {
            acc[l] += c[l];
        }
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for r in rem {
        s += r;
    }
    s
}

/// `Σ a_i b_i`, four lanes.
#[inline]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f64; 4];
    let ca = a.chunks_exact(4);
    let cb = b.chunks_exact(4);
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for l in 0..4 {
            acc[l] += x[l] * y[l];
        }
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (x, y) in ra.iter().zip(rb) {
        s += x * y;
    }
    s
}

/// `out += c · x`.
#[inline]
pub fn axpy(c: f64, x: &[f64], out: &mut [f64]) {
    for (o, v) in out.iter_mut().zip(x) {
        *o += c * v;
    }
}

/// `out = a ⊙ b`.
#[inline]
pub fn mul_into(a: &[f64], b: &[f64], out: &mut [f64]) {
    for ((o, x), y) in out.iter_mut().zip(a).zip(b) {
        *o = x * y;
    }
}

/// `out ⊙= a`.
#[inline]
pub fn mul_assign(out: &mut [f64], a: &[f64]) {
    for (o, x) in out.iter_mut().zip(a) {
        *o *= x;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_agree_with_plain_sums() {
        let a: Vec<f64> = (0..103).map(|i| (i as f64 * 0.37).sin()).collect();
        let b: Vec<f64> = (0..103).map(|i| (i as f64 * 0.11).cos()).collect();
        let plain: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
        assert!((dot(&a, &b) - plain).abs() < 1e-12);
        assert!((sum(&a) - a.iter().sum::<f64>()).abs() < 1e-12);
    }
}
