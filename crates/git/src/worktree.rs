//! Linked worktrees: each task runs on its own branch in its own directory, so agents never
//! touch the user's main checkout and several tasks can run side by side.
//!
//! Creation is all-or-nothing: when the worktree cannot be added or its checkout is incomplete,
//! git's record of it, its directory and the branch created for it are removed again (in that
//! order: git refuses to delete a branch a worktree still has checked out), so a failed start
//! leaves the repository as it was. A kill during creation cannot run that undo; the caller
//! journals the creation and calls [`Repo::discard_partial_worktree`] on resume. Existing
//! branches are never reused or replaced here; whether to resume or start fresh is the
//! caller's decision.
//!
//! Adding and removing worktrees changes `.git/worktrees`, which libgit2 does not guard against
//! concurrent writers: those sections hold the repository's [`AdminLock`] so parallel autobuild
//! processes and threads take turns.

use std::fs;
use std::path::{Path, PathBuf};

use git2::{Branch, WorktreePruneOptions};
use serde::{Deserialize, Serialize};

use super::error::{Context, GitError};
use super::locks::AdminLock;
use super::repo::{head_of, normalize, open_checkout, same_path, Repo};
use super::trash::Trash;
use base::failpoint;

mod admin;
mod parts;
pub(crate) use admin::HeadsOnce;

/// A worktree created for a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorktreeInfo {
    pub path: PathBuf,
    /// `autobuild/TASK-1`.
    pub branch: String,
    /// The branch the task branch was created from.
    pub base: String,
    /// The base tip (hex) the task branch started at.
    pub base_commit: String,
}

/// An existing worktree reopened for a resumed run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenedWorktree {
    pub path: PathBuf,
    pub branch: String,
    /// The commit (hex) the worktree's branch points to.
    pub head: String,
}

