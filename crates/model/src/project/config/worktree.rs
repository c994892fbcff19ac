//! `[worktree]` of config.toml: what a task's worktree needs that git does not
//! check out — a git-ignored `.venv` or `node_modules` linked (`link`) or copied (`copy`) from
//! the main checkout, and a `setup` command run once after the worktree is created.
//!
//! Entries are paths relative to the repository root that stay inside it: an absolute path or
//! one with `..` could make a worktree file point anywhere, and `.git` is git's own.

use serde::Deserialize;

use super::values::{RepoPath, ShellCommand};
use base::user_file::rule::Rule;

/// `[worktree]`: what a task's worktree needs besides the checked-out files.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(rename = "Worktree")]
pub struct WorktreeConfig {
    /// Paths symlinked to the main checkout's copies (e.g. a git-ignored `.venv`).
    #[serde(deserialize_with = "RepoPath::each")]
    #[schemars(with = "Vec<RepoPath>")]
    pub link: Vec<String>,
    /// Paths copied from the main checkout when the worktree is created.
    #[serde(deserialize_with = "RepoPath::each")]
    #[schemars(with = "Vec<RepoPath>")]
    pub copy: Vec<String>,
    /// A shell command run once in a new worktree, with the project environment.
    #[serde(deserialize_with = "ShellCommand::some")]
    #[schemars(with = "Option<ShellCommand>")]
    pub setup: Option<String>,
}
