//! Finding task files: the one list of places tasks live, and lookup by id or path.
//!
//! Tasks live under `.autobuild/tasks/**` and, for GuardKit projects, under
//! `tasks/{backlog,in_progress,design_approved,in_review,blocked}/**` and the same folders of
//! `.guardkit/tasks/` (README.md, docs/guardkit.md). Lookup by id also searches GuardKit's
//! finished folders (`completed/`, `archived/`; a copy there loses to any active one) and the
//! files directly in `.guardkit/tasks/`, and parses only the files that can declare the id:
//! those named after it, and only when none of them declares it those whose text carries it, so
//! a board of thousands of tasks costs a directory listing, not a parse per file. Lookup by id
//! matches the front-matter `id` exactly (or, without one, the id the file name carries). A
//! file that fails to parse does not hide the other
//! tasks, but when it is the file that declares the requested id its problems are what the user
//! sees — even when its front matter is so broken that only an `id:` line can still be read.
//! When no file declares the id, the broken task files whose id cannot be read are listed with
//! their first problem: one of them is the likely culprit, and "no task with id" alone would
//! send the user looking for a typo. Markdown files that do not even try to be tasks (a README)
//! are not listed. Two files declaring one id in different state folders are GuardKit's normal
//! leftovers: the copy in the most advanced state is taken, with a warning naming the others
//! ([`super::precedence`]). Two in the same state are an error naming both: silently picking
//! one would run the wrong task. Every path in these messages is relative to the repository.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::front_matter;
use super::markdown::lines_from;
use super::precedence::rank;
use super::{id_from_file_name, Task};
use crate::project::Layout;
use base::diagnostic::{Diagnostic, Diagnostics};
use base::error::Error;
use base::user_file::{self, ReadError};

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
    for tasks in [root.join("tasks"), root.join(".guardkit").join("tasks")] {
        dirs.extend(GUARDKIT_TASK_DIRS.iter().map(|d| tasks.join(d)));
    }
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

/// Parses every `*.md` file under the [`search_dirs`] and directly in `.guardkit/tasks/`
/// (GuardKit's own layout keeps active tasks there), in path order: the tasks a feature can
/// name are the ones `autobuild task` finds.
pub fn list_tasks(root: &Path) -> Result<TaskScan, Error> {
    let mut files = Vec::new();
    for dir in search_dirs(root) {
        collect_markdown(&dir, true, &mut files)?;
    }
    collect_markdown(&root.join(".guardkit").join("tasks"), false, &mut files)?;
    Ok(scan_files(root, files))
}

/// Where task `id` sits on a GuardKit board: the state folder of the copy that counts, and that
/// copy's path relative to `root`. The finished folders (`completed/`, `archived/`), which runs
/// never take tasks from, count here: a task GuardKit moved on after its merge is shown there.
/// `None` for a task outside GuardKit's folders, or none with that id.
pub fn board_state(root: &Path, id: &str) -> Option<(String, PathBuf)> {
    let scan = scan_for(root, &lookup_files(root).ok()?, id);
    let path = match find_in_scan(root, &scan, id) {
        Lookup::Found(task) => task.path,
        Lookup::Invalid(invalid) => invalid.path.clone(),
        Lookup::Ambiguous(_) | Lookup::Missing => return None,
    };
    match rank(root, &path) {
        (0, _) => None,
        (_, state) => Some((state, shown(root, &path))),
    }
}

/// Every `*.md` file a lookup by id considers, in path order: the [`search_dirs`], GuardKit's
/// finished folders (`completed/`, `archived/`, `obsolete/`: precedence puts their copies last) and the
/// files directly in `.guardkit/tasks/`.
fn lookup_files(root: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut dirs = search_dirs(root);
    for tasks in [root.join("tasks"), root.join(".guardkit").join("tasks")] {
        dirs.extend(super::precedence::FINISHED.iter().map(|d| tasks.join(d)));
    }
    let mut files = Vec::new();
    for dir in &dirs {
        collect_markdown(dir, true, &mut files)?;
    }
    collect_markdown(&root.join(".guardkit").join("tasks"), false, &mut files)?;
    Ok(files)
}

