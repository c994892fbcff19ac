//! A feature, checked as a whole before anything runs: the file parses, every task is found
//! (by `file_path`, else by id), dependencies name tasks of the feature, there is no cycle, and
//! declared `parallel_groups` list every task once with its dependencies in earlier groups.
//! Every problem is reported at once, each at the line that causes it (exit 2, nothing started).

use std::path::{Path, PathBuf};

use crate::feature::file::{FeatureFile, Located, TaskEntry};
use crate::feature::graph::{plan_waves, GraphTask};
use crate::feature::locate::locate_feature;
use crate::feature::overlap::{separate, Separated};
use base::diagnostic::{did_you_mean, Diagnostic};
use base::error::Error;
use base::user_file::source::{Layer, Pos, Source};
use model::task::{find_in_scan, list_tasks, validate_id, Lookup, Task, TaskScan};

mod locator;

use locator::Locator;

/// A valid feature, ready to run.
#[derive(Debug, Clone)]
pub struct FeaturePlan {
    pub root: PathBuf,
    /// The feature file, relative to the repository root.
    pub file: PathBuf,
    pub id: String,
    pub name: String,
    pub description: String,
    /// In file order.
    pub tasks: Vec<PlannedTask>,
    /// Task ids per wave, in run (and merge) order.
    pub waves: Vec<Vec<String>>,
    /// Whether the waves are the file's `parallel_groups` (else computed from dependencies).
    pub declared_waves: bool,
    /// Whether those declared waves are the tasks' `wave:` keys.
    pub waves_from_task_keys: bool,
    pub recommended_parallel: Option<u32>,
    /// Tasks moved a wave later than planned because they write the same files as a task of
    /// their wave ([`crate::feature::overlap`]).
    pub separated: Vec<Separated>,
}

#[derive(Debug, Clone)]
pub struct PlannedTask {
    pub task: Task,
    pub dependencies: Vec<String>,
    /// 0-based.
    pub wave: usize,
    /// The finished state folder (`completed`, `archived`, `obsolete`) the task was found in:
    /// it is done, never run again, and its dependants run as if it had landed.
    pub done: Option<String>,
}

impl PlannedTask {
    pub fn id(&self) -> &str {
        &self.task.id
    }
}

impl FeaturePlan {
    pub fn task(&self, id: &str) -> Option<&PlannedTask> {
        self.tasks.iter().find(|t| t.task.id == id)
    }

    /// A task's file relative to the repository root, for messages.
    pub fn shown_path(&self, path: &Path) -> PathBuf {
        path.strip_prefix(&self.root).unwrap_or(path).to_path_buf()
    }
}

/// Finds, parses and checks the feature named by `id_or_path`.
pub fn load(root: &Path, id_or_path: &str) -> Result<FeaturePlan, Error> {
    let found = locate_feature(root, id_or_path)?;
    let file = FeatureFile::load(&found.path, &found.shown)?;
    check(root, file)
}

