//! Replacing a file so that a reader — or a resume after a kill — sees its old content or its
//! new content, never a mix: write a sibling temporary file, fsync it, rename it over the file.
//! Run records, reports and the landing journal in the git directory are all written this way.

use std::io::{self, Write};
use std::path::Path;

use serde::Serialize;

/// Writes `value` as pretty JSON to `path` atomically.
pub fn write_json_atomic<T: Serialize>(path: &Path, value: &T) -> io::Result<()> {
    let text = serde_json::to_vec_pretty(value).map_err(io::Error::other)?;
    write_atomic(path, &text)
}

/// Replaces `path` with `bytes` so that readers see the old or the new content, never a mix.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
