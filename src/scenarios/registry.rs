//! The scenario registry: the one list of scenarios. Each line names a type implementing
//! [`ScenarioDef`] (its name, summary, config, view, live controls, long tasks and command-line
//! verbs); the macro turns the list into the closed enums the runner, the CLI and the window
//! pass around ([`ScenarioConfig`], [`ScenarioView`], [`ScenarioControl`], [`Task`],
//! [`TaskResult`]) and into [`KINDS`], so that no other file matches on scenario names.
//! Adding a scenario: see ARCHITECTURE.md, "How to add a scenario".

use std::fmt::Debug;
use std::path::{Path, PathBuf};

use clap::{ArgMatches, FromArgMatches};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::help_text;
use super::params::{self, Param};
use super::sweep::SweepTable;
use super::{OutputArgs, Scenario};
use crate::error::{Error, Result};
use crate::run::CancelFlag;
use crate::run::budget::MemoryNeed;
use crate::run::time_need::TimeNeed;

/// A scenario as the registry sees it. Implemented once, in the scenario's own folder.
pub trait ScenarioDef: Scenario + Sized + 'static {
    /// The name on the command line, in results.json and in the window's selector.
    const NAME: &'static str;
    /// One line for `beliefscope list` and the selector's tooltip.
    const SUMMARY: &'static str;
    /// The algorithms it can run, for `beliefscope list`.
    const ALGORITHMS: &'static [&'static str];
    /// Every parameter of a run, defaults included (echoed into results.json).
    type Config: ScenarioParams
        + Clone
        + PartialEq
        + Debug
        + Default
        + Serialize
        + DeserializeOwned
        + Send
        + Sync
        + 'static;
    /// What the window draws, made on the worker.
    type View: Clone + Debug + Send + Sync + 'static;
    /// Live changes that do not rebuild the scenario ([`NoControl`] where there are none).
    type Control: Control;
    /// Long jobs the worker runs beside the scenario ([`NoTask`] where there are none).
    type Task: ScenarioTask;
    /// The flags of `beliefscope run NAME`.
    type RunArgs: RunFlags<Config = Self::Config>;

    /// Checks the config, makes or loads the data and sets the algorithm up (may be slow;
    /// polls `cancel`).
    fn build(config: Self::Config, cancel: &CancelFlag) -> Result<Self>;
    /// The iteration limit, where the config alone fixes it.
    fn max_iters(config: &Self::Config) -> Option<usize>;
    /// Further verbs (`sweep NAME`, `tune NAME`).
    fn verbs() -> &'static [Verb] {
        &[]
    }
    /// The parameters `sweep NAME --seeds N` steps together (seed, seed + 1, ...), those the
    /// config has; the first present is the summary's seed column.
    const SEED_KEYS: &'static [&'static str] = &["seed"];
    /// Figures a finished sweep draws from its summary (into the sweep's folder); returns the
    /// files written. Most scenarios have none beyond summary.csv.
    fn sweep_figures(dir: &Path, table: &SweepTable) -> Result<Vec<PathBuf>> {
        let _ = (dir, table);
        Ok(Vec::new())
    }
}

/// A scenario's config or view type, found inside the registry's enums without naming the
/// variant: `DenoiseConfig::of(&config)`, `FlowView::of(&snapshot.view)`.
pub trait Registered: Sized {
    /// The enum it is a variant of.
    type In;
    fn of(x: &Self::In) -> Option<&Self>;
    fn of_mut(x: &mut Self::In) -> Option<&mut Self>;
}

/// A scenario's config: its parameter table (every tunable number described once, see
/// [`params`]) and its checks (the table's ranges, then the rules between parameters).
pub trait ScenarioParams {
    const PARAMS: &'static [Param];
    fn check(&self) -> Result<()>;
    /// The run's estimated peak memory from its sizes (matrices, messages, tables, images),
    /// checked against the budget before anything large is allocated (see
    /// [`crate::run::budget`]). `None`: nothing in the config makes the run large.
    fn memory_need(&self) -> Option<MemoryNeed> {
        None
    }
    /// The run's estimated time from its sizes (see [`crate::run::time_need`]), stated when
    /// it starts and the basis of its ETA.
    fn time_need(&self) -> Option<TimeNeed> {
        None
    }
    /// [`check`](Self::check), then the estimated peak memory against the budget.
    fn check_with_budget(&self) -> Result<()> {
        self.check()?;
        match self.memory_need() {
            Some(need) => need.check(),
            None => Ok(()),
        }
    }
}

