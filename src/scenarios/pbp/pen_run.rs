//! `run pbp --model pendigits`: pendigits (Wang & Gordon, AAAI 2020, Sec. 6 "Handwritten Digit
//! Recognition") as a run of the pbp scenario, with the stand-in per-class latent chain of
//! [`super::pendigits`]: step 1 learns the ten PBP chain models from N stratified training
//! digits and classifies the 3498 test digits by argmax_c P̂(x | c) (Eq. 4 at the root); step 2
//! fits the EM baseline (Gaussian-emission HMMs with restarts) on the same digits. A live
//! control picks the test digit whose pen trajectory and per-class log P̂(x) the window shows.
//!
//! Cost: features O(N · 8 · 36 · D_f); learning as [`super::pendigits`]; classification
//! O(3498 · 10 · one upward pass); EM O(restarts · iterations · N · 8 · k²).

use std::time::Instant;

use serde::Serialize;

use super::config::PbpConfig;
use super::experiment::{Stream, stream};
use super::pendigits::{Digit, PenClassifier, PenData, PenFeatures, fit_em_hmms};
use super::{PbpControl, PbpView, pendigits_dir};
use crate::error::{Error, Result};
use crate::inference::pbp::hmm_em::GaussianHmm;
use crate::scenarios::{CancelFlag, IterationRecord, RunLog, ScenarioControl, ScenarioView};

/// Training rows of the paper's split.
pub const TRAIN_ROWS: usize = 7000;

/// One classifier's results on the test set.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PenMethodView {
    pub name: &'static str,
    pub test_accuracy: f64,
    pub validation_accuracy: f64,
    pub seconds: f64,
    /// Rows = true class, columns = predicted.
    pub confusion: Vec<Vec<usize>>,
    /// Per-class log P̂(x) of the picked test digit (−∞ where PBP's estimate is not positive).
    #[serde(skip)]
    pub picked_scores: Vec<f64>,
}

/// What the window draws for a pendigits run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PenView {
    pub samples: usize,
    pub test_count: usize,
    pub methods: Vec<PenMethodView>,
    pub digit_index: usize,
    pub digit_points: Vec<[f64; 2]>,
    pub digit_class: usize,
}

/// The test digits' per-class scores of one method, with its accuracy summary.
struct Scored {
    scores: Vec<Vec<f64>>,
    view: PenMethodView,
}

fn argmax(s: &[f64]) -> usize {
    (0..s.len())
        .max_by(|&a, &b| s[a].total_cmp(&s[b]))
        .unwrap_or(0)
}

fn score(
    name: &'static str,
    seconds: f64,
    data: &PenData,
    f: impl Fn(&Digit) -> Vec<f64>,
) -> Scored {
    let scores: Vec<Vec<f64>> = data.test.iter().map(&f).collect();
    let mut confusion = vec![vec![0; 10]; 10];
    for (d, s) in data.test.iter().zip(&scores) {
        confusion[d.class][argmax(s)] += 1;
    }
    let correct: usize = (0..10).map(|c| confusion[c][c]).sum();
    let val_correct = data
        .validation
        .iter()
        .filter(|d| argmax(&f(d)) == d.class)
        .count();
    Scored {
        view: PenMethodView {
            name,
            test_accuracy: correct as f64 / data.test.len().max(1) as f64,
            validation_accuracy: val_correct as f64 / data.validation.len().max(1) as f64,
            seconds,
            confusion,
            picked_scores: Vec::new(),
        },
        scores,
    }
}

/// A pendigits run.
pub struct PenScenario {
    config: PbpConfig,
    data: PenData,
    train: Vec<Digit>,
    methods: Vec<Scored>,
    picked: usize,
    log: RunLog,
}

impl PenScenario {
    pub fn new(config: PbpConfig, _cancel: &CancelFlag) -> Result<PenScenario> {
        let start = Instant::now();
        if config.samples < 10 || config.samples > TRAIN_ROWS {
            return Err(Error::param(
                "samples",
                format!(
                    "pendigits trains on 10..={TRAIN_ROWS} digits (stratified, the paper's split); got {}",
                    config.samples
                ),
            ));
        }
        if config.run_online_em {
            return Err(Error::param(
                "run_online_em",
                "pendigits has no online-EM baseline (of the paper's baselines we run EM only); set it to false",
            ));
        }
        if config.states < 2 {
            return Err(Error::param("states", "needs at least 2 latent states"));
        }
        let dir = if config.data_dir.is_empty() {
            pendigits_dir()
        } else {
            config.data_dir.clone().into()
        };
        let data = PenData::load(&dir)?;
        if config.digit >= data.test.len() {
            return Err(Error::param(
                "digit",
                format!("the test set has {} digits", data.test.len()),
            ));
        }
        let train = data.stratified(config.samples);
        Ok(PenScenario {
            picked: config.digit,
            config,
            data,
            train,
            methods: Vec::new(),
            log: RunLog::new(start.elapsed().as_secs_f64()),
        })
    }

