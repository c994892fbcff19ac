//! Enum names come from `strum` derives; the names persisted by serde (run records,
//! `state.json`, verdicts) and read from config files must stay what they always were. Each
//! list below is the names as they were spelled by hand before the derives, so a rename in
//! either place fails here.

use base::Keyword;
use serde::de::DeserializeOwned;
use serde::Serialize;
use strum::IntoEnumIterator;

use crate::agents::{AgentErrorClass, AgentOutcome, AgentStatus};
use crate::engine::state::RunStatus;
use crate::feature::state::{FeatureStatus, TaskStatus};
use crate::git::MergeStrategy;
use crate::project::config::Integration;
use crate::sandbox::Mode;
use crate::schema::SchemaKind;
use crate::steps::check::{CheckStatus, FailureClass};
use crate::steps::reveal::Reveal;
use crate::steps::verdict::{CriterionStatus, Decision, Reading, Severity};
use crate::workflow::kinds::{Uses, ValueType};
use crate::workflow::model::{Access, AgentKind, RoleKey, Tool};

/// `values` spelled as `names`, by `as_str` and by serde both ways.
fn same_names<T>(values: &[T], names: &[&str], as_str: fn(T) -> &'static str)
where
    T: Copy + PartialEq + std::fmt::Debug + Serialize + DeserializeOwned,
{
    assert_eq!(values.len(), names.len());
    for (value, name) in values.iter().copied().zip(names) {
        assert_eq!(as_str(value), *name);
        assert_eq!(
            serde_json::to_value(value).unwrap(),
            serde_json::json!(name)
        );
        let back: T = serde_json::from_value(serde_json::json!(name)).unwrap();
        assert_eq!(back, value);
    }
}

fn all<T: IntoEnumIterator>() -> Vec<T> {
    T::iter().collect()
}

#[test]
fn persisted_names_are_unchanged() {
    same_names(
        &all::<AgentKind>(),
        &["claude-code", "codex", "command", "openai", "anthropic"],
        |k| k.into(),
    );
    same_names(
        &all::<Tool>(),
        &["read", "write", "edit", "bash", "grep", "glob", "web"],
        Tool::as_str,
    );
    same_names(
        &[Access::Write, Access::ReadOnly],
        &["write", "read-only"],
        Access::as_str,
    );
    same_names(
        &[
            MergeStrategy::Squash,
            MergeStrategy::Merge,
            MergeStrategy::Ff,
        ],
        &["squash", "merge", "ff"],
        MergeStrategy::as_str,
    );
    same_names(
        &[
            AgentErrorClass::NonZeroExit,
            AgentErrorClass::ApiError,
            AgentErrorClass::AuthMissing,
            AgentErrorClass::RateLimited,
            AgentErrorClass::OutOfCredit,
            AgentErrorClass::ModelNotFound,
            AgentErrorClass::MaxTurns,
            AgentErrorClass::Other,
        ],
        &[
            "non_zero_exit",
            "api_error",
            "auth_missing",
            "rate_limited",
            "out_of_credit",
            "model_not_found",
            "max_turns",
            "other",
        ],
        AgentErrorClass::as_str,
    );
    same_names(
        &[Decision::Approve, Decision::Feedback],
        &["approve", "feedback"],
        Decision::as_str,
    );
    same_names(
        &[
            Severity::Critical,
            Severity::MustFix,
            Severity::ShouldFix,
            Severity::NiceToHave,
        ],
        &["critical", "must_fix", "should_fix", "nice_to_have"],
        Severity::as_str,
    );
    same_names(
        &[
            CriterionStatus::Met,
            CriterionStatus::NotMet,
            CriterionStatus::NotVerified,
        ],
        &["met", "not_met", "not_verified"],
        CriterionStatus::as_str,
    );
    same_names(
        &[
            CheckStatus::Passed,
            CheckStatus::Failed,
            CheckStatus::TimedOut,
            CheckStatus::Error,
        ],
        &["passed", "failed", "timed_out", "error"],
        CheckStatus::as_str,
    );
    same_names(
        &[FailureClass::Code, FailureClass::Infrastructure],
        &["code", "infrastructure"],
        FailureClass::as_str,
    );
    same_names(
        &all::<RunStatus>(),
        &[
            "running",
            "approved",
            "merged",
            "blocked",
            "stalled",
            "cancelled",
            "failed",
            "halted",
            "waiting",
            "discarded",
        ],
        RunStatus::as_str,
    );
    same_names(
        &all::<FeatureStatus>(),
        &[
            "running",
            "approved",
            "merged",
            "blocked",
            "conflict",
            "integration_failed",
            "cancelled",
            "discarded",
        ],
        FeatureStatus::as_str,
    );
    same_names(
        &all::<TaskStatus>(),
        &[
            "pending",
            "running",
            "approved",
            "merged",
            "blocked",
            "stalled",
            "failed",
            "cancelled",
            "skipped",
            "conflict",
            "waiting",
            "done",
        ],
        TaskStatus::as_str,
    );
    same_names(
        &all::<Reading>(),
        &[
            "approved",
            "feedback",
            "blocked_critical",
            "retry_ambiguous",
            "retry_invalid",
        ],
        Reading::as_str,
    );
    // Listed one by one, so a new kind adds its name without editing this list.
    same_names(
        &[
            Uses::Worktree,
            Uses::Agent,
            Uses::Verify,
            Uses::Gate,
            Uses::Loop,
            Uses::Approval,
            Uses::Merge,
            Uses::Run,
            Uses::Report,
        ],
        &[
            "worktree", "agent", "verify", "gate", "loop", "approval", "merge", "run", "report",
        ],
        Uses::as_str,
    );
}

/// A run's agent status is tagged by its name in turn records (`"status": "timed_out"`).
#[test]
fn agent_status_names_are_unchanged() {
    let statuses = [
        (AgentStatus::Succeeded, "succeeded"),
        (
            AgentStatus::Failed {
                class: AgentErrorClass::Other,
                message: "x".into(),
            },
            "failed",
        ),
        (AgentStatus::TimedOut, "timed_out"),
        (AgentStatus::IdleTimedOut { detail: None }, "idle_timed_out"),
        (AgentStatus::Cancelled, "cancelled"),
    ];
    for (status, name) in statuses {
        assert_eq!(status.name(), name);
        assert_eq!(serde_json::to_value(&status).unwrap()["status"], name);
    }
}

/// Names that are shown, not persisted: the reference's value types and the role keys only
/// some adapters read (as `[roles.<name>]` spells them).
#[test]
fn shown_names_are_unchanged() {
    let types = [
        ValueType::Bool,
        ValueType::Integer,
        ValueType::Text,
        ValueType::TextList,
    ];
    let names: Vec<&str> = types.into_iter().map(ValueType::as_str).collect();
    assert_eq!(names, ["bool", "integer", "string", "list of strings"]);
    let keys: Vec<&str> = all::<RoleKey>().into_iter().map(RoleKey::as_str).collect();
    assert_eq!(
        keys,
        [
            "base_url",
            "api_key_env",
            "headers",
            "max_tokens",
            "tool_choice"
        ]
    );
}

#[test]
fn config_and_command_line_names_are_unchanged() {
    let names = |values: Vec<&'static str>| values.join(" ");
    assert_eq!(
        names(all::<Mode>().into_iter().map(Mode::as_str).collect()),
        "auto on off"
    );
    assert_eq!(
        names(all::<Reveal>().into_iter().map(Reveal::as_str).collect()),
        "names summary none"
    );
    assert_eq!(
        names(
            all::<Integration>()
                .into_iter()
                .map(Integration::as_str)
                .collect()
        ),
        "check integrate off"
    );
    assert_eq!(
        names(
            all::<SchemaKind>()
                .into_iter()
                .map(SchemaKind::as_str)
                .collect()
        ),
        "workflow config profile feature"
    );
    assert_eq!(SchemaKind::named("profile"), Some(SchemaKind::Profile));
    assert_eq!(SchemaKind::named("Profile"), None);
}

/// A turn record written before the derives (as `player_turn_N.json` holds it) still loads.
#[test]
fn an_old_turn_record_still_loads() {
    let old = r#"{
        "final_message": "",
        "structured_output": null,
        "session_id": null,
        "usage": {"input": 1, "output": 2, "cached": 0},
        "cost_usd": null,
        "duration_ms": 1500,
        "agent_turns": null,
        "permission_denials": [],
        "status": {"status": "failed", "class": "out_of_credit", "message": "no credit"}
    }"#;
    let outcome: AgentOutcome = serde_json::from_str(old).unwrap();
    assert_eq!(
        outcome.status,
        AgentStatus::Failed {
            class: AgentErrorClass::OutOfCredit,
            message: "no credit".into()
        }
    );
}
