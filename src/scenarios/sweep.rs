//! `beliefscope sweep NAME`: one sweep for every scenario over its parameter table. `--vary
//! key=v1,v2,...` (repeatable; every combination, or paired with `--zip`) times `--seeds N`,
//! the other parameters from the defaults and `--set`. Each run is an ordinary `beliefscope
//! run --config` into `DIR/runs/<id>/`; `DIR/summary.csv` has one row per run. Runs already
//! complete are skipped, the rest run in parallel within the cores and the memory budget
//! ([`execute`]); `--plan` only writes the runs with jobs.txt, a Slurm array script and a GNU
//! parallel line ([`plan`]), and `beliefscope collect DIR` merges what has finished
//! ([`collect`]).
//!
//! A scenario's own sweep verb (denoise's Fig. 1 flags, tree, sosmp, pbp) shares the
//! subcommand: without `--vary` its flags run it; denoise's translates into this sweep.
//!
//! Cost: that of the runs; the planning is milliseconds.

#[path = "sweep_collect.rs"]
pub mod collect;
#[path = "sweep_execute.rs"]
pub mod execute;
#[path = "sweep_plan.rs"]
pub mod plan;
#[path = "sweep_spec.rs"]
pub mod spec;

use std::path::{Path, PathBuf};

use clap::{ArgMatches, Args, FromArgMatches};

pub use collect::{SweepRow, SweepTable, collect};
pub use spec::{Points, RunSpec};

use crate::error::{Error, Result};
use crate::scenarios::{Kind, OutputArgs, ScenarioConfig};

// The flags every `sweep NAME` takes.
#[derive(Debug, Clone, Default, Args)]
pub struct SweepArgs {
    /// A parameter and its values, e.g. --vary colors=10,25,50 (repeatable: every combination;
    /// keys as --set takes them; values separated by ';' where a value is itself a list).
    #[arg(long, value_name = "KEY=V1,V2,...", allow_hyphen_values = true)]
    pub vary: Vec<String>,
    /// Pair the --vary lists element by element (all the same length) instead of taking every
    /// combination.
    #[arg(long)]
    pub zip: bool,
    /// Run each point with N seeds: the scenario's seed parameter, counted up from its value.
    #[arg(long, value_name = "N")]
    pub seeds: Option<usize>,
    /// Only write the runs (configs, jobs.txt, slurm.sh, parallel.sh); run them elsewhere and
    /// `beliefscope collect DIR`.
    #[arg(long)]
    pub plan: bool,
    /// Runs at a time [default: the cores].
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    #[command(flatten)]
    pub output: OutputArgs,
}

impl SweepArgs {
    fn jobs(&self) -> Result<usize> {
        match self.jobs {
            Some(0) => Err(Error::Other("--jobs must be at least 1".into())),
            Some(n) => Ok(n),
            None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
        }
    }

    fn out(&self) -> Result<&Path> {
        self.output
            .out
            .as_deref()
            .ok_or_else(|| Error::Other("sweep needs --out DIR for its runs and summary".into()))
    }
}

/// The scenario's own sweep verb, if it has one.
fn bespoke(kind: &Kind) -> Option<&'static crate::scenarios::Verb> {
    (kind.verbs)().iter().find(|v| v.group == "sweep")
}

/// `sweep NAME`: the generic flags, plus those of the scenario's own sweep where it has one.
pub fn command(kind: &Kind) -> clap::Command {
    let about = match bespoke(kind) {
        Some(v) => format!(
            "{} With --vary: any parameters of {} over lists (see --vary).",
            (v.command)()
                .get_about()
                .map(|a| a.to_string())
                .unwrap_or_default(),
            kind.name
        ),
        None => format!(
            "Runs {} over lists of parameters (--vary) and seeds into DIR/runs/, one row per run \
             in DIR/summary.csv.",
            kind.name
        ),
    };
    // The about after the flags (the derive would set its own).
    let mut cmd =
        SweepArgs::augment_args(clap::Command::new(kind.name).allow_negative_numbers(true))
            .about(about);
    if let Some(v) = bespoke(kind) {
        let own = (v.command)();
        for arg in own.get_arguments() {
            if !cmd.get_arguments().any(|a| a.get_id() == arg.get_id()) {
                cmd = cmd.arg(arg.clone());
            }
        }
        for group in own.get_groups() {
            if !cmd.get_groups().any(|g| g.get_id() == group.get_id()) {
                // Required only without --vary; checked by the verb itself.
                cmd = cmd.group(group.clone().required(false));
            }
        }
    }
    cmd
}

