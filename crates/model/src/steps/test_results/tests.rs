use super::Outcome::{Error, Failed, Passed, Skipped, XFailed, XPassed};
use super::*;

/// What a fixture must read as. Cases are compared sorted: the runners print them in an order
/// that may change when the fixtures are captured again.
struct Expected {
    reader: Reader,
    /// passed, failed, errors, skipped, deselected, xfailed, xpassed
    counts: [u64; 7],
    exact: bool,
    complete: bool,
    cases: &'static [(Outcome, &'static str)],
}

fn counts([passed, failed, errors, skipped, deselected, xfailed, xpassed]: [u64; 7]) -> Counts {
    Counts {
        passed,
        failed,
        errors,
        skipped,
        deselected,
        xfailed,
        xpassed,
    }
}

fn check(name: &str, results: Option<TestResults>, expected: &Expected) {
    let Some(results) = results else {
        panic!("{name}: not recognized");
    };
    assert_eq!(results.reader, expected.reader, "{name}: reader");
    assert_eq!(results.counts, counts(expected.counts), "{name}: counts");
    assert_eq!(results.exact, expected.exact, "{name}: exact");
    assert_eq!(results.complete, expected.complete, "{name}: complete");
    assert_eq!(results.cases_omitted, 0, "{name}: omitted");
    let mut got: Vec<(Outcome, &str)> = results
        .cases
        .iter()
        .map(|c| (c.outcome, c.id.as_str()))
        .collect();
    let mut want = expected.cases.to_vec();
    got.sort_by_key(|&(_, id)| id);
    want.sort_by_key(|&(_, id)| id);
    assert_eq!(got, want, "{name}: cases");
}

const PYTEST_FAILURES: &[(Outcome, &str)] = &[
    (Failed, "tests/test_a.py::test_fail"),
    (Error, "tests/test_a.py::test_error"),
];

const PYTEST_ALL: &[(Outcome, &str)] = &[
    (Passed, "tests/test_a.py::test_pass"),
    (Failed, "tests/test_a.py::test_fail"),
    (Skipped, "tests/test_a.py::test_skip"),
    (XFailed, "tests/test_a.py::test_xfail"),
    (XPassed, "tests/test_a.py::test_xpass"),
    (Error, "tests/test_a.py::test_error"),
    (Passed, "tests/test_a.py::test_param[1]"),
    (Passed, "tests/test_a.py::test_param[2]"),
    (Passed, "tests/test_b.py::test_other"),
];

const PYTEST_COUNTS: [u64; 7] = [4, 1, 1, 1, 1, 1, 1];

const GO_ALL: &[(Outcome, &str)] = &[
    (Passed, "example.com/demo/calc/TestAdd"),
    (Failed, "example.com/demo/calc/TestFail"),
    (Skipped, "example.com/demo/calc/TestSkip"),
    (Failed, "example.com/demo/calc/TestTable"),
    (Passed, "example.com/demo/calc/TestTable/one"),
    (Failed, "example.com/demo/calc/TestTable/two"),
    (Passed, "example.com/demo/green/TestGreen"),
];

const JS_ALL: &[(Outcome, &str)] = &[
    (Passed, "math.test.js > add > adds"),
    (Failed, "math.test.js > add > fails"),
    (Skipped, "math.test.js > add > skipped"),
    (Skipped, "math.test.js > add > todo"),
    (Passed, "math.test.js > top level"),
    (Passed, "green.test.js > green"),
];

const UNITTEST_FAILURES: &[(Outcome, &str)] = &[
    (Error, "test_calc.CalcTest.test_error"),
    (Failed, "test_calc.CalcTest.test_fail"),
    (XPassed, "test_calc.CalcTest.test_xpass"),
];

