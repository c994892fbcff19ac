//! `go test`, plain, `-v` and `-json`.
//!
//! Each package closes with one line: `ok  <pkg>  0.01s` (or `(cached)`, with `[no tests to
//! run]` when `-run` matched nothing), `FAIL <pkg> 0.02s`, `FAIL <pkg> [build failed]` (or
//! `[setup failed]`), or `?   <pkg>  [no test files]`. Tests and subtests close with `--- PASS:
//! TestX (0.00s)`, `--- FAIL:` or `--- SKIP:` (indented for subtests); a package prints its
//! test lines before its own line, so each case is named `<pkg>/TestX` (`<pkg>/TestX/sub`).
//! `-json` prints the same as events, one JSON object a line: `{"Action":"pass","Package":…,
//! "Test":…}`.
//!
//! The counts are the test lines or events, subtests included as separate tests (as gotestsum
//! counts), and a package that does not build as one error. Without `-v`, `go test` prints
//! test lines only for failures and says `ok <pkg>` for a passing package without counting
//! its tests: then the counts are not exact ([`TestResults::exact`]), unless every package
//! ran no tests at all. Not read: benchmarks, examples' own lines, and a test binary killed by
//! a timeout (its running test has no closing line).

use serde::Deserialize;

use super::{bounded_id, Cases, Outcome, Reader, TestResults, MAX_CASES};

base::regexes! {
    CASE = r"^\s*--- (PASS|FAIL|SKIP): (\S+) \(";
}

base::regexes! {
    /// A package's closing line; group 3 or 4 is its no-tests or failed-build note, if any.
    PACKAGE = concat!(
        r"^(ok|FAIL|\?)\s+(\S+)\s+",
        r"(?:\d+(?:\.\d+)?s|\(cached\)|(\[(?:no test files|build failed|setup failed)\]))",
        r"(?:\s+(\[no tests to run\]))?",
    );
}

base::regexes! {
    NO_TESTS_WARNING = r"^testing: warning: no tests to run";
}

/// One `go test -json` event (`test2json`).
#[derive(Deserialize)]
struct Event {
    #[serde(rename = "Action")]
    action: String,
    #[serde(rename = "Package", default)]
    package: String,
    #[serde(rename = "Test", default)]
    test: Option<String>,
}

/// The results of a `go test` run in `text` (ANSI escapes removed), if it has any.
pub fn read(text: &str) -> Option<TestResults> {
    let mut seen = false;
    let mut verbose = false;
    // Every package line said it ran no tests.
    let mut only_empty_packages = true;
    let mut cases = Cases::default();
    // Test lines of the package whose closing line has not come yet.
    let mut pending: Vec<(String, Outcome)> = Vec::new();
    for line in text.lines() {
        if line.starts_with('{') {
            if let Ok(event) = serde_json::from_str::<Event>(line) {
                seen = true;
                verbose = true;
                json_event(&event, &mut cases);
                continue;
            }
        }
        if line.starts_with("=== RUN") {
            verbose = true;
        } else if let Some(c) = CASE.captures(line) {
            seen = true;
            let outcome = match &c[1] {
                "PASS" => Outcome::Passed,
                "FAIL" => Outcome::Failed,
                _ => Outcome::Skipped,
            };
            if pending.len() < MAX_CASES {
                pending.push((bounded_id(&c[2]), outcome));
            } else {
                cases.omit(outcome);
            }
        } else if let Some(c) = PACKAGE.captures(line) {
            seen = true;
            let package = &c[2];
            for (test, outcome) in pending.drain(..) {
                cases.push(&format!("{package}/{test}"), outcome);
            }
            match c.get(3).or(c.get(4)).map(|note| note.as_str()) {
                Some("[build failed]" | "[setup failed]") => cases.push(package, Outcome::Error),
                Some(_) => {}
                None => only_empty_packages = false,
            }
        } else if NO_TESTS_WARNING.is_match(line) {
            seen = true;
        }
    }
    if !seen {
        return None;
    }
    for (test, outcome) in pending {
        cases.push(&test, outcome);
    }
    let exact = verbose || only_empty_packages;
    let counts = cases.counts;
    Some(cases.results(Reader::GoTest, counts, exact))
}

/// A test's closing event becomes a case; package events and output are not tests.
fn json_event(event: &Event, cases: &mut Cases) {
    let Some(test) = &event.test else {
        return;
    };
    let outcome = match event.action.as_str() {
        "pass" => Outcome::Passed,
        "fail" => Outcome::Failed,
        "skip" => Outcome::Skipped,
        _ => return,
    };
    cases.push(&format!("{}/{test}", event.package), outcome);
}
