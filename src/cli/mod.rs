//! The command line: no arguments opens the window (see `main.rs`); `list` prints what exists;
//! `run <scenario>` runs headless, shows progress on stderr and writes results; `sweep` and
//! `collect` are the many-run forms (`scenarios::sweep`). It never opens a
//! window. Every failure is one line on stderr and a non-zero exit code.

mod progress;
mod scenario_commands;

use clap::{Parser, Subcommand};

use crate::error::{Error, Result};
use crate::io::results::{results_json, write_results};
use crate::run::budget::{budget, format_bytes};
use crate::run::time_need::format_seconds;
use crate::scenarios::tree::cli::{DatasetArgs, run_dataset};
use crate::scenarios::{CancelFlag, OutputArgs, RunResults, ScenarioConfig, catalogue};
use progress::Progress;
pub use scenario_commands::{
    RunGroup, ScenarioCommand, SweepGroup, TuneGroup, config_from_json, read_config_file,
};

#[derive(Debug, Parser)]
#[command(
    name = "beliefscope",
    version,
    about = "Explore nonparametric message passing. Without a subcommand, opens the explorer window."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print the scenarios and the algorithms each can run.
    List,
    /// Run a scenario headless and write its results; `run --config FILE` re-runs a saved run
    /// (a results.json or a scenario config).
    #[command(subcommand_required = false, arg_required_else_help = true)]
    Run {
        #[command(subcommand)]
        scenario: ScenarioCommand<RunGroup>,
    },
    /// Run a scenario over lists of settings (--vary key=v1,v2,...), resumably and in parallel,
    /// or plan the runs for GNU parallel or Slurm (--plan); one row per run in summary.csv.
    Sweep {
        #[command(subcommand)]
        scenario: ScenarioCommand<SweepGroup>,
    },
    /// Choose parameters by validation on the training data and print the surface.
    Tune {
        #[command(subcommand)]
        scenario: ScenarioCommand<TuneGroup>,
    },
    /// Write a built-in dataset as CSV (the examples under assets/ are made this way).
    Dataset(DatasetArgs),
    /// Merge the finished runs of a sweep folder (run here, by GNU parallel or by Slurm) into
    /// its summary.csv and figures, and say how many are missing.
    Collect {
        /// The folder `sweep ... --out DIR` (or `--plan`) wrote.
        #[arg(value_name = "DIR")]
        dir: std::path::PathBuf,
    },
}

/// Runs a parsed command; the caller turns an error into one line and exit code 1.
pub fn execute(command: Command) -> Result<()> {
    match command {
        Command::List => {
            for (name, about, algorithms) in catalogue() {
                println!("{name:10} {about}");
                println!("{:10} algorithms: {}", "", algorithms.join(", "));
            }
            Ok(())
        }
        Command::Dataset(args) => run_dataset(args),
        Command::Collect { dir } => crate::scenarios::sweep::collect(&dir).map(|_| ()),
        Command::Run { scenario } => {
            let (config, output) = scenario.run_config()?;
            run_headless(config, &output)
        }
        Command::Sweep { scenario } => scenario.run_verb(),
        Command::Tune { scenario } => scenario.run_verb(),
    }
}

/// A deliberate engine panic for the tests of fault isolation: `BELIEFSCOPE_FAULT=setup` or
/// `BELIEFSCOPE_FAULT=step:N` (0 stands for the set-up).
fn injected_fault() -> Option<usize> {
    let text = std::env::var("BELIEFSCOPE_FAULT").ok()?;
    match text.trim() {
        "setup" => Some(0),
        t => t.strip_prefix("step:")?.parse().ok(),
    }
}

/// Runs engine code, turning a panic into an error naming the stage (so the CLI exits with one
/// line and code 1, and outputs already written stay as they are).
fn guarded<T>(stage: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let message = crate::error::panic_message(payload.as_ref());
            Err(Error::Other(format!(
                "the engine panicked while {stage}: {message}"
            )))
        }
    }
}

