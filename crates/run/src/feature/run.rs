//! Starting, resuming and completing feature runs: the side effects that follow a successful
//! preflight, in order — discard an earlier run's branches when asked (`--fresh`), take the
//! feature's lock, keep an earlier run's records, create the run directory and the feature
//! branch `autobuild/<FEAT-ID>` from the base, then hand over to the [`Runner`].

use std::fs;
use std::path::{Path, PathBuf};

use crate::engine::cx::now;
use crate::engine::existing::Completed;
use crate::engine::io::Prompter;
use crate::engine::lock::RunLock;
use crate::engine::paths::RunPaths;
use crate::engine::refusal::{Refusal, Subject};
use crate::feature::events::{FeatureIo, Shown};
use crate::feature::finish::{land, write_report};
use crate::feature::merge::{remove_task_branch, task_branch};
use crate::feature::plan::{self, PlannedTask};
use crate::feature::preflight::{preflight, FeatureSetup, Intent};
use crate::feature::report::{render_status, task_infos};
use crate::feature::runner::Runner;
use crate::feature::state::{
    state_file, FeatureSettings, FeatureState, FeatureStatus, TaskRecord, TaskStatus,
    FEATURE_STATE_FILE, FEATURE_STATE_VERSION,
};
use base::error::Error;
use base::Keyword;
use git::Repo;
use model::project::{Config, Layout};
use process::CancelToken;

/// `autobuild feature <ID|PATH>` (`--fresh` discards an earlier run first).
pub fn start(
    root: &Path,
    feature_arg: &str,
    settings: FeatureSettings,
    intent: Intent,
    yes: bool,
    io: FeatureIo,
) -> Result<u8, Error> {
    let setup = preflight(root, feature_arg, settings, intent)?;
    if intent == Intent::Fresh {
        discard_earlier(&setup, yes, &*io.prompter)?;
    }
    let lock = take_lock(&setup.layout, &setup.plan.id)?;
    let paths = RunPaths::new(&setup.runs_dir(), &setup.plan.id);
    if paths.dir.exists() {
        let target = RunPaths::archive_target(&setup.runs_dir(), &setup.plan.id);
        fs::rename(&paths.dir, &target).map_err(|e| Error::io("cannot keep", &paths.dir, e))?;
    }
    fs::create_dir_all(&paths.dir).map_err(|e| Error::io("cannot create", &paths.dir, e))?;
    setup.layout.ensure_gitignore()?;
    let repo = Repo::discover(root)?;
    // The branch's tip is recorded before the branch exists: a branch no record owns is an
    // agent's to the ref guards of other runs.
    let mut state = new_state(&setup);
    state.tip = Some(repo.resolve_base(&setup.base_branch)?);
    let save = |state: &FeatureState| {
        state
            .save(&state_file(&paths))
            .map_err(|e| Error::io("cannot write", state_file(&paths), e))
    };
    save(&state)?;
    let tip = repo.create_branch(&setup.branch, &setup.base_branch)?;
    if state.tip.as_deref() != Some(tip.as_str()) {
        state.tip = Some(tip);
        save(&state)?;
    }
    Runner::new(setup, state, paths, io, lock, false)?.run()
}

