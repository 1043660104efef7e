//! Predictive message passing (Wang & Gordon, AAAI 2020, Sec. 4 "The Inference Algorithm",
//! Steps 1–4, Eqs. (2)–(5); Eq. (5) with the "j ≠ k" the paper omits): leaf messages
//! u_l = ζ (one-hot features, Φ = I) or θ(x_obs) (kernel features), upward u_S = W_Sᵀ(⊗_k u_k)
//! (3), at the root d_k = T ×_{j≠k} u_j and P̂(e) = T ×_all u_j (4), downward
//! d_k = (W_S d_S) ×_{j≠k} u_j (5), and at a leaf P̂(x, e) = d_l ∘ u_l (Step 4). Every message is
//! rescaled to unit max-abs with its log scale carried: messages are unnormalised and shrink
//! with each piece of evidence (eight pen-point likelihoods per pendigits model), so unscaled
//! they would underflow.
//!
//! Cost: one pass O(Σ_S Π p_k · p_S + |T|).

/// A message rescaled to unit max-abs; the true message is `v · exp(log_scale)`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Scaled {
    pub v: Vec<f64>,
    pub log_scale: f64,
}

impl Scaled {
    pub fn new(v: Vec<f64>, log_scale: f64) -> Scaled {
        let mut s = Scaled { v, log_scale };
        let m = s.v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        if m > 0.0 && m.is_finite() {
            s.v.iter_mut().for_each(|x| *x /= m);
            s.log_scale += m.ln();
        }
        s
    }

    /// The unscaled values.
    pub fn values(&self) -> Vec<f64> {
        let s = self.log_scale.exp();
        self.v.iter().map(|x| x * s).collect()
    }
}

/// A signed number stored as sign and log-magnitude (P̂(e) can underflow and, from finite
/// data, be negative).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SignedLog {
    pub sign: f64,
    pub log_abs: f64,
}

impl SignedLog {
    pub fn new(value: f64, log_scale: f64) -> SignedLog {
        SignedLog {
            sign: if value < 0.0 { -1.0 } else { 1.0 },
            log_abs: value.abs().ln() + log_scale,
        }
    }

    pub fn value(&self) -> f64 {
        self.sign * self.log_abs.exp()
    }
}

/// Contracts every mode of the row-major tensor `t` (dims `dims`, first slowest) except `keep`
/// with `vecs[j]`; `keep = None` contracts all (a one-entry result).
pub fn contract(t: &[f64], dims: &[usize], vecs: &[&[f64]], keep: Option<usize>) -> Vec<f64> {
    let k_end = dims.len();
    let stop = keep.map_or(0, |k| k + 1);
    let mut cur: Vec<f64> = t.to_vec();
    // From the last mode back to the one after `keep`.
    for j in (stop..k_end).rev() {
        let d = dims[j];
        let v = vecs[j];
        cur = cur
            .chunks(d)
            .map(|row| row.iter().zip(v).map(|(a, b)| a * b).sum())
            .collect();
    }
    // Then the leading modes, front to back.
    if let Some(k) = keep {
        for (j, &d) in dims.iter().enumerate().take(k) {
            let v = vecs[j];
            let rest = cur.len() / d;
            let mut next = vec![0.0; rest];
            for (i, chunk) in cur.chunks(rest).enumerate() {
                for (n, x) in next.iter_mut().zip(chunk) {
                    *n += v[i] * x;
                }
            }
            cur = next;
        }
    }
    cur
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contraction_matches_a_direct_sum() {
        let dims = [2, 3, 2];
        let t: Vec<f64> = (0..12).map(|i| (i as f64 * 0.37).sin()).collect();
        let vs: [Vec<f64>; 3] = [vec![0.3, -1.2], vec![0.5, 0.1, 2.0], vec![-0.7, 0.9]];
        let refs: Vec<&[f64]> = vs.iter().map(Vec::as_slice).collect();
        for keep in 0..3 {
            let got = contract(&t, &dims, &refs, Some(keep));
            let mut want = vec![0.0; dims[keep]];
            for a in 0..2 {
                for b in 0..3 {
                    for c in 0..2 {
                        let idx = [a, b, c];
                        let mut x = t[(a * 3 + b) * 2 + c];
                        for j in 0..3 {
                            if j != keep {
                                x *= vs[j][idx[j]];
                            }
                        }
                        want[idx[keep]] += x;
                    }
                }
            }
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() < 1e-12, "keep {keep}: {got:?} vs {want:?}");
            }
        }
        let all = contract(&t, &dims, &refs, None);
        assert_eq!(all.len(), 1);
    }
}