/// The outputs the real runners printed (scripts/capture-test-results.sh), and what they say.
fn output_fixtures() -> Vec<(&'static str, &'static str, Expected)> {
    use Reader::*;
    vec![
        (
            "cargo_test.txt",
            include_str!("fixtures/cargo_test.txt"),
            Expected {
                reader: Libtest,
                counts: [4, 1, 0, 1, 1, 0, 0],
                exact: true,
                complete: true,
                cases: &[
                    (Passed, "tests::adds"),
                    (Failed, "tests::fails"),
                    (Skipped, "tests::ignored"),
                    (Passed, "tests::nested::inner"),
                    (Passed, "integration"),
                    (Passed, "src/lib.rs - add (line 3)"),
                ],
            },
        ),
        (
            "cargo_test_none.txt",
            include_str!("fixtures/cargo_test_none.txt"),
            Expected {
                reader: Libtest,
                counts: [0, 0, 0, 0, 6, 0, 0],
                exact: true,
                complete: true,
                cases: &[],
            },
        ),
        (
            "nextest.txt",
            include_str!("fixtures/nextest.txt"),
            Expected {
                reader: Nextest,
                counts: [3, 1, 0, 2, 0, 0, 0],
                exact: true,
                complete: false,
                cases: &[
                    (Failed, "demo tests::fails"),
                    (Passed, "demo tests::adds"),
                    (Passed, "demo tests::nested::inner"),
                    (Passed, "demo::it integration"),
                ],
            },
        ),
        (
            "nextest_none.txt",
            include_str!("fixtures/nextest_none.txt"),
            Expected {
                reader: Nextest,
                counts: [0, 0, 0, 6, 0, 0, 0],
                exact: true,
                complete: false,
                cases: &[],
            },
        ),
        (
            "pytest_q.txt",
            include_str!("fixtures/pytest_q.txt"),
            Expected {
                reader: Pytest,
                counts: PYTEST_COUNTS,
                exact: true,
                complete: false,
                cases: PYTEST_FAILURES,
            },
        ),
        (
            "pytest_color.txt",
            include_str!("fixtures/pytest_color.txt"),
            Expected {
                reader: Pytest,
                counts: PYTEST_COUNTS,
                exact: true,
                complete: false,
                cases: PYTEST_FAILURES,
            },
        ),
        (
            "pytest_verbose.txt",
            include_str!("fixtures/pytest_verbose.txt"),
            Expected {
                reader: Pytest,
                counts: PYTEST_COUNTS,
                exact: true,
                complete: true,
                cases: PYTEST_ALL,
            },
        ),
        (
            "pytest_none.txt",
            include_str!("fixtures/pytest_none.txt"),
            Expected {
                reader: Pytest,
                counts: [0, 0, 0, 0, 10, 0, 0],
                exact: true,
                complete: true,
                cases: &[],
            },
        ),
        (
            "pytest_empty.txt",
            include_str!("fixtures/pytest_empty.txt"),
            Expected {
                reader: Pytest,
                counts: [0; 7],
                exact: true,
                complete: true,
                cases: &[],
            },
        ),
        (
            "pytest_warning_only.txt",
            include_str!("fixtures/pytest_warning_only.txt"),
            Expected {
                reader: Pytest,
                counts: [0; 7],
                exact: true,
                complete: true,
                cases: &[],
            },
        ),
        (
            "pytest_collect_error.txt",
            include_str!("fixtures/pytest_collect_error.txt"),
            Expected {
                reader: Pytest,
                counts: [0, 0, 1, 0, 0, 0, 0],
                exact: true,
                complete: true,
                cases: &[(Error, "tests/test_broken.py")],
            },
        ),
        (
            "go_test.txt",
            include_str!("fixtures/go_test.txt"),
            Expected {
                reader: GoTest,
                counts: [0, 3, 0, 0, 0, 0, 0],
                exact: false,
                complete: false,
                cases: &[
                    (Failed, "example.com/demo/calc/TestFail"),
                    (Failed, "example.com/demo/calc/TestTable"),
                    (Failed, "example.com/demo/calc/TestTable/two"),
                ],
            },
        ),
        (
            "go_test_verbose.txt",
            include_str!("fixtures/go_test_verbose.txt"),
            Expected {
                reader: GoTest,
                counts: [3, 3, 0, 1, 0, 0, 0],
                exact: true,
                complete: true,
                cases: GO_ALL,
            },
        ),
        (
            "go_test_json.txt",
            include_str!("fixtures/go_test_json.txt"),
            Expected {
                reader: GoTest,
                counts: [3, 3, 0, 1, 0, 0, 0],
                exact: true,
                complete: true,
                cases: GO_ALL,
            },
        ),
        (
            "go_test_none.txt",
            include_str!("fixtures/go_test_none.txt"),
            Expected {
                reader: GoTest,
                counts: [0; 7],
                exact: true,
                complete: true,
                cases: &[],
            },
        ),
        (
            "go_test_build_failed.txt",
            include_str!("fixtures/go_test_build_failed.txt"),
            Expected {
                reader: GoTest,
                counts: [0, 0, 1, 0, 0, 0, 0],
                exact: false,
                complete: false,
                cases: &[(Error, "example.com/demo/broken")],
            },
        ),
        (
            "jest.txt",
            include_str!("fixtures/jest.txt"),
            Expected {
                reader: Jest,
                counts: [3, 1, 0, 2, 0, 0, 0],
                exact: true,
                complete: false,
                cases: &[(Failed, "math.test.js > add > fails")],
            },
        ),
        (
            "jest_verbose.txt",
            include_str!("fixtures/jest_verbose.txt"),
            Expected {
                reader: Jest,
                counts: [3, 1, 0, 2, 0, 0, 0],
                exact: true,
                complete: true,
                cases: JS_ALL,
            },
        ),
        (
            "jest_none.txt",
            include_str!("fixtures/jest_none.txt"),
            Expected {
                reader: Jest,
                counts: [0, 0, 0, 6, 0, 0, 0],
                exact: true,
                complete: false,
                cases: &[],
            },
        ),
        (
            "jest_no_files.txt",
            include_str!("fixtures/jest_no_files.txt"),
            Expected {
                reader: Jest,
                counts: [0; 7],
                exact: true,
                complete: true,
                cases: &[],
            },
        ),
        (
            "jest_suite_error.txt",
            include_str!("fixtures/jest_suite_error.txt"),
            Expected {
                reader: Jest,
                counts: [1, 0, 1, 0, 0, 0, 0],
                exact: true,
                complete: false,
                cases: &[(Error, "broken.test.js")],
            },
        ),
        (
            "vitest.txt",
            include_str!("fixtures/vitest.txt"),
            Expected {
                reader: Vitest,
                counts: [3, 1, 0, 2, 0, 0, 0],
                exact: true,
                complete: false,
                cases: &[(Failed, "math.test.js > add > fails")],
            },
        ),
        (
            "vitest_verbose.txt",
            include_str!("fixtures/vitest_verbose.txt"),
            Expected {
                reader: Vitest,
                counts: [3, 1, 0, 2, 0, 0, 0],
                exact: true,
                complete: true,
                cases: JS_ALL,
            },
        ),
        (
            "vitest_no_files.txt",
            include_str!("fixtures/vitest_no_files.txt"),
            Expected {
                reader: Vitest,
                counts: [0; 7],
                exact: true,
                complete: true,
                cases: &[],
            },
        ),
        (
            "vitest_suite_error.txt",
            include_str!("fixtures/vitest_suite_error.txt"),
            Expected {
                reader: Vitest,
                counts: [1, 0, 1, 0, 0, 0, 0],
                exact: true,
                complete: false,
                cases: &[(Error, "broken.test.js")],
            },
        ),
        (
            "unittest.txt",
            include_str!("fixtures/unittest.txt"),
            Expected {
                reader: Unittest,
                counts: [2, 1, 1, 1, 0, 1, 1],
                exact: true,
                complete: false,
                cases: UNITTEST_FAILURES,
            },
        ),
        (
            "unittest_verbose.txt",
            include_str!("fixtures/unittest_verbose.txt"),
            Expected {
                reader: Unittest,
                counts: [2, 1, 1, 1, 0, 1, 1],
                exact: true,
                complete: true,
                cases: &[
                    (Passed, "test_calc.CalcTest.test_add"),
                    (Error, "test_calc.CalcTest.test_error"),
                    (Failed, "test_calc.CalcTest.test_fail"),
                    (Skipped, "test_calc.CalcTest.test_skip"),
                    (XFailed, "test_calc.CalcTest.test_xfail"),
                    (XPassed, "test_calc.CalcTest.test_xpass"),
                    (Passed, "test_calc.OtherTest.test_ok"),
                ],
            },
        ),
        (
            "unittest_ok.txt",
            include_str!("fixtures/unittest_ok.txt"),
            Expected {
                reader: Unittest,
                counts: [2, 0, 0, 0, 0, 0, 0],
                exact: true,
                complete: false,
                cases: &[],
            },
        ),
        (
            "unittest_none.txt",
            include_str!("fixtures/unittest_none.txt"),
            Expected {
                reader: Unittest,
                counts: [0; 7],
                exact: true,
                complete: true,
                cases: &[],
            },
        ),
    ]
}

