//! `uses = "verify"`: the runner runs the checks and the task's executable criteria itself, in
//! the worktree, with the project environment the agents had.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Kind, Uses};
use crate::workflow::model::Expect;

/// The keys of a `verify` step (their doc comments are the reference's text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct VerifyStep {
    /// check names to run (default: the profile's `checks`, else every configured or detected
    /// check)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<Vec<String>>,
    /// `fail` makes the step a red witness of test-first work: each check must fail with
    /// failing tests (not a compile, syntax or collection error, not a passing run) and counts
    /// as passed when it does; criteria and coverage are not run, and the gate of that turn does
    /// not require them (default: pass)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expect: Option<Expect>,
}

impl VerifyStep {
    pub(super) fn describe(&self) -> String {
        match (&self.checks, self.expect) {
            (Some(checks), Some(Expect::Fail)) => {
                format!("verify (expect fail: red witness): {}", checks.join(", "))
            }
            (None, Some(Expect::Fail)) => "verify (expect fail: red witness)".to_string(),
            (Some(checks), _) => format!("verify: {}", checks.join(", ")),
            (None, _) => "verify".to_string(),
        }
    }
}

pub static KIND: Kind = Kind {
    uses: Uses::Verify,
    summary: "The runner runs the checks (`[checks.*]` or detected), the task's `verify:` criteria and, when the profile sets `coverage`, the `[coverage]` command in the worktree; failures are data for the gate, not a failed step.",
    needs_worktree: true,
    spends_budget: true,
    leaves_files: true,
    loop_only: false,
};

/// What a verify step publishes (its doc comments are the reference's text).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct VerifyOutputs {
    /// every required check and criterion passed
    pub passed: bool,
    /// names of the checks and criteria that failed, and `coverage` when the profile's minimum
    /// does not hold
    pub failed: Vec<String>,
    /// executable criteria that passed
    pub criteria_met: usize,
    /// executable criteria run
    pub criteria_total: usize,
}
