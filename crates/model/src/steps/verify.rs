//! Runner-executed checks: the project's test/lint commands and executable acceptance criteria.
//!
//! The runner, not an agent, decides whether the work passes. Each check runs in the worktree
//! through the project's shell prelude with the project environment — the same one the agents
//! got, so a test that passes for the player passes here — with a timeout that stops its whole
//! process group. Its full output goes to a log file; the result carries a bounded summary
//! (first error block + final lines) and, when it did not pass, whether the failure is the
//! code's or the environment's, with advice. A check that cannot even start is an `error`
//! result, never a panic and never a pass. Checks run one after another in the given order.

use std::collections::HashSet;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::steps::check::{CheckResult, CheckStatus, FailureClass};
use crate::steps::classify::classify;
use crate::steps::no_tests::{self, no_tests_ran};
use crate::steps::summary::{summarize, SummaryLimits};
use crate::steps::test_results;
use crate::steps::worktree_file;
use base::Keyword;
use process::{self, CancelToken, ProcessEnd, ProcessSpec};
use sandbox::{denials, Confinement};

/// A log up to this size is read whole for summarizing; a larger one by its head and tail.
const LOG_READ_LIMIT: u64 = 16 << 20;

/// One check to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckSpec {
    /// `test`, `lint`, … or a criterion id (`AC-001`).
    pub name: String,
    /// The user's configured shell command.
    pub command: String,
    pub timeout: Duration,
    /// The JUnit XML file the command writes, relative to the worktree (`[checks.<name>]
    /// results`); `None` reads the counts from the output.
    pub results: Option<String>,
}

/// Runs `specs` in order in `worktree`. `shell` turns a command into the program and arguments
/// that run it with the project's setup prelude; `env` is the project environment. Logs go to
/// `logs_dir/<log_prefix>check_<name>.log`. Once `cancel` is set, the running check is stopped
/// and the remaining ones are reported as cancelled. While a check runs its process group id
/// is in `group_file`, so a resume after a kill can stop a check the dead runner left running.
/// With a `sandbox`, checks run confined like the agents; a check that wrote outside the
/// writable paths has the refusals in its summary (and, when it failed, as its advice): a build
/// that needs a cache there needs a `[sandbox] writable` entry, and any other such write is
/// worth knowing about.
#[allow(clippy::too_many_arguments)]
pub fn run_checks(
    specs: &[CheckSpec],
    shell: &dyn Fn(&str) -> (String, Vec<String>),
    env: &[(String, String)],
    worktree: &Path,
    logs_dir: &Path,
    log_prefix: &str,
    cancel: &CancelToken,
    group_file: Option<&Path>,
    sandbox: Option<&Confinement>,
) -> Vec<CheckResult> {
    let mut used_names = HashSet::new();
    specs
        .iter()
        .map(|check| {
            let log_path = logs_dir.join(unique_log_name(log_prefix, &check.name, &mut used_names));
            if cancel.is_cancelled() {
                return not_run(check, log_path, "cancelled before it ran", None);
            }
            let (program, args) = shell(&check.command);
            let mut spec = ProcessSpec::new(program, worktree, &log_path);
            spec.args = args;
            spec.env = env.to_vec();
            spec.timeout = Some(check.timeout);
            spec.group_file = group_file.map(Path::to_path_buf);
            spec.sandbox = sandbox.map(Confinement::wrapper);
            tracing::debug!(check = %check.name, command = %check.command, "running check");
            match process::run(&spec, cancel) {
                Ok(outcome) if let Some(sandbox) = sandbox => {
                    let refused = denials::in_file(&log_path, sandbox);
                    let judged = with_results(judge(check, log_path, &outcome), check, worktree);
                    with_refusals(judged, &refused)
                }
                Ok(outcome) => with_results(judge(check, log_path, &outcome), check, worktree),
                Err(error) => not_run(
                    check,
                    log_path,
                    &format!("could not start the check: {error}"),
                    Some(format!(
                        "the check could not be started ({error}); the runner uses the project \
                         environment from .autobuild/config.toml — the runner and the agents \
                         share that environment"
                    )),
                ),
            }
        })
        .collect()
}

/// The largest results file read.
const RESULTS_LIMIT: u64 = 64 << 20;

