//! Landing an approved task branch on its base branch.
//!
//! `squash` (the default) makes one commit on the base whose tree is the three-way merge of the
//! base tip and the task tip, so the many checkpoint commits of a run never reach the base;
//! `merge` makes a merge commit even when a fast-forward were possible; `ff` only moves the base
//! when it has not moved on. Nothing is written when the merge conflicts or when the user's
//! checkout of the base has local changes in the files the merge touches.

use std::path::Path;

use git2::{Commit, ErrorCode, MergeOptions, Oid, Repository};
use serde::{Deserialize, Serialize};

use super::diff::changed_paths;
use super::error::{Context, GitError};
use super::repo::{signature, Repo};
use crate::workflow::model::MergeStrategy;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergeOutcome {
    /// The base branch's new tip (hex); its unchanged tip when `up_to_date`.
    pub commit: String,
    pub strategy: MergeStrategy,
    /// The base already contained the task's work; nothing was written.
    pub up_to_date: bool,
}

/// The tree a three-way merge produces, or the paths that conflict.
pub(crate) enum TreeMerge {
    Clean(Oid),
    Conflicts(Vec<String>),
}

impl Repo {
    /// Merges `task_branch` into `base_branch` with `strategy`. When the base is checked out
    /// (in the main checkout or a worktree), that working tree and index are updated too.
    pub fn merge_into_base(
        &self,
        task_branch: &str,
        base_branch: &str,
        strategy: MergeStrategy,
        message: &str,
    ) -> Result<MergeOutcome, GitError> {
        let base = self.base_tip(base_branch)?;
        let task = self.branch_tip(task_branch)?;
        let up_to_date = MergeOutcome {
            commit: base.id().to_string(),
            strategy,
            up_to_date: true,
        };
        if self.contains(&base, &task)? {
            return Ok(up_to_date);
        }
        let new_tip = match strategy {
            MergeStrategy::Ff => {
                if !self.contains(&task, &base)? {
                    return Err(GitError::NotFastForward {
                        branch: task_branch.to_string(),
                        base: base_branch.to_string(),
                    });
                }
                task.id()
            }
            MergeStrategy::Squash | MergeStrategy::Merge => {
                let tree = match merge_tree(&self.repo, &base, &task, self.root())? {
                    TreeMerge::Clean(tree) => tree,
                    TreeMerge::Conflicts(paths) => {
                        return Err(GitError::Conflict {
                            branch: task_branch.to_string(),
                            base: base_branch.to_string(),
                            paths,
                        })
                    }
                };
                if strategy == MergeStrategy::Squash && tree == base.tree_id() {
                    return Ok(up_to_date);
                }
                let parents: Vec<&Commit<'_>> = match strategy {
                    MergeStrategy::Squash => vec![&base],
                    _ => vec![&base, &task],
                };
                self.write_commit(tree, &parents, message)?
            }
        };
        self.move_branch(base_branch, &base, new_tip, strategy)?;
        tracing::debug!(task_branch, base_branch, commit = %new_tip, "merged");
        Ok(MergeOutcome {
            commit: new_tip.to_string(),
            strategy,
            up_to_date: false,
        })
    }

    /// Whether `tip` already contains `commit` (equal or a descendant).
    pub(crate) fn contains(&self, tip: &Commit<'_>, commit: &Commit<'_>) -> Result<bool, GitError> {
        if tip.id() == commit.id() {
            return Ok(true);
        }
        self.repo
            .graph_descendant_of(tip.id(), commit.id())
            .context("compare branch histories", self.root())
    }

    /// A commit object that no branch points to yet.
    fn write_commit(
        &self,
        tree: Oid,
        parents: &[&Commit<'_>],
        message: &str,
    ) -> Result<Oid, GitError> {
        let tree = self
            .repo
            .find_tree(tree)
            .context("read the merged tree", self.root())?;
        let author = signature(&self.repo, self.root())?;
        self.repo
            .commit(None, &author, &author, message, &tree, parents)
            .context("write the merge commit", self.root())
    }

    /// Points `branch` (currently at `old`) to `new`, updating every working tree that has it
    /// checked out. Checkouts are verified before anything is changed.
    fn move_branch(
        &self,
        branch: &str,
        old: &Commit<'_>,
        new: Oid,
        strategy: MergeStrategy,
    ) -> Result<(), GitError> {
        let new_tree = self
            .repo
            .find_commit(new)
            .and_then(|commit| commit.tree())
            .context("read the merged tree", self.root())?;
        let checkouts = self.checkouts_of(branch)?;
        if !checkouts.is_empty() {
            let touched = changed_paths(&self.repo, old.tree_id(), new_tree.id(), self.root())?;
            for checkout in &checkouts {
                checkout.ensure_clean(&touched)?;
            }
            for checkout in &checkouts {
                checkout.checkout_safely(new_tree.id())?;
            }
        }
        let reflog = format!("autobuild: {} merge", strategy.as_str());
        match self.repo.reference_matching(
            &format!("refs/heads/{branch}"),
            new,
            true,
            old.id(),
            &reflog,
        ) {
            Ok(_) => Ok(()),
            Err(e) if e.code() == ErrorCode::Modified => Err(GitError::BaseMoved {
                branch: branch.to_string(),
                actual: self
                    .resolve_branch(branch)
                    .unwrap_or_else(|_| "an unknown commit".to_string()),
            }),
            Err(e) => Err(e).context(format_args!("update branch `{branch}`"), self.root()),
        }
    }
}

/// The three-way merge of `ours` and `theirs` over their merge base (the empty tree when the
/// histories are unrelated).
pub(crate) fn merge_tree(
    repo: &Repository,
    ours: &Commit<'_>,
    theirs: &Commit<'_>,
    path: &Path,
) -> Result<TreeMerge, GitError> {
    let ancestor = match repo.merge_base(ours.id(), theirs.id()) {
        Ok(base) => repo
            .find_commit(base)
            .and_then(|commit| commit.tree())
            .context("read the merge base", path)?,
        Err(e) if e.code() == ErrorCode::NotFound => {
            let empty = repo
                .treebuilder(None)
                .and_then(|builder| builder.write())
                .context("write the empty tree", path)?;
            repo.find_tree(empty).context("read the empty tree", path)?
        }
        Err(e) => return Err(e).context("find the merge base", path),
    };
    let (our_tree, their_tree) = (
        ours.tree().context("read a commit's tree", path)?,
        theirs.tree().context("read a commit's tree", path)?,
    );
    let mut index = repo
        .merge_trees(
            &ancestor,
            &our_tree,
            &their_tree,
            Some(&MergeOptions::new()),
        )
        .context("merge trees", path)?;
    if index.has_conflicts() {
        let mut paths: Vec<String> = index
            .conflicts()
            .context("list conflicts", path)?
            .flatten()
            .flat_map(|conflict| [conflict.ancestor, conflict.our, conflict.their])
            .flatten()
            .map(|entry| String::from_utf8_lossy(&entry.path).into_owned())
            .collect();
        paths.sort();
        paths.dedup();
        return Ok(TreeMerge::Conflicts(paths));
    }
    let tree = index
        .write_tree_to(repo)
        .context("write the merged tree", path)?;
    Ok(TreeMerge::Clean(tree))
}
