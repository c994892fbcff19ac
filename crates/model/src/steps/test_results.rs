//! What a check's test run says about its tests: how many passed, failed, errored, were skipped
//! or deselected (and pytest's xfailed/xpassed), and which tests, by name, where the output
//! names them.
//!
//! A check passes or fails by its exit code; these readers tell what was behind it. Each reads
//! the words of one runner, as that runner prints them by default and in its verbose modes:
//! [`libtest`] (`cargo test`), [`nextest`] (`cargo nextest run`), [`pytest`], [`gotest`]
//! (`go test`, `-v`, `-json`), [`jest`], [`vitest`] and [`unittest`] (`python -m unittest`);
//! [`junit`] reads the JUnit XML report that most runners can write instead. [`read_output`]
//! recognizes which runner printed an output from its closing summary and reads it.
//!
//! Counts are the runner's own tally of the whole run (every binary of a cargo workspace, every
//! Go package). The named cases are what the output lists, which is often only the failures;
//! [`TestResults::complete`] says whether every test that ran is there. All readers are pure,
//! never panic on any input, and keep at most [`MAX_CASES`] cases of at most [`MAX_ID_BYTES`]
//! bytes each.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::steps::summary::{shorten, strip_ansi};

pub mod gotest;
pub mod jest;
pub mod junit;
pub mod libtest;
pub mod nextest;
pub mod pytest;
pub mod unittest;
pub mod vitest;

#[cfg(test)]
mod tests;

pub use junit::{read_junit, JunitError};

/// At most this many cases are kept; the rest are counted in [`TestResults::cases_omitted`].
pub const MAX_CASES: usize = 10_000;
/// A case id longer than this is cut (at a character boundary) and ends in `…`.
pub const MAX_ID_BYTES: usize = 512;

/// What became of one test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Passed,
    Failed,
    /// The test could not run to a verdict: an error in a fixture or setup, a test file that
    /// does not load, a package that does not build.
    Error,
    /// Skipped or ignored by the test itself or its marks (jest's and vitest's todos too).
    Skipped,
    /// Left out by a filter on the command line (`-k`, a `cargo test` name filter).
    Deselected,
    /// Expected to fail, and failed.
    #[serde(rename = "xfailed")]
    XFailed,
    /// Expected to fail, and passed.
    #[serde(rename = "xpassed")]
    XPassed,
}

/// One test and its outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TestCase {
    /// The test as its runner names it: a pytest node id (`tests/test_a.py::test_x`), a libtest
    /// path (`tests::adds`), `package/TestName` for Go, `file > describe > name` for jest and
    /// vitest, `module.Class.test_x` for unittest, `classname::name` for JUnit XML.
    pub id: String,
    pub outcome: Outcome,
}

/// How many tests ended how.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Counts {
    pub passed: u64,
    pub failed: u64,
    pub errors: u64,
    pub skipped: u64,
    pub deselected: u64,
    pub xfailed: u64,
    pub xpassed: u64,
}

impl Counts {
    /// Adds `n` tests of `outcome`.
    pub fn add(&mut self, outcome: Outcome, n: u64) {
        let field = match outcome {
            Outcome::Passed => &mut self.passed,
            Outcome::Failed => &mut self.failed,
            Outcome::Error => &mut self.errors,
            Outcome::Skipped => &mut self.skipped,
            Outcome::Deselected => &mut self.deselected,
            Outcome::XFailed => &mut self.xfailed,
            Outcome::XPassed => &mut self.xpassed,
        };
        *field = field.saturating_add(n);
    }

    /// Adds every count of `other`.
    pub fn add_all(&mut self, other: &Counts) {
        self.add(Outcome::Passed, other.passed);
        self.add(Outcome::Failed, other.failed);
        self.add(Outcome::Error, other.errors);
        self.add(Outcome::Skipped, other.skipped);
        self.add(Outcome::Deselected, other.deselected);
        self.add(Outcome::XFailed, other.xfailed);
        self.add(Outcome::XPassed, other.xpassed);
    }

    /// The tests that ran: all but the skipped and the deselected.
    pub fn executed(&self) -> u64 {
        [
            self.passed,
            self.failed,
            self.errors,
            self.xfailed,
            self.xpassed,
        ]
        .iter()
        .fold(0u64, |sum, n| sum.saturating_add(*n))
    }

    /// The tests a complete listing names: those that ran and the skipped ones.
    pub fn listed(&self) -> u64 {
        self.executed().saturating_add(self.skipped)
    }
}

/// Which reader read the results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reader {
    Junit,
    Pytest,
    Libtest,
    Nextest,
    GoTest,
    Jest,
    Vitest,
    Unittest,
}

impl Reader {
    /// The runner's name as a person says it: `cargo test`, `go test`, `JUnit XML`, …
    pub fn name(self) -> &'static str {
        match self {
            Reader::Junit => "JUnit XML",
            Reader::Pytest => "pytest",
            Reader::Libtest => "cargo test",
            Reader::Nextest => "cargo nextest",
            Reader::GoTest => "go test",
            Reader::Jest => "jest",
            Reader::Vitest => "vitest",
            Reader::Unittest => "unittest",
        }
    }
}

