//! The live context of a run: the plan, the persisted state, the repository, the project
//! environment, the turn in progress and the event sinks. Step executors receive it.

use std::time::{Duration, Instant};

use crate::engine::events::{Event, EventKind, EventLog, EventSink};
use crate::engine::io::{Prompter, RunIo};
use crate::engine::outcome::Outcome;
use crate::engine::paths::RunPaths;
use crate::engine::plan::Plan;
use crate::engine::state::RunState;
use crate::engine::turn::Turn;
use base::error::Error;
use git::Repo;
use model::project::ProjectEnv;
use process::CancelToken;

pub struct RunCx<'p> {
    pub plan: &'p Plan,
    pub paths: RunPaths,
    pub state: RunState,
    pub repo: Repo,
    pub cancel: CancelToken,
    /// The project environment for the worktree: given to agents and checks alike.
    pub project_env: ProjectEnv,
    pub turn: Option<Turn>,
    pub stall_reason: Option<String>,
    /// How the run would end if it ended now; the report step describes this.
    pub outcome_so_far: Option<Outcome>,
    /// Wall time spent by earlier sessions of a resumed run.
    pub elapsed_before: Duration,
    /// When this session started.
    session_start: Instant,
    /// When `limits.max_wall_time` runs out: no agent or check may outlive it.
    pub deadline: Option<Instant>,
    events: EventLog,
    display: Box<dyn EventSink + Send + 'p>,
    /// Answers the run's questions (merge now? approve?).
    pub prompter: Box<dyn Prompter>,
    /// The last step that ran commands (checks, a `run` step) when what they left in the
    /// worktree is not removed yet: the next walk of the worktree does it
    /// (`engine::exec::leftovers`). Not persisted: a resume reverts the worktree anyway.
    pub leftovers: Option<String>,
    /// When the commands that left them ended: every change they made is stamped before it.
    pub leftovers_at: Option<std::time::SystemTime>,
    /// How long the current step waited for a person's answer (the merge question): not the
    /// step's own time, so its duration leaves it out.
    pub answering: Duration,
    /// Records written since the last state save, not yet durable: that save syncs them.
    unsynced: Vec<std::fs::File>,
    /// Temporary files for the state saves and records, made ahead of each write.
    spares: base::atomic_file::Spares,
    /// `autobuild replay`: the recorded run whose agents stand in for the roles' adapters
    /// ([`crate::engine::replay`]).
    pub replay: Option<std::sync::Arc<crate::engine::replay::Recorded>>,
    /// Unconfined: the main checkout as the last agent step left it, which guards the next
    /// agent step without another walk while HEAD and the index are unchanged
    /// (`engine::exec::sandbox::guard_main_checkout`). Not persisted.
    pub main_checkout: Option<git::CheckoutGuard>,
}

impl<'p> RunCx<'p> {
    pub fn new(
        plan: &'p Plan,
        paths: RunPaths,
        state: RunState,
        repo: Repo,
        project_env: ProjectEnv,
        events: EventLog,
        io: RunIo,
    ) -> Self {
        let state_elapsed_ms = state.elapsed_ms;
        let spares = base::atomic_file::Spares::in_dir(&paths.dir);
        RunCx {
            plan,
            paths,
            state,
            repo,
            cancel: io.cancel,
            project_env,
            turn: None,
            stall_reason: None,
            outcome_so_far: None,
            elapsed_before: Duration::from_millis(state_elapsed_ms),
            session_start: Instant::now(),
            deadline: plan.resolved.workflow.limits.max_wall_time.map(|max| {
                Instant::now() + max.saturating_sub(Duration::from_millis(state_elapsed_ms))
            }),
            events,
            display: io.sink,
            prompter: io.prompter,
            leftovers: None,
            leftovers_at: None,
            answering: Duration::ZERO,
            unsynced: Vec::new(),
            spares,
            replay: None,
            main_checkout: None,
        }
    }

