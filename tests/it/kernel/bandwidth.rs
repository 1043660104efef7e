//! Bandwidth selection: median heuristic, Silverman's rule, leave-one-out likelihood.
use beliefscope::kernel::{
    KernelError, LooCvOptions, MedianHeuristic, Points, loo_cv_bandwidth, loo_log_likelihood,
    median_heuristic, median_pairwise_distance, silverman,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

fn mh(p: &Points) -> Result<f64, KernelError> {
    median_heuristic(p, &MedianHeuristic::default())
}

#[test]
fn median_of_known_sets() {
    // 3 pairs: 1, 3, 2 -> 2.
    assert_eq!(mh(&Points::from_slice(&[0.0, 1.0, 3.0])).unwrap(), 2.0);
    // 6 pairs: 1,1,1,2,2,3 -> (1 + 2) / 2.
    assert_eq!(mh(&Points::from_slice(&[0.0, 1.0, 2.0, 3.0])).unwrap(), 1.5);
    // Unit square corners: 4 sides 1, 2 diagonals sqrt 2 -> 1 (distances, not squared).
    let sq = [0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0];
    assert_eq!(mh(&Points::from_row_major(&sq, 2).unwrap()).unwrap(), 1.0);
    // Equilateral triangle with side 2 -> 2; multiplier scales.
    let tri = [0.0, 0.0, 2.0, 0.0, 1.0, 3f64.sqrt()];
    let p = Points::from_row_major(&tri, 2).unwrap();
    assert!((mh(&p).unwrap() - 2.0).abs() < 1e-15);
    let half = MedianHeuristic {
        multiplier: 0.5,
        ..Default::default()
    };
    assert!((median_heuristic(&p, &half).unwrap() - 1.0).abs() < 1e-15);
    // Duplicates in fewer than half of the pairs are fine: {0,0,1}: 0,1,1 -> 1.
    assert_eq!(mh(&Points::from_slice(&[0.0, 0.0, 1.0])).unwrap(), 1.0);
}

#[test]
fn median_uses_deterministic_subsample() {
    // 10,000 evenly spaced points: the strided subsample is every 5th point, so the
    // median is 5 * (median |a - b| over 2000 indices) = 5 * 586 (the sum of (2000 - d)
    // for d = 1..=586 first exceeds half of the 1,999,000 pairs).
    let x: Vec<f64> = (0..10_000).map(|i| i as f64).collect();
    let p = Points::from_slice(&x);
    let m = median_pairwise_distance(&p, 2000).unwrap();
    assert_eq!(m, 5.0 * 586.0);
    assert_eq!(mh(&p).unwrap(), m);
    // Deterministic: the same answer again, and a smaller subsample gives a different one.
    assert_eq!(mh(&p).unwrap(), m);
    let small = MedianHeuristic {
        max_points: 100,
        ..Default::default()
    };
    assert_ne!(median_heuristic(&p, &small).unwrap(), m);
}

#[test]
fn median_errors() {
    let e = mh(&Points::from_slice(&[4.2; 50])).unwrap_err();
    assert!(
        matches!(e, KernelError::ZeroMedian { pairs: 1225 }),
        "{e:?}"
    );
    assert!(e.to_string().contains("median pairwise distance is 0"));
    // More than half of the pairs are duplicates.
    let mostly = [0.0, 0.0, 0.0, 0.0, 1.0];
    assert!(matches!(
        mh(&Points::from_slice(&mostly)),
        Err(KernelError::ZeroMedian { .. })
    ));
    let nan = [0.0, f64::NAN, 1.0];
    assert!(matches!(
        mh(&Points::from_slice(&nan)),
        Err(KernelError::NonFinite { .. })
    ));
    let inf = [0.0, f64::INFINITY];
    assert!(matches!(
        mh(&Points::from_slice(&inf)),
        Err(KernelError::NonFinite { .. })
    ));
    assert!(matches!(
        mh(&Points::from_slice(&[1.0])),
        Err(KernelError::TooFewPoints { .. })
    ));
    let bad = MedianHeuristic {
        multiplier: 0.0,
        ..Default::default()
    };
    assert!(median_heuristic(&Points::from_slice(&[0.0, 1.0]), &bad).is_err());
}

#[test]
fn silverman_closed_form_and_errors() {
    // x = 1..5: std = sqrt(2.5), IQR = 4 - 2 = 2, min(std, 2/1.34) = 2/1.34.
    let h = silverman(&[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
    let want = 0.9 * (2.0 / 1.34) * 5f64.powf(-0.2);
    assert!((h - want).abs() < 1e-14, "{h} vs {want}");
    // IQR = 0 falls back to the std.
    let x = [0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 2.0];
    let std = (2.0f64 / 7.0).sqrt();
    assert!((silverman(&x).unwrap() - 0.9 * std * 8f64.powf(-0.2)).abs() < 1e-14);
    assert!(matches!(
        silverman(&[3.0; 10]),
        Err(KernelError::ZeroSpread { .. })
    ));
    assert!(silverman(&[1.0, f64::NAN]).is_err());
    assert!(silverman(&[1.0]).is_err());
}

#[test]
fn loo_likelihood_closed_form_for_two_points() {
    // n = 2: each point's LOO density is N(x_i; x_j, sigma^2).
    let (a, b, sigma) = (0.3, 1.5, 0.7f64);
    let ll = loo_log_likelihood(&Points::from_slice(&[a, b]), sigma).unwrap();
    let want = -0.5 * (2.0 * std::f64::consts::PI * sigma * sigma).ln()
        - (a - b) * (a - b) / (2.0 * sigma * sigma);
    assert!((ll - want).abs() < 1e-14);
    // Far-apart points do not underflow (log-sum-exp).
    let far = loo_log_likelihood(&Points::from_slice(&[0.0, 1e3]), 0.01).unwrap();
    assert!(far.is_finite() && far < -1e9);
}

#[test]
fn loo_cv_is_reasonable_for_gaussian_data() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let x: Vec<f64> = (0..400).map(|_| rng.sample(StandardNormal)).collect();
    let p = Points::from_slice(&x);
    let r = loo_cv_bandwidth(&p, &LooCvOptions::default()).unwrap();
    let h = silverman(&x).unwrap();
    assert!(!r.at_boundary);
    assert!(
        r.sigma > 0.5 * h && r.sigma < 2.0 * h,
        "loo {} vs silverman {h}",
        r.sigma
    );
    // The refined optimum is at least as good as every grid point.
    assert!(r.grid.iter().all(|&(_, ll)| ll <= r.log_likelihood + 1e-12));
    assert!((loo_log_likelihood(&p, r.sigma).unwrap() - r.log_likelihood).abs() < 1e-12);
    assert_eq!(r.grid.len(), 25);
    // Deterministic.
    assert_eq!(loo_cv_bandwidth(&p, &LooCvOptions::default()).unwrap(), r);
}

#[test]
fn loo_cv_flags_duplicates_and_bad_ranges() {
    // Many duplicates: the likelihood grows without bound as sigma -> 0.
    let x: Vec<f64> = (0..200).map(|i| (i % 5) as f64).collect();
    let r = loo_cv_bandwidth(&Points::from_slice(&x), &LooCvOptions::default()).unwrap();
    assert!(r.at_boundary);
    let bad = LooCvOptions {
        sigma_min: Some(2.0),
        sigma_max: Some(1.0),
        ..Default::default()
    };
    assert!(loo_cv_bandwidth(&Points::from_slice(&x), &bad).is_err());
    assert!(matches!(
        loo_cv_bandwidth(&Points::from_slice(&[1.0; 20]), &LooCvOptions::default()),
        Err(KernelError::ZeroSpread { .. })
    ));
}
