//! How a run ended, as both reports say it: why it stopped, the issues that recurred, the last
//! feedback, the failure class, the suggested actions and the next step. One typed value,
//! computed once from the run's records ([`closing`]), which `report.md`
//! ([`crate::engine::exec::report`]) and `report.html` ([`crate::report::html`]) both render, so
//! the two cannot drift apart. Sentences may hold Markdown-style `code` spans, which both
//! renderers show as code.

use std::collections::BTreeMap;

use base::Keyword;
use serde::Serialize;

use crate::engine::outcome::Outcome;
use crate::engine::records::TurnRecords;
use crate::engine::state::{RunState, RunStatus};
use crate::engine::turn::GateRecord;
use model::workflow::context::CheckContext;

/// The end of a run's story; every part is empty when it does not apply.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Closing {
    /// The outcome sentence, for a run that was neither approved nor is waiting.
    pub why: Option<String>,
    /// Coach issues and failing checks seen in more than one turn, most frequent first.
    pub recurring: Vec<Recurring>,
    /// The last gate's feedback, for a run that stopped unapproved.
    pub last_feedback: Option<LastFeedback>,
    pub failure_class: Option<String>,
    pub actions: Vec<String>,
    pub next_step: Option<String>,
    /// For an approved run: what the approving turn's reviewers still noted (`should_fix`,
    /// `nice_to_have`), one sentence each — the follow-ups the approval did not wait for.
    pub open_notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recurring {
    pub issue: String,
    pub count: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct LastFeedback {
    pub summary: String,
    pub failing_checks: Vec<CheckContext>,
    /// `ID not met: TEXT — REASON`.
    pub unmet_criteria: Vec<String>,
}

/// How the run in `state` ended (or stands) with `outcome`, from its `turns`.
pub fn closing(state: &RunState, outcome: &Outcome, turns: &[TurnRecords]) -> Closing {
    let discarded = state.status == RunStatus::Discarded;
    match outcome {
        Outcome::Waiting { step, .. } => Closing {
            next_step: Some(format!(
                "The run waits at the sign-off step `{step}`. Approve it with `autobuild approve {id}` (the run continues; `--merge` lands it too), or reject it with `autobuild reject {id} --reason \"…\"`.",
                id = state.task_id
            )),
            ..Closing::default()
        },
        Outcome::Approved { merged: false } if !discarded => Closing {
            next_step: Some(format!(
                "Merge with `autobuild complete {}`, or throw the work away with `autobuild discard {}`.",
                state.task_id, state.task_id
            )),
            open_notes: open_notes(turns.last()),
            ..Closing::default()
        },
        Outcome::Approved { .. } => Closing {
            open_notes: open_notes(turns.last()),
            ..Closing::default()
        },
        _ => blocked(state, outcome, turns),
    }
}

/// The approving turn's reviewer findings, most severe first, each as
/// `` `should_fix` description (`location`) — suggestion ``, by reviewer when there are several.
fn open_notes(turn: Option<&TurnRecords>) -> Vec<String> {
    let Some(turn) = turn else {
        return Vec::new();
    };
    let several = turn.reviews.len() > 1;
    let mut notes: Vec<(model::steps::verdict::Severity, String)> = turn
        .reviews
        .iter()
        .filter_map(|review| Some((review, review.verdict.as_ref()?)))
        .flat_map(|(review, verdict)| {
            verdict.issues.iter().map(move |issue| {
                let mut note = format!("`{}` {}", issue.severity.as_str(), issue.description);
                if !issue.location.is_empty() {
                    note.push_str(&format!(" (`{}`)", issue.location));
                }
                if !issue.suggestion.is_empty() {
                    note.push_str(&format!(" — {}", issue.suggestion));
                }
                if several {
                    note.push_str(&format!(" [{}]", review.step));
                }
                (issue.severity, note)
            })
        })
        .collect();
    notes.sort_by_key(|(severity, _)| *severity);
    notes.into_iter().map(|(_, note)| note).collect()
}

fn blocked(state: &RunState, outcome: &Outcome, turns: &[TurnRecords]) -> Closing {
    let last_gate = turns.iter().rev().find_map(|t| t.gate.as_ref());
    let class = match outcome {
        Outcome::AgentUnusable(stop) => format!(
            "agent setup ({}) — the `{}` agent ({}) {}; nothing is wrong with the task or its \
             code. Its transcript is {}",
            stop.class.as_str(),
            stop.role,
            stop.agent,
            stop.class.describe(),
            stop.transcript.display()
        ),
        // A failure of the environment before any turn (the [worktree] setup command) says
        // so itself.
        Outcome::Failed {
            message,
            infrastructure: true,
        } => message.clone(),
        Outcome::Rejected { reason } => format!("rejected at sign-off: {reason}"),
        Outcome::NeedsPerson { issue } => format!(
            "needs a person — a reviewer raised a critical issue, which stops the loop at once: \
             {issue}"
        ),
        _ => failure_class(turns.last(), last_gate),
    };
    let actions = if state.status == RunStatus::Discarded {
        Vec::new()
    } else {
        actions(state, outcome, &class)
    };
    Closing {
        why: Some(outcome.to_string()),
        recurring: recurring_issues(turns),
        last_feedback: last_gate.map(|gate| LastFeedback {
            summary: gate.feedback.summary.clone(),
            failing_checks: gate.feedback.failing_checks.clone(),
            unmet_criteria: gate
                .feedback
                .unmet_criteria
                .iter()
                .map(|c| format!("{} not met: {} — {}", c.id, c.text, c.reason))
                .collect(),
        }),
        failure_class: Some(class),
        actions,
        next_step: None,
        open_notes: Vec::new(),
    }
}

fn actions(state: &RunState, outcome: &Outcome, class: &str) -> Vec<String> {
    let id = &state.task_id;
    let mut actions = Vec::new();
    if let Outcome::AgentUnusable(_) = outcome {
        actions.push(
            "Fix the agent's setup as the message above says (`autobuild doctor` checks the \
             agent CLIs' logins)."
                .to_string(),
        );
    }
    if let Outcome::NeedsPerson { .. } = outcome {
        actions.push(
            "Decide about the critical issue above: fix it on the branch yourself, change the \
             task, or throw the attempt away; the loop does not go on by itself."
                .to_string(),
        );
    }
    if class.starts_with("infrastructure") {
        actions.push("Fix the environment the runner and the agents share (`[env]` in `.autobuild/config.toml`), then resume.".to_string());
    }
    actions.push(format!(
        "Inspect the work in `{}` and the logs under `.autobuild/runs/{id}/logs/`.",
        state.worktree.display()
    ));
    if matches!(outcome, Outcome::TurnLimit | Outcome::Stalled { .. }) {
        actions.push(
            "Clarify the task's requirements or criteria if the feedback shows a misunderstanding."
                .to_string(),
        );
    }
    actions.push(match outcome {
        Outcome::AgentUnusable(_) => format!(
            "Once that is fixed, continue where it stopped: `autobuild resume {id}` (the \
             worktree and the branch are kept; the interrupted step runs again)."
        ),
        Outcome::Cancelled | Outcome::TimedOut | Outcome::Failed { .. } => {
            format!("Continue where it stopped: `autobuild resume {id}`.")
        }
        _ => format!(
            "Give it more turns on the same branch: `autobuild task {id} --resume --max-turns N`."
        ),
    });
    actions.push(format!("Throw the attempt away: `autobuild discard {id}`."));
    actions
}

/// Coach issues and failing checks, counted across turns, most frequent first.
fn recurring_issues(turns: &[TurnRecords]) -> Vec<Recurring> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for gate in turns.iter().filter_map(|t| t.gate.as_ref()) {
        for issue in &gate.feedback.issues {
            *counts
                .entry(format!("[{}] {}", issue.severity, issue.description))
                .or_default() += 1;
        }
        for check in &gate.feedback.failing_checks {
            *counts
                .entry(format!("check `{}` {}", check.name, check.status))
                .or_default() += 1;
        }
    }
    let mut list: Vec<Recurring> = counts
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(issue, count)| Recurring { issue, count })
        .collect();
    list.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.issue.cmp(&b.issue)));
    list
}