/// `autobuild feature <ID> --resume` (with the flags given now) and `autobuild resume <ID>`
/// (with the flags the run started with, `settings` = `None`).
pub fn resume(
    root: &Path,
    feature_arg: &str,
    settings: Option<FeatureSettings>,
    io: FeatureIo,
) -> Result<u8, Error> {
    let (paths, state) = load_state(root, feature_arg)?;
    match state.status {
        FeatureStatus::Merged | FeatureStatus::Discarded => {
            return Err(Error::usage(format!(
                "the run of {} ended {}; there is nothing to resume",
                state.feature_id,
                state.status.as_str()
            ))
            .with_help(format!(
                "start a new run with `autobuild feature {}`",
                state.feature_id
            )))
        }
        FeatureStatus::Approved => {
            return Err(Error::usage(format!(
                "every task of {} is approved and on {}",
                state.feature_id, state.branch
            ))
            .with_help(format!(
                "merge it with `autobuild complete {}`",
                state.feature_id
            )))
        }
        _ => {}
    }
    let mut settings = settings.unwrap_or_else(|| state.settings.clone());
    settings.run.base_branch = state.settings.run.base_branch.clone();
    let file = root.join(&state.file);
    let file_arg = if file.is_file() {
        file.display().to_string()
    } else {
        feature_arg.to_string()
    };
    let setup = preflight(root, &file_arg, settings, Intent::Resume)?;
    if setup.plan.id != state.feature_id {
        return Err(Error::usage(format!(
            "{} now declares the id `{}`, but its run is {}",
            state.file.display(),
            setup.plan.id,
            state.feature_id
        )));
    }
    let lock = take_lock(&setup.layout, &setup.plan.id)?;
    for note in finish_interrupted_landings(root)? {
        (io.warn)(&note);
    }
    let state = reconcile(state, &setup);
    state
        .save(&state_file(&paths))
        .map_err(|e| Error::io("cannot write", state_file(&paths), e))?;
    Runner::new(setup, state, paths, io, lock, true)?.run()
}

/// `autobuild complete <FEAT-ID>`: merges an approved feature into its base.
pub fn complete(root: &Path, feature_id: &str) -> Result<Completed, Error> {
    let (paths, mut state) = load_state(root, feature_id)?;
    refuse_unless_approved(&state, &Layout::new(root))?;
    let layout = Layout::new(root);
    let _lock = take_lock(&layout, feature_id)?;
    let strategy = Config::load(&layout)?
        .project
        .merge_strategy
        .unwrap_or_default();
    let titles = state
        .tasks
        .iter()
        .map(|(id, record)| (id.clone(), record.title.clone()))
        .collect();
    let warnings = finish_interrupted_landings(root)?;
    let repo = Repo::discover(root)?;
    let commit = land(&repo, &layout.runs(), &mut state, &titles, strategy)?;
    state.status = FeatureStatus::Merged;
    state.merged_commit = Some(commit.clone());
    state.message = Some(crate::feature::report::outcome_message(&state));
    state.updated_at = now();
    state
        .save(&state_file(&paths))
        .map_err(|e| Error::io("cannot write", state_file(&paths), e))?;
    write_report(&state, &layout.runs(), &paths)?;
    Ok(Completed {
        branch: state.branch,
        base_branch: state.base_branch,
        commit,
        warnings,
        notes: Vec::new(),
    })
}

/// `autobuild complete <FEAT-ID> --pr`: pushes an approved feature's branch and opens (or
/// updates) its pull request; nothing is merged locally.
pub fn complete_as_pr(root: &Path, feature_id: &str) -> Result<crate::forge::PullRequest, Error> {
    let (paths, mut state) = load_state(root, feature_id)?;
    refuse_unless_approved(&state, &Layout::new(root))?;
    let layout = Layout::new(root);
    let _lock = take_lock(&layout, feature_id)?;
    let config = Config::load(&layout)?;
    let repo = Repo::discover(root)?;
    let pr = crate::feature::finish::open_pr(&repo, &layout.runs(), &mut state, &config)?;
    state.message = Some(crate::feature::report::outcome_message(&state));
    state.updated_at = now();
    state
        .save(&state_file(&paths))
        .map_err(|e| Error::io("cannot write", state_file(&paths), e))?;
    write_report(&state, &layout.runs(), &paths)?;
    Ok(pr)
}

