//! The integration check after every wave (`[feature] integration`, docs/features.md): tasks that
//! pass their checks alone can fail them together (two tasks change one function's contract,
//! each with its own callers in mind). So once a wave's approved tasks are on the feature
//! branch, the runner runs the checks those tasks' gates required on the branch's tip, in a
//! worktree of its own ([`check`]), before the next wave starts and before the feature lands
//! on the base. A failure is recorded here as a typed fact in `feature.json`
//! ([`IntegrationRecord`]) and stops the feature; with `integrate` the failure is first handed
//! to the player as a task of its own ([`repair`]).
//!
//! This module holds the records and the pure decisions: whether a tip needs a check, and the
//! sentence a failure is told in.

pub mod check;
pub mod landing;
pub mod repair;
pub mod view;

use std::path::PathBuf;

use base::Keyword;
use serde::{Deserialize, Serialize};

use model::project::Integration;
use model::steps::check::{CheckResult, CheckStatus};

/// One integration check of the feature branch's tip.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntegrationRecord {
    /// The wave (1-based) whose tasks had just landed.
    pub wave: usize,
    /// The feature branch commit the checks ran on.
    pub commit: String,
    pub outcome: IntegrationOutcome,
    /// The wave's tasks on the feature branch.
    pub tasks: Vec<String>,
    /// Every check that ran, in order.
    pub checks: Vec<IntegrationCheck>,
    /// `integration = "integrate"`: the task the player ran to repair the failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair: Option<RepairRecord>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntegrationOutcome {
    Passed,
    Failed,
}

/// One check of an integration check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntegrationCheck {
    pub name: String,
    pub status: CheckStatus,
    /// Bounded: the first error block and the final lines of its output.
    pub summary: String,
    /// Its full output.
    pub log: PathBuf,
}

impl IntegrationCheck {
    pub fn from_result(result: &CheckResult) -> IntegrationCheck {
        IntegrationCheck {
            name: result.name.clone(),
            status: result.status,
            summary: result.summary.clone(),
            log: result.log_path.clone(),
        }
    }

    pub fn passed(&self) -> bool {
        self.status == CheckStatus::Passed
    }
}

/// The integration task of `integrate` and how it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepairRecord {
    /// Its task id (its run is `runs/<id>/`).
    pub task: String,
    /// A [`crate::feature::state::TaskStatus`] name.
    pub status: String,
    pub message: Option<String>,
}

impl IntegrationRecord {
    /// The record of checks that ran on `commit` after `wave`.
    pub fn new(
        wave: usize,
        commit: String,
        tasks: Vec<String>,
        results: &[CheckResult],
    ) -> IntegrationRecord {
        let checks: Vec<IntegrationCheck> =
            results.iter().map(IntegrationCheck::from_result).collect();
        let outcome = if checks.iter().all(IntegrationCheck::passed) {
            IntegrationOutcome::Passed
        } else {
            IntegrationOutcome::Failed
        };
        IntegrationRecord {
            wave,
            commit,
            outcome,
            tasks,
            checks,
            repair: None,
        }
    }

    pub fn passed(&self) -> bool {
        self.outcome == IntegrationOutcome::Passed
    }

    /// The checks that did not pass.
    pub fn failing(&self) -> Vec<&IntegrationCheck> {
        self.checks.iter().filter(|c| !c.passed()).collect()
    }

    /// "integration failed after wave 2: check `test` failed on … (tasks A, B): <first error>".
    pub fn failure_message(&self, branch: &str) -> String {
        let failing = self.failing();
        let names: Vec<String> = failing
            .iter()
            .map(|c| format!("`{}` {}", c.name, c.status.as_str()))
            .collect();
        let mut sentence = format!(
            "integration failed after wave {}: check {} on {branch} with the wave's tasks {}",
            self.wave,
            names.join(", "),
            self.tasks.join(", ")
        );
        if let Some(first) = failing.first().and_then(|c| first_error(&c.summary)) {
            sentence.push_str(&format!(": {first}"));
        }
        sentence
    }
}

/// The first non-empty line of a check's summary.
pub fn first_error(summary: &str) -> Option<&str> {
    summary.lines().map(str::trim).find(|l| !l.is_empty())
}

/// Whether the feature branch's tip needs an integration check after a wave: not when
/// integration is off, not when no task of the wave is on the branch (nothing was integrated),
/// and not when this very commit already passed one (a resumed run, or a wave that landed
/// nothing new). One check per wave whose tasks moved the branch, and no other.
pub fn needs_check(
    mode: Integration,
    wave_on_branch: bool,
    tip: &str,
    records: &[IntegrationRecord],
) -> bool {
    mode != Integration::Off
        && wave_on_branch
        && !records.iter().any(|r| r.passed() && r.commit == tip)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(commit: &str, outcome: IntegrationOutcome) -> IntegrationRecord {
        IntegrationRecord {
            wave: 1,
            commit: commit.into(),
            outcome,
            tasks: vec!["A".into(), "B".into()],
            checks: Vec::new(),
            repair: None,
        }
    }

    #[test]
    fn a_tip_is_checked_once_when_a_wave_landed_on_it() {
        use IntegrationOutcome::*;
        let passed = [record("c1", Passed)];
        let failed = [record("c1", Failed)];
        let cases: [(Integration, bool, &str, &[IntegrationRecord], bool); 7] = [
            (Integration::Check, true, "c1", &[], true),
            (Integration::Integrate, true, "c1", &[], true),
            (Integration::Off, true, "c1", &[], false),
            (Integration::Check, false, "c1", &[], false),
            (Integration::Check, true, "c1", &passed, false),
            (Integration::Check, true, "c2", &passed, true),
            // A failed check is checked again (after a fix, on resume).
            (Integration::Check, true, "c1", &failed, true),
        ];
        for (mode, on_branch, tip, records, expected) in cases {
            assert_eq!(
                needs_check(mode, on_branch, tip, records),
                expected,
                "{mode:?} {on_branch} {tip} {records:?}"
            );
        }
    }

    #[test]
    fn a_failure_names_the_wave_the_checks_the_tasks_and_the_first_error() {
        let mut failed = record("c1", IntegrationOutcome::Failed);
        failed.wave = 2;
        failed.checks = vec![
            IntegrationCheck {
                name: "lint".into(),
                status: CheckStatus::Passed,
                summary: "ok".into(),
                log: "l".into(),
            },
            IntegrationCheck {
                name: "test".into(),
                status: CheckStatus::Failed,
                summary: "\nFAIL tests/test_a.sh\n1 passed, 1 failed".into(),
                log: "t".into(),
            },
        ];
        assert_eq!(
            failed.failure_message("autobuild/F"),
            "integration failed after wave 2: check `test` failed on autobuild/F with the \
             wave's tasks A, B: FAIL tests/test_a.sh"
        );
    }
}
