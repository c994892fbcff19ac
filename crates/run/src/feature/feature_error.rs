//! What a feature command refuses before its tasks run, or about a feature's records, worded
//! once (refusals shared with task runs are [`crate::engine::refusal::Refusal`]s; locating the
//! feature file is [`super::locate::LocateError`]).

use std::path::PathBuf;

use base::error::{Class, Problem};
use git::GitError;

#[derive(Debug, thiserror::Error)]
pub enum FeatureError {
    /// The repository cannot be opened, in git's words.
    #[error("{0}")]
    Repository(#[source] GitError),
    /// No base branch: HEAD is detached or unborn and none is configured.
    #[error("HEAD is detached or has no commits, so there is no base branch to branch from")]
    NoBase,
    /// Tasks of the feature that cannot start, one line each in their own words (each line
    /// names its task, and its help when it has one).
    #[error("{}", .0.join("\n"))]
    TaskProblems(Vec<String>),
    /// A task id given on the command line that the feature does not have.
    #[error("{task} is not a task of feature {feature}")]
    NotATask { task: String, feature: String },
    /// The landing record a CI job wrote cannot be read.
    #[error("cannot read the landing record {}: {source}", file.display())]
    LandingRecord {
        file: PathBuf,
        source: std::io::Error,
    },
    /// `[sandbox] mode = "on"` cannot be honoured for the integration check, in the
    /// sandbox's words.
    #[error("{0}")]
    Sandbox(sandbox::Unconfinable),
}

impl Problem for FeatureError {
    fn class(&self) -> Class {
        Class::Usage
    }

    fn help(&self) -> Option<String> {
        match self {
            FeatureError::NoBase => Some(
                "check out a branch, or set [project] base_branch in .autobuild/config.toml".into(),
            ),
            FeatureError::LandingRecord { .. } => Some(
                "a landing job writes it; pass the directory its record was downloaded to".into(),
            ),
            _ => None,
        }
    }
}
