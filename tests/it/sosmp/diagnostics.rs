//! Diagnostics behind the convergence numbers, not checks: run with
//! `cargo test --release --test it sosmp::diagnostics -- --ignored --nocapture`; the settings come
//! from `SOSMP_NODES`, `SOSMP_PATHS`, `SOSMP_ITERS`, `SOSMP_K`, `SOSMP_R`, `SOSMP_SEED` and
//! `SOSMP_POTENTIALS` and `SOSMP_FORM` (eq37 or normalised mixtures) when set (`SOSMP_TOP=1`
//! also lists the worst messages).
//!
//! The gains and the noise-free iteration themselves live in the engine
//! (`inference::sosmp::gains`, `expected::noise_free_iteration`) and are tested in
//! `tests/sosmp_gains.rs`; results.json reports the gains' summary as `gains`.
//!
//! SOSMP's `1/(t+1)` steps give `E‖a_t - a_∞‖² ~ 1/t` only once the linearised expected update
//! has contracted the errors flowing in from upstream; on a tree the Jacobian is nilpotent, so
//! this always happens eventually, but the constant grows like the product of the per-edge gains
//! along a path. These tests print those gains, the fitted slope against the chain length, the
//! split of `mean e_t - floor` into the distance to `a_∞`, the paths' bias and the cross term,
//! and the noise-free damped iteration `a <- (1 - η_t) a + η_t G(a)`, whose transient is what
//! the paths' mean follows.

use beliefscope::inference::sosmp::expected::noise_free_iteration;
use beliefscope::inference::sosmp::gains::edge_gains;
use beliefscope::scenarios::sosmp::{SosmpConfig, SosmpScenario};
use beliefscope::scenarios::{CancelFlag, Scenario};

#[test]
#[ignore = "diagnostic: prints the per-edge gains of the expected update"]
fn edge_gains_of_the_default_chain() {
    // The engine's gains (what results.json's `gains` and the window report), here split by
    // direction on a chain: v -> v+1 with respect to v-1 -> v, and the reverse.
    let config = SosmpConfig {
        iters: 1,
        ..config_from_env()
    };
    let s = SosmpScenario::new(config, &CancelFlag::default()).unwrap();
    let p = s.problem();
    let g = &p.mrf.graph;
    let start = std::time::Instant::now();
    let (gains, summary) = edge_gains(p, &s.baselines().floor.coefficients);
    println!(
        "all (output, input) pairs ({:.3} s): {summary:?}",
        start.elapsed().as_secs_f64()
    );
    let mut forward: Vec<f64> = gains
        .iter()
        .filter(|e| g.target(e.output) > g.source(e.output))
        .map(|e| e.gain)
        .collect();
    forward.sort_by(f64::total_cmp);
    if !forward.is_empty() {
        let q = |f: f64| forward[((forward.len() - 1) as f64 * f) as usize];
        println!(
            "forward v -> v+1 only: min {:.3} q25 {:.3} median {:.3} q75 {:.3} max {:.3}",
            q(0.0),
            q(0.25),
            q(0.5),
            q(0.75),
            q(1.0)
        );
    }
}

#[test]
#[ignore = "diagnostic: prints the fitted slope for chains of 10, 30 and 100 nodes"]
fn slope_against_chain_length() {
    for nodes in [10, 30, 100] {
        let config = SosmpConfig {
            nodes,
            ..SosmpConfig::default()
        };
        let mut s = SosmpScenario::new(config, &CancelFlag::default()).unwrap();
        while !s.finished() {
            s.step().unwrap();
        }
        println!(
            "chain n = {nodes:3}: floor e(a_inf)/e_0 = {:.4e}, final mean e_T/e_0 = {:.4e}, slope {:?}",
            s.floor(),
            s.curves().mean.last().unwrap(),
            s.slope()
        );
    }
}

