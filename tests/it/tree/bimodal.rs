//! Tree kernel BP on sharp bimodal posteriors: `x1 ~ N(0, a²)`,
//! `x2 = x1² + N(0, s²)`, evidence `x2 = y`; the exact posterior
//! `p(x1 | y) ∝ N(x1; 0, a²) N(y; x1², s²)` has two modes at `±√y` with std about `s / (2√y)`.
//! `where_the_error_comes_from` (ignored) prints the pieces of the belief's L1 error.

use std::collections::BTreeMap;

use beliefscope::inference::kbp::Bandwidth;
use beliefscope::inference::tree_kbp::{BandwidthRule, NodeKernelSettings};
use beliefscope::scenarios::CancelFlag;
use beliefscope::scenarios::tree::{DataSource, Topology, TreeConfig, TreeScenario};

/// A squared chain: prior std `a`, noise std `s`, evidence `y`.
#[derive(Debug, Clone, Copy)]
pub struct SquaredChain {
    pub a: f64,
    pub s: f64,
    pub y: f64,
}

impl SquaredChain {
    /// The sharp case: modes at ±2, std about 0.15.
    pub const ISSUE: SquaredChain = SquaredChain {
        a: 1.5,
        s: 0.6,
        y: 4.0,
    };

    fn write_csv(&self, path: &std::path::Path, rows: usize, seed: u64) {
        use rand::SeedableRng;
        use rand_distr::{Distribution, StandardNormal};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut text = String::from("x1,x2\n");
        for _ in 0..rows {
            let z1: f64 = StandardNormal.sample(&mut rng);
            let z2: f64 = StandardNormal.sample(&mut rng);
            let x1 = self.a * z1;
            text.push_str(&format!("{x1},{}\n", x1 * x1 + self.s * z2));
        }
        std::fs::write(path, text).unwrap();
    }

    /// The posterior with the evidence blurred by a Gaussian of std `blur` (0: exact),
    /// normalised on the grid `xs`.
    fn posterior(&self, xs: &[f64], blur: f64) -> Vec<f64> {
        let v = self.s * self.s + blur * blur;
        let p: Vec<f64> = xs
            .iter()
            .map(|&x| {
                (-x * x / (2.0 * self.a * self.a) - (self.y - x * x).powi(2) / (2.0 * v)).exp()
            })
            .collect();
        normalise(&p, xs[1] - xs[0])
    }

    /// The unnormalised likelihood `N(y; x², s²)` of `x1 = x`.
    fn likelihood(&self, x: f64) -> f64 {
        (-(self.y - x * x).powi(2) / (2.0 * self.s * self.s)).exp()
    }
}

fn normalise(p: &[f64], dx: f64) -> Vec<f64> {
    let z: f64 = p.iter().sum::<f64>() * dx;
    p.iter().map(|v| v / z).collect()
}

fn l1(p: &[f64], q: &[f64], dx: f64) -> f64 {
    p.iter().zip(q).map(|(a, b)| (a - b).abs()).sum::<f64>() * dx
}

/// A built squared-chain run (x1 node 0, x2 node 1), messages computed.
pub fn squared_chain_run(
    case: SquaredChain,
    rows: usize,
    m: usize,
    seed: u64,
    kernel: NodeKernelSettings,
    node_kernels: BTreeMap<String, NodeKernelSettings>,
) -> TreeScenario {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sq.csv");
    case.write_csv(&path, rows, seed);
    let config = TreeConfig {
        data: DataSource::Csv { path },
        topology: Topology::Chain,
        evidence: BTreeMap::from([("x2".to_string(), vec![case.y])]),
        sample_seed: seed,
        samples_per_edge: m,
        kernel,
        node_kernels,
        ..TreeConfig::default()
    };
    let mut s = TreeScenario::new(config, &CancelFlag::default()).unwrap();
    s.run_all().unwrap();
    s
}

/// Weighted Gaussian KDE of `points` with weights `w` (>= 0) at `xs`, normalised.
fn weighted_kde(points: &[f64], w: &[f64], h: f64, xs: &[f64]) -> Vec<f64> {
    let p: Vec<f64> = xs
        .iter()
        .map(|&x| {
            points
                .iter()
                .zip(w)
                .map(|(b, wi)| wi * (-(x - b).powi(2) / (2.0 * h * h)).exp())
                .sum::<f64>()
        })
        .collect();
    normalise(&p, xs[1] - xs[0])
}

