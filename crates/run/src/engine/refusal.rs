//! Why autobuild will not start, continue, finish or discard a run, in the words task and
//! feature runs and the commands on existing runs (`resume`, `complete`, `discard`, `approve`,
//! `reject`, `logs`) share: each refusal is a variant with its data, worded once in `Display`
//! and `help`, and is a usage error (exit 2).

use std::fmt;

use crate::engine::lock::LockError;
use crate::engine::state::RunStatus;
use base::error::{Class, Error, Problem};
use base::Keyword;

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
    /// `--resume` when the branch to continue on does not exist.
    NoBranchToResume { subject: Subject, branch: String },
    /// `resume` of a task that has no run.
    NothingToResume { id: String },
    /// `resume` of a feature that has not run yet.
    FeatureNotRun { id: String },
    /// `resume` of a run that ended (it is not interrupted).
    NotInterrupted { id: String, status: RunStatus },
    /// `complete` of a run that is already merged.
    AlreadyMerged { id: String, base: String },
    /// `complete` of a run that is not approved.
    NotApproved { id: String, status: RunStatus },
    /// `approve`/`reject` of a run that is not waiting at an `approval` step.
    NotWaiting {
        id: String,
        status: RunStatus,
        approve: bool,
    },
    /// `reject` without a reason.
    RejectionWithoutReason,
    /// A command on one task's run was given a feature's id.
    IsFeature { id: String },
    /// Deleting unmerged work without a terminal to ask and without `--yes`; `fresh` when it
    /// is `--fresh` that would delete it (else `discard`).
    DeleteUnconfirmed { branch: String, fresh: bool },
    /// The person answered no to deleting unmerged work.
    DeleteDeclined { fresh: bool },
}

impl Refusal {
    /// The refusal for a run lock `subject` could not take: someone holds it (a refusal), or
    /// the lock file could not be used (a runtime error).
    pub fn lock(subject: Subject, error: LockError) -> Error {
        match error {
            LockError::Held { holder, .. } => Refusal::AlreadyRunning { subject, holder }.into(),
            LockError::Io { .. } => error.into(),
        }
    }
}

impl Problem for LockError {
    fn class(&self) -> Class {
        match self {
            LockError::Held { .. } => Class::Usage,
            LockError::Io { .. } => Class::Runtime,
        }
    }
}

