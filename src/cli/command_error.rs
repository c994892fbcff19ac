//! What a subcommand itself refuses or fails at, outside a run (refusals about runs are
//! [`crate::engine::refusal::Refusal`]s; a name missing from a catalog is
//! [`crate::cli::unknown::Unknown`]): one variant per problem, worded once.

use std::path::PathBuf;

use crate::error::{Class, Problem};
use crate::git::GitError;

#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// `init` outside a git repository.
    #[error("{} is not inside a git repository", dir.display())]
    NotInRepository { dir: PathBuf },
    /// `demo` makes its own repository, so `-C` has nothing to point at.
    #[error("`demo` makes its own temporary repository; -C does not apply to it")]
    DemoWithDirectory,
    /// The demo's sample repository could not be made.
    #[error("cannot make the demo repository: {0}")]
    DemoRepository(#[source] GitError),
    /// `--base` names a branch the repository does not have.
    #[error("--base: no branch `{0}` in this repository")]
    NoBaseBranch(String),
    /// `completions` for a shell clap knows but autobuild has no script for.
    #[error("no completion script for {0}")]
    NoCompletion(String),
    /// The completion script could not be written.
    #[error("cannot write the completion script: {0}")]
    CompletionScript(#[source] std::io::Error),
    /// `status --json` could not be serialised.
    #[error("cannot write the status as JSON: {0}")]
    StatusJson(#[source] serde_json::Error),
    /// `logs` filters that match no record; `what` is the run, or its turn.
    #[error("no records for {what}")]
    NoRecords { what: String },
    /// `logs --step` of a step the run's workflow does not have.
    #[error("the run's workflow has no step `{step}`")]
    NoStep { step: String, steps: Vec<String> },
    /// The run's resolved workflow (a record autobuild wrote) cannot be parsed.
    #[error("the run's workflow {} is unreadable: {source}", file.display())]
    UnreadableWorkflow {
        file: PathBuf,
        source: toml::de::Error,
    },
}

impl Problem for CommandError {
    fn class(&self) -> Class {
        match self {
            CommandError::NotInRepository { .. }
            | CommandError::DemoWithDirectory
            | CommandError::NoBaseBranch(_)
            | CommandError::NoCompletion(_)
            | CommandError::NoRecords { .. }
            | CommandError::NoStep { .. } => Class::Usage,
            CommandError::DemoRepository(_)
            | CommandError::CompletionScript(_)
            | CommandError::StatusJson(_)
            | CommandError::UnreadableWorkflow { .. } => Class::Runtime,
        }
    }

    fn help(&self) -> Option<String> {
        Some(match self {
            CommandError::NotInRepository { .. } => {
                "autobuild works in git worktrees; run `git init` first, or pass `-C <repository>`"
                    .into()
            }
            CommandError::DemoWithDirectory => {
                "drop -C; the demo's directory is made in the system temp directory ($TMPDIR)"
                    .into()
            }
            CommandError::NoBaseBranch(_) => {
                "name a local branch (`git branch --list`); fetch a remote one first".into()
            }
            CommandError::NoRecords { .. } => {
                "`autobuild logs ID` without filters shows every record of the run".into()
            }
            CommandError::NoStep { steps, .. } => format!("its steps are: {}", steps.join(", ")),
            CommandError::DemoRepository(_)
            | CommandError::NoCompletion(_)
            | CommandError::CompletionScript(_)
            | CommandError::StatusJson(_)
            | CommandError::UnreadableWorkflow { .. } => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_are_usage_errors_with_a_fix_and_failures_are_runtime_errors() {
        let usage = [
            CommandError::NotInRepository { dir: "/x".into() },
            CommandError::DemoWithDirectory,
            CommandError::NoBaseBranch("mian".into()),
            CommandError::NoRecords {
                what: "turn 3 of T-1".into(),
            },
            CommandError::NoStep {
                step: "x".into(),
                steps: vec!["player".into(), "coach".into()],
            },
        ];
        for error in usage {
            assert_eq!(error.class(), Class::Usage, "{error}");
            assert!(error.help().is_some(), "{error}");
        }
        assert_eq!(
            CommandError::NoStep {
                step: "x".into(),
                steps: vec!["player".into(), "coach".into()],
            }
            .help()
            .as_deref(),
            Some("its steps are: player, coach")
        );
        let failure = CommandError::CompletionScript(std::io::Error::other("full"));
        assert_eq!(failure.class(), Class::Runtime);
        assert_eq!(
            failure.to_string(),
            "cannot write the completion script: full"
        );
    }
}