/// `complete` lands only an approved feature. A record that says `running` while nothing runs
/// it (a killed run, or one landed task by task from CI) is called what it is: unfinished,
/// naming the tasks not on the feature branch yet.
fn refuse_unless_approved(state: &FeatureState, layout: &Layout) -> Result<(), Error> {
    let id = &state.feature_id;
    let status = match state.status {
        FeatureStatus::Approved => return Ok(()),
        FeatureStatus::Running if crate::engine::lock::holder(&layout.runs(), id).is_none() => {
            let missing: Vec<String> = state
                .tasks
                .iter()
                .filter(|(_, t)| !t.status.is_landed())
                .map(|(task, t)| format!("{task} ({})", t.status.as_str()))
                .collect();
            format!(
                "unfinished (nothing is running it; not on {} yet: {})",
                state.branch,
                missing.join(", ")
            )
        }
        other => other.as_str().to_string(),
    };
    Err(Error::usage(format!(
        "the run of {id} is {status}, not approved; only a feature whose tasks are all approved can be completed"
    ))
    .with_help(format!(
        "`autobuild status {id}` shows each task; `autobuild resume {id}` goes on with a local run"
    )))
}

/// A feature killed while landing (a task on the feature branch, the feature on the base) may
/// have moved a branch without bringing its checkout up to date; that is finished first.
fn finish_interrupted_landings(root: &Path) -> Result<Vec<String>, Error> {
    Ok(Repo::discover(root)?.finish_interrupted_landings()?)
}

/// `autobuild status <FEAT-ID>`.
pub fn status(root: &Path, feature_id: &str) -> Result<Shown, Error> {
    let (paths, state) = load_state(root, feature_id)?;
    let infos = task_infos(&Layout::new(root).runs(), &state);
    let shown = paths.dir.strip_prefix(root).unwrap_or(&paths.dir);
    Ok(Shown {
        lines: vec![render_status(&state, &infos, shown)],
        ..Shown::default()
    })
}

/// `autobuild report <FEAT-ID>`: writes the feature's report.md and report.html again.
pub fn report(root: &Path, feature_id: &str) -> Result<PathBuf, Error> {
    let (paths, state) = load_state(root, feature_id)?;
    write_report(&state, &Layout::new(root).runs(), &paths)
}

/// Whether `.autobuild/runs/<id>/` holds a feature run (rather than a task run).
pub fn is_feature_run(root: &Path, id: &str) -> bool {
    Layout::new(root)
        .run_dir(id)
        .join(FEATURE_STATE_FILE)
        .is_file()
}

/// The run directory and `feature.json` of the feature named by id (or by its file).
fn load_state(root: &Path, feature_arg: &str) -> Result<(RunPaths, FeatureState), Error> {
    let runs = Layout::new(root).runs();
    let id = if is_feature_run(root, feature_arg) {
        feature_arg.to_string()
    } else {
        plan::load(root, feature_arg)?.id
    };
    let paths = RunPaths::new(&runs, &id);
    let state = FeatureState::load(&state_file(&paths)).map_err(|e| {
        Error::usage(format!(
            "no run of feature {id} here ({}: {e})",
            state_file(&paths).display()
        ))
        .with_help(format!("start one with `autobuild feature {id}`"))
    })?;
    Ok((paths, state))
}

fn take_lock(layout: &Layout, feature_id: &str) -> Result<RunLock, Error> {
    RunLock::acquire(&layout.runs(), feature_id)
        .map_err(|e| Refusal::lock(Subject::Feature(feature_id.to_string()), e))
}

/// `--fresh`: deletes the feature branch and the branches and worktrees of the feature's
/// tasks, after a confirmation (or `--yes`). Records are kept.
fn discard_earlier(setup: &FeatureSetup, yes: bool, prompter: &dyn Prompter) -> Result<(), Error> {
    let repo = Repo::discover(&setup.plan.root)?;
    let task_branches: Vec<(String, std::path::PathBuf)> = setup
        .plan
        .tasks
        .iter()
        .map(|t| (task_branch(t.id()), setup.layout.worktree(t.id())))
        .filter(|(branch, worktree)| repo.branch_exists(branch) || worktree.exists())
        .collect();
    if !setup.branch_exists && task_branches.is_empty() {
        return Ok(());
    }
    let mut doomed: Vec<String> = task_branches.iter().map(|(b, _)| b.clone()).collect();
    if setup.branch_exists {
        doomed.insert(0, setup.branch.clone());
    }
    if !yes {
        if !prompter.is_interactive() {
            return Err(Error::usage(format!(
                "--fresh would delete {} and their unmerged work",
                doomed.join(", ")
            ))
            .with_help("add --yes to confirm without a terminal"));
        }
        let question = format!(
            "Discard {} and their worktrees (unmerged work is lost)?",
            doomed.join(", ")
        );
        if prompter.confirm(&question, &CancelToken::new()) != Some(true) {
            return Err(Error::usage(
                "kept the existing branches; nothing was changed",
            ));
        }
    }
    for (branch, worktree) in &task_branches {
        remove_task_branch(&repo, worktree, branch, &setup.base_branch, None)?;
    }
    if setup.branch_exists {
        repo.delete_branch(&setup.branch, &setup.base_branch, true)?;
    }
    Ok(())
}

