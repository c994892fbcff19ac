//! Normalizing failure text so that the same problem looks the same from turn to turn.
//!
//! Stall detection compares what went wrong across turns. Raw output never repeats exactly: a
//! player renames tests, files move, line numbers shift, durations and counts change, temp
//! directories and hashes are random. Hashing raw feedback therefore never detects a stall. Here
//! those parts are replaced by placeholders, while what identifies the problem (the exception
//! type, the message, the missing module's name, error codes such as `E0308`) is kept.

use std::sync::LazyLock;

use regex::{Captures, Regex};

/// One rewriting rule: what to find and what to put instead.
struct Rule {
    pattern: Regex,
    replacement: &'static str,
}

fn rule(pattern: &str, replacement: &'static str) -> Rule {
    Rule {
        pattern: regex(pattern),
        replacement,
    }
}

/// Compiles one of this module's constant patterns; they are covered by the unit tests.
fn regex(pattern: &str) -> Regex {
    Regex::new(pattern).expect("constant pattern compiles")
}

/// Rules run in order; earlier rules consume text later ones would mangle (a pytest node id
/// before its path, a duration before its number).
static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    vec![
        // Pytest node ids: `tests/test_x.py::TestA::test_b[param-1]`.
        rule(r"[\w./\\-]*\.py::[\w:.\[\]-]+", "<test>"),
        // Rust test paths: `tests::bar`, `crate::module::tests::it_works`.
        rule(r"\b(?:\w+::)*tests?::\w+(?:::\w+)*", "<test>"),
        // Go and JUnit style test names: `TestGreeting`, `TestGreeting/empty_name`.
        rule(r"\bTest[A-Z0-9_]\w*(?:/\w+)*", "<test>"),
        // Test files of JavaScript runners: `greeting.test.ts`, `app.spec.js`.
        rule(r"(?i)\b[\w-]+\.(?:test|spec)\.\w+", "<test>"),
        // UUIDs.
        rule(
            r"(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b",
            "<id>",
        ),
        // Paths with a separator, absolute or relative, Unix or Windows; a lone `/` is not one.
        rule(
            r"(?i)(?:\b[a-z]:)?(?:(?:[\w.~@+-]*[/\\])+[\w.@+-]+|(?:[\w.~@+-]+[/\\])+)",
            "<path>",
        ),
        // Bare file names with a source-like extension.
        rule(
            r"(?i)\b[\w-]+\.(?:py|pyi|rs|js|mjs|cjs|ts|tsx|jsx|go|java|kt|rb|c|h|cc|cpp|hpp|cs|swift|php|sh|toml|ya?ml|json|cfg|ini|lock|txt|md)\b",
            "<path>",
        ),
        // Test functions: `test_foo_v2`, `greeting_test`.
        rule(r"(?i)\b(?:test_\w+|\w+_tests?\b)", "<test>"),
        // Temp names outside paths: `tmpa1b2c3d4`, `.tmpAbC123`.
        rule(r"(?i)\.?\btmp[\w]{4,}", "<tmp>"),
        // Positions: `:12:5`, `:12`, `line 12`, `column 5`.
        rule(r":\d+(?::\d+)?\b", ":<pos>"),
        rule(r"(?i)\b(?:line|ln|col|column)\s*\d+", "<pos>"),
        // Durations: `0.12s`, `12ms`, `in 3.4 seconds`, `(5 ms)`, `1m 30s`.
        rule(
            r"(?i)\b\d+(?:\.\d+)?\s?(?:ns|µs|us|ms|s|secs?|seconds?|m|mins?|minutes?|h|hours?)\b",
            "<duration>",
        ),
        // Hex addresses.
        rule(r"(?i)\b0x[0-9a-f]+\b", "<hex>"),
        // Decorative rules of varying length: `=====`, `_____`, `-----`, `!!!!!`, `*****`.
        rule(r"[=_\-!*#~]{3,}", "<rule>"),
    ]
});