/// Weighted leave-one-out log likelihood of a Gaussian KDE of width `h`.
fn weighted_loo(points: &[f64], w: &[f64], h: f64) -> f64 {
    let total: f64 = w.iter().sum();
    let c = 1.0 / (h * (2.0 * std::f64::consts::PI).sqrt());
    let mut score = 0.0;
    for (i, (&bi, &wi)) in points.iter().zip(w).enumerate() {
        if wi <= 0.0 {
            continue;
        }
        let mut f = 0.0;
        for (j, (&bj, &wj)) in points.iter().zip(w).enumerate() {
            if j != i {
                f += wj * c * (-(bi - bj).powi(2) / (2.0 * h * h)).exp();
            }
        }
        score += wi * (f / (total - wi)).max(1e-300).ln();
    }
    score / total
}

fn h_grid() -> Vec<f64> {
    (0..50)
        .map(|i| 0.01 * (300.0f64).powf(i as f64 / 49.0))
        .collect()
}

/// (L1 at the weighted-LOO-CV h, that h, best L1 over h, its h, effective sample size).
fn readout(case: SquaredChain, points: &[f64], w: &[f64], xs: &[f64]) -> [f64; 5] {
    let (pts, ws): (Vec<f64>, Vec<f64>) = points
        .iter()
        .zip(w)
        .filter(|(_, w)| **w > 0.0)
        .map(|(p, w)| (*p, *w))
        .unzip();
    let dx = xs[1] - xs[0];
    let exact = case.posterior(xs, 0.0);
    let grid = h_grid();
    let cv = grid
        .iter()
        .copied()
        .max_by(|a, b| weighted_loo(&pts, &ws, *a).total_cmp(&weighted_loo(&pts, &ws, *b)))
        .unwrap();
    let l1_cv = l1(&weighted_kde(&pts, &ws, cv, xs), &exact, dx);
    let (best, h_best) = grid
        .iter()
        .map(|&h| (l1(&weighted_kde(&pts, &ws, h, xs), &exact, dx), h))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .unwrap();
    let s1: f64 = ws.iter().sum();
    let s2: f64 = ws.iter().map(|w| w * w).sum();
    [l1_cv, cv, best, h_best, s1 * s1 / s2]
}

fn env_list(name: &str, default: &str) -> Vec<f64> {
    std::env::var(name)
        .unwrap_or_else(|_| default.to_string())
        .split(',')
        .map(|v| v.trim().parse().unwrap())
        .collect()
}

