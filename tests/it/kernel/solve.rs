//! Regularised solves against dense LU, jitter reporting, lambda conventions.
use beliefscope::kernel::{
    JitterPolicy, Kernel, KernelError, Lambda, Points, RegularizedCholesky, gram, regularized_solve,
};
use nalgebra::{DMatrix, DVector};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

fn rbf_gram(m: usize, d: usize, sigma: f64, seed: u64) -> DMatrix<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x: Vec<f64> = (0..m * d).map(|_| rng.sample(StandardNormal)).collect();
    gram(
        &Kernel::rbf(sigma).unwrap(),
        &Points::from_row_major(&x, d).unwrap(),
    )
    .unwrap()
}

fn lu_solve(k: &DMatrix<f64>, diag: f64, b: &DMatrix<f64>) -> DMatrix<f64> {
    let a = k + DMatrix::identity(k.nrows(), k.nrows()) * diag;
    a.lu().solve(b).unwrap()
}

fn rel_err(a: &DMatrix<f64>, b: &DMatrix<f64>) -> f64 {
    (a - b).norm() / b.norm()
}

#[test]
fn agrees_with_dense_lu() {
    for (m, d, lambda) in [
        (50, 1, Lambda::GramForm(1e-3)),
        (300, 2, Lambda::GramForm(1e-4)),
        (300, 3, Lambda::OperatorForm(1e-2)),
        (700, 2, Lambda::GramForm(1e-3)),
    ] {
        let k = rbf_gram(m, d, 1.0, m as u64);
        let b = DVector::from_fn(m, |i, _| (i as f64 * 0.37).sin());
        let (x, report) = regularized_solve(&k, lambda, &b).unwrap();
        assert_eq!(report.jitter, 0.0);
        assert_eq!(report.attempts, 1);
        assert_eq!(report.lambda_diagonal, lambda.diagonal(m));
        let want = lu_solve(
            &k,
            lambda.diagonal(m),
            &DMatrix::from_column_slice(m, 1, b.as_slice()),
        );
        let err = rel_err(&DMatrix::from_column_slice(m, 1, x.as_slice()), &want);
        assert!(err < 1e-9, "m={m}: {err}");
    }
}

#[test]
fn many_right_hand_sides() {
    let m = 400;
    let k = rbf_gram(m, 2, 0.8, 3);
    let f = RegularizedCholesky::new(&k, Lambda::GramForm(1e-3)).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let b = DMatrix::from_fn(m, 37, |_, _| rng.sample::<f64, _>(StandardNormal));
    let x = f.solve_matrix(&b).unwrap();
    let want = lu_solve(&k, 0.4, &b);
    assert!(rel_err(&x, &want) < 1e-9);
    // Column-by-column equals the block solve.
    for j in [0, 17, 36] {
        let xj = f.solve(&b.column(j).into_owned()).unwrap();
        assert!((xj - x.column(j)).amax() < 1e-10);
    }
    // (K + lambda I)^{-1} K for the conditional embedding: residual check.
    let xk = f.solve_matrix(&k).unwrap();
    let a = &k + DMatrix::identity(m, m) * 0.4;
    assert!((a * xk - &k).amax() < 1e-9);
}

#[test]
fn lambda_conventions() {
    let m = 120;
    let k = rbf_gram(m, 2, 1.0, 6);
    let b = DVector::from_element(m, 1.0);
    let g = Lambda::GramForm(1e-3);
    let o = g.to_operator_form(m);
    assert_eq!(o, Lambda::OperatorForm(0.12));
    assert!((o.to_gram_form(m).value() - 1e-3).abs() < 1e-18);
    let xg = regularized_solve(&k, g, &b).unwrap().0;
    let xo = regularized_solve(&k, o, &b).unwrap().0;
    assert_eq!(xg, xo);
    assert!(Lambda::GramForm(-1.0).check().is_err());
    assert!(Lambda::OperatorForm(f64::NAN).check().is_err());
    assert!(RegularizedCholesky::new(&k, Lambda::GramForm(-1.0)).is_err());
}