fn new_state(setup: &FeatureSetup) -> FeatureState {
    state_for(
        &setup.plan,
        &setup.base_branch,
        &setup.branch,
        setup.settings.clone(),
    )
}

/// A new feature run's state: every task of `plan` pending.
pub(crate) fn state_for(
    plan: &plan::FeaturePlan,
    base_branch: &str,
    branch: &str,
    settings: FeatureSettings,
) -> FeatureState {
    let started = now();
    FeatureState {
        version: FEATURE_STATE_VERSION,
        feature_id: plan.id.clone(),
        name: plan.name.clone(),
        file: plan.file.clone(),
        status: FeatureStatus::Running,
        started_at: started.clone(),
        updated_at: started,
        base_branch: base_branch.to_string(),
        branch: branch.to_string(),
        settings,
        waves: plan.waves.clone(),
        tasks: plan
            .tasks
            .iter()
            .map(|t| {
                (
                    t.id().to_string(),
                    TaskRecord {
                        title: t.task.title.clone(),
                        wave: t.wave + 1,
                        ..done_record(t).unwrap_or_default()
                    },
                )
            })
            .collect(),
        conflict: None,
        message: None,
        merged_commit: None,
        tip: None,
        violations: Vec::new(),
        integration: Vec::new(),
        journal_seq: 0,
        separated: plan.separated.clone(),
        history: Vec::new(),
        pr: None,
        trace_id: None,
    }
}

/// The record of a task the plan found done before the feature ran.
fn done_record(task: &PlannedTask) -> Option<TaskRecord> {
    let state = task.done.as_ref()?;
    Some(TaskRecord {
        status: TaskStatus::Done,
        message: Some(format!(
            "done before this feature ran ({state}: {}); not run again",
            task.task.path.display()
        )),
        ..TaskRecord::default()
    })
}

/// The recorded run, brought up to date with the feature file as it is now: waves as planned
/// now, tasks added since are pending, tasks removed since are dropped; each task keeps its
/// recorded status, which decides what happens to it.
fn reconcile(mut state: FeatureState, setup: &FeatureSetup) -> FeatureState {
    let mut old = std::mem::take(&mut state.tasks).into_map();
    state.tasks = setup
        .plan
        .tasks
        .iter()
        .map(|t| {
            let record = old.remove(t.id()).unwrap_or_default();
            // A task that never ran here and is done now (moved to `completed/` since) is
            // done; one that ran keeps its record (its branch and run are still there).
            let record = match (record.status, done_record(t)) {
                (TaskStatus::Pending | TaskStatus::Skipped, Some(done)) => done,
                _ => record,
            };
            (
                t.id().to_string(),
                TaskRecord {
                    title: t.task.title.clone(),
                    wave: t.wave + 1,
                    ..record
                },
            )
        })
        .collect();
    state.waves = setup.plan.waves.clone();
    state.separated = setup.plan.separated.clone();
    state.name = setup.plan.name.clone();
    state.file = setup.plan.file.clone();
    state.settings = setup.settings.clone();
    state.status = FeatureStatus::Running;
    state.conflict = None;
    state.message = None;
    state
}
