//! Task files (docs/config.md, "Task"): Markdown with YAML front matter and an `## Acceptance Criteria`
//! list, shared with GuardKit and other tools.
//!
//! One parser serves every entry point (`autobuild task`, features, status), and it reports all
//! problems of a file at once, each located at its line. Unknown front-matter keys are kept in
//! [`Task::extra`] because other tools store their own state there. A task without a title (no
//! `title` key and no `# ` heading) is titled by its id rather than rejected.
//!
//! GuardKit's files are read as GuardKit reads them: a front matter without `id` (or a file
//! without front matter) takes the id its file name carries; a front-matter
//! `acceptance_criteria:` list comes before the body's section (which then stays in the
//! requirements, word for word); keys written twice are accepted when autobuild does not read
//! them. What is accepted that way but worth knowing is in [`Task::warnings`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base::diagnostic::{Diagnostic, Diagnostics};
use base::error::Error;

mod body;
pub mod completed;
mod criteria;
mod fields;
mod front_matter;
mod id;
mod key_problem;
mod lookup;
mod markdown;
mod precedence;
pub use precedence::finished_state;
mod python_yaml;
mod section;

pub use id::{id_from_file_name, validate_id, MAX_ID_LEN};
pub use lookup::{
    board_state, find_in_scan, list_tasks, locate, search_dirs, InvalidTask, Lookup, TaskScan,
    GUARDKIT_TASK_DIRS,
};

/// The task type used when the front matter names none.
pub const DEFAULT_TASK_TYPE: &str = "feature";

/// A parsed task file.
#[derive(Debug, Clone, Default, PartialEq)]
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
    /// Files every role is shown while this task runs (front matter `context_files:`).
    pub context_files: Vec<crate::project::context_files::ContextFile>,
    /// Globs no agent may see while this task runs (front matter `hidden:`).
    pub hidden: Vec<String>,
    /// Tests the requirements allow to change (front matter `tests_may_change:`): ids, id
    /// prefixes or globs ([`crate::steps::oracle::may_change`]). The base oracle shows them
    /// changed to every reviewer instead of failing the gate.
    pub tests_may_change: Vec<String>,
    /// The files the task means to change or create (front matter `files_to_modify:` and
    /// `files_to_create:`, GuardKit's keys): paths or globs. A feature runs two tasks whose
    /// write sets meet in different waves (docs/features.md).
    pub writes: Vec<String>,
    /// The body without the title line and the criteria section.
    pub requirements: String,
    pub criteria: Vec<Criterion>,
    /// The criteria section's text after its last criterion (prose, code, tables), for the
    /// agents; empty when there is none.
    pub criteria_epilogue: String,
    /// The file the task was read from.
    pub path: PathBuf,
    /// Front-matter keys autobuild does not use, kept for the tools that do.
    pub extra: BTreeMap<String, yaml_serde::Value>,
    /// What was accepted but is worth knowing (a repeated key, an ignored `workflow` mapping,
    /// another copy of the task in a different state folder), each located.
    pub warnings: Vec<Diagnostic>,
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
    /// The section's text between the previous criterion and this one (a group heading, an
    /// explanation, a table), for the agents; empty when there is none.
    pub preamble: String,
}

