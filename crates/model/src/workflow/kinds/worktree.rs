//! `uses = "worktree"`: create (or, on resume, reopen) the task branch and its worktree.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Kind, Uses};

/// A `worktree` step has only the common keys.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorktreeStep {}

impl WorktreeStep {
    pub(super) fn describe(&self) -> String {
        "worktree".to_string()
    }
}

pub static KIND: Kind = Kind {
    uses: Uses::Worktree,
    summary: "Create the task branch `autobuild/<ID>` from the base and check it out in its own worktree (reopened on resume).",
    needs_worktree: false,
    spends_budget: false,
    leaves_files: false,
    loop_only: false,
};

/// What a worktree step publishes (its doc comments are the reference's text).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct WorktreeOutputs {
    /// the worktree's directory
    pub path: String,
    /// the task branch
    pub branch: String,
    /// the branch the task started from
    pub base: String,
    /// the branch existed and the run continues on it
    pub resumed: bool,
}