/// The JUnit XML reports the real runners wrote.
fn junit_fixtures() -> Vec<(&'static str, &'static str, Expected)> {
    vec![
        (
            "pytest_junit.xml",
            include_str!("fixtures/pytest_junit.xml"),
            Expected {
                reader: Reader::Junit,
                // pytest writes its non-strict xpass as a plain pass.
                counts: [5, 1, 1, 1, 0, 1, 0],
                exact: true,
                complete: true,
                cases: &[
                    (Passed, "tests.test_a::test_pass"),
                    (Failed, "tests.test_a::test_fail"),
                    (Skipped, "tests.test_a::test_skip"),
                    (XFailed, "tests.test_a::test_xfail"),
                    (Passed, "tests.test_a::test_xpass"),
                    (Error, "tests.test_a::test_error"),
                    (Passed, "tests.test_a::test_param[1]"),
                    (Passed, "tests.test_a::test_param[2]"),
                    (Passed, "tests.test_b::test_other"),
                ],
            },
        ),
        (
            "nextest_junit.xml",
            include_str!("fixtures/nextest_junit.xml"),
            Expected {
                reader: Reader::Junit,
                // nextest leaves skipped tests out of its report.
                counts: [3, 1, 0, 0, 0, 0, 0],
                exact: true,
                complete: true,
                cases: &[
                    (Passed, "demo::tests::adds"),
                    (Failed, "demo::tests::fails"),
                    (Passed, "demo::tests::nested::inner"),
                    (Passed, "demo::it::integration"),
                ],
            },
        ),
        (
            "jest_junit.xml",
            include_str!("fixtures/jest_junit.xml"),
            Expected {
                reader: Reader::Junit,
                // jest-junit writes a todo as a plain pass.
                counts: [4, 1, 0, 1, 0, 0, 0],
                exact: true,
                complete: true,
                cases: &[
                    (Passed, "add adds"),
                    (Failed, "add fails"),
                    (Skipped, "add skipped"),
                    (Passed, "add todo"),
                    (Passed, "top level"),
                    (Passed, "green"),
                ],
            },
        ),
        (
            "vitest_junit.xml",
            include_str!("fixtures/vitest_junit.xml"),
            Expected {
                reader: Reader::Junit,
                counts: [3, 1, 0, 2, 0, 0, 0],
                exact: true,
                complete: true,
                cases: &[
                    (Passed, "green.test.js::green"),
                    (Passed, "math.test.js::add > adds"),
                    (Failed, "math.test.js::add > fails"),
                    (Skipped, "math.test.js::add > skipped"),
                    (Skipped, "math.test.js::add > todo"),
                    (Passed, "math.test.js::top level"),
                ],
            },
        ),
    ]
}

