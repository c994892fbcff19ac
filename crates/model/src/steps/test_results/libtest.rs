//! `cargo test`: Rust's built-in test harness (libtest), once per test binary and once for the
//! doc-tests of each library.
//!
//! Each binary prints `running N tests`, one `test path::to::name ... ok|FAILED|ignored` line
//! per test (`ignored, reason` with a reason; `<0.001s>` after it with `--report-time`), and
//! closes with `test result: ok. 2 passed; 1 failed; 1 ignored; 0 measured; 3 filtered out;
//! finished in 0.01s`. The counts are the sum of every binary's `test result:` line, `ignored`
//! read as skipped and `filtered out` as deselected; a binary cut off before its result line
//! counts the test lines it printed. The cases are the test lines, doc-tests named as printed
//! (`src/lib.rs - add (line 3)`). Not read: `--format json` (unstable) and benchmark lines.

use super::{number, Cases, Counts, Outcome, Reader, TestResults};

base::regexes! {
    RUNNING = r"^running (\d+) tests?\s*$";
    CASE = r"^test (.+?) \.\.\. (ok|FAILED|ignored)(?:, .*)?(?: <[\d.]+s>)?\s*$";
    RESULT = r"^test result: (?:ok|FAILED)\.(.*)$";
    COUNT = r"(\d+) (passed|failed|ignored|filtered out)";
}

/// The results of a `cargo test` run in `text` (ANSI escapes removed), if it has any.
pub fn read(text: &str) -> Option<TestResults> {
    let mut seen = false;
    let mut counts = Counts::default();
    let mut cases = Cases::default();
    // The current binary's test lines, counted until its result line replaces them.
    let mut pending: Option<Counts> = None;
    for line in text.lines() {
        if RUNNING.is_match(line) {
            seen = true;
            if let Some(unfinished) = pending.replace(Counts::default()) {
                counts.add_all(&unfinished);
            }
        } else if let Some(c) = CASE.captures(line) {
            let outcome = match &c[2] {
                "ok" => Outcome::Passed,
                "FAILED" => Outcome::Failed,
                _ => Outcome::Skipped,
            };
            cases.push(&c[1], outcome);
            pending.get_or_insert_with(Counts::default).add(outcome, 1);
        } else if let Some(c) = RESULT.captures(line) {
            seen = true;
            pending = None;
            for item in COUNT.captures_iter(&c[1]) {
                let outcome = match &item[2] {
                    "passed" => Outcome::Passed,
                    "failed" => Outcome::Failed,
                    "ignored" => Outcome::Skipped,
                    _ => Outcome::Deselected,
                };
                counts.add(outcome, number(&item[1]));
            }
        }
    }
    if !seen {
        return None;
    }
    if let Some(unfinished) = pending {
        counts.add_all(&unfinished);
    }
    Some(cases.results(Reader::Libtest, counts, true))
}
