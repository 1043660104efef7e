//! The headless CLI end to end: results.json has the common shape, files are written, and bad
//! flags or bad files exit non-zero with one line naming the problem.

use serde_json::Value;

use crate::cli_common::{beliefscope, read_json, stderr};

#[test]
fn list_names_the_scenarios() {
    let o = beliefscope(&["list"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("denoise") && text.contains("discrete"),
        "{text}"
    );
}

#[test]
fn run_denoise_writes_results_and_files() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = beliefscope(&[
        "run",
        "denoise",
        "--width",
        "24",
        "--height",
        "20",
        "--colors",
        "8",
        "--iters",
        "5",
        "--tolerance",
        "0",
        "--seed",
        "3",
        "--no-sure-stop",
        "--out",
        out.to_str().unwrap(),
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("iter    5"),
        "progress on stderr: {}",
        stderr(&o)
    );
    for f in [
        "results.json",
        "clean.png",
        "noisy.png",
        "estimate.png",
        "error.png",
        "curves.csv",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let printed: Value = serde_json::from_slice(&o.stdout).expect("--json prints results.json");
    let written: Value = read_json(&out.join("results.json"));
    assert_eq!(printed, written);
    let r = written;
    assert_eq!(r["scenario"], "denoise");
    assert_eq!(r["algorithm"], "kbp");
    assert_eq!(r["update"], "kbp-constant");
    assert!(r["ranks"]["feature"].as_u64().unwrap() >= 1);
    for p in ["2", "3", "4"] {
        assert!(
            r["ranks"]["tensor"][p].as_u64().unwrap() >= 1,
            "tensor rank for p = {p}"
        );
    }
    assert!(r["bandwidths"]["hidden"].as_f64().unwrap() > 0.0);
    assert!(
        r["lambda"]["convention"]
            .as_str()
            .unwrap()
            .contains("Gram form")
    );
    let config = &r["config"];
    for key in [
        "width",
        "height",
        "colors",
        "noise",
        "seed",
        "damping",
        "schedule",
        "max_iters",
        "tolerance",
        "estimate",
        "algorithm",
        "quantize",
    ] {
        assert!(
            !config[key].is_null() || key == "image",
            "config.{key} missing: {config}"
        );
    }
    assert_eq!(config["colors"], 8);
    assert_eq!(config["seed"], 3);
    assert!(r["setup_seconds"].as_f64().unwrap() >= 0.0);
    let iters = r["iterations"].as_array().unwrap();
    assert_eq!(iters.len(), 5);
    for (i, it) in iters.iter().enumerate() {
        assert_eq!(it["iter"], i + 1);
        assert!(it["seconds"].as_f64().unwrap() >= 0.0);
        assert!(it["residual"].as_f64().unwrap().is_finite());
        assert!(it["metrics"]["rmse"].as_f64().unwrap().is_finite());
    }
    let fin = &r["final"]["metrics"];
    assert!(fin["rmse"].as_f64().unwrap() < fin["noisy_rmse"].as_f64().unwrap());
    let csv = std::fs::read_to_string(out.join("curves.csv")).unwrap();
    assert_eq!(
        csv.lines().next().unwrap(),
        "iter,seconds,residual,oscillating_fraction,residual_p50,residual_p90,residual_p99,rms_to_noisy,rmse"
    );
    assert_eq!(csv.lines().count(), 6);
    let img = image::open(out.join("estimate.png")).unwrap();
    assert_eq!((img.width(), img.height()), (24, 20));
}

#[test]
fn same_config_gives_the_same_numbers() {
    let run = || {
        let o = beliefscope(&[
            "run", "denoise", "--width", "16", "--height", "16", "--iters", "3", "--json",
        ]);
        let r: Value = serde_json::from_slice(&o.stdout).unwrap();
        r["iterations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["metrics"]["rmse"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(run(), run());
}

fn assert_fails(args: &[&str], needle: &str) {
    let o = beliefscope(args);
    assert!(!o.status.success(), "{args:?} should fail");
    let e = stderr(&o);
    assert!(e.contains(needle), "{args:?}: expected '{needle}' in: {e}");
    assert!(!e.contains("panicked"), "{args:?} panicked: {e}");
}

#[test]
fn bad_flags_fail_with_a_message() {
    assert_fails(&["run", "denoise", "--colors", "abc"], "--colors");
    assert_fails(&["run", "denoise", "--bogus"], "--bogus");
    assert_fails(&["run", "denoise", "--colors", "1"], "colors");
    assert_fails(&["run", "denoise", "--noise", "0"], "noise");
    assert_fails(&["run", "denoise", "--noise", "NaN"], "noise");
    assert_fails(&["run", "denoise", "--schedule", "shuffled"], "schedule");
    assert_fails(&["run", "denoise", "--damping", "1.2"], "damping");
    assert_fails(&["run", "nosuchscenario"], "nosuchscenario");
}

#[test]
fn bad_files_fail_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("broken.png");
    std::fs::write(&garbage, b"\x89PNG\r\n\x1a\nthis is not really a png").unwrap();
    assert_fails(
        &["run", "denoise", "--image", garbage.to_str().unwrap()],
        "broken.png",
    );
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, b"hello").unwrap();
    assert_fails(
        &["run", "denoise", "--image", text.to_str().unwrap()],
        "notes.txt",
    );
    assert_fails(
        &["run", "denoise", "--image", "/no/such/file.png"],
        "/no/such/file.png",
    );
    let huge = dir.path().join("huge.png");
    image::GrayImage::new(4097, 2).save(&huge).unwrap();
    assert_fails(
        &["run", "denoise", "--image", huge.to_str().unwrap()],
        "largest accepted",
    );
}

#[test]
fn a_loaded_image_is_denoised() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("blocks.png");
    image::GrayImage::from_fn(64, 48, |x, y| {
        image::Luma([if (x / 16 + y / 16) % 2 == 0 { 40 } else { 200 }])
    })
    .save(&path)
    .unwrap();
    let out = dir.path().join("out");
    let o = beliefscope(&[
        "run",
        "denoise",
        "--image",
        path.to_str().unwrap(),
        "--colors",
        "16",
        "--iters",
        "10",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let r: Value = read_json(&out.join("results.json"));
    let fin = &r["final"]["metrics"];
    assert!(
        fin["rmse"].as_f64().unwrap() < 0.8 * fin["noisy_rmse"].as_f64().unwrap(),
        "{fin}"
    );
}
