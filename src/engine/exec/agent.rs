//! The `agent` step: render the role's prompt, invoke its adapter in a fresh process, then
//! let the runner establish what happened. After a writing role the runner checkpoints the
//! worktree and computes the changes from git; after a read-only role it audits the worktree
//! against the checkpoint and reverts any change (a scope violation). A verdict role's answer
//! is parsed and schema-checked, with one corrective retry.
//!
//! An agent that cannot authenticate, is out of credit or names a model it cannot use stops the
//! run right after its invocation (DESIGN.md §10): before the checkpoint, so nothing of the
//! failed step is recorded and `autobuild resume` performs it again from the last checkpoint.

use std::fs;
use std::path::Path;

use crate::agents::{
    adapter_for, Adapter, AgentOutcome, AgentRequest, AgentStatus, DEFAULT_AGENT_TIMEOUT,
};
use crate::engine::cx::RunCx;
use crate::engine::events::EventKind;
use crate::engine::exec::StepDone;
use crate::engine::plan::build_prompt_context;
use crate::engine::turn::{write_record, CoachRecord, PlayerRecord};
use crate::engine::{AgentStop, Outcome};
use crate::error::Error;
use crate::git;
use crate::steps::scope::PathScope;
use crate::steps::verdict::{self, Verdict, VERDICT_SCHEMA};
use crate::workflow::context::{PromptContext, WorktreeContext};
use crate::workflow::kinds::AgentOutputs;
use crate::workflow::model::{Access, OutputKind, Role, Step};

pub fn execute(cx: &mut RunCx, step: &Step, role_name: &str) -> Result<StepDone, Error> {
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
    let worktree = cx.state.worktree.clone();
    if !worktree.is_dir() {
        return Err(Error::runtime(format!(
            "step `{}` needs a worktree, but no `worktree` step ran before it",
            step.id
        )));
    }
    match role.access {
        Access::Write => run_writer(cx, step, role_name, role, adapter.as_ref(), &worktree),
        Access::ReadOnly => run_reader(cx, step, role_name, role, adapter.as_ref(), &worktree),
    }
}

fn run_writer(
    cx: &mut RunCx,
    step: &Step,
    role_name: &str,
    role: &Role,
    adapter: &dyn Adapter,
    worktree: &Path,
) -> Result<StepDone, Error> {
    let turn = cx.turn_number();
    let prompt = render(cx, role)?;
    // The stall notice is said once.
    if let Some(turn) = cx.turn.as_ref() {
        let loop_id = turn.loop_id.clone();
        if let Some(state) = cx.state.loops.get_mut(&loop_id) {
            state.stall_notice = None;
        }
    }
    let git_dir = git::GitDirGuard::capture(worktree)?;
    let refs = git::RefGuard::capture(worktree, &cx.state.branch)?;
    let main = super::sandbox::guard_main_checkout(cx)?;
    let invocation = invoke(cx, role_name, role, adapter, worktree, &prompt, 1)?;
    let mut violation = git_dir.restore()?;
    let label = format!("turn_{turn}_{}", cx.file_label(role_name));
    violation.extend(super::sandbox::restore_main_checkout(
        cx,
        main.as_ref(),
        &label,
    )?);
    violation.extend(
        restore_refs(cx, &refs, worktree)?
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
    violation.extend(enforce_scope(cx, role, worktree)?);
    let branch = cx.state.branch.clone();
    if let Some(elsewhere) = git::reattach(worktree, &branch)? {
        cx.emit(EventKind::Warning {
            message: format!(
                "`{}` moved HEAD to {elsewhere}; the runner put it back on {branch} and kept the files",
                step.id
            ),
        });
    }
    let before = cx.state.last_checkpoint.clone().unwrap_or_default();
    let message = format!("autobuild: {} turn {turn} ({role_name})", cx.state.task_id);
    let mut checkpoint = git::checkpoint(worktree, &message)?;
    // A turn whose work cannot land whole (a submodule entry, an object the repository lacks)
    // is put back and never approved.
    let unlandable =
        git::unlandable_since_fork(worktree, &cx.state.base_branch, &checkpoint.commit)?;
    if !unlandable.is_empty() {
        let paths: Vec<String> = unlandable.iter().map(|u| u.path().to_string()).collect();
        let removed = format!("{message}: removed what cannot land");
        checkpoint = git::drop_from_checkpoint(worktree, &paths, &removed)?;
        violation.extend(unlandable.iter().map(ToString::to_string));
    }
    // What changed since the last checkpoint, whoever committed it: a player that commits its
    // own work has changed the tree as much as one that leaves the committing to the runner.
    let stat = if before.is_empty() {
        git::DiffStat::default()
    } else {
        git::diff_stat(worktree, &before, &checkpoint.commit)?
    };
    cx.state.last_checkpoint = Some(checkpoint.commit.clone());
    let record = PlayerRecord {
        turn,
        step: step.id.clone(),
        role: role_name.to_string(),
        agent: invocation.outcome,
        changed: !stat.is_empty(),
        checkpoint,
        files_changed: stat.paths(),
        diff_stat: stat.render(),
        scope_violation: violation,
        prompt: invocation.prompt_path,
        transcript: invocation.transcript_path,
    };
    let path = cx.record_path("player");
    write_record(&path, &record).map_err(|e| Error::io("cannot write", &path, e))?;
    let succeeded = record.succeeded();
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
    };
    Ok(if succeeded {
        StepDone::ok(summary, outputs)
    } else {
        StepDone::failed(summary, outputs)
    })
}

