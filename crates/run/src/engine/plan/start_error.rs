//! Why preflight cannot make a plan, or why a plan cannot start: one variant per problem,
//! worded once. The blockers a dry run lists are [`Blocker`]s; a real run refuses with all of
//! them as [`StartError::Blocked`].

use std::path::PathBuf;

use super::Blocker;
use base::error::{Class, Problem};
use git::GitError;

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The current directory is not inside a git repository.
    #[error("{} is not inside a git repository", dir.display())]
    NotInRepository { dir: PathBuf },
    /// The repository cannot be opened (bare, unreadable), in git's words.
    #[error("{0}")]
    Repository(#[source] GitError),
    /// The base branch has no commit to branch from.
    #[error(
        "the repository has no commits yet (branch {branch} is empty), so there is nothing to branch from"
    )]
    NoCommits { branch: String },
    /// HEAD is detached and no base branch is configured.
    #[error("HEAD is detached, so there is no base branch to branch from")]
    DetachedHead,
    /// The plan has blockers: one line each.
    #[error("{}", super::blocker_lines(.0).join("\n"))]
    Blocked(Vec<Blocker>),
    /// A hidden path that is not a glob, in the glob's words.
    #[error("invalid hidden path: {0}")]
    InvalidHidden(String),
    /// Loading the run's files failed without saying why (no loader reported a problem).
    #[error("loading the run's files failed")]
    NothingLoaded,
}

impl Problem for StartError {
    fn class(&self) -> Class {
        match self {
            StartError::NothingLoaded => Class::Runtime,
            _ => Class::Usage,
        }
    }

    fn help(&self) -> Option<String> {
        match self {
            StartError::NotInRepository { .. } => Some(
                "run autobuild inside the repository whose task you want to run (or use -C DIR)"
                    .into(),
            ),
            StartError::NoCommits { .. } => {
                Some("make a first commit, then run autobuild again".into())
            }
            StartError::DetachedHead => Some(
                "check out a branch, or set [project] base_branch in .autobuild/config.toml".into(),
            ),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_with_blockers_refuses_with_one_line_each() {
        let error = StartError::Blocked(vec![
            Blocker::BranchExists {
                branch: "autobuild/T-1".into(),
            },
            Blocker::Sandbox(sandbox::Unconfinable {
                reason: "bubblewrap cannot create a namespace".into(),
                fix: "allow user namespaces".into(),
            }),
        ]);
        let text = error.to_string();
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(text.lines().all(|line| !line.is_empty()));
        assert_eq!(error.class(), Class::Usage);
    }

    #[test]
    fn a_repository_without_a_base_says_how_to_get_one() {
        for error in [
            StartError::NoCommits {
                branch: "main".into(),
            },
            StartError::DetachedHead,
            StartError::NotInRepository { dir: "/x".into() },
        ] {
            assert_eq!(error.class(), Class::Usage);
            assert!(error.help().is_some(), "{error}");
        }
    }
}
