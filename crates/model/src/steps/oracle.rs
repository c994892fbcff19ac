//! The base oracle (`[tests] oracle = "base"`): the tests the base had say what the player's
//! change may not do to them, whatever the player did to the tests.
//!
//! Three runs of a check meet here, each read by [`crate::steps::test_results`]:
//! - the **baseline**: the check at the base commit (which tests passed there, which failed);
//! - the **oracle run**: the check on the player's code with the base's versions of every test
//!   file and all test infrastructure the base had (what the player added that the base did not
//!   have is left out of the infrastructure; the player's new test files run as they are);
//! - the **player's run**: the check as it ran on the checkpoint.
//!
//! Two rules, each naming the test ([`judge`]):
//! - **regressed**: a test that passed at the base does not pass in the oracle run (it fails,
//!   errors, is skipped, deselected or xfailed, or is gone from a listing that names every test);
//! - **weakened**: a test that failed at the base does not pass in the oracle run (it fails, or
//!   a build file the player kept skips or deselects it), while the player's run does not show
//!   it failing (it passes, is skipped, deselected or gone): the
//!   change to the test or its infrastructure, not the code, made it "pass" — the common case of
//!   a task's own failing test edited, skipped, deleted or rewritten through a conftest hook.
//!
//! A test the task's requirements allow to change (front matter `tests_may_change:`,
//! [`may_change`]) is not held to the rules; its finding is kept, marked allowed, so every
//! reviewer sees it with both results.
//!
//! The rules judge the tests the baseline names. Where the base's output names only its
//! failures (`pytest -q`, unittest without `-v`, jest without `--verbose`), the weakened rule
//! still holds (failures are always named), but a regression is only seen by the count of
//! passing tests ([`Judgement::fewer_passed`]); [`TestResults::complete`] says which.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::steps::check::{CheckResult, CheckStatus, FailureClass};
use crate::steps::test_results::{Outcome, Tally, TestResults};

/// What a run says of one test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Seen {
    Ran(Outcome),
    Not(Absent),
}

/// Why a run says nothing of a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Absent {
    /// The run lists every test and this one is not there.
    Gone,
    /// The run names only some tests (its failures) and not this one; or it gave no results.
    Unnamed,
}

impl Seen {
    /// What `results` say of the test `id` (its first mention).
    pub fn of(results: Option<&TestResults>, id: &str) -> Seen {
        let Some(results) = results else {
            return Seen::Not(Absent::Unnamed);
        };
        match results.cases.iter().find(|case| case.id == id) {
            Some(case) => Seen::Ran(case.outcome),
            None if results.complete => Seen::Not(Absent::Gone),
            None => Seen::Not(Absent::Unnamed),
        }
    }

    fn fails(self) -> bool {
        matches!(self, Seen::Ran(Outcome::Failed | Outcome::Error))
    }

    /// What a test the base failed is in an oracle run where the code fixed it: passed (or not
    /// named by a listing of failures only, which counts as passed).
    fn fixed(self) -> bool {
        matches!(
            self,
            Seen::Ran(Outcome::Passed | Outcome::XPassed) | Seen::Not(Absent::Unnamed)
        )
    }

    /// As a person says it: `passed`, `skipped`, `gone`, `not named`.
    pub fn word(self) -> &'static str {
        match self {
            Seen::Ran(Outcome::Passed) => "passed",
            Seen::Ran(Outcome::Failed) => "failed",
            Seen::Ran(Outcome::Error) => "errored",
            Seen::Ran(Outcome::Skipped) => "skipped",
            Seen::Ran(Outcome::Deselected) => "deselected",
            Seen::Ran(Outcome::XFailed) => "xfailed",
            Seen::Ran(Outcome::XPassed) => "xpassed",
            Seen::Not(Absent::Gone) => "gone",
            Seen::Not(Absent::Unnamed) => "not named (passed or not run)",
        }
    }
}

/// Which rule a test broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    Regressed,
    Weakened,
}

/// One test that broke a rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Finding {
    pub test: String,
    pub rule: Rule,
    /// At the base.
    pub base: Seen,
    /// The player's code with the base's tests and infrastructure.
    pub oracle: Seen,
    /// The checkpoint as it is.
    pub player: Seen,
    /// The task's requirements allow this test to change: shown, not held against the player.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allowed: bool,
}

