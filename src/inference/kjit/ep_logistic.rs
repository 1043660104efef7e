//! EP for Bayesian logistic regression without bias (Minka's GLM form; the paper ran this loop
//! in Infer.NET, Jitkrittum et al. 2015 Sec. 2 and Exp. 3, so the loop is ours), hosting the
//! logistic factor through any [`ZProjection`]: `q(w) = N(μ, Σ)`,
//! `Σ⁻¹ = I + Σ_i τ_i x_i x_iᵀ`, `Σ⁻¹μ = Σ_i ν_i x_i`. Site i: cavity of `z_i = wᵀx_i`
//! (`τ_c = 1/v_i − τ_i`, `ν_c = m_i/v_i − ν_i`), projected belief `(m̂, v̂)` from the operator,
//! new site `τ_i = 1/v̂ − τ_c`, `ν_i = m̂/v̂ − ν_c` (damped by ρ), rank-1 update of Σ and μ.
//!
//! The first sweep is parallel (every cavity from the prior, sites applied together, as
//! Infer.NET's first iteration; it reproduces main Fig. 5's dip), later sweeps sequential.
//! Sites whose cavity or new site precision is not positive are skipped and counted.
//!
//! Cost per sweep: n operator calls plus O(n d²); Σ is refactored from the site sum after every
//! sweep (O(n d² + d³)) so rounding does not accumulate.

use nalgebra::{DMatrix, DVector};

use super::messages::{Beta, Gaussian, LogisticTuple};
use super::operator::ZProjection;
use crate::error::{Error, Result};

/// What one sweep did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SweepReport {
    /// Largest change of a site's (τ, ν).
    pub max_site_change: f64,
    /// Sites skipped (non-positive cavity or improper new site).
    pub skipped: usize,
}

/// EP for logistic regression on one data set.
#[derive(Debug, Clone)]
pub struct LogisticEp {
    /// n × d, one row per example.
    x: DMatrix<f64>,
    y: Vec<bool>,
    tau: Vec<f64>,
    nu: Vec<f64>,
    cov: DMatrix<f64>,
    /// `Σ⁻¹ μ`.
    shift: DVector<f64>,
    mean: DVector<f64>,
    damping: f64,
    sweeps: usize,
    pub skipped_total: usize,
}

impl LogisticEp {
    /// EP on inputs `x` (n × d) and labels `y`, with damping ρ ∈ (0, 1].
    pub fn new(x: DMatrix<f64>, y: Vec<bool>, damping: f64) -> Result<LogisticEp> {
        if x.nrows() != y.len() || x.nrows() == 0 || x.ncols() == 0 {
            return Err(Error::Other(format!(
                "logistic EP: {} inputs of dimension {} but {} labels",
                x.nrows(),
                x.ncols(),
                y.len()
            )));
        }
        if !(damping > 0.0 && damping <= 1.0) {
            return Err(Error::param(
                "damping",
                format!("must be in (0, 1], got {damping}"),
            ));
        }
        let (n, d) = x.shape();
        Ok(LogisticEp {
            x,
            y,
            tau: vec![0.0; n],
            nu: vec![0.0; n],
            cov: DMatrix::identity(d, d),
            shift: DVector::zeros(d),
            mean: DVector::zeros(d),
            damping,
            sweeps: 0,
            skipped_total: 0,
        })
    }

    pub fn posterior_mean(&self) -> &DVector<f64> {
        &self.mean
    }

    pub fn posterior_cov(&self) -> &DMatrix<f64> {
        &self.cov
    }

    pub fn sweeps(&self) -> usize {
        self.sweeps
    }

    fn row(&self, i: usize) -> DVector<f64> {
        self.x.row(i).transpose()
    }

