//! What the window remembers between sessions (eframe storage under [`eframe::APP_KEY`]): the
//! last scenario config, the zoom and the panel choices. Runtime-only things (the runner, the
//! latest snapshot, textures, messages) live beside it in [`super::App`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::recent::RecentFiles;
use crate::scenarios::ScenarioConfig;

/// Smallest and largest zoom of the image panes (screen points per image pixel).
pub const ZOOM_RANGE: (f32, f32) = (0.25, 32.0);

/// The persisted part of the app. Unknown or missing fields fall back to their defaults, so an
/// older saved state still loads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct State {
    /// The scenario config being edited; applied to the runner when an edit is complete.
    pub config: ScenarioConfig,
    pub zoom: Zoom,
    /// Upper end of the |error| heat map, in the scenario's units (gray levels for denoise).
    pub error_scale: f64,
    pub show_controls: bool,
    pub show_inspector: bool,
    /// The convergence debugger's bottom panel (for scenarios that have one).
    pub show_debugger: bool,
    /// What the inspector shows for a selected node, where there is a choice.
    pub inspector_tab: InspectorTab,
    /// The last settings of every other scenario (with the files each had loaded), restored
    /// when the user switches back to it.
    pub configs: BTreeMap<String, ScenarioConfig>,
    /// Recently opened files, per kind.
    pub recent: RecentFiles,
    /// Write CSV exports without a header row.
    pub csv_without_header: bool,
    /// The memory budget runs are checked against, in GB (10⁹ bytes); `None`: half of
    /// physical memory (see `run::budget`).
    pub memory_budget_gb: Option<f64>,
}

/// The inspector's views of a selected node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum InspectorTab {
    #[default]
    Belief,
    /// The messages into the node (where the algorithm can show them).
    Messages,
}

impl Default for State {
    fn default() -> Self {
        State {
            config: ScenarioConfig::default(),
            zoom: Zoom::default(),
            error_scale: 64.0,
            show_controls: true,
            show_inspector: true,
            show_debugger: true,
            inspector_tab: InspectorTab::Belief,
            configs: BTreeMap::new(),
            recent: RecentFiles::default(),
            csv_without_header: false,
            memory_budget_gb: None,
        }
    }
}

/// One zoom shared by every image pane.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Zoom {
    /// Fit the panes to the space available (the factor follows the window).
    pub fit: bool,
    /// Screen points per image pixel (the last fitted value while `fit` is on).
    pub factor: f32,
}

impl Default for Zoom {
    fn default() -> Self {
        Zoom {
            fit: true,
            factor: 3.0,
        }
    }
}

impl State {
    /// The budget in bytes this state asks for (`None`: the default).
    pub fn memory_budget_bytes(&self) -> Option<u64> {
        self.memory_budget_gb
            .filter(|g| g.is_finite() && *g > 0.0)
            .map(|g| (g * 1e9) as u64)
    }
}

impl Zoom {
    /// Multiplies the factor (leaving fit mode), clamped to [`ZOOM_RANGE`].
    pub fn scale(&mut self, by: f32) {
        self.fit = false;
        self.factor = (self.factor * by).clamp(ZOOM_RANGE.0, ZOOM_RANGE.1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_round_trips_and_tolerates_missing_fields() {
        let s = State::default();
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<State>(&json).unwrap(), s);
        let partial: State = serde_json::from_str(r#"{"show_controls": false}"#).unwrap();
        assert!(!partial.show_controls);
        assert_eq!(partial.zoom, Zoom::default());
    }

    #[test]
    fn zoom_scale_clamps_and_leaves_fit() {
        let mut z = Zoom::default();
        z.scale(1000.0);
        assert!(!z.fit);
        assert_eq!(z.factor, ZOOM_RANGE.1);
    }
}
