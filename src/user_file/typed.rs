//! Deserializing a typed value from a [`Node`] tree, reporting every problem with its position.
//!
//! serde stops at the first error. To report all of them, [`decode`] deserializes, turns the
//! error's path (from `serde_path_to_error`) back into the offending key or value of the tree,
//! removes that value and tries again, until the rest deserializes or nothing more can be removed.
//! Where serde loses the path (inside internally tagged enums, which buffer their input), the
//! culprit is found by elimination: the key whose removal changes the error is the one that caused
//! it. That relies on serde reporting a bad value before a missing one, which holds for plain
//! structs and enum variants but not across `#[serde(flatten)]`; callers decode flattened parts
//! separately (see [`crate::workflow::decode`]).

use std::sync::OnceLock;

use regex::Regex;
use serde::de::DeserializeOwned;
use serde_path_to_error::Segment;

use crate::diagnostic::{did_you_mean, Diagnostic};
use crate::user_file::tree::{Node, Seg, Value};

/// Upper bound on errors reported for one value; each round removes one offending value.
const MAX_ROUNDS: usize = 64;

/// Deserializes `T` from `node`; on failure, every problem found, each located.
pub fn decode<T: DeserializeOwned>(node: &Node) -> Result<T, Vec<Diagnostic>> {
    let non_finite: Vec<Diagnostic> = node
        .non_finite_floats()
        .into_iter()
        .map(|n| n.pos.error("not a finite number"))
        .collect();
    if !non_finite.is_empty() {
        return Err(non_finite);
    }
    let mut current = node.clone();
    let mut problems = Vec::new();
    let mut removed: Vec<Vec<Seg>> = Vec::new();
    for _ in 0..MAX_ROUNDS {
        let failure = match attempt::<T>(&current) {
            Ok(value) if problems.is_empty() => return Ok(value),
            Ok(_) => return Err(problems),
            Err(failure) => failure,
        };
        let (diagnostic, removable) = locate::<T>(&current, &failure);
        // A required value already reported as wrong is then missing: say it only once.
        if !is_consequence(&failure, &removed) {
            problems.push(diagnostic);
        }
        match removable {
            Some(path) if current.remove_at(&path) => removed.push(path),
            _ => break,
        }
    }
    if problems.is_empty() {
        problems.push(node.pos.error("invalid value"));
    }
    Err(problems)
}

/// Whether the failure is a missing key that an earlier round removed.
fn is_consequence(failure: &Failure, removed: &[Vec<Seg>]) -> bool {
    missing_field(&failure.message).is_some_and(|name| {
        let path = [failure.path.clone(), vec![Seg::Key(name)]].concat();
        removed.contains(&path)
    })
}

/// One failed deserialization: where serde was and what it said.
#[derive(Debug, PartialEq)]
struct Failure {
    path: Vec<Seg>,
    message: String,
}

fn attempt<T: DeserializeOwned>(node: &Node) -> Result<T, Failure> {
    serde_path_to_error::deserialize(node.to_json()).map_err(|e| {
        let mut path = Vec::new();
        for segment in e.path().iter() {
            match segment {
                Segment::Seq { index } => path.push(Seg::Index(*index)),
                Segment::Map { key } => path.push(Seg::Key(key.clone())),
                Segment::Enum { .. } => {}
                Segment::Unknown => break,
            }
        }
        Failure {
            path,
            message: e.into_inner().to_string(),
        }
    })
}

