//! The reproducible figures and tables of the five papers (Help > Paper figures in the window):
//! each entry is the `beliefscope` command line that reproduces it, what the paper reports, and
//! a reader that puts our numbers from the command's output files beside the paper's.
//!
//! [`run_figure`] runs the entry's commands in this process exactly as the command line would
//! (the same registry subcommands, parsed by clap from the same words, writing the same files),
//! split into pieces along one list flag (e.g. `--colors 10,25,...` into one run per value) so
//! that progress and cancel act between pieces; a `run` command also reports each iteration.
//! Cost: that of the commands themselves (seconds for the SOSMP figures, minutes for Fig. 1(c, d)
//! of the kernel-BP paper or predictive BP's Fig. 5), plus reading their CSV and JSON outputs.

mod catalogue;
mod outcome;

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::error::{Error, Result};
use crate::io::results::write_results;
use crate::scenarios::registry::kind;
use crate::scenarios::{CancelFlag, RunResults};

pub use catalogue::FIGURES;

/// One row of the comparison: a quantity, our value, the paper's.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    pub quantity: String,
    pub ours: String,
    pub paper: String,
    /// Whether ours shows what the paper reports (None: no clear criterion).
    pub agrees: Option<bool>,
}

impl Comparison {
    pub fn new(
        quantity: impl Into<String>,
        ours: impl Into<String>,
        paper: impl Into<String>,
        agrees: Option<bool>,
    ) -> Self {
        Comparison {
            quantity: quantity.into(),
            ours: ours.into(),
            paper: paper.into(),
            agrees,
        }
    }
}

/// A figure or table of a paper that beliefscope reproduces.
pub struct PaperFigure {
    /// A short stable name (`kbp-fig1cd`), the output subfolder.
    pub id: &'static str,
    /// Which paper.
    pub paper: &'static str,
    /// Which figure and what it shows.
    pub title: &'static str,
    /// The commands that reproduce it (without `beliefscope` and `--out`), run in order.
    pub commands: &'static [&'static str],
    /// A list flag along which the window runs one piece per value (progress, cancel).
    pub split: Option<&'static str>,
    /// Rough wall time on two shared cores, for the menu.
    pub duration: &'static str,
    /// What the paper reports, in words.
    pub paper_says: &'static str,
    /// Our numbers beside the paper's, from the pieces' output folders (in order).
    pub outcome: fn(&[PathBuf]) -> Result<Vec<Comparison>>,
}

impl PaperFigure {
    /// The command lines a user types to reproduce it, writing into `out`.
    pub fn command_lines(&self, out: &Path) -> Vec<String> {
        let many = self.commands.len() > 1;
        self.commands
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let dir = if many {
                    out.join(format!("part{}", i + 1))
                } else {
                    out.to_path_buf()
                };
                format!("beliefscope {c} --out {}", dir.display())
            })
            .collect()
    }

    /// The pieces the window runs: (words of the command, output folder).
    pub fn pieces(&self, out: &Path) -> Vec<(Vec<String>, PathBuf)> {
        let mut pieces = Vec::new();
        let many = self.commands.len() > 1;
        for (i, command) in self.commands.iter().enumerate() {
            let base = if many {
                out.join(format!("part{}", i + 1))
            } else {
                out.to_path_buf()
            };
            let words: Vec<String> = command.split_whitespace().map(str::to_string).collect();
            let at = self
                .split
                .and_then(|flag| words.iter().position(|w| w == flag))
                .filter(|&p| p + 1 < words.len() && words[p + 1].contains(','));
            match at {
                Some(p) => {
                    for value in words[p + 1].split(',') {
                        let mut w = words.clone();
                        w[p + 1] = value.to_string();
                        let flag = words[p].trim_start_matches('-');
                        pieces.push((w, base.join(format!("{flag}-{value}"))));
                    }
                }
                None => pieces.push((words, base)),
            }
        }
        pieces
    }
}

/// The figure named `id`.
pub fn figure(id: &str) -> Option<&'static PaperFigure> {
    FIGURES.iter().find(|f| f.id == id)
}

/// What running a figure produced.
#[derive(Debug, Clone)]
pub struct FigureRun {
    pub id: &'static str,
    pub rows: Vec<Comparison>,
    /// The command lines that reproduce it into the same folder.
    pub commands: Vec<String>,
    pub out: PathBuf,
    pub seconds: f64,
}

/// Progress of a figure: the fraction done and what runs now.
pub type FigureProgress<'a> = &'a dyn Fn(f64, &str);

