//! An answer that is no answer: an invocation that ended without an error but left no text, no
//! structured output and no tool call behind (a local model that stops at once with
//! `content: ""`, a CLI whose result is empty). Recording it as a succeeded turn would let a
//! player "finish" a turn having done nothing, and hand the coach's gate an empty verdict; so
//! every adapter that can tell whether its agent acted runs its outcome through [`refuse`],
//! which turns such a success into a failure of class [`AgentErrorClass::EmptyAnswer`] with
//! the reason in the record and the feedback.
//!
//! The `command` adapter is not asked: its contract is "stdout is the final message", and a
//! program that does its work and prints nothing is a normal script; what it did is what the
//! runner checks. A coach (`command` or not) that answers nothing still never approves: an
//! empty verdict does not parse (`steps::verdict`).

use super::{AgentErrorClass, AgentOutcome, AgentStatus};

/// What an invocation that ended without an error left behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Left<'a> {
    /// The final message.
    pub text: &'a str,
    /// Output the agent returned through a structured channel (a schema-checked verdict).
    pub structured: bool,
    /// The agent called a tool (ran a command, changed a file) during the invocation.
    pub acted: bool,
}

/// Whether `left` is no answer at all (a text of only whitespace is none).
pub fn answered_nothing(left: Left<'_>) -> bool {
    left.text.trim().is_empty() && !left.structured && !left.acted
}

/// The failure an answer of nothing is, with the output tokens the agent reported.
pub fn failure(output_tokens: u64) -> AgentStatus {
    AgentStatus::Failed {
        class: AgentErrorClass::EmptyAnswer,
        message: format!(
            "the model answered nothing: no text and no tool call ({output_tokens} output \
             tokens); check the model and its chat template (docs/native-http.md), or try the \
             turn again"
        ),
    }
}

/// `outcome`, failed when it succeeded but answered nothing; `acted` says whether the agent
/// called a tool (which its adapter saw).
pub fn refuse(mut outcome: AgentOutcome, acted: bool) -> AgentOutcome {
    let left = Left {
        text: &outcome.final_message,
        structured: outcome
            .structured_output
            .as_ref()
            .is_some_and(|value| !value.is_null()),
        acted,
    };
    if outcome.status.is_success() && answered_nothing(left) {
        outcome.status = failure(outcome.usage.output);
    }
    outcome
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn only_no_text_no_structured_output_and_no_tool_call_is_nothing() {
        let cases = [
            // (text, structured, acted, nothing)
            ("", false, false, true),
            ("  \n\t", false, false, true),
            ("done", false, false, false),
            ("", true, false, false),
            ("", false, true, false),
            (" ", true, true, false),
        ];
        for (text, structured, acted, nothing) in cases {
            let left = Left {
                text,
                structured,
                acted,
            };
            assert_eq!(answered_nothing(left), nothing, "{left:?}");
        }
    }

    #[test]
    fn a_success_that_answered_nothing_becomes_a_failure_and_nothing_else_changes() {
        let outcome = |status: AgentStatus, text: &str| {
            AgentOutcome::new(status, text.to_string(), Duration::ZERO)
        };
        let refused = refuse(outcome(AgentStatus::Succeeded, ""), false);
        assert!(
            matches!(&refused.status, AgentStatus::Failed { class: AgentErrorClass::EmptyAnswer, message } if message.contains("answered nothing")),
            "{refused:?}"
        );
        assert!(refuse(outcome(AgentStatus::Succeeded, ""), true)
            .status
            .is_success());
        assert!(refuse(outcome(AgentStatus::Succeeded, "ok"), false)
            .status
            .is_success());
        let mut verdict = outcome(AgentStatus::Succeeded, "");
        verdict.structured_output = Some(serde_json::json!({"decision": "approve"}));
        assert!(refuse(verdict, false).status.is_success());
        let mut null = outcome(AgentStatus::Succeeded, "");
        null.structured_output = Some(serde_json::Value::Null);
        assert!(!refuse(null, false).status.is_success());
        // Another failure keeps its own class and message.
        let timed_out = refuse(outcome(AgentStatus::TimedOut, ""), false);
        assert_eq!(timed_out.status, AgentStatus::TimedOut);
    }
}
