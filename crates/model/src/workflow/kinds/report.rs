//! `uses = "report"`: write `report.md` for the run as it stands (usually `always = true`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Kind, Uses};

/// A `report` step has only the common keys.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ReportStep {}

impl ReportStep {
    pub(super) fn describe(&self) -> String {
        "report".to_string()
    }
}

pub static KIND: Kind = Kind {
    uses: Uses::Report,
    summary: "Write the run's report (`report.md`) as it stands; with `always = true` it is written whatever happened.",
    needs_worktree: false,
    spends_budget: false,
    leaves_files: false,
    loop_only: false,
};

/// What a report step publishes (its doc comments are the reference's text).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct ReportOutputs {
    /// where the report was written
    pub path: String,
}