/// Runs `figure` into `out` (created), reporting progress, stopping at the next iteration or
/// piece once `cancel` is set; then reads the outputs into the comparison.
pub fn run_figure(
    figure: &'static PaperFigure,
    out: &Path,
    cancel: &CancelFlag,
    progress: FigureProgress<'_>,
) -> Result<FigureRun> {
    let start = Instant::now();
    let pieces = figure.pieces(out);
    let n = pieces.len() as f64;
    let mut dirs = Vec::new();
    for (i, (words, dir)) in pieces.iter().enumerate() {
        if cancel.is_cancelled() {
            return Err(Error::Cancelled);
        }
        let line = format!("beliefscope {}", words.join(" "));
        progress(i as f64 / n, &line);
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::Io(format!("cannot create {}: {e}", dir.display())))?;
        let within = |f: f64| progress((i as f64 + f.clamp(0.0, 1.0)) / n, &line);
        guarded(&line, || run_words(words, dir, cancel, &within))?;
        dirs.push(dir.clone());
    }
    progress(1.0, "reading the results");
    let rows = (figure.outcome)(&dirs)?;
    Ok(FigureRun {
        id: figure.id,
        rows,
        commands: figure.command_lines(out),
        out: out.to_path_buf(),
        seconds: start.elapsed().as_secs_f64(),
    })
}

/// A panic in engine code as an error naming the command.
fn guarded(line: &str, f: impl FnOnce() -> Result<()>) -> Result<()> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let message = crate::error::panic_message(payload.as_ref());
            Err(Error::Other(format!(
                "{line}: the engine panicked: {message}"
            )))
        }
    }
}

/// Runs `run NAME ...` or `sweep NAME ...` (the words after `beliefscope`) writing into `dir`.
fn run_words(
    words: &[String],
    dir: &Path,
    cancel: &CancelFlag,
    within: &dyn Fn(f64),
) -> Result<()> {
    let [verb, name, rest @ ..] = words else {
        return Err(Error::Other(format!("not a command: {}", words.join(" "))));
    };
    let kind = kind(name).ok_or_else(|| Error::Other(format!("no scenario named {name}")))?;
    let mut argv: Vec<String> = vec![name.clone()];
    argv.extend(rest.iter().cloned());
    argv.push("--out".into());
    argv.push(dir.display().to_string());
    let parse = |e: clap::Error| Error::Other(e.to_string());
    match verb.as_str() {
        "run" => {
            let matches = (kind.run_command)()
                .try_get_matches_from(&argv)
                .map_err(parse)?;
            let (config, _) = (kind.run_config)(&matches)?;
            let mut scenario = config.build(cancel)?;
            let max = config.max_iters().unwrap_or(0).max(1) as f64;
            while !scenario.finished() {
                if cancel.is_cancelled() {
                    return Err(Error::Cancelled);
                }
                let r = scenario.step()?;
                within(r.iter as f64 / max);
            }
            scenario.write_outputs(dir)?;
            write_results(dir, &RunResults::from_scenario(scenario.as_ref()))
        }
        "sweep" => {
            let matches = crate::scenarios::sweep::command(kind)
                .try_get_matches_from(&argv)
                .map_err(parse)?;
            crate::scenarios::sweep::run(kind, &matches)
        }
        group => {
            let verb = (kind.verbs)()
                .iter()
                .find(|v| v.group == group)
                .ok_or_else(|| Error::Other(format!("the {name} scenario has no '{group}'")))?;
            let matches = (verb.command)()
                .try_get_matches_from(&argv)
                .map_err(parse)?;
            (verb.run)(&matches)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_figure_parses_as_a_command() {
        for f in FIGURES {
            for (words, _) in f.pieces(Path::new("/tmp/x")) {
                let [verb, name, rest @ ..] = words.as_slice() else {
                    panic!("{}: too short", f.id)
                };
                let k = kind(name).unwrap_or_else(|| panic!("{}: no scenario {name}", f.id));
                let mut argv = vec![name.clone()];
                argv.extend(rest.iter().cloned());
                argv.extend(["--out".to_string(), "/tmp/x".to_string()]);
                let parsed = if verb == "run" {
                    (k.run_command)().try_get_matches_from(&argv).map(|_| ())
                } else if verb == "sweep" {
                    crate::scenarios::sweep::command(k)
                        .try_get_matches_from(&argv)
                        .map(|_| ())
                } else {
                    let v = (k.verbs)().iter().find(|v| v.group == verb).unwrap();
                    (v.command)().try_get_matches_from(&argv).map(|_| ())
                };
                assert!(parsed.is_ok(), "{}: {:?}", f.id, parsed.err());
            }
        }
    }

    #[test]
    fn a_list_flag_splits_into_one_piece_per_value() {
        let f = figure("kbp-fig1cd").unwrap();
        let pieces = f.pieces(Path::new("out"));
        assert_eq!(pieces.len(), 7);
        assert!(pieces[0].0.contains(&"10".to_string()));
        assert_eq!(pieces[6].1, Path::new("out/colors-250"));
    }
}
