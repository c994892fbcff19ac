//! Quality-gate profiles: what must hold before a task of a given type is approved.
//!
//! A task's `task_type` selects a profile (`feature`, `bugfix`, …, with aliases such as `fix`).
//! Built-in profiles are embedded from the repo's `profiles/`; users override them per project.

use serde::{Deserialize, Serialize};

pub mod requirement;

pub use requirement::Requirement;

/// A resolved profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub aliases: Vec<String>,
    pub require: Vec<Requirement>,
}
