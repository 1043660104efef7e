//! The command line: no arguments opens the window (see `main.rs`); `list` prints what exists;
//! `run <scenario>` runs headless, shows progress on stderr and writes results. It never opens a
//! window. Every failure is one line on stderr and a non-zero exit code.

pub mod denoise;
pub mod flow;
pub mod retrieval;
pub mod sosmp;
pub mod sweep;
pub mod tree;
pub mod tune;

use std::io::Write as _;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::error::{Error, Result};
use crate::io::results::{results_json, write_results};
use crate::scenarios::{CancelFlag, RunResults, ScenarioConfig, catalogue};

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
    /// Run a scenario headless and write its results.
    Run {
        #[command(subcommand)]
        scenario: RunScenario,
    },
    /// Run a scenario over lists of settings and write CSV tables.
    Sweep {
        #[command(subcommand)]
        scenario: SweepScenario,
    },
    /// Choose parameters by validation on the training data and print the surface.
    Tune {
        #[command(subcommand)]
        scenario: TuneScenario,
    },
    /// Write a built-in dataset as CSV (the examples under assets/ are made this way).
    Dataset(tree::DatasetArgs),
}

#[derive(Debug, Subcommand)]
pub enum SweepScenario {
    /// SOSMP error curves over r (--coefficients 2,3,5,10), k (--samples 1,2,5,10) or alpha
    /// (--alpha 0.1,1).
    Sosmp(sosmp::SosmpSweepArgs),
    /// RMSE and seconds per iteration of denoising over C, algorithms, updates and epsilon.
    Denoise(sweep::DenoiseSweepArgs),
    /// Errors of tree kernel BP against the reference over samples per edge, lambda and the
    /// bandwidth multiplier (built-in datasets).
    Tree(Box<tree::TreeSweepArgs>),
}

#[derive(Debug, Subcommand)]
pub enum TuneScenario {
    /// Grid search of kernel-BP lambda x bandwidth multiplier on a held-out noisy copy of the
    /// training image.
    Denoise(tune::DenoiseTuneArgs),
}

#[derive(Debug, Subcommand)]
pub enum RunScenario {
    /// Image denoising on a grid MRF (the sunset of Song et al. 2011, or --image).
    Denoise(denoise::DenoiseArgs),
    /// Tree kernel BP on a dataset (Song et al. 2010): beliefs of the query nodes given the
    /// evidence, against Gaussian BP and (built-ins) the exact or fine-grid reference.
    Tree(tree::TreeArgs),
    /// recall@k of kernel BP, Gaussian BP and chained nearest neighbours retrieving chain tails
    /// (Song et al. 2010, Sec. 6.1 protocol on synthetic data); writes recall.csv.
    Retrieval(retrieval::RetrievalArgs),
    /// Stochastic orthogonal-series message passing (Noorshams & Wainwright 2013): error
    /// against iterations, the 1/t slope and the floor.
    Sosmp(sosmp::SosmpArgs),
    /// Optical flow on two frames with 2-D SOSMP or discrete BP (Noorshams & Wainwright 2013,
    /// Sec. 5.2): flow.flo, flow.png, legend.png, EPE and AAE against --gt.
    Flow(flow::FlowArgs),
}

/// Where results go; shared by every `run` subcommand.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// Write results.json, images and CSVs into this folder (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print results.json to stdout.
    #[arg(long)]
    pub json: bool,
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
        Command::Sweep { scenario } => match scenario {
            SweepScenario::Denoise(args) => sweep::run(args),
            SweepScenario::Tree(args) => tree::run_sweep(*args),
            SweepScenario::Sosmp(args) => args.execute(),
        },
        Command::Dataset(args) => tree::run_dataset(args),
        Command::Tune { scenario } => match scenario {
            TuneScenario::Denoise(args) => tune::run(args),
        },
        Command::Run { scenario } => match scenario {
            RunScenario::Denoise(args) => {
                let output = args.output.clone();
                run_headless(ScenarioConfig::Denoise(args.into_config()?), &output)
            }
            RunScenario::Tree(args) => {
                let output = args.output.clone();
                run_headless(ScenarioConfig::Tree(args.into_config()?), &output)
            }
            RunScenario::Retrieval(args) => {
                let output = args.output.clone();
                run_headless(ScenarioConfig::Retrieval(args.into_config()?), &output)
            }
            RunScenario::Sosmp(args) => {
                let output = args.output.clone();
                run_headless(ScenarioConfig::Sosmp(args.into_config()?), &output)
            }
            RunScenario::Flow(args) => {
                let output = args.output.clone();
                run_headless(ScenarioConfig::Flow(args.into_config()?), &output)
            }
        },
    }
}

/// Builds the scenario, iterates until it finishes with a progress line per iteration on stderr,
/// then writes what `output` asks for.
pub fn run_headless(config: ScenarioConfig, output: &OutputArgs) -> Result<()> {
    if let Some(dir) = &output.out {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::Io(format!("cannot create {}: {e}", dir.display())))?;
    }
    let mut scenario = config.build(&CancelFlag::default())?;
    eprintln!(
        "{}: {} set up in {:.3} s",
        config.name(),
        scenario.algorithm(),
        scenario.setup_seconds()
    );
    for w in scenario.warnings() {
        eprintln!("warning: {w}");
    }
    let stderr = std::io::stderr();
    while !scenario.finished() {
        let r = scenario.step()?;
        let metrics: Vec<String> = r
            .metrics
            .iter()
            .map(|(k, v)| format!("{k} {v:.4}"))
            .collect();
        let _ = writeln!(
            stderr.lock(),
            "iter {:4}  residual {:.3e}  {:.4} s  {}",
            r.iter,
            r.residual,
            r.seconds,
            metrics.join("  ")
        );
    }
    let results = RunResults::from_scenario(scenario.as_ref());
    if let Some(dir) = &output.out {
        scenario.write_outputs(dir)?;
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
        .map(|(k, v)| format!("{k} {v:.4}"))
        .collect();
    eprintln!("final: {}", finals.join("  "));
    Ok(())
}
