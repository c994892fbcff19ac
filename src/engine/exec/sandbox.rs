//! The confinement of one agent or check process of a run, when the run is confined: the
//! run's worktree, task branch, repository and scratch directory, plus what the agent CLI
//! needs for itself. Notes about paths that could not be made writable become warnings, once
//! per run.

use crate::engine::cx::RunCx;
use crate::engine::events::EventKind;
use crate::sandbox::{Confinement, StepPaths, Writable};

/// The confinement for a process with the project environment, or `None` when the run is not
/// confined.
pub fn confine(cx: &mut RunCx, agent_state: Vec<Writable>) -> Option<Confinement> {
    let sandbox = cx.plan.sandbox.sandbox()?;
    let env = cx.env_vars();
    let scratch = crate::agents::scratch_dir(&cx.paths.dir);
    let paths = StepPaths {
        worktree: &cx.state.worktree,
        branch: &cx.state.branch,
        repo_root: &cx.plan.root,
        scratch: &scratch,
        agent_state,
        env: &env,
    };
    let (confinement, notes) = sandbox.confine(&paths);
    for note in notes {
        cx.emit(EventKind::Warning {
            message: format!("sandbox: {note}"),
        });
    }
    Some(confinement)
}
