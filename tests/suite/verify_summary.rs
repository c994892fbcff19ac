//! Summaries and classification of realistic test-runner output (cargo, pytest, go, jest,
//! unittest): the first error block and the final summary lines survive, noise does not, and
//! the environment's failures are told apart from the code's.

use autobuild::steps::check::FailureClass;
use autobuild::steps::classify::classify;
use autobuild::steps::summary::{summarize, SummaryLimits};

fn limits() -> SummaryLimits {
    SummaryLimits::default()
}

/// The output is the code's fault, and the advice says tests fail (not "does not compile").
fn assert_tests_fail(output: &str, exit_code: Option<i32>) {
    let (class, advice) = classify(output, exit_code);
    assert_eq!(class, FailureClass::Code);
    assert!(advice.starts_with("tests fail"), "{advice}");
}

/// Many passing tests first, so the output is longer than the summary bound.
fn passing_noise(prefix: &str, count: usize) -> String {
    (0..count)
        .map(|i| format!("{prefix}{i} ... ok\n"))
        .collect()
}

#[test]
fn cargo_test_panic_and_result_line() {
    let output = format!(
        "   Compiling greet v0.1.0 (/work/greet)\n\
         \x1b[0m\x1b[1m\x1b[32m    Finished\x1b[0m `test` profile [unoptimized + debuginfo] target(s) in 0.52s\n\
         \x20    Running unittests src/lib.rs (target/debug/deps/greet-1234)\n\
         \n\
         running 42 tests\n\
         {}test tests::greets_ada ... FAILED\n\
         \n\
         failures:\n\
         \n\
         ---- tests::greets_ada stdout ----\n\
         \n\
         thread 'tests::greets_ada' panicked at src/lib.rs:12:9:\n\
         assertion `left == right` failed\n\
         \x20 left: \"Hello, Ada\"\n\
         \x20right: \"Hello, Ada!\"\n\
         note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n\
         \n\
         \n\
         failures:\n\
         \x20   tests::greets_ada\n\
         \n\
         test result: FAILED. 41 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\
         \n\
         error: test failed, to rerun pass `--lib`\n",
        passing_noise("test tests::case_", 41)
    );
    let summary = summarize(&output, limits());
    assert!(
        summary.starts_with("thread 'tests::greets_ada' panicked at src/lib.rs:12:9:"),
        "{summary}"
    );
    assert!(summary.contains(" right: \"Hello, Ada!\""), "{summary}");
    assert!(
        summary.contains("note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\nfailures:"),
        "blank lines between the block and the final lines are dropped: {summary}"
    );
    assert!(
        summary.contains("test result: FAILED. 41 passed; 1 failed;"),
        "{summary}"
    );
    assert!(summary.ends_with("error: test failed, to rerun pass `--lib`"));
    assert!(!summary.contains("case_3 ... ok"), "{summary}");
    assert!(!summary.contains('\x1b'));
    assert_tests_fail(&output, Some(101));
}

#[test]
fn cargo_compile_error() {
    let output = format!(
        "{}   Compiling greet v0.1.0 (/work/greet)\n\
         error[E0425]: cannot find value `nme` in this scope\n\
         \x20--> src/lib.rs:2:24\n\
         \x20 |\n\
         2 |     format!(\"Hello, {{}}!\", nme)\n\
         \x20 |                        ^^^ help: a local variable with a similar name exists: `name`\n\
         \n\
         For more information about this error, try `rustc --explain E0425`.\n\
         error: could not compile `greet` (lib) due to 1 previous error\n",
        (0..40)
            .map(|i| format!("   Compiling dep{i} v1.0.0\n"))
            .collect::<String>()
    );
    let summary = summarize(&output, limits());
    assert!(summary.contains("error[E0425]: cannot find value `nme` in this scope"));
    assert!(summary.contains("help: a local variable with a similar name exists"));
    assert!(summary.ends_with("error: could not compile `greet` (lib) due to 1 previous error"));
    assert!(!summary.contains("dep3 v1.0.0"), "{summary}");
    let (class, advice) = classify(&output, Some(101));
    assert_eq!(class, FailureClass::Code);
    assert!(advice.starts_with("the code does not compile"));
}