/// Looks up the tasks of a parsed feature file and checks the whole.
pub fn check(root: &Path, file: FeatureFile) -> Result<FeaturePlan, Error> {
    let mut problems = Vec::new();
    if let Err(why) = validate_id(&file.id.value) {
        problems.push(file.id.pos.error(format!("invalid feature id: {why}")));
    }
    if file.tasks.is_empty() {
        problems.push(
            file.tasks_pos
                .error("the feature has no tasks")
                .with_help("list its tasks under `tasks:`, each with an `id` (and a `file_path`)"),
        );
    }
    let mut scan = LazyScan::new(root);
    let resolved: Vec<Option<Task>> = file
        .tasks
        .iter()
        .map(|entry| resolve_task(root, entry, &mut scan, &mut problems))
        .collect();
    let done: Vec<Option<String>> = resolved
        .iter()
        .map(|task| {
            task.as_ref()
                .and_then(|t| model::task::finished_state(root, &root.join(&t.path)))
        })
        .collect();
    for (entry, task) in file.tasks.iter().zip(&resolved) {
        if task.is_some() && entry.id.value == file.id.value {
            problems.push(entry.id.pos.error(format!(
                "the task id `{}` is also the feature's id; runs of both would share .autobuild/runs/{}",
                entry.id.value, entry.id.value
            )));
        }
    }

    let dependencies: Vec<Vec<Located>> = file
        .tasks
        .iter()
        .zip(&resolved)
        .map(|(entry, task)| dependencies_of(root, entry, task.as_ref()))
        .collect();
    let graph: Vec<GraphTask> = file
        .tasks
        .iter()
        .zip(&dependencies)
        .map(|(entry, deps)| GraphTask {
            id: entry.id.value.clone(),
            dependencies: deps.iter().map(|d| d.value.clone()).collect(),
        })
        .collect();
    let groups: Option<Vec<Vec<String>>> = file.parallel_groups.as_ref().map(|groups| {
        groups
            .iter()
            .map(|g| g.iter().map(|l| l.value.clone()).collect())
            .collect()
    });
    let waves = match plan_waves(&graph, groups.as_deref()) {
        Ok(waves) => waves,
        Err(graph_problems) => {
            let located = Locator {
                file: &file,
                dependencies: &dependencies,
            };
            for problem in graph_problems {
                problems.push(located.diagnostic(&problem, &mut scan));
            }
            Vec::new()
        }
    };
    if !problems.is_empty() {
        problems.sort_by(|a, b| (&a.path, a.location).cmp(&(&b.path, b.location)));
        problems.dedup();
        return Err(Error::from(problems));
    }

    let mut tasks: Vec<PlannedTask> = resolved
        .into_iter()
        .zip(done)
        .filter_map(|(task, done)| Some((task?, done)))
        .zip(&dependencies)
        .map(|((task, done), deps)| PlannedTask {
            task,
            dependencies: deps.iter().map(|d| d.value.clone()).collect(),
            wave: 0,
            done,
        })
        .collect();
    // A task done before the feature writes nothing now.
    let writes: Vec<Vec<String>> = tasks
        .iter()
        .map(|t| match t.done {
            Some(_) => Vec::new(),
            None => t.task.writes.clone(),
        })
        .collect();
    let (waves, separations) = separate(&waves, &writes);
    for (w, wave) in waves.iter().enumerate() {
        for &i in wave {
            tasks[i].wave = w;
        }
    }
    let separated = separations
        .into_iter()
        .map(|s| Separated {
            task: tasks[s.task].task.id.clone(),
            after: tasks[s.after].task.id.clone(),
            paths: s.paths,
        })
        .collect();
    let wave_ids = waves
        .iter()
        .map(|w| w.iter().map(|&i| tasks[i].task.id.clone()).collect())
        .collect();
    Ok(FeaturePlan {
        root: root.to_path_buf(),
        file: file.path.clone(),
        id: file.id.value.clone(),
        name: file.name.clone(),
        description: file.description.clone(),
        tasks,
        waves: wave_ids,
        declared_waves: file.parallel_groups.is_some(),
        waves_from_task_keys: file.groups_from_waves,
        recommended_parallel: file.recommended_parallel,
        separated,
    })
}

/// The project's tasks, scanned once and only when some entry needs a lookup by id.
struct LazyScan<'r> {
    root: &'r Path,
    scan: Option<Result<TaskScan, Error>>,
}

impl<'r> LazyScan<'r> {
    fn new(root: &'r Path) -> Self {
        LazyScan { root, scan: None }
    }

    fn get(&mut self) -> Result<&TaskScan, &Error> {
        let root = self.root;
        self.scan.get_or_insert_with(|| list_tasks(root)).as_ref()
    }
}

