//! autobuild: a declarative runner for dialectical autocoding.
//!
//! A Player agent implements a task in an isolated git worktree; the runner verifies the work
//! itself (tests, executable acceptance criteria) in the same environment the agents used; a
//! read-only Coach agent reviews it and returns a JSON verdict; the loop repeats with fresh agent
//! contexts until the gates approve, a bound is hit, or a stall is detected. Everything about
//! that loop is data in workflow files ([`workflow`]); the engine ([`engine`]) interprets it.

pub mod agents;
pub mod atomic_file;
pub mod cli;
pub mod cost;
pub mod diagnostic;
pub mod engine;
pub mod error;
pub mod failpoint;
pub mod feature;
pub mod git;
pub mod json_text;
pub mod process;
pub mod profile;
pub mod project;
pub mod report;
pub mod sandbox;
pub mod schema;
pub mod steps;
pub mod task;
pub mod ui;
pub mod unknown;
pub mod user_file;
pub mod workflow;

#[cfg(test)]
mod names_tests;
