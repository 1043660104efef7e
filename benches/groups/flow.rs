//! Optical flow: one synchronous iteration on the 128 x 128 built-in pair at the default model
//! (d = 2 px at 1/2 px: 81 labels, sigma_u 5, sigma_uv 0.5, 1 px pre-smoothing, one level):
//! SOSMP with r = 9 and r = 49 (k = 3), discrete BP, and SOSMP's mean read-out. Target: at least
//! 10 SOSMP iterations a second at r = 9 (read-out included).

use std::sync::Arc;

use criterion::Criterion;

use beliefscope::inference::flow_bp::FlowBp;
use beliefscope::inference::sosmp::Sosmp;
use beliefscope::inference::sosmp::flow::{flow_problem, uniform_start};
use beliefscope::inference::{EstimateKind, Inference};
use beliefscope::model::flow::{FlowEvidence, FlowMrf, downsample2, gaussian_blur};
use beliefscope::scenarios::CancelFlag;
use beliefscope::scenarios::flow::FlowConfig;
use beliefscope::scenarios::flow::synthetic::synthetic_pair;

pub fn benches(c: &mut Criterion) {
    let config = FlowConfig::default();
    let (f1, f2, _) = synthetic_pair(128, 128, 0);
    let (f1, f2) = (
        gaussian_blur(&f1, config.presmooth),
        gaussian_blur(&f2, config.presmooth),
    );
    let evidence =
        FlowEvidence::new(&f1, &f2, config.labels().unwrap(), config.sigma_data, None).unwrap();
    let mrf = Arc::new(FlowMrf::new(evidence, config.sigma_smooth).unwrap());
    let mut group = c.benchmark_group("flow_iteration_128x128");
    for side in [3usize, 7] {
        let problem = Arc::new(flow_problem(&mrf, side, &CancelFlag::default()).unwrap());
        let start = uniform_start(&problem);
        let mut engine = Sosmp::with_start(problem, config.sosmp_params(), &start).unwrap();
        for _ in 0..5 {
            engine.step().unwrap();
        }
        group.bench_function(format!("sosmp_r{}_k3", side * side), |b| {
            b.iter(|| engine.step().unwrap())
        });
        if side == 3 {
            group.bench_function("sosmp_r9_mean_readout", |b| {
                b.iter(|| engine.estimates(EstimateKind::Mean))
            });
        }
    }
    let mut bp = FlowBp::new(mrf.clone(), 0.0).unwrap();
    bp.step().unwrap();
    group.bench_function("discrete_81_labels", |b| b.iter(|| bp.step().unwrap()));
    group.finish();
    per_level(c);
}

/// One iteration of each engine at every level of the default pyramid on a 584 x 388 built-in
/// pair (RubberWhale's size; 4 levels from 584 x 388 to 73 x 49), zero base flow, each level
/// with its own window (49 labels at the finest, 81 at the others). Target (issue 16): a
/// default RubberWhale run within 5 s per engine, i.e. the sum over levels of (iteration +
/// read-out) times the iterations each level runs (40, or fewer where the level stop ends it:
/// `iterations` per level in results.json) below 5 s.
fn per_level(c: &mut Criterion) {
    let config = FlowConfig::default();
    let (mut f1, mut f2, _) = synthetic_pair(584, 388, 0);
    let levels = config.levels_for(584, 388);
    let mut group = c.benchmark_group("flow_level_584x388");
    group.sample_size(10);
    for level in 0..levels {
        let (w, h) = (f1.width, f1.height);
        let labels = config.labels_at(level, levels).unwrap();
        let evidence = FlowEvidence::new(&f1, &f2, labels, config.sigma_data, None).unwrap();
        let mrf = Arc::new(FlowMrf::new(evidence, config.sigma_smooth).unwrap());
        let n = labels.len();
        {
            let problem = Arc::new(flow_problem(&mrf, 3, &CancelFlag::default()).unwrap());
            let start = uniform_start(&problem);
            let mut engine = Sosmp::with_start(problem, config.sosmp_params(), &start).unwrap();
            engine.set_max_step(1.0).unwrap();
            engine.step().unwrap();
            group.bench_function(format!("L{level}_{w}x{h}_{n}labels_sosmp_step"), |b| {
                b.iter(|| engine.step().unwrap())
            });
            group.bench_function(format!("L{level}_{w}x{h}_{n}labels_sosmp_readout"), |b| {
                b.iter(|| engine.estimates(EstimateKind::Mean))
            });
        }
        {
            let mut bp = FlowBp::new(mrf.clone(), config.damping).unwrap();
            bp.step().unwrap();
            group.bench_function(format!("L{level}_{w}x{h}_{n}labels_discrete_step"), |b| {
                b.iter(|| bp.step().unwrap())
            });
            group.bench_function(
                format!("L{level}_{w}x{h}_{n}labels_discrete_readout"),
                |b| b.iter(|| bp.estimates(EstimateKind::Mean)),
            );
        }
        f1 = downsample2(&f1);
        f2 = downsample2(&f2);
    }
    group.finish();
}