/// The task an entry names, or the problems that prevent finding it.
fn resolve_task(
    root: &Path,
    entry: &TaskEntry,
    scan: &mut LazyScan<'_>,
    problems: &mut Vec<Diagnostic>,
) -> Option<Task> {
    let id = &entry.id;
    if let Some(file_path) = &entry.file_path {
        let path = root.join(&file_path.value);
        if !path.is_file() {
            return stale_file_path(root, entry, file_path, scan, problems);
        }
        return match Task::load(&path).map(|task| task.relative_to(root)) {
            Ok(mut task) if task.id == id.value => {
                if let Some(state) = model::task::finished_state(root, &path) {
                    let warning = done_warning(&file_path.pos, &id.value, &state, &file_path.value);
                    task.warnings.insert(0, warning);
                }
                Some(task)
            }
            Ok(task) => {
                problems.push(id.pos.error(format!(
                    "{} declares the id `{}`, not `{}`",
                    file_path.value, task.id, id.value
                )));
                None
            }
            Err(Error::Invalid(d)) => {
                // Shown relative to the repository, like the feature file's own problems.
                problems.extend(d.0.into_iter().map(|mut problem| {
                    problem.path = shown(root, &problem.path);
                    problem
                }));
                None
            }
            Err(other) => {
                problems.push(file_path.pos.error(other.to_string()));
                None
            }
        };
    }
    let scan = match scan.get() {
        Ok(scan) => scan,
        Err(error) => {
            problems.push(id.pos.error(error.to_string()));
            return None;
        }
    };
    match find_in_scan(root, scan, &id.value) {
        Lookup::Found(task) => Some(*task),
        Lookup::Invalid(bad) => {
            problems.extend(bad.problems.0.iter().cloned());
            None
        }
        Lookup::Missing => {
            if let Some(task) = finished_copy(root, &id.value, &id.pos, None) {
                return Some(task);
            }
            let known = scan.tasks.iter().map(|t| t.id.as_str());
            let diagnostic = id.pos.error(format!("unknown task `{}`", id.value));
            problems.push(match did_you_mean(&id.value, known) {
                Some(close) => diagnostic.with_help(format!("did you mean `{close}`?")),
                None => diagnostic.with_help(
                    "no task file declares this id; give the entry a `file_path`, or create the task under .autobuild/tasks/",
                ),
            });
            None
        }
        Lookup::Ambiguous(paths) => {
            let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            problems.push(
                id.pos
                    .error(format!(
                        "task id `{}` is declared by more than one file in the same state: {}",
                        id.value,
                        paths.join(" and ")
                    ))
                    .with_help("give the entry a `file_path`, or make the ids unique"),
            );
            None
        }
    }
}

/// An entry whose `file_path` names no file: GuardKit moves task files between its state
/// folders and its feature files keep the old path, so the task is looked up by its id (with a
/// located warning to correct the path); only when that finds nothing usable is the stale path
/// a problem.
fn stale_file_path(
    root: &Path,
    entry: &TaskEntry,
    file_path: &Located,
    scan: &mut LazyScan<'_>,
    problems: &mut Vec<Diagnostic>,
) -> Option<Task> {
    let id = &entry.id;
    let missing = file_path
        .pos
        .error(format!("task file `{}` does not exist", file_path.value));
    let scan = match scan.get() {
        Ok(scan) => scan,
        Err(error) => {
            problems
                .push(missing.with_help(format!("looking the task up by its id failed: {error}")));
            return None;
        }
    };
    match find_in_scan(root, scan, &id.value) {
        Lookup::Found(task) => {
            let mut task = *task;
            let warning = file_path
                .pos
                .error(format!(
                    "task file `{}` does not exist; using task `{}` found by its id at {}",
                    file_path.value,
                    id.value,
                    shown(root, &task.path).display()
                ))
                .with_help(
                    "correct `file_path` (GuardKit moves task files between its state folders)",
                )
                .into_warning();
            task.warnings.insert(0, warning);
            Some(task)
        }
        Lookup::Invalid(bad) => {
            problems.extend(bad.problems.0.iter().cloned());
            None
        }
        Lookup::Missing => {
            // A finished copy (GuardKit moved the task to `completed/`): done, not run again.
            if let Some(task) =
                finished_copy(root, &id.value, &file_path.pos, Some(&file_path.value))
            {
                return Some(task);
            }
            // GuardKit's own loader refuses a feature whose task file is missing (its
            // `validate_feature`: "Task file not found"), and so does this one.
            let help = match model::task::board_state(root, &id.value) {
                Some((state, path)) => format!(
                    "task `{}` is in {state} ({}), which a feature takes no tasks from; remove the entry, or correct `file_path`",
                    id.value,
                    path.display()
                ),
                None => "no task file declares this id either; `file_path` is relative to the repository root".to_string(),
            };
            problems.push(missing.with_help(help));
            None
        }
        Lookup::Ambiguous(paths) => {
            let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            problems.push(missing.with_help(format!(
                "task id `{}` is declared by more than one file in the same state ({}); correct `file_path`",
                id.value,
                paths.join(" and ")
            )));
            None
        }
    }
}