fn run_reader(
    cx: &mut RunCx,
    step: &Step,
    role_name: &str,
    role: &Role,
    adapter: &dyn Adapter,
    worktree: &Path,
) -> Result<StepDone, Error> {
    let turn = cx.turn_number();
    let wants_verdict = role.output == Some(OutputKind::Verdict);
    let prompt = render(cx, role)?;
    let git_dir = git::GitDirGuard::capture(worktree)?;
    let refs = git::RefGuard::capture(worktree, &cx.state.branch)?;
    let main = super::sandbox::guard_main_checkout(cx)?;
    let mut invocation = invoke(cx, role_name, role, adapter, worktree, &prompt, 1)?;
    let mut violation = audit(cx, worktree)?;
    let label = format!("turn_{turn}_{}", cx.file_label(role_name));
    violation.extend(super::sandbox::restore_main_checkout(
        cx,
        main.as_ref(),
        &label,
    )?);
    violation.extend(git_dir.restore()?);
    violation.extend(
        restore_refs(cx, &refs, worktree)?
            .iter()
            .map(git::RefRestored::describe),
    );
    crate::failpoint::hit("audit.restored");
    if invocation.outcome.status.is_cancelled() {
        return Ok(StepDone::cancelled());
    }
    if let Some(halt) = halt(role_name, role, &invocation) {
        return Ok(halt);
    }
    let criteria: Vec<verdict::TaskCriterion> = cx
        .plan
        .task
        .criteria
        .iter()
        .map(|c| verdict::TaskCriterion {
            id: c.id.clone(),
            runner_verified: c.verify.is_some(),
        })
        .collect();
    let mut retried = false;
    let mut verdict_error = None;
    let verdict = if !wants_verdict {
        None
    } else if !invocation.outcome.status.is_success() {
        // Whatever a failed, timed-out or errored agent printed is not a verdict.
        let reason = failed_agent_reason(&invocation.outcome);
        verdict_error = Some(reason.clone());
        Some(verdict::failed_agent_verdict(&reason))
    } else {
        let first = parse(&invocation.outcome, &criteria);
        Some(match first {
            Ok(v) => v,
            Err(error) if invocation.outcome.status.is_success() => {
                retried = true;
                let retry = verdict::retry_prompt(
                    &prompt,
                    &error,
                    &previous_answer(&invocation.outcome),
                    &criteria,
                );
                invocation = invoke(cx, role_name, role, adapter, worktree, &retry, 2)?;
                violation.extend(audit(cx, worktree)?);
                let label = format!("{label}_retry");
                violation.extend(super::sandbox::restore_main_checkout(
                    cx,
                    main.as_ref(),
                    &label,
                )?);
                violation.extend(git_dir.restore()?);
                violation.extend(
                    restore_refs(cx, &refs, worktree)?
                        .iter()
                        .map(git::RefRestored::describe),
                );
                if invocation.outcome.status.is_cancelled() {
                    return Ok(StepDone::cancelled());
                }
                if let Some(halt) = halt(role_name, role, &invocation) {
                    return Ok(halt);
                }
                if !invocation.outcome.status.is_success() {
                    let reason = failed_agent_reason(&invocation.outcome);
                    verdict_error = Some(reason.clone());
                    verdict::failed_agent_verdict(&reason)
                } else {
                    match parse(&invocation.outcome, &criteria) {
                        Ok(v) => v,
                        Err(error) => {
                            verdict_error = Some(error.to_string());
                            verdict::fallback_verdict(&error)
                        }
                    }
                }
            }
            Err(error) => {
                verdict_error = Some(error.to_string());
                verdict::fallback_verdict(&error)
            }
        })
    };
    violation.sort();
    violation.dedup();
    let record = CoachRecord {
        turn,
        step: step.id.clone(),
        role: role_name.to_string(),
        agent: invocation.outcome,
        verdict,
        verdict_error,
        retried,
        scope_violation: violation,
        prompt: invocation.prompt_path,
        transcript: invocation.transcript_path,
    };
    // The turn's first reviewer files as `coach`; every further one under its step id.
    let first = cx
        .turn
        .as_ref()
        .is_none_or(|t| t.coach.as_ref().is_none_or(|c| c.step == step.id));
    let path = if first {
        cx.record_path("coach")
    } else {
        cx.record_path(&format!("coach_{}", step.id))
    };
    write_record(&path, &record).map_err(|e| Error::io("cannot write", &path, e))?;
    let decision = record
        .verdict
        .as_ref()
        .map(|v| v.decision.as_str())
        .unwrap_or("");
    let mut summary = match &record.verdict {
        Some(v) => format!("{}, {} issue(s)", v.decision.as_str(), v.issues.len()),
        None => format!("agent {}", record.agent.status.name()),
    };
    if !record.scope_violation.is_empty() {
        summary.push_str(&format!(
            "; scope violation: {} file(s) changed and reverted",
            record.scope_violation.len()
        ));
    }
    let outputs = AgentOutputs {
        succeeded: record.agent.status.is_success(),
        exit: record.agent.status.name().to_string(),
        files_changed: record.scope_violation.len(),
        decision: decision.to_string(),
    };
    let ok = record.agent.status.is_success() && record.scope_violation.is_empty();
    if let Some(turn) = cx.turn.as_mut() {
        if first {
            turn.coach = Some(record);
        } else {
            turn.more_reviews.retain(|r| r.step != record.step);
            turn.more_reviews.push(record);
        }
    }
    Ok(if ok {
        StepDone::ok(summary, outputs)
    } else {
        StepDone::failed(summary, outputs)
    })
}

