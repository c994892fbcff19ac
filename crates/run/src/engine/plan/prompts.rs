//! Every prompt a run will render, rendered before anything is created: a template that reads
//! `feedback.summary` renders on turn 2 but not on turn 1 (there is no feedback yet), and a
//! run that would only find out after creating its worktree is a run that should not start.
//! Each role's template is rendered in the two shapes it meets — the first turn (no feedback,
//! no verification, no player record) and a later turn (all of them present).

use crate::engine::plan::build_prompt_context;
use crate::engine::plan::{Blocker, Plan};
use model::workflow::context::{PromptContext, WorktreeContext};

/// One line per role and turn shape whose prompt cannot be rendered.
pub(super) fn unrenderable(plan: &Plan) -> Vec<Blocker> {
    let first_turn = build_prompt_context(
        plan,
        WorktreeContext {
            path: plan.worktree.display().to_string(),
            branch: plan.branch.clone(),
            base: plan.base_branch.clone(),
        },
        None,
        None,
    );
    let mut first_turn = first_turn;
    first_turn.steps = model::workflow::kinds::placeholder_outputs(&plan.resolved.workflow.steps);
    let mut later_turn = PromptContext::example();
    later_turn.task = first_turn.task.clone();
    later_turn.inputs = first_turn.inputs.clone();
    later_turn.steps = first_turn.steps.clone();
    let mut problems = Vec::new();
    for name in plan.used_roles() {
        let Some(role) = plan.resolved.workflow.roles.get(&name) else {
            continue;
        };
        for (when, context) in [("turn 1", &first_turn), ("a later turn", &later_turn)] {
            let mut context = context.clone();
            context.scope.writes = role.writes.clone();
            context.structured_verdict = crate::engine::exec::structured_verdict(role);
            if let Err(error) = plan.resolved.render_prompt(&role.prompt, &context) {
                problems.push(Blocker::Unrenderable {
                    role: name.clone(),
                    prompt: role.prompt.clone(),
                    when,
                    error: error.to_string(),
                });
            }
        }
    }
    problems
}
