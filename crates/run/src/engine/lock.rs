//! One run of a task at a time: an advisory `flock` on `runs/.locks/<ID>.lock`.
//!
//! The operating system drops the lock when the holder dies, even by SIGKILL, so a crashed
//! run never leaves a stale lock behind and `autobuild resume` can always take over.
//!
//! Earlier versions kept the lock file directly in `runs/`, beside the run directories, where
//! it cluttered every listing. Such a file is still honoured: while a process (an older
//! autobuild still running) holds it, the task counts as locked; once nobody holds it, taking
//! the lock removes it.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

/// Held for the lifetime of the value.
#[derive(Debug)]
pub struct RunLock {
    _file: File,
    path: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("task {task} is already being run by process {holder}")]
    Held { task: String, holder: String },
    #[error("cannot lock {}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
}

impl RunLock {
    /// Takes the lock for `task` or reports who holds it.
    pub fn acquire(runs_dir: &Path, task: &str) -> Result<RunLock, LockError> {
        let path = lock_path(runs_dir, task);
        let io_err = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(io_err)?;
        }
        let mut file = base::user_file::open_regular_with(
            &path,
            OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false),
        )
        .map_err(io_err)?;
        // SAFETY: flock on a file descriptor we own; no memory is shared.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let err = io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
                let holder = base::user_file::read_record_text(&path)
                    .ok()
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| "unknown".into());
                return Err(LockError::Held {
                    task: task.to_string(),
                    holder,
                });
            }
            return Err(io_err(err));
        }
        retire_legacy(runs_dir, task)?;
        file.set_len(0).map_err(io_err)?;
        write!(file, "{}", std::process::id()).map_err(io_err)?;
        Ok(RunLock { _file: file, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Where the lock of `task` lives.
pub fn lock_path(runs_dir: &Path, task: &str) -> PathBuf {
    runs_dir.join(".locks").join(format!("{task}.lock"))
}

/// Where earlier versions kept it.
fn legacy_lock_path(runs_dir: &Path, task: &str) -> PathBuf {
    runs_dir.join(format!("{task}.lock"))
}

/// With the new lock held: refuses while an older process holds the legacy lock file of
/// `task`, and removes that file otherwise (under an exclusive lock of its own, so a process
/// that opened it meanwhile finds it held).
fn retire_legacy(runs_dir: &Path, task: &str) -> Result<(), LockError> {
    let path = legacy_lock_path(runs_dir, task);
    let Ok(file) = base::user_file::open_regular(&path) else {
        return Ok(());
    };
    if let Some(holder) = held_by(&file, &path, libc::LOCK_EX) {
        return Err(LockError::Held {
            task: task.to_string(),
            holder,
        });
    }
    match fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(LockError::Io { path, source }),
    }
}

/// Who holds the lock of `task`, without creating anything: for preflight checks.
pub fn holder(runs_dir: &Path, task: &str) -> Option<String> {
    [lock_path(runs_dir, task), legacy_lock_path(runs_dir, task)]
        .iter()
        .find_map(|path| {
            let file = base::user_file::open_regular(path).ok()?;
            held_by(&file, path, libc::LOCK_SH)
        })
}

/// The process id written in `path` when another process holds a lock on `file` that
/// conflicts with `operation` (`LOCK_SH` or `LOCK_EX`); `None` when it could be taken (it is
/// then held until `file` is closed).
fn held_by(file: &File, path: &Path, operation: libc::c_int) -> Option<String> {
    // SAFETY: flock on a file descriptor we own; no memory is shared.
    let rc = unsafe { libc::flock(file.as_raw_fd(), operation | libc::LOCK_NB) };
    if rc == 0 {
        return None;
    }
    let pid = base::user_file::read_record_text(path).unwrap_or_default();
    Some(if pid.trim().is_empty() {
        "unknown".into()
    } else {
        pid.trim().to_string()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_is_refused_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let first = RunLock::acquire(dir.path(), "TASK-1").unwrap();
        let second = RunLock::acquire(dir.path(), "TASK-1");
        assert!(matches!(second, Err(LockError::Held { .. })));
        assert!(RunLock::acquire(dir.path(), "TASK-2").is_ok());
        assert!(holder(dir.path(), "TASK-1").is_some());
        assert!(holder(dir.path(), "TASK-3").is_none());
        drop(first);
        assert!(holder(dir.path(), "TASK-1").is_none());
        assert!(RunLock::acquire(dir.path(), "TASK-1").is_ok());
    }

    #[test]
    fn the_lock_file_lives_apart_from_the_run_directories() {
        let dir = tempfile::tempdir().unwrap();
        let lock = RunLock::acquire(dir.path(), "TASK-1").unwrap();
        assert_eq!(lock.path(), dir.path().join(".locks/TASK-1.lock"));
        assert!(!dir.path().join("TASK-1.lock").exists());
    }

    #[test]
    fn a_lock_file_in_the_old_place_is_honoured_while_held_and_removed_after() {
        let dir = tempfile::tempdir().unwrap();
        let legacy = dir.path().join("TASK-1.lock");
        let old = File::create(&legacy).unwrap();
        fs::write(&legacy, "4242").unwrap();
        // SAFETY: flock on a file descriptor we own.
        assert_eq!(
            unsafe { libc::flock(old.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
            0
        );
        assert_eq!(holder(dir.path(), "TASK-1").as_deref(), Some("4242"));
        match RunLock::acquire(dir.path(), "TASK-1") {
            Err(LockError::Held { holder, .. }) => assert_eq!(holder, "4242"),
            other => panic!("{other:?}"),
        }
        assert!(legacy.exists());
        drop(old);
        assert!(holder(dir.path(), "TASK-1").is_none());
        let _lock = RunLock::acquire(dir.path(), "TASK-1").unwrap();
        assert!(!legacy.exists());
    }
}
