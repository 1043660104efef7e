//! A sweep's folder before anything runs: `sweep.json` (the scenario, the varied keys and every
//! run's id, values and seed, which `collect` reads), `runs/<id>/config.json` (the config that
//! `beliefscope run --config` runs), `jobs.txt` (one such command line per run, with the
//! absolute path of this executable), a Slurm array script `slurm.sh` (task i runs line i + 1)
//! and `parallel.sh` (GNU parallel over jobs.txt). The in-process sweep runs exactly the
//! commands of jobs.txt, so all three ways run the same thing.
//!
//! Cost: one small file per run.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::spec::RunSpec;
use crate::error::{Error, Result};
use crate::io::write_atomic;
use crate::run::budget::BASE_BYTES;

/// `sweep.json`: what `collect` needs to know of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepFile {
    pub scenario: String,
    /// The varied keys, in column order.
    pub keys: Vec<String>,
    /// The parameters `--seeds` steps.
    pub seed_keys: Vec<String>,
    pub runs: Vec<PlannedRun>,
}

/// One run as `sweep.json` lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedRun {
    pub id: String,
    pub values: Vec<String>,
    pub seed: Option<u64>,
}

/// A run's folder.
pub fn run_dir(dir: &Path, id: &str) -> PathBuf {
    dir.join("runs").join(id)
}

/// The text of a run's `config.json`.
pub fn config_text(run: &RunSpec) -> String {
    serde_json::to_string_pretty(&run.config).unwrap_or_default() + "\n"
}

/// `text` quoted for a POSIX shell.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The command line that runs `run` (`max_memory`: the sweep's `--max-memory`, passed on).
pub fn job_line(exe: &Path, dir: &Path, run: &RunSpec, max_memory: Option<u64>) -> String {
    let d = run_dir(dir, &run.id);
    let budget = max_memory.map_or(String::new(), |b| format!(" --max-memory {b}"));
    format!(
        "{} run --config {} --out {}{budget}",
        quote(&exe.display().to_string()),
        quote(&d.join("config.json").display().to_string()),
        quote(&d.display().to_string()),
    )
}

/// This executable, absolute.
pub fn current_exe() -> Result<PathBuf> {
    std::env::current_exe()
        .map_err(|e| Error::Io(format!("cannot find this program's own path: {e}")))
}

/// `dir` made absolute (created first).
pub fn absolute_dir(dir: &Path) -> Result<PathBuf> {
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::Io(format!("cannot create {}: {e}", dir.display())))?;
    std::fs::canonicalize(dir)
        .map_err(|e| Error::Io(format!("cannot resolve {}: {e}", dir.display())))
}

/// The estimated peak memory of a run in bytes (the binary's own base where the config does
/// not make it large).
pub fn need_bytes(run: &RunSpec) -> u64 {
    run.config
        .memory_need()
        .map_or(BASE_BYTES, |n| n.total().max(BASE_BYTES))
}

/// Writes `sweep.json`, every run's `config.json` (a stale `results.json` beside a changed
/// config is removed), `jobs.txt`, `slurm.sh` and `parallel.sh` into `dir` (absolute).
pub fn write_plan(
    dir: &Path,
    scenario: &str,
    keys: &[String],
    seed_keys: &[&str],
    runs: &[RunSpec],
    max_memory: Option<u64>,
    jobs: usize,
) -> Result<()> {
    let exe = current_exe()?;
    let file = SweepFile {
        scenario: scenario.to_string(),
        keys: keys.to_vec(),
        seed_keys: seed_keys.iter().map(|k| k.to_string()).collect(),
        runs: runs
            .iter()
            .map(|r| PlannedRun {
                id: r.id.clone(),
                values: r.values.clone(),
                seed: r.seed,
            })
            .collect(),
    };
    let json = serde_json::to_string_pretty(&file).map_err(|e| Error::Other(e.to_string()))?;
    write_atomic(&dir.join("sweep.json"), (json + "\n").as_bytes())?;
    let mut lines = String::new();
    for run in runs {
        let d = run_dir(dir, &run.id);
        std::fs::create_dir_all(&d)
            .map_err(|e| Error::Io(format!("cannot create {}: {e}", d.display())))?;
        let text = config_text(run);
        let path = d.join("config.json");
        if std::fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            // A different config: whatever ran here before is not this run.
            let _ = std::fs::remove_file(d.join("results.json"));
            write_atomic(&path, text.as_bytes())?;
        }
        lines.push_str(&job_line(&exe, dir, run, max_memory));
        lines.push('\n');
    }
    write_atomic(&dir.join("jobs.txt"), lines.as_bytes())?;
    let mem_mb = runs.iter().map(need_bytes).max().unwrap_or(BASE_BYTES) / 1_000_000 + 1;
    write_script(
        &dir.join("slurm.sh"),
        &slurm_script(dir, runs.len(), mem_mb),
    )?;
    write_script(&dir.join("parallel.sh"), &parallel_script(dir, jobs))?;
    std::fs::create_dir_all(dir.join("slurm-logs"))
        .map_err(|e| Error::Io(format!("cannot create {}/slurm-logs: {e}", dir.display())))?;
    Ok(())
}

fn write_script(path: &Path, text: &str) -> Result<()> {
    write_atomic(path, text.as_bytes())?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755));
    }
    Ok(())
}

/// The Slurm array script: task i runs line i + 1 of jobs.txt.
pub fn slurm_script(dir: &Path, n: usize, mem_mb: u64) -> String {
    let d = quote(&dir.display().to_string());
    format!(
        "#!/bin/bash\n\
         # One array task per line of jobs.txt: submit with `sbatch {dir}/slurm.sh`, then\n\
         # `beliefscope collect {dir}` merges the finished runs. Without Slurm, the same task\n\
         # runs as `SLURM_ARRAY_TASK_ID=i bash slurm.sh`. Clusters cap array sizes\n\
         # (MaxArraySize, 1001 by default): split larger sweeps with --array=A-B.\n\
         #SBATCH --job-name=beliefscope-sweep\n\
         #SBATCH --array=0-{last}\n\
         #SBATCH --ntasks=1\n\
         #SBATCH --mem={mem_mb}M\n\
         #SBATCH --output={dir}/slurm-logs/%A_%a.out\n\
         set -euo pipefail\n\
         : \"${{SLURM_ARRAY_TASK_ID:?run this script with sbatch, or set SLURM_ARRAY_TASK_ID}}\"\n\
         line=$(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" {d}/jobs.txt)\n\
         if [ -z \"$line\" ]; then\n\
         \x20 echo \"no line $((SLURM_ARRAY_TASK_ID + 1)) in jobs.txt\" >&2\n\
         \x20 exit 1\n\
         fi\n\
         eval \"$line\"\n",
        dir = dir.display(),
        last = n.saturating_sub(1),
    )
}

/// The GNU parallel command line over jobs.txt.
pub fn parallel_script(dir: &Path, jobs: usize) -> String {
    let d = quote(&dir.display().to_string());
    format!(
        "#!/bin/bash\n\
         # Every line of jobs.txt with GNU parallel, {jobs} at a time on this machine; then\n\
         # `beliefscope collect {dir}` merges the finished runs into summary.csv.\n\
         # Over several machines: add `--sshlogin 4/host1,4/host2` (or `--sshloginfile FILE`);\n\
         # each host needs the program and this folder at the same paths (a shared file system).\n\
         # `--resume` with the same --joblog skips the lines already done.\n\
         set -euo pipefail\n\
         parallel --will-cite --jobs {jobs} --joblog {d}/parallel.log < {d}/jobs.txt\n",
        dir = dir.display(),
    )
}
