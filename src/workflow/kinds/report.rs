//! `uses = "report"`: write `report.md` for the run as it stands (usually `always = true`).

use serde::Serialize;

use super::{Kind, Output, Uses, ValueType};

pub static KIND: Kind = Kind {
    uses: Uses::Report,
    summary: "Write the run's report (`report.md`) as it stands; with `always = true` it is written whatever happened.",
    keys: &[],
    outputs: &[Output::new("path", ValueType::Text, "where the report was written")],
    needs_worktree: false,
    spends_budget: false,
    leaves_files: false,
    loop_only: false,
    describe: |_| "report".to_string(),
};

/// What a report step publishes.
#[derive(Debug, Clone, Serialize)]
pub struct ReportOutputs {
    pub path: String,
}
