//! The YAML front matter of a task file: splitting it from the body and reading its fields with
//! located, per-field diagnostics.
//!
//! The front matter is parsed by the reader every user file shares
//! ([`base::user_file::parse_yaml`], within the alias and nesting bounds of
//! [`base::user_file::yaml_limits`]), laid out on the task file's own lines so every position
//! and snippet is the file's. Each key autobuild reads ([`KEYS`]) is then decoded into its
//! serde type ([`super::fields`]) by [`base::user_file::typed::decode`], one key at a time (and
//! a list's items one at a time), so every wrong key and item is reported, each at its line. Keys other tools put
//! in shared task files are kept in [`FrontMatter::extra`] instead of rejected; only a near miss
//! of a key autobuild reads (`task_typ`) is worth a warning (docs/config.md, "Task";
//! docs/guardkit.md).
//!
//! What GuardKit's loader (Python's YAML) accepts and the spec does not is read as it reads it,
//! each with a located warning ([`super::python_yaml`]): a key written twice (GuardKit rewrites
//! `status:` that way) keeps its last value, and the warning says when the values of a key
//! autobuild reads differ; a flow list closed by a `]` at column 0 is closed there.
//! Values GuardKit writes in other shapes (`complexity`, `acceptance_criteria`) are accepted by
//! their types in [`super::fields`].

use std::collections::BTreeMap;
use std::path::Path;

use serde::de::DeserializeOwned;

use super::fields::{
    Complexity, ContextPath, CriterionItem, Dependency, Glob, Name, OneOrMany, TaskId, Title,
};
use super::markdown::{lines_from, Line};
use super::python_yaml;
use base::diagnostic::{Diagnostic, Location};
use base::user_file::source::{Layer, Pos, Source};
use base::user_file::tree::{Entry, Node, Value};
use base::user_file::typed;

/// The keys autobuild reads, each with the help shown with a problem in its value; every other
/// key lands in [`FrontMatter::extra`].
const KEYS: [(&str, Option<&str>); 13] = [
    ("id", None),
    ("title", None),
    ("task_type", None),
    (
        "complexity",
        Some(
            "write a whole number from 1 to 10, such as `complexity: 3`; 0 or no value means unset",
        ),
    ),
    (
        "dependencies",
        Some("write it as `dependencies: [TASK-001, TASK-002]`"),
    ),
    ("workflow", None),
    (
        "protect",
        Some("write it as `protect: [\"tests/acceptance/**\"]`"),
    ),
    (
        "hidden",
        Some("write it as `hidden: [\"tests/acceptance/**\"]`"),
    ),
    ("acceptance_criteria", None),
    (
        "context_files",
        Some("write it as `context_files: [\"docs/architecture.md\"]`"),
    ),
    (
        "files_to_modify",
        Some("write it as `files_to_modify: [\"src/app.py\"]` (paths or globs from the repository root)"),
    ),
    (
        "files_to_create",
        Some("write it as `files_to_create: [\"src/new_module.py\"]` (paths or globs from the repository root)"),
    ),
    (
        "tests_may_change",
        Some("write it as `tests_may_change: [\"tests/test_slug.py::test_old_rule\"]`"),
    ),
];

/// The key autobuild reads that `name` is a likely misspelling of. Task files shared with
/// GuardKit carry many keys of its own, so only a key within a small edit distance of a known
/// one (`task_typ`, `dependancies`) is suspected, never one merely similar (`task_id`).
fn misspelling_of(name: &str) -> Option<&'static str> {
    KEYS.into_iter().map(|(known, _)| known).find(|known| {
        let distance = strsim::damerau_levenshtein(name, known);
        distance <= 2 && distance * 3 <= known.len()
    })
}

