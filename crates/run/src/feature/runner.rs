//! Running a feature's waves. Each wave's runnable tasks run the task workflow through the
//! engine, each in its own worktree branched from the feature branch's tip at wave start and in
//! its own thread, at most N at once; their events flow over a channel to this thread, which
//! owns the display and `feature.json`. After the wave, approved tasks are squashed onto the
//! feature branch in wave order; a conflict stops the feature.
//!
//! A task run ends only when its engine run ends — the engine's own timeouts stop its agent
//! processes — and the runner waits for every task thread before it finishes, so nothing keeps
//! running after the feature ends. Ctrl-C cancels every running task (each engine run listens
//! for it) and starts nothing new; with `--stop-on-failure` no task starts after the first
//! failure, and tasks already running finish their run. A task whose agent cannot authenticate,
//! is out of credit or names an unknown model stops the feature the same way, flag or not:
//! every later task would fail at its first agent step for the same reason.
//!
//! After a wave's merges, the feature branch's tip is checked ([`integrate`]); a failed
//! integration check stops the feature before the next wave, and nothing lands on the base.

mod integrate;

use std::collections::{HashMap, VecDeque};
use std::sync::mpsc::{self, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::engine::cx::now;
use crate::engine::io::{cancel_on_signals, Prompter};
use crate::engine::lock::RunLock;
use crate::engine::paths::RunPaths;
use crate::engine::plan::BranchPolicy;
use crate::engine::state::{RunState, RunStatus};
use crate::engine::Outcome;
use crate::feature::events::{FeatureEvent, FeatureEventKind, FeatureIo, FeatureLog, FeatureSink};
use crate::feature::finish::{feature_exit_code, land, open_pr, write_report};
use crate::feature::merge::{approved_commit, merge_task, record_merge, ApprovedTask};
use crate::feature::preflight::FeatureSetup;
use crate::feature::report::outcome_message;
use crate::feature::schedule::{decide, parallelism, Action, PriorRun};
use crate::feature::state::{
    state_file, FeatureFile, FeatureState, FeatureStatus, HistoryEntry, TaskStatus,
};
use crate::feature::task_thread::{past_worktree, spawn_task, Message, TaskRun};
use base::error::Error;
use base::Keyword;
use git::{Repo, Trash};
use model::project::Integration;
use process::CancelToken;

/// How often the runner looks at the cancel flag while tasks run.
const POLL: Duration = Duration::from_millis(200);

/// One feature run in progress.
pub struct Runner {
    setup: FeatureSetup,
    state: FeatureState,
    /// `feature.json` and its journal, where `state` is saved.
    file: FeatureFile,
    paths: RunPaths,
    repo: Repo,
    log: FeatureLog,
    sink: Box<dyn FeatureSink>,
    prompter: Box<dyn Prompter>,
    /// Ctrl-C: shared by the runner and every task run, so one key stops them all.
    cancel: CancelToken,
    /// Some task ended without approval (for `--stop-on-failure`).
    failed: bool,
    /// Some task's agent could not be used (authentication, credit, model): start no more.
    agent_unusable: bool,
    /// The checks failed on the feature branch after a wave (and were not repaired).
    integration_failed: bool,
    resumed: bool,
    /// Landed worktrees being deleted beside the next landing; emptied at the end of each
    /// wave's landings, before anything else runs (and when the runner is dropped).
    trash: Trash,
    _lock: RunLock,
}

struct Job {
    task: String,
    resume: bool,
}

impl Runner {
    pub fn new(
        setup: FeatureSetup,
        state: FeatureState,
        paths: RunPaths,
        io: FeatureIo,
        lock: RunLock,
        resumed: bool,
    ) -> Result<Runner, Error> {
        let FeatureIo { sink, prompter, .. } = io;
        let repo = Repo::discover(&setup.plan.root)?;
        let log = FeatureLog::open(&paths.events())
            .map_err(|e| Error::io("cannot open", paths.events(), e))?;
        let cancel = cancel_on_signals()?;
        let trash = Trash::open(&setup.layout.worktrees());
        Ok(Runner {
            setup,
            state,
            file: FeatureFile::new(state_file(&paths)),
            paths,
            repo,
            log,
            sink,
            prompter,
            cancel,
            failed: false,
            agent_unusable: false,
            integration_failed: false,
            resumed,
            trash,
            _lock: lock,
        })
    }

    /// Runs the remaining waves and finishes; returns the exit code.
    pub fn run(mut self) -> Result<u8, Error> {
        self.emit(FeatureEventKind::FeatureStarted {
            name: self.state.name.clone(),
            branch: self.state.branch.clone(),
            base: self.state.base_branch.clone(),
            waves: self.state.waves.clone(),
            statuses: self
                .state
                .tasks
                .iter()
                .map(|(id, record)| (id.clone(), record.status.as_str().to_string()))
                .collect(),
            resumed: self.resumed,
        });
        for message in self.setup.warnings.clone() {
            self.emit(FeatureEventKind::Warning { message });
        }
        for wave in 0..self.state.waves.len() {
            if self.stopping() || self.state.conflict.is_some() || self.integration_failed {
                break;
            }
            self.run_wave(wave)?;
        }
        self.finish()
    }

    fn stopping(&self) -> bool {
        self.cancel.is_cancelled()
            || self.agent_unusable
            || (self.setup.settings.stop_on_failure && self.failed)
    }

    fn emit(&mut self, kind: FeatureEventKind) {
        let event = FeatureEvent::now(&self.state.feature_id, kind);
        self.log.append(&event);
        self.sink.feature(&event);
    }

    fn save(&mut self) -> Result<(), Error> {
        self.state.updated_at = now();
        self.file
            .save(&mut self.state)
            .map_err(|e| Error::io("cannot write", self.file.path(), e))
    }

    fn set_status(&mut self, task: &str, status: TaskStatus, message: Option<String>) {
        if let Some(record) = self.state.tasks.get_mut(task) {
            record.status = status;
            record.message = message;
        }
    }

    fn run_wave(&mut self, wave: usize) -> Result<(), Error> {
        let started = Instant::now();
        let tasks = self.state.waves[wave].clone();
        let mut jobs = Vec::new();
        for id in &tasks {
            let (action, prior) = self.action_for(id);
            if action == (Action::Run { resume: false })
                && prior.is_some_and(|p| {
                    p.status == RunStatus::Discarded && p.base_branch == self.state.branch
                })
            {
                self.record_discarded(id);
            }
            match action {
                Action::Done => {
                    if !self.state.status_of(id).is_landed() {
                        self.set_status(
                            id,
                            TaskStatus::Merged,
                            Some("merged into the feature branch by `autobuild complete`".into()),
                        );
                    }
                }
                Action::Merge => self.set_status(id, TaskStatus::Approved, None),
                Action::Run { resume } => jobs.push(Job {
                    task: id.clone(),
                    resume,
                }),
                Action::Skip { blocked_by } => {
                    let causes: Vec<String> = blocked_by
                        .iter()
                        .map(|d| format!("{d} ({})", self.state.status_of(d).as_str()))
                        .collect();
                    let reason = format!("blocked by {}", causes.join(", "));
                    self.set_status(id, TaskStatus::Skipped, Some(reason.clone()));
                    self.emit(FeatureEventKind::TaskSkipped {
                        task: id.clone(),
                        reason,
                    });
                }
            }
        }
        self.save()?;
        if !jobs.is_empty() && !self.stopping() {
            let limit = parallelism(
                self.setup.settings.max_parallel,
                self.setup.plan.recommended_parallel,
                jobs.len(),
            );
            self.emit(FeatureEventKind::WaveStarted {
                wave: wave + 1,
                tasks: jobs.iter().map(|j| j.task.clone()).collect(),
                max_parallel: limit.min(jobs.len()),
            });
            self.run_jobs(jobs, limit, wave + 1)?;
        }
        if self.cancel.is_cancelled() {
            // Approved tasks are merged when the feature resumes.
            return Ok(());
        }
        let merged = self.merge_approved(&tasks);
        // No check or agent runs beside a landed worktree still being deleted.
        self.trash.empty();
        merged?;
        if self.state.conflict.is_none() {
            self.integrate(wave)?;
        }
        self.emit(FeatureEventKind::WaveFinished {
            wave: wave + 1,
            duration_ms: started.elapsed().as_millis() as u64,
        });
        Ok(())
    }

    /// Lands the wave's approved tasks in order, up to a conflict, from one reading of which
    /// branch each worktree has checked out ([`Repo::heads_read_once`]: no agent or check runs
    /// while a wave lands).
    fn merge_approved(&mut self, tasks: &[String]) -> Result<(), Error> {
        let _heads = self.repo.heads_read_once();
        for id in tasks {
            if self.state.status_of(id) == TaskStatus::Approved {
                self.merge(id)?;
                if self.state.conflict.is_some() {
                    break;
                }
            }
        }
        Ok(())
    }

    /// `id`'s run in this feature was discarded since it ended: it runs anew, and the history
    /// keeps where the discarded run's records go (the engine keeps an earlier run's records
    /// as the next free `<TASK-ID>@<N>` when a new run starts).
    fn record_discarded(&mut self, id: &str) {
        let status = self.state.status_of(id);
        if status == TaskStatus::Pending {
            return;
        }
        let runs = self.setup.runs_dir();
        let kept_as = RunPaths::archive_target(&runs, id)
            .file_name()
            .map(|name| name.to_string_lossy().into_owned());
        self.state.history.push(HistoryEntry::RunDiscarded {
            at: now(),
            task: id.to_string(),
            status,
            kept_as,
        });
    }

    /// What happens to `id` in its wave, and its latest task run when one exists.
    fn action_for(&self, id: &str) -> (Action, Option<PriorRun>) {
        let dependencies: Vec<(String, TaskStatus)> = self
            .setup
            .plan
            .task(id)
            .map(|t| t.dependencies.clone())
            .unwrap_or_default()
            .into_iter()
            .map(|d| {
                let status = self.state.status_of(&d);
                (d, status)
            })
            .collect();
        let prior = RunState::load(&RunPaths::new(&self.setup.runs_dir(), id).state())
            .ok()
            .map(|s| PriorRun {
                status: s.status,
                base_branch: s.base_branch,
            });
        let action = decide(
            self.state.status_of(id),
            &dependencies,
            prior.as_ref(),
            &self.state.branch,
        );
        (action, prior)
    }

    /// Runs the jobs, at most `limit` at once, until all ended or the feature stops.
    ///
    /// Starts are staggered: a task starts once the task started before it is past its
    /// worktree step, so git's worktree bookkeeping (`.git/worktrees/`) is never created by
    /// two threads at once.
    fn run_jobs(&mut self, jobs: Vec<Job>, limit: usize, wave: usize) -> Result<(), Error> {
        let (tx, rx) = mpsc::channel();
        let mut queue: VecDeque<Job> = jobs.into();
        let mut running: HashMap<String, JoinHandle<()>> = HashMap::new();
        let mut starting: Option<String> = None;
        // After an error of the runner itself, no task starts and the running ones are waited
        // for before the error is returned: no task run outlives the feature run.
        let mut failure: Option<Error> = None;
        loop {
            while running.len() < limit
                && starting.is_none()
                && failure.is_none()
                && !self.stopping()
            {
                let Some(job) = queue.pop_front() else {
                    break;
                };
                match self.start_job(&job, wave, tx.clone()) {
                    Ok(handle) => {
                        starting = Some(job.task.clone());
                        running.insert(job.task, handle);
                    }
                    Err(error) => failure = Some(error),
                }
            }
            if running.is_empty() {
                return failure.map_or(Ok(()), Err);
            }
            match rx.recv_timeout(POLL) {
                Ok(Message::Event(event)) => {
                    if starting.as_deref() == Some(event.run.as_str()) && past_worktree(&event) {
                        starting = None;
                    }
                    self.sink.task(&event);
                }
                Ok(Message::Done(task, result)) => {
                    if starting.as_deref() == Some(task.as_str()) {
                        starting = None;
                    }
                    if let Some(handle) = running.remove(&task) {
                        let _ = handle.join();
                    }
                    if let Err(error) = self.task_done(&task, result) {
                        failure.get_or_insert(error);
                    }
                }
                Err(_) => {}
            }
        }
    }

    /// Records the task as running and starts its thread.
    fn start_job(
        &mut self,
        job: &Job,
        wave: usize,
        tx: Sender<Message>,
    ) -> Result<JoinHandle<()>, Error> {
        if let Some(record) = self.state.tasks.get_mut(&job.task) {
            record.status = TaskStatus::Running;
            record.message = None;
            record.started_at = Some(now());
            record.finished_at = None;
        }
        self.save()?;
        self.emit(FeatureEventKind::TaskStarted {
            task: job.task.clone(),
            wave,
            resumed: job.resume,
        });
        self.spawn(job, tx)
    }

    fn spawn(&self, job: &Job, tx: Sender<Message>) -> Result<JoinHandle<()>, Error> {
        let task_path = self
            .setup
            .plan
            .task(&job.task)
            .map(|t| t.task.path.display().to_string())
            .unwrap_or_else(|| job.task.clone());
        let policy = if job.resume {
            BranchPolicy::Resume
        } else {
            BranchPolicy::New
        };
        spawn_task(TaskRun {
            root: self.setup.plan.root.clone(),
            task: job.task.clone(),
            task_path,
            settings: self.setup.task_settings(),
            policy,
            cancel: self.cancel.clone(),
            tx,
        })
    }

    fn task_done(&mut self, task: &str, result: Result<Outcome, Error>) -> Result<(), Error> {
        if let Ok(Outcome::AgentUnusable(_)) = &result {
            self.agent_unusable = true;
        }
        let (status, message) = match result {
            Ok(Outcome::Approved { .. }) => (
                TaskStatus::Approved,
                format!("approved; lands on {} after its wave", self.state.branch),
            ),
            Ok(outcome) => (TaskStatus::from_outcome(&outcome), outcome.to_string()),
            Err(error) => (TaskStatus::Failed, format!("failed: {}", error.one_line())),
        };
        if let Some(record) = self.state.tasks.get_mut(task) {
            record.status = status;
            record.message = Some(message.clone());
            record.finished_at = Some(now());
        }
        if status.is_failure() {
            self.failed = true;
        }
        self.save()?;
        let report =
            Some(RunPaths::new(&self.setup.runs_dir(), task).report()).filter(|p| p.is_file());
        self.emit(FeatureEventKind::TaskFinished {
            task: task.to_string(),
            status: status.as_str().to_string(),
            message,
            report,
        });
        Ok(())
    }

    fn merge(&mut self, id: &str) -> Result<(), Error> {
        let title = self
            .setup
            .plan
            .task(id)
            .map(|t| t.task.title.clone())
            .unwrap_or_default();
        let task_file = self.setup.plan.task(id).and_then(|t| {
            crate::engine::exec::MergeRequest::task_file_of(&self.setup.plan.root, &t.task.path)
        });
        let worktree = self.setup.layout.worktree(id);
        let runs = self.setup.runs_dir();
        let approved = approved_commit(&runs, id)?;
        let task = ApprovedTask {
            id,
            title: &title,
            worktree: &worktree,
            approved: &approved,
            task_file: task_file.as_deref(),
        };
        let seen = self.state.violations.len();
        let file = &mut self.file;
        let mut save = |state: &mut FeatureState| {
            file.save(state)
                .map_err(|e| Error::io("cannot write", file.path(), e))
        };
        let merged = merge_task(
            &self.repo,
            &runs,
            &task,
            &mut self.state,
            &mut save,
            Some(&self.trash),
        )?;
        let event = record_merge(&mut self.state, id, merged);
        self.save()?;
        self.warn_violations(seen);
        self.emit(event);
        Ok(())
    }

    /// A warning for each violation recorded since the first `seen`.
    fn warn_violations(&mut self, seen: usize) {
        for message in self.state.violations.clone().into_iter().skip(seen) {
            self.emit(FeatureEventKind::Warning { message });
        }
    }

    fn finish(mut self) -> Result<u8, Error> {
        let all_merged = self
            .setup
            .plan
            .tasks
            .iter()
            .all(|t| self.state.status_of(t.id()).is_landed());
        // A tip whose last check failed (a cancelled check) is not approved, unless
        // integration is off now.
        let integrated = self.setup.config.feature.integration == Integration::Off
            || self.state.integration_failure().is_none();
        self.state.status = if self.integration_failed {
            FeatureStatus::IntegrationFailed
        } else if all_merged && integrated {
            FeatureStatus::Approved
        } else if self.cancel.is_cancelled() {
            FeatureStatus::Cancelled
        } else if self.state.conflict.is_some() {
            FeatureStatus::Conflict
        } else {
            FeatureStatus::Blocked
        };
        let mut landing_error = None;
        let mut pr_missing = false;
        if self.state.status == FeatureStatus::Approved && self.state.settings.run.pr {
            let runs = self.setup.runs_dir();
            let opened = open_pr(&self.repo, &runs, &mut self.state, &self.setup.config);
            if let Err(error) = opened {
                let message = format!(
                    "approved, but no pull request was opened: {}",
                    error.one_line()
                );
                self.emit(FeatureEventKind::Warning { message });
                pr_missing = true;
            }
        } else if self.state.status == FeatureStatus::Approved && self.merge_now() {
            let seen = self.state.violations.len();
            let landed = self.land();
            self.warn_violations(seen);
            match landed {
                Ok(commit) => {
                    self.state.status = FeatureStatus::Merged;
                    self.state.merged_commit = Some(commit);
                }
                Err(error) => landing_error = Some(error),
            }
        }
        self.state.message = Some(outcome_message(&self.state));
        if let Err(why) = crate::otel::export_feature(&mut self.state, &self.setup.runs_dir()) {
            self.emit(FeatureEventKind::Warning {
                message: format!("the feature's trace was not exported: {why}"),
            });
        }
        self.save()?;
        let report = write_report(&self.state, &self.setup.runs_dir(), &self.paths)?;
        let exit_code = match pr_missing {
            true => base::error::exit::NOT_MERGED,
            false => feature_exit_code(&self.state),
        };
        self.emit(FeatureEventKind::FeatureFinished {
            status: self.state.status.as_str().to_string(),
            exit_code,
            message: self.state.message.clone().unwrap_or_default(),
            report,
        });
        match landing_error {
            Some(error) => Err(error),
            None => Ok(exit_code),
        }
    }

    /// `--no-merge`, `--auto-merge`, a question on a terminal, else later.
    fn merge_now(&self) -> bool {
        let run = &self.state.settings.run;
        if run.no_merge {
            false
        } else if run.auto_merge {
            true
        } else if self.prompter.is_interactive() {
            // Ctrl-C at the question means "not now": the feature stays approved.
            self.prompter
                .confirm(
                    &format!(
                        "Merge {} into {} ({})?",
                        self.state.branch,
                        self.state.base_branch,
                        self.setup.strategy.as_str()
                    ),
                    &self.cancel,
                )
                .unwrap_or(false)
        } else {
            false
        }
    }

    fn land(&mut self) -> Result<String, Error> {
        let titles = self
            .setup
            .plan
            .tasks
            .iter()
            .map(|t| (t.id().to_string(), t.task.title.clone()))
            .collect();
        let runs = self.setup.runs_dir();
        land(
            &self.repo,
            &runs,
            &mut self.state,
            &titles,
            self.setup.strategy,
        )
    }
}