impl Finding {
    /// One line for the player and the reviewers.
    pub fn describe(&self) -> String {
        // A test's name is the player's to choose: one with a newline could start a line of its
        // own in the reviewers' prompt.
        let test = base::quoted::path(&self.test);
        let what = match self.rule {
            Rule::Regressed => format!(
                "`{}` passed at the base and {} on this change (with the base's tests)",
                test,
                self.oracle.word()
            ),
            Rule::Weakened => format!(
                "`{}` is weakened: its base version {} on this code, yet with this change's \
                 tests it {}",
                test,
                self.oracle.word(),
                self.player.word()
            ),
        };
        if self.allowed {
            format!("{what} (the task allows this test to change)")
        } else {
            what
        }
    }
}

/// What the oracle found for one check.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Judgement {
    pub findings: Vec<Finding>,
    /// `(at the base, now)`: fewer tests passed in the oracle run than at the base, where both
    /// counts are exact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fewer_passed: Option<(u64, u64)>,
    /// The base's run printed test results and the oracle run printed none a reader knows (a
    /// test target the player rewrote in a build file to run nothing).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_results: bool,
}

impl Judgement {
    /// The findings the task does not allow.
    pub fn broken(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| !f.allowed)
    }

    /// Whether the check fails by the oracle.
    pub fn fails(&self) -> bool {
        self.broken().next().is_some() || self.fewer_passed.is_some() || self.no_results
    }
}

/// Applies the two rules to the tests `base` names. `oracle` is the oracle run's results (the
/// player's run's when the change touched no test file or infrastructure: the two are the same
/// tree); `player` the player's run's (`None`: unreadable). `may_change` says whether the task
/// allows a test to change.
pub fn judge(
    base: &TestResults,
    oracle: Option<&TestResults>,
    player: Option<&TestResults>,
    may_change: &dyn Fn(&str) -> bool,
) -> Judgement {
    if oracle.is_none() {
        return Judgement {
            no_results: true,
            ..Judgement::default()
        };
    }
    let mut findings: Vec<Finding> = Vec::new();
    for case in &base.cases {
        if findings.iter().any(|f| f.test == case.id) {
            continue;
        }
        let base_seen = Seen::Ran(case.outcome);
        let now = Seen::of(oracle, &case.id);
        let theirs = Seen::of(player, &case.id);
        let rule = match case.outcome {
            Outcome::Passed
                if now != Seen::Ran(Outcome::Passed) && now != Seen::Not(Absent::Unnamed) =>
            {
                Some(Rule::Regressed)
            }
            Outcome::Failed | Outcome::Error if !now.fixed() && !theirs.fails() => {
                Some(Rule::Weakened)
            }
            _ => None,
        };
        if let Some(rule) = rule {
            findings.push(Finding {
                test: case.id.clone(),
                rule,
                base: base_seen,
                oracle: now,
                player: theirs,
                allowed: may_change(&case.id),
            });
        }
    }
    let fewer_passed = oracle
        .filter(|now| base.exact && now.exact && now.counts.passed < base.counts.passed)
        .map(|now| (base.counts.passed, now.counts.passed))
        // A regression named is the reason; the count says nothing more.
        .filter(|_| !findings.iter().any(|f| f.rule == Rule::Regressed));
    Judgement {
        findings,
        fewer_passed,
        no_results: oracle.is_none(),
    }
}

/// One check's run at the base, as the baseline keeps it (`baseline.json` of the run directory,
/// and the cache by base tree).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaseRun {
    pub check: String,
    pub command: String,
    /// `[checks.<name>] results`, part of what the run depends on.
    #[serde(default)]
    pub results: Option<String>,
    pub status: CheckStatus,
    pub duration_ms: u64,
    /// What its test runner said, where a reader knows its words.
    pub tests: Option<TestResults>,
}

/// The baseline of a run: the checks the oracle judges, run at the base commit.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// The base commit's tree without `.autobuild/` (`git::tree_id_without`): the cache key.
    pub tree: String,
    pub runs: Vec<BaseRun>,
}

/// What a check's run at the base lets the oracle do.
#[derive(Debug, Clone, PartialEq)]
pub enum Usable<'a> {
    /// Judge the check's turns by these results.
    Judges(&'a TestResults),
    /// The check's output is not a test runner's a reader knows (a linter): no oracle for it.
    NotTests,
    /// The base's tests do not run: the run cannot start (why, in words).
    Broken(String),
}

