//! Replacing a file so that a reader — or a resume after a kill — sees its old content or its
//! new content, never a mix: write a sibling temporary file, fsync it, rename it over the file.
//! Run records, reports and the landing journal in the git directory are all written this way.

use std::fs::File;
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
    write_atomic_after(path, bytes, Vec::new())
}

/// Writes `value` like [`write_json_atomic`] but returns before its content is durable: the
/// returned file must be handed to [`write_atomic_after`] (or synced) before anything that
/// relies on it is made durable. A kill cannot tear it (the page cache outlives the process);
/// only a power cut before that sync can, and the readers of records take a torn record as
/// absent. The run's records are written so: the state save that says their step is done
/// syncs them beside its own file, one wait on the disk instead of two.
pub fn write_json_unsynced<T: Serialize>(path: &Path, value: &T) -> io::Result<File> {
    let text = serde_json::to_vec_pretty(value).map_err(io::Error::other)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    temp.write_all(&text)?;
    temp.persist(path).map_err(|e| e.error)
}

/// [`write_atomic`], after making every file of `unsynced` durable as well: their syncs run
/// beside this file's own, and all of them end before it replaces `path`.
pub fn write_atomic_after(path: &Path, bytes: &[u8], unsynced: Vec<File>) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    temp.write_all(bytes)?;
    std::thread::scope(|scope| {
        let others: Vec<_> = unsynced
            .iter()
            .map(|file| scope.spawn(move || file.sync_all()))
            .collect();
        let own = temp.as_file().sync_all();
        others.into_iter().fold(own, |result, other| {
            let synced = other
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("a file sync panicked")));
            result.and(synced)
        })
    })?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_written_unsynced_is_whole_and_a_later_write_syncs_it_and_replaces_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let record = dir.path().join("player_turn_1.json");
        let state = dir.path().join("state.json");
        write_atomic(&state, b"old").unwrap();
        let unsynced = write_json_unsynced(&record, &serde_json::json!({"turn": 1})).unwrap();
        let back: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
        assert_eq!(back["turn"], 1);
        write_atomic_after(&state, b"new", vec![unsynced]).unwrap();
        assert_eq!(std::fs::read(&state).unwrap(), b"new");
        // No temporary file is left behind: the directory holds the two files only.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn a_write_into_a_missing_directory_fails_and_syncs_nothing_in_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("absent/state.json");
        assert!(write_json_unsynced(&missing, &serde_json::json!({})).is_err());
        assert!(write_atomic_after(&missing, b"x", Vec::new()).is_err());
        assert!(!missing.exists());
    }
}
