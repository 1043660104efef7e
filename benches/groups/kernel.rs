//! Kernel toolkit benchmarks (fixed seeds, fixed sizes):
//! * `kernel/gram_rbf_4000x2d`: symmetric RBF Gram matrix of 4,000 2-D points.
//! * `kernel/incomplete_cholesky_40000x1d`: incomplete Cholesky (RBF, sigma = 0.1 on gray
//!   levels scaled to [0, 1], epsilon = 1e-3) of the 40,000 neighbour values of a 100 x 100
//!   synthetic image (4 neighbours per pixel, edges replicated).
//! * `kernel/regularized_solve_2000`: factorise `K + lambda m I` (m = 2,000, 2-D RBF Gram)
//!   and solve one right-hand side.
//! * `kernel/gram_into_reused_4000x2d`: the same into a reused buffer (no allocation).
//! * `kernel/cross_gram_1000x4000x2d`, `kernel/median_heuristic_4000x2d`: supporting numbers.
use beliefscope::kernel::{
    IncompleteCholesky, IncompleteCholeskyOptions, Kernel, Lambda, MedianHeuristic, Points,
    RegularizedCholesky, cross_gram, gram, gram_into, median_heuristic,
};
use criterion::Criterion;
use nalgebra::DVector;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::StandardNormal;
use std::hint::black_box;

fn gaussian_points(n: usize, d: usize, seed: u64) -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n * d).map(|_| rng.sample(StandardNormal)).collect()
}

/// The 40,000 neighbour gray levels (scaled to [0, 1]) of a noisy synthetic 100 x 100 image.
fn image_neighbour_values() -> Vec<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let n = 100usize;
    let img: Vec<f64> = (0..n * n)
        .map(|p| {
            let (r, c) = ((p / n) as f64, (p % n) as f64);
            let clean = 128.0 + 90.0 * ((r / 13.0).sin() * (c / 17.0).cos());
            let noisy: f64 = clean + 20.0 * rng.sample::<f64, _>(StandardNormal);
            noisy.round().clamp(0.0, 255.0) / 255.0
        })
        .collect();
    let mut out = Vec::with_capacity(4 * n * n);
    for r in 0..n {
        for c in 0..n {
            for (dr, dc) in [(-1i64, 0i64), (1, 0), (0, -1), (0, 1)] {
                let rr = (r as i64 + dr).clamp(0, n as i64 - 1) as usize;
                let cc = (c as i64 + dc).clamp(0, n as i64 - 1) as usize;
                out.push(img[rr * n + cc]);
            }
        }
    }
    out
}

pub fn benches(c: &mut Criterion) {
    let mut g = c.benchmark_group("kernel");

    let x4000 = gaussian_points(4000, 2, 1);
    let p4000 = Points::from_row_major(&x4000, 2).unwrap();
    let rbf = Kernel::rbf(1.0).unwrap();
    g.bench_function("gram_rbf_4000x2d", |b| {
        b.iter(|| black_box(gram(&rbf, black_box(&p4000)).unwrap()))
    });

    let mut reused = gram(&rbf, &p4000).unwrap();
    g.bench_function("gram_into_reused_4000x2d", |b| {
        b.iter(|| gram_into(&rbf, black_box(&p4000), &mut reused).unwrap())
    });

    let x1000 = gaussian_points(1000, 2, 2);
    let p1000 = Points::from_row_major(&x1000, 2).unwrap();
    g.bench_function("cross_gram_1000x4000x2d", |b| {
        b.iter(|| black_box(cross_gram(&rbf, &p1000, &p4000).unwrap()))
    });

    g.bench_function("median_heuristic_4000x2d", |b| {
        b.iter(|| black_box(median_heuristic(&p4000, &MedianHeuristic::default()).unwrap()))
    });

    let img = image_neighbour_values();
    let pimg = Points::from_slice(&img);
    let rbf_img = Kernel::rbf(0.1).unwrap();
    let opts = IncompleteCholeskyOptions::with_epsilon(1e-3);
    let ic = IncompleteCholesky::new(&rbf_img, &pimg, &opts).unwrap();
    eprintln!(
        "kernel/incomplete_cholesky_40000x1d: m = {}, rank = {}, max residual = {:.2e}",
        img.len(),
        ic.rank(),
        ic.max_residual()
    );
    g.bench_function("incomplete_cholesky_40000x1d", |b| {
        b.iter(|| black_box(IncompleteCholesky::new(&rbf_img, black_box(&pimg), &opts).unwrap()))
    });

    let x2000 = gaussian_points(2000, 2, 3);
    let p2000 = Points::from_row_major(&x2000, 2).unwrap();
    let k2000 = gram(&rbf, &p2000).unwrap();
    let rhs = DVector::from_fn(2000, |i, _| (i as f64 * 0.01).sin());
    g.bench_function("regularized_solve_2000", |b| {
        b.iter(|| {
            let f = RegularizedCholesky::new(black_box(&k2000), Lambda::GramForm(1e-3)).unwrap();
            black_box(f.solve(&rhs).unwrap())
        })
    });
    g.finish();
}
