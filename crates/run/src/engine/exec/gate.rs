//! The `gate` step: the profile's requirements and the coach verdict, judged over what the
//! runner recorded this turn, give `approved`, the reasons, and the next turn's feedback.

use crate::engine::cx::RunCx;
use crate::engine::exec::StepDone;
use crate::engine::turn::{combined_verdict, CoachRecord, GateRecord};
use crate::engine::Outcome;
use base::error::Error;
use model::steps::feedback::{build_feedback, turn_signature};
use model::steps::gate::{self, CriterionFacts, GateInput, PlayerFacts};
use model::steps::verdict::Issue;
use model::workflow::kinds::{GateStep, LoopStep};
use model::workflow::model::{Action, Step};

/// Judges the turn, weighing the verdicts of the reviewing steps `gate` names (all by default).
pub fn execute(cx: &mut RunCx, step_id: &str, gate: &GateStep) -> Result<StepDone, Error> {
    let plan = cx.plan;
    let turn_number = cx.turn_number();
    let Some(turn) = cx.turn.as_ref() else {
        return Err(Error::runtime("a `gate` step must be inside a loop"));
    };
    let player = match &turn.player {
        Some(p) => PlayerFacts {
            succeeded: p.succeeded(),
            changed: p.branch_changed(),
            failure: (!p.succeeded()).then(|| p.agent.status.feedback()),
        },
        None => PlayerFacts {
            succeeded: false,
            changed: false,
            failure: Some("no player step ran this turn".into()),
        },
    };
    let criteria = plan
        .task
        .criteria
        .iter()
        .map(|c| CriterionFacts {
            id: c.id.clone(),
            text: c.text.clone(),
            verify: c.verify.clone(),
            result: turn
                .verify
                .as_ref()
                .and_then(|v| v.criteria.iter().find(|r| r.name == c.id).cloned()),
        })
        .collect();
    let reviews: Vec<&CoachRecord> = turn.reviews().filter(|r| gate.weighs(&r.step)).collect();
    // Each change is attributed, so the player is never told it did what a reviewer did.
    let violations: Vec<String> = turn
        .player
        .iter()
        .flat_map(|p| {
            p.scope_violation
                .iter()
                .map(move |v| format!("the player `{}`: {v}", p.step))
        })
        .chain(turn.reviews().flat_map(|c| {
            c.scope_violation
                .iter()
                .map(move |v| format!("the reviewer `{}`: {v}", c.step))
        }))
        .collect();
    let scope_violation = (!violations.is_empty()).then_some(violations);
    let mut requirements = plan.gate_requirements();
    // A red-witness turn (`verify` with `expect = "fail"`) writes tests before the code: it
    // judges only what it can, the checks it ran (their statuses already say whether they are
    // red). Its criteria cannot hold yet, its coverage is not measured there, and every other
    // required check (a linter, a hidden check) is the implementation phase's to pass.
    if let Some(red) = turn.verify.as_ref().filter(|v| v.expect_fail) {
        let ran = |name: &str| red.checks.iter().any(|c| c.name == name);
        requirements.retain(|r| match r {
            model::profile::Requirement::Criteria
            | model::profile::Requirement::Coverage { .. } => false,
            model::profile::Requirement::Check(name) => ran(name),
            _ => true,
        });
    }
    let input = GateInput {
        requirements,
        player,
        checks: turn
            .verify
            .as_ref()
            .map(|v| v.checks.clone())
            .unwrap_or_default(),
        criteria,
        verdict: combined_verdict(reviews.iter().copied()),
        coach_ran: !reviews.is_empty(),
        scope_violation,
        objecting: reviews
            .iter()
            .filter(|r| r.verdict.as_ref().is_some_and(|v| !v.approved()))
            .map(|r| r.role.clone())
            .collect(),
        coverage: turn.verify.as_ref().and_then(|v| v.coverage.clone()),
    };
    let critical = input
        .verdict
        .as_ref()
        .and_then(|verdict| verdict.critical())
        .map(critical_issue);
    let decision = gate::evaluate(&input);
    let feedback = build_feedback(&input, &decision);
    let record = GateRecord {
        turn: turn_number,
        criteria_met: gate::criteria_met(&input),
        criteria_total: plan.task.criteria.len(),
        signature: turn_signature(&decision, &feedback),
        feedback,
        decision,
    };
    let approved = record.decision.approved;
    let red = turn.verify.as_ref().is_some_and(|v| v.expect_fail);
    let loop_id = turn.loop_id.clone();
    let path = cx.record_path("gate");
    cx.write_record(&path, &record)?;
    if let Some(state) = cx.state.loops.get_mut(&loop_id) {
        state.feedback = Some(record.feedback.clone());
    }
    // Tests a red witness accepted are locked for the rest of the run: the implementation
    // makes them pass instead of changing them (`RunState::locked`).
    let mut locked_now = 0;
    if approved && red {
        // Unlocked tests would let the implementation rewrite them: no diff, no going on.
        let changed = super::branch_changes(cx).map_err(|e| {
            Error::runtime(format!(
                "cannot list the tests the red witness accepted, to lock them: {e}"
            ))
        })?;
        for path in changed {
            if !cx.state.locked.contains(&path) {
                cx.state.locked.push(path);
                locked_now += 1;
            }
        }
    }
    let summary = if approved && locked_now > 0 {
        format!("approved; {locked_now} test file(s) locked for the rest of the run")
    } else if approved {
        "approved".to_string()
    } else {
        format!("not approved ({} reason(s))", record.decision.reasons.len())
    };
    // The reasons quote agent text (coach evidence, player errors): they go to the record and
    // the feedback, never into expressions, which see only their number.
    let outputs = record.decision.outputs();
    if let Some(turn) = cx.turn.as_mut() {
        turn.gate = Some(record);
    }
    // A critical issue stops the loop at once: a person decides. Where the workflow has an
    // approval step, the person answers there as at a sign-off: an approval lets the loop go
    // on (the player gets the issue as feedback), a rejection ends the run blocked.
    if let Some(issue) = critical {
        if !has_approval_step(&plan.resolved.workflow.steps) {
            return Ok(StepDone::halted(
                format!("{summary}; a reviewer raised a critical issue"),
                Outcome::NeedsPerson { issue },
            ));
        }
        let question = format!(
            "A reviewer raised a critical issue: {issue}. Approve to let the loop go on (the \
             player gets the issue as feedback), or reject to stop."
        );
        if let super::approval::Asked::Not(done) = super::approval::ask(cx, step_id, &question) {
            return Ok(done);
        }
    }
    Ok(StepDone::ok(summary, outputs))
}

fn has_approval_step(steps: &[Step]) -> bool {
    steps.iter().any(|step| match &step.action {
        Action::Approval(_) => true,
        Action::Loop(LoopStep { steps, .. }) => has_approval_step(steps),
        _ => false,
    })
}

/// A critical issue as the report states it: its category, description and location.
fn critical_issue(issue: &Issue) -> String {
    let mut text = String::new();
    if !issue.category.trim().is_empty() {
        text.push_str(&format!("[{}] ", issue.category.trim()));
    }
    text.push_str(issue.description.trim());
    if !issue.location.trim().is_empty() {
        text.push_str(&format!(" ({})", issue.location.trim()));
    }
    text
}
