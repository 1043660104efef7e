//! The denoise scenario: the sunset generator follows the ring formula of Song et al. 2011, and
//! discrete BP with the true likelihood denoises it far below the noisy RMSE.

use beliefscope::inference::Schedule;
use beliefscope::run::IterationRecord;
use beliefscope::scenarios::denoise::sunset::{gray_levels, sunset_indices};
use beliefscope::scenarios::denoise::sure_stop::{SureProbes, SureRule};
use beliefscope::scenarios::denoise::{Denoise, DenoiseAlgorithm, DenoiseConfig};
use beliefscope::scenarios::{CancelFlag, Scenario};

#[test]
fn sunset_follows_the_ring_formula() {
    // Written out independently of the generator: rows y < h/2 are rings around the centre.
    for &(w, h, c) in &[(100usize, 100usize, 50usize), (37, 20, 7), (64, 48, 250)] {
        let idx = sunset_indices(w, h, c);
        let (cx, cy) = ((w as f64 - 1.0) / 2.0, (h as f64 - 1.0) / 2.0);
        let r = (w.min(h) as f64) / 2.0;
        for y in 0..h {
            for x in 0..w {
                let want = if y < h / 2 {
                    let d = ((x as f64 - cx).hypot(y as f64 - cy) / r).min(1.0);
                    (d * (c - 1) as f64).floor() as usize
                } else {
                    0
                };
                assert_eq!(idx[y * w + x], want, "{w}x{h} C={c} at ({x}, {y})");
            }
        }
        // The top corner is outside the radius: the last level; the bottom half is level 0.
        assert_eq!(idx[0], c - 1);
        assert_eq!(idx[(h - 1) * w], 0);
    }
    let levels = gray_levels(50);
    assert!((levels[1] - 255.0 / 49.0).abs() < 1e-12);
}

#[test]
fn noise_is_seeded_and_unclipped() {
    let make = |seed| {
        let config = DenoiseConfig {
            seed,
            ..DenoiseConfig::default()
        };
        Denoise::new(config, &CancelFlag::default()).unwrap()
    };
    let a = make(1);
    let b = make(1);
    let c = make(2);
    assert_eq!(a.noisy_rmse(), b.noisy_rmse());
    assert_ne!(a.noisy_rmse(), c.noisy_rmse());
    // sigma = 30: the sample RMSE of 10,000 draws is within a few percent of 30.
    assert!((a.noisy_rmse() - 30.0).abs() < 1.5, "{}", a.noisy_rmse());
}

#[test]
fn discrete_bp_denoises_the_sunset() {
    let config = DenoiseConfig {
        algorithm: DenoiseAlgorithm::Discrete,
        colors: 10,
        noise: 30.0,
        max_iters: 30,
        tolerance: 0.0,
        sure_stop: false,
        ..DenoiseConfig::default()
    };
    let mut d = Denoise::new(config, &CancelFlag::default()).unwrap();
    // Before any message arrives the estimate is the per-pixel MAP (prior x true likelihood).
    let per_pixel = d.rmse() / d.noisy_rmse();
    while !d.finished() {
        d.step().unwrap();
    }
    assert_eq!(d.history().len(), 30);
    let ratio = d.rmse() / d.noisy_rmse();
    eprintln!("per-pixel MAP ratio {per_pixel:.3}, BP ratio {ratio:.3}");
    // Measured: per-pixel 0.80, BP 0.22. A BP that ignored its neighbours stays near the
    // per-pixel ratio, so 0.35 catches a broken BP with a wide margin for seeds.
    assert!(per_pixel > 0.5, "per-pixel MAP ratio {per_pixel}");
    assert!(
        ratio < 0.35,
        "rmse {} vs noisy {} (ratio {ratio})",
        d.rmse(),
        d.noisy_rmse()
    );
}

#[test]
fn bad_parameters_are_clear_errors() {
    let cases = [
        (
            DenoiseConfig {
                colors: 1,
                ..Default::default()
            },
            "colors",
        ),
        (
            DenoiseConfig {
                noise: 0.0,
                ..Default::default()
            },
            "noise",
        ),
        (
            DenoiseConfig {
                noise: f64::NAN,
                ..Default::default()
            },
            "noise",
        ),
        (
            DenoiseConfig {
                damping: 1.0,
                ..Default::default()
            },
            "damping",
        ),
        (
            DenoiseConfig {
                width: 0,
                ..Default::default()
            },
            "width",
        ),
        (
            DenoiseConfig {
                max_iters: 0,
                ..Default::default()
            },
            "max_iters",
        ),
    ];
    for (config, name) in cases {
        let err = Denoise::new(config, &CancelFlag::default())
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains(name),
            "expected an error naming {name}, got: {err}"
        );
    }
}

