//! The `sosmp` scenario: results.json fields, views, sweeps and the CLI.

use beliefscope::cli::{Cli, Command};
use beliefscope::inference::sosmp::basis::BasisKind;
use beliefscope::inference::sosmp::grid::StateGrid;
use beliefscope::inference::sosmp::potentials::MixtureForm;
use beliefscope::scenarios::Verb;
use beliefscope::scenarios::sosmp::cli::SosmpSweepArgs;
use beliefscope::scenarios::sosmp::sweep::{SweepParameter, sweeps_csv};
use beliefscope::scenarios::sosmp::{
    PotentialKind, SosmpConfig, SosmpScenario, SweepSpec, fit_slope, run_sweep, slope_windows,
};
use beliefscope::scenarios::{
    CancelFlag, Probe, RunResults, Scenario, ScenarioConfig, ScenarioView,
};
use clap::Parser;

fn small() -> SosmpConfig {
    SosmpConfig {
        nodes: 8,
        iters: 40,
        paths: 3,
        points_per_unit: 20.0,
        ..SosmpConfig::default()
    }
}

#[test]
fn results_json_has_every_field_the_issue_lists() {
    let config = ScenarioConfig::Sosmp(small());
    let mut s = config.build(&CancelFlag::default()).unwrap();
    while !s.finished() {
        s.step().unwrap();
    }
    let r = RunResults::from_scenario(s.as_ref());
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["scenario"], "sosmp");
    assert_eq!(v["algorithm"], "sosmp");
    assert_eq!(v["mean_error"].as_array().unwrap().len(), 40);
    let paths = v["path_errors"].as_array().unwrap();
    assert_eq!(paths.len(), 3);
    assert!(paths.iter().all(|p| p.as_array().unwrap().len() == 40));
    assert!(v["floor"].as_f64().unwrap() > 0.0);
    assert!(v["slope"].is_number());
    assert_eq!(v["domain"], serde_json::json!([-5.0, 5.0]));
    let grid = v["grid"].as_array().unwrap();
    assert_eq!(grid.len(), 201);
    assert_eq!(v["basis"]["kind"], "fourier");
    let edges = v["edges"].as_array().unwrap();
    assert_eq!(edges.len(), 14);
    assert_eq!(edges[0], serde_json::json!([0, 1]));
    assert_eq!(edges[1], serde_json::json!([1, 0]));
    let nodes = v["node_potentials"].as_array().unwrap();
    assert_eq!(nodes.len(), 8);
    assert_eq!(nodes[0]["weights"].as_array().unwrap().len(), 3);
    let e = &v["edge_potentials"][0];
    assert!(e["means"].as_array().unwrap().iter().all(|m| m == 0.0));
    assert_eq!(v["reference_coefficients"].as_array().unwrap().len(), 14);
    assert_eq!(v["reference_coefficients"][0].as_array().unwrap().len(), 10);
    let msg = v["reference_messages"][3].as_array().unwrap();
    assert_eq!(msg.len(), 201);
    // Each reference message integrates to 1 under the trapezoid rule on `grid`.
    let h = 0.05;
    let integral: f64 = msg
        .iter()
        .enumerate()
        .map(|(i, m)| m.as_f64().unwrap() * if i == 0 || i == 200 { h / 2.0 } else { h })
        .sum();
    assert!((integral - 1.0).abs() < 1e-12);
    // The normalised mean starts below 1 after one iteration and ends above the floor or
    // near it (it cannot be far below: the floor is where the iteration goes).
    let mean: Vec<f64> = serde_json::from_value(v["mean_error"].clone()).unwrap();
    assert!(mean[0] < 1.0 && mean[39] < mean[0]);
}

#[test]
fn views_answer_node_and_message_probes() {
    let mut s = SosmpScenario::new(small(), &CancelFlag::default()).unwrap();
    for _ in 0..5 {
        s.step().unwrap();
    }
    let n = s.problem().mrf.grid.len();
    let ScenarioView::Sosmp(v) = s.view(Some(Probe::Message(5))) else {
        panic!("not an sosmp view")
    };
    let e = v.edge.as_ref().unwrap();
    assert_eq!((e.from, e.to), (v.edges[5][0], v.edges[5][1]));
    assert_eq!(e.raw.len(), n);
    assert_eq!(e.samples.len(), 5);
    assert!(e.clipped.iter().all(|c| *c >= 0.0));
    assert_eq!(e.coefficients.len(), 10);
    assert_eq!(e.potential.len(), e.potential_xs.len().pow(2));
    assert!(v.node.is_none());
    assert_eq!(v.curves.mean.len(), 5);
    assert_eq!(v.slope_reference.len(), 2);
    let ScenarioView::Sosmp(v) = s.view(Some(Probe::Node(3))) else {
        panic!("not an sosmp view")
    };
    let nd = v.node.as_ref().unwrap();
    assert_eq!(nd.belief.len(), n);
    assert_eq!(nd.reference.len(), n);
    assert!(v.edge.is_none());
    // Out-of-range probes are ignored, not a panic.
    let ScenarioView::Sosmp(v) = s.view(Some(Probe::Node(999))) else {
        panic!()
    };
    assert!(v.node.is_none());
}

