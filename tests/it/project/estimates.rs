//! The estimates a run is checked and announced with stay true: for every scenario, child runs
//! at two sizes report their peak RSS (`/proc/self/status`, written into results.json's
//! `estimates` record) and it must lie between 0.7 and 1.5 of the memory estimate. A feature
//! that adds memory without updating its scenario's estimate fails here. The time estimate is
//! only checked for presence and sense (timings are noisy): it is compared in docs/estimates.md.

use crate::cli_common::{beliefscope, stderr};

/// (what, the arguments of `beliefscope run`).
const RUNS: &[(&str, &[&str])] = &[
    (
        "denoise 400 x 400",
        &[
            "denoise", "--width", "400", "--height", "400", "--iters", "3",
        ],
    ),
    (
        "denoise 800 x 600",
        &[
            "denoise", "--width", "800", "--height", "600", "--iters", "2",
        ],
    ),
    (
        "denoise discrete 300 x 300",
        &[
            "denoise",
            "--width",
            "300",
            "--height",
            "300",
            "--algorithm",
            "discrete",
            "--iters",
            "2",
        ],
    ),
    (
        "flow 256 x 256",
        &["flow", "--width", "256", "--height", "256"],
    ),
    (
        "flow discrete 512 x 384",
        &[
            "flow",
            "--width",
            "512",
            "--height",
            "384",
            "--algorithm",
            "discrete",
        ],
    ),
    (
        "sosmp 1000 nodes",
        &["sosmp", "--nodes", "1000", "--iters", "20"],
    ),
    (
        "sosmp 4000 nodes",
        &["sosmp", "--nodes", "4000", "--iters", "5"],
    ),
    (
        "retrieval pool 1000",
        &[
            "retrieval",
            "--pool",
            "1000",
            "--repeats",
            "1",
            "--lengths",
            "9",
        ],
    ),
    (
        "retrieval pool 2000",
        &[
            "retrieval",
            "--pool",
            "2000",
            "--repeats",
            "1",
            "--lengths",
            "9",
        ],
    ),
    ("kjit", &["kjit", "--problems", "1"]),
    (
        "kjit 2e5 particles",
        &["kjit", "--problems", "1", "--particles", "200000"],
    ),
    ("pbp", &["pbp", "--samples", "2000"]),
    ("pbp 2e5 samples", &["pbp", "--samples", "200000"]),
    ("tree m = 1000", &["tree", "--builtin", "gauss-tree"]),
    (
        "tree m = 2500",
        &[
            "tree",
            "--builtin",
            "gauss-tree",
            "--rows",
            "2500",
            "--samples-per-edge",
            "2500",
        ],
    ),
    ("teach", &["teach"]),
    ("teach grid", &["teach", "--graph", "grid"]),
];

#[test]
fn peak_memory_lies_between_0_7_and_1_5_of_the_estimate_in_every_scenario() {
    if !std::path::Path::new("/proc/self/status").exists() {
        eprintln!("no /proc/self/status: peak RSS cannot be read here");
        return;
    }
    let mut failures = Vec::new();
    let mut scenarios = std::collections::BTreeSet::new();
    for (what, args) in RUNS {
        let mut full = vec!["run"];
        full.extend_from_slice(args);
        full.push("--json");
        let out = beliefscope(&full);
        assert!(out.status.success(), "{what}: {}", stderr(&out));
        let results: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        scenarios.insert(results["scenario"].as_str().unwrap().to_string());
        let memory = &results["estimates"]["memory"];
        let estimate = memory["estimated_bytes"]
            .as_f64()
            .unwrap_or_else(|| panic!("{what}: no memory estimate"));
        let peak = memory["peak_rss_bytes"].as_f64().unwrap();
        let ratio = peak / estimate;
        eprintln!(
            "{what:28} estimate {:7.1} MB  peak {:7.1} MB  ratio {ratio:.2}",
            estimate / 1e6,
            peak / 1e6
        );
        if !(0.7..=1.5).contains(&ratio) {
            failures.push(format!(
                "{what}: peak {:.1} MB is {ratio:.2} of the estimate {:.1} MB ({})",
                peak / 1e6,
                estimate / 1e6,
                memory["estimated_parts"]
            ));
        }
        let time = &results["estimates"]["time"];
        let seconds = time["estimated_seconds"]
            .as_f64()
            .unwrap_or_else(|| panic!("{what}: no time estimate"));
        assert!(seconds.is_finite() && seconds >= 0.0, "{what}: {seconds}");
    }
    let every: Vec<String> = beliefscope::scenarios::catalogue()
        .into_iter()
        .map(|(name, ..)| name.to_string())
        .collect();
    for name in every {
        assert!(scenarios.contains(&name), "no estimate check for {name}");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
