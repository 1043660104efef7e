//! Picking a file to open or a place to save: the system's dialog (rfd, on its own thread so the
//! window never blocks) where one exists, else the in-window [`FileBrowser`], so Open and Save
//! always work. A dialog only picks a path; loading is a `Command::Load` on the worker, like a
//! dropped file, and saving is the app's `io::write_atomic`. Tests and `App::with_config`
//! (demos, examples) always use the in-window browser, never a system dialog.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::{Duration, Instant};

use eframe::egui;

use super::file_browser::{BrowserOutcome, BrowserRequest, FileBrowser};

/// A dialog that comes back with nothing faster than this was never shown (no desktop portal
/// and no zenity): rfd reports that as a plain "nothing picked".
const TOO_FAST_FOR_A_PERSON: Duration = Duration::from_millis(250);

/// Set to `window` to always use the in-window browser (e.g. where the system dialog misbehaves).
pub const FILE_DIALOG_ENV: &str = "BELIEFSCOPE_FILE_DIALOG";

/// The image formats offered by the filter (everything the `image` crate is built to read here).
pub const IMAGE_EXTENSIONS: [&str; 12] = [
    "png", "jpg", "jpeg", "bmp", "gif", "tif", "tiff", "pgm", "ppm", "pnm", "pbm", "webp",
];

/// What came back from a dialog.
#[derive(Debug, Clone, PartialEq)]
pub enum Picked {
    Path(PathBuf),
    Cancelled,
    /// The dialog could not be shown; the message says why.
    Failed(String),
}

/// What a file is opened as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenWhat {
    /// An image or a flow file (denoise, flow).
    Image,
    /// An image that already is the noisy observation (denoise).
    NoisyImage,
    /// A CSV dataset or an edge-list file (tree).
    Data,
    /// A saved session.
    Session,
}

/// What a saved file holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Payload {
    /// These bytes, written as they are.
    Bytes(Arc<Vec<u8>>),
    /// A screenshot of the window, taken once the dialog has closed.
    Screenshot,
}

/// A request to save: the dialog's title, the proposed name and what to write.
#[derive(Debug, Clone, PartialEq)]
pub struct SaveRequest {
    pub title: String,
    pub file_name: String,
    /// (filter name, extensions)
    pub filter: (&'static str, Vec<&'static str>),
    pub payload: Payload,
}

/// What a dialog is for.
#[derive(Debug, Clone, PartialEq)]
pub enum Purpose {
    Open(OpenWhat),
    Save(SaveRequest),
}

impl Purpose {
    fn title(&self) -> String {
        match self {
            Purpose::Open(OpenWhat::Image) => "Open image".into(),
            Purpose::Open(OpenWhat::NoisyImage) => "Open a noisy image (no clean version)".into(),
            Purpose::Open(OpenWhat::Data) => {
                "Open a dataset (CSV), a tree (edge list) or a JSON file".into()
            }
            Purpose::Open(OpenWhat::Session) => "Open session".into(),
            Purpose::Save(s) => s.title.clone(),
        }
    }

    /// (filter name, extensions) offered, the first one preselected.
    fn filters(&self) -> Vec<(&'static str, Vec<&'static str>)> {
        match self {
            Purpose::Open(OpenWhat::Image) => vec![
                ("Images", IMAGE_EXTENSIONS.to_vec()),
                ("Middlebury flow", vec!["flo"]),
            ],
            Purpose::Open(OpenWhat::NoisyImage) => vec![("Images", IMAGE_EXTENSIONS.to_vec())],
            Purpose::Open(OpenWhat::Data) => vec![(
                "CSV datasets, edge lists and JSON files",
                vec!["csv", "tsv", "data", "edges", "txt", "json"],
            )],
            Purpose::Open(OpenWhat::Session) => vec![("beliefscope sessions", vec!["json"])],
            Purpose::Save(s) => vec![s.filter.clone()],
        }
    }
}

/// At most one open dialog at a time.
pub struct FileDialog {
    /// Try the system dialog first (false once it proved missing, or when asked not to).
    native: bool,
    pending: Option<(Purpose, PathBuf, Receiver<Picked>)>,
    browser: Option<(Purpose, FileBrowser)>,
}

impl Default for FileDialog {
    fn default() -> Self {
        let window_only = std::env::var(FILE_DIALOG_ENV).is_ok_and(|v| v == "window");
        FileDialog {
            native: !window_only,
            pending: None,
            browser: None,
        }
    }
}

