//! Scenario `teach`: teaching mode (issue 19, item 4). Discrete sum-product BP on a small graph
//! (chain, tree, 3 x 3 grid, the predictive-BP stand-in; [`models`]), one message per
//! iteration ([`crate::inference::message_stepper`]), against the exact marginals by
//! enumeration. One `step()` sends one message; the view carries the message sent (its
//! content before and after), the receiving node's belief before and after, every belief, the
//! exact marginals and the schedule's next messages. While playing, the worker sends one
//! message per `1 / speed` seconds ([`Scenario::play_interval`]); the speed is a live control
//! and no part of the result.
//!
//! Cost per step: one message (O(deg · S + S²)), the fixed-point residual (O(|E| · S²)) and the
//! view; set-up enumerates the joint states once (at most 3⁹ here).

pub mod cli;
pub mod config;
pub mod figures;
pub mod models;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Map, Value};

pub use config::{PARAMS, TeachConfig, TeachGraph};
use models::TeachModel;

use super::{
    CancelFlag, Control, IterationRecord, NoTask, Probe, RunLog, Scenario, ScenarioConfig,
    ScenarioControl, ScenarioDef, ScenarioView, report_fields,
};
use crate::error::{Error, Result};
use crate::inference::message_stepper::{MessageStepper, SentMessage, exact_marginals};
use crate::inference::{Damping, Schedule};
use crate::io::write_atomic;
use crate::model::{MsgId, NodeId};

/// A fixed point is reached when no message would move by more than this (L1).
pub const CONVERGED: f64 = 1e-10;
/// How many of the schedule's next messages the view lists.
pub const UPCOMING: usize = 5;
/// Messages per second while playing, unless the window sets another speed.
pub const DEFAULT_SPEED: f64 = 2.0;
/// The speed slider's range, messages per second.
pub const SPEED_RANGE: (f64, f64) = (0.25, 30.0);
/// Joint states exact enumeration may visit.
const MAX_JOINT_STATES: usize = 1 << 20;

/// Live changes: the playing speed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TeachControl {
    /// Messages per second while playing.
    Speed(f64),
}

impl Control for TeachControl {
    fn supersedes(&self, earlier: &Self) -> bool {
        matches!(
            (self, earlier),
            (TeachControl::Speed(_), TeachControl::Speed(_))
        )
    }
}

/// What the teaching room draws.
#[derive(Debug, Clone)]
pub struct TeachView {
    pub description: String,
    pub graph: TeachGraph,
    pub names: Vec<String>,
    pub positions: Vec<(f64, f64)>,
    pub cards: Vec<usize>,
    pub edges: Vec<(NodeId, NodeId)>,
    /// The message sent last, with the receiving node's belief before and after.
    pub last: Option<SentMessage>,
    /// The schedule's next messages `(id, from, to)`, the very next first.
    pub upcoming: Vec<(MsgId, NodeId, NodeId)>,
    pub beliefs: Vec<Vec<f64>>,
    /// Exact marginals by enumeration.
    pub exact: Vec<Vec<f64>>,
    pub sent: usize,
    pub round: usize,
    /// Messages per round (every directed message once).
    pub round_length: usize,
    pub schedule: Schedule,
    pub damping: f64,
    pub speed: f64,
    pub fixed_point_residual: f64,
    /// Largest |belief − exact| over nodes and states.
    pub max_error: f64,
    pub converged: bool,
}

/// The typed part of results.json.
#[derive(Debug, Clone, Serialize)]
struct TeachReport<'a> {
    model: &'a str,
    exact_reference: String,
    messages: Vec<MessageRecord<'a>>,
    beliefs: BTreeMap<&'a str, Vec<f64>>,
    exact_marginals: BTreeMap<&'a str, Vec<f64>>,
    max_belief_error: f64,
    fixed_point_residual: f64,
}

#[derive(Debug, Clone, Serialize)]
struct MessageRecord<'a> {
    n: usize,
    from: &'a str,
    to: &'a str,
    round: usize,
    before: &'a [f64],
    after: &'a [f64],
    change: f64,
}

/// A teaching run.
pub struct TeachScenario {
    config: TeachConfig,
    model: TeachModel,
    stepper: MessageStepper,
    exact: Vec<Vec<f64>>,
    sent: Vec<SentMessage>,
    fixed_point_residual: f64,
    speed: f64,
    log: RunLog,
}

