//! The `agent` step: render the role's prompt, invoke its adapter in a fresh process, then
//! let the runner establish what happened. After a writing role the runner checkpoints the
//! worktree and computes the changes from git; a read-only role (a reviewer) is run by
//! [`super::review`], which audits the worktree against the checkpoint.
//!
//! An agent that cannot authenticate, is out of credit or names a model it cannot use stops the
//! run right after its invocation (README.md): before the checkpoint, so nothing of the
//! failed step is recorded and `autobuild resume` performs it again from the last checkpoint.

use std::fs;
use std::path::Path;

use crate::engine::cx::RunCx;
use crate::engine::events::EventKind;
use crate::engine::exec::StepDone;
use crate::engine::plan::build_prompt_context;
use crate::engine::turn::PlayerRecord;
use crate::engine::{AgentStop, Outcome};
use agents::{
    adapter_for, Adapter, AgentOutcome, AgentRequest, AgentStatus, DEFAULT_AGENT_TIMEOUT,
};
use base::error::Error;
use base::Keyword;
use git;
use model::steps::scope::PathScope;
use model::steps::verdict::VERDICT_SCHEMA;
use model::workflow::context::{PromptContext, WorktreeContext};
use model::workflow::kinds::AgentOutputs;
use model::workflow::model::{Access, OutputKind, Role, Step};

/// `context` is what expressions see; its `steps` reach the prompt as `steps.<id>.outputs`.
pub fn execute(
    cx: &mut RunCx,
    step: &Step,
    role_name: &str,
    context: &serde_json::Value,
) -> Result<StepDone, Error> {
    let steps = context
        .get("steps")
        .and_then(serde_json::Value::as_object)
        .cloned()
        .unwrap_or_default();
    let plan = cx.plan;
    let declared = plan
        .resolved
        .workflow
        .roles
        .get(role_name)
        .ok_or_else(|| Error::runtime(format!("role `{role_name}` is not defined")))?;
    // The role's timeout, capped by the step's and by what is left of the run's wall time.
    let mut role = declared.clone();
    let timeout = declared.timeout.unwrap_or(DEFAULT_AGENT_TIMEOUT);
    role.timeout = Some(cx.clamp(step.timeout.map_or(timeout, |t| t.min(timeout))));
    let role = &role;
    let adapter = adapter_for(role.agent).ok_or_else(|| {
        Error::runtime(format!("the `{}` adapter is not available yet", role.agent))
    })?;
    // A replay's recorded agents stand in for the adapters (never the player's).
    let adapter = match &cx.replay {
        Some(recorded) => recorded.stand_in(role_name, role, adapter),
        None => adapter,
    };
    let worktree = cx.state.worktree.clone();
    if !worktree.is_dir() {
        return Err(Error::runtime(format!(
            "step `{}` needs a worktree, but no `worktree` step ran before it",
            step.id
        )));
    }
    match role.access {
        Access::Write => run_writer(
            cx,
            step,
            role_name,
            role,
            adapter.as_ref(),
            &worktree,
            steps,
        ),
        Access::ReadOnly => super::review::run_reader(
            cx,
            step,
            role_name,
            role,
            adapter.as_ref(),
            &worktree,
            steps,
        ),
    }
}

