//! Task branches after a run: whether their work has landed, and deleting them without ever
//! losing unmerged work silently.
//!
//! "Merged" means the base already contains the branch's changes: either its commits (merge,
//! fast-forward) or its content (squash merge, where the checkpoint commits themselves never
//! reach the base).

use git2::BranchType;

use super::error::{Context, GitError};
use super::repo::Repo;
use super::tree_merge::{merge_tree, TreeMerge};

impl Repo {
    /// Where `commit` forked from `branch`: their merge base (hex).
    pub fn fork_point(&self, branch: &str, commit: &str) -> Result<String, GitError> {
        let tip = self.base_tip(branch)?.id();
        let commit = git2::Oid::from_str(commit)
            .context(format_args!("read commit id {commit}"), self.root())?;
        self.repo
            .merge_base(tip, commit)
            .map(|oid| oid.to_string())
            .context(
                format_args!("find where the task forked from {branch}"),
                self.root(),
            )
    }

    /// Whether merging `branch` into `into` would change nothing.
    pub fn is_merged(&self, branch: &str, into: &str) -> Result<bool, GitError> {
        let tip = self.branch_tip(branch)?;
        let target = self.branch_tip(into)?;
        if self.contains(&target, &tip)? {
            return Ok(true);
        }
        Ok(match merge_tree(&self.repo, &target, &tip, self.root())? {
            TreeMerge::Clean(tree) => tree == target.tree_id(),
            TreeMerge::Conflicts(_) => false,
        })
    }

    /// How many commits `branch` has that `of` does not.
    pub fn commits_ahead(&self, branch: &str, of: &str) -> Result<usize, GitError> {
        let tip = self.branch_tip(branch)?;
        let other = self.branch_tip(of)?;
        let (ahead, _) = self.repo.graph_ahead_behind(tip.id(), other.id()).context(
            format_args!("count commits of `{branch}` ahead of `{of}`"),
            self.root(),
        )?;
        Ok(ahead)
    }

    /// Deletes the local branch `name`. Unless `force`, refuses with [`GitError::Unmerged`]
    /// when `base` does not contain its work. A branch checked out in a worktree cannot be
    /// deleted; remove the worktree first.
    pub fn delete_branch(&self, name: &str, base: &str, force: bool) -> Result<(), GitError> {
        let mut branch = match self.repo.find_branch(name, BranchType::Local) {
            Ok(branch) => branch,
            Err(_) => {
                return Err(GitError::BranchNotFound {
                    branch: name.to_string(),
                })
            }
        };
        if !force && !self.is_merged(name, base)? {
            return Err(GitError::Unmerged {
                branch: name.to_string(),
                base: base.to_string(),
                commits: self.commits_ahead(name, base)?,
            });
        }
        branch
            .delete()
            .context(format_args!("delete branch `{name}`"), self.root())?;
        tracing::debug!(branch = name, force, "deleted branch");
        Ok(())
    }
}