/// Prints, per (rows, m, seed) and bandwidth choice: the Parzen belief's L1 (`parzen`); the
/// same message times the exact prior (`exact-prior`: the message's own error); the weighted
/// samples as a KDE with the weighted-LOO-CV width and with the best width (`wkde cv/best`);
/// the belief samples with the exact likelihood as weights (`ideal`: the sample-size floor of
/// a weighted read-out); the closed-form blur of the evidence by σ(x2) (`blur`).
/// `DIAG_ROWS`, `DIAG_M`, `DIAG_SEEDS`, `DIAG_S1`, `DIAG_S2`, `DIAG_LAMBDA`, `DIAG_CASE=a,s,y`.
#[test]
#[ignore = "diagnostic: prints where the bimodal belief's error comes from"]
fn where_the_error_comes_from() {
    let c = env_list("DIAG_CASE", "1.5,0.6,4");
    let case = SquaredChain {
        a: c[0],
        s: c[1],
        y: c[2],
    };
    let lambda = env_list("DIAG_LAMBDA", "3")[0];
    let s1s = env_list("DIAG_S1", "0.1,0.2,0.3");
    let s2s = env_list("DIAG_S2", "0.1,0.2,0.3,0.45,0.6");
    for rows in env_list("DIAG_ROWS", "1000") {
        for m in env_list("DIAG_M", "300") {
            for seed in env_list("DIAG_SEEDS", "0,1,2") {
                let (rows, m, seed) = (rows as usize, m as usize, seed as u64);
                let base = NodeKernelSettings {
                    lambda,
                    ..NodeKernelSettings::default()
                };
                let mut choices: Vec<(String, NodeKernelSettings, BTreeMap<_, _>)> = vec![
                    ("loo-cv".into(), base, BTreeMap::new()),
                    (
                        "median".into(),
                        NodeKernelSettings {
                            rule: BandwidthRule::Median,
                            ..base
                        },
                        BTreeMap::new(),
                    ),
                ];
                for &s1 in &s1s {
                    for &s2 in &s2s {
                        let k = |v| NodeKernelSettings {
                            bandwidth: Bandwidth::Value(v),
                            ..base
                        };
                        choices.push((
                            format!("({s1}, {s2})"),
                            base,
                            BTreeMap::from([("x1".to_string(), k(s1)), ("x2".to_string(), k(s2))]),
                        ));
                    }
                }
                let mut best = [f64::INFINITY; 3];
                for (label, kernel, nodes) in choices {
                    let s = squared_chain_run(case, rows, m, seed, kernel, nodes);
                    let xs = s.curves(0).unwrap().xs.to_vec();
                    let dx = xs[1] - xs[0];
                    let exact = case.posterior(&xs, 0.0);
                    let parzen = l1(&s.curves(0).unwrap().parzen, &exact, dx);
                    let belief = s.engine().belief(0).unwrap();
                    let model = &s.problem().model;
                    let prior = model.prior(0);
                    let exact_prior: Vec<f64> = xs
                        .iter()
                        .zip(prior)
                        .zip(&belief.parzen)
                        .map(|((&x, &p), &b)| {
                            let g = (-x * x / (2.0 * case.a * case.a)).exp();
                            if p > 1e-300 { b / p * g } else { 0.0 }
                        })
                        .collect();
                    let exact_prior = l1(&normalise(&exact_prior, dx), &exact, dx);
                    let nm = model.node(0);
                    let points = nm.sets[nm.belief_set].points.as_slice().to_vec();
                    let w: Vec<f64> = belief.weights.iter().map(|w| w.max(0.0)).collect();
                    let wk = readout(case, &points, &w, &xs);
                    let ideal_w: Vec<f64> = points.iter().map(|&x| case.likelihood(x)).collect();
                    let ideal = readout(case, &points, &ideal_w, &xs);
                    let sig: Vec<f64> = s
                        .problem()
                        .kernels
                        .iter()
                        .map(|k| k.sigma.unwrap())
                        .collect();
                    let blur = l1(&case.posterior(&xs, sig[1]), &exact, dx);
                    best[0] = best[0].min(parzen);
                    best[1] = best[1].min(wk[0]);
                    best[2] = best[2].min(exact_prior);
                    eprintln!(
                        "rows {rows} m {m} seed {seed} {label:>12} σ ({:.3}, {:.3}): parzen {parzen:.3} \
                         exact-prior {exact_prior:.3} wkde cv {:.3} (h {:.3}) best {:.3} (h {:.3}) ess {:.0} \
                         | ideal cv {:.3} (h {:.3}) best {:.3} ess {:.0} | blur {blur:.3}",
                        sig[0],
                        sig[1],
                        wk[0],
                        wk[1],
                        wk[2],
                        wk[3],
                        wk[4],
                        ideal[0],
                        ideal[1],
                        ideal[2],
                        ideal[4]
                    );
                }
                eprintln!(
                    "rows {rows} m {m} seed {seed} BEST over choices: parzen {:.3}, wkde cv {:.3}, exact-prior {:.3}",
                    best[0], best[1], best[2]
                );
            }
        }
    }
}

/// Modes at ±1.5 (closer), noise std 0.45: posterior modes with std about 0.15, another
/// separation and noise than the issue's case.
const CLOSER_MODES: SquaredChain = SquaredChain {
    a: 1.5,
    s: 0.45,
    y: 2.25,
};

/// The L1 distance of `x1`'s Parzen belief to the exact posterior, and the belief's effective
/// sample size.
fn l1_and_ess(
    case: SquaredChain,
    rows: usize,
    m: usize,
    seed: u64,
    kernel: NodeKernelSettings,
) -> (f64, f64) {
    let s = squared_chain_run(case, rows, m, seed, kernel, BTreeMap::new());
    let c = s.curves(0).unwrap();
    let dx = c.xs[1] - c.xs[0];
    let exact = case.posterior(&c.xs, 0.0);
    // The exact posterior must lie inside the grid for the distance to mean anything.
    assert!(exact[0] < 1e-6 && exact[c.xs.len() - 1] < 1e-6);
    (l1(&c.parzen, &exact, dx), s.beliefs()[0].effective_samples)
}