#[test]
fn a_sweep_returns_one_curve_per_value() {
    let base = SosmpConfig {
        iters: 30,
        ..small()
    };
    let spec = SweepSpec {
        parameter: SweepParameter::Samples,
        values: vec![1.0, 10.0],
    };
    let mut started = 0;
    let result = run_sweep(&base, &spec, &CancelFlag::default(), &mut |p| {
        if matches!(
            p,
            beliefscope::scenarios::sosmp::sweep::SweepProgress::Started { .. }
        ) {
            started += 1;
        }
    })
    .unwrap();
    assert_eq!(started, 2);
    assert_eq!(result.curves.len(), 2);
    assert!(result.curves.iter().all(|c| c.mean_error.len() == 30));
    // Same model (same seed), so the same floor whatever k is.
    assert_eq!(result.curves[0].floor, result.curves[1].floor);
    // The distance-to-a_inf slope is that of a standalone run with the same settings.
    let mut alone = SosmpScenario::new(
        SosmpConfig {
            samples: 10,
            ..base.clone()
        },
        &CancelFlag::default(),
    )
    .unwrap();
    while !alone.finished() {
        alone.step().unwrap();
    }
    let expected = fit_slope(&alone.curves().fixed_point, 0.0, 10);
    assert!(expected.is_some_and(f64::is_finite));
    assert_eq!(result.curves[1].fixed_point_slope, expected);
    let csv = sweeps_csv(&[result]);
    assert_eq!(csv.lines().count(), 1 + 60);
    assert!(csv.starts_with("parameter,value,iter,"));
    // alpha sweeps switch to kernel potentials.
    let c = SweepParameter::Alpha.apply(&base, 0.1).unwrap();
    assert_eq!(c.potentials, PotentialKind::Kernel);
    assert!(SweepParameter::Coefficients.apply(&base, 2.5).is_err());
}

#[test]
fn slope_fit_recovers_a_power_law() {
    let floor = 0.01;
    let y: Vec<f64> = (1..=1000).map(|t| floor + 3.0 / t as f64).collect();
    let s = fit_slope(&y, floor, 10).unwrap();
    assert!((s + 1.0).abs() < 1e-9);
}

#[test]
fn slope_windows_see_a_change_of_rate() {
    // floor + t^-1 up to t = 100, then floor + 0.1 t^-0.5 (continuous at 100): the fit over
    // [10, 100] must be -1, over [100, 1000] -0.5, and the last window ends at T = 1500.
    let floor = 0.3;
    let y: Vec<f64> = (1..=1500)
        .map(|t| {
            let t = t as f64;
            floor + if t <= 100.0 { 1.0 / t } else { 0.1 / t.sqrt() }
        })
        .collect();
    let w = slope_windows(&y, floor, 10);
    assert_eq!(w.len(), 3);
    assert_eq!((w[0].0, w[0].1, w[0].3), (10, 100, 91));
    assert!((w[0].2.unwrap() + 1.0).abs() < 1e-9, "{w:?}");
    assert_eq!((w[1].0, w[1].1), (100, 1000));
    // t = 100 itself lies on both laws.
    assert!((w[1].2.unwrap() + 0.5).abs() < 1e-9, "{w:?}");
    assert_eq!((w[2].0, w[2].1), (1000, 1500));
    assert!((w[2].2.unwrap() + 0.5).abs() < 1e-9, "{w:?}");
}

