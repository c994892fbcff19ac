//! `cargo nextest run`.
//!
//! nextest opens with `Starting 4 tests across 2 binaries (1 test skipped)` and closes with
//! `Summary [   0.010s] 4 tests run: 3 passed, 1 failed, 1 skipped`; its skipped are the
//! ignored tests and those left out by filters together, read as skipped. With no test to run
//! it says `error: no tests to run`, or starts 0 tests. Each finished test gets a status line
//! `PASS [   0.004s] demo tests::adds` (`FAIL`, `SIGSEGV`, `TIMEOUT`, …; `(1/4)` before the
//! binary in newer versions), named here `binary tests::adds`. By default only passes and
//! failures get one, so the cases are not complete while tests are skipped. Without a
//! `Summary` line (cut off), the counts are the status lines.

use std::sync::LazyLock;

use regex::Regex;

use super::{number, Cases, Counts, Outcome, Reader, TestResults};

static STARTING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*Starting (\d+) tests? across \d+ binar(?:y|ies)(?: \((\d+) tests? skipped)?")
        .expect("starting pattern is valid")
});

static NO_TESTS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^error: no tests to run").expect("no tests pattern is valid"));

static SUMMARY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*Summary \[\s*[\d.]+s\] (.*)$").expect("summary pattern is valid")
});

static ITEM: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(\d+) (passed|failed|skipped|timed out)").expect("item pattern is valid")
});

static STATUS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^\s*(PASS|FAIL|SIGSEGV|SIGABRT|SIGBUS|SIGILL|ABORT|TIMEOUT|LEAK-FAIL|LEAK|FLAKY \d+/\d+)",
        r" \[\s*[\d.]+s\] (?:\(\s*\d+/\d+\) )?(\S+ .+?)\s*$",
    ))
    .expect("status pattern is valid")
});

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
            let outcome = match &c[1] {
                "PASS" | "LEAK" => Outcome::Passed,
                status if status.starts_with("FLAKY") => Outcome::Passed,
                _ => Outcome::Failed,
            };
            cases.push(&c[2], outcome);
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

fn counts(summary: &str) -> Counts {
    let mut counts = Counts::default();
    for item in ITEM.captures_iter(summary) {
        let outcome = match &item[2] {
            "passed" => Outcome::Passed,
            "skipped" => Outcome::Skipped,
            _ => Outcome::Failed,
        };
        counts.add(outcome, number(&item[1]));
    }
    counts
}
