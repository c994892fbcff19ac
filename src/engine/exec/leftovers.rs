//! What the commands the runner runs (checks, `run` steps) leave in the worktree: test caches,
//! coverage files, build output that is not ignored. The next agent must see exactly the
//! checkpoint, and leftovers must neither be blamed on a reviewer nor committed as the player's
//! work: they are removed and named.
//!
//! Each removal costs a walk of the whole worktree, about one `git status`. So after such a
//! step nothing is walked at once: the removal waits for the next step that needs the
//! worktree as checkpointed. A read-only agent step does not: its audit walks the worktree
//! anyway, and one walk serves both ([`crate::git::restore_since`] tells what changed before
//! the agent started from what it changed). The gate and the report read records only. Every
//! other step (a writer, a merge, a sign-off, more commands) gets a clean worktree first, and
//! so does the end of the run; a killed run's resume reverts the worktree before anything else.
//! The default loop so walks the worktree twice a turn: after the writer, and after the checks
//! and the reviewer together.

use std::time::{Duration, SystemTime};

use crate::engine::cx::RunCx;
use crate::engine::events::EventKind;
use crate::error::Error;
use crate::workflow::model::{Access, Action, Step};

/// How much earlier than the clock a file's change time may read: the kernel stamps files
/// from a coarse clock, up to one timer tick (10 ms at the slowest common rate) behind. The
/// reviewer starts at least this long after the commands ended ([`mark_for_audit`]): at most
/// 20 ms a turn, less the runner's own work in between.
const COARSE_CLOCK: Duration = Duration::from_millis(20);

/// Whether the last commands' leftovers may stay while a step runs.
#[derive(Debug, PartialEq, Eq)]
enum Wait {
    /// The step reads records only (a gate, a report).
    Yes,
    /// A read-only agent step: its audit removes them, provided HEAD and the task branch are
    /// still at the checkpoint (a moved ref is the reviewer's scope violation, so one the
    /// commands moved is put back before the reviewer starts).
    IfRefsUnmoved,
    /// Anything else needs the worktree as checkpointed.
    No,
}

/// What a step of `action`, whose agent role (if any) has `access`, lets the leftovers do.
fn wait(action: &Action, access: Option<Access>) -> Wait {
    match action {
        Action::Gate(_) | Action::Report(_) => Wait::Yes,
        Action::Agent(_) if access == Some(Access::ReadOnly) => Wait::IfRefsUnmoved,
        _ => Wait::No,
    }
}

/// Whether `step` may run before the leftovers of the last commands are removed ([`wait`]).
pub(crate) fn can_wait_for(cx: &RunCx, step: &Step) -> Result<bool, Error> {
    let Some(checkpoint) = cx.state.last_checkpoint.as_deref() else {
        return Ok(true);
    };
    if cx.leftovers.is_none() {
        return Ok(true);
    }
    let access = match &step.action {
        Action::Agent(agent) => cx
            .plan
            .resolved
            .workflow
            .roles
            .get(&agent.role)
            .map(|role| role.access),
        _ => None,
    };
    match wait(&step.action, access) {
        Wait::Yes => Ok(true),
        Wait::No => Ok(false),
        Wait::IfRefsUnmoved if !cx.state.worktree.is_dir() => Ok(false),
        Wait::IfRefsUnmoved => Ok(crate::git::on_branch_at(
            &cx.state.worktree,
            &cx.state.branch,
            checkpoint,
        )?),
    }
}

/// Removes and names what the last commands left, if anything is pending.
pub(crate) fn remove(cx: &mut RunCx) -> Result<(), Error> {
    let Some(step_id) = cx.leftovers.take() else {
        return Ok(());
    };
    let worktree = cx.state.worktree.clone();
    let Some(checkpoint) = cx.state.last_checkpoint.clone() else {
        return Ok(());
    };
    if !worktree.is_dir() {
        return Ok(());
    }
    let left = crate::git::restore(&worktree, &checkpoint)?;
    warn(cx, &step_id, &left);
    Ok(())
}

/// The pending leftovers for a read-only step's audit: the step that left them and the mark
/// that tells their changes from the agent's, taken just before the agent starts. They stay
/// pending until the audit has removed them ([`removed_by_audit`]): an agent that cannot even
/// start leaves them to the next step or the end of the run.
pub(crate) fn mark_for_audit(cx: &RunCx) -> Option<(String, SystemTime)> {
    let step = cx.leftovers.clone()?;
    // The mark is when the commands ended: everything they changed is stamped before it (a
    // coarse stamp is never ahead of the clock). Whatever the reviewer changes is stamped at
    // most one tick behind its start; starting it at least a full `COARSE_CLOCK` after the
    // mark puts that after the mark too, so no change is ever put on the wrong side (a change
    // the commands made just before the reviewer started would otherwise look like the
    // reviewer's). The runner's own work since the commands ended counts towards the wait.
    let mark = cx.leftovers_at.unwrap_or_else(SystemTime::now);
    if let Ok(wait) = (mark + COARSE_CLOCK).duration_since(SystemTime::now()) {
        std::thread::sleep(wait);
    }
    Some((step, mark))
}

/// The audit removed what `step_id` left (`left`, possibly nothing): named, and no longer
/// pending.
pub(crate) fn removed_by_audit(cx: &mut RunCx, step_id: &str, left: &[String]) {
    cx.leftovers = None;
    warn(cx, step_id, left);
}

/// The warning naming what `step_id` left and the runner removed (nothing when it left
/// nothing).
fn warn(cx: &mut RunCx, step_id: &str, left: &[String]) {
    if left.is_empty() {
        return;
    }
    cx.emit(EventKind::Warning {
        message: format!(
            "`{step_id}` left files in the worktree; removed them: {} (add generated files to .gitignore)",
            left.join(", ")
        ),
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::kinds::{
        AgentStep, ApprovalStep, GateStep, MergeStep, ReportStep, RunStep, VerifyStep, WorktreeStep,
    };

    #[test]
    fn only_record_readers_and_audited_readers_let_leftovers_wait() {
        let agent = Action::Agent(AgentStep {
            role: "coach".into(),
            advisory: false,
        });
        let table = [
            (Action::Gate(GateStep { reviews: None }), None, Wait::Yes),
            (Action::Report(ReportStep {}), None, Wait::Yes),
            (agent.clone(), Some(Access::ReadOnly), Wait::IfRefsUnmoved),
            (agent.clone(), Some(Access::Write), Wait::No),
            // A role the workflow does not define: the step fails on its own; nothing waits.
            (agent, None, Wait::No),
            (
                Action::Verify(VerifyStep {
                    checks: None,
                    expect: None,
                }),
                None,
                Wait::No,
            ),
            (Action::Merge(MergeStep { strategy: None }), None, Wait::No),
            (
                Action::Approval(ApprovalStep { question: None }),
                None,
                Wait::No,
            ),
            (
                Action::Run(RunStep {
                    run: "make".into(),
                    env: Default::default(),
                }),
                None,
                Wait::No,
            ),
            (Action::Worktree(WorktreeStep {}), None, Wait::No),
        ];
        for (action, access, expected) in table {
            assert_eq!(wait(&action, access), expected, "{action:?} {access:?}");
        }
    }
}
