//! Python's unittest (`python -m unittest`, and runners that print like it).
//!
//! unittest closes with `Ran 7 tests in 0.001s` and a status line: `OK`, `OK (skipped=1)`,
//! `FAILED (failures=1, errors=1, skipped=1, expected failures=1, unexpected successes=1)`, or
//! `NO TESTS RAN` (Python 3.12+). The counts are those, the passed being the rest of the tests
//! that ran. With `-v` every test gets a line `test_add (test_calc.CalcTest.test_add) ... ok`
//! (`FAIL`, `ERROR`, `skipped 'reason'`, `expected failure`, `unexpected success`); without it,
//! only failures, errors and unexpected successes are named, by their `FAIL: test_x
//! (module.Class.test_x)` headers. Cases are named `module.Class.test_x` (Python before 3.11
//! prints `(module.Class)`, completed here). Not read: a test whose docstring puts its result
//! on a second line under `-v`, and subtests' own parameters.

use super::{number, Cases, Counts, Outcome, Reader, TestResults};

base::regexes! {
    RAN = r"^Ran (\d+) tests? in \d+(?:\.\d+)?s\s*$";
    STATUS = r"^(OK|FAILED|NO TESTS RAN)(?: \((.*)\))?\s*$";
    ITEM = r"(failures|errors|skipped|expected failures|unexpected successes)=(\d+)";
}

base::regexes! {
    VERBOSE = concat!(
        r"^(\w+) \(([\w.]+)\)(?: \(.*\))? \.\.\. ",
        r"(ok|FAIL|ERROR|skipped\b.*|expected failure|unexpected success)\s*$",
    );
}

base::regexes! {
    HEADER = r"^(FAIL|ERROR|UNEXPECTED SUCCESS): (\w+) \(([\w.]+)\)";
}

/// The results of a unittest run in `text` (ANSI escapes removed), if it has a `Ran` line.
pub fn read(text: &str) -> Option<TestResults> {
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().rposition(|line| RAN.is_match(line))?;
    let ran = RAN.captures(lines[at]).map_or(0, |c| number(&c[1]));
    let mut counts = Counts::default();
    let status = lines[at + 1..]
        .iter()
        .find(|line| !line.trim().is_empty())
        .and_then(|line| STATUS.captures(line));
    if let Some(items) = status.as_ref().and_then(|c| c.get(2)) {
        for item in ITEM.captures_iter(items.as_str()) {
            let outcome = match &item[1] {
                "failures" => Outcome::Failed,
                "errors" => Outcome::Error,
                "skipped" => Outcome::Skipped,
                "expected failures" => Outcome::XFailed,
                _ => Outcome::XPassed,
            };
            counts.add(outcome, number(&item[2]));
        }
    }
    let others = counts.listed();
    counts.add(Outcome::Passed, ran.saturating_sub(others));
    let mut verbose = Cases::default();
    let mut headers = Cases::default();
    for line in &lines[..at] {
        if let Some(c) = VERBOSE.captures(line) {
            let outcome = match &c[3] {
                "ok" => Outcome::Passed,
                "FAIL" => Outcome::Failed,
                "ERROR" => Outcome::Error,
                "expected failure" => Outcome::XFailed,
                "unexpected success" => Outcome::XPassed,
                _ => Outcome::Skipped,
            };
            verbose.push(&id(&c[1], &c[2]), outcome);
        } else if let Some(c) = HEADER.captures(line) {
            let outcome = match &c[1] {
                "FAIL" => Outcome::Failed,
                "ERROR" => Outcome::Error,
                _ => Outcome::XPassed,
            };
            headers.push(&id(&c[2], &c[3]), outcome);
        }
    }
    let cases = if verbose.is_empty() { headers } else { verbose };
    Some(cases.results(Reader::Unittest, counts, true))
}

/// `module.Class.test_x` from the method and the parenthesized name, which ends in the method
/// since Python 3.11.
fn id(method: &str, within: &str) -> String {
    if within.ends_with(&format!(".{method}")) {
        within.to_string()
    } else {
        format!("{within}.{method}")
    }
}
