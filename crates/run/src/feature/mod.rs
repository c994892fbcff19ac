//! Features (docs/features.md): several tasks with dependencies, run in waves.
//!
//! A feature file ([`file`], found by [`locate`]) lists tasks; they are looked up and checked
//! as a whole before anything runs ([`plan`], over the pure wave computation in [`graph`]),
//! then each task's engine run is preflighted ([`preflight`]). A run ([`run`], [`runner`])
//! creates the feature branch `autobuild/<FEAT-ID>`, runs each wave's tasks in parallel
//! worktrees branched from it ([`schedule`] decides what runs, [`task_thread`] runs one), squashes
//! approved tasks onto it ([`merge`]) checks the branch's tip after each wave
//! ([`integration`]) and finally lands it on the base ([`finish`]). Its state lives in `runs/<FEAT-ID>/`
//! ([`state`], [`events`], [`report`]), never in the feature file; progress is shown by
//! the command line's display (`ui::feature`).

pub mod emit;
pub mod events;
pub mod feature_error;
pub use model::feature_file as file;
pub mod finish;
pub mod graph;
pub mod integration;
pub mod land;
pub mod locate;
pub mod merge;
pub mod outcome;
pub mod overlap;
pub mod plan;
pub mod preflight;
pub mod ready;
pub mod report;
pub mod run;
pub mod runner;
pub mod schedule;
pub mod show;
pub mod state;
pub mod task_thread;
pub mod timeline;

pub use plan::{FeaturePlan, PlannedTask};
