//! Whether a known test runner says it ran no tests at all.
//!
//! A check or a `verify:` command passes when it exits 0, and `cargo test greeting` exits 0 when
//! no test is named like `greeting`: a typo in a filter, or a test the player never wrote, turns
//! a criterion green without testing anything. The runner cannot tell a deliberate empty run
//! from a mistake, so it does not fail the check; it recognizes the runners' own words for "no
//! tests ran" and warns. Only whole runs count: a cargo workspace where one test binary ran 0
//! tests and another ran 5, or a Go module where one package has no test files, is not empty.

use crate::steps::test_results::{read_output, Reader};

/// The runner that reports having run no tests in `output`, if a known one does: `cargo test`,
/// `cargo nextest`, `pytest`, `go test`, `jest` (for vitest too), or `unittest`. It is the
/// run's [`read_output`] when that counts no executed test by the runner's whole tally: every
/// test skipped, ignored, deselected or absent (not `go test`'s plain `ok pkg`, which ran tests
/// it does not count).
pub fn no_tests_ran(output: &str) -> Option<&'static str> {
    let results = read_output(output)?;
    results.ran_no_tests().then_some(match results.reader {
        // The warning has named jest for vitest's `No test files found` since it was written.
        Reader::Vitest => Reader::Jest.name(),
        reader => reader.name(),
    })
}

/// The warning for a check named `name` whose output says `runner` ran no tests.
pub fn warning(name: &str, runner: &str) -> String {
    format!(
        "`{name}`: {runner} ran no tests — the command passes, but tests nothing (a filter that \
         matches no test, or tests that do not exist yet?)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_counts_only_when_every_binary_ran_nothing() {
        let empty = "   Compiling x v0.1.0\nrunning 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 3 filtered out; finished in 0.00s\n\n     Running tests/suite/cli.rs\n\nrunning 0 tests\n\ntest result: ok. 0 passed; 0 failed\n\n   Doc-tests x\n\nrunning 0 tests\n";
        assert_eq!(no_tests_ran(empty), Some("cargo test"));
        let some = "running 0 tests\n\ntest result: ok. 0 passed\n\nrunning 1 test\ntest greeting ... ok\n\ntest result: ok. 1 passed\n";
        assert_eq!(no_tests_ran(some), None);
        assert_eq!(
            no_tests_ran("\u{1b}[1mrunning 0 tests\u{1b}[0m\n"),
            Some("cargo test")
        );
    }

    #[test]
    fn nextest_reports_an_empty_run() {
        assert_eq!(
            no_tests_ran("    Starting 0 tests across 2 binaries (5 tests skipped)\n"),
            Some("cargo nextest")
        );
        assert_eq!(
            no_tests_ran("error: no tests to run\n(hint: use `--no-tests` to customize)\n"),
            Some("cargo nextest")
        );
    }

    #[test]
    fn pytest_no_tests_ran_collected_nothing_or_all_deselected() {
        assert_eq!(
            no_tests_ran("collected 0 items\n\n==== no tests ran in 0.01s ====\n"),
            Some("pytest")
        );
        assert_eq!(
            no_tests_ran("collected 3 items / 3 deselected\n\n===== 3 deselected in 0.02s =====\n"),
            Some("pytest")
        );
        assert_eq!(
            no_tests_ran("collected 3 items / 2 deselected / 1 selected\n\n== 1 passed, 2 deselected in 0.02s ==\n"),
            None
        );
        assert_eq!(no_tests_ran("..\n2 passed in 0.01s\n"), None);
    }

    #[test]
    fn go_warns_only_when_no_package_ran_a_test() {
        assert_eq!(
            no_tests_ran("?   \texample.com/a\t[no test files]\n"),
            Some("go test")
        );
        assert_eq!(
            no_tests_ran("ok  \texample.com/a\t0.002s [no tests to run]\n"),
            Some("go test")
        );
        let mixed = "?   \texample.com/cmd\t[no test files]\nok  \texample.com/a\t0.004s\n";
        assert_eq!(no_tests_ran(mixed), None);
        assert_eq!(
            no_tests_ran("?   \texample.com/cmd\t[no test files]\nok  \texample.com/a\t(cached)\n"),
            None
        );
    }

    #[test]
    fn jest_and_vitest_say_no_tests_found() {
        assert_eq!(
            no_tests_ran("No tests found, exiting with code 0\nRun with `--passWithNoTests`\n"),
            Some("jest")
        );
        assert_eq!(
            no_tests_ran("No test files found, exiting with code 1\n"),
            Some("jest")
        );
    }

    #[test]
    fn other_output_is_not_an_empty_run() {
        assert_eq!(no_tests_ran(""), None);
        assert_eq!(no_tests_ran("all good\n"), None);
        assert_eq!(
            no_tests_ran("PASS src/a.test.js\nTests: 2 passed, 2 total\n"),
            None
        );
    }

    #[test]
    fn the_warning_names_the_check_and_the_runner() {
        let text = warning("AC-001", "cargo test");
        assert!(
            text.starts_with("`AC-001`: cargo test ran no tests"),
            "{text}"
        );
    }
}