#[test]
fn the_real_runners_outputs_read_as_they_say() {
    for (name, text, expected) in output_fixtures() {
        check(name, read_output(text), &expected);
    }
}

#[test]
fn the_real_runners_junit_reports_read_as_they_say() {
    for (name, xml, expected) in junit_fixtures() {
        check(name, read_junit(xml).ok(), &expected);
    }
}

#[test]
fn each_output_is_recognized_by_its_own_reader_only() {
    type Read = fn(&str) -> Option<TestResults>;
    let readers: [(Reader, Read); 7] = [
        (Reader::Libtest, libtest::read),
        (Reader::Nextest, nextest::read),
        (Reader::GoTest, gotest::read),
        (Reader::Jest, jest::read),
        (Reader::Vitest, vitest::read),
        (Reader::Unittest, unittest::read),
        (Reader::Pytest, pytest::read),
    ];
    for (name, text, expected) in output_fixtures() {
        let text = strip_ansi(text);
        for (reader, read) in &readers {
            let recognized = read(&text).is_some();
            assert_eq!(
                recognized,
                *reader == expected.reader,
                "{name} read by the {reader:?} reader"
            );
        }
    }
}

#[test]
fn empty_runs_are_runs_that_executed_no_test() {
    let empty = [
        "cargo_test_none.txt",
        "nextest_none.txt",
        "pytest_none.txt",
        "pytest_empty.txt",
        "pytest_warning_only.txt",
        "go_test_none.txt",
        "jest_none.txt",
        "jest_no_files.txt",
        "vitest_no_files.txt",
        "unittest_none.txt",
    ];
    for (name, text, _) in output_fixtures() {
        let results = read_output(text).expect(name);
        assert_eq!(results.ran_no_tests(), empty.contains(&name), "{name}");
    }
}