/// The target is L1 < 0.35 on a sharp bimodal posterior. At 300 samples per edge (the
/// earlier default) no bandwidth gets there on every seed (`where_the_error_comes_from`: the best of 15
/// fixed pairs is 0.30 / 0.27 / 0.34 on seeds 0-2, and even the exact likelihood as weights
/// on the 300 belief samples gives 0.34 on seed 0): the belief rests on about 50 effective
/// samples. With 2000 rows, every row an edge sample (m = rows), the LOO-CV default gets below
/// 0.35 and the median heuristic stays above 0.6 (at 1000 rows, m = 1000: LOO-CV 0.15-0.34
/// on seeds 0-7, too close to the target to assert). Checked on a second case with other
/// noise and mode separation.
#[test]
fn the_default_bandwidth_resolves_sharp_bimodal_posteriors_with_enough_samples() {
    let default = NodeKernelSettings::default();
    let median = NodeKernelSettings {
        rule: BandwidthRule::Median,
        ..default
    };
    let rows = 2000;
    for (name, case, seeds) in [
        ("modes ±2, noise 0.6", SquaredChain::ISSUE, 0..5),
        ("modes ±1.5, noise 0.45", CLOSER_MODES, 0..5),
    ] {
        for seed in seeds {
            let (l1_cv, ess) = l1_and_ess(case, rows, rows, seed, default);
            let (l1_median, _) = l1_and_ess(case, rows, rows, seed, median);
            eprintln!(
                "{name}, seed {seed}: L1 loo-cv {l1_cv:.3} ({ess:.0} effective samples), \
                 median x 0.35 {l1_median:.3}"
            );
            assert!(l1_cv < 0.35, "{name}, seed {seed}: L1 {l1_cv} by LOO-CV");
            // The median rule was above 0.55 before the belief was clipped at 0,
            // which helps every rule.
            assert!(
                l1_median > 0.4 && l1_median > 1.5 * l1_cv,
                "{name}, seed {seed}: median rule L1 {l1_median} against LOO-CV {l1_cv}"
            );
        }
    }
}

/// The belief says how many samples it rests on (window and results.json): few at the default
/// m on a sharp posterior, about three times as many with every row.
#[test]
fn a_sharp_belief_reports_its_effective_sample_size() {
    let kernel = NodeKernelSettings::default();
    let (l1_300, ess_300) = l1_and_ess(SquaredChain::ISSUE, 1000, 300, 0, kernel);
    let (l1_all, ess_all) = l1_and_ess(SquaredChain::ISSUE, 1000, 1000, 0, kernel);
    eprintln!("m 300: L1 {l1_300:.3}, ESS {ess_300:.1}; m 1000: L1 {l1_all:.3}, ESS {ess_all:.1}");
    // Measured 47 and 134 (seed 0); the posterior holds about 13% of the prior's mass.
    assert!((20.0..100.0).contains(&ess_300), "ESS {ess_300} at m = 300");
    assert!(ess_all > 2.0 * ess_300, "ESS {ess_all} at m = 1000");
    assert!(l1_all < l1_300);

    let s = squared_chain_run(SquaredChain::ISSUE, 1000, 300, 0, kernel, BTreeMap::new());
    let view = s.tree_view(None);
    assert_eq!(view.nodes[0].belief_samples, 300);
    assert!((view.nodes[0].effective_samples - ess_300).abs() < 1e-9);
    assert_eq!(view.nodes[1].effective_samples, 0.0, "x2 is observed");
    let report =
        serde_json::to_value(beliefscope::scenarios::tree::report::TreeReport::of(&s)).unwrap();
    let q = &report["queries"]["x1"];
    assert_eq!(q["belief_samples"], 300);
    assert!((q["effective_samples"].as_f64().unwrap() - ess_300).abs() < 1e-9);
}

#[test]
fn effective_sample_size_counts_positive_weights() {
    use beliefscope::inference::tree_kbp::effective_sample_size;
    assert_eq!(effective_sample_size(&[1.0, 1.0, 0.0, -1.0]), 2.0);
    assert!((effective_sample_size(&[1.0, 0.5]) - 1.8).abs() < 1e-12);
    assert_eq!(effective_sample_size(&[-1.0, 0.0]), 0.0);
}

