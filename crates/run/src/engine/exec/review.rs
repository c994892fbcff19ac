//! A read-only `agent` step (a reviewer): invoke it, audit the worktree against the checkpoint,
//! and parse its verdict with one corrective retry.
//!
//! What a reviewer leaves behind is judged by what it is, never blamed on the player:
//! - files it **created** (caches, bytecode, build output of the tests it ran) are removed with
//!   a warning naming the step and role, and do not count against the turn;
//! - files of the checkpoint it **edited or deleted** are reverted and the review is run once
//!   more; a second time, the review counts as failed (a `coach_output_invalid` verdict that
//!   names the reviewer), so the turn is not approved and the player is told nobody judged it;
//! - a moved HEAD or branch, the shared git directory or other refs changed: a scope violation,
//!   put back by the runner, and the turn is not approvable.

use std::path::Path;

use crate::engine::cx::RunCx;
use crate::engine::events::EventKind;
use crate::engine::exec::StepDone;
use crate::engine::turn::CoachRecord;
use agents::{Adapter, AgentOutcome};
use base::error::Error;
use base::Keyword;
use git;
use model::steps::verdict::{self, Verdict};
use model::workflow::kinds::AgentOutputs;
use model::workflow::model::{OutputKind, Role, Step};

use super::agent::{
    guard, halt, invocation_output, invoke, render, restore_refs, Attempt, Invocation,
};

/// How many file names a warning lists before it says "and N more".
const NAMES_SHOWN: usize = 5;