#[test]
fn jitter_is_reported_when_needed() {
    // 60 points with only 6 distinct values: the Gram matrix has rank 6.
    let x: Vec<f64> = (0..60).map(|i| (i % 6) as f64).collect();
    let k = gram(&Kernel::rbf(1.0).unwrap(), &Points::from_slice(&x)).unwrap();
    let f = RegularizedCholesky::new(&k, Lambda::OperatorForm(0.0)).unwrap();
    let r = *f.report();
    assert!(r.jittered() && r.attempts > 1, "{r:?}");
    assert!(r.jitter > 0.0 && r.jitter <= 1e-4);
    // The factor is of K + jitter I.
    let l = f.l();
    assert!((&l * l.transpose() - (&k + DMatrix::identity(60, 60) * r.jitter)).amax() < 1e-12);
    // Enough regularisation: no jitter.
    let g = RegularizedCholesky::new(&k, Lambda::GramForm(1e-3)).unwrap();
    assert!(!g.report().jittered());
    // No jitter allowed: a clear error.
    let none = RegularizedCholesky::with_policy(
        k.clone(),
        Lambda::OperatorForm(0.0),
        &JitterPolicy::none(),
    );
    assert!(matches!(
        none,
        Err(KernelError::NotPositiveDefinite { size: 60, .. })
    ));
    // Indefinite beyond the bound.
    let mut bad = DMatrix::identity(5, 5);
    bad[(4, 4)] = -0.5;
    let e = RegularizedCholesky::new(&bad, Lambda::OperatorForm(0.0)).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("not positive definite") && msg.contains("size 5"),
        "{msg}"
    );
}

#[test]
fn condition_estimate_is_close() {
    let m = 200;
    let k = rbf_gram(m, 2, 1.0, 8);
    for lambda in [1e-2, 1e-4] {
        let f = RegularizedCholesky::new(&k, Lambda::GramForm(lambda)).unwrap();
        let eig = (&k + DMatrix::identity(m, m) * (lambda * m as f64)).symmetric_eigen();
        let exact = eig.eigenvalues.max() / eig.eigenvalues.min();
        let est = f.condition_estimate();
        assert!(
            est <= exact * (1.0 + 1e-9) && est > 0.5 * exact,
            "{est} vs {exact}"
        );
        assert!(f.report().diagonal_condition_bound <= exact * (1.0 + 1e-9));
        let logdet: f64 = eig.eigenvalues.iter().map(|v| v.ln()).sum();
        assert!((f.log_det() - logdet).abs() < 1e-8 * logdet.abs().max(1.0));
    }
}

#[test]
fn input_errors() {
    let k = rbf_gram(10, 1, 1.0, 1);
    let f = RegularizedCholesky::new(&k, Lambda::GramForm(1e-3)).unwrap();
    assert!(matches!(
        f.solve(&DVector::zeros(9)),
        Err(KernelError::DimensionMismatch {
            expected: 10,
            got: 9,
            ..
        })
    ));
    let mut nan = DVector::zeros(10);
    nan[3] = f64::NAN;
    assert!(matches!(
        f.solve(&nan),
        Err(KernelError::NonFinite { index: 3, .. })
    ));
    assert!(matches!(
        RegularizedCholesky::new(&DMatrix::zeros(3, 4), Lambda::GramForm(1e-3)),
        Err(KernelError::NotSquare { .. })
    ));
    let mut knan = k.clone();
    knan[(2, 1)] = f64::INFINITY;
    assert!(RegularizedCholesky::new(&knan, Lambda::GramForm(1e-3)).is_err());
    // Empty system.
    let e = RegularizedCholesky::new(&DMatrix::zeros(0, 0), Lambda::GramForm(1e-3)).unwrap();
    assert_eq!(e.solve(&DVector::zeros(0)).unwrap().len(), 0);
}
