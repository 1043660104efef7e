//! The pendigits view's "Accuracy over N" panel (egui_kittest, no GPU): with a curve it draws
//! the plot with a legend entry per method; its button asks the worker for the sweep's sizes
//! and seeds with the run's model settings; while that job runs the panel shows its progress
//! and a Cancel that cancels it.

use std::sync::Arc;

use beliefscope::app::commands::UiCommand;
use beliefscope::app::panels::status::TaskProgress;
use beliefscope::app::scenarios::pbp::curve::{self, CurvePanel, OPEN_LABEL, RUN_LABEL};
use beliefscope::scenarios::Task;
use beliefscope::scenarios::pbp::PbpConfig;
use beliefscope::scenarios::pbp::curve_task::LABEL;
use beliefscope::scenarios::pbp::pendigits::{
    AccuracyPoint, DEFAULT_SEEDS, DEFAULT_SIZES, PendigitsReport,
};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;

struct Panel {
    panel: CurvePanel,
    config: Option<PbpConfig>,
    task: Option<TaskProgress>,
    commands: Vec<UiCommand>,
}

/// A two-size, two-seed curve.
fn small_curve() -> PendigitsReport {
    let pbp = vec![
        AccuracyPoint::of(50, &[(0.60, 0.1), (0.64, 0.1)]),
        AccuracyPoint::of(500, &[(0.90, 0.4), (0.92, 0.4)]),
    ];
    let em = vec![
        AccuracyPoint::of(50, &[(0.55, 1.0), (0.50, 1.0)]),
        AccuracyPoint::of(500, &[(0.80, 9.0), (0.84, 9.0)]),
    ];
    PendigitsReport {
        sizes: vec![50, 500],
        seeds: vec![1, 2],
        test_accuracy: pbp.iter().map(|p| p.mean).collect(),
        test_accuracy_em_hmm: em.iter().map(|p| p.mean).collect(),
        learn_seconds: vec![0.1, 0.4],
        learn_seconds_em_hmm: vec![1.0, 9.0],
        validation_accuracy: vec![0.6, 0.9],
        pbp,
        em_hmm: em,
        em_restarts: 2,
        confusion: vec![vec![0; 10]; 10],
        unscored: 0,
        states: 4,
        sigma: 10.0,
        dim: 24,
        lambda1: 0.1,
        model: "test".into(),
    }
}

fn pen_config() -> PbpConfig {
    PbpConfig {
        model: "pendigits".into(),
        states: 5,
        lambda1: 0.1,
        em_restarts: 3,
        ..PbpConfig::default()
    }
}

fn harness(panel: Panel) -> Harness<'static, Panel> {
    let mut h = Harness::builder().with_size([900.0, 500.0]).build_ui_state(
        |ui, s: &mut Panel| {
            curve::show(
                ui,
                &s.panel,
                s.config.as_ref(),
                s.task,
                300.0,
                &mut s.commands,
            )
        },
        panel,
    );
    h.run();
    h
}

#[test]
fn a_loaded_curve_draws_the_plot_with_both_methods_in_its_legend() {
    let mut panel = CurvePanel::default();
    // Without a curve: no legend, and a line saying how to get one.
    let h = harness(Panel {
        panel: CurvePanel::default(),
        config: Some(pen_config()),
        task: None,
        commands: Vec::new(),
    });
    assert!(h.query_by_label("PBP").is_none());
    assert!(h.query_by_label_contains("no curve yet").is_some());
    drop(h);

    panel.set(Arc::new(small_curve()), "/tmp/sweep/pendigits.json");
    let h = harness(Panel {
        panel,
        config: Some(pen_config()),
        task: None,
        commands: Vec::new(),
    });
    h.get_by_label("Accuracy over N");
    // Legend entries are the methods' names (one each: line, band and points share it).
    assert_eq!(h.get_all_by_label("PBP").count(), 1);
    assert_eq!(h.get_all_by_label("EM-HMM").count(), 1);
    assert!(h.query_by_label_contains("no curve yet").is_none());
    // The caption names the source and the settings of the curve, not of the run.
    h.get_by_label_contains("/tmp/sweep/pendigits.json");
    h.get_by_label_contains("2 seeds [1, 2]");
    h.get_by_label_contains("k = 4");
    h.get_by_label(OPEN_LABEL);
}

#[test]
fn the_run_button_asks_for_the_sweeps_defaults_with_the_runs_model() {
    let mut h = harness(Panel {
        panel: CurvePanel::default(),
        config: Some(pen_config()),
        task: None,
        commands: Vec::new(),
    });
    h.get_by_label(RUN_LABEL).click();
    h.run();
    let commands = &h.state().commands;
    assert_eq!(commands.len(), 1, "{commands:?}");
    let UiCommand::RunTask(Task::Pbp(task)) = &commands[0] else {
        panic!("not the curve task: {commands:?}");
    };
    assert_eq!(task.args.sizes, DEFAULT_SIZES.to_vec());
    assert_eq!(task.args.seeds, DEFAULT_SEEDS);
    assert_eq!(
        (task.args.states, task.args.restarts, task.args.lambda),
        (5, 3, 0.1)
    );
    assert!(task.args.out.is_none());
}