#[test]
fn a_run_whose_every_test_was_skipped_executed_none() {
    let ignored = "running 2 tests\ntest a ... ignored\ntest b ... ignored\n\ntest result: ok. 0 passed; 0 failed; 2 ignored; 0 measured; 0 filtered out\n";
    assert!(read_output(ignored).expect("cargo test").ran_no_tests());
    let skipped = "ss\n2 skipped in 0.01s\n";
    assert!(read_output(skipped).expect("pytest").ran_no_tests());
    let one_ran = "s.\n1 passed, 1 skipped in 0.01s\n";
    assert!(!read_output(one_ran).expect("pytest").ran_no_tests());
}

#[test]
fn nothing_known_is_nothing_read() {
    for text in [
        "",
        "\n\n\n",
        "all good\n",
        "Compiling demo v0.1.0\nerror[E0425]: cannot find value `x`\n",
        "\u{0}\u{1}\u{fffd}<<<>>> ::: --- ===\n",
        "3 files in 0.12s\n",
        "Tests: many\n",
        "{\"Action\": 3}\n{not json\n",
    ] {
        assert_eq!(read_output(text), None, "{text:?}");
    }
}

#[test]
fn a_cargo_workspace_sums_every_binary_and_the_doc_tests() {
    let text = "\
running 2 tests
test a::one ... ok
test a::two ... ignored, needs a network
test result: ok. 1 passed; 0 failed; 1 ignored; 0 measured; 2 filtered out; finished in 0.00s

running 3 tests
test b ... ok <0.001s>
test c ... FAILED
test d ... ok
test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s

   Doc-tests a

running 1 test
test src/lib.rs - f (line 3) ... ok
test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 5 filtered out; finished in 0.00s
";
    let results = read_output(text).expect("cargo test");
    assert_eq!(results.counts, counts([4, 1, 0, 1, 7, 0, 0]));
    assert!(results.complete);
    assert_eq!(results.cases.len(), 6);
    assert_eq!(results.cases[1].outcome, Skipped);
    assert_eq!(results.cases[2].id, "b");
}

#[test]
fn a_cargo_binary_cut_off_before_its_result_counts_its_test_lines() {
    let text = "running 1 test\ntest a ... ok\ntest result: ok. 1 passed; 0 failed\n\nrunning 2 tests\ntest b ... ok\ntest c ... FAILED\n";
    let results = read_output(text).expect("cargo test");
    assert_eq!(results.counts, counts([2, 1, 0, 0, 0, 0, 0]));
}

#[test]
fn ansi_escapes_do_not_hide_the_words() {
    let text = "\u{1b}[1mrunning 1 test\u{1b}[0m\ntest \u{1b}[32ma\u{1b}[0m ... \u{1b}[32mok\u{1b}[0m\n\ntest result: \u{1b}[32mok\u{1b}[0m. 1 passed; 0 failed\n";
    let results = read_output(text).expect("cargo test");
    assert_eq!(results.counts.passed, 1);
    assert_eq!(results.cases[0].id, "a");
}

#[test]
fn pytest_summaries_in_every_frame() {
    for (line, expected) in [
        ("1 failed, 2 passed in 0.03s", [2, 1, 0, 0, 0, 0, 0]),
        (
            "=== 1 failed, 2 passed, 1 skipped, 1 deselected, 1 xfailed, 2 errors in 0.12s ===",
            [2, 1, 2, 1, 1, 1, 0],
        ),
        (
            "==== 3 passed, 1 warning in 65.12s (0:01:05) ====",
            [3, 0, 0, 0, 0, 0, 0],
        ),
        (
            "= 1 xpassed, 1 error, 2 rerun in 1s =",
            [0, 0, 1, 0, 0, 0, 1],
        ),
    ] {
        let results = read_output(&format!("..\n{line}\n")).expect(line);
        assert_eq!(results.reader, Reader::Pytest, "{line}");
        assert_eq!(results.counts, counts(expected), "{line}");
    }
}

