//! Starting and resuming runs: the side effects that follow a successful preflight, in order —
//! discard an old branch when asked (`--fresh`), take the task's lock, keep an earlier run's
//! records, create the run directory, then hand over to the interpreter and record the outcome.

use std::fs;
use std::path::Path;

use crate::engine::cx::{now, RunCx};
use crate::engine::events::{EventKind, EventLog};
use crate::engine::exec::write_report;
use crate::engine::interpreter::Interpreter;
use crate::engine::io::{Prompter, RunIo};
use crate::engine::lock::RunLock;
use crate::engine::outcome::Outcome;
use crate::engine::paths::RunPaths;
use crate::engine::plan::{preflight, BranchPolicy, Plan};
use crate::engine::refusal::{Refusal, Subject};
use crate::engine::reopen::reopen;
use crate::engine::state::{RunSettings, RunState, RunStatus, STATE_VERSION};
use base::error::Error;
use git::Repo;
use process::CancelToken;

/// How `autobuild task` treats an existing branch, and the run's connections to the world.
pub struct StartOptions {
    pub policy: BranchPolicy,
    /// `--yes`: do not ask before discarding with `--fresh`.
    pub yes: bool,
    /// `--moved-checkout`: a kept run made in another checkout of this repository is taken
    /// over ([`crate::engine::owned::take_over`]).
    pub moved_checkout: bool,
    pub io: RunIo,
}

/// Runs a task from the start (or continues it on its branch with `--resume`).
pub fn start(
    root: &Path,
    task_arg: &str,
    settings: RunSettings,
    options: StartOptions,
) -> Result<Outcome, Error> {
    let plan = preflight(root, task_arg, settings, options.policy)?;
    plan.ensure_startable()?;
    let paths = RunPaths::new(&plan.layout.runs(), &plan.task.id);
    if options.policy == BranchPolicy::Resume {
        if let Ok(mut state) = RunState::load(&paths.state()) {
            let mut notes = Vec::new();
            if options.moved_checkout {
                notes.extend(take_over(&plan, &mut state));
            }
            if state.status.is_resumable() {
                return continue_run(&plan, paths, state, options.io, notes);
            }
            if let Some(note) = reopen(&mut state, &plan.resolved.workflow) {
                notes.push(note);
                return continue_run(&plan, paths, state, options.io, notes);
            }
        }
    }
    let repo = Repo::discover(root)?;
    if options.policy == BranchPolicy::Fresh && plan.branch_exists {
        discard_branch(&repo, &plan, options.yes, options.io.prompter.as_ref())?;
    }
    let lock = take_lock(&plan)?;
    if paths.dir.exists() {
        let target = RunPaths::archive_target(&plan.layout.runs(), &plan.task.id);
        fs::rename(&paths.dir, &target).map_err(|e| Error::io("cannot keep", &paths.dir, e))?;
    }
    create_run_dir(&plan, &paths)?;
    let state = new_state(&plan);
    state
        .save(&paths.state())
        .map_err(|e| Error::io("cannot write", paths.state(), e))?;
    run_interpreter(
        &plan,
        paths,
        state,
        repo,
        options.io,
        lock,
        Session::default(),
    )
}

/// `autobuild replay`: a new run of `plan` in `paths` whose agents the recorded run's stand in
/// for (module [`crate::engine::replay`]).
pub(crate) fn replay_run(
    plan: &Plan,
    paths: RunPaths,
    repo: Repo,
    io: RunIo,
    lock: RunLock,
    recorded: std::sync::Arc<crate::engine::replay::Recorded>,
) -> Result<Outcome, Error> {
    create_run_dir(plan, &paths)?;
    let state = new_state(plan);
    state
        .save(&paths.state())
        .map_err(|e| Error::io("cannot write", paths.state(), e))?;
    run_interpreter(
        plan,
        paths,
        state,
        repo,
        io,
        lock,
        Session {
            notes: Vec::new(),
            replay: Some(recorded),
        },
    )
}

/// Re-roots a run kept in another checkout here; its `worktree` steps run again, so the
/// worktree is added back on the kept branch in this checkout. The note says so.
fn take_over(plan: &Plan, state: &mut RunState) -> Option<String> {
    let other = crate::engine::owned::take_over(state, &plan.layout, &plan.task.id)?;
    for step in &plan.resolved.workflow.steps {
        if matches!(step.action, model::workflow::model::Action::Worktree(_)) {
            state.completed.remove(&step.id);
        }
    }
    Some(format!(
        "took over the run kept in {} (another checkout of this repository); its worktree is added again here",
        other.display()
    ))
}