/// A `w` x `h` PNG of shaded blocks (distinct from the sunset).
fn blocks_png(path: &std::path::Path, w: u32, h: u32, phase: u32) {
    image::GrayImage::from_fn(w, h, |x, y| {
        let base = if ((x + phase) / 8 + y / 8).is_multiple_of(2) {
            30
        } else {
            170
        };
        image::Luma([(base + (x % 8) * 5 + (y % 8) * 4) as u8])
    })
    .save(path)
    .unwrap();
}

#[test]
fn a_loaded_image_is_never_its_own_training_image_unless_asked() {
    use beliefscope::scenarios::denoise::BuiltinTraining;
    use beliefscope::scenarios::denoise::DenoiseData;
    use beliefscope::scenarios::denoise::config::{DEAD_LEAVES_DRAWS, DEAD_LEAVES_SEED_OFFSET};
    use beliefscope::scenarios::denoise::data::draw_seed;
    use beliefscope::scenarios::denoise::dead_leaves::{DeadLeavesParams, Shading, dead_leaves};
    use beliefscope::scenarios::denoise::sunset::{nearest_level, sunset_indices};
    let dir = tempfile::tempdir().unwrap();
    let (test, train) = (dir.path().join("test.png"), dir.path().join("train.png"));
    blocks_png(&test, 40, 32, 0);
    blocks_png(&train, 24, 20, 3);
    let base = DenoiseConfig {
        image: Some(test.clone()),
        colors: 16,
        ..DenoiseConfig::default()
    };
    let levels = gray_levels(16);
    // (The paper's templates, without the gray-level shifts a loaded image gets by default.)
    let paper = |c: &DenoiseConfig| DenoiseConfig {
        template_shifts: Some(Vec::new()),
        ..c.clone()
    };
    // Default: DEAD_LEAVES_DRAWS independent dead-leaves images of the test image's size, side
    // by side, on the C levels.
    let on_leaves = base.clone();
    assert_eq!(on_leaves.train_builtin, BuiltinTraining::DeadLeaves);
    let data = DenoiseData::generate(&on_leaves).unwrap();
    let params = DeadLeavesParams::standard(40, 32, Shading::Flat);
    let draws: Vec<Vec<f64>> = (0..DEAD_LEAVES_DRAWS)
        .map(|j| dead_leaves(40, 32, &params, draw_seed(DEAD_LEAVES_SEED_OFFSET, j)).values)
        .collect();
    let leaves: Vec<f64> = (0..32)
        .flat_map(|row| {
            draws
                .iter()
                .flat_map(move |d| d[row * 40..(row + 1) * 40].to_vec())
        })
        .map(|v| levels[nearest_level(&levels, v)])
        .collect();
    assert_ne!(draws[0], draws[1], "the draws are independent");
    assert_eq!(
        (data.train.width, data.train.height),
        (40 * DEAD_LEAVES_DRAWS, 32)
    );
    assert_eq!(data.train.clean, leaves);
    assert_ne!(Some(&data.train.clean), data.clean.as_ref());
    assert_eq!(data.kbp_templates(&paper(&on_leaves)).hidden, leaves);
    assert!(
        data.train
            .source
            .contains("dead leaves, 4 draws of 40 x 32"),
        "{}",
        data.train.source
    );
    // Asked for: the built-in sunset of the test image's size.
    let on_sunset = DenoiseConfig {
        train_builtin: BuiltinTraining::Sunset,
        ..base.clone()
    };
    let data = DenoiseData::generate(&on_sunset).unwrap();
    let sunset: Vec<f64> = sunset_indices(40, 32, 16)
        .iter()
        .map(|&i| levels[i])
        .collect();
    assert_eq!(data.train.clean, sunset);
    let t = data.kbp_templates(&paper(&on_sunset));
    assert_eq!(t.hidden, sunset, "kernel BP learns from the sunset");
    assert!(
        data.train.source.contains("sunset"),
        "{}",
        data.train.source
    );
    // A chosen training image.
    let chosen = DenoiseConfig {
        train_image: Some(train.clone()),
        ..base.clone()
    };
    let data = DenoiseData::generate(&chosen).unwrap();
    assert_eq!((data.train.width, data.train.height), (24, 20));
    assert_eq!(data.kbp_templates(&paper(&chosen)).hidden.len(), 24 * 20);
    // The oracle, only when asked.
    let oracle = DenoiseConfig {
        oracle: true,
        ..base.clone()
    };
    let data = DenoiseData::generate(&oracle).unwrap();
    assert_eq!(Some(&data.train.clean), data.clean.as_ref());
    assert!(data.train.source.starts_with("oracle"));
    // The discrete model follows the training image too: oracle and default differ.
    let run = |c: DenoiseConfig| {
        let mut d = Denoise::new(
            DenoiseConfig {
                algorithm: DenoiseAlgorithm::Discrete,
                max_iters: 3,
                ..c
            },
            &CancelFlag::default(),
        )
        .unwrap();
        while !d.finished() {
            d.step().unwrap();
        }
        d.rmse()
    };
    assert_ne!(run(base.clone()), run(oracle));
    // Both at once is refused with a message naming the choice.
    let both = DenoiseConfig {
        oracle: true,
        train_image: Some(train),
        ..base
    };
    let err = Denoise::new(both, &CancelFlag::default()).err().unwrap();
    assert!(err.to_string().contains("training"), "{err}");
}

