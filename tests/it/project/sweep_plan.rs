//! The generic sweep end to end through the real binary: every scenario takes `--vary`; bad
//! lists are refused before anything runs; a sweep killed half-way and re-run runs only the
//! missing runs; the plan run by GNU parallel and by Slurm's array script, then `collect`,
//! gives the in-process sweep's summary.csv, timings aside. Small denoise configs (20 x 20,
//! 5 iterations), so each run takes milliseconds.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::cli_common::{beliefscope, stderr};

const EXE: &str = env!("CARGO_BIN_EXE_beliefscope");

/// The small sweep: 2 gray-level counts x 2 algorithms x 2 seeds = 8 runs.
const SMALL: &[&str] = &[
    "sweep",
    "denoise",
    "--vary",
    "colors=10,20",
    "--vary",
    "algorithm=discrete,kbp",
    "--seeds",
    "2",
    "--set",
    "width=20",
    "--set",
    "height=20",
    "--set",
    "max_iters=5",
    "--set",
    "sure_stop=false",
];

fn with(base: &[&str], more: &[&str]) -> Vec<String> {
    base.iter().chain(more).map(|s| s.to_string()).collect()
}

fn run(args: &[String]) -> std::process::Output {
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    beliefscope(&refs)
}

fn ok(args: &[String]) -> String {
    let o = run(args);
    let e = stderr(&o);
    assert!(o.status.success(), "{}: {e}", args.join(" "));
    e
}

/// summary.csv without its timing columns (the last three), as lines.
fn untimed(dir: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    assert_eq!(
        header[header.len() - 3..],
        ["setup_seconds", "seconds_per_iter", "seconds"]
    );
    text.lines()
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            cells[..cells.len() - 3].join(",")
        })
        .collect()
}

/// The in-process sweep of [`SMALL`], run once for the tests that compare with it.
fn reference() -> &'static Vec<String> {
    static REFERENCE: OnceLock<(tempfile::TempDir, Vec<String>)> = OnceLock::new();
    &REFERENCE
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let out = dir.path().join("inprocess");
            let e = ok(&with(SMALL, &["--out", out.to_str().unwrap()]));
            assert!(e.contains("ran 8 runs, skipped 0"), "{e}");
            let lines = untimed(&out);
            assert_eq!(lines.len(), 9, "header and 8 runs");
            (dir, lines)
        })
        .1
}

fn plan(dir: &Path) -> PathBuf {
    let out = dir.join("plan");
    let e = ok(&with(SMALL, &["--plan", "--out", out.to_str().unwrap()]));
    assert!(e.contains("planned 8 runs"), "{e}");
    assert!(!out.join("summary.csv").exists(), "--plan runs nothing");
    out
}

fn results(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("runs"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.path().join("results.json").exists())
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn every_scenario_sweeps_with_vary() {
    let dir = tempfile::tempdir().unwrap();
    for (name, key) in [
        ("denoise", "seed"),
        ("tree", "sample_seed"),
        ("sosmp", "seed"),
        ("pbp", "seed"),
        ("flow", "seed"),
        ("kjit", "seed"),
        ("retrieval", "seed"),
        ("teach", "seed"),
    ] {
        let out = dir.path().join(name);
        let vary = format!("{key}=3,4");
        let args = ["sweep", name, "--vary", &vary, "--plan", "--out"];
        let o = beliefscope(&[&args[..], &[out.to_str().unwrap()]].concat());
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let jobs = std::fs::read_to_string(out.join("jobs.txt")).unwrap();
        assert_eq!(jobs.lines().count(), 2, "{name}: {jobs}");
        assert!(jobs.contains(" run --config "), "{jobs}");
    }
    // A teach sweep runs for real, with --seeds.
    let out = dir.path().join("teach-run");
    let e = ok(&with(
        &[
            "sweep",
            "teach",
            "--vary",
            "graph=chain,tree",
            "--seeds",
            "2",
        ],
        &["--out", out.to_str().unwrap()],
    ));
    assert!(e.contains("ran 4 runs"), "{e}");
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(summary.starts_with("id,graph,seed,"), "{summary}");
    assert!(
        summary.contains("001_graph=chain_seed=1,chain,1,"),
        "{summary}"
    );
}

#[test]
fn bad_lists_are_refused_before_any_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bad");
    let o = out.to_str().unwrap();
    for (args, says) in [
        (vec!["--vary", "colour=1,2"], "unknown parameter 'colour'"),
        (vec!["--vary", "colors=10,many"], "colors=many"),
        (vec!["--vary", "colors=10,1000"], "between 2 and 256"),
        (vec!["--vary", "colors="], "no values"),
        (vec!["--vary", "colors"], "key=v1,v2"),
        (
            vec!["--vary", "colors=10,20", "--vary", "noise=5", "--zip"],
            "colors has 2 values and noise has 1",
        ),
        (vec!["--vary", "colors=10", "--seeds", "0"], "at least 1"),
        (
            vec!["--vary", "seed=1,2", "--seeds", "2"],
            "--seeds steps seed",
        ),
        (vec!["--vary", "colors=10", "--colors", "20"], "--colors"),
        (vec!["--vary", "colors=10", "--jobs", "0"], "--jobs"),
        (vec![], "--out DIR"),
    ] {
        let mut a = vec!["sweep", "denoise"];
        a.extend(&args);
        if !args.is_empty() {
            a.extend(["--out", o]);
        } else {
            a.extend(["--vary", "colors=10"]);
        }
        let r = beliefscope(&a);
        let e = stderr(&r);
        assert!(!r.status.success(), "{a:?} succeeded");
        assert!(e.contains(says), "{a:?}: {e}");
        assert_eq!(e.trim().lines().count(), 1, "one line: {e}");
        assert_eq!(results(&out), 0, "{a:?} ran something");
    }
    let r = beliefscope(&["sweep", "flow", "--out", o]);
    assert!(stderr(&r).contains("needs --vary"), "{}", stderr(&r));
}

