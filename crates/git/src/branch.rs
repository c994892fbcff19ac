//! Task branches after a run: whether their work has landed, and deleting them without ever
//! losing unmerged work silently.
//!
//! "Merged" means the base already contains the branch's changes: either its commits (merge,
//! fast-forward) or its content (squash merge, where the checkpoint commits themselves never
//! reach the base).

use git2::{BranchType, ConfigLevel};

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
        let fork = self.merge_base(target.id(), tip.id())?;
        if fork == Some(tip.id()) {
            return Ok(true);
        }
        Ok(
            match merge_tree(&self.repo, fork, &target, &tip, self.root())? {
                TreeMerge::Clean(tree) => tree == target.tree_id(),
                TreeMerge::Conflicts(_) => false,
            },
        )
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
        self.remove_branch(branch.get_mut(), name)?;
        tracing::debug!(branch = name, force, "deleted branch");
        Ok(())
    }

    /// Deletes `reference` (the branch `name`) and its `branch.<name>.*` settings, as `git
    /// branch -D` does; refuses while a working tree has it checked out. libgit2's own delete
    /// asks that by opening every worktree's repository, which a feature's wave of one worktree
    /// per task made the largest part of each landing; the records say it ([`Repo::checkouts_of`]).
    pub(crate) fn remove_branch(
        &self,
        reference: &mut git2::Reference<'_>,
        name: &str,
    ) -> Result<(), GitError> {
        self.ensure_not_checked_out(name)?;
        self.remove_branch_settings(name)?;
        reference
            .delete()
            .context(format_args!("delete branch `{name}`"), self.root())
    }

    /// Removes `branch.<name>.*` from the repository's own config file (an upstream a later
    /// branch of the same name must not inherit).
    fn remove_branch_settings(&self, name: &str) -> Result<(), GitError> {
        let prefix = format!("branch.{name}.");
        let mut local = self
            .repo
            .config()
            .and_then(|config| config.open_level(ConfigLevel::Local))
            .context("open the repository's config", self.root())?;
        let mut keys = Vec::new();
        local
            .entries(None)
            .and_then(|entries| {
                entries.for_each(|entry| {
                    if let Some(key) = entry.name().ok().filter(|key| key.starts_with(&prefix)) {
                        keys.push(key.to_string());
                    }
                })
            })
            .context("read the repository's config", self.root())?;
        keys.sort();
        keys.dedup();
        for key in keys {
            local
                .remove_multivar(&key, ".*")
                .context(format_args!("remove `{key}` from the config"), self.root())?;
        }
        Ok(())
    }
}
