//! Sessions (File > Save Session / Open Session): every scenario's settings, including the
//! files it has loaded (they are part of its config), and the view settings, as one versioned
//! JSON document written atomically. Reading checks the format and version: a newer version is
//! refused with the reason; within a known version each scenario is read on its own (missing
//! fields take their defaults, so a session from an older build opens), and a scenario that
//! cannot be read is skipped with a warning naming it, never losing the others.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::state::{State, Zoom};
use crate::scenarios::{KINDS, ScenarioConfig};

/// The `format` field of every session file.
pub const SESSION_FORMAT: &str = "beliefscope-session";
/// The session version this build writes and the newest it reads.
pub const SESSION_VERSION: u64 = 1;

/// What a session restores besides the configs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ViewSettings {
    pub zoom: Zoom,
    pub error_scale: f64,
    pub show_controls: bool,
    pub show_inspector: bool,
}

impl Default for ViewSettings {
    fn default() -> Self {
        let s = State::default();
        ViewSettings {
            zoom: s.zoom,
            error_scale: s.error_scale,
            show_controls: s.show_controls,
            show_inspector: s.show_inspector,
        }
    }
}

/// A session as read back.
#[derive(Debug, Clone, PartialEq)]
pub struct Restored {
    /// The scenario that was showing.
    pub current: ScenarioConfig,
    /// Every scenario's settings (the current one included).
    pub configs: BTreeMap<String, ScenarioConfig>,
    pub view: ViewSettings,
    /// Parts that could not be restored, one line each.
    pub warnings: Vec<String>,
}

/// The session document for `state`, with `current` as the scenario showing.
pub fn session_json(state: &State, current: &ScenarioConfig) -> String {
    let mut scenarios = serde_json::Map::new();
    let mut configs = state.configs.clone();
    configs.insert(current.name().to_string(), current.clone());
    for (name, config) in &configs {
        if let Ok(v) = serde_json::to_value(config) {
            scenarios.insert(name.clone(), v);
        }
    }
    let view = ViewSettings {
        zoom: state.zoom,
        error_scale: state.error_scale,
        show_controls: state.show_controls,
        show_inspector: state.show_inspector,
    };
    let doc = serde_json::json!({
        "format": SESSION_FORMAT,
        "version": SESSION_VERSION,
        "written_by": format!("beliefscope {}", env!("CARGO_PKG_VERSION")),
        "current": current.name(),
        "scenarios": scenarios,
        "view": view,
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

/// Reads a session document; the error says why it cannot be opened at all.
pub fn read_session(text: &str) -> Result<Restored, String> {
    let doc: Value = serde_json::from_str(text)
        .map_err(|e| format!("not a session file (invalid JSON: {e})"))?;
    if doc.get("format").and_then(Value::as_str) != Some(SESSION_FORMAT) {
        return Err(format!(
            "not a beliefscope session (no \"format\": \"{SESSION_FORMAT}\")"
        ));
    }
    let version = doc
        .get("version")
        .and_then(Value::as_u64)
        .ok_or("the session has no version number")?;
    if version > SESSION_VERSION {
        return Err(format!(
            "the session was written by a newer beliefscope (session version {version}; this \
             build reads up to version {SESSION_VERSION}); update beliefscope to open it"
        ));
    }
    if version == 0 {
        return Err("session version 0 does not exist; the file is damaged".into());
    }
    let mut warnings = Vec::new();
    let mut configs = BTreeMap::new();
    let empty = serde_json::Map::new();
    let scenarios = doc
        .get("scenarios")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    for (name, value) in scenarios {
        if !KINDS.iter().any(|k| k.name == name) {
            warnings.push(format!(
                "skipped scenario '{name}': this build does not have it"
            ));
            continue;
        }
        let mut value = value.clone();
        if let Some(obj) = value.as_object_mut() {
            obj.insert("scenario".into(), Value::String(name.clone()));
        }
        match serde_json::from_value::<ScenarioConfig>(value) {
            Ok(config) => match config.check() {
                Ok(()) => {
                    configs.insert(name.clone(), config);
                }
                Err(e) => warnings.push(format!("skipped scenario '{name}': {e}")),
            },
            Err(e) => warnings.push(format!("skipped scenario '{name}': {e}")),
        }
    }
    let view = doc
        .get("view")
        .cloned()
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default();
    let current_name = doc.get("current").and_then(Value::as_str).unwrap_or("");
    let current = match configs.get(current_name) {
        Some(c) => c.clone(),
        None => {
            let fallback = configs
                .values()
                .next()
                .cloned()
                .ok_or("the session holds no scenario this build can open")?;
            warnings.push(format!(
                "the session's current scenario '{current_name}' could not be restored; showing {}",
                fallback.name()
            ));
            fallback
        }
    };
    Ok(Restored {
        current,
        configs,
        view,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_scenario() {
        let mut state = State::default();
        for k in KINDS {
            state
                .configs
                .insert(k.name.to_string(), (k.default_config)());
        }
        let current = (KINDS[1].default_config)();
        let restored = read_session(&session_json(&state, &current)).unwrap();
        assert_eq!(restored.current, current);
        assert_eq!(restored.configs.len(), KINDS.len());
        assert!(restored.warnings.is_empty(), "{:?}", restored.warnings);
    }

    #[test]
    fn newer_versions_and_foreign_files_are_refused_with_the_reason() {
        let newer = format!(
            r#"{{"format":"{SESSION_FORMAT}","version":{},"scenarios":{{}}}}"#,
            SESSION_VERSION + 1
        );
        let e = read_session(&newer).unwrap_err();
        assert!(e.contains("newer beliefscope"), "{e}");
        let e = read_session(r#"{"scenario":"denoise"}"#).unwrap_err();
        assert!(e.contains("not a beliefscope session"), "{e}");
        assert!(read_session("{").unwrap_err().contains("invalid JSON"));
    }

    #[test]
    fn an_older_session_missing_fields_opens_with_defaults_and_bad_parts_are_named() {
        let name = KINDS[0].name;
        let text = format!(
            r#"{{"format":"{SESSION_FORMAT}","version":1,"current":"{name}",
                "scenarios":{{"{name}":{{}},"nonesuch":{{}}}}}}"#
        );
        let r = read_session(&text).unwrap();
        assert_eq!(r.current, (KINDS[0].default_config)());
        assert_eq!(r.warnings.len(), 1);
        assert!(r.warnings[0].contains("nonesuch"));
    }
}