    /// Persists and displays an event. A failing event log is reported, not fatal: the state
    /// file, not the log, is what resume relies on.
    pub fn emit(&mut self, kind: EventKind) {
        let event = Event::now(&self.state.task_id, kind);
        if let Err(e) = self.events.append(&event) {
            tracing::warn!("cannot append to {}: {e}", self.events.path().display());
        }
        self.display.emit(&event);
    }

    /// Asks the person at the terminal `question` (announced as an event first); `None` when
    /// Ctrl-C cancelled it. The time the answer took is [`RunCx::answering`], not the step's.
    pub fn ask(&mut self, question: &str) -> Option<bool> {
        self.emit(EventKind::AwaitingAnswer {
            question: question.to_string(),
        });
        let asked = Instant::now();
        let answer = self.prompter.confirm(question, &self.cancel);
        self.answering += asked.elapsed();
        answer
    }

    /// Wall time of the whole run so far, earlier sessions included.
    pub fn elapsed(&self) -> Duration {
        self.elapsed_before + self.session_start.elapsed()
    }

    pub fn save_state(&mut self) -> Result<(), Error> {
        self.state.updated_at = now();
        self.state.elapsed_ms = u64::try_from(self.elapsed().as_millis()).unwrap_or(u64::MAX);
        let unsynced = std::mem::take(&mut self.unsynced);
        // Once the run has stopped (a kill after this save leaves nothing to resume, so no
        // resume would remove a spare), no spare is made ahead.
        self.spares
            .make_ahead(self.state.status == crate::engine::state::RunStatus::Running);
        self.state
            .save_after(&mut self.spares, &self.paths.state(), unsynced)
            .map_err(|e| Error::io("cannot write", self.paths.state(), e))?;
        base::failpoint::hit("state.saved");
        Ok(())
    }

    /// Writes a turn record (atomically, as [`crate::engine::turn::write_record`] does); it is
    /// made durable by the next state save, before that save, so the state never says a step
    /// is done whose record a power cut could lose.
    pub fn write_record<T: serde::Serialize>(
        &mut self,
        path: &std::path::Path,
        record: &T,
    ) -> Result<(), Error> {
        let file = base::atomic_file::write_json_unsynced_with(&mut self.spares, path, record)
            .map_err(|e| Error::io("cannot write", path, e))?;
        self.unsynced.push(file);
        Ok(())
    }

    pub fn start_turn(&mut self, loop_id: &str, number: u32, max: u32) {
        let prefix = if self.plan.first_loop.as_deref() == Some(loop_id) {
            String::new()
        } else {
            format!("{loop_id}_")
        };
        self.turn = Some(Turn::load(
            &self.paths,
            &self.plan.task,
            loop_id,
            &prefix,
            number,
            max,
        ));
    }

    /// The record file of `kind` (`player`, `verify`, …) for the turn in progress.
    pub fn record_path(&self, kind: &str) -> std::path::PathBuf {
        let prefix = self.turn.as_ref().map_or("", |t| t.record_prefix.as_str());
        self.paths
            .turn_record(&format!("{prefix}{kind}"), self.turn_number())
    }

    /// The name prompts and transcripts of `role` are filed under in this turn.
    pub fn file_label(&self, role: &str) -> String {
        let prefix = self.turn.as_ref().map_or("", |t| t.record_prefix.as_str());
        format!("{prefix}{role}")
    }

    pub fn end_turn(&mut self) {
        self.turn = None;
    }

    /// The turn number for records and prompts (0 outside a loop).
    pub fn turn_number(&self) -> u32 {
        self.turn.as_ref().map_or(0, |t| t.number)
    }

    pub fn cancel_outcome(&self) -> Outcome {
        Outcome::Cancelled
    }

    /// A child's timeout, shortened so it cannot outlive the run's wall-time limit.
    pub fn clamp(&self, timeout: Duration) -> Duration {
        match self.deadline {
            Some(deadline) => timeout.min(deadline.saturating_duration_since(Instant::now())),
            None => timeout,
        }
    }

    /// The project environment's variables for a child process.
    pub fn env_vars(&self) -> Vec<(String, String)> {
        self.project_env.vars()
    }
}

/// RFC 3339 UTC, seconds precision.
pub fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}
