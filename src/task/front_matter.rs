//! The YAML front matter of a task file: splitting it from the body and reading its fields with
//! located, per-field diagnostics.
//!
//! Fields are read from a generic YAML mapping rather than through a derived struct so that every
//! wrong field is reported (not only the first), each at its own line, and so that keys other
//! tools put in shared task files are kept instead of rejected (docs/guardkit.md).
//!
//! A top-level key written twice (GuardKit rewrites `status:` that way) is found line by line
//! first ([`super::duplicates`]) and accepted with a located warning; the last value is kept,
//! as GuardKit's loader (Python's YAML) keeps it, and the warning says when the values differ. Values GuardKit writes in other shapes
//! (`complexity`, `acceptance_criteria`) are read by [`super::fields`].
//!
//! Before yaml_serde sees the front matter, it goes through the alias and nesting bound every
//! YAML input shares ([`crate::user_file::yaml_limits`]): an alias bomb in a task file is a
//! located error, not a process killed for memory.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use yaml_serde::Value;

use super::duplicates;
use super::fields::{self, type_name};
use super::id::validate_id;
use super::markdown::{lines_from, Line};
use crate::diagnostic::{Diagnostic, Location};
use crate::user_file::yaml_limits;

/// The keys autobuild reads; every other key lands in [`FrontMatter::extra`].
const KNOWN_KEYS: [&str; 10] = [
    "id",
    "title",
    "task_type",
    "complexity",
    "dependencies",
    "workflow",
    "protect",
    "hidden",
    "acceptance_criteria",
    "context_files",
];

/// The key autobuild reads that `name` is a likely misspelling of. Task files shared with
/// GuardKit carry many keys of its own, so only a key within a small edit distance of a known
/// one (`task_typ`, `dependancies`) is suspected, never one merely similar (`task_id`).
fn misspelling_of(name: &str) -> Option<&'static str> {
    KNOWN_KEYS.into_iter().find(|known| {
        let distance = strsim::damerau_levenshtein(name, known);
        distance <= 2 && distance * 3 <= known.len()
    })
}

static YAML_POSITION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r" at (line \d+ column \d+|position \d+)").expect("position pattern is valid")
});

/// Where the front matter and the body are in the file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Split<'a> {
    /// The `---` line that opens the front matter.
    pub open: Line<'a>,
    /// The YAML text between the delimiters.
    pub yaml: &'a str,
    pub yaml_offset: usize,
    /// Byte offset of the first body line (the file's length when there is no body).
    pub body_offset: usize,
}

/// Whether the file's first line opens a front matter (`---`).
pub(crate) fn opens(source: &str) -> bool {
    let text = source.strip_prefix('\u{feff}').unwrap_or(source);
    text.lines().next().is_some_and(|l| l.trim_end() == "---")
}

/// Separates the front matter from the body; the error is the diagnostic to report.
pub(crate) fn split<'a>(path: &Path, source: &'a str) -> Result<Split<'a>, Diagnostic> {
    let start = if source.starts_with('\u{feff}') { 3 } else { 0 };
    let lines = lines_from(source, start);
    let help = "a task file starts with YAML front matter:\n  ---\n  id: TASK-001\n  title: Short title\n  ---";
    let open = match lines.first() {
        Some(first) if first.text.trim_end() == "---" => *first,
        first => {
            let offset = first.map_or(start, |l| l.offset);
            return Err(Diagnostic::at_offset(
                path,
                source,
                offset,
                "missing YAML front matter: the file must start with a `---` line",
            )
            .with_help(help));
        }
    };
    let yaml_offset = open.offset + open.text.len() + line_break_len(source, open);
    let close = lines[1..]
        .iter()
        .find(|l| matches!(l.text.trim_end(), "---" | "..."));
    let Some(close) = close else {
        return Err(Diagnostic::at_offset(
            path,
            source,
            open.offset,
            "the front matter opened here is never closed by a `---` line",
        )
        .with_help(help));
    };
    Ok(Split {
        open,
        yaml: &source[yaml_offset.min(close.offset)..close.offset],
        yaml_offset: yaml_offset.min(close.offset),
        body_offset: close.offset + close.text.len() + line_break_len(source, *close),
    })
}

