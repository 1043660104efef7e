//! EP site schedules for logistic regression (the convergence debugger's view of KJIT's EP,
//! Jitkrittum et al. 2015 Sec. 2, hosted by our EP loop of [`super::ep_logistic`]; residual
//! ordering after Elidan, McGraw & Koller
//! 2006). The messages are EP's: site i's message to `z_i` (its natural parameters
//! `(τ_i, ν_i)`) and the cavity, the message from `z_i` to site i (`(τ_c, ν_c)`); a message's
//! change in a sweep is the L1 change of its natural parameters.
//!
//! Schedules (one call of [`ScheduledEp::sweep`] is one sweep of n site updates):
//! - `sweep` (alias `sequential`): sites in index order, each from the freshest q.
//! - `synchronous`: every cavity from the same q, all sites replaced together (parallel EP).
//! - `random`: sites in a fresh seeded permutation each sweep.
//! - `residual`: n times, update the site whose pending change `|site' − site|₁` is largest.
//!   Every site touches w, so one update moves every other cavity: each pending change is
//!   stale after each update and is recomputed, which costs a cavity (O(d²)) and a projection
//!   per site, n per update, n² per sweep (against n for the other schedules).
//!
//! Damping `d` ∈ [0, 0.99] in the project's convention (`new = d · old + (1 − d) · update`, on
//! the sites' natural parameters; the engine's ρ = 1 − d).
//!
//! Cost per sweep: n projections (n² for `residual`) plus O(n d²) for the rank-1 updates and
//! O(n d² + d³) for the refactorisation and the recorded cavities.

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::ep_logistic::{LogisticEp, SweepReport};
use super::operator::ZProjection;
use crate::error::Result;
use crate::inference::Schedule;
use crate::run::residuals::change_of;

/// What one scheduled sweep did, message by message (messages `0..n` are the sites' messages
/// to their `z_i`, `n..2n` the cavities).
#[derive(Debug, Clone, PartialEq)]
pub struct SiteSweep {
    /// 1-based sweep number.
    pub sweep: usize,
    /// Each message's L1 change of natural parameters in this sweep.
    pub change: Vec<f64>,
    /// Each message's change projected on the debugger's fixed weights (sign matters).
    pub signed: Vec<f64>,
    /// `[τ, ν]` of every message after the sweep.
    pub values: Vec<f64>,
    /// Largest change of a site's (τ, ν) in the sweep (the engine's residual).
    pub residual: f64,
    /// Projections (operator calls) the sweep made.
    pub projections: usize,
    /// Site updates skipped (improper cavity or site).
    pub skipped: usize,
}

/// EP for logistic regression with a chosen site schedule and damping.
#[derive(Debug, Clone)]
pub struct ScheduledEp {
    ep: LogisticEp,
    schedule: Schedule,
    damping: f64,
    rng: ChaCha8Rng,
    /// `[τ, ν]` per message before the next sweep.
    messages: Vec<f64>,
}

impl ScheduledEp {
    /// EP on `ep`'s data from its current sites; `seed` drives the random schedule.
    pub fn new(mut ep: LogisticEp, schedule: Schedule, damping: f64, seed: u64) -> Result<Self> {
        ep.set_damping(1.0 - damping)?;
        let messages = Self::natural_messages(&ep);
        Ok(ScheduledEp {
            ep,
            schedule,
            damping,
            rng: ChaCha8Rng::seed_from_u64(seed),
            messages,
        })
    }

    fn natural_messages(ep: &LogisticEp) -> Vec<f64> {
        let n = ep.num_sites();
        let mut out = Vec::with_capacity(4 * n);
        for i in 0..n {
            let (t, v) = ep.site(i);
            out.extend_from_slice(&[t, v]);
        }
        for i in 0..n {
            let (t, v) = ep.cavity_natural(i);
            out.extend_from_slice(&[t, v]);
        }
        out
    }

    pub fn ep(&self) -> &LogisticEp {
        &self.ep
    }

    pub fn schedule(&self) -> Schedule {
        self.schedule
    }

    pub fn damping(&self) -> f64 {
        self.damping
    }

    /// Switches schedule and damping from the next sweep on, keeping the sites.
    pub fn reschedule(&mut self, schedule: Schedule, damping: f64) -> Result<()> {
        crate::inference::Damping(damping).check()?;
        self.ep.set_damping(1.0 - damping)?;
        self.schedule = schedule;
        self.damping = damping;
        Ok(())
    }

