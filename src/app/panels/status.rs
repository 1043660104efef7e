//! The status bar: run state, iteration, seconds per iteration, the scenario's numbers and the
//! window's own frame time.

use eframe::egui::{self, Color32, RichText};

use crate::app::frame_timer::FrameStats;
use crate::runner::Snapshot;
use crate::scenarios::IterationRecord;

pub struct StatusInfo<'a> {
    pub snapshot: Option<&'a Snapshot>,
    /// A set-up in progress.
    pub busy: Option<&'a str>,
    pub max_iters: Option<usize>,
    /// Scenario numbers (e.g. "RMSE 3.02").
    pub extras: Vec<String>,
    pub frame: FrameStats,
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

pub fn show(ui: &mut egui::Ui, info: &StatusInfo<'_>) {
    ui.horizontal(|ui| {
        match (info.busy, info.snapshot) {
            (Some(message), _) => {
                ui.spinner();
                ui.label(message);
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
            ui.label(format!("iteration {}{of}", s.iteration));
            ui.separator();
            let per = median_seconds(&s.history)
                .map_or("– per iteration".to_string(), |t| format!("{} per iteration", format_seconds(t)));
            ui.label(per)
                .on_hover_text("Median wall-clock time of the last ten iterations (engine thread)");
            for extra in &info.extras {
                ui.separator();
                ui.label(extra);
            }
        }
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            let f = info.frame;
            let text = match f.frame_seconds {
                Some(dt) => format!(
                    "window {:.1} ms/frame ({:.0} fps)",
                    dt * 1e3,
                    1.0 / dt.max(1e-6)
                ),
                None => "window idle".to_string(),
            };
            let cpu = f
                .cpu_seconds
                .map_or(String::new(), |c| format!("; {:.1} ms of CPU per frame", c * 1e3));
            if let Some(c) = f.cpu_seconds {
                ui.weak(format!("· {:.1} ms CPU", c * 1e3));
            }
            let worst = f
                .worst_seconds
                .map_or(String::new(), |w| format!("; slowest frame of the last second {:.1} ms", w * 1e3));
            ui.weak(text).on_hover_text(format!(
                "Time between painted frames, averaged over the last second{worst}{cpu}. The window repaints only when something changes."
            ));
        });
    });
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
