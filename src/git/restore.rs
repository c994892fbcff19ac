//! The audit after a read-only step: anything the step changed in the worktree is reported and
//! reverted, so read-only is enforced by the runner and not only by an agent's tool list.

use std::path::Path;

use git2::build::CheckoutBuilder;
use git2::{Commit, ObjectType, Oid, Repository, ResetType, Tree};

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
    let commit = find_commit(&repo, commit, worktree)?;
    restore_paths_in(&repo, worktree, &commit, paths)
}

/// [`restore_paths`] on an open repository.
pub(crate) fn restore_paths_in(
    repo: &Repository,
    worktree: &Path,
    commit: &Commit<'_>,
    paths: &[&str],
) -> Result<(), GitError> {
    let tree = commit
        .tree()
        .context(format_args!("read the tree of {}", commit.id()), worktree)?;
    for path in paths {
        // A link where a directory should be is what gets restored: it goes, and the path is
        // written in a real directory in its place.
        if let Some(link) = links::linked_component(worktree, path) {
            links::remove_link(worktree, link.as_bytes())?;
        }
        let wanted = files::entry(&tree, path);
        if files::on_disk(worktree, path)? != wanted.map(|e| e.0) || wanted.is_none() {
            files::write_entry(repo, worktree, path, wanted)?;
        }
    }
    tracing::debug!(?paths, worktree = %worktree.display(), "restored paths");
    Ok(())
}

/// Removes the links standing where `target` or the index has a directory, so neither the
/// reset nor the removal of untracked files reaches through one. Paths are bytes: a directory
/// name need not be UTF-8.
fn remove_links_in_the_way(
    repo: &Repository,
    target: &Commit<'_>,
    worktree: &Path,
) -> Result<(), GitError> {
    let tree = target
        .tree()
        .context("read the checkpoint's tree", worktree)?;
    let mut dirs: Vec<Vec<u8>> = Vec::new();
    tree_dirs(repo, &tree, &[], &mut dirs, worktree)?;
    let index = repo.index().context("open the index", worktree)?;
    let staged: Vec<Vec<u8>> = index.iter().map(|entry| entry.path).collect();
    let all = dirs
        .iter()
        .map(Vec::as_slice)
        .chain(links::parent_dirs(staged.iter().map(Vec::as_slice)));
    links::remove_links_in_the_way(worktree, all)?;
    Ok(())
}

/// Every directory of `tree`, recursively, as `prefix`-relative paths.
fn tree_dirs(
    repo: &Repository,
    tree: &Tree<'_>,
    prefix: &[u8],
    dirs: &mut Vec<Vec<u8>>,
    worktree: &Path,
) -> Result<(), GitError> {
    for entry in tree.iter() {
        if entry.kind() != Some(ObjectType::Tree) {
            continue;
        }
        let mut path = prefix.to_vec();
        if !path.is_empty() {
            path.push(b'/');
        }
        path.extend_from_slice(entry.name_bytes());
        let subtree = repo
            .find_tree(entry.id())
            .context("read the checkpoint's tree", worktree)?;
        tree_dirs(repo, &subtree, &path, dirs, worktree)?;
        dirs.push(path);
    }
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