/// Task `id` when its only copy is in a finished state folder: done, with a located warning
/// at `pos` (the entry's stale `file_path`, else its id). A finished copy that no longer
/// parses still counts as done (it never runs); the plan then knows only its id and path.
fn finished_copy(root: &Path, id: &str, pos: &Pos, stale: Option<&str>) -> Option<Task> {
    let (state, path) = model::task::board_state(root, id)?;
    // Only a finished copy: a copy elsewhere (not in an active folder) is not done work.
    model::task::finished_state(root, &root.join(&path))?;
    let mut task = Task::load(&root.join(&path))
        .map(|task| task.relative_to(root))
        .ok()
        .filter(|task| task.id == id)
        .unwrap_or_else(|| Task {
            id: id.to_string(),
            task_type: model::task::DEFAULT_TASK_TYPE.to_string(),
            path: path.clone(),
            ..Task::default()
        });
    let mut warning = done_warning(pos, id, &state, &path.display().to_string());
    if let Some(stale) = stale {
        warning.message = format!("task file `{stale}` does not exist; {}", warning.message);
    }
    task.warnings.insert(0, warning);
    Some(task)
}

/// The warning that a feature's task is done: where its finished copy is, and what follows.
fn done_warning(pos: &Pos, id: &str, state: &str, path: &str) -> Diagnostic {
    pos.error(format!(
        "task `{id}` is done ({state}: {path}): it is not run again, and its dependants run as if it had landed"
    ))
    .with_help("remove the entry from the feature once nothing depends on it")
    .into_warning()
}

/// The entry's `dependencies`, else the task file's own front-matter list, located in
/// whichever file declares them.
fn dependencies_of(root: &Path, entry: &TaskEntry, task: Option<&Task>) -> Vec<Located> {
    if let Some(deps) = &entry.dependencies {
        return deps.clone();
    }
    let Some(task) = task else {
        return Vec::new();
    };
    if task.dependencies.is_empty() {
        return Vec::new();
    }
    let text = base::user_file::read(&task.path, &task.path).unwrap_or_default();
    let source = Source::new(shown(root, &task.path), text, Layer::Repo);
    task.dependencies
        .iter()
        .map(|dep| Located {
            value: dep.clone(),
            pos: front_matter_position(&source, dep).unwrap_or_else(|| entry.id.pos.clone()),
        })
        .collect()
}

/// Where `id` is written after the `dependencies:` key of a task file's front matter.
fn front_matter_position(source: &std::sync::Arc<Source>, id: &str) -> Option<Pos> {
    let text = &source.text;
    let key = text.find("\ndependencies:")? + 1;
    let end = text[key..].find("\n---").map_or(text.len(), |e| key + e);
    let mut from = key;
    while let Some(offset) = text[from..end].find(id) {
        let start = from + offset;
        let after = text[start + id.len()..].chars().next();
        let before = text[..start].chars().next_back();
        let boundary = |c: Option<char>| {
            c.is_none_or(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        };
        if boundary(before) && boundary(after) {
            return Some(source.pos_at_offset(start));
        }
        from = start + id.len();
    }
    None
}

fn shown(root: &Path, path: &Path) -> PathBuf {
    path.strip_prefix(root).unwrap_or(path).to_path_buf()
}

#[cfg(test)]
mod tests;
