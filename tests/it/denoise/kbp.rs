//! Loopy kernel BP (Song et al. 2011): the three updates agree where they must, the
//! no-evidence fixed point is the prior (Property 1), it denoises, and bad parameters are clear
//! errors.

use std::sync::Arc;

use beliefscope::inference::kbp::engine::GridShape;
use beliefscope::inference::kbp::{
    Bandwidth, KbpEngine, KbpModel, KbpSettings, KbpTraining, KbpUpdate,
};
use beliefscope::inference::{Belief, Damping, EstimateKind, Inference, Schedule};
use beliefscope::scenarios::denoise::{
    AlgorithmChoice, Denoise, DenoiseAlgorithm, DenoiseConfig, DenoiseData, Engine, build_run,
};
use beliefscope::scenarios::{CancelFlag, Scenario};
use strum::VariantArray;

fn small_config(update: KbpUpdate, epsilon: f64) -> DenoiseConfig {
    DenoiseConfig {
        width: 12,
        height: 12,
        colors: 10,
        damping: 0.0,
        kbp: KbpSettings {
            update,
            epsilon,
            max_rank: 200,
            ..KbpSettings::default()
        },
        ..DenoiseConfig::default()
    }
}

/// Beliefs of every pixel at the candidates after `iters` undamped iterations, each scaled to
/// max |value| 1 (messages are defined up to scale, and each update normalises in its own
/// coordinates, so only shapes can agree).
fn beliefs(update: KbpUpdate, epsilon: f64, iters: usize) -> Vec<Vec<f64>> {
    beliefs_for(small_config(update, epsilon), iters)
}

fn beliefs_for(config: DenoiseConfig, iters: usize) -> Vec<Vec<f64>> {
    let data = DenoiseData::generate(&config).unwrap();
    let choice = AlgorithmChoice {
        algorithm: DenoiseAlgorithm::Kbp,
        update: config.kbp.update,
    };
    let mut run = build_run(choice, &data, &config, &CancelFlag::default()).unwrap();
    let Engine::Kbp(engine) = &mut run.engine else {
        unreachable!()
    };
    for _ in 0..iters {
        engine.step().unwrap();
    }
    (0..144)
        .map(|t| match engine.belief(t) {
            Belief::Curve { ys, .. } => {
                let m = ys.iter().fold(0.0f64, |a, y| a.max(y.abs()));
                ys.iter().map(|y| y / m).collect()
            }
            other => panic!("{other:?}"),
        })
        .collect()
}

fn max_difference(a: &[Vec<f64>], b: &[Vec<f64>]) -> f64 {
    a.iter()
        .zip(b)
        .flat_map(|(x, y)| x.iter().zip(y).map(|(p, q)| (p - q).abs()))
        .fold(0.0, f64::max)
}

#[test]
fn the_three_updates_agree_when_the_low_rank_bases_are_exact() {
    // With C = 10 distinct values a rank-10 factor is exact, so at epsilon 1e-9 the linear
    // update equals eq. 12 up to rounding (the identity R^-1 (R N R^T + cI)^-1 R =
    // (N K + cI)^-1), and the tensor projection reproduces products at all 10 values exactly.
    // Messages are stored in f32 (relative rounding 6e-8), so 2e-5 leaves room for rounding
    // through 8 iterations of cond ~1e3 solves while catching any wrong matrix (those show up
    // at 1e-2 or more).
    let full = beliefs(KbpUpdate::Full, 1e-9, 8);
    let linear = beliefs(KbpUpdate::Linear, 1e-9, 8);
    let constant = beliefs(KbpUpdate::Constant, 1e-9, 8);
    let fl = max_difference(&full, &linear);
    let lc = max_difference(&linear, &constant);
    assert!(fl < 2e-5, "full vs linear: {fl}");
    assert!(lc < 2e-5, "linear vs constant: {lc}");
}

