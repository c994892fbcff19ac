//! `uses = "approval"`: a human checkpoint. On a terminal the runner asks; without one the run
//! stops waiting (exit 6) until `autobuild approve <ID>` or `autobuild reject <ID> --reason …`.
//! A rejection ends the run blocked, with the reason in its report and the worktree kept.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Kind, Uses};

/// The keys of an `approval` step (their doc comments are the reference's text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ApprovalStep {
    /// what to ask; `${{ expr }}` reads earlier steps' outputs, e.g. a plan to sign off
    /// (default: whether the task's work may be merged)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question: Option<String>,
}

impl ApprovalStep {
    pub(super) fn describe(&self) -> String {
        match &self.question {
            Some(question) => format!("approval: {question}"),
            None => "approval (a person signs off)".to_string(),
        }
    }
}

pub static KIND: Kind = Kind {
    uses: Uses::Approval,
    summary: "A person signs off: asked on a terminal, otherwise the run waits (exit 6) for `autobuild approve <ID>` (`--merge` to land it too) or `autobuild reject <ID> --reason …`; a rejection blocks the run. A yes at the terminal to the default question (which asks for the merge, unless the run has `--no-merge`) also lands the run: the merge step does not ask again.",
    needs_worktree: false,
    spends_budget: false,
    leaves_files: false,
    loop_only: false,
};

/// A person's answer at a sign-off — the one shape of it: what an approval step publishes, the
/// answer `autobuild approve`/`reject` leaves for a waiting run (`state.json`'s `answer`), and,
/// with its step, each decision the run records ([`SignOff`]).
/// Its doc comments are the reference's text of the approval step's outputs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Answer {
    /// the person approved
    pub approved: bool,
    /// how the answer came: terminal or command
    #[serde(default)]
    pub by: String,
    /// the reason given with a rejection (empty otherwise)
    #[serde(default)]
    pub reason: String,
    /// who answered: git user.name, else $USER
    #[serde(default)]
    pub person: String,
    /// when the answer was given (RFC 3339, UTC)
    #[serde(default)]
    pub at: String,
}

/// What an approval step publishes: the answer it got.
pub type ApprovalOutputs = Answer;

/// One decision of a person at a sign-off (an `approval` step, or the gate's question after a
/// critical issue): the step that asked, and the answer.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignOff {
    pub step: String,
    #[serde(flatten)]
    pub answer: Answer,
}

impl SignOff {
    /// "approved by Ada (command) at 2026-…" / "rejected by … : reason".
    pub fn describe(&self) -> String {
        let answer = &self.answer;
        let person = if answer.person.is_empty() {
            "someone"
        } else {
            &answer.person
        };
        let at = if answer.at.is_empty() {
            String::new()
        } else {
            format!(" at {}", answer.at)
        };
        let verdict = if answer.approved {
            "approved"
        } else {
            "rejected"
        };
        let reason = if answer.approved || answer.reason.is_empty() {
            String::new()
        } else {
            format!(": {}", answer.reason)
        };
        format!("{verdict} by {person} ({}){at}{reason}", answer.by)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_sign_off_is_its_step_beside_the_answer_in_one_flat_record() {
        let signed = SignOff {
            step: "sign_off".into(),
            answer: Answer {
                approved: false,
                by: "command".into(),
                reason: "needs a test".into(),
                person: "Ada".into(),
                at: "2026-01-01T00:02:00Z".into(),
            },
        };
        let written = serde_json::to_value(&signed).unwrap();
        assert_eq!(
            written,
            json!({"step": "sign_off", "approved": false, "by": "command",
                   "reason": "needs a test", "person": "Ada", "at": "2026-01-01T00:02:00Z"})
        );
        assert_eq!(serde_json::from_value::<SignOff>(written).unwrap(), signed);
        assert_eq!(
            signed.describe(),
            "rejected by Ada (command) at 2026-01-01T00:02:00Z: needs a test"
        );
        let unknown = SignOff {
            step: "gate".into(),
            answer: Answer {
                approved: true,
                by: "terminal".into(),
                reason: "ignored on an approval".into(),
                ..Answer::default()
            },
        };
        assert_eq!(unknown.describe(), "approved by someone (terminal)");
    }

    #[test]
    fn records_written_before_the_one_shape_still_load() {
        // `state.json`'s pending answer had no `by`; a sign-off without a reason had no `reason`.
        let answer: Answer = serde_json::from_value(json!({"approved": true})).unwrap();
        assert_eq!(
            answer,
            Answer {
                approved: true,
                ..Answer::default()
            }
        );
        let signed: SignOff = serde_json::from_value(json!({
            "step": "sign_off", "approved": true, "by": "terminal", "person": "Ada", "at": ""
        }))
        .unwrap();
        assert_eq!(signed.answer.by, "terminal");
        assert!(signed.answer.approved && signed.answer.reason.is_empty());
    }
}
