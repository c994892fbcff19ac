//! Snapshots of a worktree: checkpoint commits after player steps, and the tree id the worktree
//! would have right now (used to audit read-only steps and to detect stalls) without committing
//! or touching the real index.
//!
//! Both stage exactly what `git add -A` would: new, modified and deleted files, honouring
//! `.gitignore`. They share [`stage_all`] so a checkpoint's tree and a later state tree of the
//! same files are always equal.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use git2::{Index, Oid, Repository, Status};
use serde::{Deserialize, Serialize};

use super::diff::changed_paths;
use super::error::{Context, GitError};
use super::repo::{find_commit, head_of, open_checkout, signature, status_options};

/// The result of checkpointing a worktree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The new commit (hex), or HEAD's when nothing changed.
    pub commit: String,
    /// The commit's tree (hex).
    pub tree: String,
    /// Whether a new commit was made.
    pub changed: bool,
}

/// Stages everything in `worktree` and commits it on the worktree's branch with `message`;
/// makes no commit when the staged tree equals HEAD's.
pub fn checkpoint(worktree: &Path, message: &str) -> Result<Checkpoint, GitError> {
    let repo = open_checkout(worktree)?;
    let head = head_of(&repo, worktree)?;
    let mut index = repo.index().context("open the index", worktree)?;
    let tree_id = stage_all(&repo, &mut index, worktree)?;
    index.write().context("write the index", worktree)?;
    crate::failpoint::hit("checkpoint.index");
    let checkpoint = commit_staged(&repo, &head, tree_id, message, worktree)?;
    if checkpoint.changed {
        crate::failpoint::hit("checkpoint.commit");
        tracing::debug!(commit = %checkpoint.commit, worktree = %worktree.display(), "checkpoint");
    }
    Ok(checkpoint)
}

/// Commits the staged tree `tree_id` on HEAD with `message`, or makes no commit when it equals
/// HEAD's tree.
fn commit_staged(
    repo: &Repository,
    head: &git2::Commit,
    tree_id: Oid,
    message: &str,
    worktree: &Path,
) -> Result<Checkpoint, GitError> {
    if tree_id == head.tree_id() {
        return Ok(Checkpoint {
            commit: head.id().to_string(),
            tree: tree_id.to_string(),
            changed: false,
        });
    }
    let tree = repo
        .find_tree(tree_id)
        .context("read the staged tree", worktree)?;
    let author = signature(repo, worktree)?;
    let commit = repo
        .commit(Some("HEAD"), &author, &author, message, &tree, &[head])
        .context("commit the checkpoint", worktree)?;
    Ok(Checkpoint {
        commit: commit.to_string(),
        tree: tree_id.to_string(),
        changed: true,
    })
}

/// Commits the removal of `paths` (files or directories, relative) from the index of
/// `worktree` on its branch with `message`: how a checkpoint that cannot land (a submodule
/// entry, a missing object) is put back. The files on disk are left alone.
pub fn drop_from_checkpoint(
    worktree: &Path,
    paths: &[String],
    message: &str,
) -> Result<Checkpoint, GitError> {
    let repo = open_checkout(worktree)?;
    let head = head_of(&repo, worktree)?;
    let mut index = repo.index().context("open the index", worktree)?;
    for path in paths {
        let path = Path::new(path);
        index
            .remove_path(path)
            .or_else(|_| index.remove_dir(path, 0))
            .context(format_args!("unstage {}", path.display()), worktree)?;
    }
    let tree_id = index
        .write_tree()
        .context("write the staged tree", worktree)?;
    index.write().context("write the index", worktree)?;
    commit_staged(&repo, &head, tree_id, message, worktree)
}

/// The tree id (hex) `worktree` would have if everything in it were staged now, including
/// untracked files that are not ignored. The worktree's index on disk is left untouched.
pub fn worktree_state_tree(worktree: &Path) -> Result<String, GitError> {
    let repo = open_checkout(worktree)?;
    Ok(state_tree(&repo, worktree)?.to_string())
}

/// The commit (hex) HEAD points to in `worktree`.
pub fn head_commit(worktree: &Path) -> Result<String, GitError> {
    let repo = open_checkout(worktree)?;
    let head = head_of(&repo, worktree)?.id();
    Ok(head.to_string())
}

/// The paths (relative, `/`-separated, sorted) whose content in `worktree` now differs from
/// `commit`, counting uncommitted and untracked (not ignored) files.
pub fn changed_files_since(worktree: &Path, commit: &str) -> Result<Vec<String>, GitError> {
    let repo = open_checkout(worktree)?;
    let since = find_commit(&repo, commit, worktree)?;
    let now = state_tree(&repo, worktree)?;
    changed_paths(&repo, since.tree_id(), now, worktree)
}

/// The state tree of `repo`'s worktree, computed on the in-memory index only.
pub(crate) fn state_tree(repo: &Repository, worktree: &Path) -> Result<Oid, GitError> {
    let mut index = repo.index().context("open the index", worktree)?;
    let tree = stage_all(repo, &mut index, worktree);
    // The repository caches its index object; reload it from disk so nothing staged here
    // leaks into a later operation on the same repository handle.
    index.read(true).context("reload the index", worktree)?;
    tree
}

/// `git add -A` on `index` (in memory), returning the resulting tree id. Writes blobs and
/// trees to the object database, not the index file.
///
/// Only the paths `git status` reports are staged: the status walk answers unchanged files
/// from the index's stat cache, so a large repository with a small change costs a scan of
/// file metadata, not a re-hash of every file.
fn stage_all(repo: &Repository, index: &mut Index, worktree: &Path) -> Result<Oid, GitError> {
    let statuses = repo
        .statuses(Some(&mut status_options()))
        .context("read the worktree status", worktree)?;
    let changed_in_worktree = Status::WT_NEW
        | Status::WT_MODIFIED
        | Status::WT_TYPECHANGE
        | Status::WT_RENAMED
        | Status::WT_DELETED;
    for entry in statuses.iter() {
        let status = entry.status();
        if !status.intersects(changed_in_worktree) {
            continue;
        }
        let path = Path::new(OsStr::from_bytes(entry.path_bytes()));
        if status.contains(Status::WT_DELETED) {
            index
                .remove_path(path)
                .context(format_args!("unstage deleted {}", path.display()), worktree)?;
        } else {
            index
                .add_path(path)
                .context(format_args!("stage {}", path.display()), worktree)?;
        }
    }
    index
        .write_tree()
        .context("write the staged tree", worktree)
}