/// The step that stops the run, when the agent failed in a way every later step would too.
fn halt(role_name: &str, role: &Role, invocation: &Invocation) -> Option<StepDone> {
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

fn failed_agent_reason(outcome: &AgentOutcome) -> String {
    format!(
        "the coach agent did not finish successfully ({}): {}",
        outcome.status.name(),
        outcome.status.message()
    )
}

fn parse(
    outcome: &AgentOutcome,
    criteria: &[verdict::TaskCriterion],
) -> Result<Verdict, verdict::VerdictError> {
    verdict::parse_verdict(
        outcome.structured_output.as_ref(),
        &outcome.final_message,
        criteria,
    )
}

/// What the coach answered, as its retry prompt shows it: the structured output when the
/// adapter has one, else the final message.
fn previous_answer(outcome: &AgentOutcome) -> String {
    match outcome.structured_output.as_ref().filter(|v| !v.is_null()) {
        Some(value) => serde_json::to_string_pretty(value).unwrap_or_default(),
        None => outcome.final_message.clone(),
    }
}

/// A read-only role must leave the worktree exactly at the checkpoint: HEAD on the task branch,
/// the branch at the checkpoint, the files as committed. Whatever differs is put back and
/// returned (paths, and notes on a moved HEAD or branch).
fn audit(cx: &RunCx, worktree: &Path) -> Result<Vec<String>, Error> {
    let Some(checkpoint) = cx.state.last_checkpoint.as_deref() else {
        return Ok(Vec::new());
    };
    let branch = &cx.state.branch;
    let mut changed = Vec::new();
    if let Some(elsewhere) = git::reattach(worktree, branch)? {
        changed.push(format!("(HEAD was moved to {elsewhere})"));
    }
    let tip = git::branch_tip(worktree, branch)?;
    if tip != checkpoint {
        changed.push(format!(
            "(branch {branch} was moved to {}: commits were made)",
            tip.get(..10).unwrap_or(&tip)
        ));
    }
    changed.extend(git::restore(worktree, checkpoint)?);
    Ok(changed)
}

/// Reverts the writer's changes to paths outside its scope (protected, or outside its role's
/// `writes`) to the last checkpoint; returns them, each with the reason.
fn enforce_scope(cx: &RunCx, role: &Role, worktree: &Path) -> Result<Vec<String>, Error> {
    let Some(checkpoint) = cx.state.last_checkpoint.as_deref() else {
        return Ok(Vec::new());
    };
    let scope = PathScope::new(&cx.plan.protected_paths(), role.writes.as_deref())
        .map_err(|why| Error::runtime(format!("path scope: {why}")))?;
    let changed = git::changed_files_since(worktree, checkpoint)?;
    let outside = scope.out_of_scope(&changed);
    if outside.is_empty() {
        return Ok(Vec::new());
    }
    let paths: Vec<&str> = outside.iter().map(|(path, _)| *path).collect();
    git::restore_paths(worktree, checkpoint, &paths)?;
    Ok(outside
        .iter()
        .map(|(path, why)| why.describe(path))
        .collect())
}

/// Puts back the refs an agent step moved (other than the task branch), keeping
/// the agent's versions under the task's backup refs.
fn restore_refs(
    cx: &RunCx,
    refs: &git::RefGuard,
    worktree: &Path,
) -> Result<Vec<git::RefRestored>, Error> {
    let prefix = format!("refs/autobuild/backup/{}", cx.state.task_id);
    let runs = cx.plan.layout.runs();
    let owner = |branch: &str| crate::engine::ref_owners::owner_of(&runs, branch);
    Ok(refs.restore(worktree, &cx.state.branch, &prefix, &owner)?)
}

fn render(cx: &RunCx, role: &Role) -> Result<String, Error> {
    let mut context = prompt_context(cx);
    context.scope.writes = role.writes.clone();
    cx.plan
        .resolved
        .render_prompt(&role.prompt, &context)
        .map_err(|e| Error::runtime(format!("prompt `{}`: {e}", role.prompt)))
}

struct Invocation {
    outcome: AgentOutcome,
    prompt_path: std::path::PathBuf,
    transcript_path: std::path::PathBuf,
}

fn invoke(
    cx: &mut RunCx,
    role_name: &str,
    role: &Role,
    adapter: &dyn Adapter,
    worktree: &Path,
    prompt: &str,
    attempt: u32,
) -> Result<Invocation, Error> {
    let turn = cx.turn_number();
    let label = cx.file_label(role_name);
    let prompt_path = cx.paths.prompt_file(&label, turn, attempt);
    let transcript_path = cx.paths.transcript(&label, turn, attempt);
    for dir in [cx.paths.prompts(), cx.paths.logs()] {
        fs::create_dir_all(&dir).map_err(|e| Error::io("cannot create", dir.clone(), e))?;
    }
    let env = cx.env_vars();
    // The saved prompt is a record: it may quote a diff holding a secret's value.
    let saved = crate::agents::process::redact(prompt, &env);
    fs::write(&prompt_path, saved).map_err(|e| Error::io("cannot write", &prompt_path, e))?;
    let confinement = super::sandbox::confine(cx, adapter.sandbox_state(&env));
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
    let invoked = adapter.invoke(&request, &cx.cancel).map_err(Error::from);
    if confinement.is_some() {
        crate::failpoint::hit("objects.written");
        // Before anything of the runner's (ref guard, checkpoint) reads the agent's objects.
        super::sandbox::import_objects(cx)?;
    }
    let mut outcome = invoked?;
    if confinement.is_some() {
        let refused = crate::sandbox::denials::in_file(&transcript_path);
        outcome
            .notes
            .extend(crate::sandbox::denials::note(&refused));
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
        cx.state.cost_estimated |= outcome.cost_estimated;
    }
    cx.state.tokens_in += outcome.usage.input;
    cx.state.tokens_out += outcome.usage.output;
    Ok(Invocation {
        outcome,
        prompt_path,
        transcript_path,
    })
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
    build_prompt_context(cx.plan, worktree, turn, loop_state)
}