fn failure_class(last: Option<&TurnRecords>, gate: Option<&GateRecord>) -> String {
    // An agent that could not do its job is neither the code's fault nor the environment's
    // checks': say which agent and where its transcript is.
    if let Some(turn) = last {
        let failed_agent = [
            turn.player
                .as_ref()
                .filter(|p| !p.succeeded())
                .map(|p| ("player", &p.agent, &p.transcript)),
            turn.reviews
                .iter()
                .find(|c| !c.agent.status.is_success())
                .map(|c| (c.role.as_str(), &c.agent, &c.transcript)),
        ]
        .into_iter()
        .flatten()
        .next();
        if let Some((role, agent, transcript)) = failed_agent {
            return format!(
                "agent — the {role} agent did not finish its turn ({}): {}; its transcript is {}",
                agent.status.name(),
                agent.status.message(),
                transcript.display()
            );
        }
    }
    let Some(gate) = gate else {
        return "unknown: no turn reached the gate".into();
    };
    let infrastructure = gate
        .feedback
        .failing_checks
        .iter()
        .filter(|c| c.failure_class.as_deref() == Some("infrastructure"))
        .collect::<Vec<_>>();
    if let Some(check) = infrastructure.first() {
        let advice = check.advice.clone().unwrap_or_default();
        return format!("infrastructure — {advice}");
    }
    if gate.feedback.failing_checks.is_empty() && gate.feedback.issues.is_empty() {
        "process — see the reasons above".into()
    } else {
        "code — the implementation does not yet meet the requirements".into()
    }
}
