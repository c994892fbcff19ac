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