/// The flags of `run NAME`: a `clap::Args` struct with `#[command(flatten)] output: OutputArgs`.
pub trait RunFlags: clap::Args + FromArgMatches {
    type Config: ScenarioParams + Serialize + DeserializeOwned;
    /// The defaults overridden by the flags given (not `--set`, which the caller applies once,
    /// after every flag; not yet checked).
    fn into_config(self) -> Result<Self::Config>;
    /// The flags' `--out`, `--json`, `--set` and `--max-memory`.
    fn output(&self) -> &OutputArgs;

    /// [`into_config`](Self::into_config), then `--set`, checked: the config of a verb that
    /// reuses a run's flags (`tune denoise`, `sweep tree`).
    fn into_checked_config(self) -> Result<Self::Config>
    where
        Self: Sized,
    {
        let output = self.output().clone();
        let config = output.apply_sets(self.into_config()?, Self::Config::PARAMS)?;
        config.check()?;
        Ok(config)
    }
}

/// A command-line verb a scenario adds, e.g. `sweep denoise`.
pub struct Verb {
    /// The group it belongs to: "sweep" or "tune".
    pub group: &'static str,
    /// The subcommand (named after the scenario) with its flags.
    pub command: fn() -> clap::Command,
    pub run: fn(&ArgMatches) -> Result<()>,
    /// Whether `run` also reads the generic sweep's flags (`--plan`, `--jobs`, `--set`,
    /// `--out`) from the same matches; a "sweep" verb that does not refuses them.
    pub takes_sweep_flags: bool,
}

impl Verb {
    /// The subcommand `name` with the flags of `A`.
    pub fn command<A: clap::Args>(name: &'static str, about: &'static str) -> clap::Command {
        A::augment_args(scenario_command(name, about))
    }

    /// The same, where `A` reuses a run's flags of config `C`: as in `run NAME --help`, a
    /// flag of `C`'s table is described by the table, with the default from `C::default()`.
    pub fn command_with_table<A, C>(name: &'static str, about: &'static str) -> clap::Command
    where
        A: clap::Args,
        C: ScenarioParams + Default + Serialize + DeserializeOwned,
    {
        help_text::annotate::<C>(Self::command::<A>(name, about))
    }

    /// The parsed flags of `A`.
    pub fn args<A: FromArgMatches>(matches: &ArgMatches) -> Result<A> {
        A::from_arg_matches(matches).map_err(|e| Error::Other(e.to_string()))
    }
}

/// A live change to a running scenario.
pub trait Control: Clone + Debug + PartialEq + Send + Sync + 'static {
    /// Whether applying `self` right after `earlier` makes `earlier` irrelevant (the same
    /// slider moved twice), so a queue of slider moves can skip to the last.
    fn supersedes(&self, earlier: &Self) -> bool {
        let _ = earlier;
        false
    }
}

/// The control of a scenario that has none (no value exists).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoControl {}

impl Control for NoControl {}

/// A long job on the worker (auto-tune, sweeps): progress, cancel, a result.
pub trait ScenarioTask: Clone + Debug + Send + 'static {
    type Output: Debug + Send + Sync + 'static;
    fn label(&self) -> &'static str;
    /// Runs the job; `progress(done, total)` after each step.
    fn run(&self, cancel: &CancelFlag, progress: &dyn Fn(usize, usize)) -> Result<Self::Output>;
}

/// The task of a scenario that has none (no value exists).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoTask {}

impl ScenarioTask for NoTask {
    type Output = NoTask;
    fn label(&self) -> &'static str {
        match *self {}
    }
    fn run(&self, _: &CancelFlag, _: &dyn Fn(usize, usize)) -> Result<NoTask> {
        match *self {}
    }
}