pub(super) fn run_reader(
    cx: &mut RunCx,
    step: &Step,
    role_name: &str,
    role: &Role,
    adapter: &dyn Adapter,
    worktree: &Path,
    steps: serde_json::Map<String, serde_json::Value>,
) -> Result<StepDone, Error> {
    let turn = cx.turn_number();
    let wants_verdict = role.output == Some(OutputKind::Verdict);
    let prompt = render(cx, role_name, role, steps)?;
    let (git_dir, refs) = guard(worktree, &cx.state.branch)?;
    let mut review = Review {
        step,
        role_name,
        role,
        adapter,
        worktree,
        git_dir,
        refs,
        main: super::sandbox::guard_main_checkout(cx)?,
        label: format!("turn_{turn}_{}", cx.file_label(role_name)),
        attempt: 0,
        rerun: false,
        failed: false,
        violation: Vec::new(),
        removed: Vec::new(),
        reverted: Vec::new(),
        leftovers: None,
    };
    // A reviewer of one concern judges only the criteria its step names (`criteria`).
    let judges = |id: &str| match &step.action {
        model::workflow::model::Action::Agent(agent) => agent.judges(id),
        _ => true,
    };
    if let model::workflow::model::Action::Agent(model::workflow::kinds::AgentStep {
        criteria: Some(model::workflow::kinds::ReviewedCriteria::Ids(ids)),
        ..
    }) = &step.action
    {
        let unknown: Vec<&String> = ids
            .iter()
            .filter(|id| !cx.plan.task.criteria.iter().any(|c| &c.id == *id))
            .collect();
        if !unknown.is_empty() {
            cx.emit(EventKind::Warning {
                message: format!(
                    "the step `{}` judges criteria {} that task {} does not have; its \
                     reviewer judges only the others",
                    step.id,
                    unknown
                        .iter()
                        .map(|id| format!("`{id}`"))
                        .collect::<Vec<_>>()
                        .join(", "),
                    cx.plan.task.id
                ),
            });
        }
    }
    let criteria: Vec<verdict::TaskCriterion> = cx
        .plan
        .task
        .criteria
        .iter()
        .filter(|c| judges(&c.id))
        .map(|c| verdict::TaskCriterion {
            id: c.id.clone(),
            runner_verified: c.verify.is_some(),
        })
        .collect();
    let mut retried = false;
    // Read only for a verdict that cites tests, and before the reviewer could change them
    // (it cannot: read-only, audited); `None` (unreadable) checks no citation.
    let test_files_now = std::cell::OnceCell::new();
    let (plan, checkout, checkpoint) = (
        cx.plan,
        cx.state.worktree.clone(),
        cx.state.last_checkpoint.clone(),
    );
    let tests = || {
        test_files_now
            .get_or_init(|| test_files(plan, &checkout, checkpoint.as_deref()))
            .clone()
    };
    review.leftovers = super::leftovers::mark_for_audit(cx);
    let (invocation, verdict, verdict_error) = match review.run(cx, &prompt)? {
        Reviewed::Stop(done) => return Ok(done),
        Reviewed::Failed(invocation, reason) => {
            let verdict = wants_verdict.then(|| verdict::failed_agent_verdict(&reason));
            (invocation, verdict, Some(reason))
        }
        Reviewed::Answered(invocation) if !wants_verdict => (invocation, None, None),
        Reviewed::Answered(invocation) => match judge(&invocation.outcome, &criteria, &tests) {
            Ok(verdict) => (invocation, Some(verdict), None),
            Err(Unusable::AgentFailed { reason, note }) => (
                invocation,
                Some(verdict::failed_agent_verdict(&note)),
                Some(reason),
            ),
            Err(Unusable::Invalid(error)) => {
                retried = true;
                let retry = verdict::retry_prompt(
                    &prompt,
                    &error,
                    &previous_answer(&invocation.outcome),
                    &criteria,
                );
                match review.run(cx, &retry)? {
                    Reviewed::Stop(done) => return Ok(done),
                    Reviewed::Failed(invocation, reason) => (
                        invocation,
                        Some(verdict::failed_agent_verdict(&reason)),
                        Some(reason),
                    ),
                    Reviewed::Answered(invocation) => {
                        match judge(&invocation.outcome, &criteria, &tests) {
                            Ok(verdict) => (invocation, Some(verdict), None),
                            Err(Unusable::AgentFailed { reason, note }) => (
                                invocation,
                                Some(verdict::failed_agent_verdict(&note)),
                                Some(reason),
                            ),
                            Err(Unusable::Invalid(error)) => (
                                invocation,
                                Some(verdict::fallback_verdict(&error)),
                                Some(error.to_string()),
                            ),
                        }
                    }
                }
            }
        },
    };
    let Review {
        mut violation,
        removed,
        reverted,
        failed: failed_review,
        ..
    } = review;
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
        removed_files: removed,
        reverted_edits: reverted,
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
    cx.write_record(&path, &record)?;
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
            "; scope violation: {} change(s) reverted",
            record.scope_violation.len()
        ));
    }
    if !record.reverted_edits.is_empty() {
        summary.push_str(&format!(
            "; {} edited file(s) reverted",
            record.reverted_edits.len()
        ));
    }
    let text = super::output_text::answer(
        &invocation_output(cx, role_name),
        &record.agent.final_message,
    );
    let plan = role.output == Some(OutputKind::Plan);
    let outputs = AgentOutputs {
        succeeded: record.agent.status.is_success(),
        exit: record.agent.status.name().to_string(),
        files_changed: record.scope_violation.len() + record.reverted_edits.len(),
        decision: decision.to_string(),
        complexity: plan
            .then(|| model::workflow::kinds::stated_complexity(&text))
            .flatten(),
        text,
    };
    // A plan nobody wrote cannot be followed: the run stops rather than tell the player to
    // follow nothing (a failed agent is the agent's own failure, reported as such).
    if plan && record.agent.status.is_success() && outputs.text.trim().is_empty() {
        let mut done = StepDone::failed(
            format!("`{role_name}` answered with an empty plan"),
            outputs,
        );
        done.stop = Some(crate::engine::Outcome::Failed {
            message: format!(
                "the `{role_name}` role's plan is empty: nothing for the player to follow; \
                 look at its transcript, then start again with `autobuild task {} --resume`",
                cx.state.task_id
            ),
            infrastructure: false,
        });
        return Ok(done);
    }
    let ok =
        record.agent.status.is_success() && record.scope_violation.is_empty() && !failed_review;
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

/// One reviewer step in progress: its invocations so far and what the audits found.
struct Review<'a> {
    step: &'a Step,
    role_name: &'a str,
    role: &'a Role,
    adapter: &'a dyn Adapter,
    worktree: &'a Path,
    git_dir: git::GitDirGuard,
    refs: git::RefGuard,
    /// The main checkout before the step, when the run is not confined.
    main: Option<git::CheckoutGuard>,
    /// `turn_N_<role>`: where what an invocation wrote into the main checkout is kept.
    label: String,
    attempt: u32,
    /// The review was already run again after an edit.
    rerun: bool,
    /// The reviewer edited the checkpoint in both runs: its review does not count.
    failed: bool,
    /// Scope violations: a moved HEAD or branch, the git directory, other refs.
    violation: Vec<String>,
    /// Files the reviewer created and the runner removed.
    removed: Vec<String>,
    /// Files of the checkpoint the reviewer edited or deleted and the runner reverted.
    reverted: Vec<String>,
    /// The step whose leftovers the first audit removes too, and when the reviewer started
    /// (`exec::leftovers`).
    leftovers: Option<(String, std::time::SystemTime)>,
}

enum Reviewed {
    Answered(Invocation),
    /// The reviewer edited the checkpoint again after the re-run: its review does not count.
    Failed(Invocation, String),
    Stop(StepDone),
}