/// Does a read-out over all rows help (the messages evaluated at every row of the
/// node, a weighted Parzen window over them), and how does the Parzen belief move with the
/// samples per edge and λ? Prints per (m, λ, seed): the Parzen belief's L1 (`parzen`), the same
/// clipped at 0 (`parzen+`), the weighted KDE over all rows with weights `m(x_i)⁺` at the
/// node's σ and at the best width (`rows`), the exact likelihood as weights on all rows at the
/// node's σ (`ideal`), the effective sample sizes over all rows and over the belief samples,
/// and the model's set-up seconds. `DIAG_M`, `DIAG_LAMBDA`, `DIAG_SEEDS`, `DIAG_ROWS`,
/// `DIAG_CASE=a,s,y`.
#[test]
#[ignore = "diagnostic: read-out over all rows against more samples per edge"]
fn readout_over_rows_against_samples_per_edge() {
    use beliefscope::inference::tree_kbp::Message;
    use beliefscope::kernel::cross_gram;
    let c = env_list("DIAG_CASE", "1.5,0.6,4");
    let case = SquaredChain {
        a: c[0],
        s: c[1],
        y: c[2],
    };
    let rows = env_list("DIAG_ROWS", "1000")[0] as usize;
    for m in env_list("DIAG_M", "300") {
        for lambda in env_list("DIAG_LAMBDA", "3") {
            let mut sums = [0.0; 5];
            let seeds = env_list("DIAG_SEEDS", "0,1,2,3,4,5,6,7");
            for &seed in &seeds {
                let kernel = NodeKernelSettings {
                    lambda,
                    ..NodeKernelSettings::default()
                };
                let s =
                    squared_chain_run(case, rows, m as usize, seed as u64, kernel, BTreeMap::new());
                let c = s.curves(0).unwrap();
                let xs = c.xs.to_vec();
                let dx = xs[1] - xs[0];
                let exact = case.posterior(&xs, 0.0);
                let parzen = l1(&c.parzen, &exact, dx);
                let clipped: Vec<f64> = c.parzen.iter().map(|p| p.max(0.0)).collect();
                let parzen_clipped = l1(&normalise(&clipped, dx), &exact, dx);
                let model = &s.problem().model;
                let msg = model.graph().message_between(1, 0).unwrap();
                let Message::Weights(w) = s.engine().message(msg) else {
                    panic!("no message")
                };
                let (_, set) = model.receiver_set(msg);
                let support = &model.node(0).sets[set].points;
                let all = model.values(0);
                let at_rows = cross_gram(&model.kernel(0).kernel, all, support).unwrap() * &w.beta;
                let points = all.as_slice().to_vec();
                let wts: Vec<f64> = at_rows.iter().map(|v| v.max(0.0)).collect();
                let sigma = model.kernel(0).sigma.unwrap();
                let rows_at_sigma = l1(&weighted_kde(&points, &wts, sigma, &xs), &exact, dx);
                let rows_best = h_grid()
                    .iter()
                    .map(|&h| l1(&weighted_kde(&points, &wts, h, &xs), &exact, dx))
                    .fold(f64::INFINITY, f64::min);
                let ideal_w: Vec<f64> = points.iter().map(|&x| case.likelihood(x)).collect();
                let ideal = l1(&weighted_kde(&points, &ideal_w, sigma, &xs), &exact, dx);
                let ess_rows = beliefscope::inference::tree_kbp::effective_sample_size(&wts);
                let ess_m = s.beliefs()[0].effective_samples;
                for (acc, v) in
                    sums.iter_mut()
                        .zip([parzen, parzen_clipped, rows_at_sigma, rows_best, ideal])
                {
                    *acc += v / seeds.len() as f64;
                }
                eprintln!(
                    "m {m} λ {lambda} seed {seed} σ ({sigma:.3}, {:.3}): parzen {parzen:.3} parzen+ \
                     {parzen_clipped:.3} | rows at σ {rows_at_sigma:.3} best {rows_best:.3} ideal \
                     {ideal:.3} ess rows {ess_rows:.0} ess m {ess_m:.0} | set-up {:.2} s",
                    model.kernel(1).sigma.unwrap(),
                    model.setup_seconds()
                );
            }
            eprintln!(
                "m {m} λ {lambda} MEAN: parzen {:.3} parzen+ {:.3} rows at σ {:.3} best {:.3} ideal {:.3}",
                sums[0], sums[1], sums[2], sums[3], sums[4]
            );
        }
    }
}

