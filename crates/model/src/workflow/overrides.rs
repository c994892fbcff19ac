//! Command-line overrides (`--set KEY=VALUE`, `--max-turns`, `--model ROLE=MODEL` with its aliases
//! `--player-model` and `--coach-model`, `--agent`) as data, applied as the highest-precedence layer of a workflow.
//!
//! Each override becomes a small patch tree merged with the same rules as files
//! ([`crate::workflow::merge`]), so `--set steps.cycle.max_iterations=3` addresses a step by its
//! id wherever it is nested. Later `--set`s of one key beat earlier ones. A `--set` that names
//! the same key as a flag (`--max-turns 3 --set steps.cycle.max_iterations=5`, `--model
//! coach=opus --set roles.coach.model=haiku`) is refused: the
//! parsed flags no longer say which came last, and either silent winner would surprise someone.
//! A `--set` value is read as a TOML value when it is one (`3`,
//! `true`, `["read", "grep"]`, `"quoted"`) and as a plain string otherwise (`opus`). Values are
//! positioned inside the flag's text, so a wrong key or type is reported like a mistake in a file:
//! `--set:1:13: unknown key ...` with a caret under it.

mod model;

use std::str::FromStr;
use std::sync::Arc;

use strum::VariantNames;

pub use model::{ModelChoice, ModelFlag};

use crate::workflow::close_or_listed;
use crate::workflow::merge::merge;
use crate::workflow::model::AgentKind;
use base::diagnostic::{did_you_mean, Diagnostic, Location};
use base::user_file::parse_toml;
use base::user_file::source::{Layer, Pos, Source};
use base::user_file::tree::{Entry, Node, Seg, Table, Value};

/// What the command line changes in a workflow.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    /// `KEY=VALUE` assignments, applied in order.
    pub set: Vec<String>,
    /// `max_iterations` of the first loop step.
    pub max_turns: Option<u32>,
    /// `--model ROLE=MODEL` and its aliases (`--player-model X` is `player` = `X`), in order.
    pub models: Vec<ModelFlag>,
    /// `agent` of every role.
    pub agent: Option<String>,
}

