//! How a run ended, and the exit code that says so (DESIGN.md §7).

use std::path::PathBuf;

use crate::agents::AgentErrorClass;
use crate::engine::state::RunStatus;
use crate::error::exit;
use crate::workflow::model::AgentKind;

#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The gates approved; `merged` says whether it already landed on the base.
    Approved { merged: bool },
    /// The loop used every allowed turn without approval.
    TurnLimit,
    /// The runner detected a stall.
    Stalled { reason: String },
    /// Ctrl-C or a termination signal.
    Cancelled,
    /// `limits.max_wall_time` ran out.
    TimedOut,
    /// `limits.max_cost_usd` was exceeded.
    OverBudget { spent: f64, limit: f64 },
    /// A step failed in a way the workflow cannot absorb.
    Failed { message: String },
    /// An agent cannot authenticate, is out of credit, or names a model it cannot use: the run
    /// stopped at the first such step, which `autobuild resume` runs again once that is fixed.
    AgentUnusable(AgentStop),
    /// An `approval` step waits for a person; `autobuild approve`/`reject` continues the run.
    Waiting {
        step: String,
        question: String,
        /// The task id the answer names.
        task: String,
    },
    /// A person rejected the work at an `approval` step.
    Rejected { reason: String },
    /// A reviewer raised a `critical` issue (DESIGN.md §11): the loop stopped at once, blocked
    /// until a person decides. `issue` is the issue as the report shows it.
    NeedsPerson { issue: String },
}

/// Which agent stopped the run, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentStop {
    pub role: String,
    pub agent: AgentKind,
    pub class: AgentErrorClass,
    /// The adapter's message, with its fix.
    pub message: String,
    pub transcript: PathBuf,
}

impl Outcome {
    pub fn exit_code(&self) -> u8 {
        match self {
            Outcome::Approved { .. } => exit::APPROVED,
            Outcome::TurnLimit => exit::TURN_LIMIT,
            Outcome::Stalled { .. } => exit::STALLED,
            Outcome::Cancelled | Outcome::TimedOut | Outcome::OverBudget { .. } => exit::CANCELLED,
            Outcome::Failed { .. } | Outcome::AgentUnusable(_) => exit::RUNTIME,
            Outcome::Waiting { .. } => exit::WAITING,
            Outcome::Rejected { .. } | Outcome::NeedsPerson { .. } => exit::TURN_LIMIT,
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Approved { merged: true } => "merged",
            Outcome::Approved { merged: false } => "approved",
            Outcome::TurnLimit => "blocked",
            Outcome::Stalled { .. } => "stalled",
            Outcome::Cancelled => "cancelled",
            Outcome::TimedOut => "timed_out",
            Outcome::OverBudget { .. } => "over_budget",
            Outcome::Failed { .. } => "failed",
            Outcome::AgentUnusable(_) => "agent_unusable",
            Outcome::Waiting { .. } => "waiting",
            Outcome::Rejected { .. } => "rejected",
            Outcome::NeedsPerson { .. } => "needs_person",
        }
    }

    pub fn status(&self) -> RunStatus {
        match self {
            Outcome::Approved { merged: true } => RunStatus::Merged,
            Outcome::Approved { merged: false } => RunStatus::Approved,
            Outcome::TurnLimit => RunStatus::Blocked,
            Outcome::Stalled { .. } => RunStatus::Stalled,
            Outcome::Cancelled | Outcome::TimedOut | Outcome::OverBudget { .. } => {
                RunStatus::Cancelled
            }
            Outcome::Failed { .. } => RunStatus::Failed,
            Outcome::AgentUnusable(_) => RunStatus::Halted,
            Outcome::Waiting { .. } => RunStatus::Waiting,
            Outcome::Rejected { .. } | Outcome::NeedsPerson { .. } => RunStatus::Blocked,
        }
    }

    /// One sentence for the final line and the report.
    pub fn message(&self) -> String {
        match self {
            Outcome::Approved { merged: true } => "approved and merged".into(),
            Outcome::Approved { merged: false } => "approved; not merged yet".into(),
            Outcome::TurnLimit => "blocked: the turn limit was reached without approval".into(),
            Outcome::Stalled { reason } => format!("blocked: stalled ({reason})"),
            Outcome::Cancelled => "cancelled".into(),
            Outcome::TimedOut => "stopped: limits.max_wall_time ran out".into(),
            Outcome::OverBudget { spent, limit } => {
                format!("stopped: cost ${spent:.2} exceeded limits.max_cost_usd ${limit:.2}")
            }
            Outcome::Failed { message } => format!("failed: {message}"),
            Outcome::AgentUnusable(stop) => format!(
                "stopped: the `{}` agent ({}) {} [{}]: {}",
                stop.role,
                stop.agent,
                stop.class.describe(),
                stop.class.as_str(),
                stop.message
            ),
            Outcome::Waiting {
                step,
                question,
                task,
            } => format!(
                "waiting for a person at `{step}`: {question} (answer with `autobuild approve {task}` or `autobuild reject {task} --reason …`)"
            ),
            Outcome::Rejected { reason } => format!("blocked: rejected at sign-off ({reason})"),
            Outcome::NeedsPerson { issue } => {
                format!("blocked: needs a person: a reviewer raised a critical issue: {issue}")
            }
        }
    }
}

/// Why a step whose `if` is false did not run, in words: a merge skipped on a run that was not
/// approved says why the work is not landing, not the expression that decided it.
pub fn skip_reason(is_merge: bool, condition: &str, outcome: &Outcome) -> String {
    match outcome {
        Outcome::Approved { .. } => format!("its `if` is false: {condition}"),
        _ if is_merge => format!("not merged: {}", outcome.message()),
        _ => format!("its `if` is false: {condition}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unusable_agent_is_a_runtime_error_the_run_resumes_from() {
        let outcome = Outcome::AgentUnusable(AgentStop {
            role: "coach".into(),
            agent: AgentKind::Codex,
            class: AgentErrorClass::OutOfCredit,
            message: "codex: Quota exceeded.\nfix: add credit".into(),
            transcript: PathBuf::from("logs/turn_2_coach.log"),
        });
        assert_eq!(outcome.exit_code(), exit::RUNTIME);
        assert_eq!(outcome.name(), "agent_unusable");
        assert!(outcome.status().is_resumable());
        assert_eq!(
            outcome.message(),
            "stopped: the `coach` agent (codex) is out of credit [out_of_credit]: codex: Quota \
             exceeded.\nfix: add credit"
        );
        assert!(!Outcome::Failed {
            message: "x".into()
        }
        .status()
        .is_resumable());
    }

    #[test]
    fn a_skipped_merge_says_in_words_why_the_work_did_not_land() {
        let cond = "steps.cycle.outputs.exit == 'done'";
        let cases = [
            (
                true,
                Outcome::TurnLimit,
                "not merged: blocked: the turn limit was reached without approval",
            ),
            (
                true,
                Outcome::Stalled {
                    reason: "same diff twice".into(),
                },
                "not merged: blocked: stalled (same diff twice)",
            ),
            (
                true,
                Outcome::Approved { merged: false },
                "its `if` is false: steps.cycle.outputs.exit == 'done'",
            ),
            (
                false,
                Outcome::TurnLimit,
                "its `if` is false: steps.cycle.outputs.exit == 'done'",
            ),
        ];
        for (is_merge, outcome, want) in cases {
            assert_eq!(skip_reason(is_merge, cond, &outcome), want, "{outcome:?}");
        }
    }
}
