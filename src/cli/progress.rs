//! Progress on stderr for headless runs (indicatif): on a terminal a spinner while a stage runs
//! and a bar over the iterations, both redrawn ten times a second by indicatif's own ticker, so
//! the elapsed time moves even inside one long step; lines printed meanwhile go above the bar.
//! When stderr is not a terminal nothing is redrawn: every iteration is one line, and so is
//! every stage that lasts over a second (a quick failure stays a single error line).

use std::cell::RefCell;
use std::io::IsTerminal as _;
use std::io::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// A stage shorter than this says nothing when stderr is not a terminal (so a bad input is
/// still one line).
const QUIET_STAGE: Duration = Duration::from_secs(1);

/// Progress of one headless run.
pub struct Progress {
    bar: Option<ProgressBar>,
    /// Set when the current stage ends (off a terminal, its line is only printed after
    /// [`QUIET_STAGE`]).
    stage_done: RefCell<Arc<AtomicBool>>,
}

impl Progress {
    pub fn new() -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new_spinner();
            bar.enable_steady_tick(Duration::from_millis(100));
            bar
        });
        Progress {
            bar,
            stage_done: RefCell::new(Arc::new(AtomicBool::new(true))),
        }
    }

    /// A stage starts (set-up, writing): a spinner with the elapsed time, or one line.
    pub fn stage(&self, what: &str) {
        match &self.bar {
            Some(bar) => {
                bar.set_style(
                    ProgressStyle::with_template("{spinner} {msg} {elapsed}")
                        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                );
                bar.set_message(what.to_string());
            }
            None => {
                // The line appears only if the stage is still running after QUIET_STAGE.
                self.end_stage();
                let done = Arc::new(AtomicBool::new(false));
                *self.stage_done.borrow_mut() = done.clone();
                let line = format!("{what} ...");
                std::thread::spawn(move || {
                    let start = Instant::now();
                    while start.elapsed() < QUIET_STAGE {
                        if done.load(Ordering::Relaxed) {
                            return;
                        }
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    if !done.load(Ordering::Relaxed) {
                        let _ = writeln!(std::io::stderr().lock(), "{line}");
                    }
                });
            }
        }
    }

    /// The current stage is over: its delayed line (off a terminal) is not printed.
    fn end_stage(&self) {
        self.stage_done.borrow().store(true, Ordering::Relaxed);
    }

    /// A stage ended: its summary line.
    pub fn done_stage(&self, summary: &str) {
        self.end_stage();
        self.line(summary);
    }

    /// Iterations start; `total` where the config fixes it.
    pub fn iterations(&self, total: Option<usize>) {
        if let Some(bar) = &self.bar {
            bar.set_message(String::new());
            match total {
                Some(n) => {
                    bar.set_length(n as u64);
                    bar.set_position(0);
                    bar.set_style(
                        ProgressStyle::with_template(
                            "{spinner} iteration {pos}/{len} [{bar:30}] {elapsed} (eta {eta})",
                        )
                        .unwrap_or_else(|_| ProgressStyle::default_bar())
                        .progress_chars("=> "),
                    );
                }
                None => bar.set_style(
                    ProgressStyle::with_template("{spinner} iteration {pos} {elapsed}")
                        .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                ),
            }
        }
    }

    /// Iteration `iter` finished; `line` describes it.
    pub fn iteration(&self, iter: usize, line: &str) {
        if let Some(bar) = &self.bar {
            bar.set_position(iter as u64);
        }
        self.line(line);
    }

    /// One line above the bar (or on its own).
    pub fn line(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None => {
                let _ = writeln!(std::io::stderr().lock(), "{text}");
            }
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.end_stage();
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
