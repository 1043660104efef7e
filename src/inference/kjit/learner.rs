//! The just-in-time learner of Jitkrittum et al. 2015, Sec. 3.3 ("Online Update") and Supp A:
//! the first B oracle answers are stored; at B the widths come from the median heuristic, the
//! two-stage features (Alg. 1) are drawn and the regressions fitted in batch (eqs. 12–13);
//! afterwards each call predicts, and is *uncertain* when the log predictive variance is ≥ τ
//! (one shared τ and ≥, as the authors' code; the paper has per-output thresholds and >), in
//! which case the caller asks the oracle and
//! teaches the answer (eqs. 16–17). Widths and features never change after B.
//!
//! One feature map is shared by all outputs (the authors' code draws one per output; sharing is
//! cheaper and has the same distribution),
//! so the outputs also share the predictive variance and "any output uncertain" is one test.
//!
//! Cost per call: O(D_in c + D_in D_out + D_out²); per oracle answer O(D_out² D_y); at B:
//! O(B² c + B D_in D_out + B D_out² + D_out³).

use nalgebra::{DMatrix, DVector};
use serde::{Deserialize, Serialize};

use super::blr::{BayesLinReg, BlrPrior};
use super::embedding::{DiagGaussian, KernelWidths, TwoStageFeatures, median_heuristic};
use crate::error::{Error, Result};

/// Settings of one learned operator.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct JitSettings {
    /// B: oracle answers stored before the first fit.
    pub minibatch: usize,
    /// τ: uncertain iff log predictive variance ≥ τ (natural log).
    pub tau: f64,
    pub d_in: usize,
    pub d_out: usize,
    /// γ² = median_factor · median (0.5 as the authors' code, 1 as Supp A's text).
    pub median_factor: f64,
    /// σ₀² of eq. (9).
    pub weight_var: f64,
    /// σ_y² of eq. (10).
    pub noise_var: f64,
    /// Seed of the feature draws.
    pub seed: u64,
}

impl JitSettings {
    pub fn check(&self) -> Result<()> {
        if self.minibatch < 2 {
            return Err(Error::param(
                "minibatch",
                format!("must be at least 2, got {}", self.minibatch),
            ));
        }
        if self.tau <= self.noise_var.ln() {
            return Err(Error::param(
                "tau",
                format!(
                    "must exceed log sigma_y2 = {:.4} (the smallest possible log predictive variance), got {}",
                    self.noise_var.ln(),
                    self.tau
                ),
            ));
        }
        Ok(())
    }
}

/// The predicted outputs, the log predictive variance and the features of the input.
pub type Prediction = (Vec<f64>, f64, DVector<f64>);

/// What the learner says about one input.
#[derive(Debug, Clone)]
pub enum Answer {
    /// Confident: the predicted outputs and the log predictive variance.
    Certain { outputs: Vec<f64>, log_var: f64 },
    /// Ask the oracle. `features` (when fitted) are passed back to [`JitLearner::teach`].
    Uncertain {
        log_var: Option<f64>,
        features: Option<DVector<f64>>,
    },
}

enum Phase {
    Collecting {
        inputs: Vec<DiagGaussian>,
        targets: Vec<Vec<f64>>,
    },
    Online {
        features: Box<TwoStageFeatures>,
        regression: Box<BayesLinReg>,
    },
}

/// One learned operator (one factor direction, D_y outputs).
pub struct JitLearner {
    settings: JitSettings,
    outputs: usize,
    phase: Phase,
    /// Oracle answers that were improper and not used for training.
    pub untrainable: usize,
}

impl JitLearner {
    pub fn new(settings: JitSettings, outputs: usize) -> Result<JitLearner> {
        settings.check()?;
        Ok(JitLearner {
            settings,
            outputs,
            phase: Phase::Collecting {
                inputs: Vec::new(),
                targets: Vec::new(),
            },
            untrainable: 0,
        })
    }

    pub fn settings(&self) -> &JitSettings {
        &self.settings
    }

    /// A new threshold; the fit, the features and the data are kept (main Sec. 3.3: τ only
    /// gates which calls go to the oracle).
    pub fn set_tau(&mut self, tau: f64) -> Result<()> {
        JitSettings {
            tau,
            ..self.settings
        }
        .check()?;
        self.settings.tau = tau;
        Ok(())
    }

    /// The widths chosen at B (None before).
    pub fn widths(&self) -> Option<&KernelWidths> {
        match &self.phase {
            Phase::Online { features, .. } => Some(features.widths()),
            Phase::Collecting { .. } => None,
        }
    }

    pub fn is_fitted(&self) -> bool {
        matches!(self.phase, Phase::Online { .. })
    }

    /// Prediction and log predictive variance regardless of τ (None before B).
    pub fn predict(&self, input: &DiagGaussian) -> Result<Option<Prediction>> {
        match &self.phase {
            Phase::Collecting { .. } => Ok(None),
            Phase::Online {
                features,
                regression,
            } => {
                let x = features.features(input)?;
                let p = regression.predict(&x);
                Ok(Some((p.means, p.var.ln(), x)))
            }
        }
    }

    /// The gate.
    pub fn ask(&self, input: &DiagGaussian) -> Result<Answer> {
        Ok(match self.predict(input)? {
            None => Answer::Uncertain {
                log_var: None,
                features: None,
            },
            Some((outputs, log_var, x)) => {
                if log_var >= self.settings.tau {
                    Answer::Uncertain {
                        log_var: Some(log_var),
                        features: Some(x),
                    }
                } else {
                    Answer::Certain { outputs, log_var }
                }
            }
        })
    }

    /// Learns an oracle answer (`None`: improper, counted and not used).
    pub fn teach(
        &mut self,
        input: &DiagGaussian,
        features: Option<DVector<f64>>,
        target: Option<&[f64]>,
    ) -> Result<()> {
        let Some(target) = target else {
            self.untrainable += 1;
            return Ok(());
        };
        if target.len() != self.outputs || target.iter().any(|t| !t.is_finite()) {
            self.untrainable += 1;
            return Ok(());
        }
        match &mut self.phase {
            Phase::Collecting { inputs, targets } => {
                inputs.push(input.clone());
                targets.push(target.to_vec());
                if inputs.len() >= self.settings.minibatch {
                    let inputs = std::mem::take(inputs);
                    let targets = std::mem::take(targets);
                    self.fit(&inputs, &targets)?;
                }
            }
            Phase::Online {
                features: map,
                regression,
            } => {
                let x = match features {
                    Some(x) => x,
                    None => map.features(input)?,
                };
                regression.update(&x, target);
            }
        }
        Ok(())
    }

    fn fit(&mut self, inputs: &[DiagGaussian], targets: &[Vec<f64>]) -> Result<()> {
        let s = &self.settings;
        let widths = median_heuristic(inputs, s.median_factor)?;
        let features = TwoStageFeatures::new(widths, s.d_in, s.d_out, s.seed)?;
        let mut x = DMatrix::zeros(s.d_out, inputs.len());
        for (i, input) in inputs.iter().enumerate() {
            x.set_column(i, &features.features(input)?);
        }
        let y = DMatrix::from_fn(inputs.len(), self.outputs, |i, k| targets[i][k]);
        let regression = BayesLinReg::fit(
            &x,
            &y,
            BlrPrior {
                weight_var: s.weight_var,
                noise_var: s.noise_var,
            },
        )?;
        self.phase = Phase::Online {
            features: Box::new(features),
            regression: Box::new(regression),
        };
        Ok(())
    }
}