#[test]
fn baselines_are_reported_and_the_blur_sigma_by_sure_is_near_the_best() {
    use beliefscope::scenarios::denoise::DenoiseData;
    use beliefscope::scenarios::denoise::baselines::{blur_by_sure, gaussian_blur};
    let config = DenoiseConfig {
        max_iters: 1,
        ..DenoiseConfig::default()
    };
    let d = Denoise::new(config.clone(), &CancelFlag::default()).unwrap();
    let m = d.final_metrics();
    let noisy = m["noisy_rmse"];
    assert!(m["baseline_rmse_tv"] < 0.5 * noisy, "{m:?}");
    assert!(m["baseline_rmse_blur"] < 0.7 * noisy, "{m:?}");
    // SURE never sees the clean image; its sigma must still be close to the best one.
    let data = DenoiseData::generate(&config).unwrap();
    let (w, h) = (data.width, data.height);
    let (sigma, blurred) =
        blur_by_sure(&data.noisy, w, h, config.noise, &CancelFlag::default()).unwrap();
    let chosen = beliefscope::scenarios::denoise::rmse(&blurred, data.clean.as_ref().unwrap());
    let best = (1..=50)
        .map(|k| {
            let b = gaussian_blur(&data.noisy, w, h, 0.1 * k as f64);
            beliefscope::scenarios::denoise::rmse(&b, data.clean.as_ref().unwrap())
        })
        .fold(f64::INFINITY, f64::min);
    assert!(
        chosen <= 1.05 * best,
        "SURE sigma {sigma}: {chosen} against best {best}"
    );
}

#[test]
fn the_discrepancy_rule_stops_each_method_when_it_reaches_the_noise_level() {
    let mut d = Denoise::new(
        DenoiseConfig {
            max_iters: 60,
            compare: Some("discrete".parse().unwrap()),
            discrepancy_stop: true,
            sure_stop: false,
            // The rule's mechanics, on the settings whose iterates reach the noise level: the
            // posterior mean of tree-reweighted discrete BP stays closer to the noisy image
            // than sigma for 60 iterations, so the rule never fires on the default.
            edge_appearance: 1.0,
            estimate: beliefscope::inference::EstimateKind::Map,
            ..DenoiseConfig::default()
        },
        &CancelFlag::default(),
    )
    .unwrap();
    let mut records = Vec::new();
    while !d.finished() {
        records.push(d.step().unwrap());
    }
    assert!(records.len() < 60, "it never stopped");
    // The primary stops at the first iterate at or past the noise sigma (30).
    let first = records
        .iter()
        .position(|r| r.metrics["rms_to_noisy"] >= 30.0)
        .expect("the primary reached the noise level");
    let last = records.len() - 1;
    assert!(first <= last);
    let frozen = records[first].metrics["rmse"];
    for r in &records[first..] {
        assert_eq!(
            r.metrics["rmse"], frozen,
            "the stopped estimate must not change"
        );
    }
    assert!(
        records[..first]
            .iter()
            .all(|r| r.metrics["rms_to_noisy"] < 30.0)
    );
    assert_eq!(d.final_metrics()["rmse"], frozen);
}

