//! Exp. 3 of Jitkrittum et al. 2015 (main Figs. 5, 6): one true weight vector, then a sequence
//! of logistic-regression problems, each a fresh data set `x_i ~ N(0, I_d)`,
//! `y_i ~ Bernoulli(σ(wᵀx_i))`, solved by EP three times: with the quadrature projection, with
//! the importance sampler on every call, and with KJIT (one operator kept across problems).
//! The classification error is the disagreement with the true w's decision rule on fresh
//! `x ~ N(0, I)`, as in the authors' `funcs_logistic_online.m::plot01Loss` (Fig. 6a's
//! "classification error" is not the error against sampled labels).
//!
//! Cost per problem: EP sweeps × n calls per operator (quadrature O(nodes), sampling O(M), KJIT
//! O(D_in D_out + D_out²) or O(M) on oracle calls) plus O(test_points · d) for the errors.

use std::sync::Arc;
use std::time::Instant;

use nalgebra::{DMatrix, DVector};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use serde::Serialize;

use super::config::KjitConfig;
use crate::error::Result;
use crate::inference::kjit::messages::sigmoid;
use crate::inference::kjit::{
    ImportanceOracle, JitSettings, KjitOperator, LogisticEp, QuadratureProjection, SamplingOperator,
};

/// The random streams of a run, one per purpose, all keyed by the config's seed.
#[derive(Debug, Clone, Copy)]
pub enum Stream {
    TrueWeights,
    Particles,
    Features,
    Data(usize),
    TestPoints(usize),
}