#[test]
fn pytest_short_summary_names_skips_by_location_as_often_as_counted() {
    let text = "\
=========================== short test summary info ============================
PASSED tests/x.py::t
SKIPPED [2] tests/x.py:3: no network
FAILED tests/x.py::u[a - b] - AssertionError: a - b
== 1 failed, 1 passed, 2 skipped in 0.1s ==
";
    let results = read_output(text).expect("pytest");
    let cases: Vec<(Outcome, &str)> = results
        .cases
        .iter()
        .map(|c| (c.outcome, c.id.as_str()))
        .collect();
    assert_eq!(
        cases,
        [
            (Passed, "tests/x.py::t"),
            (Skipped, "tests/x.py:3"),
            (Skipped, "tests/x.py:3"),
            (Failed, "tests/x.py::u[a - b]"),
        ]
    );
    assert!(results.complete);
}

#[test]
fn vitest_and_go_summaries_written_by_hand_from_their_formats() {
    let vitest = read_output(" Test Files  1 failed (1)\n      Tests  1 failed | 3 passed (4)\n")
        .expect("vitest");
    assert_eq!(vitest.reader, Reader::Vitest);
    assert_eq!(vitest.counts, counts([3, 1, 0, 0, 0, 0, 0]));
    let nothing =
        read_output(" Test Files  1 failed (1)\n      Tests  no tests\n").expect("vitest");
    assert_eq!(nothing.counts, Counts::default());

    let go = read_output("ok  \texample.com/a\t0.004s\n?   \texample.com/cmd\t[no test files]\n")
        .expect("go");
    assert_eq!(go.reader, Reader::GoTest);
    assert!(!go.exact && !go.ran_no_tests());

    let unittest = read_output("Ran 0 tests in 0.000s\n\nNO TESTS RAN\n").expect("unittest");
    assert!(unittest.ran_no_tests());
    let old = read_output("test_x (mod.Case) ... ok\n\nRan 1 test in 0.1s\n\nOK\n").expect("old");
    assert_eq!(old.cases[0].id, "mod.Case.test_x");
}

#[test]
fn junit_suites_nest_and_a_lone_suite_is_a_report() {
    let nested = r#"<?xml version="1.0"?>
<testsuites>
  <testsuite name="outer">
    <testsuite name="inner">
      <testcase classname="pkg" name="TestA"/>
      <testcase classname="pkg" name="TestB"><failure message="x">boom &amp; more</failure></testcase>
    </testsuite>
    <testcase classname="pkg" name="TestC"><skipped/><system-out>out</system-out></testcase>
    <testcase classname="pkg" name="TestD"><failure/><error/></testcase>
    <testcase name="TestE"><flakyFailure/></testcase>
  </testsuite>
</testsuites>"#;
    let results = read_junit(nested).expect("nested suites");
    assert_eq!(results.counts, counts([2, 1, 1, 1, 0, 0, 0]));
    let ids: Vec<&str> = results.cases.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "pkg::TestA",
            "pkg::TestB",
            "pkg::TestC",
            "pkg::TestD",
            "TestE"
        ]
    );
    let lone = read_junit(r#"<testsuite tests="1"><testcase name="t"/></testsuite>"#);
    assert_eq!(lone.map(|r| r.counts.passed), Ok(1));
}

#[test]
fn junit_errors_say_what_is_wrong() {
    assert_eq!(read_junit(""), Err(JunitError::Empty));
    assert_eq!(read_junit("\u{feff} \n"), Err(JunitError::Empty));
    assert_eq!(
        read_junit("<coverage/>"),
        Err(JunitError::NotJunit("coverage".into()))
    );
    assert_eq!(
        read_junit("<testsuites><testsuite><testcase name=\"a\">"),
        Err(JunitError::Truncated("testcase".into()))
    );
    assert!(matches!(
        read_junit("<testsuites><testsuite></testsuites>"),
        Err(JunitError::Xml { .. })
    ));
    assert!(matches!(
        read_junit("<testsuites><testcase name=\"a></testsuites>"),
        Err(JunitError::Xml { .. } | JunitError::Attribute(_) | JunitError::Truncated(_))
    ));
    assert!(read_junit("not xml at all").is_err());
}

#[test]
fn every_cut_of_a_report_or_an_output_reads_without_panicking() {
    for (name, xml, _) in junit_fixtures() {
        // Every cut before the root element's end is an error.
        let root_end = xml.trim_end().len();
        for end in (0..root_end).filter(|&i| xml.is_char_boundary(i)) {
            assert!(read_junit(&xml[..end]).is_err(), "{name} cut at {end}");
        }
        assert!(read_junit(&xml[..root_end]).is_ok(), "{name}");
    }
    for (name, text, _) in output_fixtures() {
        let mut cut = 0;
        for line in text.split_inclusive('\n') {
            cut += line.len();
            let _ = read_output(&text[..cut]);
        }
        assert_eq!(cut, text.len(), "{name}");
    }
}

