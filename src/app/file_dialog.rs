//! The native file dialogs (open an image, open a dataset or tree, save a tree), each run on its
//! own thread so the window never blocks. A dialog only picks a path; loading is a
//! `Command::Load` on the worker, like a dropped file.

use std::path::PathBuf;
use std::sync::mpsc::{self, Receiver, TryRecvError};
use std::time::{Duration, Instant};

use eframe::egui;

/// A dialog that comes back with nothing faster than this was never shown (no desktop portal
/// and no zenity): rfd reports that as a plain "nothing picked".
const TOO_FAST_FOR_A_PERSON: Duration = Duration::from_millis(250);

/// The image formats offered by the filter (everything the `image` crate is built to read here).
pub const IMAGE_EXTENSIONS: [&str; 12] = [
    "png", "jpg", "jpeg", "bmp", "gif", "tif", "tiff", "pgm", "ppm", "pnm", "pbm", "webp",
];

/// What came back from a dialog.
#[derive(Debug, Clone, PartialEq)]
pub enum Picked {
    Path(PathBuf),
    Cancelled,
    /// The dialog could not be shown; the message says why and what to do instead.
    Failed(String),
}

/// What a dialog is for.
#[derive(Debug, Clone, PartialEq)]
pub enum Purpose {
    /// Open an image (denoise).
    OpenImage,
    /// Open a CSV dataset or an edge-list file (tree).
    OpenData,
    /// Save this edge-list text (tree).
    SaveTree(String),
}

/// At most one open dialog at a time.
#[derive(Default)]
pub struct FileDialog {
    pending: Option<(Purpose, Receiver<Picked>)>,
}

impl FileDialog {
    pub fn is_open(&self) -> bool {
        self.pending.is_some()
    }

    /// Shows the "Open image" dialog on a new thread (does nothing if one is already open).
    /// The window is asked to repaint when it closes.
    pub fn open_image(&mut self, ctx: &egui::Context) {
        self.show(ctx, Purpose::OpenImage);
    }

    /// Shows the "Open data or tree" dialog (CSV datasets, edge-list files).
    pub fn open_data(&mut self, ctx: &egui::Context) {
        self.show(ctx, Purpose::OpenData);
    }

    /// Shows a "Save tree" dialog; the caller writes `text` to the path picked.
    pub fn save_tree(&mut self, ctx: &egui::Context, text: String) {
        self.show(ctx, Purpose::SaveTree(text));
    }

    fn show(&mut self, ctx: &egui::Context, purpose: Purpose) {
        if self.pending.is_some() {
            return;
        }
        let (tx, rx) = mpsc::channel();
        let ctx = ctx.clone();
        let kind = purpose.clone();
        let spawned = std::thread::Builder::new()
            .name("beliefscope-file-dialog".into())
            .spawn(move || {
                let start = Instant::now();
                let picked = match kind {
                    Purpose::OpenImage => rfd::FileDialog::new()
                        .set_title("Open image")
                        .add_filter("Images", &IMAGE_EXTENSIONS)
                        .add_filter("Middlebury flow", &["flo"])
                        .add_filter("All files", &["*"])
                        .pick_file(),
                    Purpose::OpenData => rfd::FileDialog::new()
                        .set_title("Open a dataset (CSV) or a tree (edge list)")
                        .add_filter("CSV datasets and edge lists", &["csv", "edges", "txt"])
                        .add_filter("All files", &["*"])
                        .pick_file(),
                    Purpose::SaveTree(_) => rfd::FileDialog::new()
                        .set_title("Save the tree as an edge list")
                        .set_file_name("tree.edges")
                        .add_filter("Edge lists", &["edges"])
                        .save_file(),
                };
                let outcome = match picked {
                    Some(path) => Picked::Path(path),
                    None if start.elapsed() < TOO_FAST_FOR_A_PERSON => Picked::Failed(
                        "no file dialog is available (it needs xdg-desktop-portal or zenity); \
                         drop the file on the window instead"
                            .into(),
                    ),
                    None => Picked::Cancelled,
                };
                let _ = tx.send(outcome);
                ctx.request_repaint();
            });
        match spawned {
            Ok(_) => self.pending = Some((purpose, rx)),
            Err(e) => {
                let (tx, rx) = mpsc::channel();
                let _ = tx.send(Picked::Failed(format!("cannot open the file dialog: {e}")));
                self.pending = Some((purpose, rx));
            }
        }
    }

    /// The dialog's answer once it has closed.
    pub fn poll(&mut self) -> Option<(Purpose, Picked)> {
        let (_, rx) = self.pending.as_ref()?;
        let outcome = match rx.try_recv() {
            Ok(p) => p,
            Err(TryRecvError::Empty) => return None,
            Err(TryRecvError::Disconnected) => {
                Picked::Failed("the file dialog closed unexpectedly".into())
            }
        };
        let (purpose, _) = self.pending.take()?;
        Some((purpose, outcome))
    }
}