fn line_break_len(source: &str, line: Line<'_>) -> usize {
    let rest = &source[line.offset + line.text.len()..];
    if rest.starts_with("\r\n") {
        2
    } else if rest.starts_with('\n') {
        1
    } else {
        0
    }
}

/// The front-matter fields, each `None`/empty when absent or invalid (the problem is reported).
#[derive(Debug, Default)]
pub(crate) struct FrontMatter {
    pub id: Option<String>,
    pub title: Option<String>,
    pub task_type: Option<String>,
    pub complexity: Option<u8>,
    pub dependencies: Vec<String>,
    pub workflow: Option<String>,
    pub protect: Vec<String>,
    /// `context_files:`, each with the problem to report if it does not exist.
    pub context_files: Vec<crate::project::context_files::ContextFile>,
    pub hidden: Vec<String>,
    /// The `acceptance_criteria:` list, when it has items, and the byte offset of its key.
    pub criteria: Option<(Vec<String>, usize)>,
    pub extra: BTreeMap<String, Value>,
}

/// What the front matter is read with besides its text.
pub(crate) struct Reading<'p> {
    /// The id to use when the front matter has none (taken from the file name).
    pub fallback_id: Option<String>,
    pub problems: &'p mut Vec<Diagnostic>,
    /// Things the user should know that do not stop the task.
    pub warnings: &'p mut Vec<Diagnostic>,
}