impl TeachScenario {
    pub fn new(config: TeachConfig) -> Result<TeachScenario> {
        let start = Instant::now();
        config.check_params()?;
        let model = models::build(&config)?;
        let exact = exact_marginals(&model.mrf, &model.cards, MAX_JOINT_STATES)?;
        let stepper = MessageStepper::new(
            model.mrf.clone(),
            model.cards.clone(),
            config.schedule,
            Damping(config.damping),
        )?;
        Ok(TeachScenario {
            fixed_point_residual: stepper.fixed_point_residual(),
            stepper,
            exact,
            model,
            config,
            sent: Vec::new(),
            speed: DEFAULT_SPEED,
            log: RunLog::new(start.elapsed().as_secs_f64()),
        })
    }

    pub fn stepper(&self) -> &MessageStepper {
        &self.stepper
    }

    pub fn exact(&self) -> &[Vec<f64>] {
        &self.exact
    }

    /// Largest |belief − exact marginal| over nodes and states.
    pub fn max_error(&self) -> f64 {
        (self.stepper.beliefs().iter().flatten())
            .zip(self.exact.iter().flatten())
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max)
    }

    fn converged(&self) -> bool {
        !self.sent.is_empty() && self.fixed_point_residual <= CONVERGED
    }

    /// `n,from,to,round,change,before,after` (message values separated by `;`).
    pub fn messages_csv(&self) -> String {
        let mut out = String::from("n,from,to,round,change,before,after\n");
        let join = |v: &[f64]| {
            v.iter()
                .map(|x| format!("{x:.6}"))
                .collect::<Vec<_>>()
                .join(";")
        };
        for (k, m) in self.sent.iter().enumerate() {
            let _ = writeln!(
                out,
                "{},{},{},{},{:.6e},{},{}",
                k + 1,
                self.model.names[m.from],
                self.model.names[m.to],
                m.round,
                m.change,
                join(&m.before),
                join(&m.after)
            );
        }
        out
    }
}

impl ScenarioDef for TeachScenario {
    const NAME: &'static str = "teach";
    const SUMMARY: &'static str = "teaching mode: discrete BP on a small graph (chain, tree, 3x3 grid, predictive-BP stand-in), one message at a time, against exact enumeration";
    const ALGORITHMS: &'static [&'static str] = &["discrete-bp (one message per step)"];
    type Config = TeachConfig;
    type View = TeachView;
    type Control = TeachControl;
    type Task = NoTask;
    type RunArgs = cli::TeachArgs;

    fn build(config: TeachConfig, _cancel: &CancelFlag) -> Result<Self> {
        TeachScenario::new(config)
    }

    fn max_iters(config: &TeachConfig) -> Option<usize> {
        Some(config.max_messages)
    }
}

impl Scenario for TeachScenario {
    fn config(&self) -> ScenarioConfig {
        ScenarioConfig::Teach(self.config.clone())
    }

    fn algorithm(&self) -> String {
        format!(
            "discrete BP, one message per step ({} schedule, damping {})",
            self.config.schedule.label(),
            self.config.damping
        )
    }

    fn log(&self) -> &RunLog {
        &self.log
    }

    fn step(&mut self) -> Result<IterationRecord> {
        let start = Instant::now();
        let sent = self.stepper.step()?;
        self.fixed_point_residual = self.stepper.fixed_point_residual();
        let metrics = BTreeMap::from([
            ("belief_error".to_string(), self.max_error()),
            (
                "fixed_point_residual".to_string(),
                self.fixed_point_residual,
            ),
            ("sender".to_string(), sent.from as f64),
            ("receiver".to_string(), sent.to as f64),
        ]);
        let record = IterationRecord {
            iter: self.stepper.sent(),
            seconds: start.elapsed().as_secs_f64(),
            residual: sent.change,
            metrics,
        };
        self.sent.push(sent);
        Ok(self.log.push(record))
    }

    fn finished(&self) -> bool {
        self.stepper.sent() >= self.config.max_messages || self.converged()
    }

