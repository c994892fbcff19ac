//! The `approval` step: a person signs off. An answer given with `autobuild approve`/`reject`
//! while the run waited is taken first; otherwise a terminal is asked; with neither, the run
//! stops waiting (exit 6) and is not marked past this step, so continuing it asks again. The
//! gate asks the same way when a reviewer raises a `critical` issue in a workflow that has an
//! approval step.

use crate::engine::cx::RunCx;
use crate::engine::exec::StepDone;
use crate::engine::state::{Answer, SignOff};
use crate::engine::Outcome;
use base::error::Error;
use model::workflow::kinds::ApprovalOutputs;
use model::workflow::model::Step;

/// `context` is what `${{ }}` in the question reads (a plan to sign off:
/// `${{ steps.plan.outputs.text }}`).
pub fn execute(
    cx: &mut RunCx,
    step: &Step,
    question: Option<&str>,
    context: &serde_json::Value,
) -> Result<StepDone, Error> {
    let question = question
        .map(|q| model::workflow::expr::interpolate(q, context))
        .transpose()
        .map_err(|e| Error::runtime(format!("step `{}`: `question`: {e}", step.id)))?;
    // The default question asks for the merge too (unless the run was started with
    // `--no-merge`), so a "yes" at the terminal lands the run in one step: the merge step does
    // not ask a second time. A question of the workflow's own (a plan to sign off) asks nothing
    // about merging.
    let merge_question = question.is_none() && !cx.state.settings.no_merge;
    let question = question.unwrap_or_else(|| {
        let merge = if merge_question { " for merge" } else { "" };
        format!(
            "Approve the work on {} ({}){merge}?",
            cx.state.task_id, cx.state.title
        )
    });
    Ok(match ask(cx, &step.id, &question) {
        Asked::Approved(signed) => {
            if merge_question && signed.answer.by == TERMINAL {
                // Persisted with the state, so a resume after a crash merges too, as with
                // `autobuild approve --merge`.
                cx.state.settings.auto_merge = true;
            }
            let outputs: ApprovalOutputs = signed.answer.clone();
            StepDone::ok(signed.describe(), outputs)
        }
        Asked::Not(done) => done,
    })
}

/// `SignOff::by` for an answer given at the terminal while the run asked.
const TERMINAL: &str = "terminal";

/// What [`ask`] got from a person.
pub(super) enum Asked {
    /// Approved, by `command` or `terminal`.
    Approved(SignOff),
    /// Not approved: the step's result (rejected, waiting, or cancelled).
    Not(StepDone),
}

/// A person's answer to `question` at step `step_id`: the one given with `autobuild
/// approve`/`reject` while the run waited, else the terminal's. Otherwise the step's result: a rejection ends the run blocked with the reason, no answer
/// yet makes it wait (exit 6, the step is not marked done, so continuing asks again).
pub(super) fn ask(cx: &mut RunCx, step_id: &str, question: &str) -> Asked {
    if let Some(answer) = cx.state.answer.take() {
        let signed = SignOff {
            step: step_id.to_string(),
            answer: Answer {
                by: "command".into(),
                ..answer
            },
        };
        return decided(cx, signed);
    }
    if cx.prompter.is_interactive() {
        return match cx.ask(question) {
            None => Asked::Not(StepDone::cancelled()),
            Some(approved) => {
                let signed = SignOff {
                    step: step_id.to_string(),
                    answer: Answer {
                        approved,
                        by: TERMINAL.into(),
                        person: git::person(&cx.plan.root).unwrap_or_default(),
                        at: crate::engine::cx::now(),
                        reason: if approved {
                            String::new()
                        } else {
                            "declined at the terminal".into()
                        },
                    },
                };
                decided(cx, signed)
            }
        };
    }
    Asked::Not(StepDone::halted(
        format!("waiting for a person: {question}"),
        Outcome::Waiting {
            step: step_id.to_string(),
            question: question.to_string(),
            task: cx.state.task_id.clone(),
        },
    ))
}

/// A person's decision, recorded in the run's state: an approval lets the run go on; a
/// rejection ends it blocked with the reason.
fn decided(cx: &mut RunCx, signed: SignOff) -> Asked {
    cx.state.signoffs.push(signed.clone());
    if signed.answer.approved {
        return Asked::Approved(signed);
    }
    let summary = signed.describe();
    Asked::Not(StepDone::halted(
        summary,
        Outcome::Rejected {
            reason: signed.answer.reason,
        },
    ))
}
