//! A merged workflow tree → the typed [`Workflow`], with every problem of the file reported.
//!
//! The header, each role and each step (nested loop steps included) are decoded separately, so
//! a mistake in one role does not hide a mistake in a step. Steps flatten their action into the
//! step table, which serde cannot check for unknown keys; the keys are checked here against
//! [`kinds::COMMON_KEYS`] and each kind's keys, and the common part and the action are decoded
//! apart so that every error keeps a precise position.

use base::Keyword;
use strum::IntoEnumIterator;

use crate::workflow::kinds::{self, Kind};
use crate::workflow::model::{Action, Step, Workflow};
use base::diagnostic::{did_you_mean, Diagnostic};
use base::user_file::tree::{Entry, Node, Table, Value};
use base::user_file::typed::decode;

/// Decodes a whole workflow.
pub fn decode_workflow(tree: &Node) -> Result<Workflow, Vec<Diagnostic>> {
    let decoded = decode_parts(tree);
    match decoded.part {
        Some(part) if decoded.problems.is_empty() => Ok(part.workflow),
        _ => Err(decoded.problems),
    }
}

/// What decoded of a workflow, so that validation can check it while the decoding mistakes
/// are reported.
pub struct Decoded {
    /// `None` when the header (`schema`, `name`, …) itself is wrong.
    pub part: Option<DecodedPart>,
    pub problems: Vec<Diagnostic>,
}

/// The workflow without its roles and steps that have mistakes, with the tree it decoded from
/// pruned alike (validation walks the two side by side).
pub struct DecodedPart {
    pub workflow: Workflow,
    pub tree: Node,
    /// The names of the roles and the ids of the steps (nested ones included) left out.
    pub left_out: Vec<String>,
}

/// Decodes every part of a workflow that can be, reporting the others.
pub fn decode_parts(tree: &Node) -> Decoded {
    let Some(table) = tree.as_table() else {
        return Decoded {
            part: None,
            problems: vec![tree.pos.error(format!(
                "a workflow is a table of settings, found {}",
                tree.kind()
            ))],
        };
    };
    let mut problems = Vec::new();
    let mut left_out = Vec::new();

    let mut header = tree.clone();
    let header_table = header.as_table_mut().expect("checked to be a table above");
    for key in ["roles", "steps"] {
        if let Some(node) = header_table.get_mut(key) {
            node.value = if key == "roles" {
                Value::Table(Table::default())
            } else {
                Value::Array(Vec::new())
            };
        }
    }
    let workflow = collect(decode::<Workflow>(&header), &mut problems);

    let mut pruned = tree.clone();
    let roles = match table.get("roles") {
        Some(node) => match node.as_table() {
            Some(roles) => {
                let mut decoded = std::collections::BTreeMap::new();
                for entry in roles.iter() {
                    match collect(decode(&entry.value), &mut problems) {
                        Some(role) => {
                            decoded.insert(entry.key.clone(), role);
                        }
                        None => left_out.push(entry.key.clone()),
                    }
                }
                decoded
            }
            None => {
                problems.push(expected_kind(node, "`roles`", "a table of roles"));
                Default::default()
            }
        },
        None => Default::default(),
    };
    if let Some(Value::Table(roles_table)) = pruned
        .as_table_mut()
        .and_then(|t| t.get_mut("roles"))
        .map(|n| &mut n.value)
    {
        for name in &left_out {
            roles_table.remove(name);
        }
    }

    let steps = match table.get("steps") {
        Some(node) => decode_steps(node, &mut problems, &mut left_out),
        None => Vec::new(),
    };
    if let Some(node) = pruned.as_table_mut().and_then(|t| t.get_mut("steps")) {
        node.value = Value::Array(steps.iter().map(|(_, node)| node.clone()).collect());
    }

    let part = workflow.map(|mut workflow| {
        workflow.roles = roles;
        workflow.steps = steps.into_iter().map(|(step, _)| step).collect();
        DecodedPart {
            workflow,
            tree: pruned,
            left_out,
        }
    });
    Decoded { part, problems }
}

/// The steps of `node` that decode, each with its node (a loop's with its body pruned alike).
fn decode_steps(
    node: &Node,
    problems: &mut Vec<Diagnostic>,
    left_out: &mut Vec<String>,
) -> Vec<(Step, Node)> {
    let Some(items) = node.as_array() else {
        problems.push(expected_kind(node, "`steps`", "an array of step tables"));
        return Vec::new();
    };
    // The ids a step without `uses` may have meant to patch (a typo of an existing step's id
    // appends a new, incomplete step instead).
    let complete: Vec<&str> = items
        .iter()
        .filter(|item| item.get("uses").is_some())
        .filter_map(|item| item.get_str("id"))
        .collect();
    items
        .iter()
        .filter_map(|item| {
            let decoded = decode_step(item, &complete, problems, left_out);
            if decoded.is_none() {
                item.walk(&mut |inner| {
                    if let Some(id) = inner.get_str("id") {
                        left_out.push(id.to_string());
                    }
                });
            }
            decoded
        })
        .collect()
}