    /// The cavity of site i under the current q, or None when its precision is not positive.
    pub fn cavity(&self, i: usize) -> Option<Gaussian> {
        let xi = self.row(i);
        let sx = &self.cov * &xi;
        let v = xi.dot(&sx);
        let m = xi.dot(&self.mean);
        let tau_c = 1.0 / v - self.tau[i];
        let nu_c = m / v - self.nu[i];
        (tau_c > 0.0).then(|| Gaussian::new(nu_c / tau_c, 1.0 / tau_c))
    }

    /// The z-marginal of q at example i.
    pub fn marginal(&self, i: usize) -> Gaussian {
        let xi = self.row(i);
        Gaussian::new(xi.dot(&self.mean), xi.dot(&(&self.cov * &xi)))
    }

    /// The tuple of incoming messages of site i's factor.
    pub fn tuple(&self, i: usize, cavity: Gaussian) -> LogisticTuple {
        LogisticTuple {
            z: cavity,
            p: Beta::from_label(self.y[i]),
        }
    }

    /// The damped new site from a projected belief, or None when improper.
    fn new_site(&self, i: usize, cavity: Gaussian, q: Gaussian) -> Option<(f64, f64)> {
        let outgoing = q.divide(&cavity)?;
        let tau = 1.0 / outgoing.var;
        let nu = outgoing.mean / outgoing.var;
        let r = self.damping;
        Some((
            r * tau + (1.0 - r) * self.tau[i],
            r * nu + (1.0 - r) * self.nu[i],
        ))
    }

    /// One sweep over every site (parallel on the first sweep, sequential afterwards).
    pub fn sweep(&mut self, op: &mut dyn ZProjection) -> Result<SweepReport> {
        let n = self.y.len();
        let mut report = SweepReport {
            max_site_change: 0.0,
            skipped: 0,
        };
        if self.sweeps == 0 {
            self.parallel_sites(op, &mut report)?;
        } else {
            for i in 0..n {
                self.sequential_site(i, op, &mut report)?;
            }
        }
        self.refactor()?;
        self.sweeps += 1;
        self.skipped_total += report.skipped;
        Ok(report)
    }

    /// One sequential site update (cavity, projection, new site, rank-1 update of Σ and μ).
    /// Returns whether the site changed.
    pub fn sequential_site(
        &mut self,
        i: usize,
        op: &mut dyn ZProjection,
        report: &mut SweepReport,
    ) -> Result<bool> {
        let Some((t, v)) = self.proposed_site(i, op)? else {
            report.skipped += 1;
            return Ok(false);
        };
        Ok(self.apply_site(i, t, v, report))
    }

    /// Site i's damped new natural parameters `(τ_i, ν_i)` under the current q (cavity and one
    /// projection; nothing changes), or None when the cavity or the new site is improper.
    pub fn proposed_site(&self, i: usize, op: &mut dyn ZProjection) -> Result<Option<(f64, f64)>> {
        Ok(match self.cavity(i) {
            Some(c) => op
                .project_z(&self.tuple(i, c))?
                .and_then(|q| self.new_site(i, c, q)),
            None => None,
        })
    }

    /// Sets site i to `(t, v)` with a rank-1 update of Σ and μ; false (and counted as skipped)
    /// when the update would make Σ indefinite.
    pub fn apply_site(&mut self, i: usize, t: f64, v: f64, report: &mut SweepReport) -> bool {
        let (dt, dv) = (t - self.tau[i], v - self.nu[i]);
        report.max_site_change = report.max_site_change.max(dt.abs().max(dv.abs()));
        let xi = self.row(i);
        let sx = &self.cov * &xi;
        let denom = 1.0 + dt * xi.dot(&sx);
        if denom.is_nan() || denom <= 0.0 {
            report.skipped += 1;
            return false;
        }
        self.cov.ger(-dt / denom, &sx, &sx, 1.0);
        self.tau[i] = t;
        self.nu[i] = v;
        self.shift.axpy(dv, &xi, 1.0);
        self.mean = &self.cov * &self.shift;
        true
    }

