//! The audit after a read-only step: anything the step changed in the worktree is reported and
//! reverted, so read-only is enforced by the runner and not only by an agent's tool list.

use std::path::Path;

use git2::build::CheckoutBuilder;
use git2::{Oid, Repository, ResetType};

use super::diff::changed_paths;
use super::error::{Context, GitError};
use super::repo::{find_commit, open_checkout, status_options};
use super::snapshot::state_tree;

/// Returns the worktree to exactly `commit`: tracked files, index and branch tip are reset, and
/// untracked files that are not ignored are removed (ignored files such as build output are
/// kept). Returns the paths (relative, `/`-separated, sorted, unique) whose content differed;
/// empty when the step changed nothing.
pub fn restore(worktree: &Path, commit: &str) -> Result<Vec<String>, GitError> {
    let repo = open_checkout(worktree)?;
    let target = find_commit(&repo, commit, worktree)?;
    if is_pristine(&repo, target.id(), worktree)? {
        return Ok(Vec::new());
    }
    let current = state_tree(&repo, worktree)?;
    let reverted = changed_paths(&repo, target.tree_id(), current, worktree)?;
    repo.reset(target.as_object(), ResetType::Hard, None)
        .context(format_args!("reset the worktree to {commit}"), worktree)?;
    // A hard reset leaves untracked files alone (libgit2 ignores `remove_untracked` there),
    // so a second, forced checkout of the now-reset HEAD removes them.
    let mut checkout = CheckoutBuilder::new();
    checkout.force().remove_untracked(true);
    repo.checkout_head(Some(&mut checkout))
        .context("remove files the step created", worktree)?;
    if !reverted.is_empty() {
        tracing::debug!(?reverted, worktree = %worktree.display(), "restored worktree");
    }
    Ok(reverted)
}

/// Puts `paths` (worktree-relative) back as they are in `commit`: a changed file gets its
/// committed content and mode again, a deleted one is recreated, a new one is removed. Nothing
/// else in the worktree is touched.
pub fn restore_paths(worktree: &Path, commit: &str, paths: &[&str]) -> Result<(), GitError> {
    let repo = open_checkout(worktree)?;
    let tree = find_commit(&repo, commit, worktree)?
        .tree()
        .context(format_args!("read the tree of {commit}"), worktree)?;
    let root = worktree.to_path_buf();
    for path in paths {
        let full = root.join(path);
        let wanted = super::files::entry(&tree, path);
        if super::files::on_disk(&full)? != wanted.map(|e| e.0) || wanted.is_none() {
            super::files::write_entry(&repo, &full, wanted)?;
        }
    }
    tracing::debug!(?paths, worktree = %worktree.display(), "restored paths");
    Ok(())
}

/// HEAD is `commit` and `git status` shows nothing (no staged, unstaged or untracked change):
/// the common case after a well-behaved read-only step, answered from the index's stat cache
/// without staging or checking out anything.
fn is_pristine(repo: &Repository, commit: Oid, worktree: &Path) -> Result<bool, GitError> {
    let head = repo.head().ok().and_then(|h| h.target());
    if head != Some(commit) {
        return Ok(false);
    }
    let statuses = repo
        .statuses(Some(&mut status_options()))
        .context("read the worktree status", worktree)?;
    Ok(statuses.is_empty())
}
