//! The result of one runner-executed check (a project check such as `test`, or an executable
//! acceptance criterion). Shared by the verify step that produces it, the gate that judges it,
//! the feedback the next player turn receives and the turn records on disk.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    /// `test`, `lint`, … for project checks; the criterion id (`AC-001`) for criteria.
    pub name: String,
    pub command: String,
    pub status: CheckStatus,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    /// The full output, on disk.
    pub log_path: PathBuf,
    /// Bounded: the first error block plus the final summary lines.
    pub summary: String,
    /// Set when the check did not pass.
    pub failure_class: Option<FailureClass>,
    /// What the player should do about the failure.
    pub advice: Option<String>,
    /// Something to know even when it passed: a known test runner said it ran no tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// The task's profile does not require this check: its failure is reported, labelled
    /// advisory, and does not fail the verification.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub advisory: bool,
    /// What the test runner said it ran (its output, or the check's `results` file), where a
    /// known runner's words are there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests: Option<crate::steps::test_results::Tally>,
    /// What the base oracle said of this turn (`[tests] oracle = "base"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oracle: Option<crate::steps::oracle::OracleCheck>,
}

impl CheckResult {
    pub fn passed(&self) -> bool {
        self.status == CheckStatus::Passed
    }

    /// A failure that counts: the check did not pass and the profile requires it.
    pub fn blocks(&self) -> bool {
        !self.passed() && !self.advisory
    }

    /// An acceptance criterion's verify command must test something: one that exited 0 while
    /// its test runner says no test ran (the named test skipped, deselected, or never written)
    /// is not met.
    pub fn fail_if_no_test_ran(&mut self) {
        let Some(tally) = self.tests.filter(|tally| tally.ran_no_tests()) else {
            return;
        };
        if !self.passed() {
            return;
        }
        self.status = CheckStatus::Failed;
        self.failure_class = Some(FailureClass::Code);
        self.advice = Some(format!(
            "`{}` exited 0 but ran no test ({tally}): a criterion is met only by a test that \
             runs and passes; write the test it names, or fix the name or filter so it is \
             collected, and do not skip it",
            self.command
        ));
        self.summary = format!("ran no test: {tally}\n{}", self.summary);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Passed,
    Failed,
    TimedOut,
    /// The check could not be run at all (spawn failure, cancelled).
    Error,
}

/// Whether a failure is the code's fault or the environment's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    Code,
    Infrastructure,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::steps::test_results::read_output;

    fn criterion(status: CheckStatus, output: &str) -> CheckResult {
        CheckResult {
            name: "AC-001".into(),
            command: "cargo test greeting".into(),
            status,
            exit_code: Some(0),
            duration_ms: 1,
            log_path: PathBuf::from("log"),
            summary: output.into(),
            failure_class: None,
            advice: None,
            warning: None,
            advisory: false,
            tests: read_output(output).map(|results| results.tally()),
            oracle: None,
        }
    }

    #[test]
    fn a_criterion_whose_runner_ran_no_test_is_not_met() {
        let empty = "running 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 4 filtered out; finished in 0.00s\n";
        let ran = "running 1 test\ntest greeting ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 3 filtered out; finished in 0.00s\n";
        let skipped = "1 skipped in 0.01s\n";
        let table = [
            (CheckStatus::Passed, empty, CheckStatus::Failed),
            (CheckStatus::Passed, skipped, CheckStatus::Failed),
            (CheckStatus::Passed, ran, CheckStatus::Passed),
            // No known runner's words: the exit code stands.
            (CheckStatus::Passed, "Hello, Ada!\n", CheckStatus::Passed),
            (CheckStatus::TimedOut, empty, CheckStatus::TimedOut),
        ];
        for (status, output, expected) in table {
            let mut result = criterion(status, output);
            result.fail_if_no_test_ran();
            assert_eq!(result.status, expected, "{output}");
            if expected == CheckStatus::Failed {
                assert!(
                    result.summary.starts_with("ran no test: "),
                    "{}",
                    result.summary
                );
                assert_eq!(result.failure_class, Some(FailureClass::Code));
            }
        }
    }
}
