//! Teaching mode (issue 19, item 4): the window steps one message at a time (keyboard and
//! button), the schedule's next message is the one sent, the receiving node's belief changes,
//! and Play is paced by the speed; headless, `run teach` writes every message.

use std::time::{Duration, Instant};

use crate::common::*;
use beliefscope::app::App;
use beliefscope::scenarios::ScenarioConfig;
use beliefscope::scenarios::teach::{TeachConfig, TeachGraph};
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