impl Task {
    /// Parses the text of the task file at `path`; every problem found is returned.
    pub fn parse(path: &Path, source: &str) -> Result<Task, Diagnostics> {
        let name_id = id_from_file_name(path);
        let mut problems = Vec::new();
        let mut warnings = Vec::new();
        let (fields, body_offset) = match front_matter::split(path, source) {
            Ok(split) => {
                let reading = front_matter::Reading {
                    fallback_id: name_id,
                    problems: &mut problems,
                    warnings: &mut warnings,
                };
                let fields = front_matter::read(path, source, &split, reading);
                (fields, split.body_offset)
            }
            // GuardKit reads a file without front matter as a task whose id is its name.
            Err(_) if name_id.is_some() && !front_matter::opens(source) => {
                let fields = front_matter::FrontMatter {
                    id: name_id,
                    ..Default::default()
                };
                (fields, usize::from(source.starts_with('\u{feff}')) * 3)
            }
            Err(problem) => return Err(Diagnostics(vec![problem])),
        };
        let body = body::read(source, body_offset);

        let body_criteria = fields.criteria.is_none();
        if let (Some(line), true) = (body.duplicate_criteria, body_criteria) {
            warnings.push(
                Diagnostic::at_offset(
                    path,
                    source,
                    line.offset,
                    "a second acceptance criteria section; its criteria are read after the \
                     first one's, as GuardKit reads them",
                )
                .with_help("list every criterion in the first section"),
            );
        }
        if let (Some(tolerated), true) = (body.tolerated, body_criteria) {
            warnings.push(tolerated_warning(path, source, tolerated));
        }
        let (criteria, criteria_epilogue, requirements) = match (&fields.criteria, &body.criteria) {
            (Some((items, key)), _) => {
                let at = markdown::lines_from(source, *key)
                    .first()
                    .copied()
                    .unwrap_or(markdown::Line {
                        offset: *key,
                        text: "",
                    });
                let criteria = criteria::from_list(path, source, items, at, &mut problems);
                (criteria, String::new(), body.whole.clone())
            }
            (None, Some(section)) => {
                let parsed = criteria::parse(path, source, section, &mut problems);
                (parsed.criteria, parsed.epilogue, body.requirements.clone())
            }
            (None, None) => {
                problems.push(missing_criteria(path, source, &body, body_offset));
                (Vec::new(), String::new(), String::new())
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
                context_files: fields.context_files,
                hidden: fields.hidden,
                tests_may_change: fields.tests_may_change,
                writes: fields.writes,
                requirements,
                criteria,
                criteria_epilogue,
                path: path.to_path_buf(),
                extra: fields.extra,
                warnings,
            }),
            _ => {
                problems.sort_by_key(|d| d.location);
                Err(Diagnostics(problems))
            }
        }
    }

    /// Shows the paths of the task's warnings relative to `root`, like every other message.
    pub fn relative_to(mut self, root: &Path) -> Task {
        for warning in &mut self.warnings {
            if let Ok(shown) = warning.path.strip_prefix(root) {
                warning.path = shown.to_path_buf();
            }
        }
        for file in &mut self.context_files {
            if let Ok(shown) = file.missing.path.strip_prefix(root) {
                file.missing.path = shown.to_path_buf();
            }
        }
        self
    }

    /// Reads and parses the task file at `path` (at most [`base::user_file::MAX_BYTES`] of
    /// UTF-8 text).
    pub fn load(path: &Path) -> Result<Task, Error> {
        let source = base::user_file::read(path, path)
            .map_err(|e| e.into_error("cannot read task file", path))?;
        Task::parse(path, &source).map_err(Error::Invalid)
    }

    /// The criteria the runner decides by running a command.
    pub fn executable_criteria(&self) -> impl Iterator<Item = &Criterion> {
        self.criteria.iter().filter(|c| c.verify.is_some())
    }
}

/// The located warning for a criteria section found only the way GuardKit's loader finds it.
fn tolerated_warning(path: &Path, source: &str, tolerated: body::Tolerated<'_>) -> Diagnostic {
    match tolerated {
        body::Tolerated::Level(heading) => Diagnostic::at_offset(
            path,
            source,
            heading.offset,
            "the acceptance criteria heading is not a level-2 heading; read as the criteria \
             section, as GuardKit reads it",
        )
        .with_help("write it as `## Acceptance Criteria`"),
        body::Tolerated::Fenced {
            heading,
            fence,
            closed,
        } => {
            let fence_line = base::diagnostic::Location::from_offset(source, fence.offset).line;
            let never = if closed {
                ""
            } else {
                ", which is never closed"
            };
            Diagnostic::at_offset(
                path,
                source,
                heading.offset,
                format!(
                    "this `## Acceptance Criteria` heading is inside the code fence opened on \
                     line {fence_line}{never}; read as the criteria section, as GuardKit reads \
                     it (it does not see code fences)"
                ),
            )
            .with_help(format!(
                "end the fenced block with a closing {} line before the heading",
                fence_marker(fence.text)
            ))
        }
    }
}

fn fence_marker(line: &str) -> String {
    line.trim()
        .chars()
        .take_while(|c| *c == '`' || *c == '~')
        .collect()
}

pub(crate) const CRITERIA_HELP: &str = "list one criterion per line; a `verify:` span makes the runner check it:\n    - [ ] AC-001: `--help` prints the usage `verify: ./app --help`\n    - [ ] AC-002: error messages name the offending file";

fn missing_criteria(
    path: &Path,
    source: &str,
    body: &body::Body<'_>,
    body_offset: usize,
) -> Diagnostic {
    if let (None, Some((heading, fence))) = (body.misplaced_criteria, body.fenced_criteria) {
        let fence_line = base::diagnostic::Location::from_offset(source, fence.offset).line;
        return Diagnostic::at_offset(
            path,
            source,
            heading.offset,
            format!(
                "this `## Acceptance Criteria` heading is inside the code fence opened on line {fence_line}, which is never closed"
            ),
        )
        .with_help(format!(
            "end the fenced block with a closing {} line before the heading",
            fence_marker(fence.text)
        ));
    }
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
mod guardkit_corpus_tests;
#[cfg(test)]
mod guardkit_tests;
#[cfg(test)]
mod tests;