/// At the target's rows (1000) and the DEFAULT config: the LOO-CV
/// bandwidth and the default samples per edge (every row an edge sample) put x1's Parzen belief
/// within L1 0.35 of the exact posterior on eight seeds, the median rule stays above 0.5.
/// The old default m = 300 misses on most of the same seeds (`readout_over_rows_against_
/// samples_per_edge`: the messages need the samples; a read-out over more points does not
/// help), which this test checks too. On a second case (modes ±1.5, noise 0.45) seven of eight
/// seeds pass (seed 2: 0.45).
#[test]
fn the_default_config_resolves_the_issues_bimodal_posterior_from_1000_rows() {
    let config = TreeConfig::default();
    let (rows, m) = (1000, config.samples_per_edge);
    assert!(
        m >= rows,
        "the default takes every one of 1000 rows as an edge sample"
    );
    let default = config.kernel;
    let median = NodeKernelSettings {
        rule: BandwidthRule::Median,
        ..default
    };
    let mut old_misses = 0;
    for seed in 0..8 {
        let (l1_cv, ess) = l1_and_ess(SquaredChain::ISSUE, rows, m, seed, default);
        let (l1_median, _) = l1_and_ess(SquaredChain::ISSUE, rows, m, seed, median);
        let (l1_old, _) = l1_and_ess(SquaredChain::ISSUE, rows, 300, seed, default);
        eprintln!(
            "issue case, seed {seed}: L1 default {l1_cv:.3} ({ess:.0} effective samples), \
             median x 0.35 {l1_median:.3}, m = 300 {l1_old:.3}"
        );
        assert!(l1_cv < 0.35, "seed {seed}: L1 {l1_cv} at the default");
        assert!(
            l1_median > 0.5 && l1_median > 1.5 * l1_cv,
            "seed {seed}: median rule L1 {l1_median} against LOO-CV {l1_cv}"
        );
        old_misses += usize::from(l1_old >= 0.35);
    }
    // Measured: 5 of 8 seeds at or above 0.35 with m = 300 (0.46 on seed 0).
    assert!(old_misses >= 3, "m = 300 misses on {old_misses} seeds only");
    let mut passes = 0;
    for seed in 0..8 {
        let (l1_cv, _) = l1_and_ess(CLOSER_MODES, rows, m, seed, default);
        let (l1_median, _) = l1_and_ess(CLOSER_MODES, rows, m, seed, median);
        eprintln!("closer modes, seed {seed}: L1 default {l1_cv:.3}, median {l1_median:.3}");
        passes += usize::from(l1_cv < 0.35);
        assert!(
            l1_median > 1.5 * l1_cv.min(0.35),
            "seed {seed}: median {l1_median}"
        );
    }
    assert!(passes >= 7, "closer modes: {passes} of 8 seeds below 0.35");
}

/// The estimated messages swing below 0 between their samples; the Parzen belief is a density
/// and is clipped at 0 (closer to the exact posterior on every seed measured).
#[test]
fn the_parzen_belief_is_clipped_where_the_messages_swing_below_zero() {
    let s = squared_chain_run(
        SquaredChain::ISSUE,
        1000,
        300,
        0,
        NodeKernelSettings::default(),
        BTreeMap::new(),
    );
    let (product, _) = s.engine().message_product_at_eval(0).unwrap().unwrap();
    let raw: Vec<f64> = product
        .iter()
        .zip(s.problem().model.prior(0))
        .map(|(m, p)| m * p)
        .collect();
    let negative = raw.iter().filter(|&&v| v < 0.0).count();
    let belief = &s.beliefs()[0];
    eprintln!(
        "{negative} of {} grid points below 0 before clipping",
        raw.len()
    );
    assert!(
        negative > 0,
        "the unclipped belief has no negative lobe here"
    );
    assert!(belief.parzen.iter().all(|&v| v >= 0.0));
    // Where the product is positive the belief is the same curve (up to its scale).
    let (i, top) = raw
        .iter()
        .enumerate()
        .fold((0, f64::MIN), |b, (i, &v)| if v > b.1 { (i, v) } else { b });
    assert!((belief.parzen[i] - 1.0).abs() < 1e-12);
    for (r, b) in raw.iter().zip(&belief.parzen) {
        assert!((b - r.max(0.0) / top).abs() < 1e-9);
    }
}
