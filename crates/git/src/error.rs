//! What can go wrong in the git layer, with enough context (what was attempted, on which path or
//! branch) that a user can act on the message without reading a backtrace.
//!
//! The refusals the callers must branch on (an existing branch, unmerged work, a conflict, a dirty
//! checkout, a non-fast-forward) are their own variants so the engine and the command line can
//! offer `--resume`, `--fresh`, `--force` or a different strategy instead of a generic failure.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use base::error::Error;

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// A libgit2 operation failed.
    #[error("git: {action} in {}: {}", path.display(), source.message())]
    Git {
        action: String,
        path: PathBuf,
        source: git2::Error,
    },
    /// A file system operation around git failed.
    #[error("{action} {}: {source}", path.display())]
    Io {
        action: String,
        path: PathBuf,
        source: io::Error,
    },
    #[error("{} is not inside a git repository", path.display())]
    NotARepository { path: PathBuf },
    #[error("{} is a bare git repository; autobuild needs a working tree", path.display())]
    BareRepository { path: PathBuf },
    #[error("branch `{branch}` not found")]
    BranchNotFound { branch: String },
    #[error("base branch `{branch}` not found")]
    BaseBranchNotFound { branch: String },
    #[error("`{name}` is not a valid branch name")]
    InvalidBranchName { name: String },
    #[error("commit `{commit}` not found in {}", path.display())]
    CommitNotFound { commit: String, path: PathBuf },
    #[error("branch `{branch}` already exists")]
    BranchExists { branch: String },
    #[error("{} already exists and is not empty", path.display())]
    WorktreePathExists { path: PathBuf },
    #[error("branch `{branch}` is checked out in {}", path.display())]
    CheckedOut { branch: String, path: PathBuf },
    #[error("{} is not a worktree of this repository", path.display())]
    NotAWorktree { path: PathBuf },
    #[error("the checkout of worktree {} is incomplete: {count} file(s) differ from the commit, first {first}", path.display())]
    IncompleteCheckout {
        path: PathBuf,
        count: usize,
        first: String,
    },
    #[error("worktree {} is on {}, expected branch `{expected}`", path.display(), describe_head(actual))]
    WrongBranch {
        path: PathBuf,
        expected: String,
        actual: Option<String>,
    },
    #[error("{} has no commit yet", path.display())]
    NoCommits { path: PathBuf },
    #[error("branch `{branch}` has {commits} commit(s) not merged into `{base}`")]
    Unmerged {
        branch: String,
        base: String,
        commits: usize,
    },
    #[error("cannot fast-forward `{base}` to `{branch}`: `{base}` has commits that `{branch}` does not contain")]
    NotFastForward { branch: String, base: String },
    #[error("merging `{branch}` into `{base}` conflicts in: {}", paths.join(", "))]
    Conflict {
        branch: String,
        base: String,
        paths: Vec<String>,
    },
    #[error("uncommitted changes in {} would be overwritten by the merge: {}", checkout.display(), paths.join(", "))]
    DirtyCheckout {
        checkout: PathBuf,
        paths: Vec<String>,
    },
    #[error("{path} in {} is beyond a symbolic link: `{link}` is a link; autobuild never writes through one", checkout.display())]
    BeyondSymlink {
        checkout: PathBuf,
        path: String,
        link: String,
    },
    #[error("branch `{branch}` changed while merging into it (now at {actual})")]
    BaseMoved { branch: String, actual: String },
    /// The commit to land needs what the repository lacks, or adds a submodule entry.
    #[error("`{branch}` cannot land on `{base}`: {}", problems.join("; "))]
    Unlandable {
        branch: String,
        base: String,
        problems: Vec<String>,
    },
}

fn describe_head(actual: &Option<String>) -> String {
    match actual {
        Some(branch) => format!("branch `{branch}`"),
        None => "a detached HEAD".to_string(),
    }
}

/// Attaches what was attempted, and where, to a libgit2 or I/O failure.
pub(crate) trait Context<T> {
    fn context(self, action: impl fmt::Display, path: &Path) -> Result<T, GitError>;
}

impl<T> Context<T> for Result<T, git2::Error> {
    fn context(self, action: impl fmt::Display, path: &Path) -> Result<T, GitError> {
        self.map_err(|source| GitError::Git {
            action: action.to_string(),
            path: path.to_path_buf(),
            source,
        })
    }
}

impl<T> Context<T> for Result<T, io::Error> {
    fn context(self, action: impl fmt::Display, path: &Path) -> Result<T, GitError> {
        self.map_err(|source| GitError::Io {
            action: action.to_string(),
            path: path.to_path_buf(),
            source,
        })
    }
}

/// A git failure as the command line reports it: refusals a user can act on are usage errors or
/// carry the fix as help.
impl From<GitError> for Error {
    fn from(e: GitError) -> Error {
        use GitError as G;
        let message = e.to_string();
        match e {
            G::BaseBranchNotFound { .. } => Error::usage(message).with_help(
                "set `[project] base_branch` in .autobuild/config.toml or check out the branch to start from",
            ),
            G::BranchExists { .. } => Error::usage(message)
                .with_help("continue it with `--resume`, or discard it with `--fresh`"),
            G::DirtyCheckout { .. } => Error::runtime(message).with_help(
                "commit or stash your changes to these files, then run `autobuild complete <ID>`",
            ),
            G::Conflict { .. } => Error::runtime(message)
                .with_help("merge the branch by hand, or re-run the task from the current base"),
            G::Unlandable { .. } => Error::runtime(message).with_help(
                "nothing was merged; fix the branch (or restore the missing objects), then run \
                 `autobuild complete <ID>`",
            ),
            G::BeyondSymlink { .. } => Error::runtime(message).with_help(
                "replace the link by a directory (or remove it) in that checkout, then run `autobuild complete <ID>`",
            ),
            G::NotFastForward { .. } => {
                Error::runtime(message).with_help("use the `squash` or `merge` strategy")
            }
            _ => Error::runtime(message),
        }
    }
}
