//! An in-window file browser: the fallback when no system file dialog exists (a Linux machine
//! without xdg-desktop-portal or zenity), so Open and Save always work. (`egui-file-dialog` 0.15,
//! the well-kept crate for this, targets egui 0.36; this window uses 0.37.)
//!
//! One directory listing at a time: folders first, then the files whose extension the purpose
//! accepts (or every file with "Show all files"). A click selects, a double click opens a folder
//! or picks a file; the path line can be typed into. Cost: one `read_dir` per folder shown.

use std::path::{Path, PathBuf};

use eframe::egui;

/// What the browser is asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct BrowserRequest {
    pub title: String,
    /// Lower-case extensions offered (empty: every file).
    pub extensions: Vec<String>,
    /// `Some(name)`: pick where to save, starting from this file name.
    pub save_name: Option<String>,
    /// The folder shown first.
    pub start: PathBuf,
}

/// One line of a listing.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    name: String,
    path: PathBuf,
    is_dir: bool,
}

/// What a frame of the browser produced.
#[derive(Debug, Clone, PartialEq)]
pub enum BrowserOutcome {
    Picked(PathBuf),
    Cancelled,
}

/// The browser's state between frames.
#[derive(Debug, Clone)]
pub struct FileBrowser {
    request: BrowserRequest,
    dir: PathBuf,
    entries: Vec<Entry>,
    /// Why the folder could not be listed.
    error: Option<String>,
    selected: Option<PathBuf>,
    /// The location line (editable).
    location: String,
    /// The file name (save mode).
    file_name: String,
    show_all: bool,
    /// Escape was pressed: the next `show` answers Cancelled.
    cancelled: bool,
}

impl FileBrowser {
    pub fn new(request: BrowserRequest) -> Self {
        let file_name = request.save_name.clone().unwrap_or_default();
        let start = request.start.clone();
        let mut browser = FileBrowser {
            request,
            dir: PathBuf::new(),
            entries: Vec::new(),
            error: None,
            selected: None,
            location: String::new(),
            file_name,
            show_all: false,
            cancelled: false,
        };
        browser.enter(&start);
        browser
    }

    /// Closes the browser without a pick (Escape).
    pub fn cancel(&mut self) {
        self.cancelled = true;
    }

    /// The folder shown.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Shows the folder `dir` (its nearest existing ancestor if it is gone).
    fn enter(&mut self, dir: &Path) {
        let mut dir = dir.to_path_buf();
        while !dir.is_dir() {
            match dir.parent() {
                Some(p) if !p.as_os_str().is_empty() => dir = p.to_path_buf(),
                _ => {
                    dir = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
                    break;
                }
            }
        }
        self.dir = std::fs::canonicalize(&dir).unwrap_or(dir);
        self.location = self.dir.display().to_string();
        self.selected = None;
        self.refresh();
    }

    fn accepts(&self, path: &Path) -> bool {
        if self.show_all || self.request.extensions.is_empty() {
            return true;
        }
        let ext = path
            .extension()
            .map(|e| e.to_string_lossy().to_lowercase())
            .unwrap_or_default();
        self.request.extensions.contains(&ext)
    }

    fn refresh(&mut self) {
        self.entries.clear();
        self.error = None;
        let listing = match std::fs::read_dir(&self.dir) {
            Ok(l) => l,
            Err(e) => {
                self.error = Some(format!("cannot list {}: {e}", self.dir.display()));
                return;
            }
        };
        for item in listing.flatten() {
            let name = item.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let path = item.path();
            let is_dir = path.is_dir();
            if is_dir || self.accepts(&path) {
                self.entries.push(Entry { name, path, is_dir });
            }
        }
        self.entries.sort_by(|a, b| {
            (!a.is_dir, a.name.to_lowercase()).cmp(&(!b.is_dir, b.name.to_lowercase()))
        });
    }

    /// What the Open / Save button would pick now.
    fn choice(&self) -> Option<PathBuf> {
        if self.request.save_name.is_some() {
            let name = self.file_name.trim();
            return (!name.is_empty()).then(|| self.dir.join(name));
        }
        self.selected.clone().filter(|p| p.is_file())
    }

    /// Draws the browser as a window; `Some` once the user has picked or cancelled.
    pub fn show(&mut self, ctx: &egui::Context) -> Option<BrowserOutcome> {
        if self.cancelled {
            return Some(BrowserOutcome::Cancelled);
        }
        let mut outcome = None;
        let mut open = true;
        egui::Window::new(self.request.title.clone())
            .id(egui::Id::unique("in_window_file_browser"))
            .collapsible(false)
            .resizable(true)
            .default_size([560.0, 420.0])
            .anchor(egui::Align2::CENTER_CENTER, [0.0, 0.0])
            .open(&mut open)
            .show(ctx, |ui| outcome = self.contents(ui));
        if !open {
            outcome = Some(BrowserOutcome::Cancelled);
        }
        outcome
    }