/// Applies `overrides` to a merged workflow tree. Overrides that cannot apply are reported and
/// the others applied anyway, so that their own mistakes surface in the same run.
pub fn apply(tree: &mut Node, overrides: &Overrides) -> Result<(), Vec<Diagnostic>> {
    let mut problems = Vec::new();
    let mut patches = Vec::new();
    if let Some(agent) = &overrides.agent {
        let value = flag_value("--agent", agent);
        if AgentKind::from_str(agent).is_ok() {
            for role in role_names(tree) {
                // A model was chosen for the adapter being replaced: the new adapter starts from
                // its own default unless --player-model/--coach-model name one.
                tree.remove_at(&[Seg::key("roles"), Seg::key(&role), Seg::key("model")]);
                patches.push(role_patch(
                    &role,
                    &[("agent", value.pos.clone())],
                    value.clone(),
                ));
            }
        } else {
            // Reported once here, not as every role's invalid `agent` after the patch.
            problems.push(unknown_agent(&value, agent));
        }
    }
    for flag in &overrides.models {
        match model_patch(tree, flag) {
            Ok(patch) => patches.push(patch),
            Err(problem) => problems.push(problem),
        }
    }
    if let Some(max) = overrides.max_turns {
        let value = flag_value("--max-turns", &max.to_string());
        let pos = value.pos;
        match first_loop(tree_steps(tree)) {
            Some(ids) => {
                let value = Node::new(Value::Integer(i64::from(max)), pos.clone());
                patches.push(step_patch(
                    &ids,
                    &pos,
                    &[("max_iterations", pos.clone())],
                    value,
                ));
            }
            None => problems.push(pos.error("the workflow has no loop step to bound")),
        }
    }
    problems.extend(flag_conflicts(tree, overrides));
    for assignment in &overrides.set {
        match set_patch(tree, assignment) {
            Ok(patch) => patches.push(patch),
            Err(problem) => problems.push(problem),
        }
    }
    for patch in patches {
        problems.extend(merge(tree, patch));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// Every `--set` whose key a flag also sets, located at the `--set`.
fn flag_conflicts(tree: &Node, overrides: &Overrides) -> Vec<Diagnostic> {
    let mut flag_keys: Vec<(String, &str)> = Vec::new();
    if overrides.max_turns.is_some() {
        if let Some(ids) = first_loop(tree_steps(tree)) {
            flag_keys.extend(
                ids.last()
                    .map(|id| (format!("steps.{id}.max_iterations"), "--max-turns")),
            );
        }
    }
    for choice in overrides.models.iter().filter_map(ModelFlag::choice) {
        flag_keys.push((format!("roles.{}.model", choice.role.trim()), "--model"));
    }
    if overrides.agent.is_some() {
        for role in role_names(tree) {
            flag_keys.push((format!("roles.{role}.agent"), "--agent"));
        }
    }
    overrides
        .set
        .iter()
        .filter_map(|assignment| {
            let key = assignment.split('=').next().unwrap_or_default();
            let key: Vec<&str> = key.split('.').map(str::trim).collect();
            let key = key.join(".");
            let (_, flag) = flag_keys.iter().find(|(k, _)| *k == key)?;
            let source = Source::new("--set", assignment, Layer::CommandLine);
            Some(
                source
                    .pos(Location { line: 1, column: 1 })
                    .error(format!("`{key}` is set both by {flag} and by --set"))
                    .with_help(format!("give only one of them: drop {flag} or this --set")),
            )
        })
        .collect()
}

fn unknown_agent(value: &Node, agent: &str) -> Diagnostic {
    let kinds = AgentKind::VARIANTS;
    let help = close_or_listed(agent, kinds, "the agents are");
    value
        .pos
        .error(format!("unknown agent `{agent}`"))
        .with_help(help)
}

/// The patch for one `--model ROLE=MODEL` (or an alias): any role of the workflow, by name.
fn model_patch(tree: &Node, flag: &ModelFlag) -> Result<Node, Diagnostic> {
    let text = flag.to_string();
    let source = Source::new("--model", &text, Layer::CommandLine);
    let start = source.pos(Location { line: 1, column: 1 });
    let Some(ModelChoice { role, model }) = flag.choice() else {
        return Err(start.error("expected ROLE=MODEL").with_help(format!(
            "for example --model coach=opus; {}",
            roles_help(tree)
        )));
    };
    let roles = role_names(tree);
    if !roles.contains(&role) {
        let help = match did_you_mean(&role, roles.iter().map(String::as_str)) {
            Some(close) => format!("did you mean `{close}`?"),
            None => roles_help(tree),
        };
        return Err(start
            .error(format!("the workflow has no `{role}` role"))
            .with_help(help));
    }
    if model.trim().is_empty() {
        return Err(source
            .pos_at_offset(role.len() + 1)
            .error(format!("no model named for `{role}`"))
            .with_help("for example --model coach=opus"));
    }
    let pos = source.pos_at_offset(role.len() + 1);
    let value = Node::new(Value::String(model), pos.clone());
    Ok(role_patch(&role, &[("model", pos)], value))
}

/// A flag's value as a string node positioned in the flag's own text.
fn flag_value(flag: &str, value: &str) -> Node {
    let source = Source::new(flag, value, Layer::CommandLine);
    Node::new(
        Value::String(value.to_string()),
        source.pos(Location { line: 1, column: 1 }),
    )
}

/// The patch for one `--set KEY=VALUE`.
fn set_patch(tree: &Node, assignment: &str) -> Result<Node, Diagnostic> {
    let source = Source::new("--set", assignment, Layer::CommandLine);
    let start = source.pos(Location { line: 1, column: 1 });
    let Some(eq) = assignment.find('=') else {
        return Err(start
            .error("expected KEY=VALUE")
            .with_help("for example --set roles.coach.model=opus"));
    };
    let keys = key_segments(&source, &assignment[..eq])?;
    let value = parse_toml::parse_value(&source, eq + 1).unwrap_or_else(|| {
        Node::new(
            Value::String(assignment[eq + 1..].to_string()),
            source.pos_at_offset(eq + 1),
        )
    });
    let (first, first_pos) = &keys[0];
    match first.as_str() {
        "steps" => {
            let [_, (id, id_pos), (field, _), ..] = keys.as_slice() else {
                return Err(first_pos
                    .error("a step is set as `steps.<id>.<key>=VALUE`")
                    .with_help("for example --set steps.cycle.max_iterations=3"));
            };
            let Some(ids) = step_ids_to(tree_steps(tree), id) else {
                let all = all_step_ids(tree_steps(tree));
                let help = close_or_listed(id, &all, "the steps are");
                return Err(id_pos.error(format!("no step `{id}`")).with_help(help));
            };
            if field == "id" || field == "uses" {
                return Err(keys[2]
                    .1
                    .error(format!("a step's `{field}` cannot be changed with --set"))
                    .with_help("write a workflow that extends this one instead"));
            }
            let rest: Vec<(&str, Pos)> = keys[2..]
                .iter()
                .map(|(k, p)| (k.as_str(), p.clone()))
                .collect();
            Ok(step_patch(&ids, id_pos, &rest, value))
        }
        "roles" => {
            let [_, (role, role_pos), _, ..] = keys.as_slice() else {
                return Err(first_pos
                    .error("a role is set as `roles.<name>.<key>=VALUE`")
                    .with_help("for example --set roles.coach.model=opus"));
            };
            if !role_names(tree).contains(role) {
                let roles = role_names(tree);
                let help = match did_you_mean(role, roles.iter().map(String::as_str)) {
                    Some(close) => format!("did you mean `{close}`?"),
                    None => roles_help(tree),
                };
                return Err(role_pos.error(format!("no role `{role}`")).with_help(help));
            }
            let rest: Vec<(&str, Pos)> = keys[2..]
                .iter()
                .map(|(k, p)| (k.as_str(), p.clone()))
                .collect();
            Ok(role_patch(role, &rest, value))
        }
        _ => {
            let path: Vec<(&str, Pos)> =
                keys.iter().map(|(k, p)| (k.as_str(), p.clone())).collect();
            Ok(nest(&path, value))
        }
    }
}

/// `a.b.c` → each segment with its position.
fn key_segments(source: &Arc<Source>, key: &str) -> Result<Vec<(String, Pos)>, Diagnostic> {
    let mut segments = Vec::new();
    let mut offset = 0;
    for segment in key.split('.') {
        let pos = source.pos_at_offset(offset);
        let name = segment.trim();
        if name.is_empty() {
            return Err(pos
                .error("empty key")
                .with_help("keys are dotted paths such as roles.coach.model"));
        }
        segments.push((name.to_string(), pos));
        offset += segment.len() + 1;
    }
    Ok(segments)
}

/// `{k1 = {k2 = … value}}`.
fn nest(keys: &[(&str, Pos)], value: Node) -> Node {
    keys.iter().rev().fold(value, |inner, (key, pos)| {
        table(
            vec![Entry {
                key: (*key).to_string(),
                key_pos: pos.clone(),
                value: inner,
            }],
            pos.clone(),
        )
    })
}

fn table(entries: Vec<Entry>, pos: Pos) -> Node {
    let mut t = Table::default();
    for entry in entries {
        t.insert(entry);
    }
    Node::new(Value::Table(t), pos)
}

fn role_patch(role: &str, keys: &[(&str, Pos)], value: Node) -> Node {
    let pos = value.pos.clone();
    let path: Vec<(&str, Pos)> = [("roles", pos.clone()), (role, pos)]
        .into_iter()
        .chain(keys.iter().cloned())
        .collect();
    nest(&path, value)
}

/// `{steps = [{id = ids[0], steps = [{id = ids[1], <keys> = value}]}]}`.
fn step_patch(ids: &[String], id_pos: &Pos, keys: &[(&str, Pos)], value: Node) -> Node {
    let innermost = nest(keys, value);
    ids.iter().rev().fold(innermost, |inner, id| {
        let mut element = inner;
        if let Some(t) = element.as_table_mut() {
            t.insert(Entry {
                key: "id".into(),
                key_pos: id_pos.clone(),
                value: Node::new(Value::String(id.clone()), id_pos.clone()),
            });
        }
        table(
            vec![Entry {
                key: "steps".into(),
                key_pos: id_pos.clone(),
                value: Node::new(Value::Array(vec![element]), id_pos.clone()),
            }],
            id_pos.clone(),
        )
    })
}

fn tree_steps(tree: &Node) -> &[Node] {
    tree.get("steps")
        .and_then(Node::as_array)
        .unwrap_or_default()
}

fn role_names(tree: &Node) -> Vec<String> {
    tree.get("roles")
        .and_then(Node::as_table)
        .map(|t| t.keys().map(str::to_string).collect())
        .unwrap_or_default()
}

fn roles_help(tree: &Node) -> String {
    let roles = role_names(tree);
    if roles.is_empty() {
        "the workflow defines no roles".into()
    } else {
        format!("the roles are: {}", roles.join(", "))
    }
}

/// The ids from the outermost step down to the step `id`.
fn step_ids_to(steps: &[Node], id: &str) -> Option<Vec<String>> {
    steps.iter().find_map(|step| {
        let own = step.get_str("id")?;
        if own == id {
            return Some(vec![own.to_string()]);
        }
        let body = step.get("steps").and_then(Node::as_array)?;
        let mut ids = step_ids_to(body, id)?;
        ids.insert(0, own.to_string());
        Some(ids)
    })
}

/// The first loop step in execution order: the first top-level one, since loops only nest
/// inside loops.
fn first_loop(steps: &[Node]) -> Option<Vec<String>> {
    steps
        .iter()
        .find(|step| step.get_str("uses") == Some("loop"))
        .and_then(|step| step.get_str("id"))
        .map(|id| vec![id.to_string()])
}

fn all_step_ids(steps: &[Node]) -> Vec<String> {
    let mut ids = Vec::new();
    for step in steps {
        if let Some(id) = step.get_str("id") {
            ids.push(id.to_string());
        }
        if let Some(body) = step.get("steps").and_then(Node::as_array) {
            ids.extend(all_step_ids(body));
        }
    }
    ids
}

#[cfg(test)]
mod tests;
