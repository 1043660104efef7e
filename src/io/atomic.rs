//! Atomic file writes: a temporary file in the same folder, then a rename, so that an
//! interrupted run never leaves half a file where a complete one was expected. O(bytes).

use std::path::Path;

use crate::error::{Error, Result};

/// Writes `contents` to `path` through a temporary file in the same folder and a rename.
pub fn write_atomic(path: &Path, contents: &[u8]) -> Result<()> {
    let tmp = path.with_extension("tmp~");
    std::fs::write(&tmp, contents)
        .map_err(|e| Error::Io(format!("cannot write {}: {e}", tmp.display())))?;
    std::fs::rename(&tmp, path)
        .map_err(|e| Error::Io(format!("cannot write {}: {e}", path.display())))
}