impl BaseRun {
    pub fn usable(&self) -> Usable<'_> {
        if matches!(self.status, CheckStatus::TimedOut | CheckStatus::Error) {
            return Usable::Broken(format!(
                "{} at the base",
                match self.status {
                    CheckStatus::TimedOut => "timed out",
                    _ => "could not run",
                }
            ));
        }
        let Some(tests) = &self.tests else {
            return Usable::NotTests;
        };
        let c = &tests.counts;
        let ran = c.passed + c.failed + c.xfailed + c.xpassed;
        if ran == 0 && self.status != CheckStatus::Passed {
            return Usable::Broken(format!(
                "ran no test at the base and failed ({})",
                tests.tally()
            ));
        }
        Usable::Judges(tests)
    }
}

/// What the oracle said of a check this turn, kept in its result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct OracleCheck {
    /// The base's counts.
    pub base: Tally,
    /// The oracle run's counts; `None` when it printed no results a reader knows.
    pub oracle: Option<Tally>,
    /// The change touched test files or infrastructure, so the oracle ran separately with the
    /// base's versions (otherwise the player's run is the oracle run).
    pub separate: bool,
    pub judgement: Judgement,
}

impl OracleCheck {
    /// The comparison with the base, for the reviewers: `at the base: 4 passed, 1 failed
    /// (pytest); 1 fewer ran than at the base`, and every test changed as the task allows.
    pub fn against_base(&self, now: Option<&Tally>) -> String {
        let mut text = format!("at the base: {}", self.base);
        if let Some(now) = now {
            let (was, is) = (self.base.counts.executed(), now.counts.executed());
            if self.base.exact && now.exact && is < was {
                text.push_str(&format!("; {} fewer ran than at the base", was - is));
            }
        }
        for finding in self.judgement.findings.iter().filter(|f| f.allowed) {
            text.push_str(&format!("; {}", finding.describe()));
        }
        text
    }
}

/// `result` judged by the oracle: the record kept, and a check that broke a rule failed (class
/// code) with every broken rule named in its advice and summary. Findings the task allows are
/// not held against it ([`OracleCheck::against_base`] lists them for the reviewers).
pub fn apply(result: &mut CheckResult, check: OracleCheck) {
    let judgement = &check.judgement;
    let mut lines: Vec<String> = judgement.broken().map(Finding::describe).collect();
    if let Some((was, is)) = judgement.fewer_passed {
        lines.push(format!(
            "{} of the base's tests passed at the base and {is} pass now, with the base's tests",
            was
        ));
    }
    if judgement.no_results {
        lines.push(format!(
            "with the base's tests and test infrastructure, `{}` printed no test results (at \
             the base: {})",
            result.command, check.base
        ));
    }
    if !lines.is_empty() {
        let listed = format!("- {}", lines.join("\n- "));
        result.summary = format!("the base's tests say no:\n{listed}\n{}", result.summary);
        result.status = CheckStatus::Failed;
        result.failure_class = Some(FailureClass::Code);
        result.advice = Some(format!(
            "the runner ran the base's versions of the tests and test infrastructure on this \
             change:\n{listed}\nMake the code pass the tests as they were; change a test only \
             where the task says so (front matter `tests_may_change:`)"
        ));
    }
    result.oracle = Some(check);
}

/// Whether the task's `tests_may_change:` entries allow the test `id` to change: an entry is
/// the test's id, a prefix of it ending at a separator of the runners' ids (`tests/test_a.py`
/// for `tests/test_a.py::test_x`, `test_calc.CalcTest` for `test_calc.CalcTest.test_add`), or a
/// glob over the whole id (`*` matches anything).
pub fn may_change(entries: &[String], id: &str) -> bool {
    entries.iter().any(|entry| {
        let entry = entry.trim();
        if entry.is_empty() {
            return false;
        }
        if id == entry {
            return true;
        }
        if let Some(rest) = id.strip_prefix(entry) {
            if [":", ".", "/", " ", "#"]
                .iter()
                .any(|s| rest.starts_with(s))
            {
                return true;
            }
        }
        entry.contains(['*', '?', '['])
            && globset::GlobBuilder::new(entry)
                .literal_separator(false)
                .build()
                .is_ok_and(|glob| glob.compile_matcher().is_match(id))
    })
}

#[cfg(test)]
mod tests;
