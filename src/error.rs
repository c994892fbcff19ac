//! The one place that maps every failure to an exit code (README.md, "Exit codes").
//!
//! Library modules return their own typed errors; they convert into [`Error`] here, and
//! `main` turns an `Error` into a message on stderr and its exit code. Run outcomes that are not
//! failures of autobuild itself (blocked, stalled, cancelled) are [`crate::engine::Outcome`]s,
//! not errors.

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

    /// Adds a help line to a usage or runtime error.
    pub fn with_help(self, text: impl Into<String>) -> Error {
        match self {
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
        }
    }

    /// The help line, if the error has one.
    pub fn help(&self) -> Option<&str> {
        match self {
            Error::Usage { help, .. } | Error::Runtime { help, .. } => help.as_deref(),
            _ => None,
        }
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