impl Review<'_> {
    /// Runs the reviewer with `prompt`, and once more when it edits a file of the checkpoint.
    fn run(&mut self, cx: &mut RunCx, prompt: &str) -> Result<Reviewed, Error> {
        let mut prompt = prompt.to_string();
        loop {
            self.attempt += 1;
            let attempt = Attempt {
                number: self.attempt,
                // Pending until this attempt's audit removes what the commands left.
                stamps_after: self.leftovers.as_ref().map(|(_, mark)| *mark),
            };
            let invocation = invoke(
                cx,
                self.role_name,
                self.role,
                self.adapter,
                self.worktree,
                &prompt,
                attempt,
            )?;
            let edited = self.audit(cx)?;
            base::failpoint::hit("audit.restored");
            if invocation.outcome.status.is_cancelled() {
                return Ok(Reviewed::Stop(StepDone::cancelled()));
            }
            if let Some(halt) = halt(self.role_name, self.role, &invocation) {
                return Ok(Reviewed::Stop(halt));
            }
            if edited.is_empty() {
                return Ok(Reviewed::Answered(invocation));
            }
            let names = list(&edited);
            self.reverted.extend(edited);
            self.reverted.sort();
            self.reverted.dedup();
            if self.rerun {
                cx.emit(EventKind::Warning {
                    message: format!(
                        "`{}` (role `{}`) edited {names} again; the runner reverted it and this \
                         review does not count",
                        self.step.id, self.role_name
                    ),
                });
                self.failed = true;
                let reason = format!(
                    "the reviewer `{}` (role `{}`) edited files of the checkpoint in two runs \
                     ({names}), which its read-only \
                     role forbids; the runner reverted them and its review does not count. \
                     Nothing in the player's work caused this; the review runs again next turn",
                    self.step.id, self.role_name
                );
                return Ok(Reviewed::Failed(invocation, reason));
            }
            self.rerun = true;
            cx.emit(EventKind::Warning {
                message: format!(
                    "`{}` (role `{}`) edited {names}; the runner reverted it and runs the review \
                     once more",
                    self.step.id, self.role_name
                ),
            });
            prompt.push_str(&rerun_note(&names));
        }
    }

    /// Puts the worktree, the git directory and the refs back as they were before the
    /// invocation. Created files are removed with a warning; moved refs are scope violations;
    /// the edited files of the checkpoint are returned.
    fn audit(&mut self, cx: &mut RunCx) -> Result<Vec<String>, Error> {
        // The guarded git files first: the walk below reads the repository's config and
        // `info/exclude`, which must be the user's, not what the reviewer made of them (an
        // exclude rule it added would hide the files it created from the restore).
        let label = match self.attempt {
            1 => self.label.clone(),
            n => format!("{}_{}", self.label, n),
        };
        self.violation.extend(super::sandbox::restore_main_checkout(
            cx,
            self.main.as_ref(),
            &label,
        )?);
        self.violation.extend(self.git_dir.restore()?);
        // Opened once the guarded git files are back, and used for every ref check.
        let repo = git::StepRepo::open(self.worktree)?;
        repo.remove_left_locks(&cx.state.branch)?;
        self.violation.extend(
            restore_refs(cx, &repo, &self.refs)?
                .iter()
                .map(git::RefRestored::describe),
        );
        let Some(checkpoint) = cx.state.last_checkpoint.clone() else {
            return Ok(Vec::new());
        };
        let branch = cx.state.branch.clone();
        if let Some(elsewhere) = repo.reattach(&branch)? {
            self.violation
                .push(format!("(HEAD was moved to {elsewhere})"));
        }
        let tip = repo.branch_tip(&branch)?;
        drop(repo);
        if tip != checkpoint {
            self.violation.push(format!(
                "(branch {branch} was moved to {}: commits were made)",
                tip.get(..10).unwrap_or(&tip)
            ));
        }
        let leftovers = self.leftovers.take();
        let mark = leftovers.as_ref().map(|(_, mark)| *mark);
        let restored = git::restore_since(self.worktree, &checkpoint, mark)?;
        let (theirs, restored): (Vec<String>, Vec<String>) = restored
            .paths
            .into_iter()
            .partition(|path| restored.before_mark.binary_search(path).is_ok());
        if let Some((step_id, _)) = leftovers {
            super::leftovers::removed_by_audit(cx, &step_id, &theirs);
        }
        let (created, changed) = git::split_created(self.worktree, &checkpoint, &restored)?;
        if !created.is_empty() {
            cx.emit(EventKind::Warning {
                message: format!(
                    "`{}` (role `{}`) left {} new file(s) in the worktree ({}); the runner \
                     removed them. Ignore them in .gitignore, or keep the tools the role \
                     runs from writing them",
                    self.step.id,
                    self.role_name,
                    created.len(),
                    list(&created)
                ),
            });
            self.removed.extend(created);
            self.removed.sort();
            self.removed.dedup();
        }
        Ok(changed)
    }
}

