//! What agents learn of a hidden check (`[scope] reveal`, README.md).
//!
//! A hidden check runs tests the agents never see. Its raw output would show them anyway (a
//! failing assertion prints the expected value; a traceback prints the test's source lines), so
//! agents only ever get what [`revealed`] makes of it: at `names` the check's name, its counts
//! and the failing tests' names (as pytest and cargo print them); at `summary` pass/fail and
//! the counts; at `none` only that a hidden check failed. The full output stays in the log
//! file, in the run directory, which the sandbox does not show to agents.

use crate::steps::check::{CheckResult, CheckStatus};
use crate::steps::summary::strip_ansi;

/// `[scope] reveal`.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Deserialize,
    schemars::JsonSchema,
    strum::IntoStaticStr,
    strum::EnumIter,
)]
#[strum(serialize_all = "lowercase")]
#[serde(rename_all = "lowercase")]
pub enum Reveal {
    /// The check's name, its counts and the names of the failing tests.
    #[default]
    Names,
    /// Passed or failed, and the counts.
    Summary,
    /// Only that a hidden check failed.
    None,
}

/// What agents are shown in place of a hidden check's command: they could not run it (its
/// files are not in their worktree), and its file names are the project's to keep.
pub const HIDDEN_COMMAND: &str =
    "(hidden: the runner runs it with files no agent can see; you cannot run it)";

/// Counts a test runner printed, where it printed them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    pub passed: Option<u64>,
    pub failed: Option<u64>,
}

base::regexes! {
    /// pytest: `FAILED tests/acceptance/test_x.py::test_name - AssertionError`.
    PYTEST_FAILED = r"(?m)^FAILED (\S+::\S+)";

    /// cargo: `test module::name ... FAILED`.
    CARGO_FAILED = r"(?m)^test (\S+) \.\.\. FAILED\s*$";

    /// pytest's last line: `=== 1 failed, 2 passed in 0.1s ===`.
    PYTEST_COUNT = r"(?m)\b(\d+) (passed|failed)\b";

    /// cargo: `test result: FAILED. 1 passed; 2 failed;`.
    CARGO_COUNT = r"(?m)^test result: \w+\. (\d+) passed; (\d+) failed";
}