base::regexes! {
    HEX_ID = r"(?i)\b[0-9a-f]{7,}\b";
    NUMBER = r"\b\d+(?:\.\d+)?\b";
    WHITESPACE = r"\s+";
}

/// `text` with the parts that vary between turns replaced by placeholders (`<test>`, `<path>`,
/// `<pos>`, `<duration>`, `<hex>`, `<n>`, …), lowercased, whitespace collapsed.
pub fn normalize(text: &str) -> String {
    let mut text = text.to_string();
    for rule in RULES.iter() {
        text = rule
            .pattern
            .replace_all(&text, rule.replacement)
            .into_owned();
    }
    // Hashes and commit ids: long hex runs mixing digits and letters (so words like
    // "deadbeef" stay words and long decimal numbers become `<n>`).
    text = HEX_ID
        .replace_all(&text, |caps: &Captures| {
            let found = &caps[0];
            let has_digit = found.bytes().any(|b| b.is_ascii_digit());
            let has_letter = found.bytes().any(|b| b.is_ascii_alphabetic());
            if has_digit && has_letter {
                "<hex>".to_string()
            } else {
                found.to_string()
            }
        })
        .into_owned();
    text = NUMBER.replace_all(&text, "<n>").into_owned();
    WHITESPACE.replace_all(text.trim(), " ").to_lowercase()
}

/// Words that mark a line of tool output as part of an error rather than context (source
/// echoes, progress lines, separators).
const ERROR_MARKERS: &[&str] = &[
    "error",
    "exception",
    "failed",
    "failure",
    "panicked",
    "fatal",
    "not found",
    "no such",
    "cannot",
    "can't",
    "could not",
    "unable to",
    "denied",
    "refused",
    "timed out",
    "timeout",
    "undefined",
    "missing",
    "traceback",
    "assert",
];