#[test]
fn cases_are_capped_and_the_rest_counted() {
    let n = MAX_CASES + 5;
    let mut text = format!("running {n} tests\n");
    for i in 0..n {
        text.push_str(&format!("test t{i} ... ok\n"));
    }
    text.push_str(&format!(
        "test result: ok. {n} passed; 0 failed; 0 ignored\n"
    ));
    let results = read_output(&text).expect("cargo test");
    assert_eq!(results.cases.len(), MAX_CASES);
    assert_eq!(results.cases_omitted, 5);
    assert_eq!(results.counts.passed, n as u64);
    assert!(results.complete);
}

#[test]
fn a_huge_line_is_read_and_a_huge_name_is_cut() {
    let name = "é".repeat(2 * MAX_ID_BYTES);
    let noise = "x".repeat(4 << 20);
    let text = format!("{noise}\nrunning 1 test\ntest {name} ... FAILED\n{noise}\ntest result: FAILED. 0 passed; 1 failed\n");
    let results = read_output(&text).expect("cargo test");
    assert_eq!(results.counts.failed, 1);
    let id = &results.cases[0].id;
    assert!(
        id.len() <= MAX_ID_BYTES && id.ends_with('…'),
        "{}",
        id.len()
    );
    assert!(id.starts_with("éé"));

    let go = format!("--- FAIL: {name} (0.00s)\nFAIL\t{name}\t0.01s\n");
    let results = read_output(&go).expect("go test");
    assert!(results.cases[0].id.len() <= MAX_ID_BYTES);
}

#[test]
fn counts_never_overflow() {
    let text = "test result: ok. 99999999999999999999999 passed; 18446744073709551615 failed\ntest result: ok. 1 failed\n";
    let results = read_output(text).expect("cargo test");
    assert_eq!(results.counts.passed, u64::MAX);
    assert_eq!(results.counts.failed, u64::MAX);
    assert_eq!(results.counts.executed(), u64::MAX);
    let skipped = "SKIPPED [99999999999999] a.py:1: x\n";
    let text = format!("=== short test summary info ===\n{skipped}= 1 skipped in 1s =\n");
    let results = read_output(&text).expect("pytest");
    assert_eq!(results.cases.len(), MAX_CASES);
}