/// Final and best RMSE and the residuals of one algorithm run to its iteration cap.
/// A run to its own end: the scenario, and its RMSE and residual per iteration.
fn run_to_end(config: DenoiseConfig) -> (Denoise, Vec<f64>, Vec<f64>) {
    let mut d = Denoise::new(config, &CancelFlag::default()).unwrap();
    let (mut rmse, mut residuals) = (Vec::new(), Vec::new());
    while !d.finished() {
        let r = d.step().unwrap();
        rmse.push(r.metrics["rmse"]);
        residuals.push(r.residual);
    }
    (d, rmse, residuals)
}

fn final_best_residuals(config: DenoiseConfig) -> (f64, f64, Vec<f64>) {
    let (_, rmse, residuals) = run_to_end(config);
    let best = rmse.iter().copied().fold(f64::INFINITY, f64::min);
    (*rmse.last().unwrap(), best, residuals)
}

/// The guard on the built-in sunset (no shared data), where it is less sharp: 100 x 100 pixels
/// give SURE differences between iterates a noise of about 2 σ rms(Δf) / √N ≈ 0.9 in MSE, so the
/// guard starts halving its steps an iteration or two before the true best (2.956 against the
/// free run's best 2.782, 6.3% above). The guard must settle the run before the cap, end at its
/// own best, within 7% of the free run's best and below the free run's final iterate.
#[test]
fn kernel_bp_on_the_sunset_settles_near_its_best_iterate_under_the_guard() {
    let (d, rmse, residuals) = run_to_end(DenoiseConfig::default());
    let last = *rmse.last().unwrap();
    let run_best = rmse.iter().copied().fold(f64::INFINITY, f64::min);
    let stop = d.runs()[0].sure.as_ref().unwrap().tracker.stop_reason;
    let (free_last, free_best, _) = final_best_residuals(DenoiseConfig {
        sure_stop: false,
        max_iters: 40,
        ..DenoiseConfig::default()
    });
    eprintln!(
        "guard {last:.3} (run best {run_best:.3}, {} iterations, last residual {:.1e}); free \
         run final {free_last:.3}, best {free_best:.3}",
        residuals.len(),
        residuals.last().unwrap()
    );
    assert!(
        stop.is_some_and(|r| r.settled()) && rmse.len() < DenoiseConfig::default().max_iters,
        "the guard did not settle the run ({stop:?}): residuals {residuals:?}"
    );
    assert!(
        last <= 1.005 * run_best,
        "final {last}, run best {run_best}"
    );
    assert!(last <= 1.07 * free_best, "{last} against best {free_best}");
    assert!(
        last < free_last,
        "{last} against the free run's final {free_last}"
    );
}

/// Once the guard has taken a step back, the debugger says so (the schedule's damping alone no
/// longer describes the step) and the estimate is labelled as the lowest-SURE one.
#[test]
fn the_debugger_shows_when_the_sure_guard_shrinks_the_steps() {
    let mut d = Denoise::new(DenoiseConfig::default(), &CancelFlag::default()).unwrap();
    let mut scales = Vec::new();
    while !d.finished() {
        scales.push(d.step().unwrap().metrics["step_scale"]);
        let note = d.convergence().unwrap().step_note;
        assert_eq!(
            note.is_some(),
            *scales.last().unwrap() < 1.0,
            "iteration {}: {note:?}",
            scales.len()
        );
    }
    let note = d.convergence().unwrap().step_note.unwrap();
    assert!(note.starts_with("SURE guard: steps × 2^-"), "{note}");
    let kept = d.runs()[0]
        .kept()
        .expect("the lowest-SURE iterate is labelled");
    assert!(kept.by_sure && kept.guarded && kept.iteration < scales.len());
    assert!(scales.windows(2).all(|w| w[1] <= w[0]), "{scales:?}");
}

/// A `64 x 64` piecewise-smooth PNG (ramps, a disc, a rectangle) whose gray levels lie in
/// `lo..hi`-ish: two of them with disjoint histograms make a training/test pair.
fn piecewise_smooth_png(path: &std::path::Path, bright: bool) {
    image::GrayImage::from_fn(64, 64, |x, y| {
        let (x, y) = (f64::from(x), f64::from(y));
        let v = if bright {
            if (x - 40.0).powi(2) + (y - 22.0).powi(2) < 225.0 {
                245.0 - 0.6 * x
            } else if (6.0..26.0).contains(&x) && (36.0..58.0).contains(&y) {
                175.0 + x
            } else {
                140.0 + 0.5 * y
            }
        } else if (x - 24.0).powi(2) + (y - 28.0).powi(2) < 256.0 {
            110.0 - 0.5 * y
        } else if (40.0..60.0).contains(&x) && (40.0..58.0).contains(&y) {
            60.0
        } else {
            20.0 + 0.6 * x
        };
        image::Luma([v as u8])
    })
    .save(path)
    .unwrap();
}

