//! Roles are coherent: read-only roles cannot write, `command` roles say what to run, a role
//! sets only keys its adapter reads (the adapter's description says which), bounds
//! are positive, prompt templates exist and read only the prompt context; and a gated workflow
//! can actually satisfy the `coach` requirement or says it waives it.

use std::collections::BTreeSet;

use base::Keyword;
use strum::IntoEnumIterator;

use crate::profile::Requirement;
use crate::workflow::kinds::{AgentStep, GateStep};
use crate::workflow::model::{Access, Action, AgentKind, OutputKind, Role, RoleKey, Workflow};
use crate::workflow::prompts::Prompts;
use crate::workflow::validate::{pos_of, zero_duration, StepInfo};
use base::diagnostic::{did_you_mean, Diagnostic};
use base::user_file::tree::Node;

pub(super) fn check(
    workflow: &Workflow,
    tree: &Node,
    prompts: &Prompts,
    problems: &mut Vec<Diagnostic>,
) {
    let roles_node = tree.get("roles").unwrap_or(tree);
    let mut templates = BTreeSet::new();
    for (name, role) in &workflow.roles {
        let node = roles_node.get(name).unwrap_or(roles_node);
        if role.access == Access::ReadOnly {
            let tool_nodes = node
                .get("tools")
                .and_then(Node::as_array)
                .unwrap_or_default();
            for (tool, tool_node) in role.tools.iter().zip(tool_nodes) {
                if tool.writes() {
                    problems.push(
                        tool_node
                            .pos
                            .error(format!(
                                "role `{name}` is read-only but has the `{tool}` tool"
                            ))
                            .with_help("remove it, or set access = \"write\""),
                    );
                }
            }
        }
        check_writes(name, role, node, problems);
        if role.access != Access::ReadOnly && role.output == Some(OutputKind::Verdict) {
            // The runner checkpoints a writer's work and never reads its answer as a verdict:
            // a gate would weigh nothing of it.
            problems.push(
                pos_of(node, "output")
                    .error(format!(
                        "role `{name}` writes (access = \"write\") but returns a verdict; a \
                         reviewer is read-only"
                    ))
                    .with_help(
                        "set access = \"read-only\" to make it a reviewer the gate weighs, or \
                         remove output = \"verdict\" to make it a writer",
                    ),
            );
        }
        if role.agent == AgentKind::Command {
            let empty = role
                .command
                .as_ref()
                .is_none_or(|argv| argv.first().is_none_or(|program| program.trim().is_empty()));
            if empty {
                problems.push(
                    pos_of(node, "agent")
                        .error(format!("role `{name}` uses agent = \"command\" but names no program"))
                        .with_help("add command = [\"sh\", \"path/to/agent.sh\"] (run in the worktree, prompt on stdin)"),
                );
            }
        }
        problems.extend(unread_role_keys(name, role, node));
        if role.max_tokens == Some(0) {
            problems.push(
                pos_of(node, "max_tokens")
                    .error("`max_tokens` must be at least 1")
                    .with_help("remove the key for the adapter's default (8192)"),
            );
        }
        if role.max_agent_turns == Some(0) {
            problems.push(
                pos_of(node, "max_agent_turns")
                    .error("`max_agent_turns` must be at least 1")
                    .with_help("0 never means unlimited: remove the key for the adapter's default"),
            );
        }
        for (value, key) in [
            (role.timeout, "timeout"),
            (role.idle_timeout, "idle_timeout"),
        ] {
            if let Some(problem) = zero_duration(value, node, key) {
                problems.push(problem);
            }
        }
        if prompts.source(&role.prompt).is_none() {
            let help = match did_you_mean(&role.prompt, prompts.names()) {
                Some(close) => format!("did you mean `{close}`?"),
                None => format!(
                    "templates are looked up by file name in prompts/ (built-in, user, .autobuild/prompts/); known: {}",
                    prompts.names().collect::<Vec<_>>().join(", ")
                ),
            };
            problems.push(
                pos_of(node, "prompt")
                    .error(format!("no prompt template `{}`", role.prompt))
                    .with_help(help),
            );
        } else if templates.insert(role.prompt.as_str()) {
            problems.extend(prompts.check(&role.prompt));
        }
    }
}

