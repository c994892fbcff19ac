//! How a run ended, and the exit code that says so (README.md). `state.json` keeps the
//! [`Outcome`] itself ([`record`]); its sentence is its `Display`, written in one place.

mod legacy;
pub mod record;

use std::fmt;
use std::path::PathBuf;

use base::Keyword;
use serde::{Deserialize, Serialize};

use crate::engine::state::RunStatus;
use agents::AgentErrorClass;
use base::error::exit;
use model::workflow::model::AgentKind;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
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
    /// A step failed in a way the workflow cannot absorb; `infrastructure`: the environment
    /// failed before any turn (the `[worktree]` setup command), and `message` says so itself.
    Failed {
        message: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        infrastructure: bool,
    },
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
    /// A reviewer raised a `critical` issue (docs/verdicts.md): the loop stopped at once, blocked
    /// until a person decides. `issue` is the issue as the report shows it.
    NeedsPerson { issue: String },
}

/// Which agent stopped the run, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentStop {
    pub role: String,
    pub agent: AgentKind,
    pub class: AgentErrorClass,
    /// The adapter's message, with its fix.
    pub message: String,
    pub transcript: PathBuf,
}

impl Outcome {
    /// [`Outcome::exit_code`] for a run whose merge was asked for: an approved run left unmerged
    /// did not do what was asked, and says so ([`exit::NOT_MERGED`]), never a silent 0.
    pub fn exit_code_when_merge_asked(&self, merge_asked: bool) -> u8 {
        match self {
            Outcome::Approved { merged: false } if merge_asked => exit::NOT_MERGED,
            _ => self.exit_code(),
        }
    }

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
}

/// One sentence for the final line and the report.
impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Approved { merged: true } => f.write_str("approved and merged"),
            Outcome::Approved { merged: false } => f.write_str("approved; not merged yet"),
            Outcome::TurnLimit => {
                f.write_str("blocked: the turn limit was reached without approval")
            }
            Outcome::Stalled { reason } => write!(f, "blocked: stalled ({reason})"),
            Outcome::Cancelled => f.write_str("cancelled"),
            Outcome::TimedOut => f.write_str("stopped: limits.max_wall_time ran out"),
            Outcome::OverBudget { spent, limit } => {
                write!(f, "stopped: cost ${spent:.2} exceeded limits.max_cost_usd ${limit:.2}")
            }
            Outcome::Failed { message, .. } => write!(f, "failed: {message}"),
            Outcome::AgentUnusable(stop) => write!(
                f,
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
            } => write!(
                f,
                "waiting for a person at `{step}`: {question} (answer with `autobuild approve {task}` or `autobuild reject {task} --reason …`)"
            ),
            Outcome::Rejected { reason } => write!(f, "blocked: rejected at sign-off ({reason})"),
            Outcome::NeedsPerson { issue } => {
                write!(f, "blocked: needs a person: a reviewer raised a critical issue: {issue}")
            }
        }
    }
}

/// Why a step whose `if` is false did not run, in words: a merge skipped on a run that was not
/// approved says why the work is not landing, not the expression that decided it.
pub fn skip_reason(is_merge: bool, condition: &str, outcome: &Outcome) -> String {
    match outcome {
        Outcome::Approved { .. } => format!("its `if` is false: {condition}"),
        _ if is_merge => format!("not merged: {outcome}"),
        _ => format!("its `if` is false: {condition}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind of outcome, once.
    pub(crate) fn every_outcome() -> Vec<Outcome> {
        vec![
            Outcome::Approved { merged: true },
            Outcome::Approved { merged: false },
            Outcome::TurnLimit,
            Outcome::Stalled {
                reason: "the tree did not change (A, B)".into(),
            },
            Outcome::Cancelled,
            Outcome::TimedOut,
            Outcome::OverBudget {
                spent: 2.5,
                limit: 2.0,
            },
            Outcome::Failed {
                message: "step `check`: the program vanished".into(),
                infrastructure: false,
            },
            Outcome::Failed {
                message: "infrastructure — the worktree setup command `uv sync` exited 1".into(),
                infrastructure: true,
            },
            Outcome::Waiting {
                step: "sign_off".into(),
                question: "Ship it (see `report.md`)?".into(),
                task: "TASK-7".into(),
            },
            Outcome::Rejected {
                reason: "the copy is wrong (see notes)".into(),
            },
            Outcome::NeedsPerson {
                issue: "[security] the API key is committed (config.py:3)".into(),
            },
            Outcome::AgentUnusable(AgentStop {
                role: "coach".into(),
                agent: AgentKind::ClaudeCode,
                class: AgentErrorClass::OutOfCredit,
                message: "claude: Credit balance is too low [billing]: add credit".into(),
                transcript: PathBuf::from("/runs/T/logs/turn_2_coach.log"),
            }),
        ]
    }

    #[test]
    fn an_approved_run_left_unmerged_when_the_merge_was_asked_for_is_not_a_silent_0() {
        let unmerged = Outcome::Approved { merged: false };
        let merged = Outcome::Approved { merged: true };
        for (outcome, asked, code) in [
            (&unmerged, true, exit::NOT_MERGED),
            (&unmerged, false, exit::APPROVED),
            (&merged, true, exit::APPROVED),
            (&Outcome::TurnLimit, true, exit::TURN_LIMIT),
        ] {
            assert_eq!(
                outcome.exit_code_when_merge_asked(asked),
                code,
                "{outcome:?} {asked}"
            );
        }
    }

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
            outcome.to_string(),
            "stopped: the `coach` agent (codex) is out of credit [out_of_credit]: codex: Quota \
             exceeded.\nfix: add credit"
        );
        assert!(!Outcome::Failed {
            message: "x".into(),
            infrastructure: false,
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