fn run_writer(
    cx: &mut RunCx,
    step: &Step,
    role_name: &str,
    role: &Role,
    adapter: &dyn Adapter,
    worktree: &Path,
    steps: serde_json::Map<String, serde_json::Value>,
) -> Result<StepDone, Error> {
    let turn = cx.turn_number();
    let prompt = render(cx, role_name, role, steps)?;
    // The stall notice is said once.
    if let Some(turn) = cx.turn.as_ref() {
        let loop_id = turn.loop_id.clone();
        if let Some(state) = cx.state.loops.get_mut(&loop_id) {
            state.stall_notice = None;
        }
    }
    let (git_dir, refs) = guard(worktree, &cx.state.branch)?;
    let main = super::sandbox::guard_main_checkout(cx)?;
    let first = Attempt {
        number: 1,
        stamps_after: None,
    };
    let invocation = invoke(cx, role_name, role, adapter, worktree, &prompt, first)?;
    let mut violation = git_dir.restore()?;
    let label = format!("turn_{turn}_{}", cx.file_label(role_name));
    violation.extend(super::sandbox::restore_main_checkout(
        cx,
        main.as_ref(),
        &label,
    )?);
    // Opened once the guarded git files are back: the runner's checks below read the
    // repository as the step left it, with the user's config.
    let after = git::StepRepo::open(worktree)?;
    after.remove_left_locks(&cx.state.branch)?;
    violation.extend(
        restore_refs(cx, &after, &refs)?
            .iter()
            .map(git::RefRestored::describe),
    );
    if !violation.is_empty() {
        cx.emit(EventKind::Warning {
            message: format!(
                "`{}` changed what it may not change; the runner put back {}",
                step.id,
                violation.join(", ")
            ),
        });
    }
    if invocation.outcome.status.is_cancelled() {
        return Ok(StepDone::cancelled());
    }
    if let Some(halt) = halt(role_name, role, &invocation) {
        return Ok(halt);
    }
    let branch = cx.state.branch.clone();
    if let Some(elsewhere) = after.reattach(&branch)? {
        cx.emit(EventKind::Warning {
            message: format!(
                "`{}` moved HEAD to {elsewhere}; the runner put it back on {branch} and kept the files",
                step.id
            ),
        });
    }
    let before = cx.state.last_checkpoint.clone().unwrap_or_default();
    let message = format!("autobuild: {} turn {turn} ({role_name})", cx.state.task_id);
    let (mut checkpoint, out_of_scope) = checkpoint_within_scope(cx, role, worktree, &message)?;
    violation.extend(out_of_scope);
    super::leftovers::remove_left_out(cx, worktree, &checkpoint.left_out)?;
    // A turn whose work cannot land whole (a submodule entry, an object the repository lacks)
    // is put back and never approved.
    let unlandable = after.unlandable_since_fork(&cx.state.base_branch, &checkpoint.commit)?;
    // The handle serves the diffs below unless the checkpoint is rewritten in between.
    let mut after = Some(after);
    if !unlandable.is_empty() {
        after = None;
        let paths: Vec<String> = unlandable.iter().map(|u| u.path().to_string()).collect();
        let removed = format!("{message}: removed what cannot land");
        checkpoint = git::drop_from_checkpoint(worktree, &paths, &removed)?;
        violation.extend(unlandable.iter().map(ToString::to_string));
    }
    // What changed since the last checkpoint, whoever committed it: a player that commits its
    // own work has changed the tree as much as one that leaves the committing to the runner.
    // Every diff of the turn is computed here, once, and stored with its record.
    let repo = match after {
        Some(after) => after,
        None => git::StepRepo::open(worktree)?,
    };
    let tests = cx.plan.test_paths()?;
    let diffs = repo.turn_diffs(
        &cx.state.base_branch,
        Some(before.as_str()).filter(|b| !b.is_empty()),
        &checkpoint.commit,
        checkpoint.changed,
        &|path: &str| tests.contains(path),
    )?;
    let stat = diffs.stat;
    let env = cx.env_vars();
    let redact = |text: &str| process::redact(text, &env);
    cx.state.last_checkpoint = Some(checkpoint.commit.clone());
    // Whether the task branch holds changes against the commit it forked from. When the fork
    // point cannot be found, the turn's own changes stand in for it.
    let branch_changed = match &diffs.branch {
        Ok(branch) => !branch.is_empty(),
        Err(e) => {
            tracing::debug!(error = %e, "cannot diff the task branch against its base");
            !stat.is_empty()
        }
    };
    let record = PlayerRecord {
        turn,
        step: step.id.clone(),
        role: role_name.to_string(),
        agent: invocation.outcome,
        changed: !stat.is_empty(),
        branch_changed: Some(branch_changed),
        checkpoint,
        files_changed: stat.paths(),
        diff_stat: stat.render(),
        branch_diff_stat: Some(match diffs.branch {
            Ok(branch) => branch.render(),
            Err(e) => format!("(the diff of the branch could not be computed: {e})"),
        }),
        // Records are kept: a diff quoting a secret's value is stored (and shown) redacted.
        tests_diff: Some(redact(&diffs.tests.unwrap_or_else(|e| {
            format!("(the diff of the test files could not be computed: {e})")
        }))),
        patch: Some(redact(
            &diffs
                .patch
                .unwrap_or_else(|e| format!("(the diff is not available: {e})")),
        )),
        scope_violation: violation,
        prompt: invocation.prompt_path,
        transcript: invocation.transcript_path,
    };
    let path = cx.record_path("player");
    cx.write_record(&path, &record)?;
    let succeeded = record.succeeded();
    let text = super::output_text::answer(
        &invocation_output(cx, role_name),
        &record.agent.final_message,
    );
    let files = record.files_changed.len();
    let exit = record.agent.status.name();
    let summary = if !record.scope_violation.is_empty() {
        format!(
            "{files} file(s) changed; scope violation: {} reverted",
            record.scope_violation.len()
        )
    } else if succeeded {
        format!("{files} file(s) changed")
    } else {
        format!("agent {}: {}", exit, record.agent.status.message())
    };
    if let Some(turn) = cx.turn.as_mut() {
        turn.player = Some(record);
    }
    let outputs = AgentOutputs {
        succeeded,
        exit: exit.to_string(),
        files_changed: files,
        decision: String::new(),
        text,
        complexity: None,
    };
    Ok(if succeeded {
        StepDone::ok(summary, outputs)
    } else {
        StepDone::failed(summary, outputs)
    })
}