/// Reads the fields of the front matter, pushing one diagnostic per problem.
pub(crate) fn read(
    path: &Path,
    source: &str,
    split: &Split<'_>,
    reading: Reading<'_>,
) -> FrontMatter {
    let Reading {
        fallback_id,
        problems,
        warnings,
    } = reading;
    let located = Locator {
        path,
        source,
        split,
    };
    let (yaml, repeats) = duplicates::dedupe(split.yaml);
    for repeat in &repeats {
        let (Some(&first), Some(&last)) = (repeat.offsets.first(), repeat.offsets.last()) else {
            continue;
        };
        let first_line = Location::from_offset(source, split.yaml_offset + first).line;
        let at = split.yaml_offset + last;
        if KNOWN_KEYS.contains(&repeat.key.as_str()) {
            // GuardKit's loader (Python's YAML) keeps the last value: so does autobuild, and
            // says so where it matters, when the values differ.
            let how = if repeat.agree {
                "with the same value each time"
            } else {
                "with different values; the last one is kept, as GuardKit's loader does"
            };
            warnings.push(
                located
                    .at(
                        at,
                        format!(
                            "`{}` is given more than once (first on line {first_line}), {how}",
                            repeat.key
                        ),
                    )
                    .with_help("autobuild reads this key; keep the one value that is meant"),
            );
        } else {
            warnings.push(located.at(
                at,
                format!(
                    "`{}` is given more than once (first on line {first_line}); the last value is kept",
                    repeat.key
                ),
            ));
        }
    }
    let yaml = yaml.as_str();
    // yaml_serde's own alias guard lets a wide expansion through (see `yaml_limits`), and its
    // errors for the nested one carry no position: the shared bound is checked first.
    if let Err(exceeded) = yaml_limits::check(yaml) {
        let offset = split.yaml_offset + byte_offset(yaml, exceeded.location);
        problems.push(
            located
                .at(
                    offset,
                    format!("malformed YAML front matter: {}", exceeded.message),
                )
                .with_help(exceeded.help),
        );
        return FrontMatter::default();
    }
    let value: Value = match yaml_serde::from_str(yaml) {
        Ok(value) => value,
        Err(e) => {
            let offset = e
                .location()
                .map_or(split.open.offset, |l| split.yaml_offset + l.index());
            problems.push(located.at(
                offset,
                format!("malformed YAML front matter: {}", yaml_message(&e)),
            ));
            return FrontMatter::default();
        }
    };
    let mapping = match value {
        Value::Mapping(mapping) => mapping,
        Value::Null => yaml_serde::Mapping::new(),
        other => {
            problems.push(located.at(
                split.yaml_offset,
                format!(
                    "the front matter must be a mapping of `key: value` lines, not {}",
                    type_name(&other)
                ),
            ));
            return FrontMatter::default();
        }
    };

    let mut fields = FrontMatter::default();
    let mut known: BTreeMap<&str, Value> = BTreeMap::new();
    for (key, value) in mapping {
        let name = match &key {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            other => {
                problems.push(located.at(
                    split.yaml_offset,
                    format!(
                        "front-matter keys must be plain names, not {}",
                        type_name(other)
                    ),
                ));
                continue;
            }
        };
        match KNOWN_KEYS.iter().find(|k| **k == name) {
            Some(k) if !value.is_null() => {
                known.insert(*k, value);
            }
            Some(_) => {}
            None => {
                if let Some(meant) = misspelling_of(&name) {
                    warnings.push(located.at(
                        located.key_line(&name),
                        format!(
                            "`{name}` is not a key autobuild reads (did you mean `{meant}`?); it is ignored"
                        ),
                    ));
                }
                fields.extra.insert(name, value);
            }
        }
    }

    match known.remove("id") {
        None => match fallback_id {
            Some(id) => fields.id = Some(id),
            None => problems.push(
                located
                    .at(split.open.offset, "the front matter has no `id`")
                    .with_help("add a line such as `id: TASK-001` (or name the file after the id, `TASK-001-short-name.md`); the id names the task's branch and run directory"),
            ),
        },
        Some(Value::String(id)) => match validate_id(&id) {
            Ok(()) => fields.id = Some(id),
            Err(why) => problems.push(located.key("id", format!("invalid task id: {why}"))),
        },
        Some(Value::Number(n)) => problems.push(
            located
                .key("id", format!("`id` must be a string, found the number {n}"))
                .with_help(format!("quote it: `id: \"{n}\"`")),
        ),
        Some(other) => problems.push(located.key("id", wrong_type("id", "a string", &other))),
    }
    fields.title = match known.remove("title") {
        None => None,
        Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
        Some(Value::Number(n)) => Some(n.to_string()),
        Some(other) => {
            problems.push(located.key("title", wrong_type("title", "a non-empty string", &other)));
            None
        }
    };
    fields.task_type = located.text_field(&mut known, "task_type", problems);
    fields.workflow = match known.remove("workflow") {
        // GuardKit keeps run metrics under `workflow:`; only a name selects a workflow.
        Some(mapping @ Value::Mapping(_)) => {
            warnings.push(located.key(
                "workflow",
                "`workflow` is a mapping (another tool's data), not a workflow name; it is ignored and the default workflow runs",
            ));
            fields.extra.insert("workflow".to_string(), mapping);
            None
        }
        Some(value) => {
            known.insert("workflow", value);
            located.text_field(&mut known, "workflow", problems)
        }
        None => None,
    };
    fields.complexity = match known.remove("complexity") {
        None => None,
        Some(value) => match fields::complexity(&value) {
            Ok(complexity) => complexity,
            Err(message) => {
                problems.push(
                    located
                        .key("complexity", message)
                        .with_help("write a whole number from 1 to 10, such as `complexity: 3`; 0 or no value means unset"),
                );
                None
            }
        },
    };
    fields.criteria = match known.remove("acceptance_criteria") {
        None => None,
        Some(value) => match fields::criteria_list(value) {
            Ok(items) if items.is_empty() => None,
            Ok(items) => Some((items, located.key_line("acceptance_criteria"))),
            Err(message) => {
                problems.push(located.key("acceptance_criteria", message));
                None
            }
        },
    };
    fields.dependencies = match known.remove("dependencies") {
        None => Vec::new(),
        Some(Value::Sequence(items)) => {
            let mut ids = Vec::new();
            for item in items {
                match item {
                    Value::String(dep) => match validate_id(&dep) {
                        Ok(()) => ids.push(dep),
                        Err(why) => problems.push(
                            located.key("dependencies", format!("invalid dependency: {why}")),
                        ),
                    },
                    other => problems.push(located.key(
                        "dependencies",
                        format!(
                            "`dependencies` must list task ids (strings), found {}",
                            type_name(&other)
                        ),
                    )),
                }
            }
            ids
        }
        Some(other) => {
            problems.push(
                located
                    .key(
                        "dependencies",
                        wrong_type("dependencies", "a list of task ids", &other),
                    )
                    .with_help("write it as `dependencies: [TASK-001, TASK-002]`"),
            );
            Vec::new()
        }
    };
    if let Some(value) = known.remove("context_files") {
        let (paths, wrong) = fields::context_files(value);
        for path in paths {
            fields
                .context_files
                .push(crate::project::context_files::ContextFile {
                    missing: crate::project::context_files::missing(
                        located.key("context_files", ""),
                        &path,
                    ),
                    path,
                });
        }
        for problem in wrong {
            let diagnostic = located.key("context_files", problem.message);
            problems.push(match problem.help {
                Some(help) => diagnostic.with_help(help),
                None => diagnostic,
            });
        }
    }
    type Reader = fn(Value) -> (Vec<String>, Vec<fields::FieldProblem>);
    let globs: [(&str, Reader); 2] = [("protect", fields::protect), ("hidden", fields::hidden)];
    for (key, read) in globs {
        let Some(value) = known.remove(key) else {
            continue;
        };
        let (patterns, wrong) = read(value);
        match key {
            "protect" => fields.protect = patterns,
            _ => fields.hidden = patterns,
        }
        for problem in wrong {
            let diagnostic = located.key(key, problem.message);
            problems.push(match problem.help {
                Some(help) => diagnostic.with_help(help),
                None => diagnostic,
            });
        }
    }
    fields
}