/// Builds the scenario, iterates until it finishes with a progress line per iteration on stderr,
/// then writes what `output` asks for. On a terminal a spinner shows the set-up's elapsed time
/// and a bar the iterations (ticking on its own, so a long step never looks hung); otherwise
/// every stage is one line.
pub fn run_headless(config: ScenarioConfig, output: &OutputArgs) -> Result<()> {
    if let Some(dir) = &output.out {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::Io(format!("cannot create {}: {e}", dir.display())))?;
    }
    let time = config.time_need();
    // The ETA counts the estimate's usual iterations where a stopping rule decides, then the limit.
    let progress = Progress::new(time, config.max_iters());
    let memory = config.memory_need().map(|need| {
        format!(
            "estimated peak memory {} of a budget of {}",
            format_bytes(need.total()),
            format_bytes(budget())
        )
    });
    let estimates: Vec<String> = memory
        .into_iter()
        .chain(time.map(|t| format!("estimated time {}", t.describe())))
        .collect();
    // Shown with the set-up (off a terminal once it lasts a second: a quick failure stays
    // one line) and again, for the iterations, in the line that ends it.
    let estimates = match estimates.is_empty() {
        true => String::new(),
        false => format!(" ({})", estimates.join("; ")),
    };
    progress.setup(&format!("{}: setting up", config.name()), &estimates);
    let fault = injected_fault();
    let mut scenario = guarded("setting up", || {
        if fault == Some(0) {
            panic!("injected fault during set-up");
        }
        config.build(&CancelFlag::default())
    })?;
    let iterations_estimate = time
        .filter(|t| t.iterations > 0)
        .map(|t| {
            let up_to = if t.may_stop_early { "about " } else { "" };
            let plural = if t.iterations == 1 { "" } else { "s" };
            format!(
                "; estimated {up_to}{} for {} iteration{plural} ({} each)",
                format_seconds(t.per_iteration * t.iterations as f64),
                t.iterations,
                format_seconds(t.per_iteration)
            )
        })
        .unwrap_or_default();
    progress.done_stage(&format!(
        "{}: {} set up in {:.3} s{iterations_estimate}",
        config.name(),
        scenario.algorithm(),
        scenario.setup_seconds()
    ));
    for w in scenario.warnings() {
        progress.line(&format!("warning: {w}"));
    }
    progress.iterations(config.max_iters());
    while !scenario.finished() {
        let next = scenario.history().len() + 1;
        let r = guarded("iterating", || {
            if fault == Some(next) {
                panic!("injected fault in iteration {next}");
            }
            scenario.step()
        })?;
        let metrics: Vec<String> = r
            .metrics
            .iter()
            .map(|(k, v)| format!("{k} {v:.4}"))
            .collect();
        progress.iteration(
            r.iter,
            r.seconds,
            &format!(
                "iter {:4}  residual {:.3e}  {:.4} s  {}",
                r.iter,
                r.residual,
                r.seconds,
                metrics.join("  ")
            ),
        );
    }
    progress.finish();
    for line in scenario.ending() {
        eprintln!("{}: {line}", config.name());
    }
    let mut results = RunResults::from_scenario(scenario.as_ref());
    results.extra.insert(
        "estimates".into(),
        estimates_record(&config, time, scenario.as_ref()),
    );
    if let Some(dir) = &output.out {
        progress.stage(&format!("writing outputs to {}", dir.display()));
        scenario.write_outputs(dir)?;
        progress.finish();
        write_results(dir, &results)?;
        eprintln!("wrote results to {}", dir.display());
    }
    if output.json {
        println!("{}", results_json(&results));
    }
    let finals: Vec<String> = results
        .final_results
        .metrics
        .iter()
        // Counts (an iteration number) as integers, measurements to 4 decimals.
        .map(|(k, v)| match v.fract() == 0.0 && v.abs() < 1e15 {
            true => format!("{k} {v}"),
            false => format!("{k} {v:.4}"),
        })
        .collect();
    eprintln!("final: {}", finals.join("  "));
    Ok(())
}

/// The estimates a run started with beside what it measured: `memory.estimated_bytes` and
/// `memory.peak_rss_bytes` (this process's high-water mark so far, Linux), `time.estimated_seconds`
/// and `time.measured_seconds` (set-up plus iterations). Tests hold the estimates to the
/// measurements with this record.
fn estimates_record(
    config: &ScenarioConfig,
    time: Option<crate::run::time_need::TimeNeed>,
    scenario: &dyn crate::scenarios::Scenario,
) -> serde_json::Value {
    let measured: f64 =
        scenario.setup_seconds() + scenario.history().iter().map(|r| r.seconds).sum::<f64>();
    // The estimate for the iterations that ran (a stopping rule may end a run early).
    let ran = scenario.history().len();
    let need = config.memory_need();
    serde_json::json!({
        "memory": {
            "estimated_bytes": need.as_ref().map(|n| n.total()),
            "estimated_parts": need.as_ref().map(|n| {
                n.parts()
                    .iter()
                    .chain(n.setup_parts())
                    .map(|(what, bytes)| (what.clone(), serde_json::json!(bytes.round())))
                    .collect::<serde_json::Map<_, _>>()
            }),
            "peak_rss_bytes": crate::run::budget::peak_rss(),
        },
        "time": {
            "estimated_seconds": time.map(|t| t.total()),
            "estimated_seconds_for_iterations_run": time.map(|t| t.setup + t.per_iteration * ran as f64),
            "measured_seconds": measured,
            "machine_factor": crate::run::time_need::machine_factor(),
        },
    })
}