    fn contents(&mut self, ui: &mut egui::Ui) -> Option<BrowserOutcome> {
        let mut outcome = None;
        let mut go_to: Option<PathBuf> = None;
        ui.horizontal(|ui| {
            if ui
                .add_enabled(self.dir.parent().is_some(), egui::Button::new("⬆ Up"))
                .on_hover_text("The folder above")
                .clicked()
            {
                go_to = self.dir.parent().map(Path::to_path_buf);
            }
            if ui.button("Home").clicked()
                && let Some(home) = std::env::var_os("HOME")
            {
                go_to = Some(PathBuf::from(home));
            }
            let label = ui.label("Folder");
            let edit = ui
                .add(
                    egui::TextEdit::singleline(&mut self.location)
                        .desired_width(f32::INFINITY)
                        .hint_text("folder or file"),
                )
                .labelled_by(label.id)
                .on_hover_text("Type a folder (or a file to open) and press Enter");
            if edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                let typed = PathBuf::from(self.location.trim());
                if typed.is_file() && self.request.save_name.is_none() {
                    outcome = Some(BrowserOutcome::Picked(typed));
                } else {
                    go_to = Some(typed);
                }
            }
        });
        if let Some(e) = &self.error {
            ui.colored_label(ui.visuals().error_fg_color, e);
        }
        let list_height = (ui.available_height() - 70.0).max(120.0);
        egui::ScrollArea::vertical()
            .max_height(list_height)
            .auto_shrink([false, false])
            .show(ui, |ui| {
                if self.entries.is_empty() && self.error.is_none() {
                    ui.weak("(no matching files here)");
                }
                for entry in &self.entries {
                    // (The bundled fonts have no folder icon: folders end in '/' and are bold.)
                    let text = if entry.is_dir {
                        egui::RichText::new(format!("{}/", entry.name)).strong()
                    } else {
                        egui::RichText::new(&entry.name)
                    };
                    let chosen = self.selected.as_deref() == Some(entry.path.as_path());
                    let row = ui
                        .selectable_label(chosen, text)
                        .accessible_name(&entry.name);
                    if row.double_clicked() {
                        if entry.is_dir {
                            go_to = Some(entry.path.clone());
                        } else if self.request.save_name.is_none() {
                            outcome = Some(BrowserOutcome::Picked(entry.path.clone()));
                        }
                    } else if row.clicked() {
                        self.selected = Some(entry.path.clone());
                        if !entry.is_dir && self.request.save_name.is_some() {
                            self.file_name = entry.name.clone();
                        }
                    }
                }
            });
        ui.separator();
        if self.request.save_name.is_some() {
            ui.horizontal(|ui| {
                let label = ui.label("File name");
                ui.add(egui::TextEdit::singleline(&mut self.file_name).desired_width(320.0))
                    .labelled_by(label.id);
            });
        }
        ui.horizontal(|ui| {
            if !self.request.extensions.is_empty()
                && ui
                    .checkbox(&mut self.show_all, "Show all files")
                    .on_hover_text(format!("Offered: {}", self.request.extensions.join(", ")))
                    .changed()
            {
                self.refresh();
            }
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                if ui.button("Cancel").clicked() {
                    outcome = Some(BrowserOutcome::Cancelled);
                }
                let verb = if self.request.save_name.is_some() {
                    "Save"
                } else {
                    "Open"
                };
                let choice = self.choice();
                let selected_dir = self.selected.clone().filter(|p| p.is_dir());
                let enabled = choice.is_some() || selected_dir.is_some();
                if ui.add_enabled(enabled, egui::Button::new(verb)).clicked() {
                    match (selected_dir, choice) {
                        // A selected folder opens on Open (a save names its file below).
                        (Some(dir), _) if self.request.save_name.is_none() => go_to = Some(dir),
                        (_, Some(path)) => outcome = Some(BrowserOutcome::Picked(path)),
                        (Some(dir), None) => go_to = Some(dir),
                        (None, None) => {}
                    }
                }
            });
        });
        if let Some(dir) = go_to {
            self.enter(&dir);
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(dir: &Path, extensions: &[&str]) -> BrowserRequest {
        BrowserRequest {
            title: "Open".into(),
            extensions: extensions.iter().map(|s| s.to_string()).collect(),
            save_name: None,
            start: dir.to_path_buf(),
        }
    }

    #[test]
    fn lists_folders_first_and_filters_by_extension() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("zeta")).unwrap();
        std::fs::write(dir.path().join("a.png"), b"x").unwrap();
        std::fs::write(dir.path().join("b.txt"), b"x").unwrap();
        std::fs::write(dir.path().join(".hidden.png"), b"x").unwrap();
        let mut b = FileBrowser::new(request(dir.path(), &["png"]));
        let names: Vec<_> = b.entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["zeta", "a.png"]);
        b.show_all = true;
        b.refresh();
        let names: Vec<_> = b.entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["zeta", "a.png", "b.txt"]);
    }

    #[test]
    fn a_missing_start_folder_falls_back_to_an_existing_ancestor() {
        let dir = tempfile::tempdir().unwrap();
        let b = FileBrowser::new(request(&dir.path().join("gone/deeper/x.png"), &[]));
        assert_eq!(b.dir(), std::fs::canonicalize(dir.path()).unwrap());
    }
}