fn decode_step(
    node: &Node,
    siblings: &[&str],
    problems: &mut Vec<Diagnostic>,
    left_out: &mut Vec<String>,
) -> Option<(Step, Node)> {
    let Some(table) = node.as_table() else {
        problems.push(expected_kind(node, "a step", "a table"));
        return None;
    };
    let uses = step_uses(node, table, siblings, problems)?;
    let kind = kinds::named(uses)?;
    let before = problems.len();
    check_step_keys(table, kind, problems);

    let mut common = Table::default();
    let mut action = Table::default();
    for entry in table.iter() {
        if entry.key == "uses" {
            action.insert(entry.clone());
        } else if kinds::COMMON_KEYS.iter().any(|k| k.name == entry.key) {
            common.insert(entry.clone());
        } else if entry.key == "steps" {
            action.insert(Entry {
                value: Node::new(Value::Array(Vec::new()), entry.value.pos.clone()),
                ..entry.clone()
            });
        } else if kind.has_key(&entry.key) {
            action.insert(entry.clone());
        }
    }
    if uses == "loop" && action.get("steps").is_none() {
        // Reported below in words a user can act on, instead of serde's "missing key".
        action.insert(Entry {
            key: "steps".into(),
            key_pos: node.pos.clone(),
            value: Node::new(Value::Array(Vec::new()), node.pos.clone()),
        });
    }
    // The common part is decoded as a step with the simplest action, so that its own fields
    // are reported with their exact paths.
    common.insert(Entry {
        key: "uses".into(),
        key_pos: node.pos.clone(),
        value: Node::new(Value::String("worktree".into()), node.pos.clone()),
    });
    let step = collect(
        decode::<Step>(&Node::new(Value::Table(common), node.pos.clone())),
        problems,
    );
    let action = collect(
        decode::<Action>(&Node::new(Value::Table(action), node.pos.clone())),
        problems,
    );
    if uses == "loop"
        && table
            .get("steps")
            .is_none_or(|body| body.as_array().is_some_and(<[Node]>::is_empty))
    {
        problems.push(
            table
                .get("steps")
                .map_or(&node.pos, |body| &body.pos)
                .error("a `loop` step needs nested steps (`[[steps.steps]]`)")
                .with_help("its body is what repeats each turn, e.g. the player, verify, coach and gate steps"),
        );
    }
    // Mistakes of the step itself leave it out; a loop whose own keys are right keeps the body
    // steps that decode.
    let own_problems = problems.len() > before;
    let body = match table.get("steps") {
        Some(body) if uses == "loop" => decode_steps(body, problems, left_out),
        _ => Vec::new(),
    };
    let (mut step, mut action) = (step?, action?);
    if own_problems {
        return None;
    }
    let mut pruned = node.clone();
    if let Action::Loop(looped) = &mut action {
        if let Some(body_node) = pruned.as_table_mut().and_then(|t| t.get_mut("steps")) {
            body_node.value = Value::Array(body.iter().map(|(_, n)| n.clone()).collect());
        }
        looped.steps = body.into_iter().map(|(step, _)| step).collect();
    }
    step.action = action;
    Some((step, pruned))
}

/// The step's `uses`, when it names a built-in action.
fn step_uses<'a>(
    node: &'a Node,
    table: &'a Table,
    siblings: &[&str],
    problems: &mut Vec<Diagnostic>,
) -> Option<&'a str> {
    let known = kinds::names().join(", ");
    let Some(uses) = table.get("uses") else {
        let id = table.get("id").and_then(Node::as_str);
        // A patch whose id is a typo of an existing step's: say so, not "add a `uses`".
        if let Some((id, close)) =
            id.and_then(|id| Some((id, did_you_mean(id, siblings.iter().copied())?)))
        {
            let at = table.get("id").map_or(&node.pos, |n| &n.pos);
            problems.push(
                at.error(format!(
                    "no step `{id}` to patch (a new step needs a `uses`)"
                ))
                .with_help(format!("did you mean `{close}`?")),
            );
            return None;
        }
        let id = id.map_or(String::new(), |id| format!(" `{id}`"));
        problems.push(
            node.pos
                .error(format!("step{id} has no `uses`"))
                .with_help(format!("say which built-in action it runs: {known}")),
        );
        return None;
    };
    let Some(name) = uses.as_str() else {
        problems.push(expected_kind(uses, "`uses`", "a string"));
        return None;
    };
    if kinds::named(name).is_none() {
        let help = match did_you_mean(name, kinds::names()) {
            Some(close) => format!("did you mean `{close}`?"),
            None => format!("the built-in actions are: {known}"),
        };
        problems.push(
            uses.pos
                .error(format!("unknown action `uses = \"{name}\"`"))
                .with_help(help),
        );
        return None;
    }
    Some(name)
}

