//! Outcomes recorded before `state.json` kept the [`Outcome`] itself: such a record has only
//! the outcome's name, exit code and sentence, so the sentence's parts are read back here, once,
//! when the record loads. Nothing newer is read this way. An agent's transcript path was never
//! in the sentence: it is left empty, and `autobuild report` finds it in the run's logs.

use std::path::PathBuf;

use crate::engine::outcome::AgentStop;
use crate::engine::Outcome;

/// The outcome an old record names `name` with the sentence `message`; a sentence that does
/// not parse is kept whole in a `Failed` outcome.
pub(super) fn parse(name: &str, message: &str) -> Outcome {
    let parsed = match name {
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
                infrastructure: message.starts_with("infrastructure"),
            }),
        "over_budget" => over_budget(message),
        "agent_unusable" => agent_stop(message).map(Outcome::AgentUnusable),
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
        infrastructure: false,
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
fn agent_stop(message: &str) -> Option<AgentStop> {
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
        transcript: PathBuf::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::outcome::tests::every_outcome;

    #[test]
    fn every_outcome_is_read_back_from_an_old_records_sentence() {
        for mut outcome in every_outcome() {
            let sentence = outcome.to_string();
            // The transcript was never part of the sentence.
            if let Outcome::AgentUnusable(stop) = &mut outcome {
                stop.transcript = PathBuf::new();
            }
            assert_eq!(parse(outcome.name(), &sentence), outcome);
        }
    }

    #[test]
    fn a_sentence_that_does_not_parse_is_kept_whole() {
        assert_eq!(
            parse("stalled", "stalled somehow"),
            Outcome::Failed {
                message: "stalled somehow".into(),
                infrastructure: false,
            }
        );
    }
}