/// What the registry knows of one scenario without its types (for `list`, the CLI and the
/// window's selector).
pub struct Kind {
    pub name: &'static str,
    pub summary: &'static str,
    pub algorithms: &'static [&'static str],
    pub default_config: fn() -> ScenarioConfig,
    pub params: fn() -> &'static [Param],
    /// The `run NAME` subcommand with its flags.
    pub run_command: fn() -> clap::Command,
    /// The scenario's own flags as written in its `cli.rs`, before the table describes them
    /// and adds its own (for tests of where a flag's help is written).
    pub run_flags: fn() -> clap::Command,
    /// Its parsed flags as a config and an output folder.
    pub run_config: fn(&ArgMatches) -> Result<(ScenarioConfig, OutputArgs)>,
    pub verbs: fn() -> &'static [Verb],
    /// The parameters `--seeds N` steps.
    pub seed_keys: &'static [&'static str],
    /// The figures a finished sweep draws (see [`ScenarioDef::sweep_figures`]).
    pub sweep_figures: fn(&Path, &SweepTable) -> Result<Vec<PathBuf>>,
}

fn run_command<S: ScenarioDef>() -> clap::Command {
    let budget = crate::run::budget::format_bytes(crate::run::budget::budget());
    let default_need = S::Config::default()
        .memory_need()
        .map(|n| {
            format!(
                " The default run needs about {}.",
                crate::run::budget::format_bytes(n.total())
            )
        })
        .unwrap_or_default();
    let command = help_text::add_table_flags(run_flags::<S>(), S::Config::PARAMS);
    help_text::annotate::<S::Config>(command).after_help(format!(
        "Memory: a run whose estimated peak memory is above the budget is refused \
             before it starts; the budget here is {budget} \
             (half of physical memory unless --max-memory sets it).{default_need}"
    ))
}

fn run_flags<S: ScenarioDef>() -> clap::Command {
    <S::RunArgs as clap::Args>::augment_args(scenario_command(S::NAME, S::SUMMARY))
}

/// A scenario subcommand. Negative numbers are values, so that `--bandwidth -5` reaches the
/// parameter's range check instead of being taken for a flag.
fn scenario_command(name: &'static str, about: &'static str) -> clap::Command {
    clap::Command::new(name)
        .about(about)
        .allow_negative_numbers(true)
}

fn run_config<S: ScenarioDef>(matches: &ArgMatches) -> Result<(ScenarioConfig, OutputArgs)>
where
    ScenarioConfig: From<S::Config>,
{
    let parse = |e: clap::Error| Error::Other(e.to_string());
    let output = OutputArgs::from_arg_matches(matches).map_err(parse)?;
    output.apply_budget();
    let config = S::RunArgs::from_arg_matches(matches)
        .map_err(parse)?
        .into_config()?;
    // The table's own flags, then `--set`, once, after every other flag.
    let config = help_text::apply_table_flags(config, matches, S::Config::PARAMS)?;
    let config = output.apply_sets(config, S::Config::PARAMS)?;
    config.check_with_budget()?;
    Ok((config.into(), output))
}

/// The registry entry named `name`.
pub fn kind(name: &str) -> Option<&'static Kind> {
    KINDS.iter().find(|k| k.name == name)
}

