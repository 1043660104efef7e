//! The scenario subcommands of `run`, `sweep` and `tune`, built from the registry at start-up:
//! each registered scenario brings its `run NAME` flags, a `sweep NAME` (the generic sweep plus
//! its own sweep's flags where it has one) and its own `tune NAME`, so that adding a scenario
//! never edits this file.

use std::marker::PhantomData;

use clap::error::ErrorKind;
use std::path::{Path, PathBuf};

use clap::{ArgMatches, Args as _, FromArgMatches, Subcommand};

use crate::error::{Error, Result};
use crate::scenarios::registry::kind;
use crate::scenarios::sweep;
use crate::scenarios::{KINDS, OutputArgs, ScenarioConfig};

/// A group of scenario subcommands (`run`, `sweep`, `tune`).
pub trait Group: std::fmt::Debug + Clone + Send + Sync + 'static {
    const NAME: &'static str;
}

#[derive(Debug, Clone)]
pub struct RunGroup;
#[derive(Debug, Clone)]
pub struct SweepGroup;
#[derive(Debug, Clone)]
pub struct TuneGroup;

impl Group for RunGroup {
    const NAME: &'static str = "run";
}
impl Group for SweepGroup {
    const NAME: &'static str = "sweep";
}
impl Group for TuneGroup {
    const NAME: &'static str = "tune";
}

/// One parsed scenario subcommand of group `G`: the scenario's name and its flags.
#[derive(Debug, Clone)]
pub struct ScenarioCommand<G: Group> {
    pub name: String,
    pub matches: ArgMatches,
    /// `run --config FILE`: re-run the config saved in FILE (no scenario name).
    pub config_file: Option<PathBuf>,
    group: PhantomData<G>,
}

/// The subcommands of `group`, one per scenario that has one.
fn subcommands(group: &str) -> Vec<clap::Command> {
    KINDS
        .iter()
        .flat_map(|k| {
            let run = (group == "run").then(|| (k.run_command)());
            // Every scenario sweeps (with its own sweep's flags where it has one).
            let sweep = (group == "sweep").then(|| sweep::command(k));
            let verbs = (k.verbs)()
                .iter()
                .filter(|v| v.group == group && group != "sweep")
                .map(|v| (v.command)());
            run.into_iter().chain(sweep).chain(verbs)
        })
        .collect()
}

impl<G: Group> ScenarioCommand<G> {
    /// `run NAME`: the config and output folder from the flags.
    pub fn run_config(&self) -> Result<(ScenarioConfig, OutputArgs)> {
        if let Some(file) = &self.config_file {
            let output = OutputArgs::from_arg_matches(&self.matches)
                .map_err(|e| Error::Other(e.to_string()))?;
            return Ok((read_config_file(file, &output)?, output));
        }
        let kind = kind(&self.name)
            .ok_or_else(|| Error::Other(format!("unknown scenario '{}'", self.name)))?;
        (kind.run_config)(&self.matches)
    }

    /// `sweep NAME` or `tune NAME`: runs the scenario's verb.
    pub fn run_verb(&self) -> Result<()> {
        if G::NAME == "sweep" {
            let kind = kind(&self.name)
                .ok_or_else(|| Error::Other(format!("unknown scenario '{}'", self.name)))?;
            return sweep::run(kind, &self.matches);
        }
        let verb = kind(&self.name)
            .and_then(|k| (k.verbs)().iter().find(|v| v.group == G::NAME))
            .ok_or_else(|| {
                Error::Other(format!("the {} scenario has no '{}'", self.name, G::NAME))
            })?;
        (verb.run)(&self.matches)
    }
}

impl<G: Group> FromArgMatches for ScenarioCommand<G> {
    fn from_arg_matches(matches: &ArgMatches) -> std::result::Result<Self, clap::Error> {
        match matches.subcommand() {
            Some((name, sub)) => Ok(ScenarioCommand {
                name: name.to_string(),
                matches: sub.clone(),
                config_file: None,
                group: PhantomData,
            }),
            None if G::NAME == "run" && matches.contains_id(CONFIG_ARG) => {
                let file = matches.get_one::<PathBuf>(CONFIG_ARG).cloned();
                Ok(ScenarioCommand {
                    name: "--config".into(),
                    matches: matches.clone(),
                    config_file: file,
                    group: PhantomData,
                })
            }
            None => Err(clap::Error::raw(
                ErrorKind::MissingSubcommand,
                format!("'{}' needs a scenario", G::NAME),
            )),
        }
    }

    fn update_from_arg_matches(
        &mut self,
        matches: &ArgMatches,
    ) -> std::result::Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl<G: Group> Subcommand for ScenarioCommand<G> {
    fn augment_subcommands(cmd: clap::Command) -> clap::Command {
        let cmd = subcommands(G::NAME)
            .into_iter()
            .fold(cmd, |cmd, sub| cmd.subcommand(sub));
        if G::NAME != "run" {
            return cmd.subcommand_required(true);
        }
        // `run --config FILE [--out DIR] [--json] [--set k=v]` re-runs a saved run (the `Run`
        // variant turns `subcommand_required` off).
        OutputArgs::augment_args(cmd)
            .arg(
                clap::Arg::new(CONFIG_ARG)
                    .long("config")
                    .value_name("FILE")
                    .value_parser(clap::value_parser!(PathBuf))
                    .help(
                        "Re-run a saved run instead of naming a scenario: a results.json (its \
                         \"config\") or a scenario config as JSON; '-' reads it from stdin",
                    ),
            )
            .args_conflicts_with_subcommands(true)
    }

    fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_subcommands(cmd)
    }

    fn has_subcommand(name: &str) -> bool {
        subcommands(G::NAME).iter().any(|c| c.get_name() == name)
    }
}

/// The id of `run --config FILE`.
const CONFIG_ARG: &str = "config_file";

/// The config of a saved run: `file` holds a results.json (its `config`) or a scenario config
/// (`-`: stdin); the `--set` assignments in `output` apply on top, then the config's checks.
pub fn read_config_file(file: &Path, output: &OutputArgs) -> Result<ScenarioConfig> {
    let name = file.display().to_string();
    let text = if name == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .map_err(|e| Error::Io(format!("cannot read the config from stdin: {e}")))?;
        text
    } else {
        std::fs::read_to_string(file).map_err(|e| Error::Io(format!("cannot read {name}: {e}")))?
    };
    config_from_json(&text, &name, output)
}

/// [`read_config_file`] on text already read (`name` for messages).
pub fn config_from_json(text: &str, name: &str, output: &OutputArgs) -> Result<ScenarioConfig> {
    let doc: serde_json::Value =
        serde_json::from_str(text).map_err(|e| Error::Other(format!("{name}: not JSON: {e}")))?;
    // results.json: {"scenario": NAME, "config": {...}}; a config: {"scenario": NAME, ...}.
    let config = match (doc.get("config"), doc.get("scenario")) {
        (Some(serde_json::Value::Object(inner)), Some(name)) => {
            let mut inner = inner.clone();
            inner.insert("scenario".into(), name.clone());
            serde_json::Value::Object(inner)
        }
        _ => doc,
    };
    let config: ScenarioConfig = serde_json::from_value(config).map_err(|e| {
        Error::Other(format!(
            "{name}: not a results.json or a scenario config ({e}); a config names its \
             \"scenario\": one of {}",
            KINDS.iter().map(|k| k.name).collect::<Vec<_>>().join(", ")
        ))
    })?;
    let table = config.params();
    let config = output.apply_sets(config, table)?;
    config.check()?;
    Ok(config)
}
