//! How a run ended, and the exit code that says so (DESIGN.md §7).

use crate::engine::state::RunStatus;
use crate::error::exit;

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
}

impl Outcome {
    pub fn exit_code(&self) -> u8 {
        match self {
            Outcome::Approved { .. } => exit::APPROVED,
            Outcome::TurnLimit => exit::TURN_LIMIT,
            Outcome::Stalled { .. } => exit::STALLED,
            Outcome::Cancelled | Outcome::TimedOut | Outcome::OverBudget { .. } => exit::CANCELLED,
            Outcome::Failed { .. } => exit::RUNTIME,
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
        }
    }
}