impl Refusal {
    /// What to do about it, when there is one thing to say wherever it is refused.
    pub fn help(&self) -> Option<String> {
        match self {
            Refusal::AlreadyRunning { .. } => Some(
                "wait for it to finish, or stop it (Ctrl-C) and use `autobuild resume`".into(),
            ),
            Refusal::BranchExists { subject, .. } => Some(format!(
                "continue it with `autobuild {command} {id} --resume`, or discard it with `autobuild {command} {id} --fresh` (asks first; --yes to skip)",
                command = subject.command(),
                id = subject.id()
            )),
            Refusal::NoRun { .. } => {
                Some("`autobuild status` lists the runs of this repository".into())
            }
            Refusal::NoBranchToResume { subject, .. } => Some(format!(
                "start the {command} with `autobuild {command} {id}`",
                command = subject.command(),
                id = subject.id()
            )),
            Refusal::NothingToResume { id } => {
                Some(format!("start one with `autobuild task {id}`"))
            }
            Refusal::FeatureNotRun { id } => {
                Some(format!("start it with `autobuild feature {id}`"))
            }
            Refusal::NotInterrupted { id, status } => Some(match status {
                RunStatus::Approved => format!("merge it with `autobuild complete {id}`"),
                RunStatus::Blocked | RunStatus::Stalled | RunStatus::Failed => format!(
                    "give it more turns on the same branch with `autobuild task {id} --resume --max-turns N`"
                ),
                _ => format!("start a new run with `autobuild task {id}`"),
            }),
            Refusal::AlreadyMerged { .. } | Refusal::NotApproved { .. } => None,
            Refusal::NotWaiting { id, approve, .. } => Some(format!(
                "`{}` answers a run stopped at an `approval` step (exit 6); `autobuild status {id}` shows where it stands",
                if *approve { "approve" } else { "reject" }
            )),
            Refusal::RejectionWithoutReason => Some(
                "say what must change: `--reason \"…\"` (it goes into the report)".into(),
            ),
            Refusal::IsFeature { id } => Some(format!(
                "`autobuild status {id}` lists its tasks; discard its branches with `autobuild feature {id} --fresh`"
            )),
            Refusal::DeleteUnconfirmed { .. } => {
                Some("add --yes to confirm without a terminal".into())
            }
            Refusal::DeleteDeclined { .. } => None,
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
            Refusal::NoBranchToResume { subject, branch } => write!(
                f,
                "there is no branch `{branch}` to resume {} on",
                subject.id()
            ),
            Refusal::NothingToResume { id } => write!(f, "no run of {id} to resume"),
            Refusal::FeatureNotRun { id } => write!(f, "feature {id} has not run yet"),
            Refusal::NotInterrupted { id, status } => write!(
                f,
                "the run of {id} is not interrupted: it ended {}",
                status.as_str()
            ),
            Refusal::AlreadyMerged { id, base } => {
                write!(f, "the run of {id} is already merged into {base}")
            }
            Refusal::NotApproved { id, status } => write!(
                f,
                "the run of {id} is {}, not approved; only approved runs can be completed",
                status.as_str()
            ),
            Refusal::NotWaiting { id, status, .. } => write!(
                f,
                "the run of {id} is not waiting for a sign-off: it is {}",
                status.as_str()
            ),
            Refusal::RejectionWithoutReason => write!(f, "a rejection needs a reason"),
            Refusal::IsFeature { id } => {
                write!(f, "{id} is a feature; this command works on one task's run")
            }
            Refusal::DeleteUnconfirmed {
                branch,
                fresh: true,
            } => write!(
                f,
                "--fresh would delete branch {branch} and its unmerged work"
            ),
            Refusal::DeleteUnconfirmed {
                branch,
                fresh: false,
            } => write!(f, "discarding deletes {branch} and its unmerged work"),
            Refusal::DeleteDeclined { fresh: true } => {
                write!(f, "kept the existing branch; nothing was changed")
            }
            Refusal::DeleteDeclined { fresh: false } => write!(f, "nothing was discarded"),
        }
    }
}

impl std::error::Error for Refusal {}

impl Problem for Refusal {
    fn class(&self) -> Class {
        Class::Usage
    }

    fn help(&self) -> Option<String> {
        Refusal::help(self)
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
                Some("wait for it to finish, or stop it (Ctrl-C) and use `autobuild resume`"),
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
            let error = Error::from(refusal.clone());
            assert_eq!(error.exit_code(), base::error::exit::USAGE);
            assert_eq!(error.problem::<Refusal>(), Some(&refusal));
        }
    }

    #[test]
    fn a_run_that_ended_says_what_can_be_done_with_it_instead() {
        let help = |status| {
            Refusal::NotInterrupted {
                id: "T-1".into(),
                status,
            }
            .help()
            .unwrap()
        };
        assert_eq!(
            help(RunStatus::Approved),
            "merge it with `autobuild complete T-1`"
        );
        for status in [RunStatus::Blocked, RunStatus::Stalled, RunStatus::Failed] {
            assert!(
                help(status).contains("--resume --max-turns N"),
                "{status:?}"
            );
        }
        assert_eq!(
            help(RunStatus::Merged),
            "start a new run with `autobuild task T-1`"
        );
    }

    #[test]
    fn a_held_lock_is_a_refusal_and_a_broken_one_a_runtime_error() {
        let held = Refusal::lock(
            Subject::Task("T-1".into()),
            LockError::Held {
                task: "T-1".into(),
                holder: "7".into(),
            },
        );
        assert_eq!(
            held.problem::<Refusal>(),
            Some(&Refusal::AlreadyRunning {
                subject: Subject::Task("T-1".into()),
                holder: "7".into()
            })
        );
        let broken = Refusal::lock(
            Subject::Task("T-1".into()),
            LockError::Io {
                path: "/x/T-1.lock".into(),
                source: std::io::Error::other("disk gone"),
            },
        );
        assert_eq!(broken.exit_code(), base::error::exit::RUNTIME);
        assert!(broken.problem::<LockError>().is_some());
    }
}