#[test]
fn a_killed_sweep_reruns_only_the_missing_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("killed");
    // 12 runs one at a time, each some tens of milliseconds.
    let args = [
        "sweep",
        "denoise",
        "--vary",
        "colors=10,20,30,40,50,60",
        "--seeds",
        "2",
        "--set",
        "width=48",
        "--set",
        "height=48",
        "--set",
        "max_iters=20",
        "--set",
        "sure_stop=false",
        "--jobs",
        "1",
        "--out",
        out.to_str().unwrap(),
    ];
    let mut child = Command::new(EXE)
        .args(args)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while results(&out) < 3 && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // The run in progress dies with the sweep; give it a moment to be gone.
    std::thread::sleep(Duration::from_millis(300));
    let done = results(&out);
    assert!(
        (3..12).contains(&done),
        "{done} runs finished before the kill"
    );
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let e = ok(&args);
    assert!(
        e.contains(&format!(
            "ran {} runs, skipped {done} already complete",
            12 - done
        )),
        "{e}"
    );
    assert_eq!(untimed(&out).len(), 13);
    // Lost and truncated results are run again, nothing else.
    let runs: Vec<PathBuf> = std::fs::read_dir(out.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    std::fs::remove_file(runs[0].join("results.json")).unwrap();
    std::fs::remove_file(runs[5].join("results.json")).unwrap();
    std::fs::write(runs[7].join("results.json"), "{\"scenario\": \"den").unwrap();
    let e = ok(&args);
    assert!(e.contains("ran 3 runs, skipped 9 already complete"), "{e}");
    // A changed fixed parameter is a different run: everything runs again.
    let mut changed = args.clone();
    changed.extend(["--set".into(), "noise=20".into()]);
    let e = ok(&changed);
    assert!(e.contains("ran 12 runs, skipped 0"), "{e}");
}

