//! The one semantic validator, shared by every entry point (`task`, `--dry-run`, `workflows
//! validate`, `workflows show --resolved`): what the types alone cannot say about a merged
//! workflow.
//!
//! It runs on the typed [`Workflow`] together with the merged tree it was decoded from, so every
//! problem points at the file (or flag) that set the offending value. Checks: the schema
//! version; step ids (unique across nesting, usable in expressions); agent steps name existing
//! roles; expressions parse and read only what exists when they run ([`expressions`]); loops
//! are bounded; steps that need a worktree come after a `worktree` step, gates are inside
//! loops, a reviewer runs before the gate that weighs it and a sign-off before the merge
//! ([`placement`]); durations and budgets are positive; roles are coherent and their prompt
//! templates exist and read only the prompt context ([`roles`]); a gated workflow either has a
//! verdict-producing role or waives `coach` ([`crate::workflow::model::GateConfig`]).

mod expressions;
mod placement;
mod roles;

use std::collections::HashMap;
use std::time::Duration;

use crate::workflow::kinds::{AgentStep, LoopStep};
use crate::workflow::model::{Action, OutputKind, Step, Workflow, SCHEMA_VERSION};
use crate::workflow::prompts::Prompts;
use base::diagnostic::{did_you_mean, Diagnostic};
use base::user_file::source::Pos;
use base::user_file::tree::Node;

/// More turns than this without an `until` looks like a loop meant to stop on a condition
/// (a warning, not an error: a long fixed loop may be deliberate).
const UNBOUNDED_LOOKING: u32 = 20;

/// Every problem of a decoded workflow (warnings among them); it is valid when none is an
/// error.
pub fn validate(workflow: &Workflow, tree: &Node, prompts: &Prompts) -> Vec<Diagnostic> {
    let mut problems = validate_parts(workflow, tree, prompts);
    let steps = flatten(workflow, tree);
    problems.extend(placement::needs_worktree_first(&steps));
    placement::reviewers_before_their_gate(workflow, &steps, &mut problems);
    placement::approvals_before_the_merge(&steps, &mut problems);
    let before = problems.len();
    roles::check_gate(workflow, &steps, &mut problems);
    // A workflow whose gate can never hold is told that once, not once per reviewer too.
    if problems.len() == before {
        roles::check_silent_reviewers(workflow, &steps, &mut problems);
        roles::check_reviewed_criteria(workflow, &steps, &mut problems);
    }
    roles::check_gate_reviews(workflow, &steps, &mut problems);
    problems
}

/// The problems of what decoded of a workflow that did not decode as a whole (a role or step
/// had a mistake and is left out; `left_out` names them and the steps inside them), so they
/// are reported together with the decoding mistakes. Left out are the checks of the whole
/// (a `worktree` step comes first, some agent gives a verdict), which a missing step could
/// fail, and every problem that names what was left out.
pub fn validate_decoded_part(
    workflow: &Workflow,
    tree: &Node,
    prompts: &Prompts,
    left_out: &[String],
) -> Vec<Diagnostic> {
    let mentions = |message: &str, name: &str| {
        message.contains(&format!("`{name}`"))
            || message.contains(&format!("steps.{name}"))
            || message.contains(&format!("prev.{name}"))
    };
    validate_parts(workflow, tree, prompts)
        .into_iter()
        .filter(|d| !left_out.iter().any(|name| mentions(&d.message, name)))
        .collect()
}

/// Every check that looks at one step, role or expression at a time.
fn validate_parts(workflow: &Workflow, tree: &Node, prompts: &Prompts) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    if workflow.schema != SCHEMA_VERSION {
        problems.push(
            pos_of(tree, "schema")
                .error(format!("unsupported schema version {}", workflow.schema))
                .with_help(format!("this autobuild reads `schema = {SCHEMA_VERSION}`")),
        );
    }
    check_limits(workflow, tree, &mut problems);
    let steps = flatten(workflow, tree);
    check_steps(workflow, &steps, &mut problems);
    placement::check(&steps, &mut problems);
    expressions::check(workflow, &steps, &mut problems);
    expressions::check_prompts(workflow, &steps, prompts, &mut problems);
    roles::check(workflow, tree, prompts, &mut problems);
    problems
}

/// A step with its tree node, its depth-first index and the indices of the loops around it.
pub(crate) struct StepInfo<'a> {
    pub step: &'a Step,
    pub node: &'a Node,
    pub index: usize,
    /// Enclosing loops, outermost first.
    pub loops: Vec<usize>,
}

impl StepInfo<'_> {
    /// Whether this step is inside the body of the loop at `loop_index`.
    pub fn inside(&self, loop_index: usize) -> bool {
        self.loops.contains(&loop_index)
    }

    /// Whether this is a reviewing step: an agent step whose read-only role returns a verdict.
    pub fn reviews(&self, workflow: &Workflow) -> bool {
        match &self.step.action {
            Action::Agent(AgentStep { role, .. }) => workflow.roles.get(role).is_some_and(|r| {
                r.output == Some(OutputKind::Verdict)
                    && r.access == crate::workflow::model::Access::ReadOnly
            }),
            _ => false,
        }
    }
}

