//! The task's own choices checked against what the repository defines, before anything else is
//! resolved: a `workflow:` that names no workflow and a `task_type:` that is a typo of a known
//! one are problems in the task file, reported at their line with a "did you mean".

use std::path::Path;

use base::diagnostic::{did_you_mean, Diagnostic};
use base::error::Error;
use model::profile::ProfileSet;
use model::task::Task;
use model::workflow::resolve::is_path;
use model::workflow::Catalog;

/// Both keys' problems at once, against `catalog` (discovery's problems are reported by the
/// run's own loading, in their files); `workflow_from_flag` means `--workflow` overrides the
/// task's.
pub fn check(
    root: &Path,
    catalog: &Catalog,
    task: &Task,
    workflow_from_flag: bool,
) -> Result<(), Error> {
    let mut problems: Vec<Diagnostic> = Vec::new();
    if let Some(name) = task.workflow.as_deref().filter(|_| !workflow_from_flag) {
        if !is_path(name) && catalog.find(name, None).is_none() {
            let names = catalog.names();
            let help = match did_you_mean(name, names.iter().copied()) {
                Some(close) => format!("did you mean `{close}`?"),
                None => format!("the workflows here are: {}", names.join(", ")),
            };
            problems.push(
                task.key_problem(root, "workflow", format!("unknown workflow `{name}`"))
                    .with_help(help),
            );
        }
    }
    if let Ok(profiles) = ProfileSet::from_catalog(catalog) {
        if let Some(close) = profiles.typo_of(&task.task_type) {
            problems.push(
                task.key_problem(
                    root,
                    "task_type",
                    format!("unknown task type `{}`", task.task_type),
                )
                .with_help(format!(
                    "did you mean `{close}`? (`autobuild profiles list` shows them all)"
                )),
            );
        }
    }
    problems.sort_by_key(|d| d.location);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.into())
    }
}
