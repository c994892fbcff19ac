//! Regression: failing tests were advised "the code does not compile" because any line starting
//! with `error: ` counted as a compiler error, and compile errors were looked for first. The
//! outputs here are verbatim from real runs (cargo 1.9x, the demo project's shell test runner).

use autobuild::steps::check::FailureClass;
use autobuild::steps::classify::classify;

const TESTS_FAIL: &str = "tests fail";
const DOES_NOT_COMPILE: &str = "the code does not compile";

/// `cargo test` with one failing assertion, including the trailing `error: test failed` line.
const CARGO_TEST_PANIC: &str = "   Compiling uxa_demo v0.1.0 (/tmp/uxa_demo)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.36s
     Running unittests src/lib.rs (target/debug/deps/uxa_demo-08a75e2274cbc8f2)

running 2 tests
test tests::adds ... ok
test tests::greets ... FAILED

failures:

---- tests::greets stdout ----

thread 'tests::greets' (25592) panicked at src/lib.rs:6:27:
assertion `left == right` failed
  left: \"Hello, Ada\"
 right: \"Hello, Ada!\"
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    tests::greets

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.11s

error: test failed, to rerun pass `--lib`
";

/// `cargo test` when the library does not type-check.
const CARGO_COMPILE_ERROR: &str = "   Compiling uxa_demo v0.1.0 (/tmp/uxa_demo)
error[E0308]: mismatched types
 --> src/lib.rs:1:41
  |
1 | pub fn greeting(name: &str) -> String { format!(\"Hello, {name}\").len() }
  |                                ------   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ expected `String`, found `usize`
  |                                |
  |                                expected `String` because of return type
  |

For more information about this error, try `rustc --explain E0308`.
error: could not compile `uxa_demo` (lib) due to 1 previous error
warning: build failed, waiting for other jobs to finish...
error: could not compile `uxa_demo` (lib test) due to 1 previous error
";

/// `sh tests/run.sh` of `autobuild demo` on turn 1: the player's greeting lacks the `!`.
const DEMO_SHELL_TESTS: &str = "ok   tests/test_farewell.sh
error: greeting Ada: expected \"Hello, Ada!\", got \"Hello, Ada\"
FAIL tests/test_greeting.sh
1 passed, 1 failed
";

fn advice(output: &str, exit_code: i32) -> String {
    let (class, advice) = classify(output, Some(exit_code));
    assert_eq!(class, FailureClass::Code, "{output}");
    advice
}

#[test]
fn a_panicking_cargo_test_is_a_test_failure() {
    let advice = advice(CARGO_TEST_PANIC, 101);
    assert!(advice.starts_with(TESTS_FAIL), "{advice}");
}

#[test]
fn the_demo_shell_runner_failure_is_a_test_failure() {
    let advice = advice(DEMO_SHELL_TESTS, 1);
    assert!(advice.starts_with(TESTS_FAIL), "{advice}");
}

#[test]
fn a_real_rust_compile_error_is_still_a_compile_error() {
    let advice = advice(CARGO_COMPILE_ERROR, 101);
    assert!(advice.starts_with(DOES_NOT_COMPILE), "{advice}");
}

#[test]
fn a_script_printing_error_lines_without_a_tally_is_not_a_compile_error() {
    let advice = advice("error: config value missing\n", 2);
    assert!(!advice.starts_with(DOES_NOT_COMPILE), "{advice}");
    assert!(advice.contains("exited with code 2"), "{advice}");
}

#[test]
fn every_runner_tally_of_failures_is_a_test_failure() {
    for output in [
        "=========================== 2 failed, 5 passed in 0.31s ===========================\n",
        "FAILED tests/test_utils.py::test_greeting - assert 'Hi' == 'Hello'\n",
        "Tests:       1 failed, 3 passed, 4 total\n",
        " Tests  1 failed | 2 passed (3)\n",
        "  2 passing (8ms)\n  1 failing\n",
        "--- FAIL: TestGreeting (0.00s)\n",
        "FAIL\texample.com/greet\t0.002s\n",
        "Ran 3 tests in 0.001s\n\nFAILED (failures=1)\n",
        "3 failed; 7 passed\n",
    ] {
        let advice = advice(output, 1);
        assert!(advice.starts_with(TESTS_FAIL), "{output}: {advice}");
    }
}

#[test]
fn compiler_and_interpreter_errors_of_each_ecosystem_are_compile_errors() {
    for output in [
        "error: aborting due to 2 previous errors\n",
        "  File \"src/utils.py\", line 3\n    def greeting(name)\n                      ^\nSyntaxError: expected ':'\n",
        "E     File \"/w/tests/test_utils.py\", line 3\nE       def f(\nE            ^\nE   SyntaxError: '(' was never closed\n1 error in 0.08s\n",
        "IndentationError: unexpected indent\n",
        "# example.com/greet\n./greet.go:5:2: undefined: nme\n",
        "src/greet.ts(3,5): error TS2322: Type 'number' is not assignable to type 'string'.\n",
        "src/greet.c:3:5: error: expected ';' before '}' token\n",
        "Greet.java:4: error: ';' expected\n",
        "[ERROR] COMPILATION ERROR :\n",
    ] {
        let advice = advice(output, 1);
        assert!(advice.starts_with(DOES_NOT_COMPILE), "{output}: {advice}");
    }
}

#[test]
fn a_type_error_that_stops_a_jest_suite_is_a_compile_error() {
    let output = " FAIL  src/greet.test.ts
  ● Test suite failed to run

    src/greet.ts:2:3 - error TS2322: Type 'number' is not assignable to type 'string'.

Test Suites: 1 failed, 1 total
Tests:       0 total
";
    let advice = advice(output, 1);
    assert!(advice.starts_with(DOES_NOT_COMPILE), "{advice}");
}
