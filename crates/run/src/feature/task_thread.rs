//! One task of a feature, run by the engine in its own thread. The thread forwards the run's
//! events and finally its outcome over a channel to the feature's runner, which owns the
//! display and the feature's state; a panicking run is reported as a failed one, so the
//! runner never waits for a message that cannot come.

use std::path::PathBuf;
use std::sync::mpsc::Sender;
use std::thread::{self, JoinHandle};

use crate::engine::events::{Event, EventKind, EventSink};
use crate::engine::io::{RunIo, Unattended};
use crate::engine::plan::BranchPolicy;
use crate::engine::run::{start, StartOptions};
use crate::engine::state::RunSettings;
use crate::engine::Outcome;
use base::error::{Class, Error, Problem};
use model::workflow::kinds::Uses;
use process::CancelToken;

/// What a task thread reports.
pub enum Message {
    Event(Event),
    Done(String, Result<Outcome, Error>),
}

/// Forwards a task run's events to the runner's thread.
struct ChannelSink(Sender<Message>);

impl EventSink for ChannelSink {
    fn emit(&mut self, event: &Event) {
        let _ = self.0.send(Message::Event(event.clone()));
    }
}

/// Everything a task thread needs.
pub struct TaskRun {
    pub root: PathBuf,
    pub task: String,
    /// The task file, as the engine's task lookup accepts it.
    pub task_path: String,
    pub settings: RunSettings,
    pub policy: BranchPolicy,
    pub cancel: CancelToken,
    pub tx: Sender<Message>,
}

/// Starts the task's engine run in a new thread.
pub fn spawn_task(run: TaskRun) -> Result<JoinHandle<()>, Error> {
    let TaskRun {
        root,
        task,
        task_path,
        settings,
        policy,
        cancel,
        tx,
    } = run;
    let name = format!("task {task}");
    thread::Builder::new()
        .name(name)
        .spawn(move || {
            let options = StartOptions {
                policy,
                yes: false,
                moved_checkout: false,
                io: RunIo {
                    sink: Box::new(ChannelSink(tx.clone())),
                    prompter: Box::new(Unattended),
                    cancel,
                },
            };
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                start(&root, &task_path, settings, options)
            }))
            .unwrap_or_else(|_| Err(ThreadError::Panicked(task.clone()).into()));
            let _ = tx.send(Message::Done(task, result));
        })
        .map_err(|e| ThreadError::Spawn(e).into())
}

/// A task run in its thread that did not end with a result of its own.
#[derive(Debug, thiserror::Error)]
pub enum ThreadError {
    #[error("the run of {0} panicked")]
    Panicked(String),
    #[error("cannot start a thread for a task: {0}")]
    Spawn(#[source] std::io::Error),
    /// Its thread ended without sending the result.
    #[error("the run of {0} ended unreported")]
    Unreported(String),
}

impl Problem for ThreadError {
    fn class(&self) -> Class {
        Class::Runtime
    }
}

/// Whether a task run is past its worktree step: the step finished (or was skipped), or a
/// later step started (a resumed run skips its completed worktree step silently).
pub fn past_worktree(event: &Event) -> bool {
    match &event.kind {
        EventKind::StepFinished { .. } | EventKind::StepSkipped { .. } => true,
        EventKind::StepStarted { uses, .. } => *uses != Uses::Worktree,
        _ => false,
    }
}
