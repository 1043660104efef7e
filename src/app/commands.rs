//! Everything the user can ask of the window, as data. Widgets, menus and keyboard shortcuts
//! only record [`UiCommand`]s while the frame is drawn; the app applies them at the end of the
//! frame. Each command that has a keyboard shortcut names it here, once: menus and tooltips read
//! it from [`UiCommand::shortcut`].

use std::path::PathBuf;

use eframe::egui::{self, Key, KeyboardShortcut, Modifiers};

use crate::scenarios::Task;
use crate::scenarios::{Probe, ScenarioConfig, ScenarioControl};

#[derive(Debug, Clone)]
pub enum UiCommand {
    /// Run the iterations, or pause them when running.
    PlayPause,
    /// One iteration, then pause.
    Step,
    /// Rebuild the scenario from its config (back to iteration 0).
    Reset,
    /// Ask for an image file (a dialog off the UI thread).
    OpenImageDialog,
    /// Ask for an image that already is noisy (denoise: denoised as it is, no clean version).
    OpenNoisyImageDialog,
    ZoomIn,
    ZoomOut,
    /// Fit the image panes to the window.
    ZoomFit,
    /// Forget the inspected pixel or node.
    ClearSelection,
    /// Rebuild the scenario with this config (how parameters are applied).
    Apply(ScenarioConfig),
    /// Use this image file (from the dialog or dropped on the window).
    OpenImage(PathBuf),
    /// Inspect this node or message.
    Select(Probe),
    /// Close the message with this id.
    DismissNotice(u64),
    /// Run a long job on the worker (auto-tune); iterations pause meanwhile.
    RunTask(Task),
    /// Stop the running job (or set-up) at its next check.
    CancelTask,
    /// A live change to the running scenario (the tree explorer's evidence slider, root).
    Control(ScenarioControl),
    /// Ask where to save this edge-list text (a dialog off the UI thread), then write it.
    SaveTree(String),
    /// Pick a session file and restore it.
    OpenSessionDialog,
    /// Ask where to save the session (every scenario's settings and files), then write it.
    SaveSessionDialog,
    /// Forget the recent files.
    ClearRecent,
    /// Put the `beliefscope run ...` line reproducing the current settings on the clipboard.
    CopyCommand,
    /// Save the run's curves (one row per iteration) as CSV.
    ExportCurves,
    /// Save the current run as results.json.
    ExportResults,
    /// Save a screenshot of the whole window as PNG.
    ExportScreenshot,
}

impl UiCommand {
    /// The commands with a keyboard shortcut, in menu order.
    pub const KEYED: [UiCommand; 10] = [
        UiCommand::PlayPause,
        UiCommand::Step,
        UiCommand::Reset,
        UiCommand::OpenImageDialog,
        UiCommand::SaveSessionDialog,
        UiCommand::CopyCommand,
        UiCommand::ZoomIn,
        UiCommand::ZoomOut,
        UiCommand::ZoomFit,
        UiCommand::ClearSelection,
    ];