#[test]
fn gnu_parallel_then_collect_gives_the_in_process_summary() {
    let version = Command::new("parallel").arg("--version").output();
    assert!(
        version.is_ok_and(|o| o.status.success()),
        "GNU parallel is not installed: `bash .ci/install-deps` installs it"
    );
    let dir = tempfile::tempdir().unwrap();
    let out = plan(dir.path());
    let script = std::fs::read_to_string(out.join("parallel.sh")).unwrap();
    assert!(script.contains("--sshlogin"), "{script}");
    let o = Command::new("bash")
        .arg(out.join("parallel.sh"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let e = ok(&["collect".into(), out.display().to_string()]);
    assert!(e.contains("8 of 8 runs finished, 0 missing"), "{e}");
    assert_eq!(&untimed(&out), reference());
}

#[test]
fn collect_says_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let out = plan(dir.path());
    let jobs = std::fs::read_to_string(out.join("jobs.txt")).unwrap();
    for line in jobs.lines().take(3) {
        let o = Command::new("bash").arg("-c").arg(line).output().unwrap();
        assert!(o.status.success(), "{line}");
    }
    let e = ok(&["collect".into(), out.display().to_string()]);
    assert!(e.contains("3 of 8 runs finished, 5 missing"), "{e}");
    let missing = std::fs::read_to_string(out.join("missing.txt")).unwrap();
    assert_eq!(
        missing.lines().collect::<Vec<_>>(),
        jobs.lines().skip(3).collect::<Vec<_>>()
    );
    assert_eq!(untimed(&out), reference()[..4]);
    let e = stderr(&beliefscope(&["collect", dir.path().to_str().unwrap()]));
    assert!(e.contains("sweep.json"), "{e}");
}

/// The Slurm array script, task by task as Slurm would run it, and (where a single-node Slurm
/// starts, as root with slurm-wlm and munge installed) submitted to Slurm itself.
#[test]
fn slurm_array_script_gives_the_in_process_summary() {
    let dir = tempfile::tempdir().unwrap();
    let out = plan(dir.path());
    let script = std::fs::read_to_string(out.join("slurm.sh")).unwrap();
    assert!(script.contains("#SBATCH --array=0-7"), "{script}");
    for i in 0..8 {
        let o = Command::new("bash")
            .arg(out.join("slurm.sh"))
            .env("SLURM_ARRAY_TASK_ID", i.to_string())
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "task {i}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let o = Command::new("bash")
        .arg(out.join("slurm.sh"))
        .env("SLURM_ARRAY_TASK_ID", "8")
        .output()
        .unwrap();
    assert!(!o.status.success(), "task 8 of 8 is refused");
    ok(&["collect".into(), out.display().to_string()]);
    assert_eq!(&untimed(&out), reference());

    // Slurm itself.
    // (`sbatch --version` already wants a configuration: look the programs up instead.)
    let installed = Command::new("sh")
        .args([
            "-c",
            "command -v sbatch && command -v slurmctld && command -v munged",
        ])
        .output();
    assert!(
        installed.is_ok_and(|o| o.status.success()),
        "Slurm is not installed: `bash .ci/install-deps` installs slurm-wlm and munge"
    );
    let state = dir.path().join("slurm");
    let start_script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/slurm-single-node.sh");
    let started = Command::new("bash")
        .arg(&start_script)
        .arg("start")
        .arg(&state)
        .output()
        .unwrap();
    if started.status.code() == Some(2) {
        // Not startable here (not root, or a daemon refused): the task-by-task run above is
        // the test; say why.
        eprintln!(
            "single-node Slurm did not start, so only the array script's tasks were run: {}",
            String::from_utf8_lossy(&started.stderr)
        );
        return;
    }
    assert!(
        started.status.success(),
        "{}",
        String::from_utf8_lossy(&started.stderr)
    );
    let conf = state.join("slurm.conf");
    let submitted = dir.path().join("submitted");
    let e = ok(&with(
        SMALL,
        &["--plan", "--out", submitted.to_str().unwrap()],
    ));
    assert!(e.contains("planned 8 runs"), "{e}");
    let o = Command::new("sbatch")
        .arg("--wait")
        .arg(submitted.join("slurm.sh"))
        .env("SLURM_CONF", &conf)
        .output()
        .unwrap();
    let _ = Command::new("bash")
        .arg(&start_script)
        .arg("stop")
        .arg(&state)
        .output();
    assert!(
        o.status.success(),
        "sbatch: {}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let e = ok(&["collect".into(), submitted.display().to_string()]);
    assert!(e.contains("8 of 8 runs finished"), "{e}");
    assert_eq!(&untimed(&submitted), reference());
    let logs = std::fs::read_dir(submitted.join("slurm-logs"))
        .unwrap()
        .count();
    assert_eq!(logs, 8, "one Slurm log per array task");
}

#[test]
fn the_paper_flags_of_sweep_denoise_still_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fig1");
    let e = ok(&[
        "sweep",
        "denoise",
        "--colors",
        "10,20",
        "--algorithms",
        "discrete,kbp",
        "--repeats",
        "2",
        "--iters",
        "3",
        "--width",
        "20",
        "--height",
        "20",
        "--out",
        out.to_str().unwrap(),
    ]
    .map(String::from));
    assert!(e.contains("ran 8 runs"), "{e}");
    let by_setting = std::fs::read_to_string(out.join("summary_by_setting.csv")).unwrap();
    assert!(
        by_setting.starts_with("colors,algorithm,runs,rmse_mean,"),
        "{by_setting}"
    );
    assert_eq!(by_setting.lines().count(), 5);
    assert!(out.join("figure1.png").exists());
    // The other scenarios' own sweeps keep their flags.
    for (name, flag) in [
        ("tree", "--samples"),
        ("sosmp", "--coefficients"),
        ("pbp", "--first-seed"),
    ] {
        let help =
            String::from_utf8_lossy(&beliefscope(&["sweep", name, "--help"]).stdout).into_owned();
        assert!(
            help.contains(flag) && help.contains("--vary"),
            "{name}: {help}"
        );
    }
}
