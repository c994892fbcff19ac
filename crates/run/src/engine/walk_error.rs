//! What stops the walk over a run's steps that is autobuild's own failure rather than an
//! outcome (an outcome is [`crate::engine::Outcome`]): an expression of the workflow that
//! cannot be evaluated, or Ctrl-C that cannot be caught.

use base::error::{Class, Problem};
use model::workflow::expr::ExprError;

#[derive(Debug, thiserror::Error)]
pub enum WalkError {
    /// A step's `if` cannot be evaluated.
    #[error("step `{step}`: `if`: {source}")]
    Condition { step: String, source: ExprError },
    /// A loop's `until` cannot be evaluated.
    #[error("loop `{id}`: `until`: {source}")]
    Until { id: String, source: ExprError },
    /// The handler that turns Ctrl-C into a cancellation cannot be installed.
    #[error("cannot install a signal handler: {0}")]
    SignalHandler(#[source] std::io::Error),
}

impl Problem for WalkError {
    fn class(&self) -> Class {
        Class::Runtime
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expression_that_fails_names_its_step_and_clause() {
        let source = ExprError::Eval {
            expr: "steps.x.outputs.y".into(),
            message: "undefined".into(),
        };
        let error = WalkError::Condition {
            step: "coach".into(),
            source,
        };
        assert!(error.to_string().starts_with("step `coach`: `if`: "));
        assert_eq!(error.class(), Class::Runtime);
    }
}