/// The keys `role` sets that its adapter does not read ([`AgentKind::role_keys`]), each
/// pointing at the adapters that do.
fn unread_role_keys<'a>(
    name: &'a str,
    role: &'a Role,
    node: &'a Node,
) -> impl Iterator<Item = Diagnostic> + 'a {
    let reads = role.agent.role_keys();
    RoleKey::iter()
        .filter(move |key| key.is_set(role) && !reads.contains(key))
        .map(move |key| {
            let readers: Vec<String> = AgentKind::iter()
                .filter(|kind| kind.role_keys().contains(&key))
                .map(|kind| format!("\"{kind}\""))
                .collect();
            pos_of(node, key.as_str())
                .error(format!(
                    "role `{name}` sets `{key}`, which the `{}` adapter does not read",
                    role.agent
                ))
                .with_help(format!(
                    "remove it, or set agent = {}",
                    readers.join(" or ")
                ))
        })
}

/// `writes` holds valid globs, and a read-only role (which writes nothing) has none.
fn check_writes(
    name: &str,
    role: &crate::workflow::model::Role,
    node: &Node,
    problems: &mut Vec<Diagnostic>,
) {
    let Some(patterns) = &role.writes else {
        return;
    };
    if role.access == Access::ReadOnly && !patterns.is_empty() {
        problems.push(
            pos_of(node, "writes")
                .error(format!(
                    "role `{name}` is read-only, so it may write nothing, but `writes` lists paths"
                ))
                .with_help(
                    "remove `writes` (read-only is `writes = []`), or set access = \"write\"",
                ),
        );
    }
    let entries = node
        .get("writes")
        .and_then(Node::as_array)
        .unwrap_or_default();
    for (pattern, entry) in patterns.iter().zip(entries) {
        if let Err(why) = base::pattern::glob(pattern) {
            problems.push(entry.pos.error(format!("role `{name}`: {why}")));
        }
    }
}

