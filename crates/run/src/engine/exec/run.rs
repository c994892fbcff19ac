//! The `run` step: a shell command in the worktree with the project environment. Values from
//! the workflow reach it only as environment variables (`env = { NAME = "${{ expr }}" }` is
//! rendered by the workflow layer), never spliced into the command text.

use std::collections::BTreeMap;
use std::fs;

use crate::engine::cx::RunCx;
use crate::engine::exec::StepDone;
use base::error::Error;
use base::Keyword;
use model::steps::verify::{run_checks, CheckSpec};
use model::workflow::expr::interpolate;
use model::workflow::kinds::RunOutputs;
use model::workflow::model::Step;

const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(600);

pub fn execute(
    cx: &mut RunCx,
    step: &Step,
    command: &str,
    extra_env: &BTreeMap<String, String>,
    context: &serde_json::Value,
) -> Result<StepDone, Error> {
    let logs = cx.paths.logs();
    fs::create_dir_all(&logs).map_err(|e| Error::io("cannot create", &logs, e))?;
    let mut env = cx.env_vars();
    for (name, template) in extra_env {
        let value = interpolate(template, context)
            .map_err(|e| Error::runtime(format!("step `{}`: env `{name}`: {e}", step.id)))?;
        env.push((name.clone(), value));
    }
    let spec = CheckSpec {
        name: step.id.clone(),
        command: command.to_string(),
        timeout: cx.clamp(step.timeout.unwrap_or(DEFAULT_TIMEOUT)),
        results: None,
    };
    // Never in the user's main checkout: a `run` step needs the task's worktree.
    let worktree = cx.state.worktree.clone();
    if !worktree.is_dir() {
        return Err(Error::runtime(format!(
            "step `{}` runs in the task's worktree, which does not exist here (it comes after a `worktree` step and before a merge removes it)",
            step.id
        )));
    }
    let confinement = super::sandbox::confine(cx, Vec::new());
    let shell = |cmd: &str| cx.project_env.shell_command(cmd);
    let prefix = format!("turn_{}_run_", cx.turn_number());
    let results = run_checks(
        std::slice::from_ref(&spec),
        &shell,
        &env,
        &worktree,
        &logs,
        &prefix,
        &cx.cancel,
        Some(&agents::command_group_file(&cx.paths.dir)),
        confinement.as_ref(),
    );
    if let Some(confinement) = &confinement {
        super::sandbox::after_confined(cx, confinement)?;
    }
    if cx.cancel.is_cancelled() {
        return Ok(StepDone::cancelled());
    }
    let Some(result) = results.into_iter().next() else {
        return Err(Error::runtime(format!("step `{}` did not run", step.id)));
    };
    let outputs = RunOutputs {
        exit_code: result.exit_code,
        passed: result.passed(),
    };
    let summary = format!(
        "{} (log: {})",
        result.status.as_str(),
        result.log_path.display()
    );
    Ok(if result.passed() {
        StepDone::ok(summary, outputs)
    } else {
        StepDone::failed(summary, outputs)
    })
}