#[test]
fn fixed_point_errors_split_the_excess_over_the_floor() {
    let mut s = SosmpScenario::new(small(), &CancelFlag::default()).unwrap();
    for _ in 0..25 {
        s.step().unwrap();
    }
    let b = s.baselines();
    let (a_inf, a_star, e0) = (&b.floor.coefficients, &b.reference_coefficients, b.e0);
    let p = s.problem();
    let (r, msgs, paths) = (p.r(), p.num_messages(), s.engine().num_paths());
    // Recomputed here from the engine's coefficients.
    let (mut dist, mut cross, mut bias) = (0.0, 0.0, 0.0);
    for m in 0..msgs {
        for j in 0..r {
            let i = m * r + j;
            let mut mean = 0.0;
            for path in 0..paths {
                let a = s.engine().coefficients(path, m)[j];
                dist += (a - a_inf[i]).powi(2);
                cross += 2.0 * (a - a_inf[i]) * (a_inf[i] - a_star[i]);
                mean += a / paths as f64;
            }
            bias += (mean - a_inf[i]).powi(2);
        }
    }
    let norm = (msgs * paths) as f64;
    let (dist, cross, bias) = (dist / norm, cross / norm, bias / msgs as f64);
    let c = s.curves();
    assert_eq!(c.fixed_point.len(), 25);
    assert!((c.fixed_point[24] * e0 - dist).abs() < 1e-12 * dist.max(1e-3));
    assert!((c.fixed_point_bias[24] * e0 - bias).abs() < 1e-12 * bias.max(1e-3));
    // e_t - e(a_inf) = |a_t - a_inf|^2 + 2 <a_t - a_inf, a_inf - a*>, averaged over the paths.
    let excess = c.mean_raw[24] - b.floor_raw;
    assert!(
        (excess - (dist + cross)).abs() < 1e-10,
        "excess {excess} vs distance {dist} + cross {cross}"
    );
    // The paths' mean is no farther from a_inf than the paths are on average.
    assert!(bias <= dist + 1e-15);
}

#[test]
fn cli_parses_run_and_sweep() {
    let cli = Cli::try_parse_from([
        "beliefscope",
        "run",
        "sosmp",
        "--graph",
        "tree",
        "--nodes",
        "20",
        "--potentials",
        "kernel",
        "--alpha",
        "0.1",
        "--basis",
        "cosine",
        "--coefficients",
        "5",
        "--samples",
        "2",
        "--paths",
        "4",
        "--iters",
        "50",
        "--step-gamma",
        "0.8",
        "--seed",
        "9",
        "--domain=-4,4",
    ])
    .unwrap();
    let Some(Command::Run { scenario }) = cli.command else {
        panic!("not run sosmp")
    };
    let Ok((ScenarioConfig::Sosmp(c), _)) = scenario.run_config() else {
        panic!("not run sosmp")
    };
    assert_eq!(c.nodes, 20);
    assert_eq!(c.potentials, PotentialKind::Kernel);
    assert_eq!(c.alpha, 0.1);
    assert_eq!(c.coefficients, 5);
    assert_eq!(c.domain, [-4.0, 4.0]);
    assert_eq!(c.step_gamma, 0.8);

    let cli = Cli::try_parse_from([
        "beliefscope",
        "sweep",
        "sosmp",
        "--coefficients",
        "2,3,5,10",
        "--samples",
        "3",
    ])
    .unwrap();
    let Some(Command::Sweep { scenario }) = cli.command else {
        panic!("not sweep sosmp")
    };
    assert_eq!(scenario.name, "sosmp");
    let args: SosmpSweepArgs = Verb::args(&scenario.matches).unwrap();
    let (base, specs) = args.plan().unwrap();
    assert_eq!(base.samples, 3);
    assert_eq!(specs.len(), 1);
    assert_eq!(specs[0].values, vec![2.0, 3.0, 5.0, 10.0]);
    let cli = Cli::try_parse_from(["beliefscope", "sweep", "sosmp", "--samples", "3"]).unwrap();
    let Some(Command::Sweep { scenario }) = cli.command else {
        panic!()
    };
    let args: SosmpSweepArgs = Verb::args(&scenario.matches).unwrap();
    assert!(
        args.plan().is_err(),
        "a sweep needs a flag with several values"
    );
}

#[test]
fn bad_parameters_are_refused_with_their_name() {
    for (config, name) in [
        (
            SosmpConfig {
                coefficients: 0,
                ..small()
            },
            "coefficients",
        ),
        (
            SosmpConfig {
                samples: 0,
                ..small()
            },
            "samples",
        ),
        (
            SosmpConfig {
                step_gamma: 2.0,
                ..small()
            },
            "step_gamma",
        ),
        (
            SosmpConfig {
                graph: beliefscope::scenarios::sosmp::GraphKind::Grid,
                nodes: 10,
                ..small()
            },
            "nodes",
        ),
        (
            SosmpConfig {
                domain: [-2.0, 2.0],
                ..small()
            },
            "domain",
        ),
    ] {
        let err = SosmpScenario::new(config, &CancelFlag::default())
            .err()
            .expect("should be refused")
            .to_string();
        assert!(err.contains(name), "{err}");
    }
}

