//! Progress on stderr for headless runs (indicatif): on a terminal a spinner while a stage runs
//! and a bar over the iterations, both redrawn ten times a second by indicatif's own ticker, so
//! the elapsed time moves even inside one long step; lines printed meanwhile go above the bar.
//! When stderr is not a terminal nothing is redrawn: every stage and iteration is one line.

use std::io::IsTerminal as _;
use std::io::Write as _;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// Progress of one headless run.
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    pub fn new() -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new_spinner();
            bar.enable_steady_tick(Duration::from_millis(100));
            bar
        });
        Progress { bar }
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
            None => self.line(&format!("{what} ...")),
        }
    }

    /// A stage ended: its summary line.
    pub fn done_stage(&self, summary: &str) {
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