/// A generator for `purpose`: `ChaCha8Rng::seed_from_u64(seed)` on its own stream.
pub fn stream(seed: u64, purpose: Stream) -> ChaCha8Rng {
    let id = match purpose {
        Stream::TrueWeights => 1,
        Stream::Particles => 2,
        Stream::Features => 3,
        Stream::Data(k) => 1_000 + 2 * k as u64,
        Stream::TestPoints(k) => 1_001 + 2 * k as u64,
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(id);
    rng
}

/// A seed drawn from `purpose`'s stream (for engines that take a seed).
pub fn stream_seed(seed: u64, purpose: Stream) -> u64 {
    stream(seed, purpose).next_u64()
}

fn gaussian_matrix(rng: &mut ChaCha8Rng, rows: usize, cols: usize) -> DMatrix<f64> {
    // Row by row, so the draws do not depend on the storage order.
    let mut m = DMatrix::zeros(rows, cols);
    for i in 0..rows {
        for j in 0..cols {
            m[(i, j)] = rng.sample(StandardNormal);
        }
    }
    m
}

/// One problem's data.
#[derive(Debug, Clone)]
pub struct Problem {
    /// n × d.
    pub x: DMatrix<f64>,
    pub y: Vec<bool>,
}

/// The true weights `w ~ N(0, I_d)`.
pub fn true_weights(config: &KjitConfig) -> DVector<f64> {
    let mut rng = stream(config.seed, Stream::TrueWeights);
    DVector::from_fn(config.dim, |_, _| rng.sample(StandardNormal))
}

/// Problem `k` (0-based): `x ~ N(0, I)`, `y ~ Bernoulli(σ(wᵀx))`.
pub fn problem(config: &KjitConfig, w: &DVector<f64>, k: usize) -> Problem {
    let mut rng = stream(config.seed, Stream::Data(k));
    let x = gaussian_matrix(&mut rng, config.examples, config.dim);
    let y = (0..config.examples)
        .map(|i| rng.random::<f64>() < sigmoid(x.row(i).transpose().dot(w)))
        .collect();
    Problem { x, y }
}

/// Disagreement of `sign(meanᵀx)` with `sign(wᵀx)` on the rows of `test`.
pub fn classification_error(test: &DMatrix<f64>, w: &DVector<f64>, mean: &DVector<f64>) -> f64 {
    let truth = test * w;
    let guess = test * mean;
    let wrong = truth
        .iter()
        .zip(guess.iter())
        .filter(|(t, g)| (**t > 0.0) != (**g > 0.0))
        .count();
    wrong as f64 / test.nrows() as f64
}

/// One operator's result on one problem.
#[derive(Debug, Clone, Serialize)]
pub struct OperatorRun {
    pub error: f64,
    pub seconds: f64,
    pub skipped: usize,
    pub mean: Vec<f64>,
    /// Row-major d × d.
    pub cov: Vec<f64>,
}

/// How a posterior mean is scored (a classification error in [0, 1]).
pub type Scorer<'a> = &'a (dyn Fn(&DVector<f64>) -> f64 + Sync);

fn finish(ep: &LogisticEp, score: Scorer, seconds: f64) -> OperatorRun {
    OperatorRun {
        error: score(ep.posterior_mean()),
        seconds,
        skipped: ep.skipped_total,
        mean: ep.posterior_mean().iter().copied().collect(),
        cov: ep.posterior_cov().transpose().iter().copied().collect(),
    }
}

/// The three operators of a run; KJIT and the particles persist across problems.
pub struct Operators {
    pub quadrature: QuadratureProjection,
    pub oracle: Arc<ImportanceOracle>,
    pub kjit: KjitOperator,
}

impl Operators {
    pub fn new(config: &KjitConfig) -> Result<Operators> {
        Operators::with_settings(
            config,
            config.jit_settings(stream_seed(config.seed, Stream::Features)),
        )
    }

    /// The operators with KJIT's own settings (Exp. 5 uses the code's, not Exp. 3's).
    pub fn with_settings(config: &KjitConfig, settings: JitSettings) -> Result<Operators> {
        let oracle = Arc::new(ImportanceOracle::new(
            config.particles,
            stream_seed(config.seed, Stream::Particles),
        )?);
        let kjit = KjitOperator::new(oracle.clone(), settings)?;
        Ok(Operators {
            quadrature: QuadratureProjection::new(config.quadrature_nodes)?,
            oracle,
            kjit,
        })
    }
}

/// What problem k produced.
#[derive(Debug, Clone)]
pub struct ProblemRun {
    pub problem: Problem,
    pub kjit: OperatorRun,
    pub quadrature: OperatorRun,
    pub sampling: Option<OperatorRun>,
    /// KJIT's calls and z-direction oracle calls in this problem.
    pub calls: usize,
    pub oracle_calls: usize,
    /// The trace index where this problem's calls start.
    pub first_call: usize,
}

/// Runs problem `k` with all operators (KJIT beside the two baselines, on two threads).
pub fn run_problem(
    config: &KjitConfig,
    w: &DVector<f64>,
    ops: &mut Operators,
    k: usize,
) -> Result<ProblemRun> {
    let data = problem(config, w, k);
    let test = gaussian_matrix(
        &mut stream(config.seed, Stream::TestPoints(k)),
        config.test_points,
        config.dim,
    );
    let score = |mean: &DVector<f64>| classification_error(&test, w, mean);
    solve(config, data, ops, &score)
}

/// Solves one data set with all operators (KJIT on one thread, quadrature-EP then
/// sampling-EP on the other) and scores each posterior mean with `score`.
pub fn solve(
    config: &KjitConfig,
    data: Problem,
    ops: &mut Operators,
    score: Scorer,
) -> Result<ProblemRun> {
    let before = ops.kjit.counters;
    let first_call = ops.kjit.trace.len();
    let Operators {
        quadrature,
        oracle,
        kjit,
    } = ops;
    let run_kjit = || -> Result<OperatorRun> {
        let start = Instant::now();
        let mut ep = LogisticEp::new(data.x.clone(), data.y.clone(), config.damping)?;
        ep.run(kjit, config.ep_iterations)?;
        Ok(finish(&ep, score, start.elapsed().as_secs_f64()))
    };
    let run_baselines = || -> Result<(OperatorRun, Option<OperatorRun>)> {
        let start = Instant::now();
        let mut ep = LogisticEp::new(data.x.clone(), data.y.clone(), config.damping)?;
        ep.run(&mut quadrature.clone(), config.ep_iterations)?;
        let quad = finish(&ep, score, start.elapsed().as_secs_f64());
        let sampling = if config.run_sampling {
            let start = Instant::now();
            let mut ep = LogisticEp::new(data.x.clone(), data.y.clone(), config.damping)?;
            let mut op = SamplingOperator::new(oracle.clone());
            ep.run(&mut op, config.ep_iterations)?;
            Some(finish(&ep, score, start.elapsed().as_secs_f64()))
        } else {
            None
        };
        Ok((quad, sampling))
    };
    let (kjit_run, baselines) = rayon::join(run_kjit, run_baselines);
    let kjit_run = kjit_run?;
    let (quadrature_run, sampling_run) = baselines?;
    let after = ops.kjit.counters;
    Ok(ProblemRun {
        problem: data,
        kjit: kjit_run,
        quadrature: quadrature_run,
        sampling: sampling_run,
        calls: after.calls - before.calls,
        oracle_calls: after.oracle_calls_z - before.oracle_calls_z,
        first_call,
    })
}
