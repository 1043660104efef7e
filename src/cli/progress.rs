//! Progress on stderr for headless runs (indicatif), with an ETA from the run's time estimate
//! ([`crate::run::time_need`]). On a terminal a spinner while a stage runs and a bar over the
//! iterations, redrawn ten times a second, their message the time left. When stderr is not a
//! terminal nothing is redrawn: every iteration is one line, a stage that lasts over a second
//! gets a line, and while a stage or an iteration runs a status line with the time left follows
//! at least every two seconds (so a long step never looks hung; a quick failure stays a single
//! error line). A ticker thread writes the status; the run's thread only records what happens.

use std::io::IsTerminal as _;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::run::time_need::{Eta, TimeNeed, format_seconds};

/// A stage shorter than this says nothing when stderr is not a terminal.
const QUIET_STAGE: Duration = Duration::from_secs(1);
/// Longest silence while something runs, off a terminal.
const STATUS_EVERY: Duration = Duration::from_secs(2);
/// How often the ticker looks.
const TICK: Duration = Duration::from_millis(100);

/// What the run is doing now.
enum Phase {
    Idle,
    /// A stage (set-up, writing); `setup` says the estimate's set-up time applies.
    Stage {
        what: String,
        /// Said once with the stage's first line (the run's estimates).
        detail: String,
        start: Instant,
        setup: bool,
        announced: bool,
    },
    /// Iteration `next` is running since `start`.
    Iterating {
        next: usize,
        start: Instant,
    },
}

struct Ticker {
    phase: Phase,
    eta: Eta,
    /// When a line was last written (off a terminal).
    last_output: Instant,
}

impl Ticker {
    /// The status of the running phase: "setting up: 4.0 s; about 8.0 s left".
    fn status(&self) -> Option<String> {
        match &self.phase {
            Phase::Idle => None,
            Phase::Stage {
                what, start, setup, ..
            } => {
                let elapsed = start.elapsed().as_secs_f64();
                let left = setup
                    .then(|| self.eta.setup_left(elapsed))
                    .flatten()
                    .map(|l| format!("; {}", Eta::describe_left(l)))
                    .unwrap_or_default();
                Some(format!("{what}: {}{left}", format_seconds(elapsed)))
            }
            Phase::Iterating { next, start } => {
                let into = start.elapsed().as_secs_f64();
                let left = self
                    .eta
                    .iterations_left(into)
                    .map(|l| format!("; {} of the run", Eta::describe_iterations_left(l)))
                    .unwrap_or_default();
                Some(format!(
                    "iteration {next} running for {}{left}",
                    format_seconds(into)
                ))
            }
        }
    }

    /// The message beside the bar: the time left of the run.
    fn bar_message(&self) -> String {
        match &self.phase {
            Phase::Iterating { start, .. } => self
                .eta
                .iterations_left(start.elapsed().as_secs_f64())
                .map(Eta::describe_iterations_left)
                .unwrap_or_default(),
            _ => self.status().unwrap_or_default(),
        }
    }
}

/// Progress of one headless run.
pub struct Progress {
    bar: Option<ProgressBar>,
    ticker: Arc<Mutex<Ticker>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Progress {
    /// Progress for a run estimated by `need`, of at most `max_iterations` where the config
    /// fixes it.
    pub fn new(need: Option<TimeNeed>, max_iterations: Option<usize>) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new_spinner();
            bar.enable_steady_tick(Duration::from_millis(100));
            bar
        });
        let ticker = Arc::new(Mutex::new(Ticker {
            phase: Phase::Idle,
            eta: Eta::new(need, max_iterations),
            last_output: Instant::now(),
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (ticker, stop, bar) = (ticker.clone(), stop.clone(), bar.clone());
            std::thread::Builder::new()
                .name("progress".into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::thread::sleep(TICK);
                        let mut t = ticker.lock().unwrap_or_else(PoisonError::into_inner);
                        match &bar {
                            Some(bar) => bar.set_message(t.bar_message()),
                            None => tick_lines(&mut t),
                        }
                    }
                })
                .ok()
        };
        Progress {
            bar,
            ticker,
            stop,
            thread,
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut Ticker) -> R) -> R {
        f(&mut self.ticker.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// The set-up starts: a spinner with the elapsed time and the time left, or lines; its
    /// first line also says `detail` (the estimates).
    pub fn setup(&self, what: &str, detail: &str) {
        if let Some(bar) = &self.bar
            && !detail.is_empty()
        {
            bar.println(format!("{what}{detail}"));
        }
        self.begin_stage(what, detail, true);
    }

    /// A stage starts (writing outputs): a spinner with the elapsed time, or lines.
    pub fn stage(&self, what: &str) {
        self.begin_stage(what, "", false);
    }

    fn begin_stage(&self, what: &str, detail: &str, setup: bool) {
        if let Some(bar) = &self.bar {
            bar.set_style(
                ProgressStyle::with_template("{spinner} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
        }
        self.with(|t| {
            t.phase = Phase::Stage {
                what: what.to_string(),
                detail: detail.to_string(),
                start: Instant::now(),
                setup,
                announced: false,
            }
        });
    }

    /// A stage ended: its summary line.
    pub fn done_stage(&self, summary: &str) {
        self.with(|t| t.phase = Phase::Idle);
        self.line(summary);
    }

    /// Iterations start.
    pub fn iterations(&self, total: Option<usize>) {
        if let Some(bar) = &self.bar {
            match total {
                Some(n) => {
                    bar.set_length(n as u64);
                    bar.set_position(0);
                    bar.set_style(
                        ProgressStyle::with_template(
                            "{spinner} iteration {pos}/{len} [{bar:30}] {elapsed} {msg}",
                        )
                        .unwrap_or_else(|_| ProgressStyle::default_bar())
                        .progress_chars("=> "),
                    );
                }
                None => bar.set_style(
                    ProgressStyle::with_template("{spinner} iteration {pos} {elapsed} {msg}")
                        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                ),
            }
        }
        self.with(|t| {
            t.phase = Phase::Iterating {
                next: 1,
                start: Instant::now(),
            }
        });
    }

    /// Iteration `iter` finished in `seconds`; `line` describes it.
    pub fn iteration(&self, iter: usize, seconds: f64, line: &str) {
        if let Some(bar) = &self.bar {
            bar.set_position(iter as u64);
        }
        self.with(|t| {
            t.eta.iteration(iter, seconds);
            t.phase = Phase::Iterating {
                next: iter + 1,
                start: Instant::now(),
            };
        });
        self.line(line);
    }

    /// One line above the bar (or on its own).
    pub fn line(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => {
                self.with(|t| t.last_output = Instant::now());
                let _ = writeln!(std::io::stderr().lock(), "{text}");
            }
        }
    }

    /// Removes the bar and stops the status lines.
    pub fn finish(&self) {
        self.with(|t| t.phase = Phase::Idle);
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// Off a terminal: a running stage's first line after [`QUIET_STAGE`], then a status line
/// whenever nothing was written for [`STATUS_EVERY`].
fn tick_lines(t: &mut Ticker) {
    let now = Instant::now();
    let line = match &mut t.phase {
        Phase::Idle => None,
        Phase::Stage {
            start,
            announced,
            what,
            detail,
            ..
        } if !*announced => {
            if start.elapsed() < QUIET_STAGE {
                return;
            }
            *announced = true;
            Some(format!("{what}{detail} ..."))
        }
        _ if now.duration_since(t.last_output) >= STATUS_EVERY => t.status(),
        _ => None,
    };
    if let Some(line) = line {
        t.last_output = now;
        let _ = writeln!(std::io::stderr().lock(), "{line}");
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
