//! KJIT's EP sites in the convergence debugger: every site schedule reaches the same EP fixed
//! point (against the paper's own schedule run long), damping's measured cost, a live switch
//! recorded and replayed, the per-sweep stats in results.json, the refusals elsewhere, and in
//! the window the factor graph coloured by site change with the scrubber and click-history.

use beliefscope::inference::Schedule;
use beliefscope::inference::kjit::{LogisticEp, QuadratureProjection};
use beliefscope::scenarios::kjit::sites::{SitesSettings, sites_problem};
use beliefscope::scenarios::kjit::{Experiment, KjitConfig, KjitScenario, KjitView};
use beliefscope::scenarios::{CancelFlag, Registered, Scenario, ScenarioConfig};
use strum::VariantArray;

fn config(schedule: Schedule, damping: f64) -> KjitConfig {
    KjitConfig {
        experiment: Experiment::Sites,
        seed: 4,
        sites: SitesSettings {
            examples: 25,
            dim: 3,
            weight_scale: 3.0,
            correlation: 0.6,
            schedule,
            damping,
            sweeps: 400,
            tolerance: 1e-10,
            ..SitesSettings::default()
        },
        ..KjitConfig::default()
    }
}

/// Runs to the end; returns the posterior mean, the residual per sweep and the projections.
fn run(config: KjitConfig) -> (Vec<f64>, Vec<f64>, f64) {
    let mut s = KjitScenario::new(config, &CancelFlag::default()).unwrap();
    while !s.finished() {
        s.step().unwrap();
    }
    let view = s.view(None);
    let v = KjitView::of(&view).unwrap().sites.clone().unwrap();
    let residuals = s.log().history().iter().map(|r| r.residual).collect();
    (v.posterior_mean, residuals, v.projections as f64)
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

#[test]
fn every_schedule_reaches_the_same_ep_fixed_point() {
    // The reference: the engine's own schedule (Exp. 3's: parallel first sweep, then
    // sequential) run for 200 sweeps on the same data.
    let c = config(Schedule::Sweep, 0.0);
    let (x, y, _) = sites_problem(&c.sites, c.seed);
    let mut reference = LogisticEp::new(x, y, 1.0).unwrap();
    reference
        .run(
            &mut QuadratureProjection::new(c.quadrature_nodes).unwrap(),
            200,
        )
        .unwrap();
    let reference: Vec<f64> = reference.posterior_mean().iter().copied().collect();
    for &schedule in Schedule::VARIANTS {
        for damping in [0.0, 0.5] {
            let (mean, residuals, projections) = run(config(schedule, damping));
            let sweeps = residuals.len();
            eprintln!(
                "{} damping {damping}: {sweeps} sweeps, {projections} projections, last residual {:.1e}",
                schedule.label(),
                residuals.last().unwrap()
            );
            assert!(
                *residuals.last().unwrap() < 1e-10 && sweeps < 400,
                "{schedule:?} {damping}: did not converge in {sweeps} sweeps"
            );
            let d = max_diff(&mean, &reference);
            assert!(
                d < 1e-8,
                "{schedule:?} damping {damping}: {mean:?} vs {reference:?}"
            );
        }
    }
}

/// Logistic EP is Newton-like (a log-concave posterior): synchronous (parallel) EP converges
/// undamped, and damping 0.5 only slows it; measured, not assumed.
#[test]
fn damping_slows_synchronous_ep_to_the_same_point() {
    let (undamped, r0, _) = run(config(Schedule::Synchronous, 0.0));
    let (damped, r5, _) = run(config(Schedule::Synchronous, 0.5));
    assert!(max_diff(&undamped, &damped) < 1e-8);
    assert!(
        r5.len() > r0.len(),
        "damped {} sweeps, undamped {}",
        r5.len(),
        r0.len()
    );
}

#[test]
fn residual_schedule_pays_n_projections_per_update() {
    let mut c = config(Schedule::Residual, 0.0);
    c.sites.sweeps = 2;
    let mut s = KjitScenario::new(c, &CancelFlag::default()).unwrap();
    let r = s.step().unwrap();
    assert_eq!(r.metrics["projections"], 25.0 * 25.0);
    let mut c = config(Schedule::Random, 0.0);
    c.sites.sweeps = 2;
    let mut s = KjitScenario::new(c, &CancelFlag::default()).unwrap();
    assert_eq!(s.step().unwrap().metrics["projections"], 25.0);
}

#[test]
fn live_switch_is_recorded_and_replayed() {
    let mut s =
        KjitScenario::new(config(Schedule::Synchronous, 0.0), &CancelFlag::default()).unwrap();
    for _ in 0..3 {
        s.step().unwrap();
    }
    s.set_schedule(Schedule::Residual, 0.3).unwrap();
    assert_eq!(s.convergence().unwrap().schedule, "residual");
    assert_eq!(s.convergence().unwrap().damping, 0.3);
    while !s.finished() {
        s.step().unwrap();
    }
    let live: Vec<f64> = s.log().history().iter().map(|r| r.residual).collect();
    let ScenarioConfig::Kjit(echo) = s.config() else {
        panic!("a kjit config")
    };
    assert_eq!(echo.sites.schedule_changes.len(), 1);
    let change = echo.sites.schedule_changes[0];
    assert_eq!(
        (change.from_iteration, change.schedule, change.damping),
        (4, Schedule::Residual, 0.3)
    );
    // The echoed config, replayed, runs the same sweeps.
    let json = serde_json::to_string(&echo).unwrap();
    let replayed: KjitConfig = serde_json::from_str(&json).unwrap();
    let (_, replay, _) = run(replayed);
    assert_eq!(live, replay);
    // Projections jump to n per update from sweep 4 on (the residual schedule).
    let p: Vec<f64> = s
        .log()
        .history()
        .iter()
        .map(|r| r.metrics["projections"])
        .collect();
    assert_eq!(&p[..4], &[25.0, 25.0, 25.0, 625.0]);
}

#[test]
fn what_if_runs_a_copy_and_other_experiments_refuse() {
    use beliefscope::scenarios::what_if::WhatIfRequest;
    let mut s = KjitScenario::new(config(Schedule::Sweep, 0.0), &CancelFlag::default()).unwrap();
    s.step().unwrap();
    s.step().unwrap();
    let before = s.log().history().len();
    let w = s
        .what_if(
            WhatIfRequest {
                schedule: Schedule::Synchronous,
                damping: 0.5,
                iterations: 300,
                tolerance: 1e-10,
            },
            &CancelFlag::default(),
        )
        .unwrap();
    assert!(w.converged_after.is_some(), "{}", w.hint());
    assert_eq!(w.start_iteration, 2);
    assert_eq!(w.residuals[0].0, 3, "numbered from the main run's sweep");
    assert_eq!(s.log().history().len(), before, "the run is untouched");

    let exp3 = KjitConfig {
        problems: 1,
        examples: 20,
        test_points: 100,
        particles: 2000,
        ..KjitConfig::default()
    };
    let mut s = KjitScenario::new(exp3, &CancelFlag::default()).unwrap();
    assert!(s.convergence().is_none());
    let e = s
        .set_schedule(Schedule::Residual, 0.0)
        .unwrap_err()
        .to_string();
    assert!(e.contains("--experiment sites"), "{e}");
}

#[test]
fn cli_sites_writes_per_sweep_stats_and_schedule_is_refused_elsewhere() {
    use crate::cli_common::{beliefscope, read_json, stderr};
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("sites");
    let o = beliefscope(&[
        "run",
        "kjit",
        "--experiment",
        "sites",
        "--schedule",
        "residual",
        "--damping",
        "0.2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let doc = read_json(&out.join("results.json"));
    assert_eq!(doc["config"]["sites"]["schedule"], "residual");
    assert_eq!(doc["config"]["sites"]["damping"], 0.2);
    assert!(doc["sites"]["converged"].as_bool().unwrap());
    let iterations = doc["iterations"].as_array().unwrap();
    assert!(!iterations.is_empty());
    for it in iterations {
        let m = &it["metrics"];
        let q = |k: &str| m[k].as_f64().unwrap_or_else(|| panic!("{k} missing: {m}"));
        assert!(q("residual_p50") <= q("residual_p90") && q("residual_p90") <= q("residual_p99"));
        assert!((0.0..=1.0).contains(&q("oscillating_fraction")));
    }
    let o = beliefscope(&[
        "run",
        "kjit",
        "--schedule",
        "residual",
        "--out",
        dir.path().join("x").to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("apply to --experiment sites"),
        "{}",
        stderr(&o)
    );
}

mod window {
    use super::*;
    use crate::common::*;
    use beliefscope::app::App;
    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable as _;

    fn app() -> Harness<'static, App> {
        let mut c = config(Schedule::Synchronous, 0.0);
        c.sites.examples = 12;
        c.sites.tolerance = 1e-9;
        let config = ScenarioConfig::Kjit(c);
        let mut h = Harness::builder()
            .with_size([1400.0, 900.0])
            .build_eframe(move |cc| App::with_config(cc, config, true));
        wait_for(&mut h, "the run to finish", |h| {
            h.state().snapshot().is_some_and(|s| s.finished)
        });
        h.run_steps(2);
        h
    }

    /// A tolerance of 1e-9 reads "1.0e-9" in its value box: written out ("0.000000001") the
    /// box widened the parameter panel to its limit, which left the debugger's graph canvas a
    /// quarter of a narrower panel.
    #[test]
    fn a_small_tolerance_leaves_the_graph_canvas_its_room() {
        use egui_kittest::kittest::NodeT as _;
        let mut h = app();
        let values: Vec<String> = h
            .root()
            .children_recursive()
            .filter_map(|n| n.accesskit_node().value())
            .collect();
        assert!(values.iter().any(|v| v == "1.0e-9"), "{values:?}");
        let rect = settled_rect(&mut h, "message graph");
        assert!(rect.width() > 180.0, "canvas {rect:?}");
    }

    #[test]
    fn clicking_a_site_shows_its_history_and_scrubbing_recolours() {
        let mut h = app();
        let view = h.state().snapshot().unwrap().convergence.clone().unwrap();
        let graph = view.graph.clone().expect("EP sites have a graph view");
        assert_eq!(graph.messages.len(), 24, "12 sites, two messages each");
        let n = view.edges.len();
        assert!(n >= 5, "{n} sweeps stored");
        let newest = h.state().debugger().shown_edges().unwrap().clone();
        assert_eq!(newest.iteration, n);
        for _ in 0..3 {
            h.get_by_label("◀").click();
            h.run_steps(2);
        }
        let shown = h.state().debugger().shown_edges().unwrap().clone();
        assert_eq!(shown.iteration, n - 3);
        assert_ne!(shown.change(), newest.change(), "another sweep's colours");
        assert!(has_text(
            &h,
            &format!("message changes of iteration {}", n - 3)
        ));

        let m = 4; // site 5's message to w
        click_message(&mut h, &graph, m);
        assert_eq!(h.state().debugger().history_message(), Some(m));
        assert!(
            has_text(
                &h,
                &format!("history of message 5 → 0: {n} stored iterations")
            ),
            "{:?}",
            texts(&h)
        );
        assert!(has_text(&h, "natural parameter"), "{:?}", texts(&h));
    }
}
