//! Continuing a run that ended blocked or stalled (`autobuild task <ID> --resume
//! [--max-turns N]`): the same run goes on — its first loop reopens for N more turns (default:
//! the loop's bound), turn numbers continue where they stopped, and the next player prompt
//! carries the last turn's feedback. A run rejected at sign-off reopens the same way, with the
//! person's reason as its feedback. Pure: it rewrites the loaded state, the caller runs it.

use crate::engine::state::{RunState, RunStatus};
use crate::engine::Outcome;
use base::Keyword;
use model::steps::verdict::Severity;
use model::workflow::context::{FeedbackContext, IssueContext};
use model::workflow::kinds::LoopExit;
use model::workflow::kinds::LoopStep;
use model::workflow::model::{Action, Workflow};

/// Reopens `state` for more turns of `workflow`'s first loop; the note says what happens.
/// `None`: the run did not end in a way more turns can help (or has no loop).
pub fn reopen(state: &mut RunState, workflow: &Workflow) -> Option<String> {
    if !matches!(state.status, RunStatus::Blocked | RunStatus::Stalled) {
        return None;
    }
    let position = workflow
        .steps
        .iter()
        .position(|step| matches!(step.action, Action::Loop(_)))?;
    let Action::Loop(LoopStep { max_iterations, .. }) = &workflow.steps[position].action else {
        return None;
    };
    let loop_id = workflow.steps[position].id.clone();
    let rejection = match &state.outcome {
        Some(Outcome::Rejected { reason }) => Some(reason.clone()),
        _ => None,
    };
    let loop_state = state.loops.get_mut(&loop_id)?;
    let reopenable = matches!(
        loop_state.exit,
        Some(LoopExit::Exhausted | LoopExit::Stalled)
    ) || (rejection.is_some() && loop_state.exit == Some(LoopExit::Done));
    if !reopenable || loop_state.iteration == 0 {
        return None;
    }
    let done = loop_state.iteration;
    loop_state.earlier = done;
    loop_state.iteration = done + 1;
    loop_state.exit = None;
    loop_state.history.clear();
    loop_state.nudged = false;
    loop_state.stall_notice = None;
    if let Some(reason) = &rejection {
        let feedback = FeedbackContext {
            summary: format!("Not approved at sign-off: {reason}"),
            fix: vec![reason.clone()],
            issues: vec![IssueContext {
                severity: Severity::MustFix.as_str().to_string(),
                category: "sign-off".to_string(),
                description: reason.clone(),
                location: String::new(),
                suggestion: String::new(),
            }],
            failing_checks: Vec::new(),
            unmet_criteria: Vec::new(),
        };
        loop_state.feedback = Some(feedback);
    }
    let later: Vec<&str> = workflow.steps[position..]
        .iter()
        .map(|step| step.id.as_str())
        .collect();
    // The loop and every step after it run again; the loop's finished turns stay done.
    state.completed.retain(|path, _| {
        let top = path.split('/').next().unwrap_or(path);
        let finished_turn = top == loop_id && path != top;
        !later.contains(&top) || finished_turn
    });
    state.status = RunStatus::Running;
    state.outcome = None;
    state.max_turns = done + max_iterations;
    Some(format!(
        "continuing the run from turn {} (up to turn {}) with its last feedback",
        done + 1,
        done + max_iterations
    ))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::engine::state::{LoopState, StepRecord};

    fn workflow() -> Workflow {
        model::workflow::resolve(None, "player-coach", &Default::default())
            .unwrap()
            .workflow
    }

    fn ended(status: RunStatus, exit: LoopExit, outcome: Outcome) -> RunState {
        let mut state: RunState = serde_json::from_value(serde_json::json!({
            "version": 1, "task_id": "T", "task_path": "t.md", "title": "t", "workflow": "w",
            "workflow_hash": "h", "status": "blocked", "started_at": "", "updated_at": "",
            "base_branch": "main", "branch": "autobuild/T", "worktree": "w",
            "settings": {"workflow_arg": null, "auto_merge": false, "no_merge": false, "overrides": [], "max_turns": null, "agent": null},
            "completed": {}, "loops": {}, "last_checkpoint": null, "cost_usd": 0.0,
            "tokens_in": 0, "tokens_out": 0, "outcome": null
        }))
        .unwrap();
        state.status = status;
        let done = StepRecord {
            ok: true,
            outputs: serde_json::json!({}),
        };
        state.completed = BTreeMap::from([
            ("worktree".to_string(), done.clone()),
            ("cycle".to_string(), done.clone()),
            ("cycle/3/implement".to_string(), done.clone()),
            ("merge".to_string(), done),
        ]);
        state.loops.insert(
            "cycle".into(),
            LoopState {
                iteration: 3,
                nudged: true,
                exit: Some(exit),
                feedback: Some(FeedbackContext {
                    summary: "fix it".into(),
                    ..FeedbackContext::default()
                }),
                ..LoopState::default()
            },
        );
        state.outcome = Some(outcome);
        state
    }

    #[test]
    fn a_blocked_loop_reopens_after_its_last_turn_keeping_its_feedback() {
        let mut state = ended(
            RunStatus::Stalled,
            LoopExit::Stalled,
            Outcome::Stalled {
                reason: "same diff twice".into(),
            },
        );
        let note = reopen(&mut state, &workflow()).unwrap();
        assert_eq!(
            note,
            "continuing the run from turn 4 (up to turn 8) with its last feedback"
        );
        let cycle = &state.loops["cycle"];
        assert_eq!((cycle.iteration, cycle.earlier, cycle.exit), (4, 3, None));
        assert!(!cycle.nudged);
        assert_eq!(cycle.feedback.as_ref().unwrap().summary, "fix it");
        let kept: Vec<&str> = state.completed.keys().map(String::as_str).collect();
        assert_eq!(kept, ["cycle/3/implement", "worktree"]);
        assert_eq!(state.status, RunStatus::Running);
        assert_eq!(state.max_turns, 8);
    }

    #[test]
    fn a_rejection_becomes_the_feedback_and_other_endings_do_not_reopen() {
        let mut rejected = ended(
            RunStatus::Blocked,
            LoopExit::Done,
            Outcome::Rejected {
                reason: "the greeting must be localised".into(),
            },
        );
        reopen(&mut rejected, &workflow()).unwrap();
        let feedback = rejected.loops["cycle"].feedback.clone().unwrap();
        assert_eq!(
            feedback.issues[0].description,
            "the greeting must be localised"
        );
        // The person's reason, not the outcome's sentence around it.
        assert_eq!(
            feedback.summary,
            "Not approved at sign-off: the greeting must be localised"
        );
        let mut approved_loop = ended(RunStatus::Blocked, LoopExit::Done, Outcome::TurnLimit);
        assert!(reopen(&mut approved_loop, &workflow()).is_none());
        let mut failed = ended(
            RunStatus::Failed,
            LoopExit::Exhausted,
            Outcome::Failed {
                message: "x".into(),
                infrastructure: false,
            },
        );
        assert!(reopen(&mut failed, &workflow()).is_none());
    }
}
