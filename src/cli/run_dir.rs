//! Finding one run's directory and record from the id a user typed, for the commands that act
//! on existing runs (`status`, `resume`, `complete`, `discard`, `logs`, `report`, `approve`).
//!
//! The id is validated first ([`checked_run`]): before anything is read, it must be a task or
//! feature id or an earlier run's `<ID>@<N>`, and its directory must be inside
//! `.autobuild/runs/` (see [`crate::engine::paths`]). A run record whose `task_id` is not the
//! run's own is not acted on either: `complete` and `discard` change the branch it names.

use std::path::{Path, PathBuf};

use crate::cli::task::current_dir;
use crate::engine::paths::{run_owner, validate_run_id, RunPaths};
use crate::engine::plan::repo_root;
use crate::engine::refusal::Refusal;
use crate::engine::state::{unreadable_record, RunState};
use crate::error::Error;
use crate::project::Layout;

pub(super) struct Located {
    pub(super) root: PathBuf,
    pub(super) paths: RunPaths,
    pub(super) state: RunState,
}

/// The repository root, once `run_id` is known to name a directory directly under
/// `.autobuild/runs/`. Nothing is read before the id itself is checked.
pub(super) fn checked_run(run_id: &str) -> Result<PathBuf, Error> {
    validate_run_id(run_id)?;
    let root = repo_root(&current_dir()?)?;
    RunPaths::within(&Layout::new(&root).runs(), run_id)?;
    Ok(root)
}

pub(super) fn locate_run(root: &Path, task_id: &str) -> Result<Located, Error> {
    let root = root.to_path_buf();
    if crate::feature::run::is_feature_run(&root, task_id) {
        return Err(Refusal::IsFeature {
            id: task_id.to_string(),
        }
        .into());
    }
    let paths = RunPaths::new(&Layout::new(&root).runs(), task_id);
    let state = load_state(&paths, task_id)?;
    if state.task_id != run_owner(task_id) {
        // An untrusted record (crate::engine::owned): a problem in that file, exit 2.
        return Err(Error::from(crate::diagnostic::Diagnostic::new(
            paths.state(),
            format!(
                "the run record is of task `{}`, not of {}; autobuild does not act on it",
                state.task_id,
                run_owner(task_id)
            ),
        )));
    }
    Ok(Located { root, paths, state })
}

/// [`locate_run`] for the commands that change or remove what the run names (`complete`,
/// `discard`, `approve`, `reject`): the record must name only the runner's own branch,
/// worktree and run directory ([`crate::engine::owned`]), or nothing is touched (exit 2).
pub(super) fn locate_owned_run(root: &Path, run_id: &str) -> Result<Located, Error> {
    let run = locate_run(root, run_id)?;
    crate::engine::owned::ensure_owned(&run.state, &run.paths, &Layout::new(root), run_id)?;
    Ok(run)
}

/// A run's state, telling "no such run" apart from a record that cannot be read.
fn load_state(paths: &RunPaths, task_id: &str) -> Result<RunState, Error> {
    let file = paths.state();
    if !file.exists() {
        return Err(Refusal::NoRun {
            id: task_id.to_string(),
        }
        .into());
    }
    RunState::load(&file).map_err(|e| unreadable_record(&file, &e, task_id))
}
