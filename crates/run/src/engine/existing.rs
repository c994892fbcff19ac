//! The operations on a task run that exists, for the commands that act on it by id (`status`,
//! `complete`, `discard`, `logs`, `report`, `approve`): finding its directory and record,
//! landing it, opening its pull request, discarding it, recording a person's answer and
//! writing its reports again. Each returns what it did as data; the command line presents it.
//!
//! The command line checks the id first (before anything is read, it must be a task or feature
//! id or an earlier run's `<ID>@<N>` whose directory is inside `.autobuild/runs/`, see
//! [`crate::engine::paths`]). A run record whose `task_id` is not the run's own is not acted on
//! either: `complete` and `discard` change the branch it names.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::engine::cx::now;
use crate::engine::exec::{merge_run, refused_secrets, MergeRequest, StateJournal};
use crate::engine::io::Prompter;
use crate::engine::lock::RunLock;
use crate::engine::paths::{run_owner, RunPaths};
use crate::engine::refusal::{Refusal, Subject};
use crate::engine::state::{unreadable_record, write_json_atomic, Answer, RunState, RunStatus};
use crate::engine::Outcome;
use crate::forge::PullRequest;
use base::error::Error;
use git::Repo;
use model::project::{Config, Layout};
use process::CancelToken;

/// A run found by its id: the repository root, its directory and its record.
pub struct Located {
    pub root: PathBuf,
    pub paths: RunPaths,
    pub state: RunState,
}

