//! Deleting landed worktrees beside the next landing.
//!
//! A landed task's worktree is a checkout of the whole repository; deleting it file by file
//! was a third of each landing of a 1,000-task feature (whose repository holds a task file per
//! task). A feature runner moves such a directory into `<worktrees>/.trash/` instead — one
//! rename, after which nothing names it: git's record of it is pruned as before — and a helper
//! thread deletes what the trash holds while the runner lands the next task.
//!
//! The runner empties the trash (waits for the thread) before anything else runs: at the end of
//! each wave's landings, so no agent of a later wave or integration check runs beside a copy of
//! the repository that no worktree record names (a run with hidden paths masks the main
//! checkout, which holds the trash, and every registered worktree; the trash is empty anyway).
//! A run killed before the thread finished leaves directories in the trash; the next feature run
//! deletes them before it starts any task.
//!
//! The trash is used only when it is a real directory (never through a link), and only what the
//! runner moved there, or found there at the start, is deleted; `remove_dir_all` never follows a
//! link inside.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Mutex};
use std::thread;

/// The trash directory's name beside the worktrees.
pub const TRASH_DIR: &str = ".trash";

/// Enough for `remove_dir_all`'s recursion over any checkout's depth.
const WORKER_STACK: usize = 256 * 1024;

/// Where landed worktrees go to be deleted, and the thread deleting them.
pub struct Trash {
    dir: PathBuf,
    worker: Mutex<Option<Worker>>,
    taken: AtomicU64,
}

struct Worker {
    queue: mpsc::Sender<PathBuf>,
    thread: thread::JoinHandle<()>,
}

impl Trash {
    /// The trash of the worktrees under `worktrees`, after deleting what a killed run left in
    /// it.
    pub fn open(worktrees: &Path) -> Trash {
        let dir = worktrees.join(TRASH_DIR);
        if is_real_dir(&dir) {
            if let Ok(entries) = fs::read_dir(&dir) {
                for entry in entries.flatten() {
                    delete(&entry.path());
                }
            }
        }
        Trash {
            dir,
            worker: Mutex::new(None),
            taken: AtomicU64::new(0),
        }
    }

    /// Moves the directory `path` into the trash for the helper thread to delete; `false` when
    /// it could not be moved (another file system, a trash that is not a real directory, no
    /// thread), and the caller deletes it itself.
    pub(crate) fn take(&self, path: &Path) -> bool {
        let Ok(mut worker) = self.worker.lock() else {
            return false;
        };
        if fs::create_dir(&self.dir).is_err() && !is_real_dir(&self.dir) {
            return false;
        }
        let name = path
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let n = self.taken.fetch_add(1, Ordering::Relaxed);
        let target = self.dir.join(format!("{name}.{}.{n}", std::process::id()));
        if fs::rename(path, &target).is_err() {
            return false;
        }
        if worker.is_none() {
            *worker = spawn();
        }
        match worker.as_ref() {
            Some(running) => {
                if let Err(mpsc::SendError(target)) = running.queue.send(target) {
                    delete(&target);
                }
            }
            None => delete(&target),
        }
        true
    }

    /// Waits until everything moved into the trash is deleted.
    pub fn empty(&self) {
        let worker = self.worker.lock().ok().and_then(|mut worker| worker.take());
        if let Some(Worker { queue, thread }) = worker {
            drop(queue);
            if thread.join().is_err() {
                tracing::warn!("the thread deleting landed worktrees panicked");
            }
        }
    }
}

impl Drop for Trash {
    fn drop(&mut self) {
        self.empty();
    }
}

/// The helper thread, or `None` when none can be started (the caller deletes in place).
fn spawn() -> Option<Worker> {
    let (queue, received) = mpsc::channel::<PathBuf>();
    let thread = thread::Builder::new()
        .name("trash".into())
        .stack_size(WORKER_STACK)
        .spawn(move || {
            for path in received {
                delete(&path);
            }
        })
        .ok()?;
    Some(Worker { queue, thread })
}

fn delete(path: &Path) {
    let removed = match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(_) => return,
    };
    match removed {
        // Another feature run of the repository emptying the trash at its start got there
        // first.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "could not delete a landed worktree")
        }
        Ok(()) => {}
    }
}

fn is_real_dir(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|meta| meta.is_dir())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_killed_run_left_is_deleted_and_a_taken_directory_goes_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let worktrees = dir.path().join("worktrees");
        let left = worktrees.join(TRASH_DIR).join("TASK-1.99.0");
        fs::create_dir_all(left.join("src")).unwrap();
        fs::write(left.join("src/a.txt"), "a").unwrap();
        // A link in the trash is removed, never followed.
        let precious = dir.path().join("precious");
        fs::create_dir(&precious).unwrap();
        fs::write(precious.join("keep.txt"), "keep").unwrap();
        std::os::unix::fs::symlink(&precious, worktrees.join(TRASH_DIR).join("link")).unwrap();

        let trash = Trash::open(&worktrees);
        assert_eq!(fs::read_dir(worktrees.join(TRASH_DIR)).unwrap().count(), 0);
        assert_eq!(
            fs::read_to_string(precious.join("keep.txt")).unwrap(),
            "keep"
        );

        let task = worktrees.join("TASK-2");
        fs::create_dir_all(task.join("deep/er")).unwrap();
        fs::write(task.join("deep/er/b.txt"), "b").unwrap();
        assert!(trash.take(&task));
        assert!(!task.exists());
        trash.empty();
        assert_eq!(fs::read_dir(worktrees.join(TRASH_DIR)).unwrap().count(), 0);

        // The thread starts again after an emptying.
        fs::create_dir(&task).unwrap();
        assert!(trash.take(&task));
        drop(trash);
        assert_eq!(fs::read_dir(worktrees.join(TRASH_DIR)).unwrap().count(), 0);
    }

    #[test]
    fn a_trash_that_is_a_link_is_neither_emptied_nor_used() {
        let dir = tempfile::tempdir().unwrap();
        let worktrees = dir.path().join("worktrees");
        fs::create_dir(&worktrees).unwrap();
        let elsewhere = dir.path().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        fs::write(elsewhere.join("keep.txt"), "keep").unwrap();
        std::os::unix::fs::symlink(&elsewhere, worktrees.join(TRASH_DIR)).unwrap();

        let trash = Trash::open(&worktrees);
        let task = worktrees.join("TASK-1");
        fs::create_dir(&task).unwrap();
        assert!(!trash.take(&task));
        assert!(task.exists());
        drop(trash);
        let kept: Vec<_> = fs::read_dir(&elsewhere).unwrap().flatten().collect();
        assert_eq!(kept.len(), 1);
    }
}