#[test]
fn damped_updates_agree_too_when_the_bases_are_exact() {
    // Damping mixes the old and new messages after each is normalised, so the forms agree
    // only if they normalise the same functions: every form's coefficients are orthonormal
    // coordinates (the message's RKHS norm). Normalising the full form's kernel-expansion
    // weights instead (a near-singular Gram matrix) moved its beliefs by 1e-2 or more here.
    let damped = |update| {
        let mut c = small_config(update, 1e-9);
        c.damping = 0.5;
        beliefs_for(c, 8)
    };
    let full = damped(KbpUpdate::Full);
    let linear = damped(KbpUpdate::Linear);
    let fl = max_difference(&full, &linear);
    assert!(fl < 2e-5, "damped full vs linear: {fl}");
}

#[test]
fn constant_time_converges_to_linear_time_as_epsilon_shrinks() {
    // At C = 50 levels 5 apart and sigma ~10 the bases really are truncated at coarse epsilon;
    // the only difference between the two updates is the tensor projection, which becomes
    // exact as epsilon shrinks.
    let at = |update, eps| {
        let mut c = small_config(update, eps);
        c.colors = 50;
        c.kbp.multiplier = 1.0;
        // A moderate lambda keeps the comparison about epsilon, not about conditioning.
        c.kbp.lambda = 1e-3;
        beliefs_for(c, 8)
    };
    let errors: Vec<f64> = [0.3, 0.1, 1e-2, 1e-4, 1e-6]
        .iter()
        .map(|&eps| max_difference(&at(KbpUpdate::Constant, eps), &at(KbpUpdate::Linear, eps)))
        .collect();
    eprintln!("max belief difference constant vs linear by epsilon: {errors:?}");
    assert!(errors[0] > 1e-2, "a coarse basis must differ: {errors:?}");
    for w in errors.windows(2) {
        assert!(w[1] < w[0], "not shrinking: {errors:?}");
    }
    assert!(errors[4] < 1e-5, "{errors:?}");
}

#[test]
fn without_evidence_the_beliefs_are_the_prior() {
    // Property 1: with no evidence the BP fixed point has constant messages (E[1 | x] = 1), so
    // every belief is proportional to the prior P. The learned E[1 | x] is 1 only up to the
    // regularisation bias (1.8% of the peak after 2 iterations at the default lambda 1e-3),
    // which products over the loops compound, so this checks the first iterations from the
    // "no information" start at a small lambda (measured 0.02% of the peak), within 0.2%.
    let config = small_config(KbpUpdate::Constant, 1e-6);
    let data = DenoiseData::generate(&config).unwrap();
    let t = data.kbp_templates(&config);
    let training = KbpTraining {
        sender: &t.sender,
        receiver: &t.receiver,
        hidden: &t.hidden,
        observed: &t.observed,
        observation_noise: t.observation_noise,
    };
    for &update in KbpUpdate::VARIANTS {
        let settings = KbpSettings {
            update,
            epsilon: 1e-6,
            max_rank: 200,
            lambda: 1e-6,
            ..config.kbp
        };
        let model = Arc::new(KbpModel::learn(&training, &settings, &[1, 2, 3]).unwrap());
        let candidates = model.training_values().to_vec();
        let prior = model.prior(&candidates);
        let peak = prior.iter().cloned().fold(0.0, f64::max);
        let mut engine = KbpEngine::new(
            model,
            GridShape {
                width: 6,
                height: 5,
            },
            None,
            candidates,
            Schedule::Synchronous,
            Damping(0.0),
        )
        .unwrap();
        let mut worst: f64 = 0.0;
        for iteration in 1..=3 {
            engine.step().unwrap();
            for t in 0..30 {
                let Belief::Curve { ys, .. } = engine.belief(t) else {
                    unreachable!()
                };
                // Best scale a with ys ≈ a P (least squares), then the largest deviation.
                let a = ys.iter().zip(&prior).map(|(y, p)| y * p).sum::<f64>()
                    / prior.iter().map(|p| p * p).sum::<f64>();
                let dev = ys
                    .iter()
                    .zip(&prior)
                    .map(|(y, p)| (y / a - p).abs())
                    .fold(0.0, f64::max);
                worst = worst.max(dev / peak);
                assert!(
                    dev < 0.002 * peak,
                    "{update:?} iteration {iteration} node {t}: deviation {dev} vs peak {peak}"
                );
            }
        }
        eprintln!("{update:?}: largest deviation from P over 3 iterations: {worst:.4} of the peak");
    }
}

