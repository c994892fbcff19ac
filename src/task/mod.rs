//! Task files (DESIGN.md §3.1): Markdown with YAML front matter and an `## Acceptance Criteria`
//! list, shared with GuardKit and other tools.
//!
//! One parser serves every entry point (`autobuild task`, features, status), and it reports all
//! problems of a file at once, each located at its line. Unknown front-matter keys are kept in
//! [`Task::extra`] because other tools store their own state there. A task without a title (no
//! `title` key and no `# ` heading) is titled by its id rather than rejected.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::error::Error;

mod body;
mod criteria;
mod front_matter;
mod id;
mod lookup;
mod markdown;

pub use id::{validate_id, MAX_ID_LEN};
pub use lookup::{list_tasks, locate, search_dirs, InvalidTask, TaskScan, GUARDKIT_TASK_DIRS};

/// The task type used when the front matter names none.
pub const DEFAULT_TASK_TYPE: &str = "feature";

/// A parsed task file.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    pub id: String,
    pub title: String,
    /// Selects the quality-gate profile.
    pub task_type: String,
    /// 1–10 when given.
    pub complexity: Option<u8>,
    /// Ids of tasks that must be done first (used by features).
    pub dependencies: Vec<String>,
    /// A workflow name overriding the default.
    pub workflow: Option<String>,
    /// Globs no agent may change while this task runs (front matter `protect:`).
    pub protect: Vec<String>,
    /// The body without the title line and the criteria section.
    pub requirements: String,
    pub criteria: Vec<Criterion>,
    /// The file the task was read from.
    pub path: PathBuf,
    /// Front-matter keys autobuild does not use, kept for the tools that do.
    pub extra: BTreeMap<String, yaml_serde::Value>,
}

/// One acceptance criterion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Criterion {
    /// Explicit (`AC-001:` in the text) or positional.
    pub id: String,
    /// The criterion without its list marker, id prefix and `verify:` span.
    pub text: String,
    /// The command that decides the criterion (exit 0 = met); `None` = judged by the coach.
    pub verify: Option<String>,
    /// Whether the file marks it `- [x]` (informational; the runner decides what is met).
    pub checked: bool,
}

impl Task {
    /// Parses the text of the task file at `path`; every problem found is returned.
    pub fn parse(path: &Path, source: &str) -> Result<Task, Diagnostics> {
        let split = front_matter::split(path, source).map_err(|d| Diagnostics(vec![d]))?;
        let mut problems = Vec::new();
        let fields = front_matter::read(path, source, &split, &mut problems);
        let body = body::read(source, split.body_offset);

        if let Some(line) = body.duplicate_criteria {
            problems.push(Diagnostic::at_offset(
                path,
                source,
                line.offset,
                "a second `## Acceptance Criteria` section; list every criterion in the first one",
            ));
        }
        let criteria = match &body.criteria {
            Some(section) => criteria::parse(path, source, section, &mut problems),
            None => {
                problems.push(missing_criteria(path, source, &body, split.body_offset));
                Vec::new()
            }
        };

        match fields.id {
            Some(id) if problems.is_empty() => Ok(Task {
                title: fields.title.or(body.title).unwrap_or_else(|| id.clone()),
                id,
                task_type: fields
                    .task_type
                    .unwrap_or_else(|| DEFAULT_TASK_TYPE.to_string()),
                complexity: fields.complexity,
                dependencies: fields.dependencies,
                workflow: fields.workflow,
                protect: fields.protect,
                requirements: body.requirements,
                criteria,
                path: path.to_path_buf(),
                extra: fields.extra,
            }),
            _ => {
                problems.sort_by_key(|d| d.location);
                Err(Diagnostics(problems))
            }
        }
    }

    /// Reads and parses the task file at `path` (at most [`crate::user_file::MAX_BYTES`] of
    /// UTF-8 text).
    pub fn load(path: &Path) -> Result<Task, Error> {
        let source = crate::user_file::read(path, path)
            .map_err(|e| e.into_error("cannot read task file", path))?;
        Task::parse(path, &source).map_err(Error::Invalid)
    }

    /// The criteria the runner decides by running a command.
    pub fn executable_criteria(&self) -> impl Iterator<Item = &Criterion> {
        self.criteria.iter().filter(|c| c.verify.is_some())
    }
}

pub(crate) const CRITERIA_HELP: &str = "list one criterion per line; a `verify:` span makes the runner check it:\n    - [ ] AC-001: `--help` prints the usage `verify: ./app --help`\n    - [ ] AC-002: error messages name the offending file";

fn missing_criteria(
    path: &Path,
    source: &str,
    body: &body::Body<'_>,
    body_offset: usize,
) -> Diagnostic {
    match body.misplaced_criteria {
        Some(line) => Diagnostic::at_offset(
            path,
            source,
            line.offset,
            "the acceptance criteria heading must be a level-2 heading",
        )
        .with_help("write it as `## Acceptance Criteria`"),
        None => Diagnostic::at_offset(
            path,
            source,
            body_offset.min(source.len()),
            "the task has no `## Acceptance Criteria` section",
        )
        .with_help(format!(
            "add a `## Acceptance Criteria` section; {CRITERIA_HELP}"
        )),
    }
}

#[cfg(test)]
mod tests;
