//! pytest.
//!
//! pytest closes with one summary line, framed by `=` except with `-q`: `=== 1 failed, 4 passed,
//! 1 skipped, 1 deselected, 1 xfailed, 1 xpassed, 1 error in 0.09s ===`, `no tests ran in
//! 0.01s`, or `1 warning in 0.01s` when no test ran but something warned; the counts are its
//! last such line (warnings and reruns are not tests and are not counted). The cases come from one of two places, never both, as they repeat each other:
//! - with `-v`, the progress lines `tests/test_a.py::test_x PASSED [ 11%]` (also `FAILED`,
//!   `SKIPPED (reason)`, `XFAIL (reason)`, `XPASS`, `ERROR`), which name every test;
//! - otherwise the "short test summary info" section: `FAILED tests/x.py::t - message` and
//!   `ERROR …` by default, every outcome with `-rA`, and `SKIPPED [2] tests/x.py:17: reason`,
//!   which names skipped tests only by location (`tests/x.py:17`, as many cases as it counts).
//!
//! Not read: the progress dots of the default mode, and pytest-xdist's `[gw0]` progress lines.

use super::{number, Cases, Counts, Outcome, Reader, TestResults};

base::regexes! {
    SUMMARY = concat!(
        r"^(?:=+ )?(no tests ran|\d+ [a-z]+(?:, \d+ [a-z]+)*)",
        r" in \d+(?:\.\d+)?s(?: \(\d+:\d\d:\d\d\))?(?: =+)?\s*$",
    );
}

base::regexes! {
    ITEM = r"(\d+) ([a-z]+)";
}

base::regexes! {
    PROGRESS = concat!(
        r"^(\S+::.*?) (PASSED|FAILED|SKIPPED|XFAIL|XPASS|ERROR)",
        r"(?: \(.*\))?(?:\s+\[\s*\d+%\])?\s*$",
    );
}

base::regexes! {
    SHORT_HEADER = r"^=+ short test summary info =+\s*$";
    SHORT = r"^(PASSED|FAILED|ERROR|XFAIL|XPASS) (.+?)\s*$";
    SHORT_SKIPPED = r"^SKIPPED \[(\d+)\] (.+?:\d+): ";
}

/// The results of a pytest run in `text` (ANSI escapes removed), if it has a summary line.
pub fn read(text: &str) -> Option<TestResults> {
    let counts = text.lines().rev().find_map(summary)?;
    let mut progress = Cases::default();
    let mut short = Cases::default();
    let mut in_short = false;
    for line in text.lines() {
        if SHORT_HEADER.is_match(line) {
            in_short = true;
        } else if in_short {
            if let Some(c) = SHORT.captures(line) {
                short.push(node_id(&c[2]), outcome(&c[1]));
            } else if let Some(c) = SHORT_SKIPPED.captures(line) {
                short.push_n(&c[2], Outcome::Skipped, number(&c[1]));
            }
        } else if let Some(c) = PROGRESS.captures(line) {
            progress.push(&c[1], outcome(&c[2]));
        }
    }
    let cases = if progress.is_empty() { short } else { progress };
    Some(cases.results(Reader::Pytest, counts, true))
}

/// The counts of a summary line; `None` for other lines, and for words pytest never prints
/// there (`3 files in 0.1s`).
fn summary(line: &str) -> Option<Counts> {
    let body = SUMMARY.captures(line)?.get(1)?.as_str();
    let mut counts = Counts::default();
    let mut known = body == "no tests ran";
    for item in ITEM.captures_iter(body) {
        let outcome = match &item[2] {
            "passed" => Outcome::Passed,
            "failed" => Outcome::Failed,
            "error" | "errors" => Outcome::Error,
            "skipped" => Outcome::Skipped,
            "deselected" => Outcome::Deselected,
            "xfailed" => Outcome::XFailed,
            "xpassed" => Outcome::XPassed,
            "warning" | "warnings" | "rerun" => {
                known = true;
                continue;
            }
            _ => continue,
        };
        known = true;
        counts.add(outcome, number(&item[1]));
    }
    known.then_some(counts)
}

/// The node id at the start of a short summary entry, before its ` - message`; a ` - ` inside
/// a parameter id's brackets (`test_x[a - b]`) is part of the id.
fn node_id(entry: &str) -> &str {
    let mut depth = 0usize;
    for (at, c) in entry.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            ' ' if depth == 0 && entry[at..].starts_with(" - ") => return &entry[..at],
            _ => {}
        }
    }
    entry
}

fn outcome(word: &str) -> Outcome {
    match word {
        "PASSED" => Outcome::Passed,
        "FAILED" => Outcome::Failed,
        "SKIPPED" => Outcome::Skipped,
        "XFAIL" => Outcome::XFailed,
        "XPASS" => Outcome::XPassed,
        _ => Outcome::Error,
    }
}
