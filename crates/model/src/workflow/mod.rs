//! Workflows: the typed model, loading with precedence, merging, validation and expressions.

pub mod annotate;
pub mod builtin;
pub mod catalog;
pub mod context;
pub mod decode;
pub mod expr;
pub mod kinds;
pub mod merge;
pub mod model;
pub mod overrides;
pub mod prompts;
pub mod resolve;
pub mod validate;

pub use builtin::DEFAULT_WORKFLOW;
pub use catalog::Catalog;
pub use overrides::Overrides;
pub use resolve::{resolve, ResolvedWorkflow};

/// The help for `name`, which is none of `names`: the closest of them when one is close enough
/// (`did you mean …?`), else `listing` and every name.
pub(crate) fn close_or_listed<S: std::borrow::Borrow<str>>(
    name: &str,
    names: &[S],
    listing: &str,
) -> String {
    match base::diagnostic::did_you_mean(name, names.iter().map(|n| n.borrow())) {
        Some(close) => format!("did you mean `{close}`?"),
        None => format!("{listing}: {}", names.join(", ")),
    }
}
