//! `uses = "verify"`: the runner runs the checks and the task's executable criteria itself, in
//! the worktree, with the project environment the agents had.

use serde::Serialize;

use super::{Key, Kind, Output, Uses, ValueType};
use crate::workflow::model::Action;

pub static KIND: Kind = Kind {
    uses: Uses::Verify,
    summary: "The runner runs the checks (`[checks.*]` or detected), the task's `verify:` criteria and, when the profile sets `coverage`, the `[coverage]` command in the worktree; failures are data for the gate, not a failed step.",
    keys: &[
        Key::new(
            "checks",
            "list of strings",
            "check names to run (default: the profile's `checks`, else every configured or detected check)",
        ),
        Key::new(
            "expect",
            "pass | fail",
            "`fail` makes the step a red witness of test-first work: each check must fail with failing tests (not a compile, syntax or collection error, not a passing run) and counts as passed when it does; criteria and coverage are not run, and the gate of that turn does not require them (default: pass)",
        ),
    ],
    outputs: &[
        Output::new("passed", ValueType::Bool, "every required check and criterion passed"),
        Output::new("failed", ValueType::TextList, "names of the checks and criteria that failed, and `coverage` when the profile's minimum does not hold"),
        Output::new("criteria_met", ValueType::Integer, "executable criteria that passed"),
        Output::new("criteria_total", ValueType::Integer, "executable criteria run"),
    ],
    needs_worktree: true,
    spends_budget: true,
    leaves_files: true,
    loop_only: false,
    describe: |action| match action {
        Action::Verify {
            checks,
            expect: Some(crate::workflow::model::Expect::Fail),
        } => match checks {
            Some(checks) => format!("verify (expect fail: red witness): {}", checks.join(", ")),
            None => "verify (expect fail: red witness)".to_string(),
        },
        Action::Verify {
            checks: Some(checks),
            ..
        } => format!("verify: {}", checks.join(", ")),
        _ => "verify".to_string(),
    },
};

/// What a verify step publishes.
#[derive(Debug, Clone, Serialize)]
pub struct VerifyOutputs {
    pub passed: bool,
    pub failed: Vec<String>,
    pub criteria_met: usize,
    pub criteria_total: usize,
}