impl Repo {
    /// Creates `branch` at the tip of `base` and a linked worktree at `path` checked out on it.
    pub fn create_worktree(
        &self,
        branch: &str,
        base: &str,
        path: &Path,
    ) -> Result<WorktreeInfo, GitError> {
        let _serialized = self.admin_lock()?;
        if !Branch::name_is_valid(branch).unwrap_or(false) {
            return Err(GitError::InvalidBranchName {
                name: branch.to_string(),
            });
        }
        if self.branch_exists(branch) {
            return Err(GitError::BranchExists {
                branch: branch.to_string(),
            });
        }
        let base_commit = self.base_tip(base)?;
        let path = std::path::absolute(path).context("resolve the worktree path", path)?;
        let path = normalize(&path);
        if is_occupied(&path) {
            return Err(GitError::WorktreePathExists { path });
        }
        let existed = path.exists();
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).context("create directory", parent)?;
        }
        let name = self.free_worktree_name(&path)?;

        // A worktree whose HEAD names the branch before it exists would have it checked out
        // twice.
        self.ensure_not_checked_out(branch)?;
        let mut task_branch = self
            .repo
            .branch(branch, &base_commit, false)
            .context(format_args!("create branch `{branch}`"), self.root())?;
        failpoint::hit("worktree.branch");
        let added = self
            .add_worktree_record(&name, &path, branch)
            .and_then(|()| verify_checkout(&path, &base_commit.id().to_string()));
        if let Err(error) = added {
            self.undo_failed_add(&mut task_branch, branch, &name, &path, existed);
            return Err(error);
        }
        failpoint::hit("worktree.added");
        tracing::debug!(branch, base, path = %path.display(), "created worktree");
        Ok(WorktreeInfo {
            path,
            branch: branch.to_string(),
            base: base.to_string(),
            base_commit: base_commit.id().to_string(),
        })
    }

    /// Reopens the worktree at `path`, checking that it belongs to this repository and is on
    /// `branch`.
    pub fn open_worktree(&self, path: &Path, branch: &str) -> Result<OpenedWorktree, GitError> {
        let not_a_worktree = || GitError::NotAWorktree {
            path: path.to_path_buf(),
        };
        let worktree = open_checkout(path).map_err(|_| not_a_worktree())?;
        let is_ours = worktree.is_worktree()
            && same_path(worktree.commondir(), self.git_dir())
            && worktree.workdir().is_some_and(|dir| same_path(dir, path));
        if !is_ours {
            return Err(not_a_worktree());
        }
        let actual = worktree
            .head()
            .ok()
            .filter(|head| head.is_branch())
            .and_then(|head| head.shorthand().ok().map(str::to_string));
        if actual.as_deref() != Some(branch) {
            return Err(GitError::WrongBranch {
                path: path.to_path_buf(),
                expected: branch.to_string(),
                actual,
            });
        }
        let head = head_of(&worktree, path)?.id().to_string();
        Ok(OpenedWorktree {
            path: path.to_path_buf(),
            branch: branch.to_string(),
            head,
        })
    }

    /// Checks out the existing `branch` in a new worktree at `path` (a resumed run whose
    /// worktree directory was removed). A stale admin entry for the branch is pruned first.
    pub fn attach_worktree(&self, branch: &str, path: &Path) -> Result<OpenedWorktree, GitError> {
        let _serialized = self.admin_lock()?;
        let reference = self
            .repo
            .find_branch(branch, git2::BranchType::Local)
            .map_err(|_| GitError::BranchNotFound {
                branch: branch.to_string(),
            })?;
        let path = std::path::absolute(path).context("resolve the worktree path", path)?;
        let path = normalize(&path);
        if is_occupied(&path) {
            return Err(GitError::WorktreePathExists { path });
        }
        if let Some((name, registered)) = self.find_worktree_entry(&path, branch)? {
            if !registered.exists() {
                self.prune_worktree(&name)?;
            }
        }
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).context("create directory", parent)?;
        }
        let name = self.free_worktree_name(&path)?;
        let tip = reference
            .get()
            .peel_to_commit()
            .context(format_args!("read the tip of {branch}"), self.root())?
            .id()
            .to_string();
        self.ensure_not_checked_out(branch)?;
        self.add_worktree_record(&name, &path, branch)?;
        verify_checkout(&path, &tip)?;
        failpoint::hit("worktree.added");
        self.open_worktree(&path, branch)
    }

    /// Removes what an interrupted creation of the worktree at `path` left: the directory,
    /// git's record of it, lock files, and — when `created_branch` and the branch still points
    /// at `base_commit`, so no work was ever done on it — the branch. Never used on a worktree
    /// whose creation finished: the caller knows from its journal.
    pub fn discard_partial_worktree(
        &self,
        path: &Path,
        branch: &str,
        created_branch: bool,
        base_commit: &str,
    ) -> Result<(), GitError> {
        let _serialized = self.admin_lock()?;
        let path =
            normalize(&std::path::absolute(path).context("resolve the worktree path", path)?);
        self.remove_unchecked(&path, branch)?;
        let untouched = self
            .resolve_branch(branch)
            .is_ok_and(|tip| tip == base_commit);
        if created_branch && untouched {
            let mut reference = self
                .repo
                .find_branch(branch, git2::BranchType::Local)
                .context(format_args!("look up branch `{branch}`"), self.root())?;
            self.remove_branch(reference.get_mut(), branch)?;
        }
        tracing::warn!(branch, path = %path.display(), "discarded a worktree whose creation was interrupted");
        Ok(())
    }

    /// Git's admin directory (`.git/worktrees/<name>`) of the worktree at `path` or on
    /// `branch`, when one is registered.
    pub fn worktree_admin(&self, path: &Path, branch: &str) -> Result<Option<PathBuf>, GitError> {
        Ok(self
            .find_worktree_entry(path, branch)?
            .map(|(name, _)| self.admin_dir(&name)))
    }

    /// The repository's lock for changes to its shared administration files.
    fn admin_lock(&self) -> Result<AdminLock, GitError> {
        AdminLock::acquire(self.git_dir())
    }

    /// Deletes the worktree directory at `path` and git's record of it. The entry is found by
    /// its path, or by `branch` when the directory was moved or deleted by hand. The branch
    /// itself is kept (see [`Repo::delete_branch`]). Removing a worktree that is already gone is
    /// not an error.
    pub fn remove_worktree(&self, path: &Path, branch: &str) -> Result<(), GitError> {
        self.remove_worktree_into(path, branch, None)
    }

    /// [`Repo::remove_worktree`], moving the directory into `trash` (deleted there by its
    /// thread) when one is given and it can: the directory is gone from `path` at once, and
    /// git's record of it is pruned after, so a kill in between leaves a record without a
    /// directory, which the next removal prunes.
    pub fn remove_worktree_into(
        &self,
        path: &Path,
        branch: &str,
        trash: Option<&Trash>,
    ) -> Result<(), GitError> {
        let _serialized = self.admin_lock()?;
        let entry = self.find_worktree_entry(path, branch)?;
        if path.exists() {
            let registered_here = entry
                .as_ref()
                .is_some_and(|(_, registered)| same_path(registered, path));
            if !registered_here {
                // Never delete a directory git does not know as one of this repository's
                // worktrees: it may hold anything.
                return Err(GitError::NotAWorktree {
                    path: path.to_path_buf(),
                });
            }
            if trash.is_some_and(|trash| trash.take(path)) {
                failpoint::hit("cleanup.trashed");
            } else {
                fs::remove_dir_all(path).context("remove worktree directory", path)?;
            }
        }
        if let Some((name, _)) = entry {
            self.prune_worktree(&name)?;
        }
        tracing::debug!(branch, path = %path.display(), "removed worktree");
        Ok(())
    }

    /// Prunes git's record of a worktree registered at `path` whose directory is gone (a kill
    /// after [`Repo::remove_worktree_into`] moved it to the trash). A record of a worktree that
    /// still exists, here or elsewhere, is left alone.
    pub fn prune_missing_worktree(&self, path: &Path) -> Result<(), GitError> {
        let _serialized = self.admin_lock()?;
        // No branch: only a record registered at `path` is found.
        if let Some((name, registered)) = self.find_worktree_entry(path, "")? {
            if normalize(&registered) == normalize(path) && !registered.exists() {
                self.prune_worktree(&name)?;
            }
        }
        Ok(())
    }

    /// Removes the worktree of a task whose work has landed, however far an earlier removal
    /// got: a directory a kill left half-deleted (its `.git` file already gone) is removed
    /// without asking git about it, since everything in it was merged. Then git's record of it
    /// is pruned.
    pub fn remove_landed_worktree(&self, path: &Path, branch: &str) -> Result<(), GitError> {
        let _serialized = self.admin_lock()?;
        self.remove_unchecked(path, branch)
    }

    /// Removes the directory at `path` whatever it holds, git's record of the worktree at
    /// `path` or on `branch`, and the branch's stale lock files. Only for worktrees the caller
    /// knows are disposable from its journal (an interrupted creation, landed work), and with
    /// the admin lock held.
    fn remove_unchecked(&self, path: &Path, branch: &str) -> Result<(), GitError> {
        let entry = self.find_worktree_entry(path, branch)?;
        if path.exists() {
            fs::remove_dir_all(path).context("remove worktree directory", path)?;
        }
        if let Some((name, _)) = entry {
            let admin = self.admin_dir(&name);
            if admin.exists() {
                fs::remove_dir_all(&admin).context("remove the worktree's record", &admin)?;
            }
            self.forget_worktree_head(&name);
        }
        super::locks::remove_task_locks(self.git_dir(), branch, None)?;
        Ok(())
    }

    /// The admin entry name and registered path of the worktree at `path` or on `branch`.
    /// The record named after the directory (as [`Repo::create_worktree`] names it) is tried
    /// first; the others only when it is not that worktree's.
    fn find_worktree_entry(
        &self,
        path: &Path,
        branch: &str,
    ) -> Result<Option<(String, PathBuf)>, GitError> {
        let wanted = normalize(path);
        let likely = admin_name(path);
        if let Some(registered) = self.registered_path(&likely) {
            if normalize(&registered) == wanted {
                return Ok(Some((likely, registered)));
            }
        }
        let registered: Vec<(String, PathBuf)> = self
            .worktree_names()
            .into_iter()
            .filter_map(|name| self.registered_path(&name).map(|path| (name, path)))
            .collect();
        // Spelled the same, then the same directory by another path (a link on the way).
        let found = registered
            .iter()
            .find(|(_, at)| normalize(at) == wanted)
            .or_else(|| {
                let real = path.canonicalize().ok()?;
                registered
                    .iter()
                    .find(|(_, at)| at.canonicalize().is_ok_and(|at| at == real))
            });
        if let Some(entry) = found {
            return Ok(Some(entry.clone()));
        }
        let on_branch = format!("ref: refs/heads/{branch}");
        let heads = self.worktree_heads();
        let heads: std::collections::HashMap<&str, Option<&str>> = heads
            .iter()
            .map(|(name, head)| (name.as_str(), head.as_deref()))
            .collect();
        Ok(registered.into_iter().find(|(name, _)| {
            heads.get(name.as_str()).copied().flatten().map(str::trim) == Some(on_branch.as_str())
        }))
    }

    fn prune_worktree(&self, name: &str) -> Result<(), GitError> {
        let worktree = self
            .repo
            .find_worktree(name)
            .context(format_args!("look up worktree `{name}`"), self.root())?;
        let mut options = WorktreePruneOptions::new();
        options.valid(true).working_tree(false);
        worktree
            .prune(Some(&mut options))
            .context(format_args!("prune worktree `{name}`"), self.root())?;
        self.forget_worktree_head(name);
        Ok(())
    }

    /// A name for git's admin directory (`.git/worktrees/<name>`), derived from the worktree's
    /// directory name like `git worktree add` does, made unique.
    fn free_worktree_name(&self, path: &Path) -> Result<String, GitError> {
        let wanted = admin_name(path);
        let is_free = |candidate: &str| fs::symlink_metadata(self.admin_dir(candidate)).is_err();
        let name = std::iter::once(wanted.clone())
            .chain((1..).map(|n| format!("{wanted}-{n}")))
            .find(|candidate| is_free(candidate))
            .unwrap_or(wanted);
        Ok(name)
    }

    /// Best effort: the add already failed, and that error is the one worth reporting. git's
    /// record goes first: a branch a registered worktree has checked out cannot be deleted. A
    /// directory that was there (empty) before is left there, empty again.
    fn undo_failed_add(
        &self,
        task_branch: &mut Branch<'_>,
        branch: &str,
        name: &str,
        dir: &Path,
        existed: bool,
    ) {
        let admin = self.admin_dir(name);
        if admin.exists() {
            let _ = fs::remove_dir_all(&admin);
        }
        if fs::symlink_metadata(dir).is_ok_and(|meta| meta.is_dir()) {
            let _ = fs::remove_dir_all(dir);
            if existed {
                let _ = fs::create_dir(dir);
            }
        }
        if let Err(e) = self.remove_branch(task_branch.get_mut(), branch) {
            tracing::warn!(error = %e, "could not delete the branch of a failed worktree");
        }
    }
}