#[test]
fn a_running_sweep_shows_its_progress_and_cancels() {
    let mut h = harness(Panel {
        panel: CurvePanel::default(),
        config: Some(pen_config()),
        task: Some(TaskProgress {
            label: LABEL,
            done: 3,
            total: 24,
        }),
        commands: Vec::new(),
    });
    h.get_by_label_contains("3 / 24 fits");
    h.get_by_label_contains("computing");
    // A second sweep cannot start while one runs.
    h.get_by_label(RUN_LABEL).click();
    h.run();
    assert!(h.state().commands.is_empty(), "{:?}", h.state().commands);
    h.get_by_label("Cancel").click();
    h.run();
    assert!(
        matches!(h.state().commands.as_slice(), [UiCommand::CancelTask]),
        "{:?}",
        h.state().commands
    );
}

#[test]
fn without_a_pendigits_run_the_button_is_off() {
    let mut h = harness(Panel {
        panel: CurvePanel::default(),
        config: None,
        task: None,
        commands: Vec::new(),
    });
    h.get_by_label(RUN_LABEL).click();
    h.run();
    assert!(h.state().commands.is_empty());
}

/// File > Open of a sweep's pendigits.json in the pbp room shows the curve instead of taking it
/// as a model or a session (the running model stays); a JSON file that is neither a session nor
/// anything the room opens (sosmp opens no file) is refused, saying both.
#[test]
fn opening_a_pendigits_json_keeps_the_run_and_says_where_the_curve_is() {
    use crate::common::{wait_for, window_on};
    use beliefscope::scenarios::ScenarioConfig;
    use beliefscope::scenarios::sosmp::SosmpConfig;

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pendigits.json");
    std::fs::write(&path, serde_json::to_string(&small_curve()).unwrap()).unwrap();
    let config = PbpConfig {
        samples: 500,
        em_restarts: 1,
        run_online_em: false,
        ..PbpConfig::default()
    };
    let mut h = window_on(ScenarioConfig::Pbp(config.clone()));
    h.state_mut().open_image(path.clone());
    wait_for(&mut h, "the curve's notice", |h| {
        h.state()
            .notices()
            .iter()
            .any(|n| n.contains("accuracy over N read from") && n.contains("model pendigits"))
    });
    assert!(
        !h.state().notices().iter().any(|n| n.contains("session")),
        "{:?}",
        h.state().notices()
    );
    assert_eq!(h.state().edited_config(), &ScenarioConfig::Pbp(config));

    let other = dir.path().join("other.json");
    std::fs::write(&other, r#"{"x": 1}"#).unwrap();
    let mut h = window_on(ScenarioConfig::Sosmp(SosmpConfig::default()));
    h.state_mut().open_image(other);
    wait_for(&mut h, "the refusal", |h| {
        h.state()
            .notices()
            .iter()
            .any(|n| n.contains("not a beliefscope session") && n.contains(", and "))
    });
}

/// In a pendigits run (synthetic digits in the UCI format), the button starts the sweep on the
/// worker: its progress shows in the panel, and Cancel stops it with a notice.
#[test]
fn the_button_runs_the_sweep_on_the_worker_with_progress_and_cancel() {
    use crate::common::{wait_for, window_on};
    use beliefscope::scenarios::ScenarioConfig;

    let data = tempfile::tempdir().unwrap();
    super::pendigits_curve::write_synthetic_digits(data.path(), 7494, 100);
    let config = PbpConfig {
        model: "pendigits".into(),
        samples: 200,
        states: 3,
        lambda1: 0.1,
        em_restarts: 1,
        run_em: false,
        run_online_em: false,
        data_dir: data.path().display().to_string(),
        ..PbpConfig::default()
    };
    let mut h = window_on(ScenarioConfig::Pbp(config));
    wait_for(&mut h, "the pendigits view", |h| {
        h.query_by_label(RUN_LABEL).is_some()
    });
    h.get_by_label(RUN_LABEL).click();
    let total = DEFAULT_SIZES.len() * DEFAULT_SEEDS;
    wait_for(&mut h, "the sweep's progress", |h| {
        h.query_by_label_contains(&format!(" / {total} fits"))
            .is_some()
    });
    // The panel's Cancel and the status bar's do the same.
    assert_eq!(h.get_all_by_label("Cancel").count(), 2);
    h.get_all_by_label("Cancel").next().unwrap().click();
    wait_for(&mut h, "the cancel", |h| {
        h.state()
            .notices()
            .iter()
            .any(|n| n.contains("accuracy over N cancelled"))
    });
    wait_for(&mut h, "the progress to go", |h| {
        h.query_by_label_contains(" fits").is_none()
    });
}