/// The parsed files of `files` that may declare `id`, found by name first: GuardKit names task
/// files after their ids, so when a file whose name carries `id` declares it, only those files
/// are parsed (a copy elsewhere not named after the id is then not seen). Otherwise every file
/// whose name or text carries `id` is: a file that declares an id spells it out, in its front
/// matter or in its name, so the files left out cannot declare `id`.
fn scan_for(root: &Path, files: &[PathBuf], id: &str) -> TaskScan {
    let named = |path: &&PathBuf| {
        path.file_name()
            .is_some_and(|name| name.to_string_lossy().contains(id))
    };
    let by_name = scan_files(root, files.iter().filter(named).cloned().collect());
    if !matches!(find_in_scan(root, &by_name, id), Lookup::Missing) {
        return by_name;
    }
    let needle = id.as_bytes();
    let mentions = |path: &&PathBuf| match fs::read(path) {
        Ok(bytes) => bytes.windows(needle.len().max(1)).any(|w| w == needle),
        // Unreadable: parsed, so that its problem is reported as before.
        Err(_) => true,
    };
    let candidates = files.iter().filter(|p| named(p) || mentions(p)).cloned();
    scan_files(root, candidates.collect())
}

/// Parses `files`, in the given order.
fn scan_files(root: &Path, files: Vec<PathBuf>) -> TaskScan {
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
                    ReadError::TooLarge(problem) | ReadError::NotRegular(problem) => {
                        (None, true, *problem)
                    }
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
            Ok(task) => scan.tasks.push(task.relative_to(root)),
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
    scan
}

/// The task named by `id_or_path`: an existing file (relative to the current directory or to
/// `root`), else the task whose front-matter `id` is exactly `id_or_path`.
pub fn locate(root: &Path, id_or_path: &str) -> Result<Task, Error> {
    let as_path = Path::new(id_or_path);
    for candidate in [as_path.to_path_buf(), root.join(as_path)] {
        if candidate.is_file() {
            return match Task::load(&candidate) {
                Ok(task) => Ok(task.relative_to(root)),
                Err(Error::Invalid(problems)) => Err(Error::Invalid(relative(root, problems))),
                Err(other) => Err(other),
            };
        }
    }
    if id_or_path.contains(['/', '\\']) {
        return Err(Error::usage(format!(
            "task file `{id_or_path}` does not exist"
        )));
    }

    let files = lookup_files(root)?;
    let scan = scan_for(root, &files, id_or_path);
    match find_in_scan(root, &scan, id_or_path) {
        Lookup::Found(task) => Ok(*task),
        Lookup::Invalid(invalid) => Err(Error::Invalid(invalid.problems.clone())),
        // The error suggests close ids and names broken files: it needs every file parsed.
        Lookup::Missing => Err(not_found(root, id_or_path, &scan_files(root, files))),
        Lookup::Ambiguous(paths) => Err(Error::usage(format!(
            "task id `{id_or_path}` is declared by more than one file in the same state: {}",
            shown_list(&paths)
        ))
        .with_help(
            "task ids must be unique; remove the stale copy, change the `id` of all but one, or pass the file path instead",
        )),
    }
}

/// What looking up one id among the scanned tasks found.
#[derive(Debug)]
pub enum Lookup<'s> {
    /// The task, with a warning naming the other copies when there are some.
    Found(Box<Task>),
    /// The copy that counts does not parse.
    Invalid(&'s InvalidTask),
    /// Copies of equal rank: their paths, relative to the repository.
    Ambiguous(Vec<PathBuf>),
    Missing,
}