fn given(matches: &ArgMatches, id: &str) -> bool {
    matches!(
        matches.value_source(id),
        Some(clap::parser::ValueSource::CommandLine)
    )
}

/// Runs `sweep NAME` from its parsed flags: the scenario's own sweep when it has one and
/// neither `--vary` nor another flag only the generic sweep has is given; else the generic one.
pub fn run(kind: &Kind, matches: &ArgMatches) -> Result<()> {
    let args = SweepArgs::from_arg_matches(matches).map_err(|e| Error::Other(e.to_string()))?;
    let generic_ids: Vec<String> = SweepArgs::augment_args(clap::Command::new("x"))
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .collect();
    if let Some(verb) = bespoke(kind) {
        let own = (verb.command)();
        let own_ids: Vec<String> = own
            .get_arguments()
            .map(|a| a.get_id().to_string())
            .collect();
        let generic_only = generic_ids
            .iter()
            .any(|id| !own_ids.contains(id) && given(matches, id));
        if args.vary.is_empty() && (verb.takes_sweep_flags || !generic_only) {
            return (verb.run)(matches);
        }
        if let Some(arg) = own.get_arguments().find(|a| {
            !generic_ids.contains(&a.get_id().to_string()) && given(matches, a.get_id().as_str())
        }) {
            return Err(Error::Other(format!(
                "--{} is a flag of the {} sweep without --vary, --seeds or --plan; in the \
                 generic sweep give parameters as --set key=value or --vary key=v1,v2,...",
                arg.get_long().unwrap_or(arg.get_id().as_str()),
                kind.name
            )));
        }
    }
    if args.vary.is_empty() && args.seeds.is_none() {
        return Err(Error::Other(format!(
            "sweep {} needs --vary key=v1,v2,... (or --seeds N); `beliefscope run {} --help` \
             lists the parameters",
            kind.name, kind.name
        )));
    }
    let base = base_config(kind, &args.output)?;
    let points = spec::points(&args.vary, args.zip)?;
    sweep(kind, &base, &points, args.seeds, &args)
}

/// The scenario's defaults with every `--set` applied.
pub fn base_config(kind: &Kind, output: &OutputArgs) -> Result<ScenarioConfig> {
    output.apply_budget();
    if output.json {
        return Err(Error::Other(
            "--json prints one run; a sweep writes DIR/summary.csv".into(),
        ));
    }
    output
        .set
        .iter()
        .try_fold((kind.default_config)(), |c, text| {
            let (key, value) = crate::scenarios::params::split_assignment(text)?;
            spec::assign(&c, key, value)
        })
}

/// Plans `points` x `seeds` on `base` into `--out`, then runs what is not complete and
/// collects (or, with `--plan`, stops after writing the plan).
pub fn sweep(
    kind: &Kind,
    base: &ScenarioConfig,
    points: &Points,
    seeds: Option<usize>,
    args: &SweepArgs,
) -> Result<()> {
    let jobs = args.jobs()?;
    let out = args.out()?;
    let runs = spec::runs(base, points, kind.seed_keys, seeds)?;
    let dir: PathBuf = plan::absolute_dir(out)?;
    let max_memory = args.output.max_memory;
    plan::write_plan(
        &dir,
        kind.name,
        &points.keys,
        kind.seed_keys,
        &runs,
        max_memory,
        jobs,
    )?;
    if args.plan {
        eprintln!(
            "planned {} runs in {}: jobs.txt (one `beliefscope run` line each), slurm.sh \
             (sbatch), parallel.sh (GNU parallel); then `beliefscope collect {}`",
            runs.len(),
            dir.display(),
            dir.display()
        );
        return Ok(());
    }
    let outcome = execute::execute(&dir, &runs, jobs, max_memory)?;
    collect(&dir)?;
    if !outcome.failed.is_empty() {
        return Err(Error::Other(format!(
            "{} of {} runs failed ({}); their logs are runs/<id>/log.txt, and a re-run retries \
             only them",
            outcome.failed.len(),
            runs.len(),
            outcome.failed.join(", ")
        )));
    }
    Ok(())
}