/// The template shifts are chosen by the training image's relation to the test
/// image, keep every edge pair's gray-level difference, stay on the C levels within 0..255,
/// and take each training pixel at most once in the observation template.
#[test]
fn kernel_bp_template_shifts_keep_differences_and_cover_more_levels() {
    use beliefscope::scenarios::denoise::{CROSS_IMAGE_TEMPLATE_SHIFTS, DenoiseData};
    let dir = tempfile::tempdir().unwrap();
    let (test, train) = (dir.path().join("test.png"), dir.path().join("train.png"));
    piecewise_smooth_png(&test, true);
    piecewise_smooth_png(&train, false);
    let loaded = DenoiseConfig {
        image: Some(test.clone()),
        train_image: Some(train),
        ..DenoiseConfig::default()
    };
    assert_eq!(
        loaded.resolved_template_shifts(),
        CROSS_IMAGE_TEMPLATE_SHIFTS.to_vec()
    );
    let oracle = DenoiseConfig {
        image: Some(test),
        oracle: true,
        ..DenoiseConfig::default()
    };
    assert!(oracle.resolved_template_shifts().is_empty());
    assert!(
        DenoiseConfig::default()
            .resolved_template_shifts()
            .is_empty()
    );

    let data = DenoiseData::generate(&loaded).unwrap();
    assert!(
        data.train.source.contains("shifted by ±20, 40"),
        "the training description names the shifts: {}",
        data.train.source
    );
    let paper = DenoiseConfig {
        template_shifts: Some(Vec::new()),
        ..loaded.clone()
    };
    let plain = data.kbp_templates(&paper);
    assert_eq!(
        plain.hidden, data.train.clean,
        "no shifts: the paper's templates"
    );
    assert_eq!(plain.sender.len(), 2 * (63 * 64 + 64 * 63));
    let shifted = data.kbp_templates(&loaded);
    assert!(shifted.sender.len() > 5 * plain.sender.len());
    assert!(shifted.hidden.len() <= 64 * 64);
    let spacing = 255.0 / 49.0;
    let key = |a: f64, b: f64| ((b - a) / spacing).round() as i64;
    let plain_diffs: std::collections::BTreeSet<i64> = plain
        .sender
        .iter()
        .zip(&plain.receiver)
        .map(|(a, b)| key(*a, *b))
        .collect();
    for (a, b) in shifted.sender.iter().zip(&shifted.receiver) {
        assert!(
            plain_diffs.contains(&key(*a, *b)),
            "new difference {a} -> {b}"
        );
        for v in [a, b] {
            assert!(data.levels.contains(v), "{v} is not one of the C levels");
        }
    }
    let distinct = |v: &[f64]| {
        v.iter()
            .map(|x| (x * 1e6).round() as i64)
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    };
    assert!(
        distinct(&shifted.hidden) > distinct(&plain.hidden) + 15,
        "{} against {} levels",
        distinct(&shifted.hidden),
        distinct(&plain.hidden)
    );
}

/// Kernel BP trained on an image whose gray levels the test image does not share
/// (dark training, bright test, 64 x 64). With the paper's templates the learned likelihood has
/// no support at the test image's levels and the run fails or denoises badly (measured: it
/// diverges at iteration 1); the default's shifted templates learn a coupling of differences
/// and come within 30% of TV (measured 7.66 against TV 6.36, noisy 30).
#[test]
fn kernel_bp_trained_on_another_histogram_denoises_with_the_default_templates() {
    let dir = tempfile::tempdir().unwrap();
    let (test, train) = (dir.path().join("test.png"), dir.path().join("train.png"));
    piecewise_smooth_png(&test, true);
    piecewise_smooth_png(&train, false);
    let run = |template_shifts: Option<Vec<f64>>| -> Option<(f64, f64, f64)> {
        let config = DenoiseConfig {
            image: Some(test.clone()),
            train_image: Some(train.clone()),
            template_shifts,
            ..DenoiseConfig::default()
        };
        let mut d = Denoise::new(config, &CancelFlag::default()).ok()?;
        while !d.finished() {
            d.step().ok()?;
        }
        let m = d.final_metrics();
        Some((m["rmse"], m["baseline_rmse_tv"], m["noisy_rmse"]))
    };
    let (rmse, tv, noisy) = run(None).expect("the default run denoises");
    eprintln!("default: {rmse:.3}, TV {tv:.3}, noisy {noisy:.3}");
    assert!(rmse < 1.3 * tv, "{rmse} against TV {tv}");
    assert!(rmse < 0.35 * noisy, "{rmse} against noisy {noisy}");
    match run(Some(Vec::new())) {
        None => eprintln!("paper's templates: the run failed"),
        Some((old, _, _)) => {
            eprintln!("paper's templates: {old:.3}");
            assert!(old > 1.2 * rmse, "{old} against the default's {rmse}");
        }
    }
}

