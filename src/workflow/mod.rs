//! Workflows: the typed model, loading with precedence, merging, validation and expressions.

pub mod context;
pub mod model;
