//! Quality-gate profiles: what must hold before a task of a given type is approved.
//!
//! A task's `task_type` selects a profile (`feature`, `bugfix`, …, with aliases such as `fix`).
//! Built-in profiles are embedded from the repo's `profiles/`; users override them per project
//! ([`set`]).

use serde::{Deserialize, Serialize};

pub mod builtin;
pub mod requirement;
pub mod resolve_error;
pub mod set;

pub use requirement::Requirement;
pub use resolve_error::ResolveError;
pub use set::{resolve_profile, LoadedProfile, ProfileSet};

/// A resolved profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Profile {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub aliases: Vec<String>,
    pub require: Vec<Requirement>,
    /// The `[checks.*]` that run for tasks of this profile; `None`: all of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<Vec<String>>,
    /// The minimum line coverage in percent, measured by `[coverage]` of config.toml.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<u8>,
}

impl Profile {
    /// Everything the gate checks for this profile: `require`, and the coverage minimum.
    pub fn requirements(&self) -> Vec<Requirement> {
        let mut all = self.require.clone();
        all.extend(
            self.coverage
                .map(|minimum| Requirement::Coverage { minimum }),
        );
        all
    }
}
