//! The speed guard: times the headline steps of every engine, each as a ratio to a reference
//! computation measured in the same process (a fixed f64 matrix product), and compares the
//! ratios with the committed baseline `.ci/speed-baseline.json`. Exits with status 1 when a
//! step got more than `--slower` (default 2) times slower relative to the reference, so a
//! speed regression fails CI even though the machine's own speed varies.
//!
//! ```text
//! cargo run --release --example speed_guard              # check against the baseline
//! cargo run --release --example speed_guard -- --update  # write the baseline (say why in the commit)
//! cargo run --release --example speed_guard -- --only discrete   # steps whose name contains it
//! ```
//!
//! A step is timed the way results.json reports it: a scenario run at its defaults (plus the
//! overrides named in the table) to its own end, and the median of its per-iteration seconds,
//! or the wall time of the whole run; the median over repeats of that. Cost: about two minutes.
//!
//! Steps bound partly by memory bandwidth ([`MEMORY_BOUND`]: the tree scenario's solves stream
//! Cholesky factors far larger than the caches, between arithmetic on them) are divided instead
//! by the geometric mean of the matrix product and a streaming read of
//! [`MEMORY_REFERENCE_VALUES`] doubles. Against either alone such a step read 1.6-1.9x with its
//! code unchanged: against the product on a machine with slower memory, against the read on
//! one with memory three times faster. `--update --only NAME` rewrites only those steps.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use nalgebra::DMatrix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use beliefscope::inference::kjit::operator::tuple_input;
use beliefscope::inference::kjit::{
    Beta, Gaussian, JitLearner, JitSettings, LogisticTuple, QuadratureProjection,
};
use beliefscope::scenarios::tree::{BuiltinData, TreeConfig, TreeScenario};
use beliefscope::scenarios::{CancelFlag, ScenarioConfig, registry};

/// Side of the reference product (n x n times n x n, f64): long enough to time reliably, small
/// enough to stay in cache like the engines' own kernels.
const REFERENCE_SIDE: usize = 256;

/// Repeats of the sub-second whole runs: their wall time moves with every burst of the machine's
/// other work (the flow runs read 1.07-1.41x the baseline run alone and 1.83x in CI right after
/// the test suite, code unchanged), and a median of seven rides out a burst of two runs.
const WHOLE_RUN_REPEATS: usize = 7;

/// Steps timed against the geometric mean of both references (see the module doc).
const MEMORY_BOUND: &[&str] = &["tree_evidence_update"];

/// Doubles read by the memory reference: 96 MB, three times the largest last-level cache of
/// the machines this runs on, so every pass comes from memory.
const MEMORY_REFERENCE_VALUES: usize = 12 << 20;

/// What a step reports: the median seconds of one iteration, or of the whole run.
#[derive(Clone, Copy)]
enum Measure {
    MedianIteration,
    WholeRun,
}

/// A scenario run at its defaults plus `overrides` (`key=value` as `--set` takes them).
struct RunStep {
    name: &'static str,
    what: &'static str,
    scenario: &'static str,
    overrides: &'static [(&'static str, &'static str)],
    measure: Measure,
    repeats: usize,
}

const RUN_STEPS: &[RunStep] = &[
    RunStep {
        name: "discrete_c50_iteration",
        what: "discrete BP (tree-reweighted), built-in 100x100, C=50, one iteration",
        scenario: "denoise",
        overrides: &[("algorithm", "discrete")],
        measure: Measure::MedianIteration,
        repeats: 3,
    },
    RunStep {
        name: "discrete_c10_iteration",
        what: "discrete BP (tree-reweighted), built-in 100x100, C=10, one iteration",
        scenario: "denoise",
        overrides: &[("algorithm", "discrete"), ("colors", "10")],
        measure: Measure::MedianIteration,
        repeats: 3,
    },
    RunStep {
        name: "kbp_constant_c100_iteration",
        what: "kernel BP, constant update, built-in 100x100, C=100, one iteration",
        scenario: "denoise",
        overrides: &[("colors", "100")],
        measure: Measure::MedianIteration,
        repeats: 3,
    },
    RunStep {
        name: "kbp_512_iteration",
        what: "kernel BP at the defaults, built-in 512x512, one iteration",
        scenario: "denoise",
        overrides: &[("width", "512"), ("height", "512")],
        measure: Measure::MedianIteration,
        repeats: 1,
    },
    RunStep {
        name: "flow_sosmp_run",
        what: "flow, SOSMP at the defaults (built-in 128x128 pair, pyramid), whole run",
        scenario: "flow",
        overrides: &[],
        measure: Measure::WholeRun,
        repeats: WHOLE_RUN_REPEATS,
    },
    RunStep {
        name: "flow_discrete_run",
        what: "flow, discrete BP at the defaults (built-in 128x128 pair, pyramid), whole run",
        scenario: "flow",
        overrides: &[("algorithm", "discrete")],
        measure: Measure::WholeRun,
        repeats: WHOLE_RUN_REPEATS,
    },
    RunStep {
        name: "sosmp_default_run",
        what: "SOSMP at the defaults (100-node chain, 10 paths x 1000 iterations), whole run",
        scenario: "sosmp",
        overrides: &[],
        measure: Measure::WholeRun,
        repeats: 1,
    },
];

