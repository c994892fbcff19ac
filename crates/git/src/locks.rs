//! Lock files a killed autobuild left behind, and the lock that keeps autobuild processes from
//! racing on the repository's shared administration files.
//!
//! git writes a ref or an index by creating `<file>.lock`, writing it, and renaming it over the
//! file; a process killed in between leaves the lock, and every later writer (autobuild or the
//! user's own git) refuses to touch the file. A lock is removed here only when it is provably
//! stale: no living process has it open, and either only autobuild ever writes the file (the
//! task branch, the task worktree's index, autobuild's backup refs) or a journaled landing was
//! writing it (the base branch's ref holding the landing's commit, the main checkout's index
//! written after the landing began). Every removal is logged.

use std::fs::{self, File, OpenOptions};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use super::error::{Context, GitError};

/// Removes the lock files of refs and indexes that only autobuild writes for `branch` and the
/// worktree registered at `worktree_admin` (`.git/worktrees/<name>`, when known). Returns the
/// removed files.
pub fn remove_task_locks(
    common_dir: &Path,
    branch: &str,
    worktree_admin: Option<&Path>,
) -> Result<Vec<PathBuf>, GitError> {
    // Never beneath a link: a `refs/heads/autobuild` an agent made a link would point the
    // removal elsewhere.
    let branch_lock = format!("refs/heads/{branch}.lock");
    let mut candidates = Vec::new();
    if super::links::linked_component(common_dir, &branch_lock).is_none() {
        candidates.push(common_dir.join(branch_lock));
    }
    if let Some(admin) = worktree_admin {
        candidates.push(admin.join("index.lock"));
        candidates.push(admin.join("HEAD.lock"));
    }
    let mut removed = Vec::new();
    for lock in candidates {
        if lock.exists() && !is_held_open(&lock) {
            fs::remove_file(&lock).context("remove stale lock", &lock)?;
            tracing::warn!(lock = %lock.display(), "removed a lock file a killed run left");
            removed.push(lock);
        }
    }
    Ok(removed)
}

/// Removes `refname`'s lock when it is the one a landing to `commit` left: nobody holds it and
/// it is empty or already holds the commit.
pub(crate) fn remove_stale_ref_lock(
    git_dir: &Path,
    refname: &str,
    commit: &str,
) -> Result<(), GitError> {
    let lock = git_dir.join(format!("{refname}.lock"));
    let Ok(content) = fs::read_to_string(&lock) else {
        return Ok(());
    };
    let content = content.trim();
    if (content.is_empty() || content == commit) && !is_held_open(&lock) {
        fs::remove_file(&lock).context("remove stale lock", &lock)?;
        tracing::warn!(lock = %lock.display(), "removed a lock file an interrupted merge left");
    }
    Ok(())
}

/// Removes `lock` when nobody holds it open and it was last written at or after `since_ms`
/// (milliseconds since the Unix epoch), i.e. during the landing that is being redone.
pub(crate) fn remove_stale_lock(lock: &Path, since_ms: u64) -> Result<(), GitError> {
    let Ok(meta) = fs::metadata(lock) else {
        return Ok(());
    };
    let written_ms = meta.modified().map_or(0, super::clock::millis_since_epoch);
    // File times can be coarser than the clock: a second of slack.
    if written_ms + 1000 >= since_ms && !is_held_open(lock) {
        fs::remove_file(lock).context("remove stale lock", lock)?;
        tracing::warn!(lock = %lock.display(), "removed a lock file an interrupted merge left");
    }
    Ok(())
}

/// Whether any process has `path` open, from `/proc/*/fd`. Where `/proc` cannot be read the
/// answer is "yes": a lock is never removed on a guess.
fn is_held_open(path: &Path) -> bool {
    let Ok(target) = fs::canonicalize(path) else {
        return false;
    };
    let Ok(processes) = fs::read_dir("/proc") else {
        return true;
    };
    processes
        .flatten()
        .filter(|entry| entry.file_name().to_str().is_some_and(is_pid))
        .filter_map(|entry| fs::read_dir(entry.path().join("fd")).ok())
        .flat_map(|fds| fds.flatten())
        .any(|fd| fs::read_link(fd.path()).is_ok_and(|open| open == target))
}

fn is_pid(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit())
}

/// An exclusive `flock` on `<common git dir>/autobuild.flock`, held while autobuild changes the
/// repository's shared administration files (adding or removing worktrees): two autobuild
/// processes starting tasks at the same instant take turns instead of racing on
/// `.git/worktrees`. The operating system releases it when the holder dies.
pub struct AdminLock {
    _file: File,
}

impl AdminLock {
    pub fn acquire(common_dir: &Path) -> Result<AdminLock, GitError> {
        let path = common_dir.join("autobuild.flock");
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .context("open", &path)?;
        // SAFETY: flock on a descriptor we own; blocks until the other holder is done.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) };
        if rc != 0 {
            return Err(std::io::Error::last_os_error()).context("lock", &path);
        }
        Ok(AdminLock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_nobody_holds_is_removed_and_a_held_one_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let refs = dir.path().join("refs/heads/autobuild");
        fs::create_dir_all(&refs).unwrap();
        let lock = refs.join("T.lock");
        fs::write(&lock, "").unwrap();
        let held = File::open(&lock).unwrap();
        assert!(remove_task_locks(dir.path(), "autobuild/T", None)
            .unwrap()
            .is_empty());
        drop(held);
        assert_eq!(
            remove_task_locks(dir.path(), "autobuild/T", None).unwrap(),
            vec![lock.clone()]
        );
        assert!(!lock.exists());
    }

    #[test]
    fn a_ref_lock_is_removed_only_when_it_holds_the_landing_commit_or_nothing() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("refs/heads")).unwrap();
        let lock = dir.path().join("refs/heads/main.lock");
        fs::write(&lock, "1111\n").unwrap();
        remove_stale_ref_lock(dir.path(), "refs/heads/main", "2222").unwrap();
        assert!(lock.exists(), "someone else's ref update");
        remove_stale_ref_lock(dir.path(), "refs/heads/main", "1111").unwrap();
        assert!(!lock.exists());
    }

    #[test]
    fn an_index_lock_older_than_the_landing_is_not_ours() {
        let dir = tempfile::tempdir().unwrap();
        let lock = dir.path().join("index.lock");
        fs::write(&lock, "").unwrap();
        let future = crate::now_ms() + 60_000;
        remove_stale_lock(&lock, future).unwrap();
        assert!(lock.exists());
        remove_stale_lock(&lock, crate::now_ms() - 60_000).unwrap();
        assert!(!lock.exists());
    }
}