/// `result` with the test counts of the JUnit XML file `check` writes, when it names one. A
/// check that passed but whose file is missing, unreadable or not JUnit XML is an error of the
/// environment naming the file, never a pass; a failed one keeps its failure and says so.
fn with_results(mut result: CheckResult, check: &CheckSpec, worktree: &Path) -> CheckResult {
    let Some(relative) = &check.results else {
        return result;
    };
    match junit_in(worktree, relative) {
        Ok(results) => result.tests = Some(results.tally()),
        Err(why) => {
            let why = format!("the results file: {why}");
            result.summary = format!("{why}\n{}", result.summary);
            if result.passed() {
                result.status = CheckStatus::Error;
                result.failure_class = Some(FailureClass::Infrastructure);
                result.advice = Some(format!(
                    "{why}; the check `{}` is configured to write its JUnit XML results there \
                     ([checks.{}] results in .autobuild/config.toml)",
                    check.command, check.name
                ));
            }
        }
    }
    result
}

/// The per-test results of `check`'s run `result` in `dir`: its `results` file there, else
/// what its log says; `None` where neither is readable.
pub fn test_results_of(
    check: &CheckSpec,
    result: &CheckResult,
    dir: &Path,
) -> Option<test_results::TestResults> {
    match &check.results {
        Some(relative) => junit_in(dir, relative).ok(),
        None => read_log(&result.log_path)
            .ok()
            .and_then(|text| test_results::read_output(&text)),
    }
}

/// The JUnit XML results file `relative` in `dir`, or why it cannot be read.
fn junit_in(dir: &Path, relative: &str) -> Result<test_results::TestResults, String> {
    let bytes = worktree_file::read(dir, relative, RESULTS_LIMIT).map_err(|e| e.to_string())?;
    test_results::read_junit(&String::from_utf8_lossy(&bytes))
        .map_err(|e| format!("`{relative}` is not a JUnit XML report: {e}"))
}

/// The result of a check that ran.
fn judge(check: &CheckSpec, log_path: PathBuf, outcome: &process::ProcessOutcome) -> CheckResult {
    let output = match read_log(&log_path) {
        Ok(text) => text,
        Err(error) => format!("(cannot read log {}: {error})", log_path.display()),
    };
    let mut summary = summarize(&output, SummaryLimits::default());
    if summary.is_empty() {
        summary = "(no output)".to_string();
    }
    if let Some(problem) = &outcome.transcript_error {
        summary.push_str(&format!("\n(the log is incomplete: {problem})"));
    }
    let (status, exit_code) = match outcome.end {
        ProcessEnd::Exited(0) => (CheckStatus::Passed, Some(0)),
        ProcessEnd::Exited(code) => (CheckStatus::Failed, Some(code)),
        ProcessEnd::Signaled(_) => (CheckStatus::Failed, None),
        ProcessEnd::TimedOut | ProcessEnd::IdleTimedOut => (CheckStatus::TimedOut, None),
        // Checks run without a line watch, so they are never aborted; an error if one were.
        ProcessEnd::Cancelled | ProcessEnd::Aborted => (CheckStatus::Error, None),
    };
    let (failure_class, advice) = match status {
        CheckStatus::Passed => (None, None),
        CheckStatus::Error => (None, None),
        CheckStatus::TimedOut => {
            let (class, advice) = timed_out(&output, check.timeout);
            (Some(class), Some(advice))
        }
        CheckStatus::Failed => {
            let (class, advice) = classify(&output, exit_code);
            (Some(class), Some(advice))
        }
    };
    if outcome.end == ProcessEnd::Cancelled {
        summary = format!("cancelled while running\n{summary}");
    }
    tracing::debug!(check = %check.name, status = status.as_str(), "check finished");
    let tests = test_results::read_output(&output).map(|results| results.tally());
    let warning = no_tests_ran(&output).map(|runner| no_tests::warning(&check.name, runner));
    if let Some(warning) = &warning {
        summary.push_str(&format!("\n(warning: {warning})"));
    }
    CheckResult {
        name: check.name.clone(),
        command: check.command.clone(),
        status,
        exit_code,
        duration_ms: u64::try_from(outcome.duration.as_millis()).unwrap_or(u64::MAX),
        log_path,
        summary,
        failure_class,
        advice,
        warning,
        advisory: false,
        tests,
        oracle: None,
    }
}

