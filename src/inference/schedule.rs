//! Update schedules and damping shared by the loopy algorithms.

use serde::{Deserialize, Serialize};

use crate::error::{Result, check_range};

/// The order in which messages are recomputed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Schedule {
    /// Jacobi: every message is recomputed from the previous iteration's messages (parallel).
    #[default]
    Synchronous,
    /// Gauss-Seidel: nodes in id order and then in reverse, each using the freshest messages
    /// (serial; one sweep updates every message twice).
    Sweep,
}

impl Schedule {
    pub const ALL: [Schedule; 2] = [Schedule::Synchronous, Schedule::Sweep];

    pub fn label(self) -> &'static str {
        match self {
            Schedule::Synchronous => "synchronous",
            Schedule::Sweep => "sweep",
        }
    }
}

impl std::str::FromStr for Schedule {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "synchronous" | "sync" => Ok(Schedule::Synchronous),
            "sweep" | "sequential" => Ok(Schedule::Sweep),
            _ => Err(format!(
                "unknown schedule '{s}' (expected synchronous or sweep)"
            )),
        }
    }
}

/// Damping `d` in `[0, 1)`: `new = d * old + (1 - d) * update`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Damping(pub f64);

impl Damping {
    pub fn check(self) -> Result<Self> {
        check_range("damping", self.0, 0.0, 0.99)?;
        Ok(self)
    }

    /// Mixes `update` into `old` in place.
    pub fn mix(self, old: &mut [f64], update: &[f64]) {
        let d = self.0;
        for (o, u) in old.iter_mut().zip(update) {
            *o = d * *o + (1.0 - d) * u;
        }
    }
}