/// Turns the list of scenarios into the enums and [`KINDS`]. One line per scenario:
/// `Variant => path::Type`; the variant's lowercase name must equal `Type::NAME` (a test checks).
macro_rules! registry {
    ($($variant:ident => $ty:ty),* $(,)?) => {
        /// Every parameter of a run, defaults included; echoed into results.json.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "scenario", rename_all = "lowercase")]
        pub enum ScenarioConfig {
            $($variant(<$ty as ScenarioDef>::Config),)*
        }

        /// The data a scenario's views draw, produced on the worker and sent in a snapshot.
        // One view per snapshot (at most ~60 a second) inside an `Arc`: the size of the
        // largest variant costs nothing worth boxing it for.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone)]
        pub enum ScenarioView {
            $($variant(<$ty as ScenarioDef>::View),)*
        }

        /// A live change to the running scenario that does not rebuild it.
        #[derive(Debug, Clone, PartialEq)]
        pub enum ScenarioControl {
            $($variant(<$ty as ScenarioDef>::Control),)*
        }

        /// A long job for the worker.
        // A few tasks per run, moved once each: boxing the largest (a config) gains nothing.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone)]
        pub enum Task {
            $($variant(<$ty as ScenarioDef>::Task),)*
        }

        /// What a finished task produced.
        #[derive(Debug, Clone)]
        pub enum TaskResult {
            $($variant(std::sync::Arc<<<$ty as ScenarioDef>::Task as ScenarioTask>::Output>),)*
        }

        /// The registered scenarios, in the selector's order.
        pub static KINDS: &[Kind] = &[
            $(Kind {
                name: <$ty as ScenarioDef>::NAME,
                summary: <$ty as ScenarioDef>::SUMMARY,
                algorithms: <$ty as ScenarioDef>::ALGORITHMS,
                default_config: || ScenarioConfig::$variant(Default::default()),
                params: || <<$ty as ScenarioDef>::Config as ScenarioParams>::PARAMS,
                run_command: run_command::<$ty>,
                run_flags: run_flags::<$ty>,
                run_config: run_config::<$ty>,
                verbs: <$ty as ScenarioDef>::verbs,
                seed_keys: <$ty as ScenarioDef>::SEED_KEYS,
                sweep_figures: <$ty as ScenarioDef>::sweep_figures,
            },)*
        ];

        $(impl Registered for <$ty as ScenarioDef>::Config {
            type In = ScenarioConfig;
            #[allow(unreachable_patterns)]
            fn of(x: &ScenarioConfig) -> Option<&Self> {
                match x {
                    ScenarioConfig::$variant(c) => Some(c),
                    _ => None,
                }
            }
            #[allow(unreachable_patterns)]
            fn of_mut(x: &mut ScenarioConfig) -> Option<&mut Self> {
                match x {
                    ScenarioConfig::$variant(c) => Some(c),
                    _ => None,
                }
            }
        }

        impl Registered for <$ty as ScenarioDef>::View {
            type In = ScenarioView;
            #[allow(unreachable_patterns)]
            fn of(x: &ScenarioView) -> Option<&Self> {
                match x {
                    ScenarioView::$variant(v) => Some(v),
                    _ => None,
                }
            }
            #[allow(unreachable_patterns)]
            fn of_mut(x: &mut ScenarioView) -> Option<&mut Self> {
                match x {
                    ScenarioView::$variant(v) => Some(v),
                    _ => None,
                }
            }
        })*

        $(impl From<<$ty as ScenarioDef>::Config> for ScenarioConfig {
            fn from(config: <$ty as ScenarioDef>::Config) -> Self {
                ScenarioConfig::$variant(config)
            }
        })*

        impl ScenarioConfig {
            /// The scenario's name as used on the command line and in results.json.
            pub fn name(&self) -> &'static str {
                match self {
                    $(ScenarioConfig::$variant(_) => <$ty as ScenarioDef>::NAME,)*
                }
            }

            /// Checks every parameter, makes or loads the data and sets the algorithm up. May
            /// be slow (kernel set-ups); `cancel` is polled inside long set-ups.
            pub fn build(&self, cancel: &CancelFlag) -> Result<Box<dyn Scenario>> {
                match self {
                    $(ScenarioConfig::$variant(c) => {
                        c.check_with_budget()?;
                        Ok(Box::new(<$ty as ScenarioDef>::build(c.clone(), cancel)?))
                    })*
                }
            }

            /// Checks every parameter, then the estimated peak memory against the budget.
            pub fn check(&self) -> Result<()> {
                match self {
                    $(ScenarioConfig::$variant(c) => c.check_with_budget(),)*
                }
            }

            /// The parameter table of this config's scenario.
            pub fn params(&self) -> &'static [Param] {
                match self {
                    $(ScenarioConfig::$variant(_) => {
                        <<$ty as ScenarioDef>::Config as ScenarioParams>::PARAMS
                    })*
                }
            }

            /// This config with `key` (its results.json name) set from `text`, checked.
            pub fn set(&self, key: &str, text: &str) -> Result<ScenarioConfig> {
                match self {
                    $(ScenarioConfig::$variant(c) => {
                        let table = <<$ty as ScenarioDef>::Config as ScenarioParams>::PARAMS;
                        let c = params::set(c, key, text, table)?;
                        c.check_with_budget()?;
                        Ok(ScenarioConfig::$variant(c))
                    })*
                }
            }

            /// The run's estimated peak memory, where its sizes make it large.
            pub fn memory_need(&self) -> Option<MemoryNeed> {
                match self {
                    $(ScenarioConfig::$variant(c) => c.memory_need(),)*
                }
            }

            /// The run's estimated time, from its sizes.
            pub fn time_need(&self) -> Option<TimeNeed> {
                match self {
                    $(ScenarioConfig::$variant(c) => c.time_need(),)*
                }
            }

            /// The iteration limit, where the config alone fixes it.
            pub fn max_iters(&self) -> Option<usize> {
                match self {
                    $(ScenarioConfig::$variant(c) => <$ty as ScenarioDef>::max_iters(c),)*
                }
            }
        }

        impl ScenarioControl {
            /// Whether applying `self` right after `earlier` makes `earlier` irrelevant.
            pub fn supersedes(&self, earlier: &ScenarioControl) -> bool {
                #[allow(unreachable_patterns)]
                match (self, earlier) {
                    $((ScenarioControl::$variant(a), ScenarioControl::$variant(b)) => {
                        a.supersedes(b)
                    })*
                    _ => false,
                }
            }
        }

        impl Task {
            pub fn label(&self) -> &'static str {
                match self {
                    $(Task::$variant(t) => t.label(),)*
                }
            }

            /// Runs the task; `progress(done, total)` after each step.
            pub fn run(
                &self,
                cancel: &CancelFlag,
                progress: &dyn Fn(usize, usize),
            ) -> Result<TaskResult> {
                match self {
                    $(Task::$variant(t) => {
                        Ok(TaskResult::$variant(std::sync::Arc::new(t.run(cancel, progress)?)))
                    })*
                }
            }
        }
    };
}

