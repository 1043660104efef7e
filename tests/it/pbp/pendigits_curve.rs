//! The pendigits accuracy curve of `sweep pbp --model pendigits` (Wang & Gordon 2020, Sec. 6,
//! Fig. 7): its plan of sizes and seeds, its summary over seeds, the figure it writes, and the
//! curve on synthetic digits (ten classes of noisy pen paths in the pendigits file format).

use std::fmt::Write as _;
use std::path::Path;

use beliefscope::scenarios::pbp::pendigits::{
    AccuracyPoint, DEFAULT_SEEDS, DEFAULT_SIZES, PendigitsArgs, plan, run,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

use crate::cli_common::{beliefscope, stderr};

#[test]
fn pendigits_curve_plan_covers_the_grid_and_every_seed() {
    assert_eq!(DEFAULT_SIZES, [50, 100, 200, 500, 1000, 2000, 5000, 7000]);
    assert!((3..=5).contains(&DEFAULT_SEEDS));
    let p = plan(&DEFAULT_SIZES, DEFAULT_SEEDS, 1);
    assert_eq!(p.len(), DEFAULT_SIZES.len() * DEFAULT_SEEDS);
    for n in DEFAULT_SIZES {
        let seeds: Vec<u64> = p.iter().filter(|x| x.0 == n).map(|x| x.1).collect();
        assert_eq!(
            seeds,
            (1..=DEFAULT_SEEDS as u64).collect::<Vec<_>>(),
            "size {n}"
        );
    }
}

#[test]
fn pendigits_accuracy_point_summarises_the_seeds() {
    let a = AccuracyPoint::of(100, &[(0.8, 1.0), (0.9, 3.0), (0.7, 2.0)]);
    assert!((a.mean - 0.8).abs() < 1e-12);
    assert!((a.sd - 0.1).abs() < 1e-12, "sample s.d. {}", a.sd);
    assert_eq!((a.min, a.max), (0.7, 0.9));
    assert!((a.learn_seconds_mean - 2.0).abs() < 1e-12);
    assert_eq!(a.per_seed, vec![0.8, 0.9, 0.7]);
}

#[test]
fn pendigits_sweep_refuses_zero_seeds() {
    let o = beliefscope(&["sweep", "pbp", "--model", "pendigits", "--seeds", "0"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("seed"), "{}", stderr(&o));
}

/// Ten classes, each a noisy copy of its own 8-point pen path in [0, 100]², in the UCI file
/// format (16 coordinates and the class per line).
pub(super) fn write_synthetic_digits(dir: &Path, train: usize, test: usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let noise = Normal::new(0.0, 9.0).unwrap();
    let template = |c: usize, t: usize| -> [f64; 2] {
        let phase = c as f64 * 0.63;
        let turn = 0.5 + 0.15 * c as f64;
        let a = phase + turn * t as f64;
        [
            50.0 + 38.0 * a.cos(),
            50.0 + 38.0 * (a * (1.0 + 0.1 * c as f64)).sin(),
        ]
    };
    let mut file = |rows: usize| -> String {
        let mut out = String::new();
        for _ in 0..rows {
            let c = rng.random_range(0..10);
            for t in 0..8 {
                let p = template(c, t);
                for v in p {
                    let x = (v + noise.sample(&mut rng)).clamp(0.0, 100.0).round();
                    let _ = write!(out, "{x},");
                }
            }
            let _ = writeln!(out, "{c}");
        }
        out
    };
    let (tra, tes) = (file(train), file(test));
    std::fs::write(dir.join("pendigits.tra"), tra).unwrap();
    std::fs::write(dir.join("pendigits.tes"), tes).unwrap();
}

/// On synthetic digits the curve runs every size with every seed, writes its JSON, CSV and
/// figure, classifies well above chance, and PBP's mean accuracy does not fall as N grows
/// (within 0.02).
#[test]
fn pendigits_curve_on_synthetic_digits_rises_and_writes_its_figure() {
    let data = tempfile::tempdir().unwrap();
    write_synthetic_digits(data.path(), 7494, 400);
    let out = tempfile::tempdir().unwrap();
    run(PendigitsArgs {
        sizes: vec![2000, 50, 500],
        states: 4,
        sigma: 10.0,
        dim: 24,
        lambda: 0.1,
        seeds: 2,
        first_seed: 1,
        restarts: 1,
        data: Some(data.path().to_path_buf()),
        out: Some(out.path().to_path_buf()),
    })
    .unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("pendigits.json")).unwrap())
            .unwrap();
    let curve = |key: &str| -> Vec<(u64, f64, usize)> {
        json[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["n"].as_u64().unwrap(),
                    p["mean"].as_f64().unwrap(),
                    p["per_seed"].as_array().unwrap().len(),
                )
            })
            .collect()
    };
    let (pbp, em) = (curve("pbp"), curve("em_hmm"));
    eprintln!("synthetic digits: PBP {pbp:?}, EM-HMM {em:?}");
    for c in [&pbp, &em] {
        assert_eq!(
            c.iter().map(|p| p.0).collect::<Vec<_>>(),
            vec![50, 500, 2000]
        );
        assert!(c.iter().all(|p| p.2 == 2));
    }
    for w in pbp.windows(2) {
        assert!(
            w[1].1 >= w[0].1 - 0.02,
            "PBP accuracy fell from {:?} to {:?}",
            w[0],
            w[1]
        );
    }
    assert!(pbp[2].1 > 0.5, "PBP accuracy at N = 2000: {}", pbp[2].1);
    let csv = std::fs::read_to_string(out.path().join("pendigits.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 3 * 2);
    let png = std::fs::read(out.path().join("pendigits.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
}

/// The window's job: progress after each (size, seed) fit up to the plan's length, a cancel
/// raised mid-way stops it with `Cancelled`, and the pendigits.json it would write reads back
/// equal (a file with an accuracy outside [0, 1] or without the EM-HMM curve is refused).
#[test]
fn pendigits_curve_task_reports_progress_cancels_and_reads_back() {
    use beliefscope::error::Error;
    use beliefscope::run::CancelFlag;
    use beliefscope::scenarios::ScenarioTask as _;
    use beliefscope::scenarios::pbp::PbpConfig;
    use beliefscope::scenarios::pbp::curve_task::{CurveTask, read_curve};
    use std::sync::Mutex;

    let data = tempfile::tempdir().unwrap();
    write_synthetic_digits(data.path(), 7494, 200);
    let mut task = CurveTask::for_config(&PbpConfig {
        model: "pendigits".into(),
        states: 3,
        em_restarts: 1,
        lambda1: 0.1,
        data_dir: data.path().display().to_string(),
        ..PbpConfig::default()
    });
    assert_eq!(task.args.sizes, DEFAULT_SIZES.to_vec());
    assert_eq!(task.args.seeds, DEFAULT_SEEDS);
    assert_eq!(task.args.data.as_deref(), Some(data.path()));
    task.args.sizes = vec![100, 50];
    task.args.seeds = 2;

    let seen = Mutex::new(Vec::new());
    let report = task
        .run(&CancelFlag::default(), &|d, t| {
            seen.lock().unwrap().push((d, t))
        })
        .unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        vec![(0, 4), (1, 4), (2, 4), (3, 4), (4, 4)]
    );
    assert_eq!(report.sizes, vec![50, 100]);
    assert_eq!(report.pbp.len(), 2);
    assert_eq!(report.em_hmm[1].per_seed.len(), 2);

    let cancel = CancelFlag::default();
    let fits = Mutex::new(0);
    let stopped = task.run(&cancel, &|d, _| {
        *fits.lock().unwrap() = d;
        if d == 1 {
            cancel.cancel();
        }
    });
    assert!(matches!(stopped, Err(Error::Cancelled)), "{stopped:?}");
    assert_eq!(*fits.lock().unwrap(), 1, "no fit after the cancel");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pendigits.json");
    std::fs::write(&path, serde_json::to_string_pretty(&report).unwrap()).unwrap();
    // serde_json's default float parsing may differ in the last bit.
    let back = read_curve(&path).unwrap();
    assert_eq!((&back.sizes, &back.seeds), (&report.sizes, &report.seeds));
    for (a, b) in back
        .pbp
        .iter()
        .chain(&back.em_hmm)
        .zip(report.pbp.iter().chain(&report.em_hmm))
    {
        assert_eq!(a.n, b.n);
        assert_eq!(a.per_seed.len(), b.per_seed.len());
        for (x, y) in [a.mean, a.min, a.max]
            .iter()
            .chain(&a.per_seed)
            .zip([b.mean, b.min, b.max].iter().chain(&b.per_seed))
        {
            assert!((x - y).abs() < 1e-12, "{x} vs {y}");
        }
    }

    let mut bad = serde_json::to_value(&report).unwrap();
    bad["pbp"][0]["per_seed"][1] = serde_json::json!(1.5);
    std::fs::write(&path, bad.to_string()).unwrap();
    let e = read_curve(&path).unwrap_err().to_string();
    assert!(e.contains("outside [0, 1]") && e.contains("N = 50"), "{e}");

    let mut bad = serde_json::to_value(&report).unwrap();
    bad.as_object_mut().unwrap().remove("em_hmm");
    std::fs::write(&path, bad.to_string()).unwrap();
    let e = read_curve(&path).unwrap_err().to_string();
    assert!(
        e.contains("not a pendigits.json") && e.contains("em_hmm"),
        "{e}"
    );
}

mod shared_data {
    use super::*;

    /// The real curve at two sizes and two seeds: PBP gains with N and ends well above chance.
    #[test]
    #[ignore = "needs ../shared/data"]
    fn shared_data_pendigits_curve_gains_with_n() {
        let out = tempfile::tempdir().unwrap();
        run(PendigitsArgs {
            sizes: vec![100, 2000],
            states: 6,
            sigma: 10.0,
            dim: 24,
            lambda: 0.1,
            seeds: 2,
            first_seed: 1,
            restarts: 2,
            data: None,
            out: Some(out.path().to_path_buf()),
        })
        .unwrap();
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(out.path().join("pendigits.json")).unwrap(),
        )
        .unwrap();
        let mean = |i: usize| json["pbp"][i]["mean"].as_f64().unwrap();
        assert!(
            mean(1) > mean(0) && mean(1) > 0.9,
            "{} → {}",
            mean(0),
            mean(1)
        );
    }
}
