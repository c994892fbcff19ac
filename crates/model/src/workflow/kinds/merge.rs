//! `uses = "merge"`: land the approved task branch on its base, asking first on a terminal
//! unless `--auto-merge` or `--no-merge` decided.

use base::Keyword;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Kind, Uses};
use crate::workflow::model::MergeStrategy;

/// The keys of a `merge` step (their doc comments are the reference's text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MergeStep {
    /// how the branch lands (default: `[project] merge_strategy`, else squash)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<MergeStrategy>,
}

impl MergeStep {
    pub(super) fn describe(&self) -> String {
        match self.strategy {
            Some(strategy) => format!("merge ({})", strategy.as_str()),
            None => "merge (project default, squash)".to_string(),
        }
    }
}

pub static KIND: Kind = Kind {
    uses: Uses::Merge,
    summary: "Land the task branch on its base (squash by default). Without `--auto-merge` it asks on a terminal and otherwise leaves the run for `autobuild complete`.",
    needs_worktree: true,
    spends_budget: false,
    leaves_files: false,
    loop_only: false,
};

/// What a merge step publishes (its doc comments are the reference's text).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct MergeOutputs {
    /// the branch landed
    pub merged: bool,
    /// the base branch's new tip (empty when not merged)
    pub commit: String,
    /// approved but left for `autobuild complete`
    pub pending: bool,
}
