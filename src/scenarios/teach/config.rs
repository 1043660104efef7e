//! The teaching scenario's config: which small graph, which kind of message, the schedule and
//! damping, the model's strengths and the seed. Every field is echoed into results.json.

use serde::{Deserialize, Serialize};

use crate::error::labels::{Labelled, unknown};
use crate::error::{Error, Result};
use crate::inference::{Damping, Schedule};
use crate::scenarios::ScenarioParams;
use crate::scenarios::params::{Param, check_table, names_of};

/// The tunable numbers, described once.
pub const PARAMS: &[Param] = &[
    Param::real("damping", "Damping", 0.0, 0.99)
        .slider(0.0, 0.9)
        .help("new message = damping x old + (1 - damping) x update; 0 sends the update as is."),
    Param::int("states", "States per node", 2.0, 5.0)
        .help("Labels per variable (chain, tree, grid; the predictive-BP stand-in fixes its own)."),
    Param::real("coupling", "Coupling", -3.0, 3.0).help(
        "Edge strength: psi(i, j) = exp(coupling) when i = j, else 1. Negative couplings \
         prefer different labels (frustrated loops on the grid).",
    ),
    Param::real("field", "Field strength", 0.0, 4.0)
        .slider(0.0, 3.0)
        .help("Spread of the random node potentials: phi_t(x) = exp(field x N(0, 1))."),
    Param::int("samples", "Samples per message", 1.0, 10_000.0)
        .slider(1.0, 1000.0)
        .log()
        .help("Series messages: SOSMP's k, the samples each update averages (more: less noise)."),
    Param::int("coefficients", "Coefficients", 2.0, 40.0)
        .slider(2.0, 30.0).help(
            "Series messages: r, the Fourier coefficients a message keeps (more: closer to grid BP).",
        ),
    Param::int("max_messages", "Messages", 1.0, 100_000.0)
        .slider(1.0, 2000.0)
        .log()
        .help("Messages a run sends at most (Play stops earlier at a fixed point)."),
    Param::choice("graph", "Graph", names_of::<TeachGraph>).help(
        "The small model to pass messages on: chain, tree, grid (3 × 3) or pbp (the \
         predictive-BP stand-in).",
    ),
    Param::choice("messages", "Messages", names_of::<MessageKind>).help(
        "What a message is: discrete (bars over labels), gaussian (Gaussian BP) or series \
         (SOSMP's orthogonal-series coefficients).",
    ),
    Param::choice("schedule", "Schedule", names_of::<Schedule>)
        .help("The order in which messages are sent (residual not for series)."),
    Param::value("seed", "Seed")
        .help("Seed of the potentials (and of the stand-in's CPTs and evidence)."),
];

/// The small graphs teaching mode offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(strum::VariantArray, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "lowercase", parse_err_ty = String, parse_err_fn = unknown::<Self>)]
pub enum TeachGraph {
    /// Six variables in a row.
    #[default]
    Chain,
    /// A complete binary tree of depth 2 (seven variables).
    Tree,
    /// A 3 x 3 four-connected grid (loopy).
    Grid,
    /// The predictive-BP stand-in (for the synthetic model of Wang & Gordon 2020, Fig. 4),
    /// loop-free form, as a Bayes net with evidence.
    Pbp,
}

impl Labelled for TeachGraph {
    const WHAT: &str = "graph";
}

impl TeachGraph {
    pub fn key(self) -> &'static str {
        self.into()
    }

    pub fn label(self) -> &'static str {
        match self {
            TeachGraph::Chain => "chain (6)",
            TeachGraph::Tree => "tree (7)",
            TeachGraph::Grid => "3 x 3 grid",
            TeachGraph::Pbp => "predictive-BP stand-in",
        }
    }

    /// Whether BP's fixed point is exact on it (no loops).
    pub fn is_tree(self) -> bool {
        self != TeachGraph::Grid
    }
}

/// What a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(strum::VariantArray, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "lowercase", parse_err_ty = String, parse_err_fn = unknown::<Self>)]
pub enum MessageKind {
    /// A distribution over a few labels (discrete BP), drawn as bars.
    #[default]
    Discrete,
    /// A Gaussian in information form (Gaussian BP), drawn as a curve with mean and precision.
    Gaussian,
    /// Orthogonal-series coefficients updated by SOSMP (Noorshams & Wainwright 2013), drawn as
    /// the function and its coefficients.
    Series,
}

impl Labelled for MessageKind {
    const WHAT: &str = "message kind";
}

impl MessageKind {
    pub fn key(self) -> &'static str {
        self.into()
    }

    pub fn label(self) -> &'static str {
        match self {
            MessageKind::Discrete => "discrete (bars)",
            MessageKind::Gaussian => "Gaussian (curves)",
            MessageKind::Series => "series, SOSMP (coefficients)",
        }
    }

    /// Whether messages and beliefs are functions of a continuous variable.
    pub fn is_continuous(self) -> bool {
        self != MessageKind::Discrete
    }
}

/// Every parameter of a teaching run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TeachConfig {
    pub graph: TeachGraph,
    pub messages: MessageKind,
    pub schedule: Schedule,
    pub damping: f64,
    pub states: usize,
    pub coupling: f64,
    pub field: f64,
    pub seed: u64,
    /// Series messages: samples per update (SOSMP's k).
    pub samples: usize,
    /// Series messages: Fourier coefficients per message (SOSMP's r).
    pub coefficients: usize,
    pub max_messages: usize,
}

impl Default for TeachConfig {
    fn default() -> Self {
        TeachConfig {
            graph: TeachGraph::Chain,
            messages: MessageKind::Discrete,
            // Forward-backward: exact on the chain after one round of 10 messages.
            schedule: Schedule::Sweep,
            damping: 0.0,
            states: 3,
            coupling: 1.0,
            field: 1.0,
            seed: 0,
            samples: 50,
            coefficients: 10,
            max_messages: 200,
        }
    }
}

impl ScenarioParams for TeachConfig {
    const PARAMS: &'static [Param] = PARAMS;

    /// Small models: the process's base.
    fn memory_need(&self) -> Option<crate::run::budget::MemoryNeed> {
        Some(crate::run::budget::MemoryNeed::new("teach"))
    }

    /// A message takes well under a millisecond; a window paces them for the eye.
    fn time_need(&self) -> Option<crate::run::time_need::TimeNeed> {
        Some(crate::run::time_need::TimeNeed::scaled(
            0.0,
            1e-4,
            self.max_messages,
        ))
    }

    fn check(&self) -> Result<()> {
        check_table(self, PARAMS)?;
        Damping(self.damping).check()?;
        if !self.coupling.is_finite() || !self.field.is_finite() {
            return Err(Error::param("coupling", "must be finite"));
        }
        if self.messages == MessageKind::Series {
            if self.schedule == Schedule::Residual {
                return Err(Error::param(
                    "schedule",
                    "series messages are SOSMP's stochastic updates: a random update has no \
                     exact pending residual to rank, so residual BP does not apply (use sweep, \
                     synchronous or random)",
                ));
            }
            if self.damping != 0.0 {
                return Err(Error::param(
                    "damping",
                    format!(
                        "series messages take SOSMP's step size 1/(t+1), which is their \
                         damping; set the damping to 0 (got {})",
                        self.damping
                    ),
                ));
            }
        }
        Ok(())
    }
}
