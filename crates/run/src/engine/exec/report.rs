//! The `report` step: `report.md`, the run's summary — or, when the run did not get approved,
//! the blocked report a human reads next morning: attempts, recurring issues with counts, the
//! last feedback, the failure class, suggested actions and where the work is preserved.

use crate::engine::cx::RunCx;
use crate::engine::exec::StepDone;
use crate::engine::outcome::Outcome;
use crate::engine::paths::RunPaths;
use crate::engine::records::TurnRecords;
use crate::engine::state::RunState;
use crate::report::records::RunRecords;
use base::error::Error;
use model::workflow::kinds::ReportOutputs;
use process::Redactor;

pub fn execute(cx: &mut RunCx) -> Result<StepDone, Error> {
    let outcome = cx
        .outcome_so_far
        .clone()
        .unwrap_or(Outcome::Approved { merged: false });
    let path = write_report(&cx.paths, &cx.state, &outcome)?;
    Ok(StepDone::ok(
        path.display().to_string(),
        ReportOutputs {
            path: path.display().to_string(),
        },
    ))
}

/// Writes `report.md` for the run as it stands, returning its path.
pub fn write_report(
    paths: &RunPaths,
    state: &RunState,
    outcome: &Outcome,
) -> Result<std::path::PathBuf, Error> {
    let records = crate::report::load_run(paths, state, &outcome.to_string(), Some(outcome));
    let markdown = crate::report::html::render_markdown(&records, outcome, true)?;
    // Redacted: the report quotes records and diffs that may hold a secret's value.
    let text = Redactor::new(&[]).apply(&markdown);
    let path = paths.report();
    crate::engine::state::write_atomic(&path, text.as_bytes())
        .map_err(|e| Error::io("cannot write", &path, e))?;
    crate::report::write_records(paths, &records)?;
    Ok(path)
}

/// The report's Markdown from the run's turn records only (a pull request's text, `here`
/// false: [`crate::report::html::render_markdown`]).
pub fn render(
    state: &RunState,
    outcome: &Outcome,
    turns: Vec<TurnRecords>,
    here: bool,
) -> Result<String, Error> {
    let records = RunRecords::of_turns(state.clone(), outcome.to_string(), Some(outcome), turns);
    crate::report::html::render_markdown(&records, outcome, here)
}
