//! jest.
//!
//! jest closes with `Tests:       1 failed, 1 skipped, 1 todo, 3 passed, 6 total` (todos are
//! read as skipped), or says `No tests found, exiting with code 1` when no test file matched.
//! Each test file gets a `PASS ./a.test.js` or `FAIL ./a.test.js` line. With `--verbose` (and by
//! default for a run of one file) the file's tests follow as a tree, two spaces a level:
//! describe blocks by name, tests as `✓ name (5 ms)`, `✕ name`, `○ skipped name`, `✎ todo name`
//! (`√`/`×` on Windows); the cases are named `file > describe > name`. Without the tree, only
//! the failures are named, by their `● describe › name` headers (up to a `Summary of all failing
//! tests`, which repeats them). A test file that does not load (`● Test suite failed to run`)
//! is in none of jest's test counts; it is read as one error named by the file. Not read: the
//! `Test Suites:` line, and custom reporters.

use super::{bounded_id, number, Cases, Counts, Outcome, Reader, TestResults, MAX_ID_BYTES};

/// Describe blocks deeper than this are not followed.
const MAX_DEPTH: usize = 32;

base::regexes! {
    SUMMARY = r"^Tests:\s+((?:\d+ [a-z]+, )*)\d+ total\s*$";
    ITEM = r"(\d+) ([a-z]+)";
    NO_TESTS = r"^No tests found\b";
    FILE = r"^(?:PASS|FAIL) +(?:\./)?(\S+)";
    TEST = r"^( +)(✓|✕|○|✎|√|×) (?:skipped |todo )?(.+?)(?: \(\d+(?:\.\d+)? m?s\))?\s*$";
    FAILURE = r"^ +● (.+?)\s*$";
    DESCRIBE = r"^( {2,})(\S.*?)\s*$";
}

/// The results of a jest run in `text` (ANSI escapes removed), if it has a summary.
pub fn read(text: &str) -> Option<TestResults> {
    let mut counts = match text.lines().rev().find_map(|line| SUMMARY.captures(line)) {
        Some(c) => counts(&c[1]),
        None if text.lines().any(|line| NO_TESTS.is_match(line)) => Counts::default(),
        None => return None,
    };
    let mut tree = Cases::default();
    let mut failures = Cases::default();
    let mut broken_files: Vec<String> = Vec::new();
    let mut file = String::new();
    // The describe blocks above the current line, by level.
    let mut blocks: Vec<String> = Vec::new();
    // The tree of the current file is over once its failure details begin.
    let mut in_tree = false;
    for line in text.lines() {
        if line.starts_with("Summary of all failing tests") {
            // It repeats the failures above.
            break;
        }
        if let Some(c) = FILE.captures(line) {
            file = bounded_id(&c[1]);
            blocks.clear();
            in_tree = true;
        } else if let Some(c) = FAILURE.captures(line) {
            in_tree = false;
            let name = &c[1];
            if name == "Test suite failed to run" {
                broken_files.push(file.clone());
            } else if !file.is_empty() {
                let path = name.split(" › ").collect::<Vec<_>>().join(" > ");
                failures.push(&format!("{file} > {path}"), Outcome::Failed);
            }
        } else if !in_tree {
            continue;
        } else if let Some(c) = TEST.captures(line) {
            let level = (c[1].len() / 2).saturating_sub(1);
            blocks.truncate(level);
            let outcome = match &c[2] {
                "✓" | "√" => Outcome::Passed,
                "✕" | "×" => Outcome::Failed,
                _ => Outcome::Skipped,
            };
            let mut id = file.clone();
            for part in blocks.iter().map(String::as_str).chain([&c[3]]) {
                if id.len() > MAX_ID_BYTES {
                    break;
                }
                id.push_str(" > ");
                id.push_str(part);
            }
            tree.push(&id, outcome);
        } else if let Some(c) = DESCRIBE.captures(line) {
            let level = (c[1].len() / 2).saturating_sub(1);
            if level <= blocks.len() && level < MAX_DEPTH {
                blocks.truncate(level);
                blocks.push(bounded_id(&c[2]));
            }
        }
    }
    let mut cases = if tree.is_empty() { failures } else { tree };
    for file in broken_files {
        cases.push(&file, Outcome::Error);
        counts.add(Outcome::Error, 1);
    }
    Some(cases.results(Reader::Jest, counts, true))
}

/// The counts of a summary's items (`1 failed`, `2 todo`; vitest's too), todos as skipped.
pub(super) fn counts(items: &str) -> Counts {
    let mut counts = Counts::default();
    for item in ITEM.captures_iter(items) {
        let outcome = match &item[2] {
            "passed" => Outcome::Passed,
            "failed" => Outcome::Failed,
            "skipped" | "todo" => Outcome::Skipped,
            _ => continue,
        };
        counts.add(outcome, number(&item[1]));
    }
    counts
}
