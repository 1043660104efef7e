//! Teaching mode: the window steps one message at a time (keyboard and
//! button), the schedule's next message is the one sent, the receiving node's belief changes,
//! and Play is paced by the speed; headless, `run teach` writes every message.

use std::time::{Duration, Instant};

use crate::common::*;
use beliefscope::app::App;
use beliefscope::scenarios::ScenarioConfig;
use beliefscope::scenarios::teach::{MessageKind, TeachConfig, TeachGraph};
use eframe::egui::Key;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable as _;

fn app(config: TeachConfig) -> Harness<'static, App> {
    Harness::builder()
        .with_size([1360.0, 840.0])
        .build_eframe(move |cc| App::with_config(cc, ScenarioConfig::Teach(config), false))
}

/// The numbers after `key` in `text` ("before: 0.1, 0.2; after: ..." -> [0.1, 0.2]).
fn numbers_after(text: &str, key: &str) -> Vec<f64> {
    let rest = text
        .split(key)
        .nth(1)
        .unwrap_or_else(|| panic!("{key} in {text}"));
    rest.split(';')
        .next()
        .unwrap()
        .split(',')
        .map(|x| x.trim().parse().unwrap_or_else(|_| panic!("{x} in {text}")))
        .collect()
}

/// "1. x5 → x4" from the Next list: (from, to) of the schedule's next message.
fn next_message(h: &Harness<'_, App>) -> (String, String) {
    let text = text_containing(h, "1. ").expect("the next-messages list");
    let pair = text.trim_start_matches("1. ");
    let (a, b) = pair.split_once(" → ").expect("a → b");
    (a.to_string(), b.to_string())
}

fn sent_count(h: &Harness<'_, App>) -> Option<usize> {
    texts(h).iter().find_map(|t| {
        let n = t.strip_prefix("Message ")?.split(':').next()?;
        n.parse().ok()
    })
}

#[test]
fn the_arrow_key_sends_the_next_message_and_the_belief_changes() {
    let mut h = app(TeachConfig::default());
    wait_for(&mut h, "the first frame", |h| {
        has_text(h, "No message sent yet")
    });
    for n in 1..=3 {
        let (from, to) = next_message(&h);
        h.key_press(Key::ArrowRight);
        let caption = format!("Message {n}: {from} → {to} ");
        wait_for(&mut h, &caption, |h| has_text(h, &caption));
        let belief = text_containing(&h, &format!("Belief of {to} before: ")).unwrap();
        let before = numbers_after(&belief, "before: ");
        let after = numbers_after(&belief, "after: ");
        assert_eq!(before.len(), 3);
        let moved: f64 = before.iter().zip(&after).map(|(a, b)| (a - b).abs()).sum();
        assert!(moved > 1e-3, "message {n}: {belief}");
        let message = text_containing(&h, &format!("Message {from} → {to} before: ")).unwrap();
        let sum: f64 = numbers_after(&message, "after: ").iter().sum();
        assert!((sum - 1.0).abs() < 0.01, "{message}");
    }
    // The Step button does the same as the key.
    h.get_by_label("Step").click();
    wait_for(&mut h, "message 4", |h| has_text(h, "Message 4: "));
}

