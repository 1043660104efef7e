//! The window's file traffic: opening dropped or picked files in the current room (a session
//! file restores the session, a noisy image becomes the observation), the file dialogs' starting
//! folders, and acting on what a dialog picked. Cost: the file reads themselves.
//!
//! Opened files go to File > Open Recent (`recent.rs`), except an already noisy image: a room
//! that opens one (`ScenarioUi::opens_noisy_images`, denoise) gets File > Open noisy image…
//! (`OpenWhat::NoisyImage`, `ScenarioUi::open_noisy_image`), and Open Recent would reopen it as
//! a clean image and add noise to it.

// The window's own imports and modules (file dialogs, recent files, sessions, notices).
use super::*;
use strum::VariantArray;

impl App {
    /// Opens `paths` in the current scenario's room (a session file restores the session). A
    /// JSON file that is not a session goes to the room (a pbp model file, a sweep's curve); if
    /// the room refuses it, the error says it is no session either.
    pub(super) fn open_paths(&mut self, paths: &[PathBuf]) {
        let json = match paths {
            [path] if RecentKind::of(path) == Some(RecentKind::Sessions) => Some(path),
            _ => None,
        };
        if let Some(path) = json
            && is_session_file(path)
        {
            self.open_session(path);
            return;
        }
        let room = self.rooms.get(self.state.config.name());
        let opened = match (room.open_paths(&self.state.config, paths), json) {
            (Opened::Refused(why), Some(path)) => Opened::Refused(format!(
                "{}: not a beliefscope session (no \"format\": \"{}\"), and {why}",
                path.display(),
                session::SESSION_FORMAT
            )),
            (opened, _) => opened,
        };
        self.act_on_opened(opened, paths);
    }

    /// Opens `path` as an image that already is noisy (the denoise room's "Open noisy image…").
    pub(super) fn open_noisy_image(&mut self, path: &Path) {
        let room = self.rooms.get(self.state.config.name());
        let opened = room.open_noisy_image(&self.state.config, path);
        // Not remembered in Open Recent: reopening it from there would take it as a clean
        // image and add noise to it.
        self.act_on_opened(opened, &[]);
    }

    /// Runs, keeps or refuses what opening `paths` gave (`paths` go to Open Recent).
    pub(super) fn act_on_opened(&mut self, opened: Opened, paths: &[PathBuf]) {
        match opened {
            Opened::Apply(config) => {
                let config = *config;
                for p in paths {
                    self.state.recent.add(p);
                }
                self.state.config = config.clone();
                self.selection = None;
                let play = self.should_play_after_load();
                self.apply(config, play);
            }
            Opened::Waiting(message) | Opened::Shown(message) => {
                for p in paths {
                    self.state.recent.add(p);
                }
                self.notices.info(message);
            }
            Opened::Refused(message) => self.notices.error(message),
        }
    }

    /// Restores every scenario's settings and the view from the session file `path`; the
    /// current settings stay if it cannot be read.
    pub(super) fn open_session(&mut self, path: &Path) {
        let read = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))
            .and_then(|text| {
                session::read_session(&text).map_err(|e| format!("{}: {e}", path.display()))
            });
        match read {
            Ok(restored) => {
                self.state.recent.add(path);
                for w in restored.warnings {
                    self.notices.error(format!("{}: {w}", path.display()));
                }
                self.state.configs = restored.configs;
                let v = restored.view;
                self.state.zoom = v.zoom;
                self.state.error_scale = v.error_scale;
                self.state.show_controls = v.show_controls;
                self.state.show_inspector = v.show_inspector;
                self.notices.clear_info();
                self.selection = None;
                self.state.config = restored.current.clone();
                let play = self.should_play_after_load();
                self.apply(restored.current, play);
                self.notices
                    .info(format!("restored the session {}", path.display()));
            }
            Err(e) => self.notices.error(e),
        }
    }

    /// Where a dialog for files of `kinds` starts: the folder of the newest such file, else
    /// the working directory.
    pub(super) fn dialog_start(&self, kinds: &[RecentKind]) -> PathBuf {
        self.state
            .recent
            .folder(kinds)
            .unwrap_or_else(|| std::env::current_dir().unwrap_or_default())
    }

    pub(super) fn ask_to_save(&mut self, ctx: &egui::Context, request: SaveRequest) {
        // Saves start beside the newest file the user has opened or saved.
        let start = self.dialog_start(RecentKind::VARIANTS);
        self.dialog.ask(ctx, Purpose::Save(request), start);
    }

    /// Acts on what a file dialog picked.
    pub(super) fn on_picked(&mut self, ctx: &egui::Context, purpose: Purpose, picked: Picked) {
        match (purpose, picked) {
            (Purpose::Open(OpenWhat::Session), Picked::Path(path)) => self.open_session(&path),
            (Purpose::Open(OpenWhat::NoisyImage), Picked::Path(path)) => {
                self.open_noisy_image(&path)
            }
            (Purpose::Open(_), Picked::Path(path)) => self.open_paths(&[path]),
            (Purpose::Save(request), Picked::Path(path)) => match request.payload {
                Payload::Bytes(bytes) => match crate::io::write_atomic(&path, &bytes) {
                    Ok(()) => {
                        if RecentKind::of(&path) == Some(RecentKind::Sessions)
                            && request.title.contains("session")
                        {
                            self.state.recent.add(&path);
                        }
                        self.notices.info(format!("saved {}", path.display()));
                    }
                    Err(e) => self.notices.error(e.to_string()),
                },
                Payload::Screenshot => {
                    self.screenshot_to = Some(path);
                    let tx = self.screenshots.0.clone();
                    let repaint = ctx.clone();
                    ctx.request_screenshot(move |image| {
                        let _ = tx.send(image);
                        repaint.request_repaint();
                    });
                }
            },
            (_, Picked::Failed(message)) if !message.is_empty() => self.notices.error(message),
            _ => {}
        }
    }
}

/// Whether `path` reads as a session file (a JSON object whose "format" is the session's); an
/// unreadable file counts as one, so that opening it reports why it cannot be read.
fn is_session_file(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return true;
    };
    serde_json::from_str::<serde_json::Value>(&text).map_or(true, |v| {
        v.get("format").and_then(|f| f.as_str()) == Some(session::SESSION_FORMAT)
    })
}