/// The step that stops the run, when the agent failed in a way every later step would too.
pub(super) fn halt(role_name: &str, role: &Role, invocation: &Invocation) -> Option<StepDone> {
    let class = invocation.outcome.status.run_stopper()?;
    let stop = AgentStop {
        role: role_name.to_string(),
        agent: role.agent,
        class,
        message: invocation.outcome.status.message(),
        transcript: invocation.transcript_path.clone(),
    };
    let summary = format!("agent {}: {}", class.as_str(), stop.message);
    Some(StepDone::halted(summary, Outcome::AgentUnusable(stop)))
}

/// Checkpoints the writer's work after reverting its changes to paths outside its scope
/// (protected, or outside its role's `writes`) to the last checkpoint, on one walk of the
/// worktree; returns the checkpoint and the reverted paths, each with the reason.
fn checkpoint_within_scope(
    cx: &RunCx,
    role: &Role,
    worktree: &Path,
    message: &str,
) -> Result<(git::Checkpoint, Vec<String>), Error> {
    let scope = PathScope::new(&cx.plan.protected_paths(), role.writes.as_deref())
        .and_then(|scope| scope.locking(&cx.state.locked))
        .map_err(|why| Error::runtime(format!("path scope: {why}")))?;
    let mut reverted = Vec::new();
    let mut put_back = |changed: &[String]| {
        let outside = scope.out_of_scope(changed);
        reverted = outside
            .iter()
            .map(|(path, why)| why.describe(path))
            .collect();
        outside
            .iter()
            .map(|(path, _)| (*path).to_string())
            .collect()
    };
    let checkpoint = git::checkpoint_within_scope(
        worktree,
        message,
        cx.state.last_checkpoint.as_deref(),
        &mut put_back,
    )?;
    Ok((checkpoint, reverted))
}

/// The guards of an agent step, captured before it on one opening of the repository: the
/// shared git directory's guarded files and the refs.
pub(super) fn guard(
    worktree: &Path,
    branch: &str,
) -> Result<(git::GitDirGuard, git::RefGuard), Error> {
    let before = git::StepRepo::open(worktree)?;
    Ok((before.guard_git_dir(), before.guard_refs(branch)?))
}

/// Puts back the refs an agent step moved (other than the task branch), keeping
/// the agent's versions under the task's backup refs. `repo` is opened after the step.
pub(super) fn restore_refs(
    cx: &RunCx,
    repo: &git::StepRepo,
    refs: &git::RefGuard,
) -> Result<Vec<git::RefRestored>, Error> {
    let prefix = format!("refs/autobuild/backup/{}", cx.state.task_id);
    let runs = cx.plan.layout.runs();
    let owner = |branch: &str| crate::engine::ref_owners::owner_of(&runs, branch);
    Ok(repo.restore_refs(refs, &cx.state.branch, &prefix, &owner)?)
}

