//! Scenarios: a problem, its data and ground truth, an algorithm running on it, its metrics and
//! the data its views need. The runner (GUI) and the CLI drive every scenario through
//! [`Scenario`]; [`ScenarioConfig`] is the serde config that rebuilds one exactly.

pub mod denoise;
pub mod flow;
pub mod sosmp;
pub mod tasks;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::model::{MsgId, NodeId};

/// Every parameter of a run, defaults included; echoed into results.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "scenario", rename_all = "lowercase")]
pub enum ScenarioConfig {
    Denoise(denoise::DenoiseConfig),
    Sosmp(sosmp::SosmpConfig),
    Flow(flow::FlowConfig),
}

impl Default for ScenarioConfig {
    fn default() -> Self {
        ScenarioConfig::Denoise(denoise::DenoiseConfig::default())
    }
}

impl ScenarioConfig {
    /// The scenario's name as used on the command line and in results.json.
    pub fn name(&self) -> &'static str {
        match self {
            ScenarioConfig::Denoise(_) => "denoise",
            ScenarioConfig::Sosmp(_) => "sosmp",
            ScenarioConfig::Flow(_) => "flow",
        }
    }

    /// Checks every parameter, generates or loads the data and sets the algorithm up. May be slow
    /// (kernel set-ups); `cancel` is polled inside long set-ups.
    pub fn build(&self, cancel: &CancelFlag) -> Result<Box<dyn Scenario>> {
        match self {
            ScenarioConfig::Denoise(c) => Ok(Box::new(denoise::Denoise::new(c.clone(), cancel)?)),
            ScenarioConfig::Sosmp(c) => Ok(Box::new(sosmp::SosmpScenario::new(c.clone(), cancel)?)),
            ScenarioConfig::Flow(c) => Ok(Box::new(flow::FlowScenario::new(c.clone(), cancel)?)),
        }
    }

    /// The config as JSON (the `config` field of results.json, without the tag).
    pub fn to_json(&self) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut v {
            map.remove("scenario");
        }
        v
    }
}

/// The scenarios and algorithms this build knows, for `beliefscope list` and the GUI.
pub fn catalogue() -> Vec<(&'static str, &'static str, Vec<&'static str>)> {
    vec![
        (
            "denoise",
            "image denoising on a 4-connected grid MRF (Song et al. 2011, Sec. 7 sunset)",
            vec!["kbp-constant", "kbp-linear", "kbp-full", "discrete"],
        ),
        (
            "sosmp",
            "stochastic orthogonal-series message passing on a chain, tree or grid: error against 1/t and the floor (Noorshams & Wainwright 2013, Figs. 5-8)",
            vec!["sosmp"],
        ),
        (
            "flow",
            "optical flow on a 4-connected grid MRF: 2-D SOSMP against discrete BP, EPE and AAE against ground truth (Noorshams & Wainwright 2013, Sec. 5.2)",
            vec!["sosmp", "discrete"],
        ),
    ]
}

/// One row of the per-iteration log (the `iterations` array of results.json).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IterationRecord {
    pub iter: usize,
    pub seconds: f64,
    pub residual: f64,
    pub metrics: BTreeMap<String, f64>,
}

/// What the user is inspecting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Probe {
    Node(NodeId),
    Message(MsgId),
}

/// The data a scenario's views draw, produced on the worker and sent inside a snapshot.
#[derive(Debug, Clone)]
pub enum ScenarioView {
    Denoise(denoise::DenoiseView),
    Sosmp(sosmp::SosmpView),
    Flow(Box<flow::FlowView>),
}

/// A problem with an algorithm running on it.
pub trait Scenario: Send {
    /// The config this scenario was built from (rebuilds it exactly).
    fn config(&self) -> ScenarioConfig;
    /// Name of the algorithm running (e.g. "discrete").
    fn algorithm(&self) -> String;
    /// Seconds spent building the problem and setting up the algorithm.
    fn setup_seconds(&self) -> f64;
    /// One iteration, with its metrics. Divergence is an error and leaves the state as it was
    /// after the last good iteration where the algorithm allows it.
    fn step(&mut self) -> Result<IterationRecord>;
    /// Every iteration so far.
    fn history(&self) -> &[IterationRecord];
    /// True once the maximum number of iterations or the tolerance is reached.
    fn finished(&self) -> bool;
    /// View data for the window; `probe` selects what the inspector shows.
    fn view(&self, probe: Option<Probe>) -> ScenarioView;
    /// The `final.metrics` object of results.json.
    fn final_metrics(&self) -> BTreeMap<String, f64>;
    /// Scenario-specific top-level fields of results.json.
    fn extra_results(&self) -> Map<String, Value> {
        Map::new()
    }
    /// Writes the scenario's files (PNGs, CSVs) into `dir` (results.json is written by the caller).
    fn write_outputs(&self, dir: &Path) -> Result<()>;
}

/// The document written as results.json; every scenario shares this outer shape.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResults {
    pub scenario: String,
    pub algorithm: String,
    pub config: Value,
    pub setup_seconds: f64,
    pub iterations: Vec<IterationRecord>,
    #[serde(rename = "final")]
    pub final_results: FinalResults,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FinalResults {
    pub metrics: BTreeMap<String, f64>,
}

impl RunResults {
    pub fn from_scenario(s: &dyn Scenario) -> RunResults {
        let config = s.config();
        RunResults {
            scenario: config.name().to_string(),
            algorithm: s.algorithm(),
            config: config.to_json(),
            setup_seconds: s.setup_seconds(),
            iterations: s.history().to_vec(),
            final_results: FinalResults {
                metrics: s.final_metrics(),
            },
            extra: s.extra_results(),
        }
    }
}

/// A shared flag that asks long computations to stop early.
#[derive(Debug, Clone, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
    pub fn reset(&self) {
        self.0.store(false, Ordering::Relaxed);
    }
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
    /// `Err(Cancelled)` once cancelled; call inside long loops.
    pub fn check(&self) -> Result<()> {
        if self.is_cancelled() {
            Err(Error::Cancelled)
        } else {
            Ok(())
        }
    }
}
