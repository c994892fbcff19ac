//! The engine: runs a resolved workflow for one task — preflight ([`plan`]), the
//! [`interpreter`], the step executors ([`exec`]), persisted [`state`] for resume, what a resume repairs first ([`recover`]), the
//! [`events`] stream and the run [`lock`], and a run's [`io`]: its event sink, its prompter and its cancel token.
//! A run record is checked to name only what the runner [`owned`] before anything acts on it.

pub mod closing;
pub mod cx;
pub mod events;
pub mod exec;
pub mod existing;
pub mod inputs;
pub mod interpreter;
pub mod io;
pub mod lock;
pub mod outcome;
pub mod owned;
pub mod paths;
pub mod plan;
pub mod records;
pub mod recover;
pub mod ref_owners;
pub mod refusal;
pub mod reopen;
pub mod replay;
pub mod run;
pub mod state;
pub mod turn;
pub mod walk_error;

pub use outcome::{AgentStop, Outcome};