/// What the re-run's prompt adds: why it runs again.
fn rerun_note(names: &str) -> String {
    format!(
        "\n\n# Note from the runner\n\nYour previous run of this review edited {names}. You are \
         read-only: the runner reverted the edit and asks you for the review again. Do not \
         create, modify or delete files; report what must change as issues instead.\n"
    )
}

/// `a, b, c` or `a, b, c, d, e and 3 more`.
fn list(paths: &[String]) -> String {
    let shown: Vec<std::borrow::Cow<'_, str>> = paths
        .iter()
        .take(NAMES_SHOWN)
        .map(|p| base::quoted::path(p))
        .collect();
    let rest = paths.len().saturating_sub(NAMES_SHOWN);
    if rest == 0 {
        shown.join(", ")
    } else {
        format!("{} and {rest} more", shown.join(", "))
    }
}

enum Unusable {
    /// The agent failed, timed out or errored: whatever it printed is not a verdict. `reason`
    /// (with the agent's error, e.g. a server's answer body) goes to the run's record; `note`,
    /// which says only that the review did not happen, to the player's feedback.
    AgentFailed { reason: String, note: String },
    /// It finished but its answer is not a valid verdict (worth one corrective retry).
    Invalid(verdict::VerdictError),
}

/// What the coach answered, as its retry prompt shows it: the structured output when the
/// adapter has one, else the final message.
fn previous_answer(outcome: &AgentOutcome) -> String {
    match outcome.structured_output.as_ref().filter(|v| !v.is_null()) {
        Some(value) => serde_json::to_string_pretty(value).unwrap_or_default(),
        None => outcome.final_message.clone(),
    }
}

fn judge(
    outcome: &AgentOutcome,
    criteria: &[verdict::TaskCriterion],
    tests: &dyn Fn() -> Option<Vec<(String, String)>>,
) -> Result<Verdict, Unusable> {
    if !outcome.status.is_success() {
        // The agent's error (a server's answer body, with its file paths) is infrastructure,
        // not a finding about the work: the player is told only that the review did not happen.
        return Err(Unusable::AgentFailed {
            reason: format!(
                "the coach agent did not finish successfully ({}): {}",
                outcome.status.name(),
                outcome.status.message()
            ),
            note: format!(
                "the review did not happen: the coach agent did not finish successfully ({}); \
                 its error is in the run's record. Nothing in the work caused this",
                outcome.status.name()
            ),
        });
    }
    let verdict = verdict::parse_verdict(
        outcome.structured_output.as_ref(),
        &outcome.final_message,
        criteria,
    )
    .map_err(Unusable::Invalid)?;
    // Evidence that cites tests nobody wrote is no evidence: the reviewer is asked again.
    if !verdict::evidence::cites_tests(&verdict) {
        return Ok(verdict);
    }
    let Some(tests) = tests() else {
        return Ok(verdict);
    };
    let problems = verdict::evidence::missing_citations(&verdict, &|name| {
        tests
            .iter()
            .any(|(path, text)| path.contains(name) || text.contains(name))
    });
    if problems.is_empty() {
        Ok(verdict)
    } else {
        Err(Unusable::Invalid(verdict::VerdictError::Evidence {
            problems,
        }))
    }
}

/// The test files of the checkpoint (`TestPaths`), each path with its text, for checking the
/// tests a verdict cites (at most [`CITED_TESTS_LIMIT`] bytes in all; `None` where they cannot
/// be read, so no citation is refused for the runner's own failure).
fn test_files(
    plan: &crate::engine::plan::Plan,
    worktree: &Path,
    checkpoint: Option<&str>,
) -> Option<Vec<(String, String)>> {
    let tests = plan.test_paths().ok()?;
    let head = git2::Oid::from_str(checkpoint?).ok()?;
    let files = git::task_repo::hidden_files(worktree, head, tests.set()).ok()?;
    let mut total = 0usize;
    Some(
        files
            .into_iter()
            .take_while(|(_, bytes, _)| {
                total = total.saturating_add(bytes.len());
                total <= CITED_TESTS_LIMIT
            })
            .map(|(path, bytes, _)| (path, String::from_utf8_lossy(&bytes).into_owned()))
            .collect(),
    )
}

/// How much of the test files [`test_files`] reads.
const CITED_TESTS_LIMIT: usize = 64 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lists_of_names_are_cut() {
        let paths: Vec<String> = (1..=7).map(|n| format!("f{n}")).collect();
        assert_eq!(list(&paths[..2]), "f1, f2");
        assert_eq!(list(&paths), "f1, f2, f3, f4, f5 and 2 more");
    }
}
