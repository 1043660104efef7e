//! results.json's `config` must reproduce its run: the sizes echoed are the sizes that ran (a
//! loaded image or pair of frames fixes them), and re-running the echoed config gives the same
//! final metrics.

use std::collections::BTreeMap;
use std::path::Path;

use beliefscope::scenarios::denoise::{BuiltinTraining, Denoise, DenoiseConfig};
use beliefscope::scenarios::flow::{FlowConfig, FlowScenario};
use beliefscope::scenarios::{CancelFlag, Scenario};
use serde_json::Value;

use crate::cli_common::{beliefscope, read_json, stderr};

/// A `w` x `h` gray PNG of shaded blocks, shifted right by `shift` pixels.
fn blocks(path: &Path, w: u32, h: u32, shift: u32) {
    image::GrayImage::from_fn(w, h, |x, y| {
        let x = x + 64 - shift;
        let base = if (x / 8 + y / 8).is_multiple_of(2) {
            30
        } else {
            150
        };
        image::Luma([(base + (x % 8) * 6 + (y % 8) * 3) as u8])
    })
    .save(path)
    .unwrap();
}

/// Steps `s` until it finishes and returns its final metrics.
fn finish(mut s: impl Scenario) -> BTreeMap<String, f64> {
    while !s.finished() {
        s.step().unwrap();
    }
    s.final_metrics()
}

fn assert_same_metrics(written: &Value, rerun: &BTreeMap<String, f64>) {
    let written = written.as_object().unwrap();
    let names: Vec<&String> = written.keys().collect();
    assert_eq!(names, rerun.keys().collect::<Vec<_>>());
    for (k, v) in rerun.iter().filter(|(k, _)| !k.contains("seconds")) {
        let w = written[k].as_f64().unwrap();
        assert!(
            (w - v).abs() <= 1e-12 * v.abs().max(1.0),
            "{k}: results.json {w}, re-run {v}"
        );
    }
}

/// `run denoise` on a 40 x 24 image of blocks (8 levels, 3 iterations, discrete BP beside
/// kernel BP) with `extra` flags; its results.json (the folder lives as long as the guard).
fn denoise_on_blocks(extra: &[&str]) -> (tempfile::TempDir, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("blocks.png");
    blocks(&img, 40, 24, 0);
    let out = dir.path().join("out");
    let mut args = vec![
        "run",
        "denoise",
        "--image",
        img.to_str().unwrap(),
        "--colors",
        "8",
        "--iters",
        "3",
        "--compare",
        "discrete",
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = beliefscope(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_json(&out.join("results.json"));
    (dir, r)
}

#[test]
fn denoise_on_a_loaded_image_echoes_its_size_and_reruns() {
    let (_dir, r) = denoise_on_blocks(&[]);
    assert_eq!(r["config"]["width"], 40, "{}", r["config"]);
    assert_eq!(r["config"]["height"], 24, "{}", r["config"]);
    assert_eq!(r["image_size"], serde_json::json!([40, 24]));
    let config: DenoiseConfig = serde_json::from_value(r["config"].clone()).unwrap();
    let rerun = finish(Denoise::new(config.clone(), &CancelFlag::default()).unwrap());
    assert_same_metrics(&r["final"]["metrics"], &rerun);
    // The echoed config is what the scenario reports running.
    let again = Denoise::new(config.clone(), &CancelFlag::default()).unwrap();
    assert_eq!(
        again.config().to_json(),
        serde_json::to_value(&config).unwrap()
    );
}

/// A loaded image trained on the built-in dead-leaves image: the config echoes the choice
/// (`train_builtin`), results.json's `training` names it, the echoed config re-runs to the same
/// metrics, and the same config with the sunset trains on another image (other metrics).
#[test]
fn denoise_trained_on_built_in_dead_leaves_echoes_it_and_reruns() {
    let (_dir, r) = denoise_on_blocks(&["--train-builtin", "dead-leaves"]);
    assert_eq!(
        r["config"]["train_builtin"], "dead_leaves",
        "{}",
        r["config"]
    );
    let training = r["training"].as_str().unwrap();
    assert!(
        training.contains("dead leaves, 4 draws of 40 x 24"),
        "{training}"
    );
    assert_eq!(r["training_size"], serde_json::json!([160, 24]));
    let config: DenoiseConfig = serde_json::from_value(r["config"].clone()).unwrap();
    let rerun = finish(Denoise::new(config.clone(), &CancelFlag::default()).unwrap());
    assert_same_metrics(&r["final"]["metrics"], &rerun);
    let sunset = finish(
        Denoise::new(
            DenoiseConfig {
                train_builtin: BuiltinTraining::Sunset,
                ..config
            },
            &CancelFlag::default(),
        )
        .unwrap(),
    );
    assert_ne!(sunset["rmse"], rerun["rmse"]);
}

#[test]
fn denoise_on_the_sunset_reruns_from_its_config() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = beliefscope(&[
        "run",
        "denoise",
        "--width",
        "30",
        "--height",
        "20",
        "--colors",
        "10",
        "--iters",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_json(&out.join("results.json"));
    assert_eq!(r["config"]["width"], 30);
    assert_eq!(r["config"]["height"], 20);
    let config: DenoiseConfig = serde_json::from_value(r["config"].clone()).unwrap();
    let rerun = finish(Denoise::new(config, &CancelFlag::default()).unwrap());
    assert_same_metrics(&r["final"]["metrics"], &rerun);
}

#[test]
fn flow_on_loaded_frames_echoes_their_size_and_reruns() {
    let dir = tempfile::tempdir().unwrap();
    let (f1, f2) = (dir.path().join("f1.png"), dir.path().join("f2.png"));
    blocks(&f1, 36, 28, 0);
    blocks(&f2, 36, 28, 1);
    let out = dir.path().join("out");
    let o = beliefscope(&[
        "run",
        "flow",
        "--frame1",
        f1.to_str().unwrap(),
        "--frame2",
        f2.to_str().unwrap(),
        "--iters",
        "2",
        "--levels",
        "2",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r = read_json(&out.join("results.json"));
    assert_eq!(r["config"]["width"], 36, "{}", r["config"]);
    assert_eq!(r["config"]["height"], 28, "{}", r["config"]);
    let config: FlowConfig = serde_json::from_value(r["config"].clone()).unwrap();
    let rerun = finish(FlowScenario::new(config, &CancelFlag::default()).unwrap());
    assert_same_metrics(&r["final"]["metrics"], &rerun);
}

#[test]
fn the_built_in_flow_pair_keeps_its_size_limits() {
    let err = FlowScenario::new(
        FlowConfig {
            width: 4000,
            ..FlowConfig::default()
        },
        &CancelFlag::default(),
    )
    .err()
    .expect("a 4000-pixel built-in pair is refused");
    assert!(err.to_string().contains("built-in pair"), "{err}");
}