/// In compare mode the run goes on until every algorithm has settled (its SURE guard stopped it,
/// or its residual fell below the tolerance): the one that settles first takes no more steps,
/// keeping its estimate and residual, and the other goes on until it settles too.
#[test]
fn a_comparison_runs_until_every_algorithm_has_settled() {
    let config = DenoiseConfig {
        width: 48,
        height: 48,
        tolerance: 1e-4,
        max_iters: 200,
        compare: Some("discrete".parse().unwrap()),
        ..DenoiseConfig::default()
    };
    let mut d = Denoise::new(config, &CancelFlag::default()).unwrap();
    let mut records = Vec::new();
    while !d.finished() {
        records.push(d.step().unwrap());
    }
    // Each algorithm settles when its SURE guard stops it, or else at its tolerance.
    let settled_at = |run: usize, residual_of: fn(&IterationRecord) -> f64| {
        let guard = d.runs()[run].sure.as_ref().map(|s| &s.tracker);
        match guard.and_then(|t| {
            t.stop_reason
                .filter(|r| r.settled())
                .and(t.stopped_iteration)
        }) {
            Some(iteration) => iteration - 1,
            None => {
                let residuals: Vec<f64> = records.iter().map(residual_of).collect();
                residuals
                    .iter()
                    .position(|&r| r < 1e-4)
                    .unwrap_or_else(|| panic!("run {run} never settles: {residuals:?}"))
            }
        }
    };
    let kbp = settled_at(0, |r| r.residual);
    let discrete = settled_at(1, |r| r.metrics["residual_discrete"]);
    assert_ne!(
        kbp, discrete,
        "the test needs one to settle before the other"
    );
    assert_eq!(
        kbp.max(discrete) + 1,
        records.len(),
        "the run ends when the last one settles"
    );
    // The one settled first keeps its estimate and residual.
    let (first, rmse_key, residual_of): (usize, &str, fn(&IterationRecord) -> f64) =
        if kbp < discrete {
            (kbp, "rmse", |r| r.residual)
        } else {
            (
                discrete,
                "rmse_discrete",
                |r| r.metrics["residual_discrete"],
            )
        };
    let frozen = records[first].metrics[rmse_key];
    assert!(
        records[first..]
            .iter()
            .all(|r| r.metrics[rmse_key] == frozen)
    );
    let frozen_residual = residual_of(&records[first]);
    assert!(
        records[first..]
            .iter()
            .all(|r| residual_of(r) == frozen_residual)
    );
}

/// `sure_probes` runs one copy per probe direction and is checked: 0 or more than 16 probes is
/// a clear error naming the parameter.
#[test]
fn sure_averages_over_the_configured_probes() {
    let config = DenoiseConfig {
        width: 32,
        height: 32,
        max_iters: 8,
        sure_probes: SureProbes::Count(3),
        ..DenoiseConfig::default()
    };
    let mut d = Denoise::new(config.clone(), &CancelFlag::default()).unwrap();
    assert_eq!(d.runs()[0].sure.as_ref().unwrap().engines.len(), 3);
    let mut last = None;
    while !d.finished() {
        last = Some(d.step().unwrap());
    }
    let sure = last.unwrap().metrics["sure_rmse"];
    assert!(sure.is_finite() && sure > 0.0);
    // The default, auto, gives this 32 x 32 image the most it gives (8); the report says so.
    let auto = Denoise::new(
        DenoiseConfig {
            sure_probes: SureProbes::Auto,
            ..config.clone()
        },
        &CancelFlag::default(),
    )
    .unwrap();
    assert_eq!(auto.runs()[0].sure.as_ref().unwrap().engines.len(), 8);
    assert_eq!(auto.extra_results()["runs"][0]["sure"]["probes"], 8);
    for bad in [0, 17] {
        let err = Denoise::new(
            DenoiseConfig {
                sure_probes: SureProbes::Count(bad),
                ..config.clone()
            },
            &CancelFlag::default(),
        )
        .err()
        .expect("refused")
        .to_string();
        assert!(
            err.contains("SURE probes") || err.contains("sure_probes"),
            "{err}"
        );
    }
}

