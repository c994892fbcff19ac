//! autobuild: a declarative runner for dialectical autocoding.
//!
//! A Player agent implements a task in an isolated git worktree; the runner verifies the work
//! itself (tests, executable acceptance criteria) in the same environment the agents used; a
//! read-only Coach agent reviews it and returns a JSON verdict; the loop repeats with fresh agent
//! contexts until the gates approve, a bound is hit, or a stall is detected. Everything about
//! that loop is data in workflow files ([`workflow`]); the engine ([`engine`]) interprets it.

pub use agents;
pub use base::{
    atomic_file, cost, diagnostic, error, failpoint, json_text, pattern, tree_copy, unknown,
    user_file,
};
pub use git;
pub use model::{profile, project, schema, steps, task, workflow};
pub use process;
pub use run::{engine, feature, forge, report};
pub use sandbox;

pub mod cli;
pub mod ui;

#[cfg(test)]
mod names_tests;