/// The run `task_id` (a task id or `<ID>@<N>`) of the repository at `root`; a feature's id is
/// refused, and so is a record of another task.
pub fn locate_run(root: &Path, task_id: &str) -> Result<Located, Error> {
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
        return Err(Error::from(base::diagnostic::Diagnostic::new(
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
pub fn locate_owned_run(root: &Path, run_id: &str) -> Result<Located, Error> {
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

/// The reports a refresh wrote.
pub struct Written {
    /// `None` while the run has no outcome yet: report.md describes a finished run.
    pub markdown: Option<PathBuf>,
    pub html: PathBuf,
}

/// Writes the reports of the task run in `paths` as `state` says it stands; `held` says a live
/// process holds the run (it is running, not interrupted). `complete` and `discard` call it
/// too, so the reports never go on saying "not merged yet" or "worktree preserved" after the
/// run has moved on.
pub fn write_reports(paths: &RunPaths, state: &RunState, held: bool) -> Result<Written, Error> {
    match &state.outcome {
        Some(recorded) if state.status != RunStatus::Running => {
            let outcome = crate::report::outcome::with_transcript(recorded, &paths.logs());
            let markdown = crate::engine::exec::write_report(paths, state, &outcome)?;
            Ok(Written {
                markdown: Some(markdown),
                html: crate::report::html_path(paths),
            })
        }
        _ => {
            let outcome = crate::report::recorded_outcome(state, held);
            Ok(Written {
                markdown: None,
                html: crate::report::write_run(paths, state, &outcome, None)?,
            })
        }
    }
}

/// What `complete` did (a task's or a feature's run; `complete --json` prints it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Completed {
    /// The branch that landed (`autobuild/<ID>`, or the feature branch; removed since).
    pub branch: String,
    pub base_branch: String,
    /// The commit `base_branch` points to now.
    pub commit: String,
    /// Things to know: landings a kill had interrupted, finished first; reports that could not
    /// be brought up to date.
    pub warnings: Vec<String>,
    /// What the landing did besides (a GuardKit task file moved to `completed/`).
    pub notes: Vec<String>,
}

/// `autobuild complete <ID>`: merges the approved run `task_id`, left for later, into its base.
pub fn complete(
    root: &Path,
    task_id: &str,
    allow_secret_in_diff: bool,
) -> Result<Completed, Error> {
    let (mut run, _lock) = approved_run(root, task_id)?;
    let config = Config::load(&Layout::new(&run.root))?;
    let strategy = run
        .state
        .merge_strategy
        .or(config.project.merge_strategy)
        .unwrap_or_default();
    let secrets = refused_secrets(
        &config.env.vars.clone().into_iter().collect::<Vec<_>>(),
        allow_secret_in_diff || run.state.settings.allow_secret_in_diff,
    );
    let request = MergeRequest::of_run(task_id, &run.root, &run.state, strategy, secrets);
    let mut landed = merge_run(
        &run.root,
        &request,
        &mut StateJournal {
            state: &mut run.state,
            path: run.paths.state(),
        },
    )?;
    let outcome = Outcome::Approved { merged: true };
    run.state.pending = None;
    run.state.status = outcome.status();
    run.state.outcome = Some(outcome);
    landed.warnings.extend(save_and_report(&mut run)?);
    Ok(Completed {
        branch: request.branch,
        base_branch: request.base,
        commit: landed.commit,
        warnings: landed.warnings,
        notes: landed.notes,
    })
}

/// `complete <ID> --pr`: the approved run's branch is pushed and its pull request opened (or
/// updated); nothing is merged locally. Also returns warnings about its reports.
pub fn complete_as_pr(root: &Path, task_id: &str) -> Result<(PullRequest, Vec<String>), Error> {
    let (mut run, _lock) = approved_run(root, task_id)?;
    let repo = Repo::discover(&run.root)?;
    let layout = Layout::new(&run.root);
    let config = Config::load(&layout)?;
    let pr = crate::engine::exec::pull_request::land_as_pr(
        &repo,
        &layout.runs(),
        &run.paths,
        &mut run.state,
        &config,
    )?;
    let warnings = save_and_report(&mut run)?;
    Ok((pr, warnings))
}

/// The approved run of `task_id` and its task's lock, for `complete`: a merged or unapproved
/// run is refused.
fn approved_run(root: &Path, task_id: &str) -> Result<(Located, RunLock), Error> {
    let run = locate_owned_run(root, task_id)?;
    if run.state.status == RunStatus::Merged {
        return Err(Refusal::AlreadyMerged {
            id: task_id.to_string(),
            base: run.state.base_branch,
        }
        .into());
    }
    if run.state.status != RunStatus::Approved {
        return Err(Refusal::NotApproved {
            id: task_id.to_string(),
            status: run.state.status,
        }
        .into());
    }
    let lock = task_lock(&run.root, task_id)?;
    Ok((run, lock))
}

/// The lock of the task `run_id` belongs to: an earlier run (`TASK@1`) names the same branch as
/// the current one, which a live run of the task may be working on.
fn task_lock(root: &Path, run_id: &str) -> Result<RunLock, Error> {
    let task = run_owner(run_id);
    RunLock::acquire(&Layout::new(root).runs(), task)
        .map_err(|e| Refusal::lock(Subject::Task(task.to_string()), e))
}

/// Saves a run that `complete` or `discard` just changed and brings its reports up to date.
/// The change itself is done by then, so a report that cannot be written is a warning.
fn save_and_report(run: &mut Located) -> Result<Vec<String>, Error> {
    run.state.updated_at = now();
    let path = run.paths.state();
    run.state
        .save(&path)
        .map_err(|e| Error::io("cannot write", &path, e))?;
    Ok(match write_reports(&run.paths, &run.state, false) {
        Ok(_) => Vec::new(),
        Err(e) => vec![format!(
            "the run's reports were not brought up to date: {e}"
        )],
    })
}

/// What `discard` did (`discard --json` prints it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Discarded {
    pub branch: String,
    /// False when the branch and worktree were already gone (nothing was done).
    pub discarded: bool,
    /// The run's records, kept.
    pub records: PathBuf,
    /// Reports that could not be brought up to date.
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// `autobuild discard <ID>`: removes a run's worktree and branch (its records are kept), after
/// `prompter` confirmed it unless `yes`.
pub fn discard(
    root: &Path,
    task_id: &str,
    yes: bool,
    prompter: &dyn Prompter,
) -> Result<Discarded, Error> {
    let mut run = locate_owned_run(root, task_id)?;
    let _lock = task_lock(&run.root, task_id)?;
    let repo = Repo::discover(&run.root)?;
    let branch = run.state.branch.clone();
    let task_repo = git::task_repo::of_worktree(&run.state.worktree);
    let has_branch = repo.branch_exists(&branch);
    let mut result = Discarded {
        branch: branch.clone(),
        discarded: false,
        records: run.paths.dir.clone(),
        warnings: Vec::new(),
    };
    if !has_branch && !run.state.worktree.exists() && task_repo.is_none() {
        return Ok(result);
    }
    if !yes {
        if !prompter.is_interactive() {
            return Err(Refusal::DeleteUnconfirmed {
                branch,
                fresh: false,
            }
            .into());
        }
        let question = format!("Delete {branch} and its worktree? Unmerged work is lost.");
        if prompter.confirm(&question, &CancelToken::new()) != Some(true) {
            return Err(Refusal::DeleteDeclined { fresh: false }.into());
        }
    }
    if let Some(dir) = &task_repo {
        // A run with hidden paths: its worktree and branch are the task repository's.
        for dir in [&run.state.worktree, dir] {
            if dir.exists() {
                std::fs::remove_dir_all(dir).map_err(|e| Error::io("cannot remove", dir, e))?;
            }
        }
    } else if run.state.worktree.exists() {
        repo.remove_worktree(&run.state.worktree, &branch)?;
    }
    if has_branch {
        repo.delete_branch(&branch, &run.state.base_branch, true)?;
    }
    run.state.status = RunStatus::Discarded;
    result.warnings = save_and_report(&mut run)?;
    result.discarded = true;
    Ok(result)
}

/// `autobuild approve <ID>` / `reject <ID>`: saves a person's `answer` to the run `task_id`
/// waiting at an `approval` step, under its lock (`merge`: it merges without asking); the
/// caller then resumes it. Returns the run.
pub fn record_answer(
    root: &Path,
    task_id: &str,
    mut answer: Answer,
    merge: bool,
) -> Result<Located, Error> {
    let mut run = locate_owned_run(root, task_id)?;
    if run.state.status != RunStatus::Waiting {
        return Err(Refusal::NotWaiting {
            id: task_id.to_string(),
            status: run.state.status,
            approve: answer.approved,
        }
        .into());
    }
    if !answer.approved && answer.reason.trim().is_empty() {
        return Err(Refusal::RejectionWithoutReason.into());
    }
    let _lock = RunLock::acquire(&Layout::new(root).runs(), task_id)
        .map_err(|e| Refusal::lock(Subject::Task(task_id.to_string()), e))?;
    answer.person = git::person(root).unwrap_or_default();
    answer.at = now();
    run.state.answer = Some(answer);
    if merge {
        run.state.settings.auto_merge = true;
        run.state.settings.no_merge = false;
    }
    let path = run.paths.state();
    write_json_atomic(&path, &run.state).map_err(|e| Error::io("cannot write", &path, e))?;
    Ok(run)
}
