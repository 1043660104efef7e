//! Scenario `teach`: teaching mode. Belief propagation on a small graph
//! (chain, tree, 3 x 3 grid, the predictive-BP stand-in; [`models`]), one message per
//! iteration ([`crate::inference::message_stepper`]), with three kinds of message:
//! discrete (against the exact marginals by enumeration), Gaussian (against the joint's
//! covariance in closed form) and SOSMP's orthogonal series (against grid BP on the
//! quadrature grid; [`continuous`]). One `step()` sends one message; the view carries the
//! message sent (its content before and after, and for continuous messages its function on
//! the grid), the receiving node's belief before and after, every belief, the reference and
//! the schedule's next messages. While playing, the worker sends one message per `1 / speed`
//! seconds ([`Scenario::play_interval`]); the speed is a live control and no part of the
//! result.
//!
//! Cost per step: one message, the fixed-point residual (every message's update once) and the
//! view (residual BP's upcoming list: five steps of a copy); set-up enumerates the joint states
//! once (at most 3⁹ here), inverts a 9 x 9 covariance, or runs grid BP on 201 points.

pub mod cli;
pub mod config;
pub mod continuous;
pub mod figures;
pub mod models;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Map, Value};

pub use config::{MessageKind, PARAMS, TeachConfig, TeachGraph};

use super::{
    CancelFlag, Control, IterationRecord, NoTask, Probe, RunLog, Scenario, ScenarioConfig,
    ScenarioControl, ScenarioDef, ScenarioView, report_fields,
};
use crate::error::{Error, Result};
use crate::inference::message_stepper::gaussian::integral;
use crate::inference::message_stepper::{
    GaussianStepper, MessageStepper, SentMessage, SeriesRule, SeriesStepper, Stepper,
    exact_marginals,
};
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
    pub kind: MessageKind,
    /// The grid continuous messages and beliefs are drawn on (empty for discrete ones).
    pub xs: Vec<f64>,
    pub names: Vec<String>,
    pub positions: Vec<(f64, f64)>,
    pub cards: Vec<usize>,
    pub edges: Vec<(NodeId, NodeId)>,
    /// The message sent last, with the receiving node's belief before and after.
    pub last: Option<SentMessage>,
    /// The schedule's next messages `(id, from, to)`, the very next first.
    pub upcoming: Vec<(MsgId, NodeId, NodeId)>,
    /// Probabilities over labels, or densities on `xs`.
    pub beliefs: Vec<Vec<f64>>,
    /// The reference: exact marginals (enumeration, or the Gaussian's covariance) or grid BP.
    pub exact: Vec<Vec<f64>>,
    /// What the reference is, in a few words.
    pub reference: String,
    /// Series messages: the beliefs at SOSMP's approximation floor `a_∞` (else empty).
    pub floor: Vec<Vec<f64>>,
    /// Whether the upcoming list is certain: always, since residual BP's is found by sending
    /// the next messages on a copy; the note says how it was found.
    pub upcoming_note: &'static str,
    pub sent: usize,
    pub round: usize,
    /// Messages per round (every directed message once).
    pub round_length: usize,
    pub schedule: Schedule,
    pub damping: f64,
    pub speed: f64,
    pub fixed_point_residual: f64,
    /// Discrete: largest |belief − exact| over nodes and states; continuous: largest
    /// `∫ |belief − reference| dx` over nodes.
    pub max_error: f64,
    /// Continuous: largest |mean of the belief − mean of the reference| (else NaN).
    pub mean_error: f64,
    pub converged: bool,
}

/// The typed part of results.json.
#[derive(Debug, Clone, Serialize)]
struct TeachReport<'a> {
    model: &'a str,
    message_kind: MessageKind,
    exact_reference: String,
    /// The grid of continuous beliefs (empty for discrete ones).
    grid: &'a [f64],
    messages: Vec<MessageRecord<'a>>,
    beliefs: BTreeMap<&'a str, Vec<f64>>,
    exact_marginals: BTreeMap<&'a str, Vec<f64>>,
    max_belief_error: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_mean_error: Option<f64>,
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

/// One stepper per kind of message.
enum Engine {
    Discrete(MessageStepper),
    Gaussian(GaussianStepper),
    Series(SeriesStepper),
}