/// On the public data beside the checkout (see `crate::shared_data`).
mod shared_data {
    use super::*;
    use crate::shared_data::shared_data;

    /// `(test, train)` from `../shared/data/images`.
    fn shared_image_pair(test: &str, train: &str) -> (std::path::PathBuf, std::path::PathBuf) {
        (
            shared_data(&format!("images/{test}.png")),
            shared_data(&format!("images/{train}.png")),
        )
    }

    /// With the default (tree-reweighted discrete BP, posterior mean) a real image
    /// trained on another real image converges: the residual falls and the final iterate is within
    /// 2% of the best. Ordinary loopy BP with the same pseudo-moment potentials and the MAP
    /// read-out (the old default) is lowest at iteration 5 and ends more than 10% above it
    /// (measured: 14.25 against 11.60 on house trained on cameraman).
    #[test]
    #[ignore = "needs ../shared/data"]
    fn discrete_bp_converges_by_default_on_a_real_image_trained_on_another() {
        let (test, train) = shared_image_pair("house", "cameraman");
        let config = DenoiseConfig {
            image: Some(test),
            train_image: Some(train),
            algorithm: DenoiseAlgorithm::Discrete,
            ..DenoiseConfig::default()
        };
        let (last, best, residuals) = final_best_residuals(config.clone());
        eprintln!("default: final {last:.3}, best {best:.3}, residuals {residuals:.3?}");
        assert!(last <= 1.02 * best, "final {last} against best {best}");
        let tail = residuals[residuals.len() - 1];
        assert!(
            tail < 0.5 * residuals[2],
            "the residual must fall: {residuals:?}"
        );
        let (old_last, old_best, _) = final_best_residuals(DenoiseConfig {
            edge_appearance: 1.0,
            estimate: beliefscope::inference::EstimateKind::Map,
            sure_stop: false,
            ..config
        });
        eprintln!("ordinary BP + MAP: final {old_last:.3}, best {old_best:.3}");
        assert!(
            old_last > 1.1 * old_best,
            "the contrast case no longer drifts"
        );
        assert!(
            last < old_last,
            "{last} against the old default's {old_last}"
        );
    }
    /// The default kernel BP on a real image trained on another ends at its best: Monte-Carlo SURE
    /// (no clean image) guards every step, taking back a step that raises it and halving the next,
    /// and stops the run once it has settled (no shorter step lowers SURE), long before the
    /// iteration cap. The final iterate is the lowest-RMSE iterate of the run and within 2% of the
    /// best of a free (unguarded) run, whose own final iterate drifts more than 10% above its best.
    /// SURE's own estimate must be within 5% of the true RMSE.
    #[test]
    #[ignore = "needs ../shared/data"]
    fn kernel_bp_default_settles_at_its_best_iterate_under_the_sure_guard() {
        let (test, train) = shared_image_pair("cameraman", "house");
        let config = DenoiseConfig {
            image: Some(test),
            train_image: Some(train),
            ..DenoiseConfig::default()
        };
        assert!(config.sure_stop && config.sure_rule == SureRule::Guard);
        let (d, rmse, residuals) = run_to_end(config.clone());
        let last = *rmse.last().unwrap();
        let run_best = rmse.iter().copied().fold(f64::INFINITY, f64::min);
        let sure_rmse = d.runs()[0].sure.as_ref().unwrap().tracker.best_mse.sqrt();
        let (free_last, free_best, _) = final_best_residuals(DenoiseConfig {
            sure_stop: false,
            max_iters: 40,
            ..config.clone()
        });
        eprintln!(
            "guard: {} iterations, final rmse {last:.3} (run best {run_best:.3}, SURE says \
             {sure_rmse:.3}), last residual {:.2e}; free run: final {free_last:.3}, best {free_best:.3}",
            rmse.len(),
            residuals.last().unwrap()
        );
        let stop = d.runs()[0].sure.as_ref().unwrap().tracker.stop_reason;
        assert!(
            stop.is_some_and(|r| r.settled()) && rmse.len() < config.max_iters,
            "the guard did not settle the run ({stop:?}): residuals {residuals:?}"
        );
        assert!(
            last <= 1.005 * run_best,
            "final {last}, run best {run_best}"
        );
        assert!(last <= 1.02 * free_best, "{last} against best {free_best}");
        assert!(
            (sure_rmse - last).abs() < 0.05 * last,
            "SURE {sure_rmse} against the true {last}"
        );
        assert!(
            free_last > 1.1 * free_best,
            "the contrast case no longer drifts: {free_last} against {free_best}"
        );
    }
    /// On the shared images, kernel BP trained on one and tested on the other is within
    /// 5% of TV's RMSE. With the default schedule (`auto`: sweeps for kernel BP on a loaded image)
    /// it is at TV or below (measured: cameraman trained on house 11.401 against TV 11.725, house
    /// trained on cameraman 8.733 against 8.774); the synchronous schedule, the earlier default,
    /// gives 12.076 and 9.172 (+3.0% and +4.5%) and fails the first assertion. Under
    /// synchronous updates (where they were measured) the expected observation
    /// template beats one noise draw per training pixel (12.10 and 9.215) and the paper's templates
    /// altogether are more than 10% above TV (14.15 and 9.95).
    #[test]
    #[ignore = "needs ../shared/data"]
    fn kernel_bp_trained_on_another_real_image_comes_near_tv() {
        use beliefscope::scenarios::denoise::schedule_choice::ScheduleChoice;
        for (test, train) in [("cameraman", "house"), ("house", "cameraman")] {
            let (test_path, train_path) = shared_image_pair(test, train);
            let run =
                |schedule: ScheduleChoice, template_shifts: Option<Vec<f64>>, expected: bool| {
                    let config = DenoiseConfig {
                        image: Some(test_path.clone()),
                        train_image: Some(train_path.clone()),
                        template_shifts,
                        kbp_expected_observations: expected,
                        schedule,
                        ..DenoiseConfig::default()
                    };
                    let mut d = Denoise::new(config, &CancelFlag::default()).unwrap();
                    while !d.finished() {
                        d.step().unwrap();
                    }
                    let m = d.final_metrics();
                    (m["rmse"], m["baseline_rmse_tv"])
                };
            let synchronous = ScheduleChoice::Fixed(Schedule::Synchronous);
            let (rmse, tv) = run(ScheduleChoice::Auto, None, true);
            let (sync, _) = run(synchronous, None, true);
            let (one_draw, _) = run(synchronous, None, false);
            let (paper, _) = run(synchronous, Some(Vec::new()), false);
            eprintln!(
                "{test} <- {train}: default {rmse:.4}, synchronous {sync:.4}, one noise draw \
                 {one_draw:.4}, paper's templates {paper:.3}, TV {tv:.4}"
            );
            assert!(rmse < 1.01 * tv, "{rmse} against TV {tv}");
            assert!(
                sync > 1.02 * tv && sync < 1.05 * tv,
                "synchronous {sync} against TV {tv}"
            );
            assert!(
                sync < one_draw,
                "the expected observation template {sync} against one draw {one_draw}"
            );
            assert!(
                paper > 1.1 * tv,
                "the contrast case: {paper} against TV {tv}"
            );
        }
    }

    /// The stop rule (`sure_rule: stop`, the default before the guard) on the same pair: it keeps
    /// the lowest-SURE iterate and stops mid-drift, with the residual still high.
    #[test]
    #[ignore = "needs ../shared/data"]
    fn the_sure_stop_rule_keeps_its_lowest_sure_iterate_and_stops() {
        let (test, train) = shared_image_pair("cameraman", "house");
        let config = DenoiseConfig {
            image: Some(test),
            train_image: Some(train),
            sure_rule: SureRule::Stop,
            ..DenoiseConfig::default()
        };
        let mut d = Denoise::new(config, &CancelFlag::default()).unwrap();
        let mut rmse = Vec::new();
        while !d.finished() {
            rmse.push(d.step().unwrap().metrics["rmse"]);
        }
        let stopped_at = d.runs()[0]
            .stopped_at
            .expect("the SURE rule stopped the drifting run");
        assert!(rmse.len() < 20, "the rule never fired: {rmse:?}");
        // The kept estimate is the one reported at the end.
        assert_eq!(*rmse.last().unwrap(), rmse[stopped_at - 1]);
    }
}