/// `autobuild resume <ID>`: continues an interrupted run from its last completed step.
pub fn resume(root: &Path, task_id: &str, io: RunIo) -> Result<Outcome, Error> {
    let layout = model::project::Layout::new(root);
    let paths = RunPaths::new(&layout.runs(), task_id);
    if !paths.state().exists() {
        return Err(Refusal::NothingToResume {
            id: task_id.to_string(),
        }
        .into());
    }
    let state = RunState::load(&paths.state())
        .map_err(|e| crate::engine::state::unreadable_record(&paths.state(), &e, task_id))?;
    crate::engine::owned::ensure_owned(&state, &paths, &layout, task_id)?;
    if !state.status.is_resumable() {
        return Err(Refusal::NotInterrupted {
            id: task_id.to_string(),
            status: state.status,
        }
        .into());
    }
    let task_arg = state.task_path.display().to_string();
    let mut settings = state.settings.clone();
    // The run keeps the base it started from, whatever is checked out now.
    settings
        .base_branch
        .get_or_insert_with(|| state.base_branch.clone());
    let plan = preflight(root, &task_arg, settings, BranchPolicy::Resume)?;
    plan.ensure_startable()?;
    continue_run(&plan, paths, state, io, Vec::new())
}

fn continue_run(
    plan: &Plan,
    paths: RunPaths,
    mut state: RunState,
    io: RunIo,
    mut notes: Vec<String>,
) -> Result<Outcome, Error> {
    crate::engine::owned::ensure_owned(&state, &paths, &plan.layout, &plan.task.id)?;
    let lock = take_lock(plan)?;
    let repo = Repo::discover(&plan.root)?;
    if state.workflow_hash != plan.resolved.hash {
        notes.push(format!(
            "the workflow changed since the run started; continuing with the current one ({})",
            plan.resolved.workflow.name
        ));
        state.workflow_hash = plan.resolved.hash.clone();
    }
    // A continued run may be confined differently (another machine, bwrap installed since).
    let confined = Some(plan.sandbox.record());
    if state.sandbox.is_some() && state.sandbox != confined {
        notes.push(format!(
            "the sandbox changed since the run started; continuing with {}",
            plan.sandbox.record()
        ));
    }
    state.sandbox = confined;
    notes.extend(crate::engine::recover::recover(&repo, &paths, &state)?);
    let session = Session {
        notes,
        replay: None,
    };
    run_interpreter(plan, paths, state, repo, io, lock, session)
}

/// What a session of a run starts with besides its plan, records and connections.
#[derive(Default)]
struct Session {
    /// Shown as warnings once the run has started (a take-over, a changed workflow).
    notes: Vec<String>,
    /// `autobuild replay`: the recorded agents that stand in for the adapters.
    replay: Option<std::sync::Arc<crate::engine::replay::Recorded>>,
}

fn run_interpreter(
    plan: &Plan,
    paths: RunPaths,
    state: RunState,
    repo: Repo,
    io: RunIo,
    _lock: RunLock,
    session: Session,
) -> Result<Outcome, Error> {
    let Session { notes, replay } = session;
    let resumed = !state.completed.is_empty();
    let events =
        EventLog::open(&paths.events()).map_err(|e| Error::io("cannot open", paths.events(), e))?;
    let mut project_env = plan.project_env(&plan.worktree);
    // Agents' own bash tools source the project's setup through BASH_ENV (parity).
    let bash_env = paths.dir.join("env_setup.sh");
    project_env
        .write_bash_env(&bash_env)
        .map_err(|e| Error::io("cannot write", &bash_env, e))?;
    let mut cx = RunCx::new(plan, paths, state, repo, project_env, events, io);
    cx.replay = replay;
    cx.emit(EventKind::RunStarted {
        task: plan.task.id.clone(),
        title: plan.task.title.clone(),
        workflow: plan.resolved.workflow.name.clone(),
        // A continued blocked run counts on from the turns it already ran.
        max_turns: cx.state.max_turns.max(plan.max_turns),
        resumed,
    });
    for message in plan.warnings.iter().cloned().chain(notes) {
        cx.emit(EventKind::Warning { message });
    }
    let outcome = Interpreter::new(&mut cx).run()?;
    finish(&mut cx, &outcome)?;
    Ok(outcome)
}

/// Records the outcome, makes sure a report exists, and says where everything is.
fn finish(cx: &mut RunCx, outcome: &Outcome) -> Result<(), Error> {
    cx.state.status = outcome.status();
    cx.state.outcome = Some(outcome.clone());
    cx.save_state()?;
    let report = write_report(&cx.paths, &cx.state, outcome)?;
    let merged = matches!(outcome, Outcome::Approved { merged: true });
    let worktree = (!merged)
        .then(|| cx.state.worktree.clone())
        .filter(|w| w.exists());
    cx.emit(EventKind::RunFinished {
        outcome: outcome.name().to_string(),
        exit_code: outcome.exit_code(),
        message: outcome.to_string(),
        report: Some(report),
        worktree,
        branch: cx.state.branch.clone(),
        landed: cx.state.landed.clone().filter(|_| merged),
    });
    trace(cx, outcome);
    Ok(())
}