/// Every step in execution order. The tree's steps line up with the decoded ones: decoding
/// keeps their order and fails as a whole when any step is invalid.
fn flatten<'a>(workflow: &'a Workflow, tree: &'a Node) -> Vec<StepInfo<'a>> {
    fn walk<'a>(
        steps: &'a [Step],
        nodes: &'a [Node],
        loops: &mut Vec<usize>,
        out: &mut Vec<StepInfo<'a>>,
    ) {
        for (step, node) in steps.iter().zip(nodes) {
            let index = out.len();
            out.push(StepInfo {
                step,
                node,
                index,
                loops: loops.clone(),
            });
            if let Action::Loop(LoopStep { steps: body, .. }) = &step.action {
                let body_nodes = node
                    .get("steps")
                    .and_then(Node::as_array)
                    .unwrap_or_default();
                loops.push(index);
                walk(body, body_nodes, loops, out);
                loops.pop();
            }
        }
    }
    let nodes = tree
        .get("steps")
        .and_then(Node::as_array)
        .unwrap_or_default();
    let mut out = Vec::new();
    walk(&workflow.steps, nodes, &mut Vec::new(), &mut out);
    out
}

fn check_limits(workflow: &Workflow, tree: &Node, problems: &mut Vec<Diagnostic>) {
    let limits = tree.get("limits").unwrap_or(tree);
    if let Some(problem) = zero_duration(workflow.limits.max_wall_time, limits, "max_wall_time") {
        problems.push(problem);
    }
    if let Some(cost) = workflow.limits.max_cost_usd {
        if !(cost.is_finite() && cost > 0.0) {
            problems.push(
                pos_of(limits, "max_cost_usd")
                    .error(format!(
                        "`max_cost_usd` must be a positive amount, found {cost}"
                    ))
                    .with_help("0 never means unlimited: remove the key for no budget cap"),
            );
        }
    }
}

/// A problem when a duration setting is zero.
pub(crate) fn zero_duration(value: Option<Duration>, node: &Node, key: &str) -> Option<Diagnostic> {
    (value == Some(Duration::ZERO)).then(|| {
        pos_of(node, key)
            .error(format!("`{key}` must be longer than zero"))
            .with_help("0 never means unlimited: remove the key for no limit")
    })
}

base::regexes! {
    /// A step id: an identifier expressions can name.
    STEP_ID = r"^[A-Za-z_][A-Za-z0-9_]*$";
}

fn check_steps(workflow: &Workflow, steps: &[StepInfo<'_>], problems: &mut Vec<Diagnostic>) {
    let id_pattern = &*STEP_ID;
    let mut first_seen: HashMap<&str, &Pos> = HashMap::new();
    for info in steps {
        let step = info.step;
        let id_pos = pos_of(info.node, "id");
        if let Some(first) = first_seen.get(step.id.as_str()) {
            problems.push(
                id_pos
                    .error(format!("duplicate step id `{}`", step.id))
                    .with_help(format!(
                        "it is already used on line {}; ids must be unique across the workflow, nested loops included",
                        first.location.line
                    )),
            );
        } else {
            first_seen.insert(&step.id, id_pos);
        }
        if !id_pattern.is_match(&step.id) {
            problems.push(
                id_pos
                    .error(format!("step id `{}` cannot be used in expressions", step.id))
                    .with_help("use letters, digits and `_`, not starting with a digit (expressions read `steps.<id>.outputs`)"),
            );
        }
        if let Some(problem) = zero_duration(step.timeout, info.node, "timeout") {
            problems.push(problem);
        }
        match &step.action {
            Action::Agent(AgentStep { role, .. }) if !workflow.roles.contains_key(role) => {
                let help = match did_you_mean(role, workflow.roles.keys().map(String::as_str)) {
                    Some(close) => format!("did you mean `{close}`?"),
                    None if workflow.roles.is_empty() => {
                        "the workflow defines no roles".to_string()
                    }
                    None => format!(
                        "the roles are: {}",
                        workflow
                            .roles
                            .keys()
                            .cloned()
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                problems.push(
                    pos_of(info.node, "role")
                        .error(format!("step `{}` uses unknown role `{role}`", step.id))
                        .with_help(help),
                );
            }
            Action::Loop(LoopStep {
                max_iterations,
                until,
                stall,
                ..
            }) => {
                if until.is_none() && *max_iterations > UNBOUNDED_LOOKING {
                    problems.push(
                        pos_of(info.node, "max_iterations")
                            .error(format!(
                                "loop `{}` has no `until` and runs up to {max_iterations} turns",
                                info.step.id
                            ))
                            .with_help(
                                "without `until` only the bound, a stall or a failure ends it; add `until` (e.g. `until = \"steps.gate.outputs.approved\"`) or lower `max_iterations`",
                            )
                            .into_warning(),
                    );
                }
                if *max_iterations == 0 {
                    problems.push(
                        pos_of(info.node, "max_iterations")
                            .error("`max_iterations` must be at least 1")
                            .with_help("0 never means unlimited: every loop needs a bound"),
                    );
                }
                if stall.is_some_and(|s| s.window == 0) {
                    let stall_node = info.node.get("stall").unwrap_or(info.node);
                    problems.push(
                        pos_of(stall_node, "window")
                            .error("the stall `window` must be at least 1 turn"),
                    );
                }
            }
            _ => {}
        }
    }
}

/// Where `key` of a table was written; the table itself when it does not have the key.
pub(crate) fn pos_of<'a>(node: &'a Node, key: &str) -> &'a Pos {
    node.get(key).map_or(&node.pos, |value| &value.pos)
}

#[cfg(test)]
mod tests;
