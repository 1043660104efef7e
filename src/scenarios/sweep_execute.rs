//! Runs a planned sweep on this machine: every run whose `results.json` is complete (written
//! atomically last by `beliefscope run`, parsed here, beside an unchanged config.json) is
//! skipped; the others run as child processes executing their line of jobs.txt, at most
//! `jobs` at a time and with the sum of the running runs' estimated peak memory within the
//! budget. Each child writes its log to `runs/<id>/log.txt`.
//!
//! Child processes rather than threads: a run that panics, aborts or is killed for memory takes
//! only itself down; each run's memory goes back to the system when it ends (so the budget
//! counts what really runs); and the sweep runs exactly the command lines a cluster would. On
//! Linux every child dies with the sweep (`PR_SET_PDEATHSIG`), so a killed sweep leaves no run
//! writing behind it, and a re-run starts only the runs that did not finish.
//!
//! Cost: the runs themselves, plus one process start (milliseconds) per run.

use std::io::IsTerminal as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::plan::{current_exe, need_bytes, run_dir};
use super::spec::RunSpec;
use crate::error::{Error, Result};
use crate::run::budget::{budget, format_bytes};

/// Whether `dir` holds a finished run: a results.json that parses and has final metrics.
pub fn is_complete(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("results.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|v| v.get("final").and_then(|f| f.get("metrics")).is_some())
}

/// What a sweep on this machine did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// Runs started and finished here.
    pub ran: usize,
    /// Runs already complete, not run again.
    pub skipped: usize,
    /// Runs that exited with an error (their ids).
    pub failed: Vec<String>,
}

struct Running {
    index: usize,
    child: Child,
    need: u64,
}

fn format_duration(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// The child process of `run`: `beliefscope run --config ... --out ...`, output to log.txt.
fn spawn(exe: &Path, dir: &Path, run: &RunSpec, max_memory: Option<u64>) -> Result<Child> {
    let d = run_dir(dir, &run.id);
    let log = std::fs::File::create(d.join("log.txt"))
        .map_err(|e| Error::Io(format!("cannot write {}/log.txt: {e}", d.display())))?;
    let err = log
        .try_clone()
        .map_err(|e| Error::Io(format!("cannot write {}/log.txt: {e}", d.display())))?;
    let mut command = Command::new(exe);
    command
        .arg("run")
        .arg("--config")
        .arg(d.join("config.json"))
        .arg("--out")
        .arg(&d)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(err);
    if let Some(b) = max_memory {
        command.arg("--max-memory").arg(b.to_string());
    }
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt as _;
        // SAFETY: prctl is async-signal-safe and touches only the new process.
        unsafe {
            command.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
    }
    command
        .spawn()
        .map_err(|e| Error::Io(format!("cannot start {}: {e}", exe.display())))
}

/// Runs every incomplete run of `runs` (planned into `dir`), `jobs` at a time within the memory
/// budget, with one progress line for the whole sweep on stderr.
pub fn execute(
    dir: &Path,
    runs: &[RunSpec],
    jobs: usize,
    max_memory: Option<u64>,
) -> Result<Outcome> {
    let exe = current_exe()?;
    let jobs = jobs.max(1);
    let limit = budget();
    let total = runs.len();
    let todo: Vec<usize> = (0..total)
        .filter(|&i| !is_complete(&run_dir(dir, &runs[i].id)))
        .collect();
    let mut outcome = Outcome {
        skipped: total - todo.len(),
        ..Outcome::default()
    };
    let terminal = std::io::stderr().is_terminal();
    let report = |outcome: &Outcome, running: usize, start: Instant, last: &str| {
        let finished = outcome.ran + outcome.failed.len();
        let left = todo.len() - finished;
        let eta = if finished > 0 {
            format_duration(start.elapsed().as_secs_f64() / finished as f64 * left as f64)
        } else {
            "?".into()
        };
        let failed = if outcome.failed.is_empty() {
            String::new()
        } else {
            format!(", {} failed", outcome.failed.len())
        };
        let line = format!(
            "sweep: {}/{total} done ({} skipped{failed}), {running} running, eta {eta}{last}",
            outcome.skipped + finished,
            outcome.skipped,
        );
        if terminal {
            eprint!("\r\x1b[2K{line}");
        } else {
            eprintln!("{line}");
        }
    };
    let start = Instant::now();
    report(&outcome, 0, start, "");
    let mut next = 0;
    let mut running: Vec<Running> = Vec::new();
    while next < todo.len() || !running.is_empty() {
        // Start what fits: a free slot and memory for it (one run always may start).
        while next < todo.len() && running.len() < jobs {
            let run = &runs[todo[next]];
            let need = need_bytes(run);
            let used: u64 = running.iter().map(|r| r.need).sum();
            if !running.is_empty() && used + need > limit {
                break;
            }
            let child = spawn(&exe, dir, run, max_memory)?;
            running.push(Running {
                index: todo[next],
                child,
                need,
            });
            next += 1;
        }
        std::thread::sleep(Duration::from_millis(20));
        let mut k = 0;
        while k < running.len() {
            let status = running[k]
                .child
                .try_wait()
                .map_err(|e| Error::Io(format!("cannot wait for a run: {e}")))?;
            match status {
                None => k += 1,
                Some(status) => {
                    let done = running.swap_remove(k);
                    let id = &runs[done.index].id;
                    let ok = status.success() && is_complete(&run_dir(dir, id));
                    let last = if ok {
                        outcome.ran += 1;
                        format!(" (finished {id})")
                    } else {
                        outcome.failed.push(id.clone());
                        format!(" ({id} failed: see runs/{id}/log.txt)")
                    };
                    report(&outcome, running.len(), start, &last);
                }
            }
        }
    }
    if terminal {
        eprintln!();
    }
    eprintln!(
        "sweep: ran {} runs, skipped {} already complete, {} failed, in {} (at most {jobs} at a \
         time within a memory budget of {})",
        outcome.ran,
        outcome.skipped,
        outcome.failed.len(),
        format_duration(start.elapsed().as_secs_f64()),
        format_bytes(limit)
    );
    Ok(outcome)
}