#[test]
fn pytest_assertion_with_source_context() {
    let output = format!(
        "============================= test session starts ==============================\n\
         platform linux -- Python 3.12.3, pytest-8.2.0, pluggy-1.5.0\n\
         rootdir: /work/app\n\
         collected 31 items\n\
         \n\
         {}\
         tests/test_utils.py F                                                    [100%]\n\
         \n\
         =================================== FAILURES ===================================\n\
         ________________________________ test_greeting _________________________________\n\
         \n\
         \x20   def test_greeting():\n\
         >       assert greeting(\"Ada\") == \"Hello, Ada!\"\n\
         E       AssertionError: assert 'Hello, Ada' == 'Hello, Ada!'\n\
         E         - Hello, Ada!\n\
         E         ?           -\n\
         E         + Hello, Ada\n\
         \n\
         tests/test_utils.py:5: AssertionError\n\
         =========================== short test summary info ============================\n\
         FAILED tests/test_utils.py::test_greeting - AssertionError: assert 'Hello, Ada' == 'Hello, Ada!'\n\
         ========================= 1 failed, 30 passed in 0.12s =========================\n",
        passing_noise("tests/test_many.py::test_", 30)
    );
    let summary = summarize(&output, limits());
    assert!(
        summary.starts_with(
            "    def test_greeting():\n>       assert greeting(\"Ada\") == \"Hello, Ada!\"\nE       AssertionError"
        ),
        "{summary}"
    );
    assert!(
        summary.contains("E         + Hello, Ada\ntests/test_utils.py:5: AssertionError\n"),
        "{summary}"
    );
    assert!(
        summary.ends_with("= 1 failed, 30 passed in 0.12s ========================="),
        "{summary}"
    );
    assert_tests_fail(&output, Some(1));
}

#[test]
fn pytest_missing_module_is_infrastructure() {
    let output = "\
==================================== ERRORS ====================================
____________________ ERROR collecting tests/test_client.py _____________________
ImportError while importing test module '/work/app/tests/test_client.py'.
Traceback:
/usr/lib/python3.12/importlib/__init__.py:90: in import_module
    return _bootstrap._gcd_import(name[level:], package, level)
tests/test_client.py:1: in <module>
    import requests
E   ModuleNotFoundError: No module named 'requests'
=========================== short test summary info ============================
ERROR tests/test_client.py
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
=============================== 1 error in 0.05s ===============================
";
    let summary = summarize(output, limits());
    assert!(summary.contains("E   ModuleNotFoundError: No module named 'requests'"));
    let (class, advice) = classify(output, Some(2));
    assert_eq!(class, FailureClass::Infrastructure);
    assert!(
        advice.starts_with("Python module `requests` is not installed"),
        "{advice}"
    );
}

#[test]
fn pytest_not_installed() {
    let output = "/bin/sh: 1: pytest: not found\n";
    let (class, advice) = classify(output, Some(127));
    assert_eq!(class, FailureClass::Infrastructure);
    assert_eq!(
        advice,
        "`pytest` is not installed in the environment the runner uses; add it to [env] setup or \
         path_prepend in .autobuild/config.toml — the runner and the agents share that environment"
    );
    assert_eq!(summarize(output, limits()), "/bin/sh: 1: pytest: not found");
}

#[test]
fn go_test_failure() {
    let output = format!(
        "{}--- FAIL: TestGreeting (0.00s)\n\
         \x20   greet_test.go:8: Greeting(\"Ada\") = \"Hello, Ada\", want \"Hello, Ada!\"\n\
         FAIL\n\
         FAIL\texample.com/greet\t0.002s\n\
         FAIL\n",
        (0..50)
            .map(|i| format!("=== RUN   TestCase{i}\n--- PASS: TestCase{i} (0.00s)\n"))
            .collect::<String>()
    );
    let summary = summarize(&output, limits());
    assert!(
        summary.starts_with(
            "=== RUN   TestCase49\n--- PASS: TestCase49 (0.00s)\n--- FAIL: TestGreeting"
        ),
        "{summary}"
    );
    assert!(summary.contains("want \"Hello, Ada!\""));
    assert!(
        summary.ends_with("FAIL\texample.com/greet\t0.002s\nFAIL"),
        "{summary}"
    );
    assert!(
        !summary.contains('…'),
        "block and tail are contiguous: {summary}"
    );
    assert_tests_fail(&output, Some(1));
}

