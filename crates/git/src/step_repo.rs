//! One opening of a task worktree's repository for the runner's own checks on one side of an
//! agent process: the guards' snapshots before it, or, after it, the ref guard's restore, HEAD's
//! reattachment, the branch tip and what cannot land. Each of those used to open the
//! repository itself (every opening rereads three config files and the worktree's links);
//! now the checks of one side share one handle.
//!
//! A `StepRepo` is never kept across an agent's run: what it read (config, refs) would be what
//! was there before the agent. The caller opens one before the agent and a new one after it,
//! once the guarded git files are put back ([`super::GitDirGuard::restore`]) where the step
//! did so before.

use std::path::{Path, PathBuf};

use git2::Repository;

use super::complete_tree::{unlandable_since_fork_in, Unlandable};
use super::error::GitError;
use super::guard::GitDirGuard;
use super::integrity::{branch_tip_in, reattach_in};
use super::ref_guard::{RefGuard, RefOwner, RefRestored};
use super::repo::open_checkout;

/// The worktree's repository, opened on the worktree (which reads and writes the shared git
/// directory's branches and tags too).
pub struct StepRepo {
    worktree: PathBuf,
    checkout: Repository,
}

impl std::fmt::Debug for StepRepo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StepRepo")
            .field("worktree", &self.worktree)
            .finish()
    }
}

impl StepRepo {
    pub fn open(worktree: &Path) -> Result<StepRepo, GitError> {
        Ok(StepRepo {
            worktree: worktree.to_path_buf(),
            checkout: open_checkout(worktree)?,
        })
    }

    /// [`GitDirGuard::capture`].
    pub fn guard_git_dir(&self) -> GitDirGuard {
        GitDirGuard::capture_in(self.checkout.commondir())
    }

    /// [`RefGuard::capture`].
    pub fn guard_refs(&self, task_branch: &str) -> Result<RefGuard, GitError> {
        RefGuard::capture_in(&self.checkout, task_branch)
    }

    /// [`RefGuard::restore`].
    pub fn restore_refs(
        &self,
        guard: &RefGuard,
        task_branch: &str,
        backup_prefix: &str,
        owner: &dyn Fn(&str) -> RefOwner,
    ) -> Result<Vec<RefRestored>, GitError> {
        guard.restore_in(
            &self.checkout,
            &self.worktree,
            task_branch,
            backup_prefix,
            owner,
        )
    }

    /// Removes the lock files of the task's own git state (the worktree's index and HEAD, the
    /// task branch) that nobody holds open: what a git command left when the agent was stopped
    /// in the middle of it, or an agent planted. Every git write of the runner (the
    /// checkpoint, the audit's reset) would fail on them. Called once the agent's processes are
    /// gone.
    pub fn remove_left_locks(&self, task_branch: &str) -> Result<Vec<PathBuf>, GitError> {
        let admin = self.checkout.path();
        let admin = (admin != self.checkout.commondir()).then_some(admin);
        super::locks::remove_task_locks(self.checkout.commondir(), task_branch, admin)
    }

    /// [`super::TurnDiffs::compute`] on this handle, which becomes the diffs' own (its index
    /// replaced by an empty in-memory one, as [`super::tree_diff::open_for_diffs`] makes it).
    pub fn turn_diffs(
        self,
        base_branch: &str,
        previous: Option<&str>,
        commit: &str,
        committed: bool,
        is_test: &dyn Fn(&str) -> bool,
    ) -> Result<super::TurnDiffs, GitError> {
        let repo = super::tree_diff::for_diffs(self.checkout, &self.worktree)?;
        super::TurnDiffs::compute_in(
            &repo,
            &self.worktree,
            base_branch,
            previous,
            commit,
            committed,
            is_test,
        )
    }

    /// [`super::reattach`].
    pub fn reattach(&self, branch: &str) -> Result<Option<String>, GitError> {
        reattach_in(&self.checkout, &self.worktree, branch)
    }

    /// [`super::branch_tip`].
    pub fn branch_tip(&self, branch: &str) -> Result<String, GitError> {
        branch_tip_in(&self.checkout, &self.worktree, branch)
    }

    /// [`super::unlandable_since_fork`].
    pub fn unlandable_since_fork(
        &self,
        base_branch: &str,
        commit: &str,
    ) -> Result<Vec<Unlandable>, GitError> {
        unlandable_since_fork_in(&self.checkout, &self.worktree, base_branch, commit)
    }
}