/// The diagnostic for a failure, and the path to remove before trying again (none when the
/// problem cannot be removed, such as a missing key).
fn locate<T: DeserializeOwned>(tree: &Node, failure: &Failure) -> (Diagnostic, Option<Vec<Seg>>) {
    let depth = (0..=failure.path.len())
        .rev()
        .find(|&n| tree.at(&failure.path[..n]).is_some())
        .unwrap_or(0);
    let path = failure.path[..depth].to_vec();
    let Some(target) = tree.at(&path) else {
        return (tree.pos.error(&failure.message), None);
    };

    if let Some((name, expected)) = unknown_field(&failure.message) {
        let found = if path.last() == Some(&Seg::Key(name.clone())) {
            Some(path.clone())
        } else {
            find_key(target, &name).map(|rest| [path.clone(), rest].concat())
        };
        let at = found
            .as_deref()
            .map_or(target, |p| tree.at(p).unwrap_or(target));
        let pos = found
            .as_deref()
            .and_then(|p| key_pos(tree, p))
            .unwrap_or(&at.pos);
        let diagnostic = pos
            .error(format!("unknown key `{name}`"))
            .with_help(suggestion(&name, &expected, "keys"));
        return (diagnostic, found);
    }
    if let Some((name, expected)) = unknown_variant(&failure.message) {
        let field = path.iter().rev().find_map(|seg| match seg {
            Seg::Key(key) => Some(format!(" for `{key}`")),
            Seg::Index(_) => None,
        });
        let diagnostic = target
            .pos
            .error(format!(
                "unknown value `{name}`{}",
                field.unwrap_or_default()
            ))
            .with_help(suggestion(&name, &expected, "values"));
        return (diagnostic, removable(path));
    }
    if let Some(name) = missing_field(&failure.message) {
        // serde checks for missing keys after every value of the table, so the table's other
        // problems are already reported: drop it to go on with its siblings.
        let pos = key_pos(tree, &path).unwrap_or(&target.pos);
        return (pos.error(format!("missing key `{name}`")), removable(path));
    }

    let message = readable(&failure.message);
    if matches!(target.value, Value::Table(_)) {
        if let Some(key) = culprit::<T>(tree, &path, failure) {
            let culprit_path = [path, vec![Seg::Key(key)]].concat();
            let pos = tree.at(&culprit_path).map_or(&target.pos, |n| &n.pos);
            return (pos.error(message), Some(culprit_path));
        }
    }
    (target.pos.error(message), removable(path))
}

/// The key of `table_path` whose removal changes the failure. Removing an enum's tag changes
/// it too (into a missing tag), so when several keys qualify, the one whose value the message
/// quotes wins.
fn culprit<T: DeserializeOwned>(
    tree: &Node,
    table_path: &[Seg],
    failure: &Failure,
) -> Option<String> {
    let table = tree.at(table_path)?.as_table()?;
    let candidates: Vec<&crate::user_file::tree::Entry> = table
        .iter()
        .filter(|entry| {
            let mut without = tree.clone();
            let path = [table_path.to_vec(), vec![Seg::Key(entry.key.clone())]].concat();
            without.remove_at(&path);
            attempt::<T>(&without).err().as_ref() != Some(failure)
        })
        .collect();
    candidates
        .iter()
        .find(|entry| quoted_in(&entry.value, &failure.message))
        .or(candidates.first())
        .map(|entry| entry.key.clone())
}

/// Whether serde's message quotes this value (`string "two"`, `integer `3``, `map`).
fn quoted_in(node: &Node, message: &str) -> bool {
    match &node.value {
        Value::String(s) => {
            message.contains(&format!("\"{s}\"")) || message.contains(&format!("`{s}`"))
        }
        Value::Integer(i) => message.contains(&format!("`{i}`")),
        Value::Float(f) => message.contains(&format!("`{f}`")),
        Value::Bool(b) => message.contains(&format!("`{b}`")),
        Value::Table(_) => message.contains("invalid type: map"),
        Value::Array(_) => message.contains("invalid type: sequence"),
        Value::Null => message.contains("invalid type: null") || message.contains("unit value"),
    }
}

/// The path (relative to `node`) of the first key named `name`, depth first.
fn find_key(node: &Node, name: &str) -> Option<Vec<Seg>> {
    match &node.value {
        Value::Table(table) => table.iter().find_map(|entry| {
            if entry.key == name {
                Some(vec![Seg::Key(entry.key.clone())])
            } else {
                find_key(&entry.value, name)
                    .map(|rest| [vec![Seg::Key(entry.key.clone())], rest].concat())
            }
        }),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
            find_key(item, name).map(|rest| [vec![Seg::Index(i)], rest].concat())
        }),
        _ => None,
    }
}

/// Where the key of the entry at `path` was written (tables are best pointed at by their key).
fn key_pos<'a>(tree: &'a Node, path: &[Seg]) -> Option<&'a crate::user_file::source::Pos> {
    let (Seg::Key(key), parent) = path.split_last()? else {
        return None;
    };
    Some(&tree.at(parent)?.as_table()?.entry(key)?.key_pos)
}

fn removable(path: Vec<Seg>) -> Option<Vec<Seg>> {
    (!path.is_empty()).then_some(path)
}

fn suggestion(name: &str, expected: &[String], what: &str) -> String {
    match did_you_mean(name, expected.iter().map(String::as_str)) {
        Some(close) => format!("did you mean `{close}`?"),
        None if expected.is_empty() => format!("no {what} are allowed here"),
        None => format!("expected one of: {}", expected.join(", ")),
    }
}

