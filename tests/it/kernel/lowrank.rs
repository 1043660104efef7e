//! Low-rank approximations: incomplete Cholesky, Nyström, random Fourier features.
use beliefscope::kernel::{
    IncompleteCholesky, IncompleteCholeskyOptions, Kernel, Landmarks, Nystrom, Points,
    RandomFourierFeatures, gram,
};
use nalgebra::{DMatrix, DVector};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

fn normal_points(n: usize, d: usize, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n * d).map(|_| rng.sample(StandardNormal)).collect()
}

fn ic(kernel: &Kernel, p: &Points, epsilon: f64) -> IncompleteCholesky {
    IncompleteCholesky::new(
        kernel,
        p,
        &IncompleteCholeskyOptions {
            epsilon,
            max_rank: 10_000,
        },
    )
    .unwrap()
}

#[test]
fn incomplete_cholesky_diagonal_within_tolerance() {
    for (d, sigma) in [(1, 0.3), (2, 0.8), (3, 1.5)] {
        let x = normal_points(400, d, 21 + d as u64);
        let p = Points::from_row_major(&x, d).unwrap();
        let k = Kernel::rbf(sigma).unwrap();
        let g = gram(&k, &p).unwrap();
        for eps in [1e-1, 1e-2, 1e-3] {
            let f = ic(&k, &p, eps);
            let diff = &g - f.reconstruct();
            for i in 0..p.len() {
                // The residual diagonal is diag(K - R^T R) and is <= eps^2.
                assert!(
                    diff[(i, i)] <= eps * eps + 1e-12,
                    "d={d} eps={eps}: {}",
                    diff[(i, i)]
                );
                assert!((diff[(i, i)] - f.residual_diagonal()[i]).abs() < 1e-12);
            }
            assert!(f.max_residual() <= eps * eps);
            // Off-diagonal error bounded by Cauchy-Schwarz on the residual.
            assert!(diff.amax() <= eps * eps + 1e-12);
            assert_eq!(f.r().shape(), (f.rank(), p.len()));
        }
    }
}

#[test]
fn incomplete_cholesky_frobenius_error_decreases() {
    let x = normal_points(300, 2, 5);
    let p = Points::from_row_major(&x, 2).unwrap();
    let k = Kernel::rbf(0.7).unwrap();
    let g = gram(&k, &p).unwrap();
    let mut last = (f64::INFINITY, 0);
    for eps in [3e-1, 1e-1, 3e-2, 1e-2, 3e-3, 1e-3, 1e-4] {
        let f = ic(&k, &p, eps);
        let err = (&g - f.reconstruct()).norm();
        assert!(f.rank() >= last.1);
        assert!(err < last.0, "eps={eps}: {err} !< {}", last.0);
        last = (err, f.rank());
    }
    assert!(last.0 < 1e-5);
}

#[test]
fn incomplete_cholesky_rank_bounded_by_distinct_values() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    for c in [1usize, 2, 7, 20] {
        let levels: Vec<f64> = (0..c).map(|i| i as f64 * 255.0 / 20.0).collect();
        let x: Vec<f64> = (0..5000).map(|_| levels[rng.random_range(0..c)]).collect();
        let p = Points::from_slice(&x);
        for sigma in [5.0, 30.0, 200.0] {
            let f = ic(&Kernel::rbf(sigma).unwrap(), &p, 1e-7);
            assert!(f.rank() <= c, "C={c} sigma={sigma}: rank {}", f.rank());
        }
        // Also with epsilon = 0 (numerical floor only).
        let f = ic(&Kernel::rbf(5.0).unwrap(), &p, 0.0);
        assert!(f.rank() <= c);
    }
}

#[test]
fn incomplete_cholesky_features_of_training_points_equal_columns() {
    for (d, data) in [
        (1, normal_points(2000, 1, 8)),
        (2, normal_points(1000, 2, 9)),
    ] {
        let p = Points::from_row_major(&data, d).unwrap();
        let k = Kernel::rbf(0.5).unwrap();
        let f = ic(&k, &p, 1e-4);
        let all = f.features_of(&p).unwrap();
        for i in 0..p.len() {
            let fi = f.features(p.row(i)).unwrap();
            let col = f.column(i);
            assert!((&fi - &col).amax() <= 1e-12, "point {i}");
            assert_eq!(all.column(i), fi.column(0));
        }
        // Pivot block is the restriction of R to the pivot columns (up to rounding).
        let r = f.r();
        let t = f.pivot_block();
        for (s, &ps) in f.pivots().iter().enumerate() {
            for row in 0..f.rank() {
                assert!((r[(row, ps)] - t[(row, s)]).abs() < 1e-10);
            }
        }
    }
}