#[test]
fn kernel_bp_denoises_the_sunset() {
    let config = DenoiseConfig {
        colors: 50,
        max_iters: 20,
        tolerance: 0.0,
        ..DenoiseConfig::default()
    };
    let mut d = Denoise::new(config, &CancelFlag::default()).unwrap();
    while !d.finished() {
        d.step().unwrap();
    }
    let ratio = d.rmse() / d.noisy_rmse();
    eprintln!(
        "kbp-constant: rmse {} noisy {} ratio {ratio}",
        d.rmse(),
        d.noisy_rmse()
    );
    assert!(ratio < 0.25, "ratio {ratio}");
    let est = d.estimate();
    assert!(est.iter().all(|v| v.is_finite()));
}

#[test]
fn estimates_are_mean_or_map() {
    let config = DenoiseConfig {
        estimate: EstimateKind::Mean,
        ..small_config(KbpUpdate::Constant, 1e-3)
    };
    let mut d = Denoise::new(config, &CancelFlag::default()).unwrap();
    d.step().unwrap();
    assert!(d.estimate().iter().all(|v| (0.0..=255.0).contains(v)));
}

#[test]
fn bad_parameters_are_clear_errors() {
    let with = |f: &dyn Fn(&mut DenoiseConfig)| {
        let mut c = small_config(KbpUpdate::Constant, 1e-3);
        f(&mut c);
        Denoise::new(c, &CancelFlag::default())
            .err()
            .map(|e| e.to_string())
    };
    type Edit = Box<dyn Fn(&mut DenoiseConfig)>;
    let cases: Vec<(Edit, &str)> = vec![
        (Box::new(|c| c.kbp.lambda = 0.0), "lambda"),
        (Box::new(|c| c.kbp.lambda = -1.0), "lambda"),
        (Box::new(|c| c.kbp.epsilon = 0.0), "epsilon"),
        (Box::new(|c| c.kbp.epsilon = -0.1), "epsilon"),
        (
            Box::new(|c| c.kbp.bandwidth = Bandwidth::Value(0.0)),
            "bandwidth",
        ),
        (
            Box::new(|c| c.kbp.bandwidth = Bandwidth::Value(f64::NAN)),
            "bandwidth",
        ),
        (Box::new(|c| c.kbp.multiplier = 0.0), "multiplier"),
        (Box::new(|c| c.kbp.max_rank = 0), "max_rank"),
    ];
    for (f, name) in cases {
        let err = with(&*f).unwrap_or_else(|| panic!("expected an error naming {name}"));
        assert!(err.contains(name), "expected '{name}' in: {err}");
    }
}

#[test]
fn an_image_of_one_gray_level_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("flat.png");
    image::GrayImage::from_pixel(16, 16, image::Luma([128]))
        .save(&path)
        .unwrap();
    // Kernel BP learns from the training image: a flat one has nothing to learn.
    let config = DenoiseConfig {
        train_image: Some(path.clone()),
        ..DenoiseConfig::default()
    };
    let err = Denoise::new(config, &CancelFlag::default())
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains("single gray level"), "{err}");
    // A flat test image trains on the sunset by default, so it runs.
    let config = DenoiseConfig {
        image: Some(path),
        max_iters: 2,
        ..DenoiseConfig::default()
    };
    assert!(Denoise::new(config, &CancelFlag::default()).is_ok());
}
