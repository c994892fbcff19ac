//! The `approval` step: a person signs off. An answer given with `autobuild approve`/`reject`
//! while the run waited is taken first; otherwise a terminal is asked; with neither, the run
//! stops waiting (exit 6) and is not marked past this step, so continuing it asks again.

use crate::engine::cx::RunCx;
use crate::engine::events::EventKind;
use crate::engine::exec::StepDone;
use crate::engine::Outcome;
use crate::error::Error;
use crate::workflow::kinds::ApprovalOutputs;
use crate::workflow::model::Step;

pub fn execute(cx: &mut RunCx, step: &Step, question: Option<&str>) -> Result<StepDone, Error> {
    let question = question.map_or_else(
        || {
            format!(
                "Approve the work on {} ({}) for merge?",
                cx.state.task_id, cx.state.title
            )
        },
        str::to_string,
    );
    if let Some(answer) = cx.state.answer.take() {
        return Ok(decided(answer.approved, "command", answer.reason));
    }
    if cx.prompter.is_interactive() {
        cx.emit(EventKind::AwaitingAnswer {
            question: question.clone(),
        });
        return Ok(match cx.prompter.confirm(&question, &cx.cancel) {
            None => StepDone::cancelled(),
            Some(approved) => decided(approved, "terminal", "declined at the terminal".into()),
        });
    }
    Ok(StepDone::halted(
        format!("waiting for a person: {question}"),
        Outcome::Waiting {
            step: step.id.clone(),
            question,
        },
    ))
}

/// The step's result for a person's decision: an approval lets the run go on; a rejection
/// ends it blocked with the reason.
fn decided(approved: bool, by: &str, reason: String) -> StepDone {
    if approved {
        return StepDone::ok(
            format!("approved ({by})"),
            ApprovalOutputs {
                approved: true,
                by: by.to_string(),
                reason: String::new(),
            },
        );
    }
    let summary = format!("rejected ({by}): {reason}");
    StepDone::halted(summary, Outcome::Rejected { reason })
}