pub(super) fn render(
    cx: &RunCx,
    role_name: &str,
    role: &Role,
    steps: serde_json::Map<String, serde_json::Value>,
) -> Result<String, Error> {
    let mut context = prompt_context(cx);
    context.scope.writes = role.writes.clone();
    context.structured_verdict = structured_verdict(role);
    context.steps = steps;
    context.output_file = invocation_output(cx, role_name).display().to_string();
    cx.plan
        .resolved
        .render_prompt(&role.prompt, &context)
        .map_err(|e| Error::runtime(format!("prompt `{}`: {e}", role.prompt)))
}

pub(super) struct Invocation {
    pub(super) outcome: AgentOutcome,
    pub(super) prompt_path: std::path::PathBuf,
    pub(super) transcript_path: std::path::PathBuf,
}

/// Which run of an agent step an invocation is, and what its changes must be stamped after.
#[derive(Debug, Clone, Copy)]
pub(super) struct Attempt {
    /// 1 for the first run; a retry or a re-run counts on (its files are numbered so).
    pub(super) number: u32,
    /// The audit's mark (module `leftovers`): the agent starts once the kernel's file-stamp
    /// clock has passed it.
    pub(super) stamps_after: Option<std::time::SystemTime>,
}

pub(super) fn invoke(
    cx: &mut RunCx,
    role_name: &str,
    role: &Role,
    adapter: &dyn Adapter,
    worktree: &Path,
    prompt: &str,
    attempt: Attempt,
) -> Result<Invocation, Error> {
    let turn = cx.turn_number();
    let label = cx.file_label(role_name);
    let prompt_path = cx.paths.prompt_file(&label, turn, attempt.number);
    let transcript_path = cx.paths.transcript(&label, turn, attempt.number);
    for dir in [cx.paths.prompts(), cx.paths.logs()] {
        fs::create_dir_all(&dir).map_err(|e| Error::io("cannot create", dir.clone(), e))?;
    }
    let mut env = cx.env_vars();
    let output = invocation_output(cx, role_name);
    super::output_text::prepare(&output)?;
    env.push((
        super::output_text::OUTPUT_VAR.to_string(),
        output.display().to_string(),
    ));
    // The saved prompt is a record: it may quote a diff holding a secret's value.
    let saved = process::redact(prompt, &env);
    fs::write(&prompt_path, saved).map_err(|e| Error::io("cannot write", &prompt_path, e))?;
    if role.access == Access::ReadOnly {
        env.extend(reader_env(cx, role_name)?);
    }
    // The CLI's own state is the run's, not the user's (`agents::private_state`).
    if let Some(private) = adapter.private_state(&env, &cx.paths.dir) {
        private
            .prepare()
            .map_err(|e| Error::io("cannot prepare the agent CLI's state in", &private.dir, e))?;
        env.extend(private.env);
    }
    let confinement = super::sandbox::confine(cx, adapter.sandbox_state(&env));
    let exports = super::setup_exports::for_agent(cx, worktree, &env, confinement.as_ref());
    env.extend(exports);
    let request = AgentRequest {
        role_name,
        role,
        prompt,
        worktree,
        env: &env,
        run_dir: &cx.paths.dir,
        prompt_file: &prompt_path,
        transcript_path: &transcript_path,
        task_id: &cx.state.task_id,
        turn,
        wants_verdict: role.output == Some(OutputKind::Verdict),
        verdict_schema: VERDICT_SCHEMA,
        pricing: Some(&cx.plan.config.pricing),
        sandbox: confinement.as_ref(),
    };
    // Last, once everything above is prepared: every change the agent makes is then stamped
    // after `stamps_after` (the audit's mark, module `leftovers`).
    if let Some(mark) = attempt.stamps_after {
        super::leftovers::wait_for_stamps_past(mark);
    }
    process::take_killed();
    let invoked = adapter.invoke(&request, &cx.cancel).map_err(Error::from);
    let killed = process::take_killed();
    let restored = match &confinement {
        Some(confinement) => {
            base::failpoint::hit("objects.written");
            // Before anything of the runner's (ref guard, checkpoint) reads the worktree or the
            // agent's objects.
            super::sandbox::after_confined(cx, confinement)?
        }
        None => None,
    };
    let mut outcome = invoked?;
    outcome.notes.extend(restored);
    if !killed.is_empty() {
        let names: Vec<String> = killed.iter().map(ToString::to_string).collect();
        let note = format!(
            "the agent left {} process(es) running outside its process group, which the runner \
             stopped when it ended: {}",
            killed.len(),
            names.join(", ")
        );
        cx.emit(EventKind::Warning {
            message: note.clone(),
        });
        outcome.notes.push(note);
    }
    if let Some(confinement) = &confinement {
        let refused = sandbox::denials::in_file(&transcript_path, confinement);
        outcome.notes.extend(sandbox::denials::note(&refused));
    }
    // Adapters word their fixes for any run; this one has a name.
    if let AgentStatus::Failed { message, .. } = &mut outcome.status {
        *message = message.replace(
            "autobuild resume <ID>",
            &format!("autobuild resume {}", cx.state.task_id),
        );
    }
    for note in &outcome.notes {
        cx.emit(EventKind::Warning {
            message: format!("`{role_name}`: {note}"),
        });
    }
    if let Some(cost) = outcome.cost_usd {
        cx.state.cost_usd += cost;
        cx.state.cost_reported = true;
        cx.state.cost_estimated |= outcome.cost_estimated;
    }
    cx.state.tokens_in += outcome.usage.input;
    cx.state.tokens_out += outcome.usage.output;
    cx.state.tokens_cached += outcome.usage.cached;
    cx.state.tokens_cache_written += outcome.usage.cache_written;
    Ok(Invocation {
        outcome,
        prompt_path,
        transcript_path,
    })
}

