//! Scenarios: a problem, its data and ground truth, an algorithm running on it, its metrics and
//! the data its views need. The runner (GUI) and the CLI drive every scenario through
//! [`Scenario`]; [`ScenarioConfig`] is the serde config that rebuilds one exactly.

pub mod denoise;
pub mod flow;
pub mod retrieval;
pub mod sosmp;
pub mod tasks;
pub mod tree;

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::model::{MsgId, NodeId};
pub use crate::run::{CancelFlag, FinalResults, IterationRecord, RunLog, RunResults};

/// Every parameter of a run, defaults included; echoed into results.json.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "scenario", rename_all = "lowercase")]
pub enum ScenarioConfig {
    Denoise(denoise::DenoiseConfig),
    Tree(tree::TreeConfig),
    Retrieval(retrieval::RetrievalConfig),
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
            ScenarioConfig::Tree(_) => "tree",
            ScenarioConfig::Retrieval(_) => "retrieval",
            ScenarioConfig::Sosmp(_) => "sosmp",
            ScenarioConfig::Flow(_) => "flow",
        }
    }

    /// Checks every parameter, generates or loads the data and sets the algorithm up. May be slow
    /// (kernel set-ups); `cancel` is polled inside long set-ups.
    pub fn build(&self, cancel: &CancelFlag) -> Result<Box<dyn Scenario>> {
        match self {
            ScenarioConfig::Denoise(c) => Ok(Box::new(denoise::Denoise::new(c.clone(), cancel)?)),
            ScenarioConfig::Tree(c) => Ok(Box::new(tree::TreeScenario::new(c.clone(), cancel)?)),
            ScenarioConfig::Retrieval(c) => {
                Ok(Box::new(retrieval::Retrieval::new(c.clone(), cancel)?))
            }
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
            "tree",
            "tree kernel BP on a dataset (Song et al. 2010, Alg. 1): CSV or built-in, chain/star/binary/Chow-Liu/drawn tree, evidence, beliefs",
            vec!["tree-kbp", "gaussian-bp", "reference (built-ins)"],
        ),
        (
            "retrieval",
            "recall@k of chain tails given heads, 9 variables in R^5 (Song et al. 2010, Sec. 6.1 protocol)",
            vec!["tree-kbp", "gaussian-bp", "nearest-neighbour"],
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

/// What the user is inspecting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Probe {
    Node(NodeId),
    Message(MsgId),
}

/// The data a scenario's views draw, produced on the worker and sent inside a snapshot.
// One view per snapshot (at most ~60 a second) inside an `Arc`: the size of the largest
// variant costs nothing worth boxing it for.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum ScenarioView {
    Denoise(denoise::DenoiseView),
    Tree(Box<tree::TreeView>),
    Retrieval(retrieval::RetrievalView),
    Sosmp(sosmp::SosmpView),
    Flow(Box<flow::FlowView>),
}

/// A live change to the running scenario that does not rebuild it (for example the evidence
/// slider of the tree explorer). Sent by the window through the runner.
#[derive(Debug, Clone, PartialEq)]
pub enum ScenarioControl {
    Tree(tree::TreeControl),
}

impl ScenarioControl {
    /// Whether applying `self` right after `earlier` makes `earlier` irrelevant (the same
    /// evidence slider moved twice), so a queue of slider moves can skip to the last.
    pub fn supersedes(&self, earlier: &ScenarioControl) -> bool {
        match (self, earlier) {
            (
                ScenarioControl::Tree(tree::TreeControl::SetEvidence { node: a, .. }),
                ScenarioControl::Tree(tree::TreeControl::SetEvidence { node: b, .. }),
            ) => a == b,
            _ => false,
        }
    }
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
    /// Applies a live change (see [`ScenarioControl`]); scenarios without live controls refuse.
    fn control(&mut self, control: &ScenarioControl) -> Result<()> {
        let _ = control;
        Err(Error::Other(format!(
            "the {} scenario takes no live controls",
            self.config().name()
        )))
    }
    /// Things the user should know that are not errors (e.g. evidence outside the data range).
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
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
