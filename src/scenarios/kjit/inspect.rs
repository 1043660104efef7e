//! The message inspector of the kjit room (after main Fig. 3b of Jitkrittum et al. 2015): one
//! KJIT call of Exps. 3 or 5 seen again,
//! with its incoming messages, the quadrature projected belief (the reference), the oracle's
//! answer and the operator's current prediction, and the KL divergence of each from the
//! reference. Cost: one quadrature projection, one oracle call and one prediction.

use serde::Serialize;

use super::batch::kl_gaussian;
use crate::error::Result;
use crate::inference::kjit::operator::{CallRecord, KjitOperator, tuple_input};
use crate::inference::kjit::{Beta, Gaussian, LogisticTuple, QuadratureProjection};

/// One inspected call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InspectedCall {
    /// 0-based index among all KJIT calls, and its problem (1-based).
    pub call: usize,
    pub problem: usize,
    pub cavity: Gaussian,
    pub p: Beta,
    /// Whether the oracle answered when the call was made, and the log predictive variance then
    /// (NaN during the minibatch).
    pub oracle_answered: bool,
    pub log_var_then: f64,
    pub quadrature: Gaussian,
    /// The oracle's answer (None when too few particles carry it).
    pub oracle: Option<Gaussian>,
    /// The operator's prediction now (None before the minibatch is complete).
    pub predicted_now: Option<Gaussian>,
    pub log_var_now: Option<f64>,
    /// KL[quadrature ‖ ·].
    pub kl_oracle: Option<f64>,
    pub kl_predicted: Option<f64>,
}

/// Inspects `record` (call `call` of problem `problem`).
pub fn inspect(
    operator: &KjitOperator,
    quadrature: &QuadratureProjection,
    record: &CallRecord,
    call: usize,
    problem: usize,
) -> Result<InspectedCall> {
    let tuple = LogisticTuple {
        z: Gaussian::new(record.mean_z, record.var_z),
        p: record.p,
    };
    let reference = quadrature.project(&tuple).z;
    let oracle = operator.oracle_answer(&tuple)?;
    let prediction = operator.z_learner().predict(&tuple_input(&tuple))?;
    let predicted_now = prediction
        .as_ref()
        .map(|(outputs, _, _)| Gaussian::new(outputs[0], outputs[1].exp()));
    let kl = |g: &Option<Gaussian>| {
        g.filter(Gaussian::is_proper)
            .map(|g| kl_gaussian(&reference, &g))
    };
    Ok(InspectedCall {
        call,
        problem,
        cavity: tuple.z,
        p: tuple.p,
        oracle_answered: record.oracle_z,
        log_var_then: record.log_var_z,
        quadrature: reference,
        kl_oracle: kl(&oracle),
        kl_predicted: kl(&predicted_now),
        oracle,
        predicted_now,
        log_var_now: prediction.map(|p| p.1),
    })
}