    fn view(&self, _probe: Option<Probe>) -> ScenarioView {
        let g = self.stepper.graph();
        let upcoming = (self.stepper.upcoming(UPCOMING).into_iter())
            .map(|m| (m, g.source(m), g.target(m)))
            .collect();
        ScenarioView::Teach(TeachView {
            description: self.model.description.clone(),
            graph: self.config.graph,
            names: self.model.names.clone(),
            positions: self.model.positions.clone(),
            cards: self.model.cards.clone(),
            edges: g.edges().to_vec(),
            last: self.sent.last().cloned(),
            upcoming,
            beliefs: self.stepper.beliefs(),
            exact: self.exact.clone(),
            sent: self.stepper.sent(),
            round: self.stepper.round(),
            round_length: g.num_messages(),
            schedule: self.config.schedule,
            damping: self.config.damping,
            speed: self.speed,
            fixed_point_residual: self.fixed_point_residual,
            max_error: self.max_error(),
            converged: self.converged(),
        })
    }

    fn final_metrics(&self) -> BTreeMap<String, f64> {
        BTreeMap::from([
            ("messages_sent".to_string(), self.stepper.sent() as f64),
            ("max_belief_error".to_string(), self.max_error()),
            (
                "fixed_point_residual".to_string(),
                self.fixed_point_residual,
            ),
        ])
    }

    fn extra_results(&self) -> Map<String, Value> {
        let names = &self.model.names;
        let by_name = |v: &[Vec<f64>]| {
            names
                .iter()
                .map(String::as_str)
                .zip(v.iter().cloned())
                .collect()
        };
        let joint: usize = self.model.cards.iter().product();
        report_fields(&TeachReport {
            model: &self.model.description,
            exact_reference: format!("enumeration of all {joint} joint states"),
            messages: (self.sent.iter().enumerate())
                .map(|(k, m)| MessageRecord {
                    n: k + 1,
                    from: &names[m.from],
                    to: &names[m.to],
                    round: m.round,
                    before: &m.before,
                    after: &m.after,
                    change: m.change,
                })
                .collect(),
            beliefs: by_name(&self.stepper.beliefs()),
            exact_marginals: by_name(&self.exact),
            max_belief_error: self.max_error(),
            fixed_point_residual: self.fixed_point_residual,
        })
    }

    fn write_outputs(&self, dir: &Path) -> Result<()> {
        write_atomic(&dir.join("messages.csv"), self.messages_csv().as_bytes())?;
        figures::write_convergence(dir, self.log.history())
    }

    fn control(&mut self, control: &ScenarioControl) -> Result<()> {
        let ScenarioControl::Teach(TeachControl::Speed(speed)) = control else {
            return Err(Error::Other("not a control of the teach scenario".into()));
        };
        let (lo, hi) = SPEED_RANGE;
        if !(speed.is_finite() && (lo..=hi).contains(speed)) {
            return Err(Error::param(
                "speed",
                format!("must be {lo} to {hi} messages per second, got {speed}"),
            ));
        }
        self.speed = *speed;
        Ok(())
    }

    fn play_interval(&self) -> Option<Duration> {
        Some(Duration::from_secs_f64(1.0 / self.speed))
    }
}

impl TeachConfig {
    fn check_params(&self) -> Result<()> {
        <TeachConfig as super::ScenarioParams>::check(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_run_is_exact_after_one_sweep_and_stops() {
        let mut s = TeachScenario::new(TeachConfig::default()).unwrap();
        let mut n = 0;
        while !s.finished() {
            s.step().unwrap();
            n += 1;
        }
        // The chain has 5 edges: one forward-backward round is 10 messages.
        assert_eq!(n, 10);
        assert!(s.max_error() < 1e-9, "{}", s.max_error());
        let csv = s.messages_csv();
        assert_eq!(csv.lines().count(), 11);
        // Leaves to root first: the first message leaves the last node.
        assert!(
            csv.lines().nth(1).unwrap().starts_with("1,x5,x4,1,"),
            "{csv}"
        );
    }

    #[test]
    fn the_speed_is_checked() {
        let mut s = TeachScenario::new(TeachConfig::default()).unwrap();
        let bad = ScenarioControl::Teach(TeachControl::Speed(0.0));
        assert!(s.control(&bad).is_err());
        let good = ScenarioControl::Teach(TeachControl::Speed(10.0));
        s.control(&good).unwrap();
        assert_eq!(s.play_interval(), Some(Duration::from_millis(100)));
    }
}
