//! Long runs in the window: a request estimated above a minute ([`CONFIRM_ABOVE_SECONDS`],
//! from the config's cost model, `run::time_need`) is asked about first, with its estimate;
//! while a set-up or a run goes, the status bar says how long is left.

use std::time::Instant;

use eframe::egui;

use crate::run::time_need::{Eta, TimeNeed, iteration_horizon};
use crate::scenarios::ScenarioConfig;

/// A request estimated above this many seconds asks before it runs.
pub const CONFIRM_ABOVE_SECONDS: f64 = 60.0;

/// A run waiting for the user's answer.
#[derive(Debug, Clone)]
pub struct PendingRun {
    pub config: ScenarioConfig,
    pub play: bool,
    pub need: TimeNeed,
}

/// What the user answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Run,
    Keep,
}

/// The question, as a modal; `Some` once answered (Escape or a click outside keeps).
pub fn ask(ctx: &egui::Context, pending: &PendingRun) -> Option<Answer> {
    let mut answer = None;
    let modal = egui::Modal::new(egui::Id::unique("confirm_long_run")).show(ctx, |ui| {
        ui.set_max_width(420.0);
        ui.heading("This run will take a while");
        ui.label(format!(
            "{} is estimated at {}.",
            pending.config.name(),
            pending.need.describe()
        ));
        if let Some(memory) = pending.config.memory_need() {
            ui.label(format!(
                "Estimated peak memory: {}.",
                crate::run::budget::format_bytes(memory.total())
            ));
        }
        ui.label("Progress and the time left show in the status bar; Reset stops it.");
        ui.add_space(8.0);
        ui.horizontal(|ui| {
            if ui.button("Run it").clicked() {
                answer = Some(Answer::Run);
            }
            if ui.button("Keep the current run").clicked() {
                answer = Some(Answer::Keep);
            }
        });
    });
    if answer.is_none() && modal.should_close() {
        answer = Some(Answer::Keep);
    }
    answer
}

/// "about 12 s left" for a set-up `busy_since` ago, from its estimate.
pub fn setup_left(need: Option<TimeNeed>, busy_since: Option<Instant>) -> Option<String> {
    let (need, since) = (need?, busy_since?);
    let eta = Eta::new(Some(need), None);
    eta.setup_left(since.elapsed().as_secs_f64())
        .map(Eta::describe_left)
}

/// "about 1 min 40 s left" of a playing run, `done` iterations in (at most `limit`), each
/// taking the measured `per_iteration` (else the estimate's), the current one running since
/// `arrived`; where a stopping rule usually ends the run, to the estimate's usual count, then
/// "up to about ..." to the limit.
pub fn run_left(
    need: Option<TimeNeed>,
    per_iteration: Option<f64>,
    done: usize,
    limit: Option<usize>,
    arrived: Option<Instant>,
) -> Option<String> {
    let (until, upper_bound) = iteration_horizon(need, limit, done)?;
    let per = per_iteration.or(need.map(|n| n.per_iteration))?;
    let into = arrived.map_or(0.0, |t| t.elapsed().as_secs_f64()).min(per);
    let left = (until.saturating_sub(done) as f64 * per - into).max(0.0);
    (left >= 1.0).then(|| Eta::describe_iterations_left((left, upper_bound)))
}