/// The task declaring `id` among `scan`'s files; copies in different state folders are settled
/// by [`super::precedence`].
pub fn find_in_scan<'s>(root: &Path, scan: &'s TaskScan, id: &str) -> Lookup<'s> {
    let mut found: Vec<(usize, String, PathBuf, Result<&Task, &InvalidTask>)> = scan
        .tasks
        .iter()
        .filter(|t| t.id == id)
        .map(|t| (t, t.path.clone()))
        .map(|(t, p)| (p, Ok(t)))
        .chain(
            scan.invalid
                .iter()
                .filter(|t| t.id.as_deref() == Some(id))
                .map(|t| (t.path.clone(), Err(t))),
        )
        .map(|(path, found)| {
            let (rank, state) = rank(root, &path);
            (rank, state, shown(root, &path), found)
        })
        .collect();
    found.sort_by(|a, b| (a.0, &a.2).cmp(&(b.0, &b.2)));
    let Some(best) = found.first() else {
        return Lookup::Missing;
    };
    let ties: Vec<PathBuf> = found
        .iter()
        .filter(|f| f.0 == best.0)
        .map(|f| f.2.clone())
        .collect();
    if ties.len() > 1 {
        return Lookup::Ambiguous(ties);
    }
    match best.3 {
        Err(invalid) => Lookup::Invalid(invalid),
        Ok(task) => {
            let mut task = task.clone();
            let others: Vec<String> = found[1..]
                .iter()
                .map(|f| format!("{} ({})", f.2.display(), f.1))
                .collect();
            if !others.is_empty() {
                task.warnings.push(Diagnostic::new(
                    &best.2,
                    format!(
                        "task `{id}` is also declared by {}; using this copy, the one in the most advanced state ({})",
                        others.join(", "),
                        best.1
                    ),
                ));
            }
            Lookup::Found(Box::new(task))
        }
    }
}

fn shown(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root).unwrap_or(path).to_path_buf()
}

fn shown_list(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    names.join(" and ")
}

/// Problems of a task file with their paths relative to `root`.
fn relative(root: &Path, mut problems: Diagnostics) -> Diagnostics {
    for problem in &mut problems.0 {
        problem.path = shown(root, &problem.path);
    }
    problems
}

fn not_found(root: &Path, id: &str, scan: &TaskScan) -> Error {
    let known: Vec<&str> = scan
        .tasks
        .iter()
        .map(|t| t.id.as_str())
        .chain(scan.invalid.iter().filter_map(|t| t.id.as_deref()))
        .collect();
    // The folders, shortened: ten GuardKit state folders spelled out hide the help's point.
    let searched = [format!(
        ".autobuild/tasks/, tasks/STATE/ and .guardkit/tasks/STATE/ (STATE: {}, completed, archived)",
        GUARDKIT_TASK_DIRS.join(", ")
    )];
    let close = close_ids(id, &known);
    // A broken file whose id is readable declares some other id; only those without one may
    // be the task asked for.
    let broken: Vec<&InvalidTask> = scan
        .invalid
        .iter()
        .filter(|t| t.meant_as_task && t.id.is_none())
        .collect();
    // Nothing is set up here yet: the way on is `init`, not a search path.
    let uninitialized =
        known.is_empty() && scan.invalid.is_empty() && !Layout::new(root).dir().exists();
    let help = if uninitialized {
        "this repository has no .autobuild/ yet: run `autobuild init` to set it up (it writes \
         the config with the detected check and an example task)"
            .to_string()
    } else if !broken.is_empty() {
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
/// would take for its id. Without any, the id its file name carries, as for a valid task.
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
        .or_else(|| id_from_file_name(path))
}

/// Whether a file that did not parse was meant to be a task: it opens front matter, or it has
/// an `id:` line.
fn meant_as_task(source: &str) -> bool {
    let text = source.strip_prefix('\u{feff}').unwrap_or(source);
    text.lines().next().is_some_and(|l| l.trim_end() == "---")
        || text.lines().any(|l| l.starts_with("id:"))
}

/// Appends the `*.md` files in `dir` to `out`, sorted; with `recursive`, those of its
/// subdirectories too, each in its place. Symlinked directories are not followed, so a link
/// cycle cannot hang the search.
fn collect_markdown(dir: &Path, recursive: bool, out: &mut Vec<PathBuf>) -> Result<(), Error> {
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
        if recursive && file_type.is_dir() {
            collect_markdown(&path, true, out)?;
        } else if is_markdown_file(&path, file_type) {
            out.push(path);
        }
    }
    Ok(())
}

/// A `*.md` file, or a link to a file, by the type its directory entry gave: only a link costs
/// a `stat`, so listing a board of thousands of tasks does not stat each one.
fn is_markdown_file(path: &Path, file_type: fs::FileType) -> bool {
    path.extension().is_some_and(|e| e == "md")
        && (file_type.is_file() || (file_type.is_symlink() && path.is_file()))
}
