//! KJIT (Jitkrittum et al. 2015): one learned message at D_in = 300, D_out = 500 (features of
//! the incoming tuple, the regression's prediction and its variance, the division by the
//! incoming message; target ≤ 100 µs) against one importance-sampling oracle call with 5e5
//! particles (target ≥ 100× slower), windowed as the engine runs it and over every particle
//! (on all threads and on one).

use criterion::Criterion;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use beliefscope::inference::kjit::operator::tuple_input;
use beliefscope::inference::kjit::{
    Beta, Gaussian, ImportanceOracle, JitLearner, JitSettings, LogisticTuple, QuadratureProjection,
};

fn tuple(rng: &mut ChaCha8Rng) -> LogisticTuple {
    LogisticTuple {
        z: Gaussian::new(rng.random_range(-4.0..4.0), rng.random_range(0.2..3.0)),
        p: Beta::from_label(rng.random::<f64>() < 0.5),
    }
}

pub fn benches(c: &mut Criterion) {
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
    let mut learner = JitLearner::new(settings, 2).unwrap();
    let quad = QuadratureProjection::new(200).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for _ in 0..300 {
        let t = tuple(&mut rng);
        let q = quad.project(&t).z;
        learner
            .teach(&tuple_input(&t), None, Some(&[q.mean, q.var.ln()]))
            .unwrap();
    }
    let probe = LogisticTuple {
        z: Gaussian::new(1.0, 0.5),
        p: Beta::from_label(true),
    };
    let input = tuple_input(&probe);
    let mut group = c.benchmark_group("kjit_message");
    group.bench_function("kjit_din300_dout500", |b| {
        b.iter(|| {
            let (out, log_var, _) = learner.predict(&input).unwrap().unwrap();
            let q = Gaussian::new(out[0], out[1].exp());
            (q.divide(&probe.z), log_var)
        })
    });
    let oracle = ImportanceOracle::new(500_000, 2).unwrap();
    group.sample_size(10);
    group.bench_function("oracle_5e5_windowed", |b| {
        b.iter(|| oracle.estimate(&probe).unwrap())
    });
    group.bench_function("oracle_5e5_every_particle", |b| {
        b.iter(|| oracle.estimate_full(&probe).unwrap())
    });
    // One thread, as the paper's timings (and as the KJIT message runs).
    let single = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    group.bench_function("oracle_5e5_every_particle_1_thread", |b| {
        b.iter(|| single.install(|| oracle.estimate_full(&probe).unwrap()))
    });
    group.finish();
}
