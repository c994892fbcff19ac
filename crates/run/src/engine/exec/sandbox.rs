//! The confinement of one agent or check process of a run, when the run is confined: the
//! run's worktree, task branch, repository and scratch directory, plus what the agent CLI
//! needs for itself. Notes about paths that could not be made writable become warnings, once
//! per run.
//!
//! A confined process writes new git objects to the run's private object directory (the shared
//! store is read-only to it); [`import_objects`] brings them, verified, into the shared store
//! after every confined process and before anything of the runner's reads them.

use std::path::{Path, PathBuf};

use crate::engine::cx::RunCx;
use crate::engine::events::EventKind;
use base::error::Error;
use sandbox::{Confinement, Hide, StepPaths, Writable};

/// The run's private object directory: where confined git commands write new objects.
pub fn objects_dir(run_dir: &Path) -> PathBuf {
    run_dir.join("objects")
}

/// The confinement for a process with the project environment, or `None` when the run is not
/// confined.
pub fn confine(cx: &mut RunCx, agent_state: Vec<Writable>) -> Option<Confinement> {
    let worktree = cx.state.worktree.clone();
    confine_in(cx, &worktree, agent_state, false)
}

/// A hidden check's confinement in the runner's copy `worktree`: sealed
/// ([`StepPaths::sealed`]: only the copy writable, no network).
pub fn confine_sealed(cx: &mut RunCx, worktree: &Path) -> Option<Confinement> {
    confine_in(cx, worktree, Vec::new(), true)
}

/// The confinement of a check the runner runs in a copy of its own (the base oracle's): the
/// copy writable, sealed like a hidden check when the run has hidden paths.
pub fn confine_copy(cx: &mut RunCx, copy: &Path) -> Option<Confinement> {
    let sealed = cx.plan.hides();
    confine_in(cx, copy, Vec::new(), sealed)
}

/// [`confine`] for a process working in `worktree`.
fn confine_in(
    cx: &mut RunCx,
    worktree: &Path,
    agent_state: Vec<Writable>,
    sealed: bool,
) -> Option<Confinement> {
    let sandbox = cx.plan.sandbox.sandbox()?;
    let env = cx.env_vars();
    let scratch = agents::scratch_dir(&cx.paths.dir);
    let objects = objects_dir(&cx.paths.dir);
    let hide = cx.plan.hides().then(|| hide(cx));
    let paths = StepPaths {
        worktree,
        branch: &cx.state.branch,
        repo_root: &cx.plan.root,
        scratch: &scratch,
        objects: &objects,
        agent_state,
        env: &env,
        hide: hide.as_ref(),
        sealed,
    };
    let (confinement, notes) = sandbox.confine(&paths);
    for note in notes {
        cx.emit(EventKind::Warning {
            message: format!("sandbox: {note}"),
        });
    }
    Some(confinement)
}

/// What a run with hidden paths masks: the user's checkout (and so the run directory), its git
/// directory and its other worktrees; shown again: the `[worktree] link` targets its
/// worktree's links point to, and the run's `prompts/` (what the agents are told anyway; a
/// `command` agent reads its prompt there).
fn hide(cx: &RunCx) -> Hide {
    let plan = cx.plan;
    Hide {
        masked: cx.repo.hiding_places(),
        shown: plan
            .config
            .worktree
            .link
            .iter()
            .map(|link| plan.root.join(link))
            .chain([cx.paths.prompts()])
            .collect(),
    }
}

/// The repository confined git commands of this run write objects for: the task repository
/// (through the worktree) when the run hides files, else the user's.
fn object_home(cx: &RunCx) -> PathBuf {
    if cx.plan.hides() {
        cx.state.worktree.clone()
    } else {
        cx.plan.root.clone()
    }
}