impl FileDialog {
    /// Always the in-window browser (tests, embedded uses).
    pub fn in_window() -> Self {
        FileDialog {
            native: false,
            pending: None,
            browser: None,
        }
    }

    pub fn is_open(&self) -> bool {
        self.pending.is_some() || self.browser.is_some()
    }

    /// Cancels the in-window browser, if it is open (Escape); its answer comes from the next
    /// [`FileDialog::update`].
    pub fn cancel_browser(&mut self) -> bool {
        match &mut self.browser {
            Some((_, browser)) => {
                browser.cancel();
                true
            }
            None => false,
        }
    }

    /// Asks for a file for `purpose`, starting in `start` (does nothing if a dialog is open).
    pub fn ask(&mut self, ctx: &egui::Context, purpose: Purpose, start: PathBuf) {
        if self.is_open() {
            return;
        }
        if self.native {
            self.spawn_native(ctx, purpose, start);
        } else {
            self.open_browser(purpose, start);
        }
    }

    fn open_browser(&mut self, purpose: Purpose, start: PathBuf) {
        let extensions = purpose
            .filters()
            .into_iter()
            .flat_map(|(_, e)| e)
            .map(str::to_string)
            .collect();
        let save_name = match &purpose {
            Purpose::Save(s) => Some(s.file_name.clone()),
            Purpose::Open(_) => None,
        };
        let request = BrowserRequest {
            title: purpose.title(),
            extensions,
            save_name,
            start,
        };
        self.browser = Some((purpose, FileBrowser::new(request)));
    }

    fn spawn_native(&mut self, ctx: &egui::Context, purpose: Purpose, start: PathBuf) {
        let (tx, rx) = mpsc::channel();
        let ctx = ctx.clone();
        let title = purpose.title();
        let filters = purpose.filters();
        let save_name = match &purpose {
            Purpose::Save(s) => Some(s.file_name.clone()),
            Purpose::Open(_) => None,
        };
        let folder = start.clone();
        let spawned = std::thread::Builder::new()
            .name("beliefscope-file-dialog".into())
            .spawn(move || {
                let started = Instant::now();
                let mut dialog = rfd::FileDialog::new().set_title(title);
                if start.is_dir() {
                    dialog = dialog.set_directory(&start);
                }
                for (name, extensions) in &filters {
                    dialog = dialog.add_filter(*name, extensions);
                }
                let picked = match save_name {
                    Some(name) => dialog.set_file_name(name).save_file(),
                    None => dialog.add_filter("All files", &["*"]).pick_file(),
                };
                let outcome = match picked {
                    Some(path) => Picked::Path(path),
                    None if started.elapsed() < TOO_FAST_FOR_A_PERSON => {
                        Picked::Failed(String::new())
                    }
                    None => Picked::Cancelled,
                };
                let _ = tx.send(outcome);
                ctx.request_repaint();
            });
        match spawned {
            Ok(_) => self.pending = Some((purpose, folder, rx)),
            // No thread for the system dialog: the in-window one needs none.
            Err(_) => self.open_browser(purpose, folder),
        }
    }

    /// The dialog's answer once it has closed; draws the in-window browser while it is open.
    /// A system dialog that could not be shown is replaced by the in-window browser (for the
    /// rest of the session).
    pub fn update(&mut self, ctx: &egui::Context) -> Option<(Purpose, Picked)> {
        if let Some((_, _, rx)) = &self.pending {
            let outcome = match rx.try_recv() {
                Ok(p) => Some(p),
                Err(TryRecvError::Empty) => None,
                Err(TryRecvError::Disconnected) => Some(Picked::Failed(String::new())),
            };
            if let Some(outcome) = outcome {
                let (purpose, start, _) = self.pending.take()?;
                if let Picked::Failed(_) = outcome {
                    self.native = false;
                    self.open_browser(purpose, start);
                } else {
                    return Some((purpose, outcome));
                }
            }
        }
        let (_, browser) = self.browser.as_mut()?;
        let outcome = browser.show(ctx)?;
        let (purpose, _) = self.browser.take()?;
        Some(match outcome {
            BrowserOutcome::Picked(path) => (purpose, Picked::Path(path)),
            BrowserOutcome::Cancelled => (purpose, Picked::Cancelled),
        })
    }
}
