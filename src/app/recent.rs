//! Recently opened files, per kind (File > Open Recent). Remembered with the window's state;
//! the newest first, at most [`MAX_RECENT`] per kind, files that have gone are still listed
//! (opening one then says why it failed) until pushed out.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::file_dialog::IMAGE_EXTENSIONS;

/// How many files each kind remembers.
pub const MAX_RECENT: usize = 8;

/// What a recent file is, from its extension.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, strum::VariantArray,
)]
pub enum RecentKind {
    Images,
    Datasets,
    FlowFields,
    Models,
    Sessions,
}

impl RecentKind {
    /// The submenu's name.
    pub fn label(self) -> &'static str {
        match self {
            RecentKind::Images => "Images",
            RecentKind::Datasets => "Datasets",
            RecentKind::FlowFields => "Flow fields (.flo)",
            RecentKind::Models => "Models (trees)",
            RecentKind::Sessions => "Sessions",
        }
    }

    /// The kind of `path`, by extension; `None` for files no scenario opens.
    pub fn of(path: &Path) -> Option<RecentKind> {
        let ext = path.extension()?.to_string_lossy().to_lowercase();
        match ext.as_str() {
            "csv" | "tsv" | "data" => Some(RecentKind::Datasets),
            "flo" => Some(RecentKind::FlowFields),
            "edges" | "txt" => Some(RecentKind::Models),
            "json" => Some(RecentKind::Sessions),
            e if IMAGE_EXTENSIONS.contains(&e) => Some(RecentKind::Images),
            _ => None,
        }
    }
}

/// The lists, newest first.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RecentFiles {
    lists: BTreeMap<RecentKind, Vec<PathBuf>>,
}

impl RecentFiles {
    /// Puts `path` (made absolute) first in its kind's list.
    pub fn add(&mut self, path: &Path) {
        let Some(kind) = RecentKind::of(path) else {
            return;
        };
        let path = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let list = self.lists.entry(kind).or_default();
        list.retain(|p| *p != path);
        list.insert(0, path);
        list.truncate(MAX_RECENT);
    }

    pub fn list(&self, kind: RecentKind) -> &[PathBuf] {
        self.lists.get(&kind).map_or(&[], Vec::as_slice)
    }

    pub fn is_empty(&self) -> bool {
        self.lists.values().all(Vec::is_empty)
    }

    /// The folder of the newest file of any of `kinds` (where a dialog starts).
    pub fn folder(&self, kinds: &[RecentKind]) -> Option<PathBuf> {
        kinds
            .iter()
            .find_map(|k| self.list(*k).first())
            .and_then(|p| p.parent())
            .map(Path::to_path_buf)
    }

    pub fn clear(&mut self) {
        self.lists.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_first_without_duplicates_and_bounded() {
        let mut r = RecentFiles::default();
        for i in 0..(MAX_RECENT + 3) {
            r.add(Path::new(&format!("/data/img{i}.png")));
        }
        r.add(Path::new("/data/img5.png"));
        let images = r.list(RecentKind::Images);
        assert_eq!(images.len(), MAX_RECENT);
        assert_eq!(images[0], Path::new("/data/img5.png"));
        assert_eq!(images.iter().filter(|p| p.ends_with("img5.png")).count(), 1);
        r.add(Path::new("/data/x.csv"));
        r.add(Path::new("/data/x.unknown"));
        assert_eq!(r.list(RecentKind::Datasets).len(), 1);
        assert_eq!(
            r.folder(&[RecentKind::Datasets]),
            Some(PathBuf::from("/data"))
        );
    }

    #[test]
    fn kinds_by_extension() {
        assert_eq!(RecentKind::of(Path::new("a.PNG")), Some(RecentKind::Images));
        assert_eq!(
            RecentKind::of(Path::new("a.flo")),
            Some(RecentKind::FlowFields)
        );
        assert_eq!(
            RecentKind::of(Path::new("a.edges")),
            Some(RecentKind::Models)
        );
        assert_eq!(RecentKind::of(Path::new("noext")), None);
    }
}
