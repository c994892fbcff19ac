//! Paths a worktree links to the main checkout (`[worktree] link`, e.g. a git-ignored `.venv`).
//!
//! A link is not the task's work: it must never count as a change, trip the audit after a
//! read-only step (which would delete it as an untracked file), or be committed. The project's
//! `.gitignore` cannot be relied on for that: `node_modules/` ignores a directory, and a symlink
//! is not one. Writing the paths into git's shared `info/exclude` would change the user's
//! repository for every checkout. So the paths are recorded in the worktree's own admin
//! directory (`.git/worktrees/<name>/`), which git removes with the worktree, and every
//! repository handle the runner opens on that worktree (`repo::open_checkout`) adds
//! them as in-memory ignore rules. Snapshots, checkpoints, change detection and the read-only
//! restore all go through such a handle, so all of them see the links as ignored.

use std::fs;
use std::path::Path;

use git2::Repository;

use super::error::{Context, GitError};

/// The file in the worktree's admin directory listing its linked paths, one per line.
const FILE: &str = "autobuild-linked";

/// Records `paths` (relative to the worktree root, `/`-separated) as the worktree's links.
pub fn record_linked(worktree: &Path, paths: &[String]) -> Result<(), GitError> {
    let repo = Repository::open(worktree).map_err(|_| GitError::NotARepository {
        path: worktree.to_path_buf(),
    })?;
    let file = repo.path().join(FILE);
    let rules: String = paths.iter().map(|p| format!("/{p}\n")).collect();
    fs::write(&file, rules).context("record the worktree's linked paths", &file)?;
    // The handle kept since the worktree's checkout was opened before the links existed.
    super::index_cache::with_kept_repo(worktree, ignore_linked);
    Ok(())
}

/// Makes `repo` treat the linked paths recorded for it as ignored (nothing for the main
/// checkout or a worktree without links).
pub(crate) fn ignore_linked(repo: &Repository) {
    let Ok(rules) = super::files::read_admin_file(&repo.path().join(FILE)) else {
        return;
    };
    if let Err(error) = repo.add_ignore_rule(&rules) {
        tracing::warn!(%error, "cannot apply the worktree's linked paths as ignore rules");
    }
}
