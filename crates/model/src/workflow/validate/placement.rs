//! Steps sit where the engine can run them and where they do what they say: steps that work in
//! the task's worktree come after a `worktree` step (each kind says whether it
//! `needs_worktree`), a `gate` is inside a loop (it judges one turn of the loop body), a
//! reviewer runs before the gate that weighs it, and a sign-off before the merge it guards.
//!
//! Without these checks such workflows pass validation and fail only at runtime, after a run
//! directory has been created and possibly an agent has been paid for — or, worse, run: a gate
//! approving without the late reviewer's verdict, a sign-off asked after the merge.

use crate::workflow::kinds::ApprovalStep;
use crate::workflow::model::{Action, Workflow};
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

/// A reviewer runs before the gate that weighs it. A gate weighs the verdicts given in its turn
/// before it (every reviewer of its loop, or those its `reviews` names), so a reviewer after
/// every gate of its loop that would weigh it is never weighed: its `must_fix` cannot stop the
/// merge. A reviewer in another loop, or one the gate's `reviews` leaves out, is not placed
/// against that gate.
pub(super) fn reviewers_before_their_gate(
    workflow: &Workflow,
    steps: &[StepInfo<'_>],
    problems: &mut Vec<Diagnostic>,
) {
    for reviewer in steps.iter().filter(|s| s.reviews(workflow)) {
        let id = reviewer.step.id.as_str();
        let Some(gate) = steps.iter().rev().find(|s| {
            s.loops == reviewer.loops
                && matches!(&s.step.action, Action::Gate(gate) if gate.weighs(id))
        }) else {
            continue;
        };
        let loop_id = reviewer
            .loops
            .last()
            .and_then(|at| steps.get(*at))
            .map_or("", |info| info.step.id.as_str());
        if gate.index < reviewer.index {
            problems.push(misplaced(
                reviewer,
                format!("the reviewer `{id}` runs after the gate `{}` of loop `{loop_id}`, so the gate never weighs its verdict", gate.step.id),
                gate,
                "",
            ));
        }
    }
}

/// A sign-off runs before the merge. An `approval` after the first `merge` step is refused when
/// it asks the default question (whether the work may be merged) or when nothing but a
/// `report` follows it: either way it is the merge's sign-off, asked once the work has landed.
/// One that asks its own question before a later step (a deploy after the merge) is kept.
pub(super) fn approvals_before_the_merge(steps: &[StepInfo<'_>], problems: &mut Vec<Diagnostic>) {
    let Some(merge) = steps
        .iter()
        .find(|info| matches!(info.step.action, Action::Merge(_)))
    else {
        return;
    };
    for approval in &steps[merge.index..] {
        let Action::Approval(ApprovalStep { question }) = &approval.step.action else {
            continue;
        };
        let guards_nothing = steps[approval.index + 1..]
            .iter()
            .all(|info| matches!(info.step.action, Action::Report(_)));
        let more = match question {
            None => "",
            Some(_) if guards_nothing => " (a question after the merge needs a step after it to guard, other than the report)",
            Some(_) => continue,
        };
        problems.push(misplaced(
            approval,
            format!(
                "the sign-off `{}` runs after the `{}` step, so the work is merged before a person can refuse it",
                approval.step.id, merge.step.id
            ),
            merge,
            more,
        ));
    }
}

/// `step` runs after `before`, which it must precede; located at the step's `id`.
fn misplaced(
    step: &StepInfo<'_>,
    message: String,
    before: &StepInfo<'_>,
    more: &str,
) -> Diagnostic {
    let at = pos_of(before.node, "id");
    pos_of(step.node, "id").error(message).with_help(format!(
        "move it before `{}` ({}): in a workflow that extends another, list `{}` after it{more}",
        before.step.id,
        at.describe(),
        before.step.id
    ))
}