/// The file the agent running `role_name` in this turn may write its answer to.
pub(super) fn invocation_output(cx: &RunCx, role_name: &str) -> std::path::PathBuf {
    super::output_text::output_file(&cx.paths.dir, &cx.file_label(role_name), cx.turn_number())
}

/// Whether the role's adapter carries its verdict in a structured-output channel.
pub(crate) fn structured_verdict(role: &Role) -> bool {
    role.output == Some(OutputKind::Verdict)
        && adapter_for(role.agent).is_some_and(|a| a.capabilities().structured_output)
}

/// What a read-only role's process gets on top of the project environment, so that the tools
/// it runs leave nothing in the worktree: no Python bytecode, and a scratch directory of its
/// own for temporary files (`TMPDIR`, also `AUTOBUILD_SCRATCH`) under the run's `scratch/`.
fn reader_env(cx: &RunCx, role_name: &str) -> Result<Vec<(String, String)>, Error> {
    let scratch = agents::scratch_dir(&cx.paths.dir).join(role_name);
    fs::create_dir_all(&scratch).map_err(|e| Error::io("cannot create", scratch.clone(), e))?;
    let scratch = scratch.display().to_string();
    Ok(vec![
        ("PYTHONDONTWRITEBYTECODE".to_string(), "1".to_string()),
        ("TMPDIR".to_string(), scratch.clone()),
        ("AUTOBUILD_SCRATCH".to_string(), scratch),
    ])
}

/// The prompt context of the turn in progress.
fn prompt_context(cx: &RunCx) -> PromptContext {
    let turn = cx.turn.as_ref();
    let loop_state = turn.and_then(|t| cx.state.loops.get(&t.loop_id));
    let worktree = WorktreeContext {
        path: cx.state.worktree.display().to_string(),
        branch: cx.state.branch.clone(),
        base: cx.state.base_branch.clone(),
    };
    let mut context = build_prompt_context(cx.plan, worktree, turn, loop_state);
    context
        .scope
        .protect
        .extend(cx.state.locked.iter().map(|p| globset::escape(p)));
    context
}
