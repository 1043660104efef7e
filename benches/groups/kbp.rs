//! Constant-time kernel BP (Song et al. 2011, Sec. 5.3) on the sunset: one synchronous
//! iteration at 100 x 100 for C in {10, 100, 250} (flat in C is the claim; target >= 100
//! iterations per second at C = 100), the set-up at C = 100 (target < 1 s), one iteration
//! at 512 x 512 (target >= 5 per second), and one iteration at 1 megapixel (1024 x 1024,
//! C = 50) with the synchronous schedule and with the wavefront sweep a photograph runs.

use criterion::{BenchmarkId, Criterion};

use beliefscope::inference::Schedule;
use beliefscope::scenarios::CancelFlag;
use beliefscope::scenarios::denoise::schedule_choice::ScheduleChoice;
use beliefscope::scenarios::denoise::{DenoiseConfig, DenoiseData, build_run};

fn config(size: usize, colors: usize) -> DenoiseConfig {
    DenoiseConfig {
        width: size,
        height: size,
        colors,
        ..DenoiseConfig::default()
    }
}

pub fn benches(c: &mut Criterion) {
    let cancel = CancelFlag::default();
    let mut group = c.benchmark_group("kbp_constant_iteration_100x100");
    for colors in [10usize, 100, 250] {
        let cfg = config(100, colors);
        let data = DenoiseData::generate(&cfg).unwrap();
        let mut run = build_run(cfg.primary(), &data, &cfg, &cancel).unwrap();
        group.bench_with_input(BenchmarkId::from_parameter(colors), &colors, |b, _| {
            b.iter(|| run.engine_mut().step().unwrap())
        });
    }
    group.finish();

    let mut group = c.benchmark_group("kbp_constant_setup_100x100");
    group.sample_size(10);
    let cfg = config(100, 100);
    let data = DenoiseData::generate(&cfg).unwrap();
    group.bench_function("100", |b| {
        b.iter(|| build_run(cfg.primary(), &data, &cfg, &cancel).unwrap())
    });
    group.finish();

    let mut group = c.benchmark_group("kbp_constant_iteration_512x512");
    group.sample_size(10);
    let cfg = config(512, 100);
    let data = DenoiseData::generate(&cfg).unwrap();
    let mut run = build_run(cfg.primary(), &data, &cfg, &cancel).unwrap();
    group.bench_function("100", |b| b.iter(|| run.engine_mut().step().unwrap()));
    group.finish();

    let mut group = c.benchmark_group("kbp_constant_iteration_1mp");
    group.sample_size(10);
    for schedule in [Schedule::Synchronous, Schedule::Sweep] {
        let cfg = DenoiseConfig {
            schedule: ScheduleChoice::Fixed(schedule),
            ..config(1024, 50)
        };
        let data = DenoiseData::generate(&cfg).unwrap();
        let mut run = build_run(cfg.primary(), &data, &cfg, &cancel).unwrap();
        group.bench_function(schedule.label(), |b| {
            b.iter(|| run.engine_mut().step().unwrap())
        });
    }
    group.finish();
}