#[test]
fn a_tree_is_exact_after_one_sweep_in_the_window() {
    let mut h = app(TeachConfig {
        graph: TeachGraph::Tree,
        ..TeachConfig::default()
    });
    wait_for(&mut h, "the first frame", |h| {
        has_text(h, "No message sent yet")
    });
    // 6 edges: 12 messages in the sweep's round.
    for n in 1..=12 {
        h.key_press(Key::ArrowRight);
        let caption = format!("Message {n}: ");
        wait_for(&mut h, &caption, |h| has_text(h, &caption));
    }
    let status = text_containing(&h, "Largest |belief − exact|").unwrap();
    assert!(status.contains("fixed point reached"), "{status}");
    let error: f64 = status
        .split("Largest |belief − exact| ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap();
    assert!(error < 1e-9, "{status}");
}

#[test]
fn play_is_paced_by_the_speed() {
    let mut h = app(TeachConfig {
        max_messages: 100,
        graph: TeachGraph::Grid,
        ..TeachConfig::default()
    });
    wait_for(&mut h, "the first frame", |h| {
        has_text(h, "No message sent yet")
    });
    // Space is Play / Pause.
    h.key_press(Key::Space);
    wait_for(&mut h, "the first message", |h| sent_count(h).is_some());
    let start = Instant::now();
    let first = sent_count(&h).unwrap();
    while start.elapsed() < Duration::from_millis(1500) {
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    let later = sent_count(&h).unwrap();
    // 2 messages a second by default: at most 3 or 4 more in 1.5 s (unpaced, all 100 at once).
    assert!(later <= first + 4, "{first} then {later}");
    assert!(later < 100, "{later}");
    h.get_by_label("Pause").click();
}

#[test]
fn run_teach_writes_every_message() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_beliefscope"))
        .args(["run", "teach", "--graph", "chain", "--steps", "4", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = std::fs::read_to_string(dir.path().join("messages.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 5, "{csv}");
    assert!(lines[1].starts_with("1,x5,x4,1,"), "{csv}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("results.json")).unwrap())
            .unwrap();
    assert_eq!(json["messages"].as_array().unwrap().len(), 4);
    assert_eq!(json["config"]["graph"], "chain");
    // The figure beside them: a real bitmap with more than the background and axes in it.
    let figure = image::open(dir.path().join("convergence.png"))
        .unwrap()
        .to_rgb8();
    assert_eq!(figure.dimensions(), (820, 520));
    let colours: std::collections::HashSet<[u8; 3]> = figure.pixels().map(|p| p.0).collect();
    assert!(colours.len() > 50, "{} colours", colours.len());
}

/// "mean 0.123, sd 0.456" after `key` in `text`: (mean, sd).
fn mean_sd_after(text: &str, key: &str) -> (f64, f64) {
    let rest = text
        .split(key)
        .nth(1)
        .unwrap_or_else(|| panic!("{key} in {text}"));
    let part = rest.split(';').next().unwrap();
    let number = |name: &str| -> f64 {
        part.split(name)
            .nth(1)
            .and_then(|s| s.split(',').next())
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or_else(|| panic!("{name} in {part}"))
    };
    (number("mean "), number("sd "))
}

#[test]
fn stepping_a_gaussian_message_changes_the_drawn_belief_curve() {
    let mut h = app(TeachConfig {
        messages: MessageKind::Gaussian,
        graph: TeachGraph::Tree,
        ..TeachConfig::default()
    });
    wait_for(&mut h, "the first frame", |h| {
        has_text(h, "No message sent yet")
    });
    for n in 1..=12 {
        let (from, to) = next_message(&h);
        h.key_press(Key::ArrowRight);
        let caption = format!("Message {n}: {from} → {to} ");
        wait_for(&mut h, &caption, |h| has_text(h, &caption));
        // The status bar counts messages, not iterations.
        assert!(has_text(&h, &format!("message {n} / 200")), "{n}");
        let message = text_containing(&h, &format!("Message {from} → {to} before: ")).unwrap();
        assert!(message.contains("after: mean "), "{message}");
        let belief = text_containing(&h, &format!("Belief of {to} before: ")).unwrap();
        let before = mean_sd_after(&belief, "before: ");
        let after = mean_sd_after(&belief, "after: ");
        let moved = (before.0 - after.0).abs() + (before.1 - after.1).abs();
        assert!(moved > 1e-3, "message {n}: {belief}");
    }
    assert!(!texts(&h).iter().any(|t| t.starts_with("iteration ")));
    // A tree: after the sweep's 12 messages every belief is the exact marginal.
    let status = text_containing(&h, "Largest ∫|belief − reference|").unwrap();
    assert!(status.contains("fixed point reached"), "{status}");
    let belief = text_containing(&h, "; reference: mean ").unwrap();
    let after = mean_sd_after(&belief, "after: ");
    let exact = mean_sd_after(&belief, "reference: ");
    assert!(
        (after.0 - exact.0).abs() < 2e-3 && (after.1 - exact.1).abs() < 2e-3,
        "{belief}"
    );
}

#[test]
fn stepping_a_series_message_changes_its_coefficients_and_the_belief() {
    let mut h = app(TeachConfig {
        messages: MessageKind::Series,
        ..TeachConfig::default()
    });
    wait_for(&mut h, "the first frame", |h| {
        has_text(h, "No message sent yet")
    });
    for n in 1..=2 {
        let (from, to) = next_message(&h);
        h.key_press(Key::ArrowRight);
        let caption = format!("Message {n}: {from} → {to} ");
        wait_for(&mut h, &caption, |h| has_text(h, &caption));
        let message =
            text_containing(&h, &format!("Message {from} → {to} coefficients before: ")).unwrap();
        let before = numbers_after(&message, "before: ");
        let after = numbers_after(&message, "after: ");
        assert_eq!((before.len(), after.len()), (10, 10), "{message}");
        // SOSMP starts every coefficient at 1/r; the first update replaces them by b.
        assert!(before.iter().all(|a| (a - 0.1).abs() < 1e-3), "{message}");
        assert!(
            before.iter().zip(&after).any(|(a, b)| (a - b).abs() > 1e-2),
            "{message}"
        );
        let belief = text_containing(&h, &format!("Belief of {to} before: ")).unwrap();
        let b0 = mean_sd_after(&belief, "before: ");
        let b1 = mean_sd_after(&belief, "after: ");
        assert!((b0.0 - b1.0).abs() + (b0.1 - b1.1).abs() > 1e-3, "{belief}");
    }
}

#[test]
fn run_teach_gaussian_is_exact_on_a_tree_and_series_refuses_residual_bp() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_beliefscope"))
        .args([
            "run",
            "teach",
            "--messages",
            "gaussian",
            "--graph",
            "tree",
            "--out",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("results.json")).unwrap())
            .unwrap();
    assert_eq!(json["config"]["messages"], "gaussian");
    // One sweep of 12 messages, then the fixed point stops the run.
    assert_eq!(json["messages"].as_array().unwrap().len(), 12);
    assert!(
        json["max_mean_error"].as_f64().unwrap() < 1e-9,
        "{}",
        json["max_mean_error"]
    );
    assert!(json["max_belief_error"].as_f64().unwrap() < 1e-6);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_beliefscope"))
        .args([
            "run",
            "teach",
            "--messages",
            "series",
            "--schedule",
            "residual",
            "--out",
        ])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no exact pending residual"), "{err}");
}
