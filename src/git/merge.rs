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

use super::error::{Context, GitError};
use super::landing::Prepared;
use super::repo::Repo;
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
    /// Merges `task_branch` into `base_branch` with `strategy`, all phases of a landing in one
    /// go, journaled in the git directory ([`Repo::finish_interrupted_landings`]) — for callers
    /// without a run state of their own to journal in (features). When the base is checked
    /// out, that working tree and index are updated too.
    pub fn merge_into_base(
        &self,
        task_branch: &str,
        base_branch: &str,
        strategy: MergeStrategy,
        message: &str,
    ) -> Result<MergeOutcome, GitError> {
        let landing = match self.prepare_landing(task_branch, base_branch, strategy, message)? {
            Prepared::UpToDate(commit) => {
                return Ok(MergeOutcome {
                    commit,
                    strategy,
                    up_to_date: true,
                })
            }
            Prepared::Ready(landing) => landing,
        };
        self.land_journaled(&landing)?;
        tracing::debug!(task_branch, base_branch, commit = %landing.to, "merged");
        Ok(MergeOutcome {
            commit: landing.to,
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
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    millis_since_epoch(std::time::SystemTime::now())
}

/// `time` in milliseconds since the Unix epoch (0 before it).
pub(crate) fn millis_since_epoch(time: std::time::SystemTime) -> u64 {
    time.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
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
