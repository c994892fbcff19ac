//! Why a task type gets no profile: it is work for a person, or the built-in default profile
//! is missing (a broken build). An unknown task type is not an error: it gets the default
//! profile and a warning ([`super::ProfileSet::resolve`]).

use base::error::{Class, Problem};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// A task type meant for a person ([`super::builtin::HUMAN_TASK_TYPES`]).
    #[error(
        "task type `{0}` hands the task to a human operator; autobuild's agents do not run it"
    )]
    ForAPerson(String),
    /// The default profile is not among the loaded ones.
    #[error("the default profile `{0}` is not defined")]
    NoDefault(&'static str),
}

impl Problem for ResolveError {
    fn class(&self) -> Class {
        match self {
            ResolveError::ForAPerson(_) => Class::Usage,
            ResolveError::NoDefault(_) => Class::Runtime,
        }
    }

    fn help(&self) -> Option<String> {
        match self {
            ResolveError::ForAPerson(_) => Some(
                "do this task yourself and mark it done (GuardKit defers these too); to have agents try anyway, give it another task_type".into(),
            ),
            ResolveError::NoDefault(_) => None,
        }
    }
}