/// Builds diagnostics located in the task file.
struct Locator<'a> {
    path: &'a Path,
    source: &'a str,
    split: &'a Split<'a>,
}

impl Locator<'_> {
    fn at(&self, offset: usize, message: impl Into<String>) -> Diagnostic {
        Diagnostic::at_offset(self.path, self.source, offset, message)
    }

    /// A problem with the value of top-level key `key`.
    fn key(&self, key: &str, message: impl Into<String>) -> Diagnostic {
        self.at(self.key_offset(key), message)
    }

    /// The start of the line of top-level key `key` (the opening `---` when not found).
    fn key_line(&self, key: &str) -> usize {
        let offset = self.key_offset(key);
        self.source[..offset].rfind('\n').map_or(0, |i| i + 1)
    }

    /// Where the value of top-level key `key` starts (the key itself when the value is on the
    /// following lines); the opening `---` when the key cannot be found textually.
    fn key_offset(&self, key: &str) -> usize {
        let lines = lines_from(self.source, self.split.yaml_offset);
        let yaml_end = self.split.yaml_offset + self.split.yaml.len();
        for line in lines.iter().take_while(|l| l.offset < yaml_end) {
            let text = line.text;
            let after_key = [key.to_string(), format!("\"{key}\""), format!("'{key}'")]
                .into_iter()
                .find_map(|k| text.strip_prefix(k.as_str()).map(str::to_string));
            let Some(rest) = after_key else { continue };
            let Some(value) = rest.trim_start().strip_prefix(':') else {
                continue;
            };
            let value_start = text.len() - value.trim_start().len();
            return if value.trim().is_empty() {
                line.offset
            } else {
                line.offset + value_start
            };
        }
        self.split.open.offset
    }

    /// An optional, non-empty string field.
    fn text_field(
        &self,
        known: &mut BTreeMap<&str, Value>,
        key: &str,
        problems: &mut Vec<Diagnostic>,
    ) -> Option<String> {
        match known.remove(key) {
            None => None,
            Some(Value::String(s)) if !s.trim().is_empty() => Some(s.trim().to_string()),
            Some(other) => {
                problems.push(self.key(key, wrong_type(key, "a non-empty string", &other)));
                None
            }
        }
    }
}

fn wrong_type(key: &str, expected: &str, found: &Value) -> String {
    format!("`{key}` must be {expected}, found {}", type_name(found))
}

/// The parser's message without its " at line N column M" parts (the diagnostic locates it).
/// The byte offset in `text` of a 1-based line and character column.
fn byte_offset(text: &str, location: Location) -> usize {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(location.line.saturating_sub(1))
        .map(str::len)
        .sum();
    let line = text[line_start..].lines().next().unwrap_or_default();
    let column: usize = line
        .chars()
        .take(location.column.saturating_sub(1))
        .map(char::len_utf8)
        .sum();
    line_start + column
}

fn yaml_message(error: &yaml_serde::Error) -> String {
    YAML_POSITION
        .replace_all(&error.to_string(), "")
        .into_owned()
}
