//! Finding task files: the one list of places tasks live, and lookup by id or path.
//!
//! Tasks live under `.autobuild/tasks/**` and, for GuardKit projects, under
//! `tasks/{backlog,in_progress,design_approved,in_review,blocked}/**` (DESIGN.md §3). Lookup by
//! id matches the front-matter `id` exactly. A file that fails to parse does not hide the other
//! tasks, but when it is the file that declares the requested id its problems are what the user
//! sees — even when its front matter is so broken that only an `id:` line can still be read.
//! When no file declares the id, the broken task files whose id cannot be read are listed with
//! their first problem: one of them is the likely culprit, and "no task with id" alone would
//! send the user looking for a typo. Markdown files that do not even try to be tasks (a README)
//! are not listed. Two files declaring one id is an error naming both: silently picking one
//! would run the wrong task.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::front_matter;
use super::markdown::lines_from;
use super::Task;
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::error::Error;
use crate::project::Layout;
use crate::user_file::{self, ReadError};

/// GuardKit's task state directories under `tasks/`.
pub const GUARDKIT_TASK_DIRS: [&str; 5] = [
    "backlog",
    "in_progress",
    "design_approved",
    "in_review",
    "blocked",
];

/// How many close ids a "not found" error suggests.
const MAX_SUGGESTIONS: usize = 3;

/// The directories searched for task files, in search order.
pub fn search_dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs = vec![Layout::new(root).tasks()];
    dirs.extend(
        GUARDKIT_TASK_DIRS
            .iter()
            .map(|d| root.join("tasks").join(d)),
    );
    dirs
}

/// Every task file of the project, parsed.
#[derive(Debug, Default)]
pub struct TaskScan {
    pub tasks: Vec<Task>,
    pub invalid: Vec<InvalidTask>,
}

/// A task file that could not be read or parsed.
#[derive(Debug)]
pub struct InvalidTask {
    pub path: PathBuf,
    /// The `id` its front matter declares, when one can be read.
    pub id: Option<String>,
    pub problems: Diagnostics,
    /// The file opens front matter or has an `id:` line: it was meant to be a task, unlike a
    /// README or notes kept next to the tasks.
    pub meant_as_task: bool,
}

/// Parses every `*.md` file under the [`search_dirs`], in path order.
pub fn list_tasks(root: &Path) -> Result<TaskScan, Error> {
    let mut files = Vec::new();
    for dir in search_dirs(root) {
        collect_markdown(&dir, &mut files)?;
    }
    let mut scan = TaskScan::default();
    for path in files {
        let shown = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
        let source = match user_file::read(&path, &shown) {
            Ok(source) => source,
            Err(error) => {
                // A file that is not UTF-8 may still show its `id:` line: when it is the task
                // asked for, its problem is what the user needs to see.
                let (id, meant_as_task, problem) = match error {
                    ReadError::NotUtf8 { problem, lossy } => {
                        (declared_id(&path, &lossy), meant_as_task(&lossy), *problem)
                    }
                    ReadError::TooLarge(problem) => (None, true, *problem),
                    ReadError::NotFound(e) | ReadError::Io(e) => (
                        None,
                        true,
                        Diagnostic::new(&shown, format!("cannot read task file: {e}")),
                    ),
                };
                scan.invalid.push(InvalidTask {
                    problems: Diagnostics(vec![problem]),
                    path,
                    id,
                    meant_as_task,
                });
                continue;
            }
        };
        match Task::parse(&path, &source) {
            Ok(task) => scan.tasks.push(task),
            Err(mut problems) => {
                // Reported like every other file the user wrote: relative to the repository.
                let shown = path.strip_prefix(root).unwrap_or(&path);
                for problem in &mut problems.0 {
                    problem.path = shown.to_path_buf();
                }
                scan.invalid.push(InvalidTask {
                    id: declared_id(&path, &source),
                    meant_as_task: meant_as_task(&source),
                    path,
                    problems,
                });
            }
        }
    }
    Ok(scan)
}

/// The task named by `id_or_path`: an existing file (relative to the current directory or to
/// `root`), else the task whose front-matter `id` is exactly `id_or_path`.
pub fn locate(root: &Path, id_or_path: &str) -> Result<Task, Error> {
    let as_path = Path::new(id_or_path);
    for candidate in [as_path.to_path_buf(), root.join(as_path)] {
        if candidate.is_file() {
            return Task::load(&candidate);
        }
    }
    if id_or_path.contains(['/', '\\']) {
        return Err(Error::usage(format!(
            "task file `{id_or_path}` does not exist"
        )));
    }

    let scan = list_tasks(root)?;
    let mut found: Vec<Result<&Task, &InvalidTask>> = scan
        .tasks
        .iter()
        .filter(|t| t.id == id_or_path)
        .map(Ok)
        .collect();
    found.extend(
        scan.invalid
            .iter()
            .filter(|t| t.id.as_deref() == Some(id_or_path))
            .map(Err),
    );
    match found.as_slice() {
        [Ok(task)] => Ok((*task).clone()),
        [Err(invalid)] => Err(Error::Invalid(invalid.problems.clone())),
        [] => Err(not_found(root, id_or_path, &scan)),
        many => {
            let paths: Vec<String> = many
                .iter()
                .map(|f| match f {
                    Ok(task) => task.path.display().to_string(),
                    Err(invalid) => invalid.path.display().to_string(),
                })
                .collect();
            Err(Error::usage(format!(
                "task id `{id_or_path}` is declared by more than one file: {}",
                paths.join(" and ")
            ))
            .with_help("task ids must be unique; change the `id` of all but one, or pass the file path instead"))
        }
    }
}

