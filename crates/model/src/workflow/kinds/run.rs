//! `uses = "run"`: a shell command in the worktree with the project environment (formatters,
//! code generators, notifications). Its exit code is an output, not a failure of the run.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Kind, Uses};

/// The keys of a `run` step (their doc comments are the reference's text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RunStep {
    /// the command, run with `sh -c`
    pub run: String,
    /// extra environment variables
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
}

impl RunStep {
    pub(super) fn describe(&self) -> String {
        format!("run: {}", self.run)
    }
}

pub static KIND: Kind = Kind {
    uses: Uses::Run,
    summary: "Run a shell command in the worktree with the project environment; `${{ … }}` in it reads expressions.",
    needs_worktree: true,
    spends_budget: true,
    leaves_files: true,
    loop_only: false,
};

/// What a run step publishes (its doc comments are the reference's text).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct RunOutputs {
    /// the command's exit code (null when it was stopped)
    pub exit_code: Option<i32>,
    /// it exited 0
    pub passed: bool,
}