registry! {
    Denoise => super::denoise::Denoise,
    Tree => super::tree::TreeScenario,
    Retrieval => super::retrieval::Retrieval,
    Sosmp => super::sosmp::SosmpScenario,
    Flow => super::flow::FlowScenario,
    Kjit => super::kjit::KjitScenario,
    Pbp => super::pbp::PbpScenario,
    Teach => super::teach::TeachScenario,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenarios::output::SETS_APPLIED;

    /// `run NAME --set key=value` applies the assignment once: the flags' config does not, the
    /// run's config does, after every flag.
    #[test]
    fn a_set_is_applied_once() {
        for kind in KINDS {
            let table = (kind.params)();
            let key = table.iter().find(|p| p.is_number()).expect("a number").key;
            let json = (kind.default_config)().to_json();
            let value = params::lookup(&json, key).expect("the field").to_string();
            let mut args = vec![kind.name.to_string()];
            if kind.name == "tree" {
                args.extend(["--builtin".to_string(), "gauss-tree".to_string()]);
            }
            args.extend(["--set".to_string(), format!("{key}={value}")]);
            let matches = (kind.run_command)().try_get_matches_from(&args).unwrap();
            SETS_APPLIED.with(|n| n.set(0));
            let (config, _) =
                (kind.run_config)(&matches).unwrap_or_else(|e| panic!("{}: {e}", kind.name));
            assert_eq!(config.name(), kind.name);
            assert_eq!(
                SETS_APPLIED.with(|n| n.get()),
                1,
                "{}: --set {key}={value} applied more than once",
                kind.name
            );
        }
    }
}