/// The reference computation a step's seconds are divided by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Reference {
    /// The f64 matrix product.
    #[default]
    MatrixProduct,
    /// The geometric mean of the matrix product and the streaming read.
    MatrixProductAndMemory,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Timing {
    what: String,
    seconds: f64,
    /// `seconds` over the reference's seconds, measured in the same process.
    ratio: f64,
    #[serde(default, skip_serializing_if = "is_matrix_product")]
    reference: Reference,
}

fn is_matrix_product(r: &Reference) -> bool {
    *r == Reference::MatrixProduct
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Baseline {
    reference: String,
    reference_seconds: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    memory_reference: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    memory_reference_seconds: Option<f64>,
    steps: BTreeMap<String, Timing>,
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Median seconds of one `REFERENCE_SIDE`-square f64 matrix product.
fn reference_seconds() -> f64 {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let n = REFERENCE_SIDE;
    let a = DMatrix::<f64>::from_fn(n, n, |_, _| rng.random_range(-1.0..1.0));
    let b = DMatrix::<f64>::from_fn(n, n, |_, _| rng.random_range(-1.0..1.0));
    let mut c = DMatrix::<f64>::zeros(n, n);
    let samples = (0..31)
        .map(|_| {
            let start = Instant::now();
            c.gemm(1.0, &a, &b, 0.0);
            std::hint::black_box(&c);
            start.elapsed().as_secs_f64()
        })
        .collect();
    median(samples)
}

/// Median seconds of one pass summing [`MEMORY_REFERENCE_VALUES`] doubles (four sums, so the
/// additions never wait on each other and the pass waits only on memory).
fn memory_reference_seconds() -> f64 {
    let values: Vec<f64> = (0..MEMORY_REFERENCE_VALUES)
        .map(|i| (i % 97) as f64)
        .collect();
    let samples = (0..15)
        .map(|_| {
            let start = Instant::now();
            let mut sums = [0.0f64; 4];
            for quad in values.chunks_exact(4) {
                for (s, v) in sums.iter_mut().zip(quad) {
                    *s += v;
                }
            }
            std::hint::black_box(sums);
            start.elapsed().as_secs_f64()
        })
        .collect();
    median(samples)
}

fn run_config(step: &RunStep) -> Result<ScenarioConfig, String> {
    let kind = registry::kind(step.scenario).ok_or(format!("no scenario '{}'", step.scenario))?;
    let mut config = (kind.default_config)();
    for (key, value) in step.overrides {
        config = config.set(key, value).map_err(|e| e.to_string())?;
    }
    Ok(config)
}

/// One run of the step to its own end: what it reports, in seconds.
fn run_once(step: &RunStep, config: &ScenarioConfig) -> Result<f64, String> {
    let cancel = CancelFlag::default();
    let start = Instant::now();
    let mut scenario = config.build(&cancel).map_err(|e| e.to_string())?;
    let mut iterations = Vec::new();
    while !scenario.finished() {
        iterations.push(scenario.step().map_err(|e| e.to_string())?.seconds);
    }
    match step.measure {
        Measure::WholeRun => Ok(start.elapsed().as_secs_f64()),
        Measure::MedianIteration if iterations.is_empty() => {
            Err(format!("{}: the run ended without an iteration", step.name))
        }
        Measure::MedianIteration => Ok(median(iterations)),
    }
}

fn time_run_step(step: &RunStep) -> Result<f64, String> {
    let config = run_config(step)?;
    let samples = (0..step.repeats)
        .map(|_| run_once(step, &config))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(median(samples))
}

/// One learned KJIT message (D_in = 300, D_out = 500, the defaults): features of the incoming
/// tuple, the regression's prediction, the division by the incoming message.
fn time_kjit_message() -> Result<f64, String> {
    let settings = JitSettings {
        minibatch: 300,
        tau: -8.5,
        d_in: 300,
        d_out: 500,
        median_factor: 0.5,
        weight_var: 1.0,
        noise_var: 1e-4,
        seed: 5,
    };
    let mut learner = JitLearner::new(settings, 2).map_err(|e| e.to_string())?;
    let quadrature = QuadratureProjection::new(200).map_err(|e| e.to_string())?;
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for _ in 0..300 {
        let tuple = LogisticTuple {
            z: Gaussian::new(rng.random_range(-4.0..4.0), rng.random_range(0.2..3.0)),
            p: Beta::from_label(rng.random::<f64>() < 0.5),
        };
        let q = quadrature.project(&tuple).z;
        learner
            .teach(&tuple_input(&tuple), None, Some(&[q.mean, q.var.ln()]))
            .map_err(|e| e.to_string())?;
    }
    let probe = LogisticTuple {
        z: Gaussian::new(1.0, 0.5),
        p: Beta::from_label(true),
    };
    let input = tuple_input(&probe);
    // Batches of 100 messages: one message is tens of microseconds, below a clean timing.
    let batches = (0..41)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..100 {
                let (out, _, _) = learner
                    .predict(&input)
                    .ok()
                    .flatten()
                    .ok_or("no prediction")?;
                std::hint::black_box(Gaussian::new(out[0], out[1].exp()).divide(&probe.z));
            }
            Ok(start.elapsed().as_secs_f64() / 100.0)
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(median(batches))
}

/// One slider move in the tree scenario at its defaults (non-Gaussian chain, every row an edge
/// sample): every belief recomputed.
fn time_tree_evidence_update() -> Result<f64, String> {
    let cancel = CancelFlag::default();
    let config = TreeConfig::builtin(BuiltinData::NongaussChain);
    let mut scenario = TreeScenario::new(config, &cancel).map_err(|e| e.to_string())?;
    scenario.run_all().map_err(|e| e.to_string())?;
    let samples = (0..21)
        .map(|i| {
            let value = if i % 2 == 0 { -0.1 } else { 0.1 };
            let start = Instant::now();
            scenario
                .set_evidence(1, Some(vec![value]))
                .map_err(|e| e.to_string())?;
            Ok(start.elapsed().as_secs_f64())
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(median(samples))
}

struct Options {
    update: bool,
    only: Option<String>,
    slower: f64,
    baseline: PathBuf,
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        update: false,
        only: None,
        slower: 2.0,
        baseline: PathBuf::from(".ci/speed-baseline.json"),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |flag: &str| args.next().ok_or(format!("{flag} needs a value"));
        match arg.as_str() {
            "--update" => options.update = true,
            "--only" => options.only = Some(value("--only")?),
            "--slower" => {
                options.slower = value("--slower")?
                    .parse()
                    .map_err(|e| format!("--slower: {e}"))?
            }
            "--baseline" => options.baseline = PathBuf::from(value("--baseline")?),
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    Ok(options)
}

fn measure(options: &Options) -> Result<Baseline, String> {
    let wanted = |name: &str| options.only.as_deref().is_none_or(|o| name.contains(o));
    let reference = reference_seconds();
    // A 96 MB read, only when a memory-bound step runs.
    let memory = MEMORY_BOUND
        .iter()
        .any(|name| wanted(name))
        .then(memory_reference_seconds);
    let mut steps = BTreeMap::new();
    let mut record = |name: &str, what: &str, seconds: f64| {
        eprintln!("  {name}: {:.3} ms", seconds * 1e3);
        let (kind, by) = match memory.filter(|_| MEMORY_BOUND.contains(&name)) {
            Some(memory) => (
                Reference::MatrixProductAndMemory,
                (reference * memory).sqrt(),
            ),
            None => (Reference::MatrixProduct, reference),
        };
        steps.insert(
            name.to_string(),
            Timing {
                what: what.to_string(),
                seconds,
                ratio: seconds / by,
                reference: kind,
            },
        );
    };
    for step in RUN_STEPS.iter().filter(|s| wanted(s.name)) {
        record(step.name, step.what, time_run_step(step)?);
    }
    if wanted("kjit_message") {
        let what = "KJIT learned message, D_in=300, D_out=500";
        record("kjit_message", what, time_kjit_message()?);
    }
    if wanted("tree_evidence_update") {
        let what = "tree kernel BP, one evidence change at the defaults (all beliefs)";
        record("tree_evidence_update", what, time_tree_evidence_update()?);
    }
    Ok(Baseline {
        reference: format!("f64 matrix product {REFERENCE_SIDE}^3 (nalgebra gemm), median"),
        reference_seconds: reference,
        memory_reference: memory.map(|_| {
            format!(
                "a sum over {} MB of f64, median",
                (MEMORY_REFERENCE_VALUES * 8) >> 20
            )
        }),
        memory_reference_seconds: memory,
        steps,
    })
}

fn main() -> ExitCode {
    // As the command line and the window do, so that the steps are timed as they run there.
    beliefscope::run::allocator::keep_freed_memory();
    let options = match options() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let now = match measure(&options) {
        Ok(now) => now,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let read_baseline = || -> Result<Baseline, String> {
        std::fs::read_to_string(&options.baseline)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
    };
    if options.update {
        // With --only, the other steps keep their baseline.
        let written = match (&options.only, read_baseline()) {
            (Some(_), Ok(mut old)) => {
                if now.memory_reference_seconds.is_some() {
                    old.memory_reference = now.memory_reference;
                    old.memory_reference_seconds = now.memory_reference_seconds;
                }
                old.steps.extend(now.steps);
                old
            }
            _ => now,
        };
        let text = serde_json::to_string_pretty(&written).expect("plain data serialises");
        if let Err(e) = std::fs::write(&options.baseline, text + "\n") {
            eprintln!("error: cannot write {}: {e}", options.baseline.display());
            return ExitCode::from(2);
        }
        println!("wrote {}", options.baseline.display());
        return ExitCode::SUCCESS;
    }
    let baseline = match read_baseline() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: baseline {}: {e}", options.baseline.display());
            return ExitCode::from(2);
        }
    };
    println!(
        "reference ({}): {:.3} ms now, {:.3} ms in the baseline",
        now.reference,
        now.reference_seconds * 1e3,
        baseline.reference_seconds * 1e3
    );
    if let (Some(now_s), Some(base_s)) = (
        now.memory_reference_seconds,
        baseline.memory_reference_seconds,
    ) {
        println!(
            "memory reference ({}): {:.3} ms now, {:.3} ms in the baseline",
            now.memory_reference.as_deref().unwrap_or("?"),
            now_s * 1e3,
            base_s * 1e3
        );
    }
    println!(
        "{:<30} {:>12} {:>12} {:>10} {:>10} {:>8}",
        "step", "baseline ms", "now ms", "base ratio", "now ratio", "slower"
    );
    let mut failed = Vec::new();
    for (name, timing) in &now.steps {
        let Some(base) = baseline.steps.get(name) else {
            println!("{name:<30} (not in the baseline: add it with --update)");
            continue;
        };
        if base.reference != timing.reference {
            println!(
                "{name:<30} (its reference changed: update its baseline with --update --only)"
            );
            failed.push(format!("{name} (reference changed)"));
            continue;
        }
        let slower = timing.ratio / base.ratio;
        let flag = if slower > options.slower {
            "  FAIL"
        } else {
            ""
        };
        println!(
            "{name:<30} {:>12.3} {:>12.3} {:>10.4} {:>10.4} {:>7.2}x{flag}",
            base.seconds * 1e3,
            timing.seconds * 1e3,
            base.ratio,
            timing.ratio,
            slower
        );
        if slower > options.slower {
            failed.push(format!("{name} ({})", timing.what));
        }
    }
    if failed.is_empty() {
        println!(
            "every step within {}x of the baseline (relative to the reference)",
            options.slower
        );
        ExitCode::SUCCESS
    } else {
        println!(
            "more than {}x slower than the baseline: {}",
            options.slower,
            failed.join(", ")
        );
        ExitCode::FAILURE
    }
}