#[test]
fn results_json_has_the_l2_error_and_the_gains() {
    let config = ScenarioConfig::Sosmp(small());
    let mut s = config.build(&CancelFlag::default()).unwrap();
    while !s.finished() {
        s.step().unwrap();
    }
    let v = serde_json::to_value(RunResults::from_scenario(s.as_ref())).unwrap();
    let floor_l2 = v["floor_l2"].as_f64().unwrap();
    let e0_l2 = v["e0_l2"].as_f64().unwrap();
    // The L2 floor counts eq. 38's floor and the truncation (Fourier: orthonormal on the grid).
    let expect = v["floor_raw"].as_f64().unwrap() + v["truncation"].as_f64().unwrap();
    assert!(
        (floor_l2 - expect).abs() < 1e-12,
        "{floor_l2} against {expect}"
    );
    assert!((v["floor_l2_normalised"].as_f64().unwrap() - floor_l2 / e0_l2).abs() < 1e-15);
    let l2: Vec<f64> = serde_json::from_value(v["mean_error_l2"].clone()).unwrap();
    let l2_raw: Vec<f64> = serde_json::from_value(v["mean_error_l2_raw"].clone()).unwrap();
    assert_eq!((l2.len(), l2_raw.len()), (40, 40));
    assert!((l2[39] * e0_l2 - l2_raw[39]).abs() < 1e-15);
    assert_eq!(v["final"]["metrics"]["floor_l2"].as_f64(), Some(floor_l2));
    let gains = &v["gains"];
    // A chain of 8: every message but the two leaving a leaf has one input.
    assert_eq!(gains["count"], 12);
    assert!(gains["median"].as_f64().unwrap() > 0.0);
    assert_eq!(v["diameter"], 7);
    let text = v["slope_explanation"].as_str().unwrap();
    assert!(
        text.contains("Theorem 1") && text.contains("median"),
        "{text}"
    );
}

#[test]
fn the_l2_curve_is_the_quadrature_distance_of_every_path() {
    // mean_l2_raw[t] against ‖Σ_j a_j φ_j - m*‖² by quadrature, path by path, for an
    // orthonormal basis (the eq. 38 + truncation shortcut) and for Legendre (the Gram form).
    for basis in [BasisKind::Fourier, BasisKind::Legendre] {
        let config = SosmpConfig {
            basis: Some(basis),
            ..small()
        };
        let mut s = SosmpScenario::new(config, &CancelFlag::default()).unwrap();
        for _ in 0..5 {
            s.step().unwrap();
        }
        assert_eq!(
            s.baselines().orthonormal_basis(),
            basis == BasisKind::Fourier
        );
        let p = s.problem().clone();
        let (n, r) = (p.mrf.grid.len(), p.r());
        let w = p.mrf.grid.weights();
        let mut f = vec![0.0; n];
        let mut total = 0.0;
        let paths = s.engine().num_paths();
        for path in 0..paths {
            for m in 0..p.num_messages() {
                p.basis.evaluate(s.engine().coefficients(path, m), &mut f);
                let target = &s.baselines().reference.messages[m * n..(m + 1) * n];
                total += (0..n)
                    .map(|i| w[i] * (f[i] - target[i]).powi(2))
                    .sum::<f64>();
            }
        }
        let direct = total / (paths * p.num_messages()) as f64;
        let got = s.curves().mean_l2_raw[4];
        assert!(
            (got - direct).abs() < 1e-12 * direct,
            "{basis:?}: {got} against {direct}"
        );
        assert!((s.curves().mean_l2[4] * s.baselines().e0_l2 - got).abs() < 1e-15);
        assert_eq!(s.curves().paths_l2.len(), paths);
        let _ = r;
    }
}