fn unknown_field(message: &str) -> Option<(String, Vec<String>)> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"^unknown field `([^`]*)`, (?:expected (.*)|there are no fields)$")
            .expect("valid regex")
    });
    let caps = re.captures(message)?;
    Some((
        caps[1].to_string(),
        backticked(caps.get(2).map_or("", |m| m.as_str())),
    ))
}

fn unknown_variant(message: &str) -> Option<(String, Vec<String>)> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"^unknown variant `([^`]*)`, (?:expected (.*)|there are no variants)$")
            .expect("valid regex")
    });
    let caps = re.captures(message)?;
    Some((
        caps[1].to_string(),
        backticked(caps.get(2).map_or("", |m| m.as_str())),
    ))
}

fn missing_field(message: &str) -> Option<String> {
    let rest = message.strip_prefix("missing field `")?;
    Some(rest.strip_suffix('`')?.to_string())
}

fn backticked(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// serde's type names in the words of the file formats.
fn readable(message: &str) -> String {
    static TYPE_NAME: OnceLock<Regex> = OnceLock::new();
    let type_name = TYPE_NAME.get_or_init(|| {
        Regex::new(r"expected (struct|internally tagged enum|enum) \w+").expect("valid regex")
    });
    let message = type_name.replace_all(message, "expected a table");
    [
        ("expected u32", "expected a non-negative integer"),
        ("expected u64", "expected a non-negative integer"),
        ("expected u8", "expected a non-negative integer"),
        ("expected f64", "expected a number"),
        ("expected a sequence", "expected an array"),
        ("expected a map", "expected a table"),
        ("invalid type: map", "invalid type: table"),
        ("invalid type: sequence", "invalid type: array"),
        ("invalid type: unit value", "invalid type: null"),
    ]
    .iter()
    .fold(message.into_owned(), |text, (from, to)| {
        text.replace(from, to)
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Deserialize;

    use super::*;
    use crate::user_file::parse_toml;
    use crate::user_file::source::{Layer, Source};

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Role {
        agent: String,
        #[serde(default)]
        tools: Vec<crate::workflow::model::Tool>,
        #[serde(default)]
        turns: Option<u32>,
    }

    #[derive(Debug, Deserialize)]
    #[serde(tag = "uses", rename_all = "kebab-case")]
    #[allow(dead_code)]
    enum Tagged {
        Counter { count: u32, label: String },
    }

    fn tree(text: &str) -> Node {
        parse_toml::parse(&Source::new("t.toml", text, Layer::Repo)).unwrap()
    }

    fn lines(problems: &[Diagnostic]) -> Vec<usize> {
        problems.iter().map(|d| d.location.unwrap().line).collect()
    }

    #[test]
    fn reports_every_problem_of_a_table() {
        let problems = decode::<BTreeMap<String, Role>>(&tree(
            "[a]\nagent = \"x\"\nmodle = 1\ntools = [\"read\", \"wirte\"]\nturns = \"many\"\n",
        ))
        .unwrap_err();
        assert_eq!(lines(&problems), [3, 4, 5], "{problems:#?}");
        assert_eq!(problems[0].message, "unknown key `modle`");
        assert_eq!(problems[1].message, "unknown value `wirte` for `tools`");
        assert_eq!(problems[1].help.as_deref(), Some("did you mean `write`?"));
        assert!(problems[2]
            .message
            .contains("expected a non-negative integer"));
    }

    #[test]
    fn missing_keys_point_at_the_table() {
        let problems =
            decode::<BTreeMap<String, Role>>(&tree("x = 1\n[a]\ntools = []\n")).unwrap_err();
        assert_eq!(problems.len(), 2, "{problems:#?}");
        assert_eq!(problems[0].message, "missing key `agent`");
        assert_eq!(problems[0].location.unwrap().line, 2);
        assert_eq!(
            problems[1].message,
            "invalid type: integer `1`, expected a table"
        );
    }

    #[test]
    fn fields_of_tagged_enums_are_found_by_elimination() {
        let problems = decode::<Tagged>(&tree(
            "uses = \"counter\"\nlabel = \"x\"\ncount = \"three\"\n",
        ))
        .unwrap_err();
        assert_eq!(lines(&problems), [3], "{problems:#?}");
        assert!(problems[0]
            .message
            .contains("invalid type: string \"three\""));
    }

    #[test]
    fn valid_input_decodes() {
        let role: Role = decode(&tree("agent = \"x\"\ntools = [\"read\"]\n")).unwrap();
        assert_eq!(role.agent, "x");
    }
}