#[test]
fn incomplete_cholesky_features_of_new_points() {
    // Gray levels 0..255 with few distinct values; features of all 256 levels.
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let x: Vec<f64> = (0..40_000)
        .map(|_| (rng.random_range(0..32) * 8) as f64)
        .collect();
    let p = Points::from_slice(&x);
    let k = Kernel::rbf(12.0).unwrap();
    let eps = 1e-3;
    let f = ic(&k, &p, eps);
    let levels: Vec<f64> = (0..256).map(|v| v as f64).collect();
    let fy = f.features_of(&Points::from_slice(&levels)).unwrap();
    // <z(y), R_i> approximates k(y, x_i) within eps * sqrt(k(y, y)) = eps.
    for (j, &y) in levels.iter().enumerate().step_by(7) {
        for i in (0..x.len()).step_by(997) {
            let approx = fy.column(j).dot(&f.r_transpose().row(i).transpose());
            assert!((approx - k.eval(&[y], &[x[i]])).abs() <= eps + 1e-12);
        }
    }
    // solve_pivot_transpose reproduces features from pivot kernel values.
    let kp: Vec<f64> = f
        .pivot_points()
        .rows()
        .map(|r| k.eval(&[100.5], r))
        .collect();
    let a = f.solve_pivot_transpose(&kp).unwrap();
    assert!((a - f.features(&[100.5]).unwrap()).amax() < 1e-15);
    // Tensor-product features for k^p: factorise with the powered kernel.
    let k2 = k.powered(2).unwrap();
    let f2 = ic(&k2, &p, eps);
    let z = f2.features(&[17.0]).unwrap();
    let approx = z.dot(&f2.column(0));
    assert!((approx - k.eval(&[17.0], &[x[0]]).powi(2)).abs() <= eps + 1e-12);
}

#[test]
fn incomplete_cholesky_input_errors() {
    let k = Kernel::rbf(1.0).unwrap();
    let bad = IncompleteCholeskyOptions {
        epsilon: -1.0,
        max_rank: 10,
    };
    assert!(IncompleteCholesky::new(&k, &Points::from_slice(&[1.0, 2.0]), &bad).is_err());
    let nan = [1.0, f64::NAN];
    assert!(IncompleteCholesky::new(&k, &Points::from_slice(&nan), &Default::default()).is_err());
    assert!(IncompleteCholesky::new(&k, &Points::from_slice(&[]), &Default::default()).is_err());
    let f =
        IncompleteCholesky::new(&k, &Points::from_slice(&[1.0, 2.0]), &Default::default()).unwrap();
    assert!(f.features(&[1.0, 2.0]).is_err());
}

#[test]
fn nystrom_with_all_points_is_exact_and_improves_with_landmarks() {
    let x = normal_points(200, 2, 13);
    let p = Points::from_row_major(&x, 2).unwrap();
    let k = Kernel::rbf(1.0).unwrap();
    let g = gram(&k, &p).unwrap();
    let all = Nystrom::new(&k, &p, Landmarks::Indices((0..200).collect()), 1e-12).unwrap();
    let z = all.features_of(&p).unwrap();
    let exact_err = (z.transpose() * &z - &g).amax();
    assert!(exact_err < 1e-6, "{exact_err}");
    let mut last = f64::INFINITY;
    for count in [10, 30, 90] {
        let ny = Nystrom::new(&k, &p, Landmarks::Random { count, seed: 5 }, 1e-10).unwrap();
        assert!(ny.rank() <= count);
        assert_eq!(ny.landmark_indices().len(), count);
        let z = ny.features_of(&p).unwrap();
        let err = (z.transpose() * &z - &g).norm();
        assert!(err < last, "{count}: {err}");
        last = err;
    }
    // Duplicated landmarks are harmless (eigenvalue cut-off).
    let dup = Nystrom::new(&k, &p, Landmarks::Indices(vec![0, 0, 1, 1, 2]), 1e-10).unwrap();
    assert_eq!(dup.rank(), 3);
    // Explicit landmark points.
    let lm = p.select(&[0, 1, 2]).unwrap();
    let ex = Nystrom::from_landmarks(&k, &lm, 1e-10).unwrap();
    // Features are unique up to a rotation: compare inner products.
    let ip = |ny: &Nystrom| {
        ny.features(p.row(7))
            .unwrap()
            .dot(&ny.features(p.row(9)).unwrap())
    };
    assert!((ip(&ex) - ip(&dup)).abs() < 1e-9);
    assert!(Nystrom::new(&k, &p, Landmarks::Indices(vec![500]), 1e-10).is_err());
}

