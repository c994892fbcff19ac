//! The audit after a read-only step: anything the step changed in the worktree is reported and
//! reverted, so read-only is enforced by the runner and not only by an agent's tool list.

use std::path::Path;

use git2::build::CheckoutBuilder;
use git2::{Commit, ObjectType, Oid, Repository, ResetType, TreeWalkMode, TreeWalkResult};

use super::diff::changed_paths;
use super::error::{Context, GitError};
use super::repo::{find_commit, open_checkout, status_options};
use super::snapshot::state_tree;
use super::{files, links};

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
    // libgit2's checkout follows a link that an agent put where a directory was, and would
    // write the commit's files wherever it points: the links go first.
    remove_links_in_the_way(&repo, &target, worktree)?;
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
    for path in paths {
        // A link where a directory should be is what gets restored: it goes, and the path is
        // written in a real directory in its place.
        if let Some(link) = links::linked_component(worktree, path) {
            links::remove_link(worktree, &link)?;
        }
        let wanted = files::entry(&tree, path);
        if files::on_disk(worktree, path)? != wanted.map(|e| e.0) || wanted.is_none() {
            files::write_entry(&repo, worktree, path, wanted)?;
        }
    }
    tracing::debug!(?paths, worktree = %worktree.display(), "restored paths");
    Ok(())
}

/// Removes the links standing where `target` or the index has a directory, so neither the
/// reset nor the removal of untracked files reaches through one.
fn remove_links_in_the_way(
    repo: &Repository,
    target: &Commit<'_>,
    worktree: &Path,
) -> Result<(), GitError> {
    let tree = target
        .tree()
        .context("read the checkpoint's tree", worktree)?;
    let mut paths: Vec<String> = Vec::new();
    tree.walk(TreeWalkMode::PreOrder, |dir, entry| {
        if entry.kind() != Some(ObjectType::Tree) {
            paths.push(format!(
                "{dir}{}",
                String::from_utf8_lossy(entry.name_bytes())
            ));
        }
        TreeWalkResult::Ok
    })
    .context("list the checkpoint's files", worktree)?;
    let index = repo.index().context("open the index", worktree)?;
    paths.extend(
        index
            .iter()
            .map(|entry| String::from_utf8_lossy(&entry.path).into_owned()),
    );
    let dirs = links::parent_dirs(paths.iter().map(String::as_str));
    links::remove_links_in_the_way(worktree, dirs)?;
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
