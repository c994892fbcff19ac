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
    write_json_unsynced_with(&mut Spares::none(), path, value)
}

/// [`write_json_unsynced`] through a temporary file from `spares`.
pub fn write_json_unsynced_with<T: Serialize>(
    spares: &mut Spares,
    path: &Path,
    value: &T,
) -> io::Result<File> {
    let text = serde_json::to_vec_pretty(value).map_err(io::Error::other)?;
    let mut temp = spares.temp_for(path)?;
    temp.write_all(&text)?;
    temp.persist(path).map_err(|e| e.error)
}

/// [`write_atomic`], after making every file of `unsynced` durable as well: their syncs run
/// beside this file's own, and all of them end before it replaces `path`.
pub fn write_atomic_after(path: &Path, bytes: &[u8], unsynced: Vec<File>) -> io::Result<()> {
    write_atomic_after_with(&mut Spares::none(), path, bytes, unsynced)
}

/// [`write_atomic_after`] through a temporary file from `spares`.
pub fn write_atomic_after_with(
    spares: &mut Spares,
    path: &Path,
    bytes: &[u8],
    unsynced: Vec<File>,
) -> io::Result<()> {
    let mut temp = spares.temp_for(path)?;
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

/// Temporary files for one directory, each made on a helper thread ahead of the write that
/// uses it. Making a file is the dearest part of an atomic write on some file systems (ext4
/// without a journal scans past every recently freed inode of the directory's group for each
/// new one), and a run's directory gets one for every state save and turn record, all on the
/// runner's critical path; made ahead, that cost overlaps the step that follows instead.
///
/// A spare is an ordinary `.tmpXXXXXX` file: removed when the spares are dropped unused, and by
/// a resume when a kill leaves it behind, like a temporary file a kill leaves between writing
/// and renaming. The owner stops making them ahead ([`Spares::make_ahead`]) before the write
/// after which nothing may be left to resume, so a kill right after it leaves no spare for a
/// resume that never comes. A spare that could not be made ahead is made at the write, which
/// then reports the error as it always did.
pub struct Spares {
    dir: Option<std::path::PathBuf>,
    ahead: bool,
    next: Option<std::thread::JoinHandle<io::Result<tempfile::NamedTempFile>>>,
}

/// A helper only creates one file: a small stack is plenty.
const SPARE_STACK: usize = 64 * 1024;

impl Spares {
    /// Spares for files written in `dir`; the first is made by the first write.
    pub fn in_dir(dir: &Path) -> Spares {
        Spares {
            dir: Some(dir.to_path_buf()),
            ahead: true,
            next: None,
        }
    }

    /// No spares: every write makes its temporary file itself.
    pub fn none() -> Spares {
        Spares {
            dir: None,
            ahead: false,
            next: None,
        }
    }

    /// Whether each write starts making the next spare (a spare already made is still used).
    pub fn make_ahead(&mut self, ahead: bool) {
        self.ahead = ahead;
    }

    /// A temporary file beside `path`: the spare made ahead when `path` is in the spares'
    /// directory (and the next one started), else a new one.
    fn temp_for(&mut self, path: &Path) -> io::Result<tempfile::NamedTempFile> {
        let parent = match path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        let Some(dir) = self.dir.as_deref().filter(|dir| *dir == parent) else {
            return tempfile::NamedTempFile::new_in(parent);
        };
        let ahead = self
            .next
            .take()
            .and_then(|made| made.join().ok())
            .and_then(Result::ok);
        let temp = match ahead {
            Some(temp) => temp,
            None => tempfile::NamedTempFile::new_in(dir)?,
        };
        if !self.ahead {
            return Ok(temp);
        }
        let dir = dir.to_path_buf();
        self.next = std::thread::Builder::new()
            .name("spare-file".into())
            .stack_size(SPARE_STACK)
            .spawn(move || tempfile::NamedTempFile::new_in(dir))
            .ok();
        Ok(temp)
    }
}

impl Drop for Spares {
    fn drop(&mut self) {
        // The unused spare is removed by its own drop, once made.
        if let Some(made) = self.next.take() {
            let _ = made.join();
        }
    }
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
    fn writes_through_spares_replace_their_files_and_leave_no_spare_behind() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state.json");
        let record = dir.path().join("player_turn_1.json");
        let elsewhere = dir.path().join("logs");
        std::fs::create_dir(&elsewhere).unwrap();
        {
            let mut spares = Spares::in_dir(dir.path());
            for n in 0..5 {
                write_atomic_after_with(&mut spares, &state, format!("{n}").as_bytes(), vec![])
                    .unwrap();
            }
            let unsynced =
                write_json_unsynced_with(&mut spares, &record, &serde_json::json!({"turn": 1}))
                    .unwrap();
            // A file outside the spares' directory gets a temporary file of its own there.
            write_atomic_after_with(&mut spares, &elsewhere.join("x"), b"x", vec![unsynced])
                .unwrap();
            assert_eq!(std::fs::read(&state).unwrap(), b"4");
            // One spare is ready (or being made) for the next write; a last write made once
            // no more are made ahead uses it and leaves none, even if the spares are never
            // dropped (a kill).
            spares.make_ahead(false);
            write_atomic_after_with(&mut spares, &state, b"last", vec![]).unwrap();
            let temps = std::fs::read_dir(dir.path())
                .unwrap()
                .filter(|e| {
                    e.as_ref()
                        .unwrap()
                        .file_name()
                        .to_string_lossy()
                        .starts_with(".tmp")
                })
                .count();
            assert_eq!(temps, 0);
        }
        let mut left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, ["logs", "player_turn_1.json", "state.json"]);
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 1);
    }

    #[test]
    fn a_write_into_a_missing_directory_fails_and_syncs_nothing_in_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("absent/state.json");
        assert!(write_json_unsynced(&missing, &serde_json::json!({})).is_err());
        assert!(write_atomic_after(&missing, b"x", Vec::new()).is_err());
        let mut spares = Spares::in_dir(&dir.path().join("absent"));
        assert!(write_atomic_after_with(&mut spares, &missing, b"x", Vec::new()).is_err());
        assert!(!missing.exists());
    }
}
