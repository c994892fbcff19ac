//! vitest (version 4's reporters).
//!
//! vitest closes with `      Tests  1 failed | 3 passed | 1 skipped | 1 todo (6)` (todos are
//! read as skipped), or says `No test files found, exiting with code 1`. The default reporter
//! names each test only under its file's line and without its describe blocks, so the cases
//! come from the `--reporter=verbose` lines, `✓ file > describe > name 10ms` (`×` failed, `↓`
//! skipped, `□` todo), or, without them, from the failure headers ` FAIL  file > describe >
//! name`. A test file that does not load (` FAIL  file [ file ]`) is in none of vitest's test
//! counts; it is read as one error named by the file. Not read: the `Test Files` line, and the
//! older tree-shaped verbose reporter of vitest 1 to 3.

use super::jest::counts;
use super::{Cases, Counts, Outcome, Reader, TestResults};

base::regexes! {
    SUMMARY = r"^\s*Tests  +(\d+ [a-z]+(?: \| \d+ [a-z]+)* \(\d+\)|no tests)\s*$";
    NO_TESTS = r"^No test files found\b";
    TEST = r"^\s*(✓|×|↓|□|√) (.+? > .+?)(?: \d+(?:\.\d+)?m?s)?\s*$";
    BROKEN_FILE = r"^ FAIL  (\S+) \[ .+ \]\s*$";
    FAILURE = r"^ FAIL  (.+? > .+?)\s*$";
}

/// The results of a vitest run in `text` (ANSI escapes removed), if it has a summary.
pub fn read(text: &str) -> Option<TestResults> {
    let mut counts = match text.lines().rev().find_map(|line| SUMMARY.captures(line)) {
        Some(c) => counts(&c[1]),
        None if text.lines().any(|line| NO_TESTS.is_match(line)) => Counts::default(),
        None => return None,
    };
    let mut listed = Cases::default();
    let mut failures = Cases::default();
    let mut broken_files: Vec<&str> = Vec::new();
    for line in text.lines() {
        if let Some(c) = TEST.captures(line) {
            let outcome = match &c[1] {
                "✓" | "√" => Outcome::Passed,
                "×" => Outcome::Failed,
                _ => Outcome::Skipped,
            };
            listed.push(&c[2], outcome);
        } else if let Some(c) = BROKEN_FILE.captures(line) {
            broken_files.push(c.get(1).map_or("", |m| m.as_str()));
        } else if let Some(c) = FAILURE.captures(line) {
            failures.push(&c[1], Outcome::Failed);
        }
    }
    let mut cases = if listed.is_empty() { failures } else { listed };
    for file in broken_files {
        cases.push(file, Outcome::Error);
        counts.add(Outcome::Error, 1);
    }
    Some(cases.results(Reader::Vitest, counts, true))
}