/// Calls the same method on whichever stepper runs.
macro_rules! each {
    ($engine:expr, $s:ident => $call:expr) => {
        match $engine {
            Engine::Discrete($s) => $call,
            Engine::Gaussian($s) => $call,
            Engine::Series($s) => $call,
        }
    };
}

/// A teaching run.
pub struct TeachScenario {
    config: TeachConfig,
    shape: models::Shape,
    description: String,
    cards: Vec<usize>,
    engine: Engine,
    /// Continuous messages: the drawing grid (empty for discrete ones).
    xs: Vec<f64>,
    exact: Vec<Vec<f64>>,
    reference: String,
    floor: Vec<Vec<f64>>,
    sent: Vec<SentMessage>,
    fixed_point_residual: f64,
    speed: f64,
    log: RunLog,
}

impl TeachScenario {
    pub fn new(config: TeachConfig) -> Result<TeachScenario> {
        TeachScenario::build_with(config, &CancelFlag::default())
    }

    fn build_with(config: TeachConfig, cancel: &CancelFlag) -> Result<TeachScenario> {
        let start = Instant::now();
        config.check_params()?;
        let shape = models::shape(&config)?;
        let schedule = config.schedule;
        let damping = Damping(config.damping);
        let n = shape.graph.num_nodes();
        let (engine, xs, exact, reference, floor, description, cards) = match config.messages {
            MessageKind::Discrete => {
                let model = models::build(&config)?;
                let exact = exact_marginals(&model.mrf, &model.cards, MAX_JOINT_STATES)?;
                let joint: usize = model.cards.iter().product();
                let stepper =
                    MessageStepper::new(model.mrf, model.cards.clone(), schedule, damping)?;
                (
                    Engine::Discrete(stepper),
                    Vec::new(),
                    exact,
                    format!("exact marginals by enumeration of all {joint} joint states"),
                    Vec::new(),
                    model.description,
                    model.cards,
                )
            }
            MessageKind::Gaussian => {
                let (mrf, description) = continuous::gaussian_model(&config, &shape);
                let stepper = Stepper::gaussian(mrf, schedule, damping)?;
                let exact = stepper.rule().exact_curves()?;
                (
                    Engine::Gaussian(stepper.clone()),
                    stepper.rule().xs().to_vec(),
                    exact,
                    "exact marginals from the joint's covariance (closed form)".to_string(),
                    Vec::new(),
                    description,
                    vec![0; n],
                )
            }
            MessageKind::Series => {
                let model = continuous::series_model(&config, &shape, cancel)?;
                let rule = SeriesRule::new(model.problem.clone(), config.samples, config.seed)?;
                let stepper = Stepper::series(rule, schedule)?;
                (
                    Engine::Series(stepper),
                    model.problem.mrf.grid.points().to_vec(),
                    model.reference,
                    "grid BP on the quadrature grid (numerical integration)".to_string(),
                    model.floor,
                    model.description,
                    vec![0; n],
                )
            }
        };
        let fixed_point_residual = each!(&engine, s => s.fixed_point_residual());
        Ok(TeachScenario {
            config,
            shape,
            description,
            cards,
            engine,
            xs,
            exact,
            reference,
            floor,
            sent: Vec::new(),
            fixed_point_residual,
            speed: DEFAULT_SPEED,
            log: RunLog::new(start.elapsed().as_secs_f64()),
        })
    }

    /// Every node's current belief (probabilities, or densities on the grid).
    pub fn beliefs(&self) -> Vec<Vec<f64>> {
        each!(&self.engine, s => s.beliefs())
    }

    pub fn exact(&self) -> &[Vec<f64>] {
        &self.exact
    }

    /// Messages sent so far.
    pub fn messages_sent(&self) -> usize {
        each!(&self.engine, s => s.sent())
    }

    /// Discrete: largest |belief − exact marginal| over nodes and states; continuous: largest
    /// `∫ |belief − reference| dx` over nodes.
    pub fn max_error(&self) -> f64 {
        let beliefs = self.beliefs();
        let pairs = beliefs.iter().zip(&self.exact);
        if self.xs.is_empty() {
            pairs
                .flat_map(|(a, b)| a.iter().zip(b).map(|(x, y)| (x - y).abs()))
                .fold(0.0, f64::max)
        } else {
            pairs
                .map(|(a, b)| {
                    let diff: Vec<f64> = a.iter().zip(b).map(|(x, y)| (x - y).abs()).collect();
                    integral(&self.xs, &diff)
                })
                .fold(0.0, f64::max)
        }
    }

