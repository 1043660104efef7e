//! The status bar: run state, iteration, seconds per iteration, the scenario's numbers and the
//! window's own frame time.

use eframe::egui::{self, Color32, RichText};

use crate::app::commands::UiCommand;
use crate::app::frame_timer::FrameStats;
use crate::runner::Snapshot;
use crate::scenarios::IterationRecord;

/// A long job running on the worker.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TaskProgress {
    pub label: &'static str,
    pub done: usize,
    pub total: usize,
}

pub struct StatusInfo<'a> {
    pub snapshot: Option<&'a Snapshot>,
    /// A set-up in progress.
    pub busy: Option<&'a str>,
    /// The time left of the set-up or the playing run ("about 12 s left").
    pub time_left: Option<String>,
    /// A job in progress (shown with a Cancel button).
    pub task: Option<TaskProgress>,
    pub max_iters: Option<usize>,
    /// What one iteration is ("iteration", teaching mode's "message").
    pub iteration_noun: &'static str,
    /// Scenario numbers (e.g. "RMSE 3.02").
    pub extras: Vec<String>,
    pub frame: FrameStats,
    /// The window repaints continuously (so the frame rate is its capacity).
    pub continuous: bool,
}

/// Median seconds per iteration over the last ten iterations.
pub fn median_seconds(history: &[IterationRecord]) -> Option<f64> {
    let mut recent: Vec<f64> = history
        .iter()
        .rev()
        .take(10)
        .map(|r| r.seconds)
        .filter(|s| s.is_finite())
        .collect();
    if recent.is_empty() {
        return None;
    }
    recent.sort_by(f64::total_cmp);
    let n = recent.len();
    Some(if n % 2 == 1 {
        recent[n / 2]
    } else {
        0.5 * (recent[n / 2 - 1] + recent[n / 2])
    })
}

/// "3.1 ms", "1.25 s".
pub fn format_seconds(s: f64) -> String {
    if s < 1e-3 {
        format!("{:.0} µs", s * 1e6)
    } else if s < 1.0 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
    }
}

pub fn show(ui: &mut egui::Ui, info: &StatusInfo<'_>, commands: &mut Vec<UiCommand>) {
    // The frame time keeps its place at the right; the run's numbers take what is left and are
    // cut at its edge instead of running under it.
    ui.horizontal(|ui| {
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            frame_stats(ui, &info.frame, info.continuous);
            ui.separator();
            ui.with_layout(egui::Layout::left_to_right(egui::Align::Center), |ui| {
                ui.set_clip_rect(ui.max_rect().intersect(ui.clip_rect()));
                run_numbers(ui, info, commands);
            });
        });
    });
}

/// Run state, iteration, seconds per iteration and the scenario's numbers, left to right.
fn run_numbers(ui: &mut egui::Ui, info: &StatusInfo<'_>, commands: &mut Vec<UiCommand>) {
    {
        if let Some(t) = info.task {
            let fraction = t.done as f32 / t.total.max(1) as f32;
            ui.add(
                egui::ProgressBar::new(fraction)
                    .desired_width(200.0)
                    .text(format!("{} {}/{}", t.label, t.done, t.total)),
            );
            let cancel = ui
                .small_button(UiCommand::CancelTask.label())
                .on_hover_text(UiCommand::CancelTask.description());
            if cancel.clicked() {
                commands.push(UiCommand::CancelTask);
            }
            ui.separator();
        }
        match (info.busy, info.snapshot) {
            (Some(message), _) => {
                ui.spinner();
                ui.label(message);
                if let Some(left) = &info.time_left {
                    ui.label(left);
                }
            }
            (None, None) => {
                ui.spinner();
                ui.label("starting …");
            }
            (None, Some(s)) => {
                let (text, color) = if s.playing {
                    ("▶ running", Color32::from_rgb(102, 187, 106))
                } else if s.finished {
                    ("■ finished", ui.visuals().text_color())
                } else {
                    ("▮▮ paused", Color32::from_rgb(255, 167, 38))
                };
                ui.label(RichText::new(text).color(color).strong());
            }
        }
        if let Some(s) = info.snapshot {
            ui.separator();
            let of = info.max_iters.map_or(String::new(), |m| format!(" / {m}"));
            let noun = info.iteration_noun;
            ui.label(format!("{noun} {}{of}", s.iteration));
            ui.separator();
            let per = median_seconds(&s.history).map_or(format!("– per {noun}"), |t| {
                format!("{} per {noun}", format_seconds(t))
            });
            ui.label(per).on_hover_text(format!(
                "Median wall-clock time of the last ten {noun}s (engine thread)"
            ));
            if info.busy.is_none()
                && let Some(left) = &info.time_left
            {
                ui.separator();
                ui.label(left)
                    .on_hover_text(
                        "From the measured time per iteration and the iterations left: those a run usually takes where a stopping rule ends it, else (or once past them, as a bound) its limit",
                    );
            }
            for extra in &info.extras {
                ui.separator();
                ui.label(extra);
            }
        }
    }
}

/// The window's own cost per frame and, when it repaints continuously, its frame rate.
fn frame_stats(ui: &mut egui::Ui, f: &FrameStats, continuous: bool) {
    let rate = match (f.frame_seconds, f.worst_seconds) {
        (Some(dt), Some(worst)) => format!(
            "{:.0} frames per second in the last second (mean interval {:.1} ms, longest {:.1} ms)",
            1.0 / dt.max(1e-6),
            dt * 1e3,
            worst * 1e3
        ),
        _ => "no frames painted in the last quarter second".to_string(),
    };
    let hint = format!(
        "Frame time: building and painting one frame of the window (UI and rendering), smoothed.\n\
         The window repaints only when something changes (a new snapshot, the mouse); \
         View → Repaint continuously measures the rate it can keep up.\n{rate}."
    );
    if continuous && let Some(dt) = f.frame_seconds {
        ui.label(format!("{:.0} fps", 1.0 / dt.max(1e-6)))
            .on_hover_text(&hint);
        ui.weak("·");
    }
    let text = f.cpu_seconds.map_or("frame –".to_string(), |c| {
        format!("frame {:.1} ms", c * 1e3)
    });
    ui.weak(text).on_hover_text(hint);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn rec(iter: usize, seconds: f64) -> IterationRecord {
        IterationRecord {
            iter,
            seconds,
            residual: 1.0,
            metrics: BTreeMap::new(),
        }
    }

    #[test]
    fn median_of_the_last_ten() {
        assert_eq!(median_seconds(&[]), None);
        let h: Vec<_> = (0..15).map(|i| rec(i, i as f64)).collect();
        assert_eq!(median_seconds(&h), Some(9.5));
        assert_eq!(median_seconds(&h[..3]), Some(1.0));
    }

    #[test]
    fn seconds_are_readable() {
        assert_eq!(format_seconds(0.0031), "3.1 ms");
        assert_eq!(format_seconds(1.254), "1.25 s");
        assert_eq!(format_seconds(0.0000421), "42 µs");
    }
}
