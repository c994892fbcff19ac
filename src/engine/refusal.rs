//! Why autobuild will not start or continue a run, in the words task and feature runs share:
//! each refusal is a variant with its data, worded once in `Display` and `help`, and becomes a
//! usage error (exit 2) through `From`.

use std::fmt;

use crate::error::Error;

/// What is being run: a task or a feature, by id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    Task(String),
    Feature(String),
}

impl Subject {
    fn id(&self) -> &str {
        match self {
            Subject::Task(id) | Subject::Feature(id) => id,
        }
    }

    /// The subcommand that runs it.
    fn command(&self) -> &'static str {
        match self {
            Subject::Task(_) => "task",
            Subject::Feature(_) => "feature",
        }
    }
}

/// "task TASK-1" / "feature FEAT-1".
impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.command(), self.id())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Another process runs it (its lock is held).
    AlreadyRunning { subject: Subject, holder: String },
    /// Its branch exists from an earlier run, and the command said neither `--resume` nor
    /// `--fresh`.
    BranchExists { subject: Subject, branch: String },
    /// No run of `id` in this repository.
    NoRun { id: String },
}

impl Refusal {
    /// What to do about it, when there is one thing to say wherever it is refused.
    pub fn help(&self) -> Option<String> {
        match self {
            Refusal::AlreadyRunning { .. } => None,
            Refusal::BranchExists { subject, .. } => Some(format!(
                "continue it with `autobuild {command} {id} --resume`, or discard it with `autobuild {command} {id} --fresh` (asks first; --yes to skip)",
                command = subject.command(),
                id = subject.id()
            )),
            Refusal::NoRun { .. } => {
                Some("`autobuild status` lists the runs of this repository".into())
            }
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::AlreadyRunning { subject, holder } => {
                write!(f, "{subject} is already being run by process {holder}")
            }
            Refusal::BranchExists { subject, branch } => write!(
                f,
                "branch `{branch}` already exists from an earlier run of {}",
                subject.id()
            ),
            Refusal::NoRun { id } => write!(f, "no run of {id} here"),
        }
    }
}

impl From<Refusal> for Error {
    fn from(refusal: Refusal) -> Error {
        let error = Error::usage(refusal.to_string());
        match refusal.help() {
            Some(help) => error.with_help(help),
            None => error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_is_worded_once_for_tasks_and_features() {
        let cases = [
            (
                Refusal::AlreadyRunning {
                    subject: Subject::Feature("FEAT-1".into()),
                    holder: "4242".into(),
                },
                "feature FEAT-1 is already being run by process 4242",
                None,
            ),
            (
                Refusal::BranchExists {
                    subject: Subject::Task("TASK-1".into()),
                    branch: "autobuild/TASK-1".into(),
                },
                "branch `autobuild/TASK-1` already exists from an earlier run of TASK-1",
                Some(
                    "continue it with `autobuild task TASK-1 --resume`, or discard it with \
                     `autobuild task TASK-1 --fresh` (asks first; --yes to skip)",
                ),
            ),
            (
                Refusal::NoRun {
                    id: "TASK-9".into(),
                },
                "no run of TASK-9 here",
                Some("`autobuild status` lists the runs of this repository"),
            ),
        ];
        for (refusal, message, help) in cases {
            assert_eq!(refusal.to_string(), message);
            assert_eq!(refusal.help().as_deref(), help);
            let error = Error::from(refusal);
            assert_eq!(error.exit_code(), crate::error::exit::USAGE);
        }
    }
}
