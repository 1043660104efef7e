//! Predictive BP (Wang & Gordon 2020) on our stand-in for the synthetic model of its Fig. 4:
//! learning from N = 1e5 samples (distinct configurations counted, then the regressions)
//! against EM with its exact E-step (one restart to convergence; the scenario runs 10), and one
//! evidence change answered (one PBP pass; the window also answers exact and the EM models;
//! target ≤ 20 ms).

use criterion::Criterion;

use beliefscope::inference::pbp::em::{EmSettings, em, random_start};
use beliefscope::inference::pbp::features::TrainingData;
use beliefscope::inference::pbp::{PbpModel, PbpSettings};
use beliefscope::model::latent_dag::{BayesNet, synthetic_stand_in};
use beliefscope::scenarios::pbp::experiment::{Problem, Stream, stream};

pub fn benches(c: &mut Criterion) {
    let truth = BayesNet::random(
        synthetic_stand_in(false),
        1.0,
        &mut stream(1, Stream::Truth),
    )
    .expect("stand-in");
    let id = |n: &str| truth.dag.index_of(n).expect("stand-in node");
    let (d, g, h, e) = (id("D"), id("G"), id("H"), id("E"));
    let problem = Problem::new(truth, 100_000, 1, d, vec![g, h, e]).expect("problem");
    let dag = problem.truth.dag.clone();
    let settings = PbpSettings::default();
    let mut group = c.benchmark_group("pbp");
    group.bench_function("learn N=1e5", |b| {
        b.iter(|| {
            let data = TrainingData::from_samples(&problem.samples);
            PbpModel::learn(&dag, &data, &settings).expect("learn")
        })
    });
    let distinct = problem.samples.distinct();
    let init = random_start(&dag, &mut stream(1, Stream::Em)).expect("start");
    group.bench_function("em one restart N=1e5", |b| {
        b.iter(|| em(&init, &distinct, &EmSettings::default(), None).expect("em"))
    });
    let data = TrainingData::from_samples(&problem.samples);
    let model = PbpModel::learn(&dag, &data, &settings).expect("learn");
    let mut ev = vec![None; dag.len()];
    ev[g] = Some(1);
    ev[h] = Some(0);
    group.bench_function("evidence change (one query)", |b| {
        b.iter(|| model.query(&ev, d).expect("query"))
    });
    group.finish();
}
