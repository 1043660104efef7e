//! Measures the window's own frames: the CPU time eframe reports for building and painting one
//! (its cost, smoothed) and the time between painted frames over the last second. The window
//! only repaints when something changes, so the interval is the frame rate only while it
//! repaints continuously; a long gap means "idle", not "slow".

use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Frames further apart than this belong to different bursts of activity.
const IDLE_GAP: Duration = Duration::from_millis(250);
const WINDOW: Duration = Duration::from_secs(1);

#[derive(Default)]
pub struct FrameTimer {
    /// Start times of recent frames, oldest first.
    frames: VecDeque<Instant>,
    cpu_seconds: Option<f32>,
}

/// A summary for the status bar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FrameStats {
    /// Mean time between frames over the last second, in seconds (None when idle).
    pub frame_seconds: Option<f64>,
    /// Longest gap between two frames of the last second, in seconds.
    pub worst_seconds: Option<f64>,
    /// CPU time to build the last frame, smoothed, in seconds (None where eframe does not say).
    pub cpu_seconds: Option<f32>,
}

impl FrameTimer {
    /// Call once per frame with the CPU time eframe measured for the previous frame.
    pub fn tick(&mut self, now: Instant, cpu_seconds: Option<f32>) {
        if self
            .frames
            .back()
            .is_some_and(|&t| now.duration_since(t) > IDLE_GAP)
        {
            self.frames.clear();
        }
        self.frames.push_back(now);
        while self
            .frames
            .front()
            .is_some_and(|&t| now.duration_since(t) > WINDOW)
        {
            self.frames.pop_front();
        }
        if let Some(c) = cpu_seconds {
            self.smooth_cpu(c);
        }
    }

    /// Records the duration of a UI pass where eframe reports no CPU time.
    pub fn ui_pass(&mut self, seconds: f32) {
        self.smooth_cpu(seconds);
    }

    fn smooth_cpu(&mut self, c: f32) {
        self.cpu_seconds = Some(match self.cpu_seconds {
            Some(old) => 0.9 * old + 0.1 * c,
            None => c,
        });
    }

    pub fn stats(&self, now: Instant) -> FrameStats {
        let active = self
            .frames
            .back()
            .is_some_and(|&t| now.duration_since(t) <= IDLE_GAP);
        let n = self.frames.len();
        let (frame_seconds, worst_seconds) = if active && n >= 3 {
            let span = self.frames[n - 1]
                .duration_since(self.frames[0])
                .as_secs_f64();
            let worst = self
                .frames
                .iter()
                .zip(self.frames.iter().skip(1))
                .map(|(a, b)| b.duration_since(*a).as_secs_f64())
                .fold(0.0, f64::max);
            (Some(span / (n - 1) as f64), Some(worst))
        } else {
            (None, None)
        };
        FrameStats {
            frame_seconds,
            worst_seconds,
            cpu_seconds: self.cpu_seconds,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_frames_give_their_interval_and_a_gap_means_idle() {
        let mut t = FrameTimer::default();
        let start = Instant::now();
        for i in 0..30 {
            t.tick(start + Duration::from_millis(20 * i), Some(0.002));
        }
        let now = start + Duration::from_millis(20 * 29);
        let s = t.stats(now);
        assert!((s.frame_seconds.unwrap() - 0.020).abs() < 1e-6);
        assert!((s.worst_seconds.unwrap() - 0.020).abs() < 1e-6);
        assert!((s.cpu_seconds.unwrap() - 0.002).abs() < 1e-6);
        assert_eq!(t.stats(now + Duration::from_secs(1)).frame_seconds, None);
    }
}
