//! `uses = "approval"`: a human checkpoint. On a terminal the runner asks; without one the run
//! stops waiting (exit 6) until `autobuild approve <ID>` or `autobuild reject <ID> --reason …`.
//! A rejection ends the run blocked, with the reason in its report and the worktree kept.

use serde::{Deserialize, Serialize};

use super::{Key, Kind, Output, Uses, ValueType};
use crate::workflow::model::Action;

pub static KIND: Kind = Kind {
    uses: Uses::Approval,
    summary: "A person signs off: asked on a terminal, otherwise the run waits (exit 6) for `autobuild approve <ID>` (`--merge` to land it too) or `autobuild reject <ID> --reason …`; a rejection blocks the run. A yes at the terminal to the default question (which asks for the merge, unless the run has `--no-merge`) also lands the run: the merge step does not ask again.",
    keys: &[Key::new(
        "question",
        "string",
        "what to ask; `${{ expr }}` reads earlier steps' outputs, e.g. a plan to sign off (default: whether the task's work may be merged)",
    )],
    outputs: &[
        Output::new("approved", ValueType::Bool, "the person approved"),
        Output::new("by", ValueType::Text, "how the answer came: terminal or command"),
        Output::new("reason", ValueType::Text, "the reason given with a rejection (empty otherwise)"),
        Output::new("person", ValueType::Text, "who answered: git user.name, else $USER"),
        Output::new("at", ValueType::Text, "when the answer was given (RFC 3339, UTC)"),
    ],
    needs_worktree: false,
    spends_budget: false,
    leaves_files: false,
    loop_only: false,
    describe: |action| match action {
        Action::Approval {
            question: Some(question),
        } => format!("approval: {question}"),
        _ => "approval (a person signs off)".to_string(),
    },
};

/// What an approval step publishes.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ApprovalOutputs {
    pub approved: bool,
    pub by: String,
    pub reason: String,
    #[serde(default)]
    pub person: String,
    #[serde(default)]
    pub at: String,
}