#[test]
fn the_depth_sweep_varies_the_chain_length() {
    let base = SosmpConfig {
        iters: 30,
        paths: 2,
        points_per_unit: 20.0,
        ..SosmpConfig::default()
    };
    let result = run_sweep(
        &base,
        &SweepSpec {
            parameter: SweepParameter::Nodes,
            values: vec![2.0, 6.0],
        },
        &CancelFlag::default(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(result.curves.len(), 2);
    let (two, six) = (&result.curves[0], &result.curves[1]);
    // Two nodes: no message has an input (no gain), and the noise-free iteration is exact
    // from t = 1 (no slope to fit).
    assert_eq!(two.median_gain, None);
    assert_eq!(two.noise_free_slope, None);
    assert!(six.median_gain.unwrap() > 0.0);
    let nf = six.noise_free_slope.unwrap();
    assert!(nf < 0.0, "{nf}");
    assert_eq!(six.mean_error_l2.len(), 30);
    assert!(six.floor_l2 > 0.0 && six.e0_l2 > six.floor_l2);
    // A grid base becomes a chain for the depth sweep.
    let grid = SosmpConfig {
        graph: beliefscope::scenarios::sosmp::GraphKind::Grid,
        nodes: 9,
        ..base
    };
    let c = SweepParameter::Nodes.apply(&grid, 5.0).unwrap();
    assert_eq!(
        (c.graph, c.nodes),
        (beliefscope::scenarios::sosmp::GraphKind::Chain, 5)
    );
    let csv = sweeps_csv(&[result]);
    assert!(csv.starts_with(
        "parameter,value,iter,mean_error,mean_error_raw,floor,floor_raw,mean_error_l2,floor_l2\n"
    ));
    assert!(csv.contains("\nnodes,6,30,"));
}

#[test]
fn cli_takes_the_mixture_form_and_a_list_of_nodes() {
    let parse = |args: &[&str]| Cli::try_parse_from(args).unwrap().command;
    let run_config = |args: &[&str]| {
        let Some(Command::Run { scenario }) = parse(args) else {
            panic!("not run sosmp")
        };
        scenario.run_config().map(|(c, _)| match c {
            ScenarioConfig::Sosmp(c) => c,
            _ => panic!("not sosmp"),
        })
    };
    assert_eq!(
        run_config(&[
            "beliefscope",
            "run",
            "sosmp",
            "--mixture-form",
            "normalised",
        ])
        .unwrap()
        .mixture_form,
        MixtureForm::Normalised
    );
    assert_eq!(
        run_config(&["beliefscope", "run", "sosmp"])
            .unwrap()
            .mixture_form,
        MixtureForm::Eq37
    );
    assert!(
        run_config(&["beliefscope", "run", "sosmp", "--nodes", "2,5"])
            .unwrap_err()
            .to_string()
            .contains("nodes")
    );
    let Some(Command::Sweep { scenario }) = parse(&[
        "beliefscope",
        "sweep",
        "sosmp",
        "--nodes",
        "2,5,10,20,50,100",
        "--iters",
        "300",
    ]) else {
        panic!("not sweep sosmp")
    };
    let args: SosmpSweepArgs = Verb::args(&scenario.matches).unwrap();
    let (base, specs) = args.plan().unwrap();
    assert_eq!(base.iters, 300);
    assert_eq!(specs.len(), 1);
    assert_eq!(specs[0].parameter, SweepParameter::Nodes);
    assert_eq!(specs[0].values, SweepSpec::depth().values);
}

/// Snapshots taken while earlier ones are still held, or after they are let go, show every
/// curve as the scenario has it at that moment, and the view's slopes are the whole-curve fits.
#[test]
fn every_snapshot_shows_the_curves_and_slopes_as_they_are_then() {
    let mut s = SosmpScenario::new(small(), &CancelFlag::default()).unwrap();
    let mut held = Vec::new();
    for t in 1..=40 {
        s.step().unwrap();
        let ScenarioView::Sosmp(view) = s.view(None) else {
            panic!("a SOSMP view")
        };
        assert_eq!(*view.curves, *s.curves(), "iteration {t}");
        let close = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => (a - b).abs() <= 1e-9 * b.abs().max(1.0),
            (a, b) => a == b,
        };
        assert!(close(view.slope, s.slope()), "iteration {t}");
        let whole = fit_slope(&s.curves().fixed_point, 0.0, 10);
        assert!(close(view.fixed_point_slope, whole), "iteration {t}");
        // Hold some snapshots for a while, as a window holding what it draws.
        held.push(view);
        if t % 3 != 0 {
            held.remove(0);
        }
    }
    assert!(held.len() > 5);
    for view in &held {
        // A held copy was not appended to after it was shared.
        assert_eq!(view.curves.mean.len(), view.iteration);
        assert_eq!(view.curves.paths[2].len(), view.iteration);
    }
}