/// Exports the session as spans of the run's trace when OTLP is configured (module
/// [`crate::otel`]); what goes wrong is a warning.
fn trace(cx: &mut RunCx, outcome: &Outcome) {
    let roles = cx
        .plan
        .resolved
        .workflow
        .roles
        .iter()
        .map(|(name, role)| (name.clone(), (role.agent.to_string(), role.model.clone())))
        .collect();
    let before = cx.state.trace_id.clone();
    let exported = crate::otel::export_run(&cx.paths, &mut cx.state, &roles, outcome.name());
    // A first export made the run's trace: it is recorded for the sessions after this one.
    if cx.state.trace_id != before {
        if let Err(error) = cx.save_state() {
            tracing::warn!("cannot record the trace id: {error}");
        }
    }
    if let Err(why) = exported {
        cx.emit(EventKind::Warning {
            message: format!("the run's trace was not exported: {why}"),
        });
    }
}

fn take_lock(plan: &Plan) -> Result<RunLock, Error> {
    RunLock::acquire(&plan.layout.runs(), &plan.task.id)
        .map_err(|e| Refusal::lock(Subject::Task(plan.task.id.clone()), e))
}

fn discard_branch(
    repo: &Repo,
    plan: &Plan,
    yes: bool,
    prompter: &dyn Prompter,
) -> Result<(), Error> {
    let question = format!(
        "Discard branch {} and its worktree (unmerged work is lost)?",
        plan.branch
    );
    if !yes {
        if !prompter.is_interactive() {
            return Err(Refusal::DeleteUnconfirmed {
                branch: plan.branch.clone(),
                fresh: true,
            }
            .into());
        }
        if prompter.confirm(&question, &CancelToken::new()) != Some(true) {
            return Err(Refusal::DeleteDeclined { fresh: true }.into());
        }
    }
    if let Some(task_repo) = plan.task_repo().filter(|dir| dir.exists()) {
        // The worktree belongs to the task repository: both go, and the user's branch only
        // when an earlier landing left one.
        for dir in [&plan.worktree, &task_repo] {
            if dir.exists() {
                fs::remove_dir_all(dir).map_err(|e| Error::io("cannot remove", dir, e))?;
            }
        }
        if !repo.branch_exists(&plan.branch) {
            return Ok(());
        }
    } else if plan.worktree.exists() {
        repo.remove_worktree(&plan.worktree, &plan.branch)?;
    }
    repo.delete_branch(&plan.branch, &plan.base_branch, true)
        .map_err(Error::from)
}

fn create_run_dir(plan: &Plan, paths: &RunPaths) -> Result<(), Error> {
    for dir in [paths.dir.clone(), paths.prompts(), paths.logs()] {
        fs::create_dir_all(&dir).map_err(|e| Error::io("cannot create", &dir, e))?;
    }
    plan.layout.ensure_gitignore()?;
    fs::write(paths.workflow_resolved(), &plan.resolved.toml)
        .map_err(|e| Error::io("cannot write", paths.workflow_resolved(), e))?;
    fs::write(paths.workflow_hash(), format!("{}\n", plan.resolved.hash))
        .map_err(|e| Error::io("cannot write", paths.workflow_hash(), e))
}

fn new_state(plan: &Plan) -> RunState {
    let started = now();
    RunState {
        locked: Vec::new(),
        provisioned: None,
        version: STATE_VERSION,
        task_id: plan.task.id.clone(),
        task_path: plan.task.path.clone(),
        title: plan.task.title.clone(),
        workflow: plan.resolved.workflow.name.clone(),
        workflow_hash: plan.resolved.hash.clone(),
        status: RunStatus::Running,
        started_at: started.clone(),
        updated_at: started,
        base_branch: plan.base_branch.clone(),
        branch: plan.branch.clone(),
        worktree: plan.worktree.clone(),
        settings: plan.settings.clone(),
        max_turns: plan.max_turns,
        completed: Default::default(),
        loops: Default::default(),
        last_checkpoint: None,
        cost_usd: 0.0,
        cost_estimated: false,
        cost_reported: false,
        tokens_in: 0,
        tokens_cached: 0,
        tokens_cache_written: 0,
        tokens_out: 0,
        outcome: None,
        merge_strategy: None,
        elapsed_ms: 0,
        pending: None,
        landed: None,
        sandbox: Some(plan.sandbox.record()),
        answer: None,
        signoffs: Vec::new(),
        transplanted: None,
        pr: None,
        trace_id: None,
    }
}
