//! The denoising run's message schedule: `auto` (the default) or one fixed [`Schedule`].
//!
//! `auto` resolves from the config alone, so an echoed `"auto"` re-runs the same run: kernel
//! BP on a loaded photograph runs forward-and-back sweeps (Gauss-Seidel), everything else
//! runs synchronously (Jacobi). Kernel BP on the grid drifts past its best iterate (README,
//! "Denoising"), so what counts is how good the iterates are before the SURE guard stops the
//! drift. A sweep carries evidence across the whole image in one iteration; on 256 × 256
//! photographs its guarded result was within 4% of total variation's RMSE on all eleven
//! measured (the shared pair both ways, below TV), where synchronous updates were up to 13%
//! above it, while on the smooth built-in sunset (trained on its own generator, Song et al.
//! 2011 Sec. 6.1) synchronous updates end 22-35% lower (README, "The schedule"). Song et al. ran kernel BP in GraphLab and name no schedule for it; this is a
//! choice of order, not of the message update. Cost: both run on every core (the sweep as a
//! wavefront); a sweep updates every message twice per iteration. The checkerboard (each
//! message once, half a sweep's work per iteration) ended 2-4% above the sweep's RMSE on the
//! shared photographs (docs/denoise.md, "Schedules on a photograph"), so it is not `auto`.

use serde::{Deserialize, Serialize};

use crate::error::labels::{Labelled, one_of};
use crate::inference::Schedule;

/// `auto` or one schedule for every algorithm. In a config: `"auto"` or a schedule's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ScheduleChoice {
    #[default]
    Auto,
    Fixed(Schedule),
}

impl ScheduleChoice {
    /// The schedule an algorithm runs: the fixed one, or for `auto` a sweep for kernel BP on a
    /// loaded image and synchronous updates otherwise.
    pub fn resolve(self, kernel_bp: bool, loads_image: bool) -> Schedule {
        match self {
            ScheduleChoice::Fixed(s) => s,
            ScheduleChoice::Auto if kernel_bp && loads_image => Schedule::Sweep,
            ScheduleChoice::Auto => Schedule::Synchronous,
        }
    }

    /// "auto" or the schedule's name.
    pub fn label(self) -> &'static str {
        match self {
            ScheduleChoice::Auto => "auto",
            ScheduleChoice::Fixed(s) => s.label(),
        }
    }
}

/// The names `schedule` accepts: `auto`, then every schedule's.
pub fn names() -> Vec<&'static str> {
    std::iter::once("auto").chain(Schedule::names()).collect()
}

impl std::str::FromStr for ScheduleChoice {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.trim() {
            "auto" => Ok(ScheduleChoice::Auto),
            other => other.parse().map(ScheduleChoice::Fixed).map_err(|_| {
                let names = one_of(std::iter::once("auto").chain(Schedule::names()));
                format!("unknown schedule '{other}' (expected {names})")
            }),
        }
    }
}

impl Serialize for ScheduleChoice {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.label())
    }
}

impl<'de> Deserialize<'de> for ScheduleChoice {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_sweeps_kernel_bp_on_a_loaded_image_only() {
        let auto = ScheduleChoice::Auto;
        assert_eq!(auto.resolve(true, true), Schedule::Sweep);
        assert_eq!(auto.resolve(true, false), Schedule::Synchronous);
        assert_eq!(auto.resolve(false, true), Schedule::Synchronous);
        assert_eq!(auto.resolve(false, false), Schedule::Synchronous);
        let fixed = ScheduleChoice::Fixed(Schedule::Residual);
        assert_eq!(fixed.resolve(true, true), Schedule::Residual);
        assert_eq!(fixed.resolve(false, false), Schedule::Residual);
    }

    #[test]
    fn reads_and_writes_auto_or_a_schedule_name() {
        for choice in [
            ScheduleChoice::Auto,
            ScheduleChoice::Fixed(Schedule::Synchronous),
            ScheduleChoice::Fixed(Schedule::Sweep),
        ] {
            let json = serde_json::to_string(&choice).unwrap();
            assert_eq!(
                serde_json::from_str::<ScheduleChoice>(&json).unwrap(),
                choice
            );
        }
        assert_eq!(
            serde_json::to_string(&ScheduleChoice::Auto).unwrap(),
            "\"auto\""
        );
        assert_eq!(
            "sweep".parse::<ScheduleChoice>(),
            Ok(ScheduleChoice::Fixed(Schedule::Sweep))
        );
        let err = serde_json::from_str::<ScheduleChoice>("\"zigzag\"").unwrap_err();
        assert!(err.to_string().contains("'zigzag'"), "{err}");
        assert!(err.to_string().contains("expected auto,"), "{err}");
    }
}