fn not_found(root: &Path, id: &str, scan: &TaskScan) -> Error {
    let known: Vec<&str> = scan
        .tasks
        .iter()
        .map(|t| t.id.as_str())
        .chain(scan.invalid.iter().filter_map(|t| t.id.as_deref()))
        .collect();
    let searched: Vec<String> = search_dirs(root)
        .iter()
        .map(|d| format!("{}/", d.strip_prefix(root).unwrap_or(d).display()))
        .collect();
    let close = close_ids(id, &known);
    // A broken file whose id is readable declares some other id; only those without one may
    // be the task asked for.
    let broken: Vec<&InvalidTask> = scan
        .invalid
        .iter()
        .filter(|t| t.meant_as_task && t.id.is_none())
        .collect();
    let help = if !broken.is_empty() {
        format!(
            "fix the task file{} above, then run the command again (searched {})",
            if broken.len() == 1 { "" } else { "s" },
            searched.join(", ")
        )
    } else if close.is_empty() {
        format!(
            "searched {} for *.md files whose front matter has `id: {id}`",
            searched.join(", ")
        )
    } else {
        let names: Vec<String> = close.iter().map(|c| format!("`{c}`")).collect();
        format!(
            "did you mean {}? (searched {})",
            names.join(" or "),
            searched.join(", ")
        )
    };
    let mut message = format!("no task with id `{id}`");
    if !broken.is_empty() {
        message.push_str(&format!(
            "; {} task file{} could not be read and may declare it:",
            broken.len(),
            if broken.len() == 1 { "" } else { "s" }
        ));
        for invalid in broken {
            message.push_str("\n  ");
            message.push_str(&first_problem(root, invalid));
        }
    }
    Error::usage(message).with_help(help)
}

/// `path:line:col: message` of the first problem of a broken task file, the path relative to
/// `root`.
fn first_problem(root: &Path, invalid: &InvalidTask) -> String {
    let path = invalid.path.strip_prefix(root).unwrap_or(&invalid.path);
    match invalid.problems.0.first() {
        Some(problem) => match problem.location {
            Some(at) => format!(
                "{}:{}:{}: {}",
                path.display(),
                at.line,
                at.column,
                problem.message
            ),
            None => format!("{}: {}", path.display(), problem.message),
        },
        None => format!("{}: invalid task file", path.display()),
    }
}

/// Up to [`MAX_SUGGESTIONS`] known ids that look like `id`, closest first (case-insensitive).
fn close_ids<'a>(id: &str, known: &[&'a str]) -> Vec<&'a str> {
    let wanted = id.to_lowercase();
    let mut scored: Vec<(f64, &str)> = known
        .iter()
        .map(|k| (strsim::jaro_winkler(&wanted, &k.to_lowercase()), *k))
        .filter(|(score, _)| *score > 0.8)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, k)| k)
        .collect()
}

/// The `id:` line of a front matter that may not parse as a whole. When even the front matter's
/// delimiters are broken, the first `id:` line anywhere in the file: what a reader of the file
/// would take for its id.
fn declared_id(path: &Path, source: &str) -> Option<String> {
    let lines = match front_matter::split(path, source) {
        Ok(split) => lines_from(source, split.yaml_offset)
            .into_iter()
            .take_while(|l| l.offset < split.yaml_offset + split.yaml.len())
            .collect(),
        Err(_) => lines_from(source, 0),
    };
    lines
        .into_iter()
        .find_map(|l| l.text.strip_prefix("id:"))
        .map(|v| {
            let v = v.split(" #").next().unwrap_or(v).trim();
            v.trim_matches(|c| c == '"' || c == '\'').to_string()
        })
        .filter(|v| !v.is_empty())
}

/// Whether a file that did not parse was meant to be a task: it opens front matter, or it has
/// an `id:` line.
fn meant_as_task(source: &str) -> bool {
    let text = source.strip_prefix('\u{feff}').unwrap_or(source);
    text.lines().next().is_some_and(|l| l.trim_end() == "---")
        || text.lines().any(|l| l.starts_with("id:"))
}

/// Appends the `*.md` files under `dir` (recursively, sorted) to `out`. Symlinked directories
/// are not followed, so a link cycle cannot hang the search.
fn collect_markdown(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), Error> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io("cannot list task directory", dir, e)),
    };
    let mut paths: Vec<(PathBuf, fs::FileType)> = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io("cannot list task directory", dir, e))?;
        let file_type = entry
            .file_type()
            .map_err(|e| Error::io("cannot inspect", entry.path(), e))?;
        paths.push((entry.path(), file_type));
    }
    paths.sort_by(|a, b| a.0.cmp(&b.0));
    for (path, file_type) in paths {
        if file_type.is_dir() {
            collect_markdown(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "md") && path.is_file() {
            out.push(path);
        }
    }
    Ok(())
}
