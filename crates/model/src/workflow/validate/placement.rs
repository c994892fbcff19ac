//! Steps sit where the engine can run them: steps that work in the task's worktree come after
//! a `worktree` step (each kind says whether it `needs_worktree`), and a `gate` is inside a loop
//! (it judges one turn of the loop body).
//!
//! Without this check such workflows pass validation and fail only at runtime, after a run
//! directory has been created and possibly an agent has been paid for.

use crate::workflow::model::Action;
use crate::workflow::validate::{pos_of, StepInfo};
use base::diagnostic::Diagnostic;

pub(super) fn check(steps: &[StepInfo<'_>], problems: &mut Vec<Diagnostic>) {
    for info in steps {
        let kind = info.step.action.kind();
        if kind.loop_only && info.loops.is_empty() {
            problems.push(
                pos_of(info.node, "uses")
                    .error(format!("the `{}` step `{}` must be inside a loop", kind.uses, info.step.id))
                    .with_help(format!("a {} judges one turn of a loop body: move it into the `[[steps.steps]]` of a `uses = \"loop\"` step", kind.uses)),
            );
        }
    }
}

/// The first step that needs a worktree when none precedes it in execution order. Only the
/// first is reported: one added `worktree` step fixes every later one.
pub(super) fn needs_worktree_first(steps: &[StepInfo<'_>]) -> Option<Diagnostic> {
    let first_worktree = steps
        .iter()
        .position(|info| matches!(info.step.action, Action::Worktree(_)))
        .unwrap_or(steps.len());
    let info = steps[..first_worktree]
        .iter()
        .find(|info| info.step.action.kind().needs_worktree)?;
    Some(
        pos_of(info.node, "uses")
            .error(format!(
                "step `{}` (uses = \"{}\") needs a worktree, but no `worktree` step comes before it",
                info.step.id,
                info.step.action.uses()
            ))
            .with_help("add a step with uses = \"worktree\" before it: it creates the task branch and the worktree that agents, checks and merge work in"),
    )
}
