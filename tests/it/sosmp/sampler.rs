//! The inverse-CDF cell sampler reproduces known densities (Kolmogorov-Smirnov).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use beliefscope::inference::sosmp::grid::{CellSampler, IntervalGrid, StateGrid};

/// The KS statistic of sorted samples against a CDF.
fn ks(mut xs: Vec<f64>, cdf: impl Fn(f64) -> f64) -> f64 {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let n = xs.len() as f64;
    xs.iter()
        .enumerate()
        .map(|(i, &x)| {
            let f = cdf(x);
            (f - i as f64 / n).abs().max(((i + 1) as f64 / n - f).abs())
        })
        .fold(0.0, f64::max)
}

fn draw(grid: &IntervalGrid, density: &[f64], n: usize, seed: u64) -> Vec<f64> {
    let mut s = CellSampler::new(grid.num_cells());
    let total = s.prepare(grid, density);
    assert!(total > 0.0);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let smp = s.draw(grid, &mut rng);
            let mut x = [0.0];
            grid.coordinates(&smp, &mut x);
            x[0]
        })
        .collect()
}

/// 1.95 / sqrt(n) is the 0.001 critical value of the one-sample KS statistic.
fn ks_bound(n: usize) -> f64 {
    1.95 / (n as f64).sqrt()
}

#[test]
fn sampler_follows_the_cell_rule_exactly_on_a_coarse_grid() {
    // Ten cells with zeros, jumps and a spike, so a wrong cell, a wrong within-cell position or
    // a mishandled empty cell moves the CDF by a whole cell mass (>= 0.02), far above the bound.
    let grid = IntervalGrid::new(0.0, 10.0, 11).unwrap();
    let density = [0.0, 1.0, 3.0, 0.0, 0.0, 2.0, 5.0, 1.0, 0.0, 4.0, 1.0];
    let masses: Vec<f64> = (0..10)
        .map(|c| 0.5 * (density[c] + density[c + 1]))
        .collect();
    let total: f64 = masses.iter().sum();
    let cdf = |x: f64| {
        let c = (x.floor() as usize).min(9);
        let before: f64 = masses[..c].iter().sum();
        (before + masses[c] * (x - c as f64)) / total
    };
    let n = 100_000;
    let d = ks(draw(&grid, &density, n, 11), cdf);
    assert!(d < ks_bound(n), "KS {d} >= {}", ks_bound(n));
}

#[test]
fn sampler_reproduces_a_smooth_density_on_the_default_grid() {
    // p(y) ∝ exp(y / 2) on [-5, 5]; the cell rule's CDF is within O(h²) ≈ 1e-5 of the exact one.
    let grid = IntervalGrid::with_density(-5.0, 5.0, 100.0).unwrap();
    let density: Vec<f64> = grid.points().iter().map(|&y| (0.5 * y).exp()).collect();
    let (lo, hi) = ((-2.5f64).exp(), (2.5f64).exp());
    let cdf = |y: f64| ((0.5 * y).exp() - lo) / (hi - lo);
    let n = 50_000;
    let d = ks(draw(&grid, &density, n, 5), cdf);
    assert!(d < ks_bound(n) + 1e-4, "KS {d}");
}

#[test]
fn sampler_reproduces_a_two_bump_density() {
    // A bimodal density with a zero gap between its bumps (the clipped messages look like this):
    // p(y) = max(0, cos(y)) on [-5, 5], whose CDF is piecewise known.
    let grid = IntervalGrid::with_density(-5.0, 5.0, 100.0).unwrap();
    let density: Vec<f64> = grid.points().iter().map(|&y| y.cos().max(0.0)).collect();
    let hp = std::f64::consts::FRAC_PI_2;
    // Positive on [-5, -3π/2], [-π/2, π/2], [3π/2, 5].
    let antiderivative = |y: f64| -> f64 {
        let mut s = 0.0;
        for (a, b) in [(-5.0, -3.0 * hp), (-hp, hp), (3.0 * hp, 5.0)] {
            if y > a {
                s += y.min(b).sin() - f64::sin(a);
            }
        }
        s
    };
    let total = antiderivative(5.0);
    let n = 50_000;
    let d = ks(draw(&grid, &density, n, 9), |y| antiderivative(y) / total);
    assert!(d < ks_bound(n) + 1e-4, "KS {d}");
}
