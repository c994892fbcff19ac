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
    #[serde(flatten)]
    pub done: crate::engine::existing::Completed,
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
    #[serde(flatten)]
    pub done: crate::engine::existing::Discarded,
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