/// The names of the failing tests in `output`, as pytest and cargo print them (each once, in
/// order); empty when no known runner's format is found.
pub fn failing_tests(output: &str) -> Vec<String> {
    let output = strip_ansi(output);
    let mut names: Vec<String> = Vec::new();
    for pattern in [&*PYTEST_FAILED, &*CARGO_FAILED] {
        for found in pattern.captures_iter(&output) {
            let name = found[1].to_string();
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

/// The passed and failed counts in `output` (cargo's summed over its test binaries, pytest's
/// from its summary line).
pub fn counts(output: &str) -> Counts {
    let output = strip_ansi(output);
    let mut counts = Counts::default();
    let add = |slot: &mut Option<u64>, n: u64| *slot = Some(slot.unwrap_or(0) + n);
    let mut cargo = false;
    for found in CARGO_COUNT.captures_iter(&output) {
        cargo = true;
        add(&mut counts.passed, found[1].parse().unwrap_or(0));
        add(&mut counts.failed, found[2].parse().unwrap_or(0));
    }
    if cargo {
        return counts;
    }
    // pytest repeats no count: the last summary line is the one.
    let last = output
        .lines()
        .rev()
        .find(|line| PYTEST_COUNT.is_match(line) && line.contains(" in "));
    if let Some(line) = last {
        for found in PYTEST_COUNT.captures_iter(line) {
            let n = found[1].parse().unwrap_or(0);
            match &found[2] {
                "passed" => counts.passed = Some(n),
                _ => counts.failed = Some(n),
            }
        }
    }
    counts
}

/// What agents are told about the hidden check `name` that `passed` (or not) with `output`.
pub fn revealed(level: Reveal, name: &str, passed: bool, output: &str) -> String {
    let outcome = if passed { "passed" } else { "failed" };
    let counted = || {
        let counts = counts(output);
        let mut parts = Vec::new();
        if let Some(n) = counts.failed {
            parts.push(format!("{n} failed"));
        }
        if let Some(n) = counts.passed {
            parts.push(format!("{n} passed"));
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!(" ({})", parts.join(", "))
        }
    };
    match level {
        Reveal::None if passed => "a hidden check passed".to_string(),
        Reveal::None => "a hidden check failed (the project reveals nothing more)".to_string(),
        Reveal::Summary => format!("hidden check {outcome}{}", counted()),
        Reveal::Names => {
            let mut text = format!("hidden check `{name}` {outcome}{}", counted());
            let failing = failing_tests(output);
            if !passed && !failing.is_empty() {
                text.push_str("; failing tests: ");
                text.push_str(&failing.join(", "));
            }
            text
        }
    }
}

/// Turns the result of a hidden check into what agents may learn of it, in place: every
/// prompt, the feedback, the gate's reasons, the stall signature and the check records are
/// made from this one result, so none of them can say more. Whatever the level: the summary is
/// [`revealed`]'s, the command [`HIDDEN_COMMAND`], no advice and no warning (both quote the
/// output). The check's name stays (it is configuration the agents read in the profile's
/// requirements). At `names` the status (failed, timed out, error), exit code and failure class
/// (code or infrastructure) stay: the player learns whether its code hung or the environment
/// failed. At `summary` and `none` only passed or failed is left: no exit code, no class, no
/// duration, a timeout or a check that could not start reads "failed".
pub fn conceal(level: Reveal, result: &mut CheckResult, output: &str) {
    let passed = result.passed();
    result.summary = revealed(level, &result.name, passed, output);
    result.command = HIDDEN_COMMAND.to_string();
    result.advice = None;
    result.warning = None;
    if level == Reveal::Names {
        return;
    }
    if !passed {
        result.status = CheckStatus::Failed;
    }
    result.exit_code = None;
    result.failure_class = None;
    result.duration_ms = 0;
}

#[cfg(test)]
mod tests {
    use super::*;
    use base::Keyword;

    const PYTEST: &str = "\
tests/acceptance/test_greet.py .F                                   [100%]
=================================== FAILURES ===================================
___________________________________ test_bye ___________________________________
    def test_bye():
>       assert greet.bye() == \"SECRET-MARKER\"
E       AssertionError
=========================== short test summary info ============================
FAILED tests/acceptance/test_greet.py::test_bye - AssertionError
========================= 1 failed, 1 passed in 0.02s ==========================
";

    const CARGO: &str = "\
running 2 tests
test tests::hello ... ok
test tests::bye ... FAILED

failures:
---- tests::bye stdout ----
thread 'tests::bye' panicked at src/lib.rs:9:5: SECRET-MARKER
test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out
";

    #[test]
    fn each_level_says_what_it_promises_and_never_the_output() {
        let table = [
            (
                Reveal::Names,
                PYTEST,
                "hidden check `acceptance` failed (1 failed, 1 passed); failing tests: \
                 tests/acceptance/test_greet.py::test_bye",
            ),
            (
                Reveal::Names,
                CARGO,
                "hidden check `acceptance` failed (1 failed, 1 passed); failing tests: tests::bye",
            ),
            (
                Reveal::Summary,
                PYTEST,
                "hidden check failed (1 failed, 1 passed)",
            ),
            (
                Reveal::None,
                CARGO,
                "a hidden check failed (the project reveals nothing more)",
            ),
            (
                Reveal::Names,
                "SECRET-MARKER went wrong\n",
                "hidden check `acceptance` failed",
            ),
        ];
        for (level, output, expected) in table {
            let text = revealed(level, "acceptance", false, output);
            assert_eq!(text, expected, "{level:?}");
            assert!(!text.contains("SECRET-MARKER"));
        }
        assert_eq!(
            revealed(
                Reveal::Summary,
                "acceptance",
                true,
                "=== 3 passed in 0.1s ===\n"
            ),
            "hidden check passed (3 passed)"
        );
    }

    #[test]
    fn a_concealed_result_keeps_status_exit_and_class_only_at_names() {
        use crate::steps::check::FailureClass;
        let timed_out = || CheckResult {
            name: "acceptance".into(),
            command: "pytest tests/acceptance".into(),
            status: CheckStatus::TimedOut,
            exit_code: Some(124),
            duration_ms: 61_000,
            log_path: "logs/turn_1_check_acceptance.log".into(),
            summary: "SECRET-MARKER".into(),
            failure_class: Some(FailureClass::Infrastructure),
            advice: Some("SECRET-MARKER: start the service".into()),
            warning: Some("SECRET-MARKER".into()),
            advisory: false,
            tests: None,
            oracle: None,
        };
        let table = [
            (
                Reveal::Names,
                CheckStatus::TimedOut,
                Some(124),
                Some("infrastructure"),
                61_000,
            ),
            (Reveal::Summary, CheckStatus::Failed, None, None, 0),
            (Reveal::None, CheckStatus::Failed, None, None, 0),
        ];
        for (level, status, exit_code, class, duration) in table {
            let mut result = timed_out();
            conceal(level, &mut result, PYTEST);
            assert_eq!(result.status, status, "{level:?}");
            assert_eq!(result.exit_code, exit_code, "{level:?}");
            assert_eq!(result.failure_class.map(|c| c.as_str()), class, "{level:?}");
            assert_eq!(result.duration_ms, duration, "{level:?}");
            assert_eq!(result.command, HIDDEN_COMMAND);
            assert_eq!(
                (result.advice.as_deref(), result.warning.as_deref()),
                (None, None)
            );
            // What the player's feedback and the stall signature are made of.
            let context = crate::steps::feedback::check_context(&result);
            let shown = serde_json::to_string(&context).unwrap();
            assert!(
                !shown.contains("SECRET-MARKER") && !shown.contains("pytest"),
                "{shown}"
            );
            if level == Reveal::None {
                assert_eq!(
                    context.summary,
                    "a hidden check failed (the project reveals nothing more)"
                );
                assert!(!shown.contains("timed_out") && !shown.contains("infrastructure"));
                assert!(
                    !shown.contains("124") && !shown.contains("61000"),
                    "{shown}"
                );
            }
        }
        let mut passed = timed_out();
        passed.status = CheckStatus::Passed;
        passed.failure_class = None;
        conceal(Reveal::None, &mut passed, "");
        assert_eq!(passed.status, CheckStatus::Passed);
        assert_eq!(passed.summary, "a hidden check passed");
    }
}
