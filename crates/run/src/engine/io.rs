//! A run's connections to the world ([`RunIo`]): where its events go, what stops it, and who
//! answers the questions it asks a person — "merge now?", "discard the branch?" — without the engine
//! knowing about terminals. The command line hands in a prompter that reads the terminal; a
//! feature's task threads and tests hand in [`Unattended`], which never asks.

use crate::engine::events::EventSink;
use base::error::Error;
use process::CancelToken;

/// Someone (or no one) who can answer yes/no questions for a run.
pub trait Prompter: Send {
    /// Whether a person is there to answer.
    fn is_interactive(&self) -> bool;

    /// Asks `question`; `None` when `cancel` was set while waiting (Ctrl-C at the question).
    fn confirm(&self, question: &str, cancel: &CancelToken) -> Option<bool>;
}

/// No one to ask: every question is answered "no" and the run takes its unattended path.
pub struct Unattended;

impl Prompter for Unattended {
    fn is_interactive(&self) -> bool {
        false
    }

    fn confirm(&self, _question: &str, _cancel: &CancelToken) -> Option<bool> {
        Some(false)
    }
}

/// Where a run's progress goes, who answers its questions, and what stops it.
pub struct RunIo {
    /// Receives every event of the run (a display, or a feature's aggregator).
    pub sink: Box<dyn EventSink + Send>,
    /// Answers "merge now?" and the like; [`crate::engine::io::Unattended`] never asks.
    pub prompter: Box<dyn Prompter>,
    /// Setting it stops the run like Ctrl-C does (a feature shares one across its tasks).
    pub cancel: CancelToken,
}

impl RunIo {
    /// A run started from the command line: Ctrl-C and SIGTERM cancel it.
    pub fn from_signals(
        sink: Box<dyn EventSink + Send>,
        prompter: Box<dyn Prompter>,
    ) -> Result<RunIo, Error> {
        Ok(RunIo {
            sink,
            prompter,
            cancel: cancel_on_signals()?,
        })
    }
}

/// A token that Ctrl-C, SIGTERM, SIGHUP and SIGQUIT set; running children are stopped by their
/// watchdogs.
pub fn cancel_on_signals() -> Result<CancelToken, Error> {
    let cancel = CancelToken::new();
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    // SIGHUP: the terminal went away; the run must still stop its agents and stay resumable.
    for signal in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] {
        signal_hook::flag::register(signal, cancel.flag())
            .map_err(crate::engine::walk_error::WalkError::SignalHandler)?;
    }
    Ok(cancel)
}
