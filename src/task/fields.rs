//! Front-matter values read into autobuild's one meaning: `complexity` and the
//! `acceptance_criteria:` list (which GuardKit writes in more than one shape), and `protect:`.
//!
//! GuardKit's documented task template says `complexity: 0` for "not estimated yet", and some
//! of its tools write `complexity: "3/10"`; both are accepted rather than making a user edit
//! every task. Anything else gets a message saying what was found.

use yaml_serde::Value;

/// `complexity` as a score from 1 to 10; `Ok(None)` for 0 (unset). Accepts a whole number, or a
/// string holding one, optionally written as a fraction of 10 (`"3/10"`).
pub(crate) fn complexity(value: &Value) -> Result<Option<u8>, String> {
    let invalid =
        |found: String| format!("`complexity` must be a whole number from 1 to 10, found {found}");
    let number = match value {
        Value::Number(n) => n
            .as_u64()
            .ok_or_else(|| invalid(format!("the number {n}")))?,
        Value::String(s) => {
            let text = s.trim();
            let score = match text.split_once('/') {
                Some((score, scale)) if scale.trim() == "10" => score.trim(),
                Some(_) => {
                    return Err(invalid(format!(
                        "\"{text}\" (a score out of 10 is written \"N/10\")"
                    )))
                }
                None => text,
            };
            score
                .parse::<u64>()
                .map_err(|_| invalid(format!("the string \"{text}\"")))?
        }
        Value::Null => return Ok(None),
        other => return Err(invalid(type_name(other))),
    };
    match number {
        0 => Ok(None),
        1..=10 => Ok(u8::try_from(number).ok()),
        _ => Err(invalid(number.to_string())),
    }
}

/// The items of an `acceptance_criteria:` list, as criterion texts. Strings and numbers are
/// items; a mapping item gives its `text` or `description` (GuardKit's structured form), with
/// its `id` in front.
pub(crate) fn criteria_list(value: Value) -> Result<Vec<String>, String> {
    let Value::Sequence(items) = value else {
        return Err(format!(
            "`acceptance_criteria` must be a list of criteria, found {}",
            type_name(&value)
        ));
    };
    let mut texts = Vec::new();
    for item in items {
        let text = match item {
            Value::String(s) => s,
            Value::Number(n) => n.to_string(),
            Value::Mapping(map) => {
                let field = |name: &str| match map.get(name) {
                    Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
                    _ => None,
                };
                let text = field("text").or_else(|| field("description")).ok_or(
                    "an `acceptance_criteria` item that is a mapping needs a `text` or `description`",
                )?;
                match field("id") {
                    Some(id) => format!("{id}: {text}"),
                    None => text,
                }
            }
            other => {
                return Err(format!(
                    "`acceptance_criteria` items must be text, found {}",
                    type_name(&other)
                ))
            }
        };
        texts.push(text);
    }
    Ok(texts)
}

/// `context_files:` — files every role is shown while this task runs (added to `[context]
/// files`): a list of paths relative to the repository root, or one path.
pub(crate) fn context_files(value: Value) -> (Vec<String>, Vec<FieldProblem>) {
    let items = match value {
        Value::Sequence(items) => items,
        Value::String(one) => vec![Value::String(one)],
        other => {
            let problem = FieldProblem {
                message: format!(
                    "`context_files` must be a list of paths, found {}",
                    type_name(&other)
                ),
                help: Some("write it as `context_files: [\"docs/architecture.md\"]`"),
            };
            return (Vec::new(), vec![problem]);
        }
    };
    let mut paths = Vec::new();
    let mut problems = Vec::new();
    for item in items {
        match item {
            Value::String(path) => match crate::project::context_files::path_problem(&path) {
                None => paths.push(path),
                Some(message) => problems.push(FieldProblem {
                    message,
                    help: None,
                }),
            },
            other => problems.push(FieldProblem {
                message: format!(
                    "`context_files` must list paths (strings), found {}",
                    type_name(&other)
                ),
                help: None,
            }),
        }
    }
    (paths, problems)
}

/// A problem with one `protect:` value, and how to fix it when that is not obvious.
pub(crate) struct FieldProblem {
    pub message: String,
    pub help: Option<&'static str>,
}

/// `protect:` — globs no agent may change while this task runs (added to `[scope] protect`): a
/// list of globs, or one glob. Returns the valid patterns and a problem for each other value.
pub(crate) fn protect(value: Value) -> (Vec<String>, Vec<FieldProblem>) {
    globs("protect", value)
}

