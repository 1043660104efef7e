//! HSIC (biased estimator) against the explicit trace formula.
use beliefscope::kernel::{
    Kernel, MedianHeuristic, Points, gram, hsic, hsic_points, median_heuristic,
};
use nalgebra::DMatrix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;

fn naive_hsic(k: &DMatrix<f64>, l: &DMatrix<f64>) -> f64 {
    let m = k.nrows();
    let h = DMatrix::identity(m, m) - DMatrix::from_element(m, m, 1.0 / m as f64);
    (k * &h * l * &h).trace() / ((m - 1) as f64).powi(2)
}

fn sample(m: usize, seed: u64, dependent: bool) -> (Vec<f64>, Vec<f64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x: Vec<f64> = (0..m).map(|_| rng.sample(StandardNormal)).collect();
    let y: Vec<f64> = x
        .iter()
        .map(|&v| {
            let noise: f64 = rng.sample(StandardNormal);
            if dependent {
                v * v + 0.3 * noise
            } else {
                noise
            }
        })
        .collect();
    (x, y)
}

#[test]
fn matches_trace_formula() {
    let (x, y) = sample(150, 1, true);
    let kx = gram(&Kernel::rbf(1.0).unwrap(), &Points::from_slice(&x)).unwrap();
    let ky = gram(&Kernel::laplacian(0.7).unwrap(), &Points::from_slice(&y)).unwrap();
    let h = hsic(&kx, &ky).unwrap();
    assert!((h - naive_hsic(&kx, &ky)).abs() < 1e-13);
    assert!((h - hsic(&ky, &kx).unwrap()).abs() < 1e-13);
}

#[test]
fn detects_nonlinear_dependence() {
    let stat = |dependent: bool| {
        let (x, y) = sample(300, 2, dependent);
        let (px, py) = (Points::from_slice(&x), Points::from_slice(&y));
        let sx = median_heuristic(&px, &MedianHeuristic::default()).unwrap();
        let sy = median_heuristic(&py, &MedianHeuristic::default()).unwrap();
        hsic_points(
            &Kernel::rbf(sx).unwrap(),
            &px,
            &Kernel::rbf(sy).unwrap(),
            &py,
        )
        .unwrap()
    };
    let (dep, ind) = (stat(true), stat(false));
    // y = x^2 + noise is uncorrelated with x but strongly dependent.
    assert!(dep > 5.0 * ind, "dependent {dep}, independent {ind}");
}

#[test]
fn errors() {
    let k = DMatrix::identity(4, 4);
    assert!(hsic(&k, &DMatrix::identity(5, 5)).is_err());
    assert!(hsic(&DMatrix::identity(1, 1), &DMatrix::identity(1, 1)).is_err());
    assert!(hsic(&DMatrix::zeros(3, 4), &DMatrix::zeros(3, 4)).is_err());
    let x = [0.0, 1.0, 2.0];
    let y = [0.0, 1.0];
    let k = Kernel::rbf(1.0).unwrap();
    assert!(hsic_points(&k, &Points::from_slice(&x), &k, &Points::from_slice(&y)).is_err());
}
