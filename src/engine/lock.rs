//! One run of a task at a time: an advisory `flock` on `runs/<ID>.lock`.
//!
//! The operating system drops the lock when the holder dies, even by SIGKILL, so a crashed
//! run never leaves a stale lock behind and `autobuild resume` can always take over.

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
        let path = runs_dir.join(format!("{task}.lock"));
        let io_err = |source| LockError::Io {
            path: path.clone(),
            source,
        };
        fs::create_dir_all(runs_dir).map_err(io_err)?;
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io_err)?;
        // SAFETY: flock on a file descriptor we own; no memory is shared.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            let err = io::Error::last_os_error();
            if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
                let holder = fs::read_to_string(&path)
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
        file.set_len(0).map_err(io_err)?;
        write!(file, "{}", std::process::id()).map_err(io_err)?;
        Ok(RunLock { _file: file, path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Who holds the lock of `task`, without creating anything: for preflight checks.
pub fn holder(runs_dir: &Path, task: &str) -> Option<String> {
    let path = runs_dir.join(format!("{task}.lock"));
    let file = File::open(&path).ok()?;
    // SAFETY: flock on a file descriptor we own; no memory is shared.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) };
    if rc == 0 {
        return None;
    }
    let pid = fs::read_to_string(&path).unwrap_or_default();
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
}
