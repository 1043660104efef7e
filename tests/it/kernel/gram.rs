//! Kernels and Gram matrices: closed forms, symmetry, positive semidefiniteness.
use beliefscope::kernel::{
    Kernel, KernelError, Points, cross_gram, gram, gram_diagonal, gram_into, kernel_column,
};
use nalgebra::DMatrix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

fn normal_points(n: usize, d: usize, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n * d).map(|_| rng.sample(StandardNormal)).collect()
}

fn unit_sphere_points(n: usize, d: usize, seed: u64) -> Vec<f64> {
    let mut v = normal_points(n, d, seed);
    for row in v.chunks_mut(d) {
        let norm = row.iter().map(|x| x * x).sum::<f64>().sqrt();
        row.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

fn min_eigenvalue(k: &DMatrix<f64>) -> f64 {
    k.clone().symmetric_eigen().eigenvalues.min()
}

fn assert_symmetric_psd(name: &str, k: &DMatrix<f64>) {
    assert_eq!(k, &k.transpose(), "{name}: not exactly symmetric");
    let lmin = min_eigenvalue(k);
    assert!(lmin > -1e-10, "{name}: smallest eigenvalue {lmin}");
}

#[test]
fn gram_matrices_are_symmetric_psd() {
    for (d, seed) in [(1, 1), (2, 2), (3, 3), (5, 4)] {
        let x = normal_points(150, d, seed);
        let p = Points::from_row_major(&x, d).unwrap();
        for k in [
            Kernel::rbf(0.7).unwrap(),
            Kernel::rbf(3.0).unwrap(),
            Kernel::laplacian(1.0).unwrap(),
            Kernel::linear(),
            Kernel::polynomial(1.0, 3).unwrap(),
        ] {
            assert_symmetric_psd(&format!("{} d={d}", k.name()), &gram(&k, &p).unwrap());
        }
    }
}

#[test]
fn von_mises_fisher_gram_is_psd_on_the_sphere() {
    for (d, kappa) in [(2, 0.5), (3, 2.0), (3, 10.0), (4, 30.0)] {
        let x = unit_sphere_points(120, d, 7 + d as u64);
        let p = Points::from_row_major(&x, d).unwrap();
        let k = gram(&Kernel::von_mises_fisher(kappa).unwrap(), &p).unwrap();
        // Scale-aware: entries reach exp(kappa).
        let lmin = min_eigenvalue(&k);
        assert_eq!(k, k.transpose());
        assert!(lmin > -1e-10 * kappa.exp(), "vMF kappa={kappa}: {lmin}");
        assert!((k[(0, 0)] - kappa.exp()).abs() < 1e-12 * kappa.exp());
    }
}

#[test]
fn delta_and_product_grams_are_psd() {
    // Finite-set column (5 values) and a continuous column.
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let x: Vec<f64> = (0..200)
        .flat_map(|_| {
            let c: f64 = rng.random_range(0..5) as f64;
            let y: f64 = rng.sample(StandardNormal);
            [c, y, y * 0.5 + c]
        })
        .collect();
    let p = Points::from_row_major(&x, 3).unwrap();
    let delta = Kernel::product(vec![(vec![0], Kernel::delta())]).unwrap();
    let kd = gram(&delta, &p).unwrap();
    assert_symmetric_psd("delta", &kd);
    // Delta Gram = indicator of equal categories: rank 5.
    let eig = kd.clone().symmetric_eigen().eigenvalues;
    assert_eq!(eig.iter().filter(|&&l| l > 1e-8).count(), 5);
    let prod = Kernel::product(vec![
        (vec![0], Kernel::delta()),
        (vec![1], Kernel::rbf(0.8).unwrap()),
        (vec![1, 2], Kernel::laplacian(2.0).unwrap()),
    ])
    .unwrap();
    let kp = gram(&prod, &p).unwrap();
    assert_symmetric_psd("product", &kp);
    // Product = elementwise product of the factor Grams.
    let sub = |cols: &[usize]| {
        let v: Vec<f64> = p.rows().flat_map(|r| cols.iter().map(|&c| r[c])).collect();
        Points::from_vec(v, cols.len()).unwrap()
    };
    let k1 = gram(&Kernel::rbf(0.8).unwrap(), &sub(&[1])).unwrap();
    let k2 = gram(&Kernel::laplacian(2.0).unwrap(), &sub(&[1, 2])).unwrap();
    let want = kd.component_mul(&k1).component_mul(&k2);
    assert!((kp - want).amax() < 1e-14);
}

#[test]
fn rbf_closed_form_and_conventions() {
    let x = [0.0, 0.0, 1.0, 2.0, -1.0, 0.5];
    let p = Points::from_row_major(&x, 2).unwrap();
    let sigma = 1.3;
    let k = gram(&Kernel::rbf(sigma).unwrap(), &p).unwrap();
    let s = beliefscope::kernel::s_from_sigma(sigma);
    let by_s = gram(&Kernel::rbf_from_s(s).unwrap(), &p).unwrap();
    for i in 0..3 {
        for j in 0..3 {
            let sq: f64 = (0..2).map(|c| (x[2 * i + c] - x[2 * j + c]).powi(2)).sum();
            assert!((k[(i, j)] - (-sq / (2.0 * sigma * sigma)).exp()).abs() < 1e-15);
            assert!((by_s[(i, j)] - (-s * sq).exp()).abs() < 1e-14);
        }
    }
}

#[test]
fn powered_rbf_is_rbf_with_smaller_bandwidth() {
    let x = normal_points(60, 1, 5);
    let p = Points::from_slice(&x);
    let k = Kernel::rbf(0.9).unwrap();
    let k3 = k.powered(3).unwrap();
    assert_eq!(
        k3,
        Kernel::Rbf {
            sigma: 0.9 / 3f64.sqrt()
        }
    );
    let g = gram(&k, &p).unwrap();
    let g3 = gram(&k3, &p).unwrap();
    assert!((g.map(|v| v.powi(3)) - g3).amax() < 1e-14);
}

#[test]
fn cross_gram_blocks_and_columns_agree_with_gram() {
    let x = normal_points(300, 2, 11);
    let p = Points::from_row_major(&x, 2).unwrap();
    let k = Kernel::rbf(1.1).unwrap();
    let g = gram(&k, &p).unwrap();
    let a = p.select(&(0..120).collect::<Vec<_>>()).unwrap();
    let b = p.select(&(100..300).collect::<Vec<_>>()).unwrap();
    let c = cross_gram(&k, &a, &b).unwrap();
    assert_eq!(c.shape(), (120, 200));
    assert_eq!(c, g.view((0, 100), (120, 200)));
    assert_eq!(kernel_column(&k, &p, p.row(42)).unwrap(), g.column(42));
    assert!(gram_diagonal(&k, &p).unwrap().iter().all(|&v| v == 1.0));
    // gram_into: reallocates on a shape change, reuses otherwise, same values.
    let mut buf = DMatrix::from_element(3, 3, f64::NAN);
    gram_into(&k, &p, &mut buf).unwrap();
    assert_eq!(buf, g);
    let k2 = Kernel::laplacian(0.4).unwrap();
    gram_into(&k2, &p, &mut buf).unwrap();
    assert_eq!(buf, gram(&k2, &p).unwrap());
}

#[test]
fn large_one_dimensional_cross_gram() {
    // 10,000 1-D support points against 64 evaluation points (the gray-level use case).
    let x: Vec<f64> = (0..10_000).map(|i| ((i * 7919) % 256) as f64).collect();
    let e: Vec<f64> = (0..64).map(|i| i as f64 * 4.0).collect();
    let k = Kernel::rbf(12.0).unwrap();
    let c = cross_gram(&k, &Points::from_slice(&e), &Points::from_slice(&x)).unwrap();
    assert_eq!(c.shape(), (64, 10_000));
    assert_eq!(c[(3, 9_999)], k.eval(&[e[3]], &[x[9_999]]));
}

#[test]
fn points_from_matrix_equal_row_major() {
    let m = DMatrix::from_fn(7, 3, |i, j| (i * 3 + j) as f64 * 0.1);
    let a = Points::from_matrix(&m);
    let flat: Vec<f64> = (0..21).map(|v| v as f64 * 0.1).collect();
    let b = Points::from_row_major(&flat, 3).unwrap();
    assert_eq!(a.as_slice(), b.as_slice());
    let k = Kernel::laplacian(0.5).unwrap();
    assert_eq!(gram(&k, &a).unwrap(), gram(&k, &b).unwrap());
}

#[test]
fn errors_name_the_problem() {
    let e = Kernel::rbf(0.0).unwrap_err();
    assert!(matches!(e, KernelError::InvalidParameter { .. }));
    let msg = e.to_string();
    assert!(
        msg.contains("bandwidth") && msg.contains("positive") && msg.ends_with("got 0"),
        "{msg}"
    );
    let x = [1.0, f64::NAN, 3.0];
    let msg = gram(&Kernel::linear(), &Points::from_slice(&x))
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("non-finite") && msg.contains("NaN") && msg.contains("index 1"),
        "{msg}"
    );
    let p2 = Points::from_row_major(&[0.0, 1.0], 2).unwrap();
    let prod = Kernel::product(vec![(vec![2], Kernel::linear())]).unwrap();
    assert!(matches!(
        gram(&prod, &p2),
        Err(KernelError::IndexOutOfRange { index: 2, .. })
    ));
    let nested = Kernel::Product(vec![beliefscope::kernel::ProductFactor {
        columns: vec![0],
        kernel: Kernel::Product(vec![]),
    }]);
    assert!(nested.check().is_err());
}

#[test]
fn kernel_serde_roundtrip() {
    let k = Kernel::product(vec![
        (vec![0], Kernel::rbf(0.5).unwrap()),
        (vec![1, 2], Kernel::polynomial(1.0, 2).unwrap()),
    ])
    .unwrap();
    let s = serde_json::to_string(&k).unwrap();
    let back: Kernel = serde_json::from_str(&s).unwrap();
    assert_eq!(k, back);
}
