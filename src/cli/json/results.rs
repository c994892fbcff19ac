//! `complete --json`, `complete --pr --json`, `discard --json` and `init --json`: what the command did, as facts.

use std::path::PathBuf;

use serde::Serialize;

/// `complete --json`: an approved run (a task's or a feature's) landed.
#[derive(Debug, Serialize)]
pub struct Completed {
    pub version: u32,
    pub id: String,
    /// `task` or `feature`.
    pub kind: &'static str,
    /// The branch that landed (`autobuild/<ID>`, or the feature branch; removed since).
    pub branch: String,
    pub base_branch: String,
    /// The commit `base_branch` points to now.
    pub commit: String,
    pub warnings: Vec<String>,
    /// What the landing did besides (a GuardKit task file moved to `completed/`).
    pub notes: Vec<String>,
}

/// `complete --pr --json`: the pull (merge) request the approved run landed as.
#[derive(Debug, Serialize)]
pub struct PrOpened {
    pub version: u32,
    pub id: String,
    pub pr: crate::forge::PullRequest,
}

/// `discard --json`.
#[derive(Debug, Serialize)]
pub struct Discarded {
    pub version: u32,
    pub id: String,
    pub branch: String,
    /// False when the branch and worktree were already gone (nothing was done).
    pub discarded: bool,
    /// The run's records, kept.
    pub records: PathBuf,
}

/// `init --json`.
#[derive(Debug, Serialize)]
pub struct Initialized {
    pub version: u32,
    pub root: PathBuf,
    pub files: Vec<crate::cli::init::Scaffolded>,
    /// The command to run next, as the text form says it.
    pub next: String,
}
