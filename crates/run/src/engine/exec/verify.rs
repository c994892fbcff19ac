//! The `verify` step: the runner runs the project's checks and the task's executable criteria
//! in the worktree, with the same environment the agents got (the parity cure).

use std::fs;

use crate::engine::cx::RunCx;
use crate::engine::events::EventKind;
use crate::engine::exec::StepDone;
use crate::engine::turn::VerifyRecord;
use base::error::Error;
use model::profile::Requirement;
use model::steps::verify::{run_checks, CheckSpec};
use model::workflow::kinds::VerifyOutputs;

/// Executable criteria get the same timeout as a check unless the project says otherwise.
const CRITERION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

pub fn execute(
    cx: &mut RunCx,
    only: Option<&[String]>,
    step_timeout: Option<std::time::Duration>,
    expect: model::workflow::model::Expect,
) -> Result<StepDone, Error> {
    let red = expect == model::workflow::model::Expect::Fail;
    let cap = |t: std::time::Duration| cx.clamp(step_timeout.map_or(t, |s| t.min(s)));
    let plan = cx.plan;
    let turn = cx.turn_number();
    let worktree = cx.state.worktree.clone();
    let logs = cx.paths.logs();
    fs::create_dir_all(&logs).map_err(|e| Error::io("cannot create", &logs, e))?;
    let hides = plan.hides();
    let (hidden_checks, checks): (Vec<_>, Vec<_>) = plan
        .checks
        .iter()
        .filter(|c| only.is_none_or(|names| names.iter().any(|n| n == &c.name)))
        .partition(|c| hides && c.hidden);
    let spec = |c: &model::project::EffectiveCheck| CheckSpec {
        name: c.name.clone(),
        command: c.cmd.clone(),
        timeout: cap(c.timeout),
        results: c.results.clone(),
    };
    let checks: Vec<CheckSpec> = checks.into_iter().map(spec).collect();
    let hidden_checks: Vec<CheckSpec> = hidden_checks.into_iter().map(spec).collect();
    // A red witness runs only the tests: the criteria are the implementation's business.
    let criteria: Vec<CheckSpec> = plan
        .task
        .executable_criteria()
        .filter(|_| !red)
        .map(|c| CheckSpec {
            name: c.id.clone(),
            command: c.verify.clone().unwrap_or_default(),
            timeout: cap(CRITERION_TIMEOUT),
            results: None,
        })
        .collect();
    let coverage_timeout = plan.config.coverage.as_ref().map(|c| cap(c.timeout()));
    let env = cx.env_vars();
    let prefix = format!("{}turn_{turn}_", cx.file_label(""));
    let group_file = agents::command_group_file(&cx.paths.dir);
    let confinement = super::sandbox::confine(cx, Vec::new());
    let shell = |cmd: &str| cx.project_env.shell_command(cmd);
    let mut check_results = run_checks(
        &checks,
        &shell,
        &env,
        &worktree,
        &logs,
        &prefix,
        &cx.cancel,
        Some(&group_file),
        confinement.as_ref(),
    );
    let mut criteria_results = run_checks(
        &criteria,
        &shell,
        &env,
        &worktree,
        &logs,
        &format!("{prefix}criterion_"),
        &cx.cancel,
        Some(&group_file),
        confinement.as_ref(),
    );
    for result in &mut criteria_results {
        result.fail_if_no_test_ran();
    }
    let required = plan.gate_requirements();
    // The coverage minimum is measured after the checks, like one; never on a red witness
    // (the tests are written before the code they cover).
    let minimum = required.iter().find_map(|r| match r {
        Requirement::Coverage { minimum } => Some(*minimum),
        _ => None,
    });
    let coverage = match (&plan.config.coverage, minimum) {
        (Some(config), Some(minimum)) if !red && !cx.cancel.is_cancelled() => {
            let measuring = super::coverage::Measuring {
                config,
                minimum,
                worktree: &worktree,
                logs: &logs,
                prefix: &prefix,
                // Without the branch's diff the measurement stands; only the uncovered lines of
                // changed files are not listed.
                changed: super::branch_changes(cx).unwrap_or_else(|e| {
                    tracing::debug!(error = %e, "cannot diff the task branch for coverage");
                    Vec::new()
                }),
            };
            // Its own log prefix: a `[checks.coverage]` keeps its log.
            let run = |spec: &CheckSpec| {
                run_checks(
                    std::slice::from_ref(spec),
                    &shell,
                    &env,
                    &worktree,
                    &logs,
                    &format!("{prefix}measure_"),
                    &cx.cancel,
                    Some(&group_file),
                    confinement.as_ref(),
                )
                .pop()
            };
            super::coverage::measure(&measuring, &run, coverage_timeout.unwrap_or_default())
        }
        _ => None,
    };
    if let Some(confinement) = &confinement {
        super::sandbox::after_confined(cx, confinement)?;
    }
    check_results.extend(super::hidden_check::run(
        cx,
        &hidden_checks,
        &logs,
        &prefix,
    )?);
    if !red {
        super::oracle::judge_turn(cx, &checks, &mut check_results)?;
    }
    if cx.cancel.is_cancelled() {
        return Ok(StepDone::cancelled());
    }
    for result in check_results.iter().chain(&criteria_results) {
        if let Some(message) = &result.warning {
            cx.emit(EventKind::Warning {
                message: message.clone(),
            });
        }
    }
    for result in &mut check_results {
        result.advisory = !required.contains(&Requirement::Check(result.name.clone()));
        if red {
            witness(result);
        }
    }
    let mut failed: Vec<String> = check_results
        .iter()
        .chain(&criteria_results)
        .filter(|c| c.blocks())
        .map(|c| c.name.clone())
        .collect();
    if coverage.as_ref().is_some_and(|c| !c.holds()) {
        failed.push(model::steps::coverage::CHECK_NAME.to_string());
    }
    let advisory: Vec<String> = check_results
        .iter()
        .filter(|c| c.advisory && !c.passed())
        .map(|c| c.name.clone())
        .collect();
    let criteria_met = criteria_results.iter().filter(|c| c.passed()).count();
    let record = VerifyRecord {
        turn,
        passed: failed.is_empty(),
        checks: check_results,
        criteria: criteria_results,
        expect_fail: red,
        coverage,
    };
    let path = cx.record_path("verify");
    cx.write_record(&path, &record)?;
    let mut summary = if failed.is_empty() {
        format!(
            "{} check(s) and {} criteria passed",
            record.checks.len() - advisory.len(),
            record.criteria.len()
        )
    } else {
        format!("did not pass: {}", failed.join(", "))
    };
    if !advisory.is_empty() {
        summary.push_str(&format!(
            "; advisory (`required = false`) failed: {}",
            advisory.join(", ")
        ));
    }
    let outputs = VerifyOutputs {
        passed: record.passed,
        failed,
        criteria_met,
        criteria_total: record.criteria.len(),
    };
    if let Some(turn) = cx.turn.as_mut() {
        turn.verify = Some(record);
    }
    // A failing check is data for the gate, not a failed step.
    Ok(StepDone::ok(summary, outputs))
}

/// At most this much of a check's log is read to judge a red witness.
const RED_LOG_LIMIT: u64 = 1024 * 1024;

/// Turns `result` into its red-witness result: passed when it failed as new tests should,
/// failed (with the reason as its summary's head and its advice) otherwise.
fn witness(result: &mut model::steps::check::CheckResult) {
    use std::io::Read;
    let mut output = String::new();
    if let Ok(file) = base::user_file::open_regular(&result.log_path) {
        let mut bytes = Vec::new();
        if file.take(RED_LOG_LIMIT).read_to_end(&mut bytes).is_ok() {
            output = String::from_utf8_lossy(&bytes).into_owned();
        }
    }
    let judged = model::steps::red::judge(result, &output);
    let explained = judged.explain(&result.name);
    if judged == model::steps::red::Red::Holds {
        result.status = model::steps::check::CheckStatus::Passed;
        result.failure_class = None;
        result.advice = None;
        result.summary = format!("{explained}\n{}", result.summary);
    } else {
        result.status = model::steps::check::CheckStatus::Failed;
        result.failure_class = Some(model::steps::check::FailureClass::Code);
        result.summary = format!("{explained}\n{}", result.summary);
        result.advice = Some(explained);
    }
}