    /// The name on buttons and menu items (also the accessible name of its button).
    pub fn label(&self) -> &'static str {
        match self {
            UiCommand::PlayPause => "Play / Pause",
            UiCommand::Step => "Step",
            UiCommand::Reset => "Reset",
            UiCommand::OpenImageDialog => "Open image…",
            UiCommand::OpenNoisyImageDialog => "Open noisy image…",
            UiCommand::ZoomIn => "Zoom in",
            UiCommand::ZoomOut => "Zoom out",
            UiCommand::ZoomFit => "Fit to window",
            UiCommand::ClearSelection => "Clear selection",
            UiCommand::Apply(_) => "Apply parameters",
            UiCommand::OpenImage(_) => "Open image",
            UiCommand::Select(_) => "Select",
            UiCommand::DismissNotice(_) => "Dismiss",
            UiCommand::RunTask(_) => "Run task",
            UiCommand::CancelTask => "Cancel",
            UiCommand::Control(_) => "Update",
            UiCommand::SaveTree(_) => "Save tree…",
            UiCommand::OpenSessionDialog => "Open session…",
            UiCommand::SaveSessionDialog => "Save session…",
            UiCommand::ClearRecent => "Clear recent files",
            UiCommand::CopyCommand => "Copy as command",
            UiCommand::ExportCurves => "Curves as CSV…",
            UiCommand::ExportResults => "Results as results.json…",
            UiCommand::ExportScreenshot => "Window screenshot (PNG)…",
        }
    }

    /// What the command does, for tooltips.
    pub fn description(&self) -> &'static str {
        match self {
            UiCommand::PlayPause => "Run the iterations, or pause them",
            UiCommand::Step => "Run one iteration, then pause",
            UiCommand::Reset => "Rebuild the scenario from its parameters (iteration 0)",
            UiCommand::OpenImageDialog => {
                "Pick an image file to use as the clean image (tree scenario: a CSV dataset or an \
                 edge-list file); or drop one on the window"
            }
            UiCommand::OpenNoisyImageDialog => {
                "Pick an image that already is noisy (your own photograph): it is denoised as it \
                 is, with no clean version (so no RMSE), and its noise sigma is estimated from it \
                 or given"
            }
            UiCommand::ZoomIn => "Enlarge the image panes",
            UiCommand::ZoomOut => "Shrink the image panes",
            UiCommand::ZoomFit => "Fit the image panes to the window",
            UiCommand::ClearSelection => {
                "Close the dialog on top, else stop inspecting the selected pixel"
            }
            UiCommand::Apply(_) => "Rebuild the scenario with the edited parameters",
            UiCommand::OpenImage(_) => "Load this image",
            UiCommand::Select(_) => "Inspect this pixel",
            UiCommand::DismissNotice(_) => "Close this message",
            UiCommand::RunTask(_) => "Run this job on the engine thread",
            UiCommand::CancelTask => "Stop the running job",
            UiCommand::Control(_) => "Change the running scenario without rebuilding it",
            UiCommand::SaveTree(_) => "Save the drawn tree as an edge-list file",
            UiCommand::OpenSessionDialog => {
                "Restore a saved session: every scenario's settings and loaded files"
            }
            UiCommand::SaveSessionDialog => {
                "Save every scenario's settings and loaded files as one session file"
            }
            UiCommand::ClearRecent => "Forget the recently opened files",
            UiCommand::CopyCommand => {
                "Copy the command line that reproduces these settings headless \
                 (beliefscope run ...)"
            }
            UiCommand::ExportCurves => {
                "Save the run's per-iteration numbers (residual, metrics) as CSV"
            }
            UiCommand::ExportResults => {
                "Save the current run (config, iterations, metrics) as results.json; \
                 `beliefscope run --config` re-runs it"
            }
            UiCommand::ExportScreenshot => "Save the whole window as a PNG image",
        }
    }

    pub fn shortcut(&self) -> Option<KeyboardShortcut> {
        let key = |k| Some(KeyboardShortcut::new(Modifiers::NONE, k));
        match self {
            UiCommand::PlayPause => key(Key::Space),
            UiCommand::Step => key(Key::ArrowRight),
            UiCommand::Reset => key(Key::R),
            UiCommand::OpenImageDialog => Some(KeyboardShortcut::new(Modifiers::COMMAND, Key::O)),
            UiCommand::SaveSessionDialog => Some(KeyboardShortcut::new(Modifiers::COMMAND, Key::S)),
            UiCommand::CopyCommand => Some(KeyboardShortcut::new(
                Modifiers::COMMAND | Modifiers::SHIFT,
                Key::C,
            )),
            UiCommand::ZoomIn => key(Key::Plus),
            UiCommand::ZoomOut => key(Key::Minus),
            UiCommand::ZoomFit => key(Key::F),
            UiCommand::ClearSelection => key(Key::Escape),
            _ => None,
        }
    }

    /// Tooltip text: the description and the shortcut, e.g. "Run one iteration, then pause (→)".
    pub fn tooltip(&self, ctx: &egui::Context) -> String {
        match self.shortcut() {
            Some(s) => format!("{} ({})", self.description(), ctx.format_shortcut(&s)),
            None => self.description().to_string(),
        }
    }

    /// A menu item for this command, showing its shortcut on the right. True when clicked.
    pub fn menu_item(&self, ui: &mut egui::Ui) -> bool {
        let mut button = egui::Button::new(self.label());
        if let Some(s) = self.shortcut() {
            button = button.shortcut_text(ui.ctx().format_shortcut(&s));
        }
        ui.add(button).on_hover_text(self.description()).clicked()
    }
}

/// The commands whose shortcut was pressed this frame (the keys are consumed). Nothing fires
/// while a widget has keyboard focus (typing a number must not step the scenario).
pub fn pressed_shortcuts(ctx: &egui::Context) -> Vec<UiCommand> {
    if ctx.egui_wants_keyboard_input() {
        return Vec::new();
    }
    // Shortcuts with modifiers first, so that Ctrl+O never also counts as a plain O.
    let mut keyed: Vec<(UiCommand, KeyboardShortcut)> = UiCommand::KEYED
        .into_iter()
        .filter_map(|c| c.shortcut().map(|s| (c, s)))
        .collect();
    keyed.sort_by_key(|(_, s)| s.modifiers.is_none());
    ctx.input_mut(|input| {
        keyed
            .into_iter()
            .filter(|(_, s)| input.consume_shortcut(s))
            .map(|(c, _)| c)
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyed_commands_have_distinct_shortcuts() {
        let shortcuts: Vec<_> = UiCommand::KEYED.iter().map(|c| c.shortcut()).collect();
        assert!(shortcuts.iter().all(Option::is_some));
        for (i, a) in shortcuts.iter().enumerate() {
            for b in &shortcuts[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }

    #[test]
    fn tooltip_names_the_shortcut() {
        let ctx = egui::Context::default();
        let tip = UiCommand::Step.tooltip(&ctx);
        assert!(tip.starts_with("Run one iteration"), "{tip}");
        assert!(tip.ends_with(')'), "{tip}");
    }
}
