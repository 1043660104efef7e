//! Scenarios: a problem, its data and ground truth, an algorithm running on it, its metrics and
//! the data its views need. Each scenario lives in its own folder (config, engine glue, view
//! data, command-line flags) and is listed once in [`registry`]; the runner (GUI) and the CLI
//! drive every scenario through [`Scenario`], and [`ScenarioConfig`] is the serde config that
//! rebuilds one exactly.

pub mod denoise;
pub mod flow;
pub mod help_text;
pub mod kjit;
pub mod output;
pub mod paper_figures;
pub mod params;
pub mod pbp;
pub mod registry;
pub mod retrieval;
pub mod sosmp;
pub mod sweep;
pub mod teach;
pub mod tree;
pub mod what_if;

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, Result};
pub use crate::inference::Schedule;
use crate::model::{MsgId, NodeId};
pub use crate::run::{CancelFlag, FinalResults, IterationRecord, RunLog, RunResults};
pub use output::OutputArgs;
pub use registry::{
    Control, KINDS, Kind, NoControl, NoTask, Registered, RunFlags, ScenarioConfig, ScenarioControl,
    ScenarioDef, ScenarioParams, ScenarioTask, ScenarioView, Task, TaskResult, Verb,
};

impl Default for ScenarioConfig {
    fn default() -> Self {
        ScenarioConfig::Denoise(denoise::DenoiseConfig::default())
    }
}

impl ScenarioConfig {
    /// The config as JSON (the `config` field of results.json, without the tag).
    pub fn to_json(&self) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut v {
            map.remove("scenario");
        }
        v
    }
}

/// The registered scenarios as (name, summary, algorithms), for `beliefscope list`.
pub fn catalogue() -> Vec<(&'static str, &'static str, &'static [&'static str])> {
    KINDS
        .iter()
        .map(|k| (k.name, k.summary, k.algorithms))
        .collect()
}

/// What the user is inspecting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Probe {
    Node(NodeId),
    Message(MsgId),
}

/// A problem with an algorithm running on it.
pub trait Scenario: Send {
    /// The config this scenario was built from (rebuilds it exactly).
    fn config(&self) -> ScenarioConfig;
    /// Name of the algorithm running (e.g. "discrete").
    fn algorithm(&self) -> String;
    /// The set-up time and the iterations so far.
    fn log(&self) -> &RunLog;
    /// Seconds spent building the problem and setting up the algorithm.
    fn setup_seconds(&self) -> f64 {
        self.log().setup_seconds()
    }
    /// Every iteration so far.
    fn history(&self) -> &[IterationRecord] {
        self.log().history()
    }
    /// One iteration, with its metrics. Divergence is an error and leaves the state as it was
    /// after the last good iteration where the algorithm allows it.
    fn step(&mut self) -> Result<IterationRecord>;
    /// True once the maximum number of iterations or the tolerance is reached.
    fn finished(&self) -> bool;
    /// View data for the window; `probe` selects what the inspector shows.
    fn view(&self, probe: Option<Probe>) -> ScenarioView;
    /// The `final.metrics` object of results.json.
    fn final_metrics(&self) -> BTreeMap<String, f64>;
    /// Scenario-specific top-level fields of results.json (a typed report, serialised).
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
    /// While playing, the least time between two iterations (teaching mode's speed); None:
    /// as fast as the engine goes.
    fn play_interval(&self) -> Option<std::time::Duration> {
        None
    }
    /// Things the user should know that are not errors (e.g. evidence outside the data range).
    fn warnings(&self) -> Vec<String> {
        Vec::new()
    }
    /// How the run ended, when something other than the iteration limit ended it (e.g. a
    /// stopping rule settled it); printed after the last iteration.
    fn ending(&self) -> Vec<String> {
        Vec::new()
    }
    /// What the convergence debugger shows (residual maps, oscillation); scenarios whose
    /// engines record per-message changes return Some.
    fn convergence(&self) -> Option<crate::run::residuals::ConvergenceView> {
        None
    }
    /// Switches the running engine's schedule and damping from the next iteration on, keeping
    /// its messages; scenarios whose engines cannot refuse.
    fn set_schedule(&mut self, schedule: crate::inference::Schedule, damping: f64) -> Result<()> {
        let _ = (schedule, damping);
        Err(Error::Other(format!(
            "the {} scenario cannot switch schedules while running",
            self.config().name()
        )))
    }
    /// Runs a copy of the running engine with another schedule or damping from its current
    /// state (see [`what_if`]); the run itself is untouched.
    fn what_if(
        &self,
        request: what_if::WhatIfRequest,
        cancel: &CancelFlag,
    ) -> Result<what_if::WhatIfRun> {
        let _ = (request, cancel);
        Err(Error::Other(format!(
            "the {} scenario has no what-if runs",
            self.config().name()
        )))
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

/// A typed report as the top-level fields of results.json.
pub fn report_fields<T: Serialize>(report: &T) -> Map<String, Value> {
    match serde_json::to_value(report) {
        Ok(Value::Object(map)) => map,
        Ok(other) => Map::from_iter([("report".to_string(), other)]),
        Err(e) => Map::from_iter([("report_error".to_string(), Value::String(e.to_string()))]),
    }
}