    /// Continuous: largest |mean of the belief − mean of the reference| (exact moments for
    /// Gaussian messages, the grid's quadrature for series ones); None for discrete ones.
    pub fn mean_error(&self) -> Option<f64> {
        match &self.engine {
            Engine::Discrete(_) => None,
            Engine::Gaussian(s) => {
                let exact = s.rule().mrf().exact().ok()?;
                Some(
                    (s.moments().iter().zip(&exact))
                        .map(|(a, b)| (a.mean - b.mean).abs())
                        .fold(0.0, f64::max),
                )
            }
            Engine::Series(_) => Some(
                (self.beliefs().iter().zip(&self.exact))
                    .map(|(a, b)| (moments_on(&self.xs, a).0 - moments_on(&self.xs, b).0).abs())
                    .fold(0.0, f64::max),
            ),
        }
    }

    /// Series messages: the largest `∫ |belief − floor belief| dx` (the floor `a_∞` is what
    /// SOSMP's noise averages out to) and the floor's own `∫ |floor − reference| dx`.
    pub fn floor_errors(&self) -> Option<(f64, f64)> {
        if self.floor.is_empty() {
            return None;
        }
        let l1 = |a: &[Vec<f64>], b: &[Vec<f64>]| {
            (a.iter().zip(b))
                .map(|(x, y)| {
                    let diff: Vec<f64> = x.iter().zip(y).map(|(p, q)| (p - q).abs()).collect();
                    integral(&self.xs, &diff)
                })
                .fold(0.0, f64::max)
        };
        Some((
            l1(&self.beliefs(), &self.floor),
            l1(&self.floor, &self.exact),
        ))
    }

    fn converged(&self) -> bool {
        !self.sent.is_empty() && self.fixed_point_residual <= CONVERGED
    }

    /// `n,from,to,round,change,before,after` (message contents separated by `;`: probabilities,
    /// mean and precision, or coefficients).
    pub fn messages_csv(&self) -> String {
        let mut out = String::from("n,from,to,round,change,before,after\n");
        let join = |v: &[f64]| {
            v.iter()
                .map(|x| format!("{x:.6}"))
                .collect::<Vec<_>>()
                .join(";")
        };
        let names = &self.shape.names;
        for (k, m) in self.sent.iter().enumerate() {
            let _ = writeln!(
                out,
                "{},{},{},{},{:.6e},{},{}",
                k + 1,
                names[m.from],
                names[m.to],
                m.round,
                m.change,
                join(&m.before),
                join(&m.after)
            );
        }
        out
    }
}

/// Mean and standard deviation of the density `f` on the uniform grid `xs` (normalised by its
/// own integral; NaN when it has none).
pub fn moments_on(xs: &[f64], f: &[f64]) -> (f64, f64) {
    let z = integral(xs, f);
    let xf: Vec<f64> = xs.iter().zip(f).map(|(x, p)| x * p).collect();
    let mean = integral(xs, &xf) / z;
    let vf: Vec<f64> = (xs.iter().zip(f))
        .map(|(x, p)| (x - mean) * (x - mean) * p)
        .collect();
    (mean, (integral(xs, &vf) / z).max(0.0).sqrt())
}

