//! How the engine performs each built-in step against a live run.
//!
//! `src/steps/` holds what a step computes (pure decisions, check execution); the files here
//! are the glue: they read the run context, call into `steps`, `agents` and `git`, write the
//! turn records, and return the step's typed outputs.

mod agent;
mod approval;
mod coverage;
mod gate;
mod hidden_check;
pub(crate) mod leftovers;
mod merge;
mod oracle;
mod output_text;
pub mod pull_request;
mod report;
mod review;
mod run;
mod sandbox;
mod setup_exports;
mod verify;
mod worktree;
mod worktree_setup;

pub(crate) use agent::structured_verdict;
pub use merge::{merge_run, refused_secrets, task_file_completed, MergeRequest, StateJournal};
pub use report::write_report;
pub use sandbox::objects_dir;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::engine::cx::RunCx;
use base::error::Error;
use model::workflow::model::{Action, Step};

/// What a finished step hands back to the interpreter.
#[derive(Debug, Clone, Default)]
pub struct StepDone {
    pub ok: bool,
    pub outputs: Map<String, Value>,
    /// One runner-produced line for the display and the event log.
    pub summary: String,
    /// The step was interrupted by Ctrl-C; it is not recorded as completed.
    pub cancelled: bool,
    /// The run must stop with this outcome; the step is not recorded as completed, so a
    /// resumed run performs it again.
    pub stop: Option<crate::engine::Outcome>,
}

impl StepDone {
    /// A step that did its job; `outputs` is its kind's typed outputs.
    pub fn ok(summary: impl Into<String>, outputs: impl Serialize) -> StepDone {
        StepDone {
            ok: true,
            outputs: into_map(serde_json::to_value(outputs).unwrap_or(Value::Null)),
            summary: summary.into(),
            cancelled: false,
            stop: None,
        }
    }

    pub fn failed(summary: impl Into<String>, outputs: impl Serialize) -> StepDone {
        StepDone {
            ok: false,
            ..StepDone::ok(summary, outputs)
        }
    }

    /// The step ends the run with `outcome`.
    pub fn halted(summary: impl Into<String>, outcome: crate::engine::Outcome) -> StepDone {
        StepDone {
            summary: summary.into(),
            stop: Some(outcome),
            ..StepDone::default()
        }
    }

    pub fn cancelled() -> StepDone {
        StepDone {
            cancelled: true,
            summary: "cancelled".into(),
            ..StepDone::default()
        }
    }
}

fn into_map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// Performs `step`; `context` is what `${{ }}` in the step's strings may read. What commands
/// the runner ran (checks, `run` steps) left in the worktree is removed before the next step
/// that needs the worktree as checkpointed, or by the next read-only agent step's audit on the
/// same walk ([`leftovers`]).
pub fn execute(cx: &mut RunCx, step: &Step, context: &Value) -> Result<StepDone, Error> {
    if !leftovers::can_wait_for(cx, step)? {
        leftovers::remove(cx)?;
    }
    let done = perform(cx, step, context);
    if step.action.kind().leaves_files && cx.state.last_checkpoint.is_some() {
        cx.leftovers = Some(step.id.clone());
        cx.leftovers_at = Some(std::time::SystemTime::now());
    }
    done
}

fn perform(cx: &mut RunCx, step: &Step, context: &Value) -> Result<StepDone, Error> {
    match &step.action {
        Action::Worktree(_) => worktree::execute(cx),
        Action::Agent(agent) => agent::execute(cx, step, &agent.role, context),
        Action::Verify(verify) => verify::execute(
            cx,
            verify.checks.as_deref(),
            step.timeout,
            verify.expect.unwrap_or_default(),
        ),
        Action::Gate(gate) => gate::execute(cx, &step.id, gate),
        Action::Approval(approval) => {
            approval::execute(cx, step, approval.question.as_deref(), context)
        }
        Action::Merge(merge) => merge::execute(cx, merge.strategy),
        Action::Run(run) => run::execute(cx, step, &run.run, &run.env, context),
        Action::Report(_) => report::execute(cx),
        Action::Loop(_) => Err(Error::runtime(format!(
            "step `{}`: loops are run by the interpreter",
            step.id
        ))),
    }
}

/// The worktree-relative paths the task branch changed against the commit it forked from, as of
/// the last checkpoint, or why that cannot be computed.
pub(super) fn branch_changes(cx: &RunCx) -> Result<Vec<String>, git::GitError> {
    let (base, commit) = fork_and_checkpoint(cx)?;
    git::diff_stat(&cx.state.worktree, &base, &commit).map(|stat| stat.paths())
}

/// Where the task branch forked from the base, and the last checkpoint (`HEAD` before any).
pub(super) fn fork_and_checkpoint(cx: &RunCx) -> Result<(String, String), git::GitError> {
    let commit = cx
        .state
        .last_checkpoint
        .clone()
        .unwrap_or_else(|| "HEAD".to_string());
    let base =
        git::Repo::discover(&cx.state.worktree)?.fork_point(&cx.state.base_branch, &commit)?;
    Ok((base, commit))
}