/// A gate's `reviews` names reviewing steps of its own loop: agent steps whose role returns a
/// verdict. Anything else would silently leave a reviewer out (or weigh nothing).
pub(super) fn check_gate_reviews(
    workflow: &Workflow,
    steps: &[StepInfo<'_>],
    problems: &mut Vec<Diagnostic>,
) {
    for gate in steps {
        let Action::Gate(GateStep {
            reviews: Some(reviews),
        }) = &gate.step.action
        else {
            continue;
        };
        let entries = gate
            .node
            .get("reviews")
            .and_then(Node::as_array)
            .unwrap_or_default();
        let reviewers: Vec<&str> = steps
            .iter()
            .filter(|s| s.loops == gate.loops && s.reviews(workflow))
            .map(|s| s.step.id.as_str())
            .collect();
        if reviews.is_empty() {
            problems.push(
                pos_of(gate.node, "reviews")
                    .error(format!("the gate `{}` weighs no review", gate.step.id))
                    .with_help("name the reviewing steps, or remove `reviews` to weigh every one; a gate without a reviewer needs [gate] waive = [\"coach\"]"),
            );
        }
        // A step whose role is unknown is already reported; whether it reviews is unknown, so
        // naming it in `reviews` is no second problem.
        let unknown_role: Vec<&str> = steps
            .iter()
            .filter(|s| matches!(&s.step.action, Action::Agent(AgentStep { role, .. }) if !workflow.roles.contains_key(role)))
            .map(|s| s.step.id.as_str())
            .collect();
        for (id, entry) in reviews.iter().zip(entries) {
            if reviewers.contains(&id.as_str()) || unknown_role.contains(&id.as_str()) {
                continue;
            }
            let help = match did_you_mean(id, reviewers.iter().copied()) {
                Some(close) => format!("did you mean `{close}`?"),
                None if reviewers.is_empty() => "the gate's loop has no reviewing step (an agent step whose role has output = \"verdict\")".to_string(),
                None => format!("the reviewing steps of its loop are: {}", reviewers.join(", ")),
            };
            problems.push(
                entry
                    .pos
                    .error(format!(
                        "the gate `{}` weighs `{id}`, which is not a reviewing step of its loop",
                        gate.step.id
                    ))
                    .with_help(help),
            );
        }
    }
}

/// A workflow with a gate needs a verdict for `coach`, or must waive it.
pub(super) fn check_gate(
    workflow: &Workflow,
    steps: &[StepInfo<'_>],
    problems: &mut Vec<Diagnostic>,
) {
    let Some(gate) = steps
        .iter()
        .find(|s| matches!(s.step.action, Action::Gate(_)))
    else {
        return;
    };
    let unknown_role = steps.iter().any(
        |s| matches!(&s.step.action, Action::Agent(AgentStep { role, .. }) if !workflow.roles.contains_key(role)),
    );
    if unknown_role {
        // Already reported; which role was meant is unknown.
        return;
    }
    let has_verdict = steps.iter().any(|s| s.reviews(workflow));
    if !has_verdict && !workflow.gate.waive.contains(&Requirement::Coach) {
        problems.push(
            pos_of(gate.node, "uses")
                .error("no agent step produces a verdict, so the gate's `coach` requirement can never hold")
                .with_help("add a reviewing role with output = \"verdict\", or waive the requirement with [gate] waive = [\"coach\"]"),
        );
    }
}

/// A read-only agent step in a loop that has a gate must return a verdict, or the gate
/// silently ignores what it finds (the user would believe a review gate exists), unless the
/// step says `advisory = true`.
pub(super) fn check_silent_reviewers(
    workflow: &Workflow,
    steps: &[StepInfo<'_>],
    problems: &mut Vec<Diagnostic>,
) {
    for info in steps {
        let Action::Agent(AgentStep {
            role: role_name,
            advisory: false,
            ..
        }) = &info.step.action
        else {
            continue;
        };
        let Some(role) = workflow.roles.get(role_name) else {
            continue;
        };
        if role.access != Access::ReadOnly || role.output == Some(OutputKind::Verdict) {
            continue;
        }
        let gated = steps
            .iter()
            .any(|s| s.loops == info.loops && matches!(s.step.action, Action::Gate(_)));
        if !gated || info.loops.is_empty() {
            continue;
        }
        problems.push(
            pos_of(info.node, "role")
                .error(format!(
                    "the read-only step `{}` (role `{role_name}`) returns no verdict, so the gate \
                     of its loop cannot weigh it and a rejection would be silently ignored",
                    info.step.id
                ))
                .with_help(format!(
                    "add `output = \"verdict\"` to [roles.{role_name}] to make it a reviewer the \
                     gate weighs, or set `advisory = true` on the step if its output is for \
                     information only"
                )),
        );
    }
}

/// `criteria` says which task criteria a reviewer judges: on a step whose role returns no
/// verdict it would mean nothing, so it is refused rather than ignored.
pub(super) fn check_reviewed_criteria(
    workflow: &Workflow,
    steps: &[StepInfo<'_>],
    problems: &mut Vec<Diagnostic>,
) {
    for info in steps {
        let Action::Agent(AgentStep {
            role: role_name,
            criteria: Some(_),
            ..
        }) = &info.step.action
        else {
            continue;
        };
        let reviewer = workflow
            .roles
            .get(role_name)
            .is_none_or(|role| role.output == Some(OutputKind::Verdict));
        if reviewer {
            continue;
        }
        problems.push(
            pos_of(info.node, "criteria")
                .error(format!(
                    "the step `{}` sets `criteria`, but its role `{role_name}` returns no \
                     verdict, so it judges no criterion",
                    info.step.id
                ))
                .with_help(format!(
                    "remove `criteria` from the step, or add `output = \"verdict\"` (and \
                     `access = \"read-only\"`) to [roles.{role_name}] to make it a reviewer"
                )),
        );
    }
}