/// `result` with the sandbox's refusals: in its summary, and as the advice of a check that
/// did not pass (the refused write is the likeliest reason, and the environment's to fix).
fn with_refusals(mut result: CheckResult, refused: &[String]) -> CheckResult {
    let Some(note) = denials::note(refused) else {
        return result;
    };
    result.summary.push_str(&format!("\n({note})"));
    if !result.passed() {
        result.failure_class = Some(FailureClass::Infrastructure);
        result.advice = Some(format!(
            "{note}; otherwise make the check write only inside the worktree"
        ));
    }
    result
}

/// A timeout is the environment's fault when the output says so (a service that never
/// answers, a missing tool), otherwise most likely a hang in the code.
fn timed_out(output: &str, timeout: Duration) -> (FailureClass, String) {
    let limit = humantime::format_duration(timeout);
    match classify(output, None) {
        (FailureClass::Infrastructure, advice) => (
            FailureClass::Infrastructure,
            format!("the check did not finish within {limit}; {advice}"),
        ),
        (FailureClass::Code, _) => (
            FailureClass::Code,
            format!(
                "the check did not finish within {limit} and was stopped: look for a hang (an \
                 endless loop, a test waiting for input or for a service); if it is just slow, \
                 raise its `timeout` in .autobuild/config.toml"
            ),
        ),
    }
}

/// The result of a check that never ran (cancelled, or could not be started). Its log file
/// says why, so the recorded log path always exists.
fn not_run(check: &CheckSpec, log_path: PathBuf, why: &str, advice: Option<String>) -> CheckResult {
    let written = log_path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(&log_path, format!("{why}\n")));
    if let Err(error) = written {
        tracing::warn!("cannot write {}: {error}", log_path.display());
    }
    CheckResult {
        name: check.name.clone(),
        command: check.command.clone(),
        status: CheckStatus::Error,
        exit_code: None,
        duration_ms: 0,
        log_path,
        summary: why.to_string(),
        failure_class: advice.as_ref().map(|_| FailureClass::Infrastructure),
        advice,
        warning: None,
        advisory: false,
        tests: None,
        oracle: None,
    }
}

/// `<prefix>check_<name>.log` with the name made safe for a file name and unique in this batch.
fn unique_log_name(prefix: &str, name: &str, used: &mut HashSet<String>) -> String {
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let safe = safe.trim_start_matches('.');
    let base = format!("{prefix}check_{safe}");
    let mut candidate = format!("{base}.log");
    let mut n = 2;
    while !used.insert(candidate.clone()) {
        candidate = format!("{base}_{n}.log");
        n += 1;
    }
    candidate
}

/// The log's text; for a huge log, its head and tail (the summary needs nothing else).
fn read_log(path: &Path) -> io::Result<String> {
    let mut file = File::open(path)?;
    let size = file.metadata()?.len();
    let mut bytes = Vec::new();
    if size <= LOG_READ_LIMIT {
        file.read_to_end(&mut bytes)?;
    } else {
        let half = LOG_READ_LIMIT / 2;
        (&mut file).take(half).read_to_end(&mut bytes)?;
        bytes.extend_from_slice(b"\n\n");
        file.seek(SeekFrom::End(-i64::try_from(half).unwrap_or(i64::MAX)))?;
        file.read_to_end(&mut bytes)?;
    }
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_names_are_safe_and_unique() {
        let mut used = HashSet::new();
        assert_eq!(
            unique_log_name("turn_2_", "AC-001", &mut used),
            "turn_2_check_AC-001.log"
        );
        assert_eq!(
            unique_log_name("turn_2_", "../a b", &mut used),
            "turn_2_check__a_b.log"
        );
        assert_eq!(
            unique_log_name("turn_2_", "/a b", &mut used),
            "turn_2_check__a_b_2.log"
        );
    }

    #[test]
    fn a_timeout_without_an_environment_cause_is_a_hang() {
        let (class, advice) = timed_out("running 3 tests\n", Duration::from_secs(600));
        assert_eq!(class, FailureClass::Code);
        assert!(advice.starts_with("the check did not finish within 10m"));
        let (class, _) = timed_out("Connection refused\n", Duration::from_secs(600));
        assert_eq!(class, FailureClass::Infrastructure);
    }
}
