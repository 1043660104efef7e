//! The three operators that can host the logistic factor in EP (Jitkrittum et al. 2015,
//! Secs. 2–3, Eqs. (1)–(17)): the quadrature
//! reference, the importance-sampling oracle of eq. (2), and KJIT (Jitkrittum et al. 2015,
//! Secs. 3–4): two learned directions (z: targets (mean, log variance) of q_{f→z};
//! p: (log α, log β) of q_{f→p}), each gated on its own predictive variance, sharing one oracle
//! whose answer is computed once per call when either direction is uncertain.
//!
//! Cost per call: quadrature O(nodes); sampling O(M); KJIT O(D_in D_out + D_out²) per
//! direction, plus O(M + D_out²) on oracle calls.

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use super::embedding::DiagGaussian;
use super::learner::{Answer, JitLearner, JitSettings};
use super::messages::{Beta, Gaussian, LogisticTuple};
use super::oracle::ImportanceOracle;
use super::quadrature::QuadratureProjection;
use crate::error::Result;

/// Something that returns the projected belief `q_{f→z}` of the logistic factor.
pub trait ZProjection {
    /// `None` when no proper belief is available (the EP site is skipped).
    fn project_z(&mut self, tuple: &LogisticTuple) -> Result<Option<Gaussian>>;
}

impl ZProjection for QuadratureProjection {
    fn project_z(&mut self, tuple: &LogisticTuple) -> Result<Option<Gaussian>> {
        Ok(Some(self.project(tuple).z))
    }
}

/// The sampling operator: the oracle answers every call.
pub struct SamplingOperator {
    pub oracle: Arc<ImportanceOracle>,
    pub calls: usize,
    /// Calls whose answer had too few effective particles (the site was skipped).
    pub unreliable: usize,
}

impl SamplingOperator {
    pub fn new(oracle: Arc<ImportanceOracle>) -> SamplingOperator {
        SamplingOperator {
            oracle,
            calls: 0,
            unreliable: 0,
        }
    }
}

impl ZProjection for SamplingOperator {
    fn project_z(&mut self, tuple: &LogisticTuple) -> Result<Option<Gaussian>> {
        self.calls += 1;
        let Some(estimate) = self.oracle.reliable(tuple)? else {
            self.unreliable += 1;
            return Ok(None);
        };
        let z = estimate.beliefs.z;
        Ok(z.is_proper().then_some(z))
    }
}

/// One KJIT call, for the uncertainty trace (main Fig. 5).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CallRecord {
    /// Log predictive variance of the z-direction (NaN during the minibatch phase).
    pub log_var_z: f64,
    pub log_var_p: f64,
    /// Whether the z-direction asked the oracle.
    pub oracle_z: bool,
    /// The incoming z-message (for the operator panel's scatter).
    pub mean_z: f64,
    pub var_z: f64,
    /// The incoming p-message (for the message inspector).
    pub p: Beta,
}

/// Counters of a KJIT operator.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct KjitCounters {
    pub calls: usize,
    /// z-direction oracle calls (what Exp. 3 counts).
    pub oracle_calls_z: usize,
    pub oracle_calls_p: usize,
    /// Oracle answers that were improper and not trained on.
    pub untrainable_z: usize,
    pub untrainable_p: usize,
    /// Predictions whose quotient by the incoming message was improper.
    pub improper_predictions: usize,
    /// Oracle answers with too few effective particles (not used, not trained on).
    pub unreliable_oracle: usize,
    /// Total seconds of confident calls and of oracle calls.
    pub predict_seconds: f64,
    pub predict_count: usize,
    pub oracle_seconds: f64,
    pub oracle_count: usize,
}

/// Wall times of single pieces of work, for the medians in results.json.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallTimes {
    /// Seconds of each confident message: one direction's features, prediction and variance.
    pub message_seconds: Vec<f64>,
    /// Seconds of each oracle evaluation (the importance sampler alone).
    pub oracle_seconds: Vec<f64>,
}

/// KJIT for the logistic factor.
pub struct KjitOperator {
    oracle: Arc<ImportanceOracle>,
    z_learner: JitLearner,
    p_learner: JitLearner,
    pub counters: KjitCounters,
    pub times: CallTimes,
    pub trace: Vec<CallRecord>,
}

/// The tuple as one diagonal Gaussian (z, moment-matched p).
pub fn tuple_input(tuple: &LogisticTuple) -> DiagGaussian {
    let (m, v) = tuple.as_gaussian();
    DiagGaussian::new(m.to_vec(), v.to_vec())
}

impl KjitOperator {
    /// Both directions with `settings` (the p-direction's features use `seed + 2`).
    pub fn new(oracle: Arc<ImportanceOracle>, settings: JitSettings) -> Result<KjitOperator> {
        let p_settings = JitSettings {
            seed: settings.seed.wrapping_add(2),
            ..settings
        };
        Ok(KjitOperator {
            oracle,
            z_learner: JitLearner::new(settings, 2)?,
            p_learner: JitLearner::new(p_settings, 2)?,
            counters: KjitCounters::default(),
            times: CallTimes::default(),
            trace: Vec::new(),
        })
    }

    /// Forgets what both directions learned (features, regressions, the median heuristic's
    /// minibatch): the next B calls go to the oracle again. The trace and counters stay.
    pub fn reset_learners(&mut self) -> Result<()> {
        self.z_learner = JitLearner::new(*self.z_learner.settings(), 2)?;
        self.p_learner = JitLearner::new(*self.p_learner.settings(), 2)?;
        Ok(())
    }

