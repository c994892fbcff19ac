//! What the commands the runner runs (checks, `run` steps) leave in the worktree: test caches,
//! coverage files, build output that is not ignored. The next agent must see exactly the
//! checkpoint, and leftovers must neither be blamed on a reviewer nor committed as the player's
//! work: they are removed and named.
//!
//! Each removal costs a walk of the whole worktree, about one `git status`. So after such a
//! step nothing is walked at once: the removal waits for the next step that needs the
//! worktree as checkpointed. A read-only agent step does not: its audit walks the worktree
//! anyway, and one walk serves both ([`git::restore_since`] tells what changed before
//! the agent started from what it changed). The gate and the report read records only. Every
//! other step (a writer, a merge, a sign-off, more commands) gets a clean worktree first, and
//! so does the end of the run; a killed run's resume reverts the worktree before anything else.
//! The default loop so walks the worktree twice a turn: after the writer, and after the checks
//! and the reviewer together.
//!
//! What a *writer* left that git ignores is never part of its checkpoint either: it is removed
//! right after the checkpoint ([`remove_left_out`]), on that walk's own findings.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::engine::cx::RunCx;
use crate::engine::events::EventKind;
use base::error::Error;
use model::workflow::model::{Access, Action, Step};

/// How much earlier than the clock a file's change time may read, at most: the kernel stamps
/// files from a coarse clock, up to one timer tick (10 ms at the slowest common rate) behind.
/// Where that clock cannot be read, the reviewer starts this long after the commands ended
/// ([`mark_for_audit`]).
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
        Wait::IfRefsUnmoved => Ok(git::on_branch_at(
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
    // A check stopped in the middle of a git command (or one that planted it) leaves the
    // worktree's `index.lock`, on which the reset below would fail. The commands' processes
    // are gone by now, as an agent's are when its step removes them.
    git::StepRepo::open(&worktree)?.remove_left_locks(&cx.state.branch)?;
    let left = git::restore(&worktree, &checkpoint)?;
    warn(cx, &step_id, &left);
    Ok(())
}

/// The pending leftovers for a read-only step's audit: the step that left them and the mark
/// that tells their changes from the agent's. They stay pending until the audit has removed
/// them ([`removed_by_audit`]): an agent that cannot even start leaves them to the next step or
/// the end of the run.
///
/// The mark is when the commands ended: everything they changed is stamped before it (a stamp
/// is never ahead of the clock). Whatever the reviewer changes is stamped no earlier than the
/// coarse clock the kernel stamps files from, as it reads when the reviewer starts; so the
/// reviewer is started only once that clock has passed the mark ([`wait_for_stamps_past`],
/// called by [`super::agent::invoke`] right before the agent starts, after everything else it
/// prepares), and no change is ever put on the wrong side (a change the commands made just
/// before the reviewer started would otherwise look like the reviewer's). That is at most one
/// timer tick after the mark, usually already past by the time the agent starts.
pub(crate) fn mark_for_audit(cx: &RunCx) -> Option<(String, SystemTime)> {
    let step = cx.leftovers.clone()?;
    let mark = cx.leftovers_at.unwrap_or_else(SystemTime::now);
    Some((step, mark))
}

/// Returns once every file change stamped from now on is stamped after `mark`: when the
/// kernel's coarse clock has passed it ([`COARSE_CLOCK`] after it where that clock cannot be
/// read).
pub(crate) fn wait_for_stamps_past(mark: SystemTime) {
    let deadline = mark + COARSE_CLOCK;
    loop {
        let now = SystemTime::now();
        let Ok(left) = deadline.duration_since(now) else {
            return;
        };
        if git::stamp_clock().is_some_and(|stamped| stamped > mark) {
            return;
        }
        std::thread::sleep(left.min(Duration::from_millis(1)));
    }
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

/// Removes what the writer left that git does not track (`left_out`, from the checkpoint's
/// walk), but for what the project declared — `[worktree]` links and copies, and what its setup
/// made — so the checks, the reviewers and the next writer see exactly the checkpoint. The
/// writer's processes are gone by now (module `process::orphans`), so nothing swaps a
/// directory for a link meanwhile.
pub(crate) fn remove_left_out(
    cx: &mut RunCx,
    worktree: &Path,
    left_out: &[PathBuf],
) -> Result<(), Error> {
    if left_out.is_empty() {
        return Ok(());
    }
    let declared = &cx.plan.config.worktree;
    let keep: Vec<PathBuf> = declared
        .link
        .iter()
        .chain(&declared.copy)
        .map(PathBuf::from)
        .chain(cx.state.provisioned.iter().flatten().cloned())
        .collect();
    let removed = git::remove_left_out(worktree, left_out, &keep)?;
    if removed.is_empty() {
        return Ok(());
    }
    let shown: Vec<String> = removed.iter().map(|p| p.display().to_string()).collect();
    cx.emit(EventKind::Warning {
        message: format!(
            "removed what the writer left that git does not track, so the checks see only the \
             checkpoint: {} (a build the checks need comes from [worktree] setup, link or copy)",
            shown.join(", ")
        ),
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::workflow::kinds::{
        AgentStep, ApprovalStep, GateStep, MergeStep, ReportStep, RunStep, VerifyStep, WorktreeStep,
    };

    /// A file changed once the wait returns is stamped after the mark, every time (returning
    /// at once instead fails this within a few rounds: the stamp clock lags the real one).
    #[test]
    fn changes_after_the_wait_are_stamped_after_the_mark() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        for round in 0..200 {
            let mark = SystemTime::now();
            wait_for_stamps_past(mark);
            std::fs::write(&file, round.to_string()).unwrap();
            let meta = std::fs::metadata(&file).unwrap();
            let stamped = SystemTime::UNIX_EPOCH
                + Duration::new(meta.ctime() as u64, meta.ctime_nsec() as u32);
            assert!(stamped > mark, "round {round}: {stamped:?} <= {mark:?}");
        }
    }

    #[test]
    fn only_record_readers_and_audited_readers_let_leftovers_wait() {
        let agent = Action::Agent(AgentStep {
            role: "coach".into(),
            advisory: false,
            criteria: None,
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
