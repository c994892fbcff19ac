//! `uses = "worktree"`: create (or, on resume, reopen) the task branch and its worktree.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Kind, Output, Uses, ValueType};

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
    outputs: &[
        Output::new("path", ValueType::Text, "the worktree's directory"),
        Output::new("branch", ValueType::Text, "the task branch"),
        Output::new("base", ValueType::Text, "the branch the task started from"),
        Output::new("resumed", ValueType::Bool, "the branch existed and the run continues on it"),
    ],
    needs_worktree: false,
    spends_budget: false,
    leaves_files: false,
    loop_only: false,
};

/// What a worktree step publishes.
#[derive(Debug, Clone, Serialize)]
pub struct WorktreeOutputs {
    pub path: String,
    pub branch: String,
    pub base: String,
    pub resumed: bool,
}