fn check_step_keys(table: &Table, kind: &Kind, problems: &mut Vec<Diagnostic>) {
    let uses = kind.uses.as_str();
    let allowed: Vec<&str> = kinds::COMMON_KEYS
        .iter()
        .chain(kind.keys())
        .map(|k| k.name)
        .collect();
    for entry in table.iter() {
        let key = entry.key.as_str();
        if allowed.contains(&key) {
            continue;
        }
        let help = match did_you_mean(key, allowed.iter().copied()) {
            Some(close) => format!("did you mean `{close}`?"),
            None => match kinds::Uses::iter().find(|other| other.kind().has_key(key)) {
                Some(owner) => format!("`{key}` is a key of `uses = \"{owner}\"` steps"),
                None => format!("a `{uses}` step accepts: {}", allowed.join(", ")),
            },
        };
        problems.push(
            entry
                .key_pos
                .error(format!(
                    "unknown key `{key}` for a `uses = \"{uses}\"` step"
                ))
                .with_help(help),
        );
    }
}

fn expected_kind(node: &Node, what: &str, expected: &str) -> Diagnostic {
    node.pos
        .error(format!("{what} must be {expected}, found {}", node.kind()))
}

fn collect<T>(result: Result<T, Vec<Diagnostic>>, problems: &mut Vec<Diagnostic>) -> Option<T> {
    result.map_err(|mut found| problems.append(&mut found)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::model::AgentKind;
    use base::user_file::parse_toml;
    use base::user_file::source::{Layer, Source};

    fn decode_text(text: &str) -> Result<Workflow, Vec<Diagnostic>> {
        let tree = parse_toml::parse(&Source::new("w.toml", text, Layer::Repo)).unwrap();
        decode_workflow(&tree)
    }

    const VALID: &str = r#"
schema = 1
name = "w"

[roles.player]
agent = "command"
prompt = "player.md"
command = ["sh", "p.sh"]

[[steps]]
id = "cycle"
uses = "loop"
max_iterations = 2
  [[steps.steps]]
  id = "implement"
  uses = "agent"
  role = "player"
"#;

    #[test]
    fn decodes_nested_steps_and_roles() {
        let workflow = decode_text(VALID).unwrap();
        assert_eq!(workflow.roles["player"].agent, AgentKind::Command);
        let Action::Loop(crate::workflow::kinds::LoopStep {
            steps,
            max_iterations,
            ..
        }) = &workflow.steps[0].action
        else {
            panic!("not a loop");
        };
        assert_eq!(*max_iterations, 2);
        assert_eq!(steps[0].id, "implement");
    }

    #[test]
    fn reports_problems_of_every_role_and_step() {
        let text = VALID
            .replace(
                "prompt = \"player.md\"",
                "prompt = \"player.md\"\nmodle = \"x\"",
            )
            .replace(
                "max_iterations = 2",
                "max_iterations = \"two\"\nuntill = \"x\"",
            )
            .replace("role = \"player\"", "role = 3");
        let problems = decode_text(&text).unwrap_err();
        let messages: Vec<_> = problems.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(problems.len(), 4, "{messages:#?}");
        assert!(messages[0].contains("unknown key `modle`"));
        assert!(messages[1].contains("unknown key `untill`"));
        assert_eq!(problems[1].help.as_deref(), Some("did you mean `until`?"));
        assert!(messages[2].contains("invalid type: string \"two\""));
        assert!(messages[3].contains("invalid type: integer `3`"));
        let lines: Vec<_> = problems.iter().map(|d| d.location.unwrap().line).collect();
        assert_eq!(lines, [8, 15, 14, 19]);
    }

    #[test]
    fn unknown_uses_suggests_the_closest() {
        let problems =
            decode_text(&VALID.replace("uses = \"loop\"", "uses = \"lop\"")).unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert_eq!(problems[0].help.as_deref(), Some("did you mean `loop`?"));
        assert_eq!(problems[0].location.unwrap().line, 12);
    }

    #[test]
    fn missing_max_iterations_points_at_the_step() {
        let problems = decode_text(&VALID.replace("max_iterations = 2\n", "")).unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert_eq!(problems[0].message, "missing key `max_iterations`");
    }

    #[test]
    fn a_loop_without_a_body_says_what_it_needs() {
        let body =
            "  [[steps.steps]]\n  id = \"implement\"\n  uses = \"agent\"\n  role = \"player\"\n";
        for text in [VALID.replace(body, ""), VALID.replace(body, "steps = []\n")] {
            let problems = decode_text(&text).unwrap_err();
            assert_eq!(problems.len(), 1, "{problems:#?}");
            assert_eq!(
                problems[0].message,
                "a `loop` step needs nested steps (`[[steps.steps]]`)"
            );
        }
    }
}
