//! Landing an approved task branch on its base branch.
//!
//! `squash` (the default) makes one commit on the base whose tree is the three-way merge of the
//! base tip and the task tip, so the many checkpoint commits of a run never reach the base;
//! `merge` makes a merge commit even when a fast-forward were possible; `ff` only moves the base
//! when it has not moved on. Nothing is written when the merge conflicts or when the user's
//! checkout of the base has local changes in the files the merge touches.

use git2::Commit;
use serde::{Deserialize, Serialize};

use super::error::{Context, GitError};
use super::landing::Prepared;
use super::repo::Repo;
use super::strategy::MergeStrategy;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MergeOutcome {
    /// The base branch's new tip (hex); its unchanged tip when `up_to_date`.
    pub commit: String,
    pub strategy: MergeStrategy,
    /// The base already contained the task's work; nothing was written.
    pub up_to_date: bool,
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
