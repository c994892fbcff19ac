//! The one place that maps every failure to an exit code (README.md, "Exit codes").
//!
//! Library modules return their own typed errors: an enum per concept, its wording in one
//! `Display`, its fix in [`Problem::help`] and its [`Class`]. They convert into [`Error`] here
//! (any [`Problem`] through `?`), and `main` turns an `Error` into a message on stderr and its
//! exit code. Tests match the variant ([`Error::problem`]) rather than the message text. Run outcomes that are not
//! failures of autobuild itself (blocked, stalled, cancelled) are `engine::Outcome`s,
//! not errors.

use std::borrow::Cow;
use std::io;
use std::path::PathBuf;

use crate::diagnostic::{Diagnostic, Diagnostics};

/// Exit codes of the command line contract.
pub mod exit {
    pub const APPROVED: u8 = 0;
    pub const RUNTIME: u8 = 1;
    pub const USAGE: u8 = 2;
    pub const TURN_LIMIT: u8 = 3;
    pub const STALLED: u8 = 4;
    pub const CANCELLED: u8 = 5;
    /// The run waits for a person: `autobuild approve <ID>` or `autobuild reject <ID>`.
    pub const WAITING: u8 = 6;
    /// Approved, but the merge that was asked for (`--auto-merge`, `approve --merge`) could not
    /// land (local edits in the way, a conflict): `autobuild complete <ID>` lands it.
    pub const NOT_MERGED: u8 = 7;
}

/// Whose problem a typed error is: the user's request (exit 2) or something that failed while
/// running (exit 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    Usage,
    Runtime,
}

/// A module's typed error: an enum with its wording in `Display`, what to do about it in
/// `help`, and its [`Class`], which [`Error::exit_code`] maps to an exit code.
pub trait Problem: std::error::Error + Send + Sync + 'static {
    fn class(&self) -> Class;

    /// What to do about it, when there is something to say.
    fn help(&self) -> Option<String> {
        None
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Files a user wrote are invalid; every problem is listed.
    #[error("{0}")]
    Invalid(Diagnostics),
    /// The command line asks for something impossible or unknown.
    #[error("{message}")]
    Usage {
        message: String,
        help: Option<String>,
    },
    /// Reading or writing a file failed.
    #[error("{action} {}: {source}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    /// Anything else that went wrong while running.
    #[error("{message}")]
    Runtime {
        message: String,
        help: Option<String>,
    },
    /// A module's typed error.
    #[error("{0}")]
    Problem(Box<dyn Problem>),
}

impl Error {
    pub fn usage(message: impl Into<String>) -> Error {
        Error::Usage {
            message: message.into(),
            help: None,
        }
    }

    pub fn runtime(message: impl Into<String>) -> Error {
        Error::Runtime {
            message: message.into(),
            help: None,
        }
    }

    /// Adds a help line to a usage or runtime error. A typed error's help is its own; one given
    /// here instead keeps the words and the class but not the type.
    pub fn with_help(self, text: impl Into<String>) -> Error {
        match self {
            Error::Problem(problem) => {
                let message = problem.to_string();
                let help = Some(text.into());
                match problem.class() {
                    Class::Usage => Error::Usage { message, help },
                    Class::Runtime => Error::Runtime { message, help },
                }
            }
            Error::Usage { message, .. } => Error::Usage {
                message,
                help: Some(text.into()),
            },
            Error::Runtime { message, .. } => Error::Runtime {
                message,
                help: Some(text.into()),
            },
            other => other,
        }
    }

    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Error {
        Error::Io {
            action,
            path: path.into(),
            source,
        }
    }

    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Invalid(_) | Error::Usage { .. } => exit::USAGE,
            Error::Io { .. } | Error::Runtime { .. } => exit::RUNTIME,
            Error::Problem(problem) => match problem.class() {
                Class::Usage => exit::USAGE,
                Class::Runtime => exit::RUNTIME,
            },
        }
    }

    /// The help line, if the error has one.
    /// The message with its help in parentheses, for one line (a warning, a task's message).
    pub fn one_line(&self) -> String {
        match self.help() {
            Some(help) => format!("{self} ({help})"),
            None => self.to_string(),
        }
    }

    pub fn help(&self) -> Option<Cow<'_, str>> {
        match self {
            Error::Usage { help, .. } | Error::Runtime { help, .. } => {
                help.as_deref().map(Cow::Borrowed)
            }
            Error::Problem(problem) => problem.help().map(Cow::Owned),
            _ => None,
        }
    }

    /// The typed error of type `P` this error carries, if it is one: what tests match.
    pub fn problem<P: Problem>(&self) -> Option<&P> {
        match self {
            Error::Problem(problem) => {
                let problem: &(dyn std::error::Error + 'static) = problem.as_ref();
                problem.downcast_ref::<P>()
            }
            _ => None,
        }
    }
}

impl<P: Problem> From<P> for Error {
    fn from(problem: P) -> Error {
        Error::Problem(Box::new(problem))
    }
}

impl From<Diagnostics> for Error {
    fn from(d: Diagnostics) -> Error {
        Error::Invalid(d)
    }
}

impl From<Vec<Diagnostic>> for Error {
    fn from(d: Vec<Diagnostic>) -> Error {
        Error::Invalid(Diagnostics(d))
    }
}

impl From<Diagnostic> for Error {
    fn from(d: Diagnostic) -> Error {
        Error::Invalid(Diagnostics(vec![d]))
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, thiserror::Error)]
    enum Sample {
        #[error("no widget `{0}`")]
        NoWidget(String),
        #[error("the widget broke")]
        Broke,
    }

    impl Problem for Sample {
        fn class(&self) -> Class {
            match self {
                Sample::NoWidget(_) => Class::Usage,
                Sample::Broke => Class::Runtime,
            }
        }

        fn help(&self) -> Option<String> {
            match self {
                Sample::NoWidget(_) => Some("`widgets list` lists them".into()),
                Sample::Broke => None,
            }
        }
    }

    #[derive(Debug, thiserror::Error)]
    #[error("other")]
    struct Other;

    impl Problem for Other {
        fn class(&self) -> Class {
            Class::Runtime
        }
    }

    #[test]
    fn a_typed_error_keeps_its_words_its_help_its_class_and_its_variant() {
        let error = Error::from(Sample::NoWidget("w".into()));
        assert_eq!(error.to_string(), "no widget `w`");
        assert_eq!(error.help().as_deref(), Some("`widgets list` lists them"));
        assert_eq!(error.exit_code(), exit::USAGE);
        assert_eq!(
            error.problem::<Sample>(),
            Some(&Sample::NoWidget("w".into()))
        );
        assert!(error.problem::<Other>().is_none());

        let error = Error::from(Sample::Broke);
        assert_eq!(error.exit_code(), exit::RUNTIME);
        assert_eq!(error.help(), None);
        assert!(Error::usage("text").problem::<Sample>().is_none());

        let replaced = Error::from(Sample::NoWidget("w".into())).with_help("other help");
        assert_eq!(replaced.to_string(), "no widget `w`");
        assert_eq!(replaced.help().as_deref(), Some("other help"));
        assert_eq!(replaced.exit_code(), exit::USAGE);
    }
}