/// The normalized, de-duplicated, sorted error lines of a check's output: what identifies the
/// failure. Lines of context that a player's rewrite changes (echoed test source, progress
/// dots) are left out; output with no recognizable error line is normalized whole.
pub fn fingerprint(output: &str) -> String {
    let mut lines: Vec<String> = output
        .lines()
        .filter(|line| {
            let lower = line.to_lowercase();
            ERROR_MARKERS.iter().any(|marker| lower.contains(marker))
        })
        .map(normalize)
        .filter(|line| !line.is_empty())
        .collect();
    if lines.is_empty() {
        return normalize(output);
    }
    lines.sort_unstable();
    lines.dedup();
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const PYTEST_IMPORT_FAILURE_A: &str = "\
============================= test session starts ==============================
collected 0 items / 1 error

==================================== ERRORS ====================================
____________________ ERROR collecting tests/test_utils.py _____________________
ImportError while importing test module '/tmp/pytest-of-ci/pytest-3/wt/tests/test_utils.py'.
tests/test_utils.py:1: in <module>
    from src.utils import greeting
src/utils.py:1: in <module>
    import requests
E   ModuleNotFoundError: No module named 'requests'
=========================== short test summary info ============================
ERROR tests/test_utils.py::test_greeting - ModuleNotFoundError: No module named 'requests'
1 error in 0.12s
";

    const PYTEST_IMPORT_FAILURE_B: &str = "\
============================= test session starts ==============================
collected 0 items / 1 error

==================================== ERRORS ====================================
_______________ ERROR collecting tests/unit/test_greeting_v2.py ________________
ImportError while importing test module '/tmp/pytest-of-ci/pytest-7/wt/tests/unit/test_greeting_v2.py'.
tests/unit/test_greeting_v2.py:4: in <module>
    from src.utils import greeting
src/utils.py:2: in <module>
    import requests
E   ModuleNotFoundError: No module named 'requests'
=========================== short test summary info ============================
ERROR tests/unit/test_greeting_v2.py::test_greeting_says_hello_v2 - ModuleNotFoundError: No module named 'requests'
1 error in 1.03s
";

    const PYTEST_ASSERTION_FAILURE: &str = "\
================================== FAILURES ===================================
________________________________ test_greeting ________________________________
tests/test_utils.py:5: in test_greeting
    assert greeting('Ada') == 'Hello, Ada!'
E   AssertionError: assert 'Hi, Ada' == 'Hello, Ada!'
=========================== short test summary info ============================
FAILED tests/test_utils.py::test_greeting - AssertionError: assert 'Hi, Ada' == 'Hello, Ada!'
1 failed in 0.08s
";

    #[test]
    fn same_pytest_failure_under_new_names_paths_lines_and_durations_is_equal() {
        assert_eq!(
            normalize(PYTEST_IMPORT_FAILURE_A),
            normalize(PYTEST_IMPORT_FAILURE_B)
        );
        assert_eq!(
            fingerprint(PYTEST_IMPORT_FAILURE_A),
            fingerprint(PYTEST_IMPORT_FAILURE_B)
        );
    }

    #[test]
    fn different_reasons_stay_different() {
        assert_ne!(
            normalize(PYTEST_IMPORT_FAILURE_A),
            normalize(PYTEST_ASSERTION_FAILURE)
        );
        assert_ne!(
            fingerprint(PYTEST_IMPORT_FAILURE_A),
            fingerprint(PYTEST_ASSERTION_FAILURE)
        );
        assert_ne!(
            normalize("ModuleNotFoundError: No module named 'requests'"),
            normalize("ModuleNotFoundError: No module named 'yaml'")
        );
    }

    #[test]
    fn keeps_error_codes_and_messages() {
        assert_eq!(
            normalize("error[E0308]: mismatched types\n --> src/lib.rs:12:5"),
            "error[e0308]: mismatched types --> <path>:<pos>"
        );
        assert_ne!(
            normalize("error[E0308]: mismatched types"),
            normalize("error[E0599]: no method named `foo`")
        );
    }

    #[test]
    fn replaces_each_kind_of_varying_part() {
        let cases = [
            ("test tests::parses_v2 ... FAILED", "test <test> ... failed"),
            (
                "--- FAIL: TestGreeting/empty (0.00s)",
                "<rule> fail: <test> (<duration>)",
            ),
            ("in test_foo_v2", "in <test>"),
            ("greeting.test.ts failed", "<test> failed"),
            ("at /home/ci/work/src/app.js:10:3", "at <path>:<pos>"),
            ("see C:\\work\\src\\app.rs", "see <path>"),
            ("in utils.py line 12", "in <path> <pos>"),
            ("finished in 3.4 seconds", "finished in <duration>"),
            ("took 12ms", "took <duration>"),
            ("commit 3f2a9c1d0b", "commit <hex>"),
            ("object at 0x7f3a2b", "object at <hex>"),
            ("id 123e4567-e89b-12d3-a456-426614174000", "id <id>"),
            ("dir tmpa1b2c3d4 gone", "dir <tmp> gone"),
            ("3 passed, 1 failed (75%)", "<n> passed, <n> failed (<n>%)"),
            ("Deadbeef  effaced\n\tagain", "deadbeef effaced again"),
        ];
        for (input, expected) in cases {
            assert_eq!(normalize(input), expected, "{input:?}");
        }
    }

    #[test]
    fn fingerprint_keeps_error_lines_only_and_falls_back_to_everything() {
        let a = "    def test_one():\n>       run()\nE   RuntimeError: boom\n";
        let b = "    def test_two_renamed(x):\n>       run(x)\nE   RuntimeError: boom\n";
        assert_eq!(fingerprint(a), fingerprint(b));
        assert_eq!(fingerprint(a), "e runtimeerror: boom");
        assert_eq!(fingerprint("exit status 3"), "exit status <n>");
    }
}