    /// Site i's natural parameters `(τ_i, ν_i)` (precision and shift of its message to `z_i`).
    pub fn site(&self, i: usize) -> (f64, f64) {
        (self.tau[i], self.nu[i])
    }

    /// The cavity of `z_i` in natural parameters `(τ_c, ν_c)`, proper or not (the message from
    /// `z_i` to site i).
    pub fn cavity_natural(&self, i: usize) -> (f64, f64) {
        let xi = self.row(i);
        let v = xi.dot(&(&self.cov * &xi));
        let m = xi.dot(&self.mean);
        (1.0 / v - self.tau[i], m / v - self.nu[i])
    }

    /// Number of sites (examples).
    pub fn num_sites(&self) -> usize {
        self.y.len()
    }

    /// Site damping ρ ∈ (0, 1] (1 = none) from the next update on.
    pub fn set_damping(&mut self, damping: f64) -> Result<()> {
        if !(damping > 0.0 && damping <= 1.0) {
            return Err(Error::param(
                "damping",
                format!("must be in (0, 1], got {damping}"),
            ));
        }
        self.damping = damping;
        Ok(())
    }

    /// One parallel sweep: every cavity from the same q, every site replaced together, then Σ
    /// and μ refactored (the sweep is counted).
    pub fn parallel_sweep(&mut self, op: &mut dyn ZProjection) -> Result<SweepReport> {
        let mut report = SweepReport {
            max_site_change: 0.0,
            skipped: 0,
        };
        self.parallel_sites(op, &mut report)?;
        self.finish_sweep(&report)?;
        Ok(report)
    }

    fn parallel_sites(&mut self, op: &mut dyn ZProjection, report: &mut SweepReport) -> Result<()> {
        let n = self.y.len();
        let cavities: Vec<Option<Gaussian>> = (0..n).map(|i| self.cavity(i)).collect();
        for (i, cavity) in cavities.into_iter().enumerate() {
            let site = match cavity {
                Some(c) => op
                    .project_z(&self.tuple(i, c))?
                    .and_then(|q| self.new_site(i, c, q)),
                None => None,
            };
            match site {
                Some((t, v)) => {
                    let change = (t - self.tau[i]).abs().max((v - self.nu[i]).abs());
                    report.max_site_change = report.max_site_change.max(change);
                    self.tau[i] = t;
                    self.nu[i] = v;
                }
                None => report.skipped += 1,
            }
        }
        Ok(())
    }

    /// Ends a sweep driven site by site with [`Self::sequential_site`]: Σ and μ are refactored
    /// from the sites and the sweep is counted.
    pub fn finish_sweep(&mut self, report: &SweepReport) -> Result<()> {
        self.refactor()?;
        self.sweeps += 1;
        self.skipped_total += report.skipped;
        Ok(())
    }

    /// Σ and μ afresh from the sites.
    fn refactor(&mut self) -> Result<()> {
        let d = self.x.ncols();
        let mut precision = DMatrix::identity(d, d);
        let mut shift = DVector::zeros(d);
        for i in 0..self.y.len() {
            let xi = self.row(i);
            precision.ger(self.tau[i], &xi, &xi, 1.0);
            shift.axpy(self.nu[i], &xi, 1.0);
        }
        let chol = precision.cholesky().ok_or_else(|| Error::Diverged {
            iteration: self.sweeps + 1,
            detail: "the EP posterior precision is not positive definite".into(),
        })?;
        self.cov = chol.inverse();
        self.mean = chol.solve(&shift);
        self.shift = shift;
        if self.mean.iter().any(|v| !v.is_finite()) {
            return Err(Error::Diverged {
                iteration: self.sweeps + 1,
                detail: "the EP posterior mean is not finite".into(),
            });
        }
        Ok(())
    }

    /// `sweeps` sweeps.
    pub fn run(&mut self, op: &mut dyn ZProjection, sweeps: usize) -> Result<()> {
        for _ in 0..sweeps {
            self.sweep(op)?;
        }
        Ok(())
    }
}
