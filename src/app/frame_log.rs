//! The window's frame log for measuring it (`BELIEFSCOPE_FRAME_LOG`): per frame, the wall time
//! since the previous frame and the CPU time the UI thread spent on it (everything the thread
//! did between the starts of two UI passes: input, layout, tessellation, painting, the driver's
//! share). Thread CPU time is far less sensitive to other processes than wall time, so it shows
//! what the window costs on one core of a loaded machine. `1` prints a summary (median and 90th
//! percentile) once a second; `all` also prints one line per frame for `scripts/measure_window.py`.

use std::time::Instant;

/// What to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameLogMode {
    /// One summary line a second.
    Summary,
    /// The summary and one line per frame.
    EveryFrame,
}

impl FrameLogMode {
    /// The mode asked for by the environment variable's value (`all` or anything else).
    pub fn from_env_value(value: &str) -> FrameLogMode {
        if value.eq_ignore_ascii_case("all") {
            FrameLogMode::EveryFrame
        } else {
            FrameLogMode::Summary
        }
    }
}

/// CPU seconds the calling thread has used (None where the platform does not say).
pub fn thread_cpu_seconds() -> Option<f64> {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes one timespec we own; the clock id is a constant.
        let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0;
        ok.then_some(ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9)
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// One frame: wall seconds since the previous frame, UI-thread CPU seconds over that interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameSample {
    pub interval: f64,
    pub cpu: Option<f64>,
}

pub struct FrameLog {
    mode: FrameLogMode,
    previous: Option<(Instant, Option<f64>)>,
    /// Frames since the last summary.
    recent: Vec<FrameSample>,
    last_summary: Instant,
    frames: u64,
}

impl FrameLog {
    pub fn new(mode: FrameLogMode, now: Instant) -> FrameLog {
        FrameLog {
            mode,
            previous: None,
            recent: Vec::new(),
            last_summary: now,
            frames: 0,
        }
    }

    /// Call at the start of every UI pass; returns the lines to print (`context` ends each).
    pub fn tick(&mut self, now: Instant, cpu_now: Option<f64>, context: &str) -> Vec<String> {
        let mut lines = Vec::new();
        if let Some((then, cpu_then)) = self.previous {
            let sample = FrameSample {
                interval: now.duration_since(then).as_secs_f64(),
                cpu: cpu_now.zip(cpu_then).map(|(a, b)| (a - b).max(0.0)),
            };
            self.frames += 1;
            if self.mode == FrameLogMode::EveryFrame {
                lines.push(format!(
                    "frame n={} interval_ms={:.2} ui_cpu_ms={} {context}",
                    self.frames,
                    sample.interval * 1e3,
                    sample.cpu.map_or("-".into(), |c| format!("{:.2}", c * 1e3)),
                ));
            }
            self.recent.push(sample);
        }
        self.previous = Some((now, cpu_now));
        if now.duration_since(self.last_summary).as_secs_f64() >= 1.0 {
            lines.push(summary_line(&self.recent, self.frames, context));
            self.recent.clear();
            self.last_summary = now;
        }
        lines
    }
}

/// The `q`-quantile (nearest rank) of `values`, None when empty.
pub fn quantile(values: &[f64], q: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    Some(sorted[rank - 1])
}

fn summary_line(samples: &[FrameSample], total: u64, context: &str) -> String {
    let intervals: Vec<f64> = samples.iter().map(|s| s.interval).collect();
    let cpu: Vec<f64> = samples.iter().filter_map(|s| s.cpu).collect();
    let ms = |v: Option<f64>| v.map_or("-".to_string(), |s| format!("{:.1}", s * 1e3));
    let fps = quantile(&intervals, 0.5)
        .map_or("-".to_string(), |dt| format!("{:.1}", 1.0 / dt.max(1e-6)));
    format!(
        "frame-stats frames={total} fps={fps} interval_p50_ms={} interval_p90_ms={} ui_cpu_p50_ms={} ui_cpu_p90_ms={} {context}",
        ms(quantile(&intervals, 0.5)),
        ms(quantile(&intervals, 0.9)),
        ms(quantile(&cpu, 0.5)),
        ms(quantile(&cpu, 0.9)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn quantiles_are_nearest_rank() {
        let v = [5.0, 1.0, 3.0, 2.0, 4.0];
        assert_eq!(quantile(&v, 0.5), Some(3.0));
        assert_eq!(quantile(&v, 0.9), Some(5.0));
        assert_eq!(quantile(&v, 0.0), Some(1.0));
        assert_eq!(quantile(&[], 0.5), None);
    }

    #[test]
    fn frames_give_intervals_and_thread_cpu_and_a_summary_each_second() {
        let start = Instant::now();
        let mut log = FrameLog::new(FrameLogMode::EveryFrame, start);
        let mut printed = Vec::new();
        for i in 0..=40u32 {
            let now = start + Duration::from_millis(30 * u64::from(i));
            printed.extend(log.tick(now, Some(f64::from(i) * 0.004), "x=1"));
        }
        let frames: Vec<_> = printed.iter().filter(|l| l.starts_with("frame ")).collect();
        assert_eq!(frames.len(), 40);
        assert!(frames[0].contains("interval_ms=30.00 ui_cpu_ms=4.00 x=1"));
        let summary = printed
            .iter()
            .find(|l| l.starts_with("frame-stats"))
            .expect("a summary after one second");
        assert!(summary.contains("interval_p50_ms=30.0"), "{summary}");
        assert!(summary.contains("ui_cpu_p50_ms=4.0"), "{summary}");
    }

    #[test]
    fn the_thread_clock_counts_this_threads_work() {
        let Some(before) = thread_cpu_seconds() else {
            return;
        };
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        std::hint::black_box(x);
        let after = thread_cpu_seconds().unwrap();
        assert!(after > before, "{before} {after}");
    }
}
