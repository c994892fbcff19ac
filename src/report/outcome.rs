//! A finished run's [`Outcome`], read back from what `state.json` recorded of it (its name and
//! sentence), so that `autobuild report` can write `report.md` again long after the run
//! ended. The sentence is the one [`Outcome::message`] wrote, so its parts are parsed back;
//! only an agent's transcript path is not in it, and is found in the run's logs instead.

use std::path::Path;

use crate::engine::outcome::AgentStop;
use crate::engine::state::OutcomeRecord;
use crate::engine::Outcome;

/// The outcome `record` describes; `logs` is the run's log directory. A sentence that does not
/// parse (a record written by another version) is kept whole in a `Failed` outcome.
pub fn from_record(record: &OutcomeRecord, logs: &Path) -> Outcome {
    let message = record.message.as_str();
    let parsed = match record.outcome.as_str() {
        "merged" => Some(Outcome::Approved { merged: true }),
        "approved" => Some(Outcome::Approved { merged: false }),
        "blocked" => Some(Outcome::TurnLimit),
        "cancelled" => Some(Outcome::Cancelled),
        "timed_out" => Some(Outcome::TimedOut),
        "stalled" => message
            .strip_prefix("blocked: stalled (")
            .and_then(|rest| rest.strip_suffix(')'))
            .map(|reason| Outcome::Stalled {
                reason: reason.to_string(),
            }),
        "failed" => message
            .strip_prefix("failed: ")
            .map(|message| Outcome::Failed {
                message: message.to_string(),
            }),
        "over_budget" => over_budget(message),
        "agent_unusable" => agent_stop(message, logs).map(Outcome::AgentUnusable),
        "waiting" => waiting(message),
        "rejected" => message
            .strip_prefix("blocked: rejected at sign-off (")
            .and_then(|rest| rest.strip_suffix(')'))
            .map(|reason| Outcome::Rejected {
                reason: reason.to_string(),
            }),
        "needs_person" => message
            .strip_prefix("blocked: needs a person: a reviewer raised a critical issue: ")
            .map(|issue| Outcome::NeedsPerson {
                issue: issue.to_string(),
            }),
        _ => None,
    };
    parsed.unwrap_or_else(|| Outcome::Failed {
        message: message.to_string(),
    })
}

/// `stopped: cost $S exceeded limits.max_cost_usd $L`.
fn over_budget(message: &str) -> Option<Outcome> {
    let rest = message.strip_prefix("stopped: cost $")?;
    let (spent, limit) = rest.split_once(" exceeded limits.max_cost_usd $")?;
    Some(Outcome::OverBudget {
        spent: spent.parse().ok()?,
        limit: limit.parse().ok()?,
    })
}

/// ``waiting for a person at `STEP`: QUESTION (answer with …)``.
fn waiting(message: &str) -> Option<Outcome> {
    let rest = message.strip_prefix("waiting for a person at `")?;
    let (step, rest) = rest.split_once("`: ")?;
    let (question, answer) = rest.rsplit_once(" (answer with `autobuild approve")?;
    // Records from before the id was named say only "`autobuild approve`".
    let task = answer
        .strip_prefix(' ')
        .and_then(|rest| rest.split_once('`'))
        .map_or("", |(task, _)| task);
    Some(Outcome::Waiting {
        step: step.to_string(),
        question: question.to_string(),
        task: task.to_string(),
    })
}

/// ``stopped: the `ROLE` agent (AGENT) DESCRIPTION [CLASS]: MESSAGE``.
fn agent_stop(message: &str, logs: &Path) -> Option<AgentStop> {
    let rest = message.strip_prefix("stopped: the `")?;
    let (role, rest) = rest.split_once("` agent (")?;
    let (agent, rest) = rest.split_once(") ")?;
    let (_, rest) = rest.split_once(" [")?;
    let (class, adapter_message) = rest.split_once("]: ")?;
    Some(AgentStop {
        role: role.to_string(),
        agent: serde_json::from_value(serde_json::Value::from(agent)).ok()?,
        class: serde_json::from_value(serde_json::Value::from(class)).ok()?,
        message: adapter_message.to_string(),
        transcript: last_transcript(logs, role).unwrap_or_else(|| logs.to_path_buf()),
    })
}

/// The role's most recent transcript (`turn_N_ROLE.log`, `turn_N_ROLE_retry1.log`, …).
fn last_transcript(logs: &Path, role: &str) -> Option<std::path::PathBuf> {
    std::fs::read_dir(logs)
        .ok()?
        .flatten()
        .filter(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            name.starts_with("turn_")
                && name.contains(&format!("_{role}"))
                && name.ends_with(".log")
        })
        .filter_map(|entry| Some((entry.metadata().ok()?.modified().ok()?, entry.path())))
        .max()
        .map(|(_, path)| path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::AgentErrorClass;
    use crate::workflow::model::AgentKind;

    fn round_trip(outcome: &Outcome, logs: &Path) -> Outcome {
        let record = OutcomeRecord {
            outcome: outcome.name().to_string(),
            exit_code: outcome.exit_code(),
            message: outcome.message(),
        };
        from_record(&record, logs)
    }

    #[test]
    fn every_outcome_is_read_back_from_its_record() {
        let logs = tempfile::tempdir().unwrap();
        std::fs::write(logs.path().join("turn_2_coach.log"), "out of credit").unwrap();
        let outcomes = [
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
                message: "infrastructure: the setup command failed".into(),
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
                transcript: logs.path().join("turn_2_coach.log"),
            }),
        ];
        for outcome in &outcomes {
            assert_eq!(&round_trip(outcome, logs.path()), outcome);
        }
    }

    #[test]
    fn a_sentence_that_does_not_parse_is_kept_whole() {
        let record = OutcomeRecord {
            outcome: "stalled".into(),
            exit_code: 4,
            message: "stalled somehow".into(),
        };
        assert_eq!(
            from_record(&record, Path::new("logs")),
            Outcome::Failed {
                message: "stalled somehow".into()
            }
        );
    }
}