/// The default config with SOSMP_NODES, SOSMP_PATHS, SOSMP_ITERS, SOSMP_K, SOSMP_R, SOSMP_SEED,
/// SOSMP_POTENTIALS (mixture or kernel) and SOSMP_FORM (eq37 or normalised) from the environment
/// when set.
fn config_from_env() -> SosmpConfig {
    let d = SosmpConfig::default();
    SosmpConfig {
        nodes: env_or("SOSMP_NODES", d.nodes),
        paths: env_or("SOSMP_PATHS", d.paths),
        iters: env_or("SOSMP_ITERS", d.iters),
        samples: env_or("SOSMP_K", d.samples),
        coefficients: env_or("SOSMP_R", d.coefficients),
        seed: env_or("SOSMP_SEED", d.seed),
        potentials: env_or("SOSMP_POTENTIALS", d.potentials),
        mixture_form: env_or("SOSMP_FORM", d.mixture_form),
        ..d
    }
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Least-squares slope of `log y` against `log t` over `t ∈ [lo, hi]` (1-based), positive y only.
fn window_slope(y: &[f64], lo: usize, hi: usize) -> Option<f64> {
    let pts: Vec<(f64, f64)> = (lo..=hi.min(y.len()))
        .filter(|&t| y[t - 1] > 0.0)
        .map(|t| ((t as f64).ln(), y[t - 1].ln()))
        .collect();
    if pts.len() < 3 {
        return None;
    }
    let n = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    Some(sxy / sxx)
}

#[test]
#[ignore = "diagnostic: decomposes mean e_t - floor into the distance to a_inf, the bias and the cross term"]
fn error_decomposition() {
    // Settings from the environment (see `config_from_env`).
    let config = config_from_env();
    let mut s = SosmpScenario::new(config.clone(), &CancelFlag::default()).unwrap();
    let p = s.problem().clone();
    let r = p.r();
    let msgs = p.num_messages();
    let a_inf = s.baselines().floor.coefficients.clone();
    let a_star = s.baselines().reference_coefficients.clone();
    let e0 = s.baselines().e0;
    let floor = s.baselines().floor_raw;
    let paths = config.paths;
    // Per iteration (raw, not divided by e_0): mean e_t - floor, mean |a_t - a_inf|^2, |mean a_t -
    // a_inf|^2 (bias), mean 2 <a_t - a_inf, a_inf - a*> (cross).
    let (mut excess, mut dist, mut bias, mut cross) = (vec![], vec![], vec![], vec![]);
    while !s.finished() {
        s.step().unwrap();
        let e = s.engine();
        let (mut dd, mut bb, mut cc) = (0.0, 0.0, 0.0);
        for m in 0..msgs {
            for j in 0..r {
                let i = m * r + j;
                let mut mean = 0.0;
                for path in 0..paths {
                    let a = e.coefficients(path, m)[j];
                    let x = a - a_inf[i];
                    dd += x * x;
                    cc += 2.0 * x * (a_inf[i] - a_star[i]);
                    mean += a / paths as f64;
                }
                bb += (mean - a_inf[i]).powi(2);
            }
        }
        let mf = msgs as f64;
        dist.push(dd / (mf * paths as f64));
        cross.push(cc / (mf * paths as f64));
        bias.push(bb / mf);
        excess.push(s.curves().mean_raw.last().unwrap() - floor);
    }
    // Per message depth (distance from the leaf that starts it: message v -> v+1 has depth v+1,
    // v+1 -> v has depth n-1-v): t |a_T - a_inf|^2 averaged over paths, and |mean a_T - a_inf|^2.
    let g = &p.mrf.graph;
    // Message m: |a_T - a_inf|^2 averaged over the paths, and |mean a_T - a_inf|^2.
    let distances = |m: usize| {
        let (mut dd, mut bb) = (0.0, 0.0);
        for j in 0..r {
            let i = m * r + j;
            let mut mean = 0.0;
            for path in 0..paths {
                let a = s.engine().coefficients(path, m)[j];
                dd += (a - a_inf[i]).powi(2) / paths as f64;
                mean += a / paths as f64;
            }
            bb += (mean - a_inf[i]).powi(2);
        }
        (dd, bb)
    };
    let mut by_depth = vec![(0.0, 0.0, 0usize); config.nodes];
    for m in 0..msgs {
        let (v, u) = (g.source(m), g.target(m));
        let depth = if u > v { v + 1 } else { config.nodes - v };
        let (dd, bb) = distances(m);
        let e = &mut by_depth[depth - 1];
        e.0 += dd;
        e.1 += bb;
        e.2 += 1;
    }
    if std::env::var("SOSMP_TOP").is_ok() {
        let model = s.model();
        let mut per: Vec<(f64, f64, usize)> = (0..msgs)
            .map(|m| {
                let (dd, bb) = distances(m);
                (dd, bb, m)
            })
            .collect();
        per.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap());
        for &(dd, bb, m) in per.iter().take(12) {
            let (v, u) = (g.source(m), g.target(m));
            let nm = &model.node_mixtures[v];
            let em = &model.edge_mixtures[m / 2];
            println!(
                "{v:3} -> {u:3}: T|a-a_inf|^2 {:.3}, T bias {:.3}, |a_inf - a*|^2 {:.2e}; psi_v sd {:?} means {:?} w {:?}; edge sd {:?} w {:?}",
                config.iters as f64 * dd,
                config.iters as f64 * bb,
                (0..r)
                    .map(|j| (a_inf[m * r + j] - a_star[m * r + j]).powi(2))
                    .sum::<f64>(),
                nm.variances
                    .iter()
                    .map(|x| (x.sqrt() * 1000.0).round() / 1000.0)
                    .collect::<Vec<_>>(),
                nm.means
                    .iter()
                    .map(|x| (x * 100.0).round() / 100.0)
                    .collect::<Vec<_>>(),
                nm.weights
                    .iter()
                    .map(|x| (x * 100.0).round() / 100.0)
                    .collect::<Vec<_>>(),
                em.variances
                    .iter()
                    .map(|x| (x.sqrt() * 1000.0).round() / 1000.0)
                    .collect::<Vec<_>>(),
                em.weights
                    .iter()
                    .map(|x| (x * 100.0).round() / 100.0)
                    .collect::<Vec<_>>(),
            );
        }
    }
    let t_end = config.iters;
    let mut line = String::from("T |a_T - a_inf|^2 (bias |E a_T - a_inf|^2 x T) by message depth:");
    for depth in [1usize, 2, 3, 5, 8, 12, 20, 30, 50, 70, 99] {
        if let Some(&(dd, bb, c)) = by_depth.get(depth - 1).filter(|e| e.2 > 0) {
            line += &format!(
                " d{depth}: {:.3} ({:.3})",
                t_end as f64 * dd / c as f64,
                t_end as f64 * bb / c as f64
            );
        }
    }
    println!("{line}");
    println!(
        "n = {}, r = {r}, k = {}, paths = {paths}, T = {t_end}, seed = {}: e_0 = {e0:.4e}, floor e(a_inf) = {floor:.4e} ({:.4e} of e_0), |a_inf - a*|^2 = {floor:.4e}",
        config.nodes,
        config.samples,
        config.seed,
        floor / e0
    );
    let fitted = beliefscope::scenarios::sosmp::fit_slope(&s.curves().mean, s.floor(), 10);
    println!("issue's slope (mean e_t/e_0 - floor, t in [10, T]): {fitted:?}");
    let mut windows = vec![(10, t_end)];
    let mut lo = 10;
    while lo * 10 <= t_end {
        windows.push((lo, lo * 10));
        lo *= 10;
    }
    if lo < t_end && lo > 10 {
        windows.push((lo, t_end));
    }
    for (lo, hi) in windows {
        println!(
            "t in [{lo:6}, {hi:6}]: slope of (mean e_t - floor) {:>7.3}, of mean |a_t - a_inf|^2 {:>7.3}, of bias |E a_t - a_inf|^2 {:>7.3}",
            window_slope(&excess, lo, hi).unwrap_or(f64::NAN),
            window_slope(&dist, lo, hi).unwrap_or(f64::NAN),
            window_slope(&bias, lo, hi).unwrap_or(f64::NAN),
        );
    }
    for t in [10usize, 30, 100, 300, 1000, 3000, 10000, 30000] {
        if t <= t_end {
            println!(
                "t = {t:6}: mean e_t - floor {:.4e}, mean |a_t - a_inf|^2 {:.4e} (t x that {:.4e}), bias {:.4e}, cross {:+.4e}",
                excess[t - 1],
                dist[t - 1],
                t as f64 * dist[t - 1],
                bias[t - 1],
                cross[t - 1]
            );
        }
    }
}