/// What one test run says about its tests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TestResults {
    pub reader: Reader,
    pub counts: Counts,
    /// Whether `counts` are the runner's whole tally. False only where the output does not say
    /// it: `go test` without `-v` names only the failing tests and prints `ok pkg` for a
    /// passing package without counting its tests.
    pub exact: bool,
    /// The tests the output names, in its order (at most [`MAX_CASES`]).
    pub cases: Vec<TestCase>,
    /// Whether `cases` (with the omitted ones) lists every test that ran or was skipped, or only
    /// the ones the output names (`pytest -q`, `cargo nextest`, jest without `--verbose`: the
    /// failures).
    pub complete: bool,
    /// Cases named by the output but not kept, beyond [`MAX_CASES`].
    pub cases_omitted: u64,
}

impl TestResults {
    /// The run executed no test at all (every test skipped, deselected or absent), by the
    /// runner's own whole tally.
    pub fn ran_no_tests(&self) -> bool {
        self.tally().ran_no_tests()
    }

    /// The counts without the cases: what a check's record keeps.
    pub fn tally(&self) -> Tally {
        Tally {
            reader: self.reader,
            counts: self.counts,
            exact: self.exact,
        }
    }
}

/// What a check's record keeps of its test run, and how every reader of the record words it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Tally {
    pub reader: Reader,
    pub counts: Counts,
    /// [`TestResults::exact`].
    pub exact: bool,
}

impl Tally {
    /// [`TestResults::ran_no_tests`].
    pub fn ran_no_tests(&self) -> bool {
        self.exact && self.counts.executed() == 0
    }
}

impl std::fmt::Display for Tally {
    /// `3 passed, 1 skipped, 2 deselected (pytest)`; `no test ran (cargo test)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = &self.counts;
        let parts: Vec<String> = [
            (c.passed, "passed"),
            (c.failed, "failed"),
            (c.errors, "errors"),
            (c.skipped, "skipped"),
            (c.deselected, "deselected"),
            (c.xfailed, "xfailed"),
            (c.xpassed, "xpassed"),
        ]
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, word)| format!("{n} {word}"))
        .collect();
        let ran = if self.ran_no_tests() {
            "no test ran".to_string()
        } else if parts.is_empty() {
            "no counts".to_string()
        } else {
            parts.join(", ")
        };
        let also = if self.ran_no_tests() && !parts.is_empty() {
            format!(": {}", parts.join(", "))
        } else {
            String::new()
        };
        let inexact = if self.exact {
            ""
        } else {
            ", counts incomplete"
        };
        write!(f, "{ran}{also} ({}{inexact})", self.reader.name())
    }
}

/// The test results in `output`, read by the reader of the runner that printed it, or `None`
/// when no known runner's summary or per-test lines are there. ANSI escapes are removed first.
/// An output of several runners is read by the first that recognizes it, in the order
/// `cargo test`, `cargo nextest`, `go test`, jest, vitest, unittest, pytest (the most
/// specific words first).
pub fn read_output(output: &str) -> Option<TestResults> {
    let text = strip_ansi(output);
    libtest::read(&text)
        .or_else(|| nextest::read(&text))
        .or_else(|| gotest::read(&text))
        .or_else(|| jest::read(&text))
        .or_else(|| vitest::read(&text))
        .or_else(|| unittest::read(&text))
        .or_else(|| pytest::read(&text))
}

/// Cases as a reader finds them: the first [`MAX_CASES`] kept, all of them counted.
#[derive(Debug, Default)]
struct Cases {
    kept: Vec<TestCase>,
    omitted: u64,
    counts: Counts,
}

impl Cases {
    fn push(&mut self, id: &str, outcome: Outcome) {
        self.push_n(id, outcome, 1);
    }

    /// `n` tests named `id` (pytest's `SKIPPED [3] file:line` names three by one location).
    fn push_n(&mut self, id: &str, outcome: Outcome, n: u64) {
        let room = MAX_CASES.saturating_sub(self.kept.len()) as u64;
        let keep = n.min(room);
        if keep > 0 {
            let id = bounded_id(id);
            for _ in 0..keep {
                self.kept.push(TestCase {
                    id: id.clone(),
                    outcome,
                });
            }
        }
        self.omitted = self.omitted.saturating_add(n - keep);
        self.counts.add(outcome, n);
    }

    /// A case counted but not kept.
    fn omit(&mut self, outcome: Outcome) {
        self.omitted = self.omitted.saturating_add(1);
        self.counts.add(outcome, 1);
    }

    fn is_empty(&self) -> bool {
        self.kept.is_empty() && self.omitted == 0
    }

    /// How many cases were named, kept or not.
    fn named(&self) -> u64 {
        (self.kept.len() as u64).saturating_add(self.omitted)
    }

    /// The results of a run whose runner tallied `counts`, complete when the cases name as many
    /// tests as the tally lists.
    fn results(self, reader: Reader, counts: Counts, exact: bool) -> TestResults {
        let complete = exact && self.named() == counts.listed();
        TestResults {
            reader,
            counts,
            exact,
            cases: self.kept,
            complete,
            cases_omitted: self.omitted,
        }
    }
}

/// `id` trimmed, and cut to [`MAX_ID_BYTES`] at a character boundary.
fn bounded_id(id: &str) -> String {
    shorten(id.trim(), MAX_ID_BYTES)
}

/// A count as printed: digits, saturating at `u64::MAX` rather than failing.
fn number(digits: &str) -> u64 {
    digits.parse().unwrap_or(u64::MAX)
}