    /// A new threshold τ for both directions, effective from the next call.
    pub fn set_tau(&mut self, tau: f64) -> Result<()> {
        self.z_learner.set_tau(tau)?;
        self.p_learner.set_tau(tau)
    }

    /// The oracle's answer to `tuple` (None when unreliable), for inspection.
    pub fn oracle_answer(&self, tuple: &LogisticTuple) -> Result<Option<Gaussian>> {
        Ok(self.oracle.reliable(tuple)?.map(|e| e.beliefs.z))
    }

    pub fn z_learner(&self) -> &JitLearner {
        &self.z_learner
    }

    pub fn p_learner(&self) -> &JitLearner {
        &self.p_learner
    }

    /// Both directions' projected beliefs (the p-belief is learned as in the paper but does
    /// not affect q(w)).
    pub fn project(&mut self, tuple: &LogisticTuple) -> Result<(Option<Gaussian>, Option<Beta>)> {
        let start = Instant::now();
        let input = tuple_input(tuple);
        let z_answer = self.timed_ask(Direction::Z, &input)?;
        let p_answer = self.timed_ask(Direction::P, &input)?;
        let needs_oracle = matches!(z_answer, Answer::Uncertain { .. })
            || matches!(p_answer, Answer::Uncertain { .. });
        let estimate = if needs_oracle {
            let oracle_start = Instant::now();
            let answer = self.oracle.reliable(tuple)?.map(|e| e.beliefs);
            self.times
                .oracle_seconds
                .push(oracle_start.elapsed().as_secs_f64());
            if answer.is_none() {
                self.counters.unreliable_oracle += 1;
            }
            answer
        } else {
            None
        };
        let mut record = CallRecord {
            log_var_z: f64::NAN,
            log_var_p: f64::NAN,
            oracle_z: false,
            mean_z: tuple.z.mean,
            var_z: tuple.z.var,
            p: tuple.p,
        };
        let z = match z_answer {
            Answer::Certain { outputs, log_var } => {
                record.log_var_z = log_var;
                Some(Gaussian::new(outputs[0], outputs[1].exp()))
            }
            Answer::Uncertain { log_var, features } => {
                record.log_var_z = log_var.unwrap_or(f64::NAN);
                record.oracle_z = true;
                self.counters.oracle_calls_z += 1;
                let q = estimate.map(|b| b.z);
                // The regression's target is the projected belief q_{f→z} (Sec. 3.3, the
                // authors' `DNormalLogVarBuilder`), so an answer is untrainable only when q
                // itself is improper (improper outputs are never training targets). Requiring
                // a proper quotient q / m_{z→f} as well rejected 8104 of 8796 answers in Exp. 3
                // (weakly informative sites, where q barely differs from the cavity), so the
                // same tuples kept reaching the oracle: 9.1% oracle calls in problems 3–30
                // against 0.24% now.
                let target = q.filter(|q| q.is_proper()).map(|q| [q.mean, q.var.ln()]);
                self.z_learner
                    .teach(&input, features, target.as_ref().map(|t| &t[..]))?;
                self.counters.untrainable_z = self.z_learner.untrainable;
                q
            }
        };
        let p = match p_answer {
            Answer::Certain { outputs, log_var } => {
                record.log_var_p = log_var;
                Some(Beta::new(outputs[0].exp(), outputs[1].exp()))
            }
            Answer::Uncertain { log_var, features } => {
                record.log_var_p = log_var.unwrap_or(f64::NAN);
                self.counters.oracle_calls_p += 1;
                let q = estimate.and_then(|b| b.p);
                let target = q
                    .filter(Beta::is_proper)
                    .map(|b| [b.alpha.ln(), b.beta.ln()]);
                self.p_learner
                    .teach(&input, features, target.as_ref().map(|t| &t[..]))?;
                self.counters.untrainable_p = self.p_learner.untrainable;
                q
            }
        };
        let seconds = start.elapsed().as_secs_f64();
        if needs_oracle {
            self.counters.oracle_seconds += seconds;
            self.counters.oracle_count += 1;
        } else {
            self.counters.predict_seconds += seconds;
            self.counters.predict_count += 1;
        }
        self.counters.calls += 1;
        self.trace.push(record);
        Ok((z, p))
    }
}

#[derive(Clone, Copy)]
enum Direction {
    Z,
    P,
}

impl KjitOperator {
    /// One direction's gate, timed as one message when it is confident.
    fn timed_ask(&mut self, direction: Direction, input: &DiagGaussian) -> Result<Answer> {
        let start = Instant::now();
        let answer = match direction {
            Direction::Z => self.z_learner.ask(input)?,
            Direction::P => self.p_learner.ask(input)?,
        };
        if matches!(answer, Answer::Certain { .. }) {
            self.times
                .message_seconds
                .push(start.elapsed().as_secs_f64());
        }
        Ok(answer)
    }
}

impl ZProjection for KjitOperator {
    fn project_z(&mut self, tuple: &LogisticTuple) -> Result<Option<Gaussian>> {
        let (z, _) = self.project(tuple)?;
        let proper = z.filter(|q| q.is_proper() && q.divide(&tuple.z).is_some());
        if proper.is_none() {
            self.counters.improper_predictions += 1;
        }
        Ok(proper)
    }
}