/// A path where a worktree cannot be created: a file, or a directory with something in it.
fn is_occupied(path: &Path) -> bool {
    match fs::read_dir(path) {
        Ok(mut entries) => entries.next().is_some(),
        Err(_) => path.exists(),
    }
}

/// `TASK-1` for `.../worktrees/TASK-1`: git admin names must be a single, plain path component.
pub(crate) fn admin_name(path: &Path) -> String {
    let raw = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let cleaned: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    let trimmed = cleaned.trim_start_matches(['.', '-']).trim_end_matches('.');
    if trimmed.is_empty() {
        "worktree".to_string()
    } else {
        trimmed.to_string()
    }
}

/// A worktree just checked out must hold exactly its commit: a checkout that stopped early
/// (a full disk, a kill) would otherwise look like the deletion of every file not yet written.
fn verify_checkout(path: &Path, commit: &str) -> Result<(), GitError> {
    let missing = super::snapshot::checked_out_differences(path, commit)?;
    if missing.is_empty() {
        return Ok(());
    }
    Err(GitError::IncompleteCheckout {
        path: path.to_path_buf(),
        count: missing.len(),
        first: missing.into_iter().next().unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn admin_name_is_the_directory_name() {
        assert_eq!(
            admin_name(Path::new("/r/.autobuild/worktrees/TASK-1")),
            "TASK-1"
        );
    }

    #[test]
    fn admin_name_replaces_characters_git_rejects() {
        assert_eq!(admin_name(Path::new("/r/a b:c")), "a-b-c");
        assert_eq!(admin_name(Path::new("/r/..hidden")), "hidden");
        assert_eq!(admin_name(Path::new("/r/task.")), "task");
    }

    #[test]
    fn admin_name_never_empty() {
        assert_eq!(admin_name(Path::new("/")), "worktree");
        assert_eq!(admin_name(Path::new("/r/...")), "worktree");
    }
}
