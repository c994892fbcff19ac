//! Expressions read only what exists when they are evaluated.
//!
//! A step's `if` (and the `${{ }}` in its `env`) runs before the step, so it may read the
//! outputs of steps that precede it in execution order, but not of itself, of later steps, or of
//! a loop it is inside (that loop has not finished). A loop's `until` runs after each iteration,
//! so it may also read its own body. `prev.<id>` reads the previous iteration of a step in the
//! body of an enclosing loop. `run` commands never interpolate: data reaches commands only
//! through environment variables.

use crate::workflow::close_or_listed;
use crate::workflow::context::{PromptContext, EXPRESSION_VARIABLES};
use crate::workflow::expr::{interpolations, Expr, ExprError};
use crate::workflow::kinds::{AgentStep, ApprovalStep, LoopStep, RunStep};
use crate::workflow::model::{Action, Workflow};
use crate::workflow::validate::StepInfo;
use base::diagnostic::{did_you_mean, Diagnostic};
use base::user_file::source::Pos;
use base::user_file::tree::Node;

/// Where an expression is evaluated.
enum Site {
    /// Before step `index` runs (its `if`, its `env`).
    Before(usize),
    /// After each iteration of the loop at `index` (its `until`).
    Until(usize),
}

pub(super) fn check(workflow: &Workflow, steps: &[StepInfo<'_>], problems: &mut Vec<Diagnostic>) {
    let mut checker = Checker {
        workflow,
        steps,
        problems,
    };
    for info in steps {
        let before = Site::Before(info.index);
        if let Some(condition) = &info.step.condition {
            checker.condition(condition, info.node.get("if").unwrap_or(info.node), &before);
        }
        match &info.step.action {
            Action::Loop(LoopStep {
                until: Some(until), ..
            }) => {
                let node = info.node.get("until").unwrap_or(info.node);
                checker.condition(until, node, &Site::Until(info.index));
            }
            Action::Approval(ApprovalStep {
                question: Some(question),
            }) => {
                let node = info.node.get("question").unwrap_or(info.node);
                checker.interpolated(question, node, &before);
            }
            Action::Run(RunStep { run, env }) => {
                if run.contains("${{") {
                    checker.problems.push(
                        super::pos_of(info.node, "run")
                            .error("`run` commands do not interpolate `${{ }}`")
                            .with_help("data reaches commands only through environment variables: set `env = { NAME = \"${{ expr }}\" }` and use $NAME in the command"),
                    );
                }
                let env_node = info.node.get("env").unwrap_or(info.node);
                for (name, value) in env {
                    checker.interpolated(value, env_node.get(name).unwrap_or(env_node), &before);
                }
            }
            _ => {}
        }
    }
}

/// What the expressions of a workflow are checked against, and the problems found.
struct Checker<'a, 'w> {
    workflow: &'a Workflow,
    steps: &'a [StepInfo<'w>],
    problems: &'a mut Vec<Diagnostic>,
}

impl Checker<'_, '_> {
    /// A condition (`if`, `until`) written at `node`, evaluated at `site`.
    fn condition(&mut self, text: &str, node: &Node, site: &Site) {
        self.expression(text, node, 0, site);
        free_text_decides(text, node, self.problems);
    }

    /// Each `${{ }}` of the string `text` written at `node`, evaluated at `site`.
    fn interpolated(&mut self, text: &str, node: &Node, site: &Site) {
        match interpolations(text) {
            Ok(parts) => {
                for part in parts {
                    self.expression(&part.expr, node, part.offset, site);
                }
            }
            Err(e) => self
                .problems
                .push(at_offset(node, text, error_offset(&e), e.to_string())),
        }
    }

    /// Checks the expression written at byte `offset` of the string value `node`.
    fn expression(&mut self, text: &str, node: &Node, offset: usize, site: &Site) {
        let value = node.as_str().unwrap_or(text);
        let expr = match Expr::compile(text) {
            Ok(expr) => expr,
            Err(e) => {
                let inner = error_offset(&e).unwrap_or(0);
                self.problems
                    .push(at_offset(node, value, Some(offset + inner), e.to_string()));
                return;
            }
        };
        for variable in expr.variables() {
            let problem = reference_problem(&variable, site, self.workflow, self.steps);
            if let Some((message, help)) = problem {
                let head = variable.split('.').next().unwrap_or(&variable);
                let inner = crate::workflow::expr::find_variable(text, head).unwrap_or(0);
                let at = at_offset(node, value, Some(offset + inner), message);
                self.problems.push(at.with_help(help));
            }
        }
    }
}

