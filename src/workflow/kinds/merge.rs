//! `uses = "merge"`: land the approved task branch on its base, asking first on a terminal
//! unless `--auto-merge` or `--no-merge` decided.

use serde::{Deserialize, Serialize};

use super::{Key, Kind, Output, Uses, ValueType};
use crate::workflow::model::Action;

pub static KIND: Kind = Kind {
    uses: Uses::Merge,
    summary: "Land the task branch on its base (squash by default). Without `--auto-merge` it asks on a terminal and otherwise leaves the run for `autobuild complete`.",
    keys: &[Key::new(
        "strategy",
        "squash | merge | ff",
        "how the branch lands (default: `[project] merge_strategy`, else squash)",
    )],
    outputs: &[
        Output::new("merged", ValueType::Bool, "the branch landed"),
        Output::new("commit", ValueType::Text, "the base branch's new tip (empty when not merged)"),
        Output::new("pending", ValueType::Bool, "approved but left for `autobuild complete`"),
    ],
    needs_worktree: true,
    spends_budget: false,
    leaves_files: false,
    loop_only: false,
    describe: |action| match action {
        Action::Merge {
            strategy: Some(strategy),
        } => format!("merge ({})", strategy.as_str()),
        _ => "merge (project default, squash)".to_string(),
    },
};

/// What a merge step publishes.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct MergeOutputs {
    pub merged: bool,
    pub commit: String,
    pub pending: bool,
}