/// After confined processes of a step ran under `confinement`: puts back the read-only files
/// inside the worktree they changed (what Landlock cannot refuse, module
/// `sandbox::landlock`), then imports their objects ([`import_objects`]). Returns the note
/// naming what was put back, also given as a warning.
pub fn after_confined(cx: &mut RunCx, confinement: &Confinement) -> Result<Option<String>, Error> {
    let restored = confinement
        .restore_protected()
        .map_err(|(path, error)| Error::io("cannot put back", &path, error))?;
    let note = (!restored.is_empty()).then(|| {
        let names: Vec<String> = restored
            .iter()
            .map(|path| base::quoted::path(&path.to_string_lossy()).into_owned())
            .collect();
        format!(
            "the sandbox put back git files the step changed, which tie the worktree to its \
             repository: {}",
            names.join(", ")
        )
    });
    if let Some(note) = &note {
        cx.emit(EventKind::Warning {
            message: format!("sandbox: {note}"),
        });
    }
    import_objects(cx)?;
    Ok(note)
}

/// Imports the objects confined processes of this run wrote (nothing when none did), warning
/// about any whose content does not match its name: those are never imported.
fn import_objects(cx: &mut RunCx) -> Result<(), Error> {
    let private = objects_dir(&cx.paths.dir);
    let imported = git::import_objects(&object_home(cx), &private)?;
    if !imported.forged.is_empty() {
        cx.emit(EventKind::Warning {
            message: format!(
                "sandbox: {} object(s) written in the sandbox do not match their names and were \
                 not imported (first {})",
                imported.forged.len(),
                imported.forged[0]
            ),
        });
    }
    Ok(())
}

/// The main checkout as it stands before an agent step, when the step runs unconfined (in the
/// sandbox it is read-only and needs no guard).
///
/// What the last agent step's restore left stands for a capture while HEAD and the index are
/// unchanged (one walk per agent step instead of two): a change made between two steps is
/// then taken for the next step's, which reverts it only where it touches the runner's own
/// inputs (edit those between runs) and keeps the version it replaced.
pub fn guard_main_checkout(cx: &mut RunCx) -> Result<Option<git::CheckoutGuard>, Error> {
    if cx.plan.sandbox.sandbox().is_some() {
        return Ok(None);
    }
    if let Some(last) = cx.main_checkout.take() {
        if last.still_current(&cx.repo) {
            return Ok(Some(last));
        }
    }
    let revert = runner_input(cx);
    Ok(Some(git::CheckoutGuard::capture(&cx.repo, &revert)?))
}

/// Whether a path of the main checkout (relative) is one of the runner's own inputs
/// ([`model::project::Layout::runner_inputs`]), which no agent step may change.
fn runner_input(cx: &RunCx) -> impl Fn(&str) -> bool + use<> {
    let root = cx.plan.root.clone();
    let inputs = cx.plan.layout.runner_inputs();
    move |path: &str| {
        let full = root.join(path);
        inputs.iter().any(|input| full.starts_with(input))
    }
}

/// After an unconfined step (`label`, e.g. `turn_1_player`): puts back what it changed of the
/// runner's own inputs in the main checkout ([`model::project::Layout::runner_inputs`]), the
/// step's versions kept under `<run dir>/main-checkout/<label>/`, and returns those as scope
/// violations. Any other change made while the step ran may be the user's own: it is kept,
/// its version from before saved there, and named in a warning.
pub fn restore_main_checkout(
    cx: &mut RunCx,
    guard: Option<&git::CheckoutGuard>,
    label: &str,
) -> Result<Vec<String>, Error> {
    let Some(guard) = guard else {
        return Ok(Vec::new());
    };
    let backup = cx.paths.dir.join("main-checkout").join(label);
    let revert = runner_input(cx);
    let (guarded, now) = guard.restore(&cx.repo, &backup, &revert)?;
    cx.main_checkout = Some(now);
    for kept in guarded.kept {
        cx.emit(EventKind::Warning { message: kept });
    }
    Ok(guarded.reverted)
}
