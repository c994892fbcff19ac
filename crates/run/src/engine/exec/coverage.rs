//! The coverage measurement of a `verify` step, for a profile with a coverage minimum: the
//! `[coverage]` command runs like a check, then the runner reads the report it wrote and
//! measures it against the files the task branch changed ([`model::steps::coverage`]).
//!
//! The report lives in the worktree, which agents write: a report left from an earlier turn
//! (or written by the player) is removed before the command runs, so only what the command
//! wrote is read; a path through a symbolic link is never followed; the report is copied to
//! the run's logs and removed from the worktree, so it never lands in a checkpoint.

use std::path::Path;

use model::project::CoverageConfig;
use model::steps::check::CheckResult;
use model::steps::coverage::{self, CoverageResult, Measurement};
use model::steps::gate::outcome;

/// At most this much of a report is read.
const REPORT_LIMIT: u64 = 64 << 20;

/// What the measurement needs from the verify step.
pub(super) struct Measuring<'a> {
    pub config: &'a CoverageConfig,
    pub minimum: u8,
    pub worktree: &'a Path,
    pub logs: &'a Path,
    /// The log file prefix of this turn (`turn_2_`).
    pub prefix: &'a str,
    /// The worktree-relative paths the task branch changed.
    pub changed: Vec<String>,
}

/// Runs the command with `run` (the verify step's check runner) and measures its report.
pub(super) fn measure(
    m: &Measuring<'_>,
    run: &dyn Fn(&model::steps::verify::CheckSpec) -> Option<CheckResult>,
    timeout: std::time::Duration,
) -> Option<CoverageResult> {
    let not_measured = |check: CheckResult, reason: String| CoverageResult {
        check,
        report: m.config.report.clone(),
        minimum: m.minimum,
        measurement: Measurement::NotMeasured { reason },
    };
    let stale = remove_report(m.worktree, &m.config.report);
    let spec = model::steps::verify::CheckSpec {
        name: coverage::CHECK_NAME.to_string(),
        command: m.config.cmd.clone(),
        timeout,
        results: None,
    };
    let check = run(&spec)?;
    if let Err(why) = stale {
        return Some(not_measured(check, why));
    }
    // A test that fails makes `pytest --cov` exit non-zero, yet the report it wrote (fresh:
    // the old one was removed above) measures the run: coverage stands, and the failing test
    // is the test check's to report. A timeout, a crash or an environment failure is no
    // measurement.
    let tests_failed = check.status == model::steps::check::CheckStatus::Failed
        && check.failure_class == Some(model::steps::check::FailureClass::Code);
    if !check.passed() && !tests_failed {
        let reason = format!(
            "the coverage command `{}` {}, so its report is not trusted",
            m.config.cmd,
            outcome(check.status, check.exit_code)
        );
        return Some(not_measured(check, reason));
    }
    let text = match read_report(m) {
        Ok(text) => text,
        Err(why) => return Some(not_measured(check, why)),
    };
    let measurement = match coverage::parse::parse(&text) {
        Err(why) => Measurement::NotMeasured {
            reason: format!("the report `{}` cannot be read: {why}", m.config.report),
        },
        Ok(report) => {
            let mut roots = vec![m.worktree.display().to_string()];
            if let Ok(real) = m.worktree.canonicalize() {
                roots.push(real.display().to_string());
            }
            let exists = |p: &str| m.worktree.join(p).is_file();
            match coverage::measure(&report, &roots, &m.changed, &exists) {
                Ok(measured) => Measurement::Measured(measured),
                Err(why) => Measurement::NotMeasured {
                    reason: format!("the report `{}`: {why}", m.config.report),
                },
            }
        }
    };
    Some(CoverageResult {
        check,
        report: m.config.report.clone(),
        minimum: m.minimum,
        measurement,
    })
}

/// The report's text, copied to the logs and removed from the worktree.
fn read_report(m: &Measuring<'_>) -> Result<String, String> {
    use model::steps::worktree_file::{self, WorktreeFileError};
    let report = &m.config.report;
    let bytes = match worktree_file::read(m.worktree, report, REPORT_LIMIT) {
        Ok(bytes) => bytes,
        Err(WorktreeFileError::Missing { .. }) => {
            return Err(format!(
                "the coverage command `{}` passed but wrote no report at `{report}`; check \
                 [coverage] report in .autobuild/config.toml",
                m.config.cmd
            ))
        }
        Err(e) => return Err(format!("the coverage report: {e}")),
    };
    let copy = m.logs.join(format!("{}coverage_report", m.prefix));
    if let Err(e) = base::atomic_file::write_atomic(&copy, &bytes) {
        tracing::warn!(path = %copy.display(), error = %e, "cannot keep a copy of the coverage report");
    }
    remove_report(m.worktree, report)?;
    String::from_utf8(bytes).map_err(|_| format!("the report `{report}` is not UTF-8 text"))
}

/// Removes the report from the worktree if it is there.
fn remove_report(worktree: &Path, report: &str) -> Result<(), String> {
    let path = model::steps::worktree_file::within(worktree, report)
        .map_err(|e| format!("the coverage report: {e}"))?;
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("the old report `{report}` cannot be removed: {e}")),
    }
}