#[test]
fn results_round_trip_through_json() {
    let results = read_output(include_str!("fixtures/pytest_verbose.txt")).expect("pytest");
    let json = serde_json::to_string(&results).expect("serializes");
    assert!(json.contains(r#""outcome":"xpassed""#), "{json}");
    let back: TestResults = serde_json::from_str(&json).expect("deserializes");
    assert_eq!(back, results);
}

#[test]
fn nextest_status_lines_and_summary_as_its_displayer_writes_them() {
    // Lines the fixtures lack, in the formats of nextest-runner 0.129's displayer
    // (reporter/displayer/imp.rs).
    let text = "\
    Starting 5 tests across 2 binaries (2 tests skipped)
        PASS [   0.004s] ( 1/5) demo tests::adds
  TRY 1 FAIL [   0.005s] ( 2/5) demo tests::flaky
       FLAKY 2/2 [   0.003s] ( 2/5) demo tests::flaky
        FAIL [   0.005s] ( 3/5) demo tests::fails
       XFAIL [   0.000s] ( 4/5) demo::it broken
        SKIP [         ] demo tests::ignored
        SLOW [> 60.000s] demo tests::slow
     SIGSEGV [   0.010s] ( 5/5) demo tests::crashes
────────────
     Summary [   0.020s] 5 tests run: 2 passed (1 flaky), 2 failed, 1 exec failed, 2 skipped
        FAIL [   0.005s] ( 3/5) demo tests::fails
error: test run failed
";
    let results = read_output(text).expect("nextest");
    assert_eq!(results.reader, Reader::Nextest);
    assert_eq!(results.counts, counts([2, 2, 1, 2, 0, 0, 0]));
    let cases: Vec<(Outcome, &str)> = results
        .cases
        .iter()
        .map(|c| (c.outcome, c.id.as_str()))
        .collect();
    assert_eq!(
        cases,
        [
            (Passed, "demo tests::adds"),
            (Passed, "demo tests::flaky"),
            (Failed, "demo tests::fails"),
            (Error, "demo::it broken"),
            (Skipped, "demo tests::ignored"),
            (Failed, "demo tests::crashes"),
        ]
    );
    assert!(!results.complete);

    let cut = "    Starting 2 tests across 1 binary (1 test and 1 binary skipped)\n        PASS [   0.004s] demo a\n";
    let results = read_output(cut).expect("nextest cut off");
    assert_eq!(results.counts, counts([1, 0, 0, 1, 0, 0, 0]));
}

#[test]
fn random_mixtures_of_the_runners_words_never_panic() {
    const WORDS: &[&str] = &[
        "\n",
        " ",
        "  ",
        "\t",
        "running ",
        "test ",
        " ... ",
        "ok",
        "FAILED",
        "ignored",
        "; ",
        "test result: ok. ",
        " passed",
        " failed",
        " filtered out",
        "=== ",
        " in 0.1s",
        ", ",
        "1",
        "0",
        "99999999999999999999999",
        "::",
        "[",
        "]",
        "SKIPPED [",
        "] a.py:3: ",
        "short test summary info",
        "--- PASS: ",
        "--- FAIL: ",
        "ok  \t",
        "FAIL\t",
        "?   \t",
        " [no test files]",
        " (0.00s)",
        "{\"Action\":\"fail\",\"Package\":\"p\",\"Test\":\"T\"}",
        "Tests:  ",
        " total",
        "PASS ",
        "FAIL ./a.test.js",
        "✓ ",
        "✕ ",
        "○ skipped ",
        "● ",
        " › ",
        " > ",
        "Tests  ",
        " | ",
        " (4)",
        "Ran ",
        " tests in 0.1s",
        "OK",
        "FAILED (",
        "failures=",
        ")",
        "Summary [   0.1s] ",
        "Starting ",
        " tests across 1 binary",
        "<testsuites>",
        "<testsuite>",
        "<testcase name=\"a\"",
        " classname=\"c\"",
        ">",
        "/>",
        "<failure/>",
        "<skipped type=\"pytest.xfail\"/>",
        "</testcase>",
        "</testsuite>",
        "&amp;",
        "&bogus;",
        "<![CDATA[x]]>",
        "\u{1b}[31m",
        "\u{1b}[0m",
        "é",
        "\r",
        "\u{0}",
    ];
    // A fixed linear congruential generator: the same mixtures on every run.
    let mut state: u64 = 42;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    let mut recognized = 0;
    for _ in 0..3000 {
        let len = next() % 60;
        let text: String = (0..len).map(|_| WORDS[next() % WORDS.len()]).collect();
        if let Some(results) = read_output(&text) {
            recognized += 1;
            assert!(results.cases.len() <= MAX_CASES);
            assert!(results.cases.iter().all(|c| c.id.len() <= MAX_ID_BYTES));
        }
        let _ = read_junit(&text);
        let _ = read_junit(&format!("<testsuites>{text}"));
    }
    // The mixtures do reach the readers.
    assert!(recognized > 100, "{recognized}");
}

#[test]
fn a_tally_says_what_ran_in_the_runners_words() {
    let tally = |tallied: [u64; 7], exact: bool, reader: Reader| Tally {
        reader,
        counts: counts(tallied),
        exact,
    };
    let table = [
        (
            tally([3, 0, 0, 1, 2, 0, 0], true, Reader::Pytest),
            "3 passed, 1 skipped, 2 deselected (pytest)",
        ),
        (
            tally([0, 0, 0, 0, 1, 0, 0], true, Reader::Libtest),
            "no test ran: 1 deselected (cargo test)",
        ),
        (
            tally([0, 0, 0, 0, 0, 0, 0], true, Reader::Jest),
            "no test ran (jest)",
        ),
        (
            tally([0, 1, 0, 0, 0, 0, 0], false, Reader::GoTest),
            "1 failed (go test, counts incomplete)",
        ),
        (
            tally([0, 0, 0, 0, 0, 0, 0], false, Reader::GoTest),
            "no counts (go test, counts incomplete)",
        ),
    ];
    for (tally, expected) in table {
        assert_eq!(tally.to_string(), expected);
    }
}