    /// Number of messages (two per site).
    pub fn num_messages(&self) -> usize {
        2 * self.ep.num_sites()
    }

    /// One sweep under the current schedule.
    pub fn sweep(&mut self, op: &mut dyn ZProjection) -> Result<SiteSweep> {
        let n = self.ep.num_sites();
        let mut report = SweepReport {
            max_site_change: 0.0,
            skipped: 0,
        };
        let mut projections = n;
        match self.schedule {
            Schedule::Synchronous => {
                report = self.ep.parallel_sweep(op)?;
            }
            // Every site shares the weights, so each colour class of the sites is one site:
            // the checkerboard is the sequential sweep.
            Schedule::Sweep | Schedule::Checkerboard | Schedule::Random => {
                let mut order: Vec<usize> = (0..n).collect();
                if self.schedule == Schedule::Random {
                    order.shuffle(&mut self.rng);
                }
                for i in order {
                    self.ep.sequential_site(i, op, &mut report)?;
                }
                self.ep.finish_sweep(&report)?;
            }
            Schedule::Residual => {
                projections = 0;
                for _ in 0..n {
                    let mut best: Option<(f64, usize, (f64, f64))> = None;
                    for i in 0..n {
                        projections += 1;
                        if let Some((t, v)) = self.ep.proposed_site(i, op)? {
                            let (t0, v0) = self.ep.site(i);
                            let pending = (t - t0).abs() + (v - v0).abs();
                            if best.is_none_or(|b| pending > b.0) {
                                best = Some((pending, i, (t, v)));
                            }
                        }
                    }
                    match best {
                        Some((_, i, (t, v))) => {
                            self.ep.apply_site(i, t, v, &mut report);
                        }
                        None => report.skipped += 1,
                    }
                }
                self.ep.finish_sweep(&report)?;
            }
        }
        let now = Self::natural_messages(&self.ep);
        let (change, signed): (Vec<f64>, Vec<f64>) = now
            .chunks_exact(2)
            .zip(self.messages.chunks_exact(2))
            .map(|(new, old)| change_of(old, new))
            .unzip();
        self.messages = now;
        Ok(SiteSweep {
            sweep: self.ep.sweeps(),
            change,
            signed,
            values: self.messages.clone(),
            residual: report.max_site_change,
            projections,
            skipped: report.skipped,
        })
    }
}

#[cfg(test)]
mod tests {
    use strum::VariantArray;

    use nalgebra::DMatrix;

    use super::*;
    use crate::inference::kjit::QuadratureProjection;

    /// A small problem with labels from a fixed rule.
    fn problem() -> LogisticEp {
        let n = 12;
        let x = DMatrix::from_fn(n, 2, |i, j| {
            ((i * 7 + j * 3) % 11) as f64 / 5.0 - 1.0 + if j == 1 { 0.3 } else { 0.0 }
        });
        let y = (0..n).map(|i| (i * 5) % 3 != 0).collect();
        LogisticEp::new(x, y, 1.0).unwrap()
    }

    #[test]
    fn every_schedule_reaches_the_same_fixed_point() {
        let mut op = QuadratureProjection::new(100).unwrap();
        let mut means = Vec::new();
        for &schedule in Schedule::VARIANTS {
            let mut ep = ScheduledEp::new(problem(), schedule, 0.0, 7).unwrap();
            let mut last = f64::INFINITY;
            for _ in 0..200 {
                last = ep.sweep(&mut op).unwrap().residual;
                if last < 1e-12 {
                    break;
                }
            }
            assert!(last < 1e-10, "{schedule:?}: residual {last}");
            means.push(ep.ep().posterior_mean().clone());
        }
        for m in &means[1..] {
            assert!((m - &means[0]).amax() < 1e-8, "{m} vs {}", means[0]);
        }
    }

    #[test]
    fn residual_schedule_costs_n_squared_projections() {
        let mut op = QuadratureProjection::new(100).unwrap();
        let mut ep = ScheduledEp::new(problem(), Schedule::Residual, 0.0, 1).unwrap();
        let s = ep.sweep(&mut op).unwrap();
        assert_eq!(s.projections, 144);
        assert_eq!(s.change.len(), 24);
        assert_eq!(s.values.len(), 48);
        let mut ep = ScheduledEp::new(problem(), Schedule::Random, 0.0, 1).unwrap();
        assert_eq!(ep.sweep(&mut op).unwrap().projections, 12);
    }
}
