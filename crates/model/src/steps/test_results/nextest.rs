//! `cargo nextest run`.
//!
//! nextest opens with `Starting 4 tests across 2 binaries (1 test skipped)` and closes with
//! `Summary [   0.010s] 4 tests run: 3 passed (1 slow), 1 failed, 1 exec failed, 1 timed out,
//! 1 skipped`; its skipped are the ignored tests and those left out by filters together, read
//! as skipped, and a test binary that could not be run (`exec failed`) is read as an error.
//! With no test to run it says `error: no tests to run`, or starts 0 tests. Each finished test
//! gets a status line `PASS [   0.004s] (1/4) demo tests::adds` (`FAIL`, `SIGSEGV`, `TIMEOUT`,
//! `LEAK`, `FLAKY 2/3`, `SKIP [         ]`, and `XFAIL` for an exec failure; retries' `TRY 2
//! FAIL` lines are not final and not read), named here `binary test` as printed (`demo
//! tests::adds`, `demo::it integration`). By default only passes and failures get one, so the
//! cases are not complete while tests are skipped; the failures repeated after the summary are
//! not read again. Without a `Summary` line (cut off), the counts are the status lines.

use super::{number, Cases, Counts, Outcome, Reader, TestResults};

base::regexes! {
    STARTING = r"^\s*Starting (\d+) tests? across \d+ binar(?:y|ies)(?: \((\d+) tests?\b)?";
    NO_TESTS = r"^error: no tests to run";
    SUMMARY = r"^\s*Summary \[\s*[\d.]+s\] (.*)$";
    ITEM = r"(\d+) (passed|failed|exec failed|timed out|skipped)";
}

base::regexes! {
    /// A status line: the status, then the test (`binary test`). An in-progress `SLOW [> 60.000s]`
    /// has no plain duration and is not one.
    STATUS = concat!(
        r"^\s*([A-Z][A-Z0-9 +/-]*?) \[\s*(?:[\d.]+s)?\s*\] ",
        r"(?:\(\s*\d+/\s*\d+\) )?(\S+ .+?)\s*$",
    );
}

/// The results of a `cargo nextest run` in `text` (ANSI escapes removed), if it has any.
pub fn read(text: &str) -> Option<TestResults> {
    let mut seen = false;
    let mut summary: Option<Counts> = None;
    let mut starting = Counts::default();
    let mut cases = Cases::default();
    let mut after_summary = false;
    for line in text.lines() {
        if let Some(c) = SUMMARY.captures(line) {
            seen = true;
            after_summary = true;
            summary = Some(counts(&c[1]));
        } else if after_summary {
            // nextest repeats the failures after its summary.
            continue;
        } else if let Some(c) = STARTING.captures(line) {
            seen = true;
            starting.skipped = c.get(2).map_or(0, |n| number(n.as_str()));
        } else if NO_TESTS.is_match(line) {
            seen = true;
        } else if let Some(c) = STATUS.captures(line) {
            if let Some(outcome) = status(&c[1]) {
                cases.push(&c[2], outcome);
            }
        }
    }
    if !seen {
        return None;
    }
    let counts = summary.unwrap_or_else(|| {
        let mut counts = cases.counts;
        counts.add_all(&starting);
        counts
    });
    Some(cases.results(Reader::Nextest, counts, true))
}

/// The outcome a final status stands for; `None` for a retry's intermediate `TRY 2 FAIL`.
fn status(word: &str) -> Option<Outcome> {
    Some(match word {
        w if w.starts_with("TRY ") => return None,
        "PASS" | "SLOW" | "LEAK" | "TIMEOUT-PASS" | "TMPASS" | "SLOW + LEAK" | "SLOW+TMPASS" => {
            Outcome::Passed
        }
        w if w.starts_with("FLAKY") => Outcome::Passed,
        "SKIP" => Outcome::Skipped,
        "XFAIL" => Outcome::Error,
        _ => Outcome::Failed,
    })
}

fn counts(summary: &str) -> Counts {
    let mut counts = Counts::default();
    for item in ITEM.captures_iter(summary) {
        let outcome = match &item[2] {
            "passed" => Outcome::Passed,
            "skipped" => Outcome::Skipped,
            "exec failed" => Outcome::Error,
            _ => Outcome::Failed,
        };
        counts.add(outcome, number(&item[1]));
    }
    counts
}