#[test]
fn go_build_failure() {
    let output = "\
# example.com/greet [example.com/greet.test]
./greet.go:4:9: undefined: nme
FAIL\texample.com/greet [build failed]
FAIL
";
    let summary = summarize(output, limits());
    assert_eq!(summary, output.trim_end());
    let (class, advice) = classify(output, Some(1));
    assert_eq!(class, FailureClass::Code);
    assert!(advice.starts_with("the code does not compile"));
}

#[test]
fn jest_failure_through_npm() {
    let output = format!(
        "\n> greet@1.0.0 test\n> jest\n\n{}\
         FAIL src/greet.test.js\n\
         \x20 ● greeting › greets Ada\n\
         \n\
         \x20   expect(received).toBe(expected) // Object.is equality\n\
         \n\
         \x20   Expected: \"Hello, Ada!\"\n\
         \x20   Received: \"Hello, Ada\"\n\
         \n\
         \x20     3 | test('greets Ada', () => {{\n\
         \x20   > 4 |   expect(greeting('Ada')).toBe('Hello, Ada!');\n\
         \x20       |                           ^\n\
         \n\
         \x20     at Object.toBe (src/greet.test.js:4:27)\n\
         \n\
         Test Suites: 1 failed, 12 passed, 13 total\n\
         Tests:       1 failed, 40 passed, 41 total\n\
         Snapshots:   0 total\n\
         Time:        1.234 s\n\
         Ran all test suites.\n\
         npm ERR! Test failed.  See above for more details.\n",
        (0..40)
            .map(|i| format!("PASS src/case{i}.test.js\n"))
            .collect::<String>()
    );
    let summary = summarize(&output, limits());
    assert!(summary.contains("● greeting › greets Ada"), "{summary}");
    assert!(summary.contains("Received: \"Hello, Ada\""), "{summary}");
    assert!(
        summary.contains("Tests:       1 failed, 40 passed, 41 total"),
        "{summary}"
    );
    assert!(summary.ends_with("npm ERR! Test failed.  See above for more details."));
    assert!(!summary.contains("case7.test.js"), "{summary}");
    assert_tests_fail(&output, Some(1));
}

#[test]
fn jest_not_installed() {
    let output = "\n> greet@1.0.0 test\n> jest\n\nsh: 1: jest: not found\nnpm ERR! code 127\n";
    let (class, advice) = classify(output, Some(127));
    assert_eq!(class, FailureClass::Infrastructure);
    assert!(advice.starts_with("`jest` is not installed"), "{advice}");
}

#[test]
fn unittest_failure() {
    let output = format!(
        "{}\
         ======================================================================\n\
         FAIL: test_greeting (tests.test_utils.TestUtils.test_greeting)\n\
         ----------------------------------------------------------------------\n\
         Traceback (most recent call last):\n\
         \x20 File \"/work/app/tests/test_utils.py\", line 6, in test_greeting\n\
         \x20   self.assertEqual(greeting(\"Ada\"), \"Hello, Ada!\")\n\
         AssertionError: 'Hello, Ada' != 'Hello, Ada!'\n\
         \n\
         ----------------------------------------------------------------------\n\
         Ran 45 tests in 0.003s\n\
         \n\
         FAILED (failures=1)\n",
        passing_noise("test_case_", 44)
    );
    let summary = summarize(&output, limits());
    assert!(summary.contains("FAIL: test_greeting"), "{summary}");
    assert!(summary.contains("AssertionError: 'Hello, Ada' != 'Hello, Ada!'"));
    assert!(summary.ends_with("FAILED (failures=1)"));
    assert_tests_fail(&output, Some(1));
}

#[test]
fn every_summary_respects_tight_bounds() {
    let output = format!(
        "{}thread 'x' panicked at src/lib.rs:1:1:\n{}\n",
        passing_noise("test t", 500),
        "ü".repeat(10_000)
    );
    let tight = SummaryLimits {
        max_lines: 8,
        max_bytes: 600,
    };
    let summary = summarize(&output, tight);
    assert!(summary.len() <= 600);
    assert!(summary.lines().count() <= 8);
    assert!(summary.starts_with("test t498 ... ok\ntest t499 ... ok\nthread 'x' panicked"));
}