/// Mean absolute error between the random-feature Gram and the exact Gram.
fn rff_gram_error(p: &Points, sigma: f64, d: usize, big_d: usize, seed: u64) -> f64 {
    let exact = gram(&Kernel::rbf(sigma).unwrap(), p).unwrap();
    let rff = RandomFourierFeatures::new(sigma, d, big_d, seed).unwrap();
    let z = rff.features_of(p).unwrap();
    let approx = z.transpose() * z;
    (approx - exact).abs().mean()
}

#[test]
fn random_feature_error_falls_like_inverse_sqrt_d() {
    let x = normal_points(100, 2, 17);
    let p = Points::from_row_major(&x, 2).unwrap();
    let ds = [100usize, 400, 1600, 6400];
    let errs: Vec<f64> = ds
        .iter()
        .map(|&dd| {
            (0..4)
                .map(|s| rff_gram_error(&p, 1.0, 2, dd, 100 + s))
                .sum::<f64>()
                / 4.0
        })
        .collect();
    // Least-squares slope of log(err) against log(D).
    let lx: Vec<f64> = ds.iter().map(|&v| (v as f64).ln()).collect();
    let ly: Vec<f64> = errs.iter().map(|v| v.ln()).collect();
    let (mx, my) = (lx.iter().sum::<f64>() / 4.0, ly.iter().sum::<f64>() / 4.0);
    let slope = lx
        .iter()
        .zip(&ly)
        .map(|(a, b)| (a - mx) * (b - my))
        .sum::<f64>()
        / lx.iter().map(|a| (a - mx).powi(2)).sum::<f64>();
    assert!((slope + 0.5).abs() < 0.1, "slope {slope}, errors {errs:?}");
}

#[test]
fn random_features_are_seeded() {
    let a = RandomFourierFeatures::new(0.5, 3, 64, 9).unwrap();
    let b = RandomFourierFeatures::new(0.5, 3, 64, 9).unwrap();
    let c = RandomFourierFeatures::new(0.5, 3, 64, 10).unwrap();
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert_eq!(a.omega().shape(), (64, 3));
    assert!(
        a.phase()
            .iter()
            .all(|&v| (0.0..std::f64::consts::TAU).contains(&v))
    );
    assert!(RandomFourierFeatures::for_kernel(&Kernel::laplacian(1.0).unwrap(), 1, 8, 0).is_err());
    let via = RandomFourierFeatures::for_kernel(&Kernel::rbf(0.5).unwrap(), 3, 64, 9).unwrap();
    assert_eq!(via, a);
}

#[test]
fn expected_features_match_monte_carlo() {
    let rff = RandomFourierFeatures::new(0.8, 2, 40, 3).unwrap();
    let mean = [0.3, -0.7];
    let cov = DMatrix::from_row_slice(2, 2, &[0.5, 0.2, 0.2, 0.3]);
    let l = cov.clone().cholesky().unwrap().l();
    let mut rng = ChaCha8Rng::seed_from_u64(77);
    let n = 200_000;
    let mut acc = DVector::zeros(40);
    for _ in 0..n {
        let z = DVector::from_fn(2, |_, _| rng.sample::<f64, _>(StandardNormal));
        let x = &l * z + DVector::from_row_slice(&mean);
        acc += rff.features(x.as_slice()).unwrap();
    }
    acc /= n as f64;
    let closed = rff.expected_features(&mean, &cov).unwrap();
    // Each feature is bounded by sqrt(2/D) = 0.22; MC standard error <= 0.22/sqrt(n) = 5e-4.
    assert!(
        (&acc - &closed).amax() < 3e-3,
        "{}",
        (&acc - &closed).amax()
    );
    // Diagonal shortcut agrees with the full form.
    let diag = DMatrix::from_diagonal(&DVector::from_vec(vec![0.5, 0.3]));
    let a = rff.expected_features(&mean, &diag).unwrap();
    let b = rff.expected_features_diag(&mean, &[0.5, 0.3]).unwrap();
    assert!((a - b).amax() < 1e-15);
    assert!(rff.expected_features(&mean, &DMatrix::zeros(3, 3)).is_err());
}