/// An agent's free text (`outputs.text`) never decides whether a step runs or a loop ends
/// (docs/workflows.md): prompts and `env` may read it, `if` and `until` may not.
fn free_text_decides(text: &str, node: &Node, problems: &mut Vec<Diagnostic>) {
    let Ok(expr) = Expr::compile(text) else {
        return;
    };
    let value = node.as_str().unwrap_or(text);
    for variable in expr.variables() {
        let segments: Vec<&str> = variable.split('.').collect();
        if let ["steps" | "prev", _, "outputs", "text", ..] = segments.as_slice() {
            let head = segments[0];
            let inner = crate::workflow::expr::find_variable(text, head).unwrap_or(0);
            problems.push(
                at_offset(node, value, Some(inner), format!("`{variable}` is an agent's free text and cannot decide a condition"))
                    .with_help("read it in prompts (`{{ steps.<id>.outputs.text }}`) or pass it to a command through `env`; decide on runner outputs or a verdict's `decision`"),
            );
        }
    }
}

/// Prompt templates read `steps.<id>.outputs.<name>` only of steps that have run before every
/// agent step whose role uses the template; each problem is located in the template.
pub(super) fn check_prompts(
    workflow: &Workflow,
    steps: &[StepInfo<'_>],
    prompts: &crate::workflow::prompts::Prompts,
    problems: &mut Vec<Diagnostic>,
) {
    let mut seen = std::collections::BTreeSet::new();
    for info in steps {
        let Action::Agent(AgentStep { role, .. }) = &info.step.action else {
            continue;
        };
        let Some(template) = workflow.roles.get(role).map(|r| r.prompt.as_str()) else {
            continue;
        };
        let Some(source) = prompts.source(template) else {
            continue;
        };
        let site = Site::Before(info.index);
        for (path, offset) in prompts.step_references(template) {
            let rest: Vec<&str> = path.split('.').skip(1).collect();
            let problem = match rest.as_slice() {
                [] => None,
                [id] | [id, "outputs"] => {
                    let full = [*id, "outputs", "text"];
                    step_reference("steps", &full, &site, steps)
                        .filter(|(message, _)| !message.contains("no output"))
                }
                _ => step_reference("steps", &rest, &site, steps),
            };
            if let Some((message, help)) = problem {
                let message = format!(
                    "`{path}` in prompt `{template}` (role `{role}`, step `{}`): {message}",
                    info.step.id
                );
                if seen.insert(message.clone()) {
                    problems.push(
                        Diagnostic::at_offset(&source.path, &source.text, offset, message)
                            .with_help(help),
                    );
                }
            }
        }
    }
}

/// What is wrong with reading `variable` (a dotted path) at `site`: (message, help).
fn reference_problem(
    variable: &str,
    site: &Site,
    workflow: &Workflow,
    steps: &[StepInfo<'_>],
) -> Option<(String, String)> {
    let segments: Vec<&str> = variable.split('.').collect();
    let head = segments[0];
    match head {
        "steps" | "prev" => step_reference(head, &segments[1..], site, steps),
        "inputs" => {
            let name = segments.get(1)?;
            if workflow.inputs.contains_key(*name) {
                return None;
            }
            let help = match did_you_mean(name, workflow.inputs.keys().map(String::as_str)) {
                Some(close) => format!("did you mean `inputs.{close}`?"),
                None => format!("declare it: [inputs.{name}]"),
            };
            Some((format!("no input `{name}`"), help))
        }
        "task" => {
            let field = segments.get(1)?;
            let example = serde_json::to_value(PromptContext::example().task).ok()?;
            let fields: Vec<&str> = example.as_object()?.keys().map(String::as_str).collect();
            if fields.contains(field) {
                return None;
            }
            let help = match did_you_mean(field, fields.iter().copied()) {
                Some(close) => format!("did you mean `task.{close}`?"),
                None => format!("a task has: {}", fields.join(", ")),
            };
            Some((format!("a task has no field `{field}`"), help))
        }
        "turn" => (segments.len() > 1).then(|| {
            (
                format!("`turn` is a number and has no `{}`", segments[1]),
                "use `turn` alone".to_string(),
            )
        }),
        _ => {
            let help = close_or_listed(head, EXPRESSION_VARIABLES, "expressions can read");
            Some((format!("unknown variable `{head}`"), help))
        }
    }
}

fn step_reference(
    head: &str,
    rest: &[&str],
    site: &Site,
    steps: &[StepInfo<'_>],
) -> Option<(String, String)> {
    let form = format!("read a step's outputs as `{head}.<id>.outputs.<name>`");
    let [id, outputs, name, ..] = rest else {
        return Some((
            format!("incomplete reference `{head}{}`", dotted(rest)),
            form,
        ));
    };
    if *outputs != "outputs" {
        return Some((
            format!("`{head}.{id}.{outputs}` is not a step output"),
            form,
        ));
    }
    let Some(target) = steps.iter().find(|s| s.step.id == *id) else {
        let ids = steps.iter().map(|s| s.step.id.as_str());
        let help = match did_you_mean(id, ids) {
            Some(close) => format!("did you mean `{close}`?"),
            None => "no step has this id".to_string(),
        };
        return Some((format!("no step `{id}`"), help));
    };
    if let Some(problem) = if head == "steps" {
        visibility(target, site, steps)
    } else {
        previous_iteration(target, site, steps)
    } {
        return Some(problem);
    }
    let kind = target.step.action.kind();
    if kind.output(name).is_some() {
        return None;
    }
    let uses = kind.uses;
    let outputs: Vec<&str> = kind.outputs().iter().map(|o| o.name).collect();
    let help = close_or_listed(name, &outputs, "its outputs are");
    Some((
        format!("step `{id}` (uses = \"{uses}\") has no output `{name}`"),
        help,
    ))
}

/// Whether `steps.<target>` has run when the expression at `site` is evaluated.
fn visibility(
    target: &StepInfo<'_>,
    site: &Site,
    steps: &[StepInfo<'_>],
) -> Option<(String, String)> {
    let id = &target.step.id;
    let (index, body_of) = match site {
        Site::Before(index) => (*index, None),
        Site::Until(index) => (*index, Some(*index)),
    };
    if body_of.is_some_and(|l| target.inside(l)) {
        return None;
    }
    let here = &steps[index];
    if target.index == index {
        let message = match site {
            Site::Before(_) => format!("step `{id}` cannot read its own outputs before it runs"),
            Site::Until(_) => format!("loop `{id}` cannot read its own outputs in its `until`"),
        };
        return Some((message, "read the outputs of the steps in its body".into()));
    }
    if here.inside(target.index) {
        return Some((
            format!("loop `{id}` has not finished while its body runs"),
            format!("read the body's steps instead, or `prev.<id>` for the previous iteration of `{id}`"),
        ));
    }
    if target.index > index {
        return Some((
            format!("step `{id}` runs after this expression is evaluated"),
            "a step can only read the outputs of steps that run before it".into(),
        ));
    }
    None
}

/// Whether `prev.<target>` names a step in the body of a loop around `site`.
fn previous_iteration(
    target: &StepInfo<'_>,
    site: &Site,
    steps: &[StepInfo<'_>],
) -> Option<(String, String)> {
    let mut loops = match site {
        Site::Before(index) => steps[*index].loops.clone(),
        Site::Until(index) => steps[*index].loops.clone(),
    };
    if let Site::Until(index) = site {
        loops.push(*index);
    }
    let id = &target.step.id;
    if loops.is_empty() {
        return Some((
            format!("`prev.{id}` is only defined inside a loop"),
            format!("use `steps.{id}.outputs` to read its outputs"),
        ));
    }
    if loops.iter().any(|l| target.inside(*l)) {
        return None;
    }
    Some((
        format!("`prev.{id}` reads the previous iteration of a step in this loop, and `{id}` is not in it"),
        format!("use `steps.{id}.outputs` to read its outputs"),
    ))
}

fn dotted(rest: &[&str]) -> String {
    rest.iter().map(|s| format!(".{s}")).collect()
}

fn error_offset(error: &ExprError) -> Option<usize> {
    match error {
        ExprError::Syntax { offset, .. } => *offset,
        ExprError::Unterminated { offset, .. } => Some(*offset),
        _ => None,
    }
}

/// A problem at byte `offset` of the string `value` written at `node`.
fn at_offset(node: &Node, value: &str, offset: Option<usize>, message: String) -> Diagnostic {
    let columns = offset.map_or(0, |o| value.get(..o).map_or(0, |s| s.chars().count()));
    value_start(&node.pos).shifted(columns).error(message)
}

/// The position of a string's first character: after its opening quote(s), if any.
fn value_start(pos: &Pos) -> Pos {
    let line = pos
        .source
        .text
        .lines()
        .nth(pos.location.line.saturating_sub(1))
        .unwrap_or("");
    let rest: String = line
        .chars()
        .skip(pos.location.column.saturating_sub(1))
        .collect();
    let quotes = match rest.chars().next() {
        Some(q @ ('"' | '\'')) if rest.starts_with(&q.to_string().repeat(3)) => 3,
        Some('"' | '\'') => 1,
        _ => 0,
    };
    pos.shifted(quotes)
}