impl ScenarioDef for TeachScenario {
    const NAME: &'static str = "teach";
    const SUMMARY: &'static str = "teaching mode: BP on a small graph (chain, tree, 3x3 grid, predictive-BP stand-in), one message at a time, with discrete, Gaussian or SOSMP series messages, against exact references";
    const ALGORITHMS: &'static [&'static str] = &[
        "discrete-bp (one message per step)",
        "gaussian-bp (one message per step)",
        "sosmp (one message per step)",
    ];
    type Config = TeachConfig;
    type View = TeachView;
    type Control = TeachControl;
    type Task = NoTask;
    type RunArgs = cli::TeachArgs;

    fn build(config: TeachConfig, cancel: &CancelFlag) -> Result<Self> {
        TeachScenario::build_with(config, cancel)
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
        let what = match self.config.messages {
            MessageKind::Discrete => "discrete BP".to_string(),
            MessageKind::Gaussian => "Gaussian BP".to_string(),
            MessageKind::Series => format!(
                "SOSMP ({} coefficients, {} samples per update)",
                self.config.coefficients, self.config.samples
            ),
        };
        format!(
            "{what}, one message per step ({} schedule, damping {})",
            self.config.schedule.label(),
            self.config.damping
        )
    }

    fn log(&self) -> &RunLog {
        &self.log
    }

    fn step(&mut self) -> Result<IterationRecord> {
        let start = Instant::now();
        let sent = each!(&mut self.engine, s => s.step())?;
        self.fixed_point_residual = each!(&self.engine, s => s.fixed_point_residual());
        let mut metrics = BTreeMap::from([
            ("belief_error".to_string(), self.max_error()),
            (
                "fixed_point_residual".to_string(),
                self.fixed_point_residual,
            ),
            ("sender".to_string(), sent.from as f64),
            ("receiver".to_string(), sent.to as f64),
        ]);
        if let Some(e) = self.mean_error() {
            metrics.insert("mean_error".to_string(), e);
        }
        if let Some((to_floor, _)) = self.floor_errors() {
            metrics.insert("floor_distance".to_string(), to_floor);
        }
        let record = IterationRecord {
            iter: self.messages_sent(),
            seconds: start.elapsed().as_secs_f64(),
            residual: sent.change,
            metrics,
        };
        self.sent.push(sent);
        Ok(self.log.push(record))
    }

    fn finished(&self) -> bool {
        self.messages_sent() >= self.config.max_messages || self.converged()
    }

    fn view(&self, _probe: Option<Probe>) -> ScenarioView {
        let g = &self.shape.graph;
        let upcoming = each!(&self.engine, s => s.upcoming(UPCOMING))
            .into_iter()
            .map(|m| (m, g.source(m), g.target(m)))
            .collect();
        ScenarioView::Teach(TeachView {
            description: self.description.clone(),
            graph: self.config.graph,
            kind: self.config.messages,
            xs: self.xs.clone(),
            names: self.shape.names.clone(),
            positions: self.shape.positions.clone(),
            cards: self.cards.clone(),
            edges: g.edges().to_vec(),
            last: self.sent.last().cloned(),
            upcoming,
            beliefs: self.beliefs(),
            exact: self.exact.clone(),
            reference: self.reference.clone(),
            floor: self.floor.clone(),
            upcoming_note: if self.config.schedule == Schedule::Residual {
                "residual BP: found by sending them on a copy, since each message sent changes the others' pending changes"
            } else {
                "the schedule's fixed order"
            },
            sent: self.messages_sent(),
            round: each!(&self.engine, s => s.round()),
            round_length: g.num_messages(),
            schedule: self.config.schedule,
            damping: self.config.damping,
            speed: self.speed,
            fixed_point_residual: self.fixed_point_residual,
            max_error: self.max_error(),
            mean_error: self.mean_error().unwrap_or(f64::NAN),
            converged: self.converged(),
        })
    }

    fn final_metrics(&self) -> BTreeMap<String, f64> {
        let mut m = BTreeMap::from([
            ("messages_sent".to_string(), self.messages_sent() as f64),
            ("max_belief_error".to_string(), self.max_error()),
            (
                "fixed_point_residual".to_string(),
                self.fixed_point_residual,
            ),
        ]);
        if let Some(e) = self.mean_error() {
            m.insert("max_mean_error".to_string(), e);
        }
        if let Some((to_floor, floor)) = self.floor_errors() {
            m.insert("max_floor_distance".to_string(), to_floor);
            m.insert("floor_belief_error".to_string(), floor);
        }
        m
    }

    fn extra_results(&self) -> Map<String, Value> {
        let names = &self.shape.names;
        let by_name = |v: &[Vec<f64>]| {
            names
                .iter()
                .map(String::as_str)
                .zip(v.iter().cloned())
                .collect()
        };
        report_fields(&TeachReport {
            model: &self.description,
            message_kind: self.config.messages,
            exact_reference: self.reference.clone(),
            grid: &self.xs,
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
            beliefs: by_name(&self.beliefs()),
            exact_marginals: by_name(&self.exact),
            max_belief_error: self.max_error(),
            max_mean_error: self.mean_error(),
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
