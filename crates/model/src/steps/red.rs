//! The red witness of test-first work (the shipped `tdd` workflow, a `verify` step with
//! `expect = "fail"`): the tests just written must fail on the code as it is, and fail as
//! tests do — an assertion or a failing test reported by the runner — not because they do not
//! compile, cannot be collected or cannot run at all. A test that already passes proves
//! nothing about the change to come; a test that cannot even run proves nothing either.
//!
//! Detection reads the check's whole output with the failure classifier's evidence
//! ([`crate::steps::classify`]): test-failure evidence (`N failed`, `FAILED tests/…::…`,
//! `--- FAIL:`, `panicked at`, `AssertionError`, a runner's tally) is required, and compile,
//! syntax and collection evidence (`SyntaxError`, `error[E0425]`, `error during collection`,
//! `ERROR collecting`) or an infrastructure class disqualifies. Whether the tests fail *for
//! the reason the criteria describe* is the reviewer's judgement, not the runner's.

use crate::steps::check::{CheckResult, CheckStatus, FailureClass};

/// Whether a check's run is a red witness, and why not when it is not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Red {
    /// It failed with failing tests: the witness holds.
    Holds,
    /// It passed: the new tests do not fail on the code as it is.
    Passed,
    /// It failed, but not as tests fail (compile, syntax, collection error, no test evidence).
    NotATestFailure,
    /// The environment failed (missing tool, timeout), not the tests.
    Infrastructure,
}

impl Red {
    /// The sentence the player and the reports get for a check `name` that is not red.
    pub fn explain(&self, name: &str) -> String {
        match self {
            Red::Holds => format!("`{name}` fails as new tests should before the implementation"),
            Red::Passed => format!(
                "not red: `{name}` passes on the code as it is, so the new tests prove nothing \
                 about the change; write tests that fail until the task is implemented"
            ),
            Red::NotATestFailure => format!(
                "not red: `{name}` fails, but not as a failing test does (a compile, syntax or \
                 collection error, or no test reported failing); the tests must run and fail on \
                 their assertions"
            ),
            Red::Infrastructure => format!(
                "not red: `{name}` could not run (an environment problem or a timeout), so it \
                 witnesses nothing"
            ),
        }
    }
}

/// Whether `result`, whose whole output is `output`, is a red witness.
pub fn judge(result: &CheckResult, output: &str) -> Red {
    match result.status {
        CheckStatus::Passed => return Red::Passed,
        CheckStatus::Failed => {}
        _ => return Red::Infrastructure,
    }
    if result.failure_class == Some(FailureClass::Infrastructure) {
        return Red::Infrastructure;
    }
    if crate::steps::classify::shows_error_not_failure(output)
        || !crate::steps::classify::shows_failing_tests(output)
    {
        return Red::NotATestFailure;
    }
    Red::Holds
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(status: CheckStatus, class: Option<FailureClass>) -> CheckResult {
        CheckResult {
            name: "test".into(),
            command: "pytest".into(),
            status,
            exit_code: Some(1),
            duration_ms: 1,
            log_path: "log".into(),
            summary: String::new(),
            failure_class: class,
            advice: None,
            warning: None,
            advisory: false,
            tests: None,
            oracle: None,
        }
    }

    #[test]
    fn the_red_witness_table() {
        let failed = result(CheckStatus::Failed, Some(FailureClass::Code));
        let cases = [
            ("pytest: an assertion", &failed, "FAILED tests/test_greet.py::test_ada - AssertionError\n=== 1 failed in 0.1s ===", Red::Holds),
            ("cargo test: a panic", &failed, "thread 'greets' panicked at src/lib.rs:3:5\ntest result: FAILED. 0 passed; 1 failed", Red::Holds),
            ("go test", &failed, "--- FAIL: TestGreet (0.00s)\nFAIL\tgreet\t0.01s", Red::Holds),
            ("a shell runner's tally", &failed, "FAIL tests/test_greet.sh\n1 passed, 1 failed", Red::Holds),
            ("pytest: a syntax error", &failed, "E   SyntaxError: invalid syntax\n=== 1 error in 0.1s ===", Red::NotATestFailure),
            ("pytest: collection error", &failed, "ERROR collecting tests/test_greet.py\nInterrupted: 1 error during collection\n=== 1 failed, 1 error in 0.1s ===", Red::NotATestFailure),
            ("rust: does not compile", &failed, "error[E0425]: cannot find function `greet`\nerror: could not compile `x`", Red::NotATestFailure),
            ("no test evidence", &failed, "something went wrong", Red::NotATestFailure),
        ];
        for (name, result, output, expected) in cases {
            assert_eq!(judge(result, output), expected, "{name}");
        }
        let passed = result(CheckStatus::Passed, None);
        assert_eq!(judge(&passed, "3 passed"), Red::Passed);
        let env = result(CheckStatus::Failed, Some(FailureClass::Infrastructure));
        assert_eq!(
            judge(&env, "sh: pytest: not found\n1 failed in 0s"),
            Red::Infrastructure
        );
        let timed_out = result(CheckStatus::TimedOut, None);
        assert_eq!(judge(&timed_out, ""), Red::Infrastructure);
        assert!(Red::Passed
            .explain("test")
            .starts_with("not red: `test` passes"));
    }
}