/// The fix for a front matter that is not YAML even as GuardKit's loader reads it.
const YAML_HELP: &str = "quote a value that holds `: ` or starts with `[`, `{`, `*`, `&` or `!` (`title: \"Fix: the crash\"`), and indent a value's lines under its key";

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
    pub tests_may_change: Vec<String>,
    /// `files_to_modify:` and `files_to_create:` (GuardKit's keys), in that order.
    pub writes: Vec<String>,
    /// The `acceptance_criteria:` list, when it has items, and the byte offset of its key.
    pub criteria: Option<(Vec<String>, usize)>,
    pub extra: BTreeMap<String, yaml_serde::Value>,
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
    let (yaml, repeats) = python_yaml::dedupe(split.yaml);
    warn_repeats(path, source, split, &repeats, warnings);

    let file = Source::new(path, source, Layer::Repo);
    let tree = match python_yaml::parse(&file, split.yaml_offset, &yaml, warnings) {
        Ok(tree) => tree,
        Err(errors) => {
            problems.extend(errors.into_iter().map(|e| Diagnostic {
                message: format!("malformed YAML front matter: {}", e.message),
                help: e.help.clone().or_else(|| Some(YAML_HELP.to_string())),
                ..e
            }));
            return FrontMatter::default();
        }
    };
    let entries: Vec<Entry> = match tree.value {
        Value::Table(table) => table.into_iter().collect(),
        Value::Null => Vec::new(),
        _ => {
            problems.push(tree.pos.error(format!(
                "the front matter must be a mapping of `key: value` lines, not {}",
                tree.kind()
            )));
            return FrontMatter::default();
        }
    };

    let mut fields = FrontMatter::default();
    let mut id_given = false;
    for entry in &entries {
        let Some(&(key, help)) = KEYS.iter().find(|(known, _)| *known == entry.key) else {
            if let Some(meant) = misspelling_of(&entry.key) {
                warnings.push(entry.key_pos.error(format!(
                    "`{}` is not a key autobuild reads (did you mean `{meant}`?); it is ignored",
                    entry.key
                )));
            }
            fields
                .extra
                .insert(entry.key.clone(), to_yaml(&entry.value));
            continue;
        };
        if matches!(entry.value.value, Value::Null) {
            continue;
        }
        let mut decoded = Decoder {
            entry,
            help,
            problems: &mut *problems,
        };
        match key {
            "id" => {
                id_given = true;
                fields.id = decoded.value::<TaskId>().map(|id| id.0);
            }
            "title" => fields.title = decoded.value::<Title>().map(|t| t.0),
            "task_type" => fields.task_type = decoded.value::<Name>().map(|n| n.0),
            // GuardKit keeps run metrics under `workflow:`; only a name selects a workflow.
            "workflow" if matches!(entry.value.value, Value::Table(_)) => {
                warnings.push(value_pos(entry).error(
                    "`workflow` is a mapping (another tool's data), not a workflow name; it is ignored and the default workflow runs",
                ));
                fields
                    .extra
                    .insert(entry.key.clone(), to_yaml(&entry.value));
            }
            "workflow" => fields.workflow = decoded.value::<Name>().map(|n| n.0),
            "complexity" => {
                fields.complexity = decoded.value::<Complexity>().and_then(|c| c.0);
            }
            "dependencies" => {
                let ids = match decoded.items::<Dependency>() {
                    Some(ids) => ids,
                    None => decoded.value::<Vec<Dependency>>().unwrap_or_default(),
                };
                fields.dependencies = ids.into_iter().map(|d| d.0).collect();
            }
            "protect" | "hidden" | "files_to_modify" | "files_to_create" => {
                let globs = decoded.items::<Glob>().unwrap_or_else(|| {
                    decoded
                        .value::<OneOrMany<Glob>>()
                        .map_or_else(Vec::new, |g| g.0)
                });
                let patterns = globs.into_iter().map(|g| g.0);
                match key {
                    "protect" => fields.protect = patterns.collect(),
                    "hidden" => fields.hidden = patterns.collect(),
                    _ => fields.writes.extend(patterns),
                }
            }
            "tests_may_change" => {
                let names = decoded.items::<Title>().unwrap_or_else(|| {
                    decoded
                        .value::<OneOrMany<Title>>()
                        .map_or_else(Vec::new, |t| t.0)
                });
                fields.tests_may_change = names.into_iter().map(|t| t.0).collect();
            }
            "context_files" => {
                // GuardKit's tasks name files of the repositories beside theirs
                // (`../../forge/x.sh`); its loader does not read them, and no agent could be
                // shown them: such paths are passed over, each with a warning.
                let outside = |node: &Node| {
                    let path = node.as_str()?;
                    crate::project::context_files::outside_repository(path).then(|| {
                        node.pos.error(format!(
                            "context file `{path}` is outside the repository; it is ignored, \
                             as GuardKit's loader ignores it, and no agent is shown it"
                        ))
                        .with_help("copy the file into the repository and give its path from the repository root, or remove the entry")
                    })
                };
                let paths = match entry.value.as_array() {
                    None if entry.value.as_str().is_none() => decoded
                        .value::<OneOrMany<ContextPath>>()
                        .map_or_else(Vec::new, |p| p.0),
                    items => {
                        let nodes =
                            items.map_or_else(|| vec![&entry.value], |i| i.iter().collect());
                        let paths = nodes.into_iter().filter_map(|node| match outside(node) {
                            Some(warning) => {
                                warnings.push(warning);
                                None
                            }
                            None => decoded.decode::<ContextPath>(node),
                        });
                        paths.collect()
                    }
                };
                let at = value_pos(entry).error("");
                fields.context_files = paths
                    .into_iter()
                    .map(|p| crate::project::context_files::ContextFile {
                        missing: crate::project::context_files::missing(at.clone(), &p.0),
                        path: p.0,
                    })
                    .collect();
            }
            _ => {
                let items = match decoded.items::<CriterionItem>() {
                    Some(items) => items,
                    None => decoded.value::<Vec<CriterionItem>>().unwrap_or_default(),
                };
                if !items.is_empty() {
                    let texts = items.into_iter().map(|c| c.0).collect();
                    fields.criteria = Some((texts, line_offset(source, entry.key_pos.location)));
                }
            }
        }
    }
    if !id_given {
        match fallback_id {
            Some(id) => fields.id = Some(id),
            None => problems.push(
                Diagnostic::at_offset(path, source, split.open.offset, "the front matter has no `id`")
                    .with_help("add a line such as `id: TASK-001` (or name the file after the id, `TASK-001-short-name.md`); the id names the task's branch and run directory"),
            ),
        }
    }
    fields
}