#[test]
#[ignore = "diagnostic: the noise-free damped iteration a <- (1 - eta_t) a + eta_t G(a) from a_0 = 1/r"]
fn deterministic_damped_iteration() {
    // Settings from the environment (see `config_from_env`); SOSMP_ITERS is the iteration count.
    let iters: usize = env_or("SOSMP_ITERS", 1000);
    let config = SosmpConfig {
        iters: 1,
        ..config_from_env()
    };
    let s = SosmpScenario::new(config.clone(), &CancelFlag::default()).unwrap();
    let dist = noise_free_iteration(
        s.problem(),
        &s.baselines().floor.coefficients,
        config.step_gamma,
        iters,
        &CancelFlag::default(),
    )
    .unwrap();
    println!(
        "noise-free damped iteration, n = {}, r = {}, seed = {}: floor e(a_inf) = {:.4e}",
        config.nodes,
        config.coefficients,
        config.seed,
        s.baselines().floor_raw
    );
    for t in [1usize, 10, 30, 100, 300, 1000, 3000, 10000, 30000] {
        if t <= iters {
            println!("t = {t:6}: |a_t - a_inf|^2 = {:.4e}", dist[t - 1]);
        }
    }
    let mut lo = 10;
    while lo * 10 <= iters {
        println!(
            "slope over [{lo}, {}]: {:.3}",
            lo * 10,
            window_slope(&dist, lo, lo * 10).unwrap_or(f64::NAN)
        );
        lo *= 10;
    }
}
