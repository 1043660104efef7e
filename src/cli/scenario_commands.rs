//! The scenario subcommands of `run`, `sweep` and `tune`, built from the registry at start-up:
//! each registered scenario brings its `run NAME` flags and its own `sweep NAME` / `tune NAME`
//! verbs, so that adding a scenario never edits this file.

use std::marker::PhantomData;

use clap::error::ErrorKind;
use clap::{ArgMatches, FromArgMatches, Subcommand};

use crate::error::{Error, Result};
use crate::scenarios::registry::kind;
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
    group: PhantomData<G>,
}

/// The subcommands of `group`, one per scenario that has one.
fn subcommands(group: &str) -> Vec<clap::Command> {
    KINDS
        .iter()
        .flat_map(|k| {
            let run = (group == "run").then(|| (k.run_command)());
            let verbs = (k.verbs)()
                .iter()
                .filter(|v| v.group == group)
                .map(|v| (v.command)());
            run.into_iter().chain(verbs)
        })
        .collect()
}

impl<G: Group> ScenarioCommand<G> {
    /// `run NAME`: the config and output folder from the flags.
    pub fn run_config(&self) -> Result<(ScenarioConfig, OutputArgs)> {
        let kind = kind(&self.name)
            .ok_or_else(|| Error::Other(format!("unknown scenario '{}'", self.name)))?;
        (kind.run_config)(&self.matches)
    }

    /// `sweep NAME` or `tune NAME`: runs the scenario's verb.
    pub fn run_verb(&self) -> Result<()> {
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
                group: PhantomData,
            }),
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
        subcommands(G::NAME)
            .into_iter()
            .fold(cmd, |cmd, sub| cmd.subcommand(sub))
            .subcommand_required(true)
    }

    fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_subcommands(cmd)
    }

    fn has_subcommand(name: &str) -> bool {
        subcommands(G::NAME).iter().any(|c| c.get_name() == name)
    }
}