/// `hidden:` — globs no agent may see while this task runs (added to `[scope] hidden`), read
/// like `protect:`.
pub(crate) fn hidden(value: Value) -> (Vec<String>, Vec<FieldProblem>) {
    globs("hidden", value)
}

/// A list of globs, or one glob, under `key`.
fn globs(key: &str, value: Value) -> (Vec<String>, Vec<FieldProblem>) {
    let items = match value {
        Value::Sequence(items) => items,
        Value::String(one) => vec![Value::String(one)],
        other => {
            let problem = FieldProblem {
                message: format!(
                    "`{key}` must be a list of globs, found {}",
                    type_name(&other)
                ),
                help: Some(if key == "hidden" {
                    "write it as `hidden: [\"tests/acceptance/**\"]`"
                } else {
                    "write it as `protect: [\"tests/acceptance/**\"]`"
                }),
            };
            return (Vec::new(), vec![problem]);
        }
    };
    let mut patterns = Vec::new();
    let mut problems = Vec::new();
    for item in items {
        match item {
            Value::String(pattern) => match crate::steps::scope::glob(&pattern) {
                Ok(_) => patterns.push(pattern),
                Err(message) => problems.push(FieldProblem {
                    message,
                    help: None,
                }),
            },
            other => problems.push(FieldProblem {
                message: format!(
                    "`{key}` must list globs (strings), found {}",
                    type_name(&other)
                ),
                help: None,
            }),
        }
    }
    (patterns, problems)
}

/// How a front-matter value is named in a message: its kind and, for scalars, the value.
pub(crate) fn type_name(value: &Value) -> String {
    match value {
        Value::Null => "nothing".to_string(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) if s.trim().is_empty() => "an empty string".to_string(),
        Value::String(s) => format!("the string \"{s}\""),
        Value::Sequence(_) => "a list".to_string(),
        Value::Mapping(_) => "a mapping".to_string(),
        Value::Tagged(t) => format!("a value tagged {}", t.tag),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protect_takes_a_list_or_one_glob_and_names_each_bad_value() {
        let (patterns, problems) = protect(yaml("[\"tests/**\", 3, \"src/[\"]"));
        assert_eq!(patterns, ["tests/**"]);
        assert_eq!(problems.len(), 2);
        assert!(problems[0].message.contains("found the number 3"));
        assert!(problems[1].message.contains("not a valid glob"));
        assert_eq!(protect(yaml("\"docs/**\"")).0, ["docs/**"]);
        let (none, wrong) = protect(yaml("{a: 1}"));
        assert!(none.is_empty() && wrong[0].help.is_some());
    }

    #[test]
    fn hidden_reads_like_protect_under_its_own_name() {
        let (patterns, problems) = hidden(yaml("[\"tests/acceptance/**\", 3]"));
        assert_eq!(patterns, ["tests/acceptance/**"]);
        assert!(problems[0].message.starts_with("`hidden` must list globs"));
        let (_, wrong) = hidden(yaml("{a: 1}"));
        assert_eq!(
            wrong[0].help,
            Some("write it as `hidden: [\"tests/acceptance/**\"]`")
        );
    }

    fn yaml(text: &str) -> Value {
        yaml_serde::from_str(text).unwrap()
    }

    #[test]
    fn complexity_accepts_guardkit_spellings() {
        assert_eq!(complexity(&yaml("0")), Ok(None));
        assert_eq!(complexity(&yaml("7")), Ok(Some(7)));
        assert_eq!(complexity(&yaml("\"3/10\"")), Ok(Some(3)));
        assert_eq!(complexity(&yaml("\" 4 \"")), Ok(Some(4)));
        assert_eq!(complexity(&yaml("\"0/10\"")), Ok(None));
        for (text, says) in [
            ("11", "found 11"),
            ("2.5", "the number 2.5"),
            ("\"3/5\"", "\"N/10\""),
            ("high", "the string \"high\""),
            ("[1]", "a list"),
        ] {
            let err = complexity(&yaml(text)).unwrap_err();
            assert!(err.contains(says), "{text}: {err}");
        }
    }

    #[test]
    fn criteria_lists_take_text_and_structured_items() {
        let got = criteria_list(yaml(
            "- plain\n- 42\n- {id: AC-009, description: structured}\n- {text: no id}\n",
        ))
        .unwrap();
        assert_eq!(got, ["plain", "42", "AC-009: structured", "no id"]);
        assert!(criteria_list(yaml("text")).unwrap_err().contains("a list"));
        assert!(criteria_list(yaml("- {id: A}"))
            .unwrap_err()
            .contains("`text`"));
    }
}