/// The located warnings for keys given more than once.
fn warn_repeats(
    path: &Path,
    source: &str,
    split: &Split<'_>,
    repeats: &[python_yaml::Repeat],
    warnings: &mut Vec<Diagnostic>,
) {
    for repeat in repeats {
        let (Some(&first), Some(&last)) = (repeat.offsets.first(), repeat.offsets.last()) else {
            continue;
        };
        let first_line = Location::from_offset(source, split.yaml_offset + first).line;
        let at = split.yaml_offset + last;
        let twice = format!(
            "`{}` is given more than once (first on line {first_line})",
            repeat.key
        );
        let warning = if KEYS.iter().any(|(known, _)| *known == repeat.key) {
            // GuardKit's loader (Python's YAML) keeps the last value: so does autobuild, and
            // says so where it matters, when the values differ.
            let how = if repeat.agree {
                "with the same value each time"
            } else {
                "with different values; the last one is kept, as GuardKit's loader does"
            };
            Diagnostic::at_offset(path, source, at, format!("{twice}, {how}"))
                .with_help("autobuild reads this key; keep the one value that is meant")
        } else {
            Diagnostic::at_offset(path, source, at, format!("{twice}; the last value is kept"))
        };
        warnings.push(warning);
    }
}

/// Decodes the value of one key autobuild reads, reporting its problems.
struct Decoder<'a> {
    entry: &'a Entry,
    help: Option<&'static str>,
    problems: &'a mut Vec<Diagnostic>,
}

impl Decoder<'_> {
    /// The value as a `T`.
    fn value<T: DeserializeOwned>(&mut self) -> Option<T> {
        self.decode(&self.entry.value)
    }

    /// The items of a list value, each decoded on its own so that every bad item is
    /// reported; the good ones are kept. `None` when the value is not a list.
    fn items<T: DeserializeOwned>(&mut self) -> Option<Vec<T>> {
        let items = self.entry.value.as_array()?;
        Some(items.iter().filter_map(|item| self.decode(item)).collect())
    }

    fn decode<T: DeserializeOwned>(&mut self, node: &Node) -> Option<T> {
        let found = match typed::decode::<T>(node) {
            Ok(value) => return Some(value),
            Err(found) => found,
        };
        let value_at = self.entry.value.pos.location;
        for problem in found {
            // A problem with a whole value written on the lines below its key is shown at
            // the key.
            let problem = if problem.location == Some(value_at) {
                Diagnostic {
                    message: problem.message,
                    help: problem.help,
                    ..value_pos(self.entry).error("")
                }
            } else {
                problem
            };
            self.problems.push(match (&problem.help, self.help) {
                (None, Some(help)) => problem.with_help(help),
                _ => problem,
            });
        }
        None
    }
}

/// Where a problem with the value of `entry` is shown: the value when it starts on the key's
/// line, else the key.
fn value_pos(entry: &Entry) -> &Pos {
    if entry.value.pos.location.line == entry.key_pos.location.line {
        &entry.value.pos
    } else {
        &entry.key_pos
    }
}

/// The byte offset in `source` of the start of `location`'s line.
fn line_offset(source: &str, location: Location) -> usize {
    source
        .split_inclusive('\n')
        .take(location.line.saturating_sub(1))
        .map(str::len)
        .sum()
}

/// A value kept for other tools, in the YAML model [`super::Task::extra`] holds.
fn to_yaml(node: &Node) -> yaml_serde::Value {
    use yaml_serde::Value as Yaml;
    match &node.value {
        Value::Null => Yaml::Null,
        Value::Bool(b) => Yaml::Bool(*b),
        Value::Integer(i) => Yaml::Number((*i).into()),
        Value::Float(f) => Yaml::Number((*f).into()),
        Value::String(s) => Yaml::String(s.clone()),
        Value::Array(items) => Yaml::Sequence(items.iter().map(to_yaml).collect()),
        Value::Table(table) => Yaml::Mapping(
            table
                .iter()
                .map(|e| (Yaml::String(e.key.clone()), to_yaml(&e.value)))
                .collect(),
        ),
    }
}
