//! What the emitted CI workflows cannot do that a local feature run does, decided before a file
//! is written (docs/scale-out.md, "What CI does not do").
//!
//! - **`[feature] integration = "integrate"`** is emitted with a warning: the landing job runs
//!   the integration check but no player (it has no agent), so a failure stops the feature as
//!   with `check`; the landing job says so too ([`INTEGRATE_IN_CI`]).
//!
//! Hidden paths are not among them: the task jobs of tasks that hide paths provide the sandbox
//! first ([`super::sandbox`]).

use model::project::{Config, Integration};

/// What `integrate` becomes in a landing job: said when the file is written and when a landing
/// job's check fails.
pub const INTEGRATE_IN_CI: &str = "[feature] integration = \"integrate\" only checks in \
     `autobuild feature --land` (the CI landing job): no player runs there, so a failed integration check stops the feature as with \
     \"check\"; repair it on the feature branch and re-run the workflow, or run the feature \
     locally to have the player repair it";

/// The warning for a project whose failed integration checks a player would repair locally.
pub fn integrate_warning(config: &Config) -> Option<&'static str> {
    (config.feature.integration == Integration::Integrate).then_some(INTEGRATE_IN_CI)
}
