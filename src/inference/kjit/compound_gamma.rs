//! The compound-gamma factor of Jitkrittum et al. 2015, Exp. 4 (main Fig. 7), with a quadrature
//! oracle standing in for the paper's Infer.NET: with
//! `r₂ ~ Gamma(s₁, r₁)` and `τ ~ Gamma(s₂, r₂)` integrated over r₂,
//! `f(τ) = Γ(s₁+s₂)/(Γ(s₁)Γ(s₂)) r₁^{s₁} τ^{s₂−1} / (τ + r₁)^{s₁+s₂}` (= 1/(1+τ)² for (1,1,1)).
//! The oracle projects the belief `f(τ) Gamma(τ; a, b)` onto a Gamma by mean–variance matching
//! (our default: we did not check which rule Infer.NET's `GammaFromShapeAndRateOp_Slow` uses;
//! E[τ], E[log τ] matching would be the exact KL projection), its moments by the trapezoid rule
//! on `u = log τ` (spectrally accurate
//! for this smooth, fast-decaying integrand), and divides by the incoming message.
//! Cost: O(nodes) per call.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A Gamma distribution with shape and rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GammaMsg {
    pub shape: f64,
    pub rate: f64,
}

impl GammaMsg {
    pub fn new(shape: f64, rate: f64) -> GammaMsg {
        GammaMsg { shape, rate }
    }

    pub fn is_proper(&self) -> bool {
        self.shape.is_finite() && self.rate.is_finite() && self.shape > 0.0 && self.rate > 0.0
    }

    pub fn mean(&self) -> f64 {
        self.shape / self.rate
    }

    pub fn var(&self) -> f64 {
        self.shape / (self.rate * self.rate)
    }

    /// The Gamma with this mean and variance.
    pub fn from_moments(mean: f64, var: f64) -> Option<GammaMsg> {
        let out = GammaMsg::new(mean * mean / var, mean / var);
        out.is_proper().then_some(out)
    }

    /// `self × other` (shapes add less one, rates add).
    pub fn multiply(&self, other: &GammaMsg) -> GammaMsg {
        GammaMsg::new(self.shape + other.shape - 1.0, self.rate + other.rate)
    }

    /// `self / other`; `None` when improper.
    pub fn divide(&self, other: &GammaMsg) -> Option<GammaMsg> {
        let out = GammaMsg::new(self.shape - other.shape + 1.0, self.rate - other.rate);
        out.is_proper().then_some(out)
    }
}

/// The compound-gamma factor's parameters `(s₁, r₁, s₂)`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CompoundGamma {
    pub s1: f64,
    pub r1: f64,
    pub s2: f64,
}

impl Default for CompoundGamma {
    fn default() -> Self {
        CompoundGamma {
            s1: 1.0,
            r1: 1.0,
            s2: 1.0,
        }
    }
}

impl CompoundGamma {
    /// `log f(τ)` up to its constant, at `τ = e^u`.
    fn log_factor(&self, u: f64) -> f64 {
        let tau = u.exp();
        (self.s2 - 1.0) * u - (self.s1 + self.s2) * (tau + self.r1).ln()
    }

    /// The projected belief `proj[f(τ) Gamma(τ; a, b)]` (mean–variance matching).
    pub fn project(&self, incoming: &GammaMsg) -> Result<GammaMsg> {
        if !incoming.is_proper() {
            return Err(Error::Other(format!(
                "compound gamma: improper incoming message {incoming:?}"
            )));
        }
        let (a, b) = (incoming.shape, incoming.rate);
        // In u = log τ the incoming Gamma is log-concave with mode log(a/b) and curvature a.
        let centre = (a / b).ln();
        let half_width = 40.0 / a.sqrt() + 5.0;
        let nodes = 4001;
        let h = 2.0 * half_width / (nodes - 1) as f64;
        let log_density = |u: f64| a * u - b * u.exp() + self.log_factor(u);
        let mut largest = f64::NEG_INFINITY;
        let values: Vec<(f64, f64)> = (0..nodes)
            .map(|i| {
                let u = centre - half_width + h * i as f64;
                let l = log_density(u);
                largest = largest.max(l);
                (u, l)
            })
            .collect();
        let (mut s0, mut s1, mut s2) = (0.0, 0.0, 0.0);
        for (i, &(u, l)) in values.iter().enumerate() {
            let end = if i == 0 || i == nodes - 1 { 0.5 } else { 1.0 };
            let w = end * (l - largest).exp();
            let tau = u.exp();
            s0 += w;
            s1 += w * tau;
            s2 += w * tau * tau;
        }
        let mean = s1 / s0;
        let var = s2 / s0 - mean * mean;
        GammaMsg::from_moments(mean, var).ok_or_else(|| {
            Error::Other(format!(
                "compound gamma: no Gamma has mean {mean} and variance {var}"
            ))
        })
    }

    /// The outgoing message `proj[f m] / m`; `None` when improper.
    pub fn outgoing(&self, incoming: &GammaMsg) -> Result<Option<GammaMsg>> {
        Ok(self.project(incoming)?.divide(incoming))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kjit_compound_gamma_moments_match_a_closed_form() {
        // The moments of τ^{a−1} e^{−bτ} / (1 + τ)² by an independent fine Simpson rule on τ.
        let f = CompoundGamma::default();
        let incoming = GammaMsg::new(8.0, 3.0);
        let got = f.project(&incoming).unwrap();
        let k = 400_000;
        let (lo, hi) = (0.0, 40.0);
        let h = (hi - lo) / k as f64;
        let dens = |t: f64| t.powf(7.0) * (-3.0 * t).exp() / (1.0 + t).powi(2);
        let (mean, var) =
            crate::inference::kjit::quadrature::tests::simpson_moments(dens, lo, h, k);
        assert!(
            (got.mean() - mean).abs() < 1e-10 * mean,
            "{} vs {mean}",
            got.mean()
        );
        assert!(
            (got.var() - var).abs() < 1e-9 * var,
            "{} vs {var}",
            got.var()
        );
    }
}
