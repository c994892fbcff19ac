//! Landing a task that worked in a task repository of its own (hidden paths,
//! `git::task_repo`): its approved change is transplanted onto the commit it started from before
//! it is squashed like any task, and the task repository goes with its worktree.

use std::path::Path;

use base::error::Error;
use git::task_repo::{self, TaskBase};
use git::Repo;

/// A task that worked in a task repository (hidden paths), ready to land.
pub(super) struct HiddenTask {
    pub(super) base: TaskBase,
    pub(super) globs: globset::GlobSet,
    /// Its approved change applied onto the commit it started from, in this repository.
    pub(super) transplanted: String,
}

impl HiddenTask {
    /// Transplants `approved` (a commit of the task repository `dir`) onto the real base and
    /// creates `branch` at it when the branch does not exist (one that does is held there by
    /// the caller, which keeps what it pointed at).
    pub(super) fn open(
        repo: &Repo,
        dir: &Path,
        worktree: &Path,
        approved: &str,
        branch: &str,
    ) -> Result<HiddenTask, Error> {
        let base = task_repo::task_base(dir)?;
        let globs = task_repo::hidden_globs(dir)?;
        let transplanted = task_repo::transplanted(repo.root(), worktree, &base, approved, &globs)?;
        if !repo.branch_exists(branch) {
            repo.create_branch_at(branch, &transplanted)?;
        }
        Ok(HiddenTask {
            base,
            globs,
            transplanted,
        })
    }
}

/// Removes the worktree at `worktree` and its task repository `dir`.
pub(super) fn remove_task_repo(worktree: &Path, dir: &Path) -> Result<(), Error> {
    if worktree.exists() {
        std::fs::remove_dir_all(worktree).map_err(|e| Error::io("cannot remove", worktree, e))?;
    }
    // The `base` file goes last: until then the task repository is still found.
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io("cannot read", dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io("cannot read", dir, e))?;
        if entry.file_name() == "base" {
            continue;
        }
        let path = entry.path();
        let removed = if entry.file_type().is_ok_and(|t| t.is_dir()) {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        removed.map_err(|e| Error::io("cannot remove", &path, e))?;
    }
    std::fs::remove_dir_all(dir).map_err(|e| Error::io("cannot remove", dir, e))?;
    Ok(())
}