    pub fn stage_count(config: &PbpConfig) -> usize {
        1 + usize::from(config.run_em)
    }

    pub fn config(&self) -> &PbpConfig {
        &self.config
    }

    pub fn log(&self) -> &RunLog {
        &self.log
    }

    pub fn finished(&self) -> bool {
        self.log.history().len() >= Self::stage_count(&self.config)
    }

    pub fn step(&mut self) -> Result<IterationRecord> {
        let start = Instant::now();
        let k = self.log.history().len();
        let mut metrics = std::collections::BTreeMap::new();
        let scored = match k {
            0 => {
                let features =
                    PenFeatures::new(&self.train, 6, self.config.sigma, self.config.feature_dim)?;
                let clf = PenClassifier::learn(
                    &self.train,
                    features,
                    self.config.states,
                    self.config.lambda1,
                )?;
                score("pbp", clf.seconds, &self.data, |d| clf.log_scores(d))
            }
            1 if self.config.run_em => {
                let mut rng = stream(self.config.seed, Stream::Em);
                let (models, seconds): (Vec<GaussianHmm>, f64) = fit_em_hmms(
                    &self.train,
                    self.config.states,
                    self.config.em_restarts,
                    &mut rng,
                );
                score("em_hmm", seconds, &self.data, |d| {
                    models.iter().map(|m| m.log_likelihood(&d.points)).collect()
                })
            }
            _ => return Err(Error::Other("the pendigits run has finished".into())),
        };
        let name = scored.view.name;
        metrics.insert(format!("test_accuracy_{name}"), scored.view.test_accuracy);
        metrics.insert(format!("seconds_{name}"), scored.view.seconds);
        self.methods.push(scored);
        let record = IterationRecord {
            iter: k + 1,
            seconds: start.elapsed().as_secs_f64(),
            residual: 0.0,
            metrics,
        };
        Ok(self.log.push(record))
    }

    pub fn view(&self) -> ScenarioView {
        let digit = &self.data.test[self.picked];
        let methods = self
            .methods
            .iter()
            .map(|m| PenMethodView {
                picked_scores: m.scores[self.picked].clone(),
                ..m.view.clone()
            })
            .collect();
        ScenarioView::Pbp(Box::new(PbpView {
            model: "pendigits".into(),
            samples: self.train.len(),
            pen: Some(PenView {
                samples: self.train.len(),
                test_count: self.data.test.len(),
                methods,
                digit_index: self.picked,
                digit_points: digit.points.to_vec(),
                digit_class: digit.class,
            }),
            ..PbpView::default()
        }))
    }

    pub fn final_metrics(&self) -> std::collections::BTreeMap<String, f64> {
        let mut m = std::collections::BTreeMap::new();
        for s in &self.methods {
            let v = &s.view;
            m.insert(format!("test_accuracy_{}", v.name), v.test_accuracy);
            m.insert(
                format!("validation_accuracy_{}", v.name),
                v.validation_accuracy,
            );
            m.insert(format!("seconds_{}", v.name), v.seconds);
        }
        m
    }

    /// results.json: each method's accuracies, confusion matrix and learning seconds.
    pub fn report(&self) -> PenReport {
        PenReport {
            model: "stand-in for the paper's Fig. 6: latent chain H1..H8, pen point P_t child of H_t (Sec. 6 pendigits)",
            training_digits: self.train.len(),
            test_digits: self.data.test.len(),
            methods: self.methods.iter().map(|s| s.view.clone()).collect(),
        }
    }

    pub fn control(&mut self, control: &ScenarioControl) -> Result<()> {
        match control {
            ScenarioControl::Pbp(PbpControl::PickDigit(i)) => {
                if *i >= self.data.test.len() {
                    return Err(Error::Other(format!(
                        "test digit {i} does not exist; there are {}",
                        self.data.test.len()
                    )));
                }
                self.picked = *i;
                self.config.digit = *i;
                Ok(())
            }
            _ => Err(Error::Other(
                "a pendigits run takes only the picked test digit as a live control".into(),
            )),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct PenReport {
    pub model: &'static str,
    pub training_digits: usize,
    pub test_digits: usize,
    pub methods: Vec<PenMethodView>,
}
