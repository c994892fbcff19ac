//! `uses = "agent"`: run a role's agent in the worktree. A role with `output = "verdict"` is a
//! reviewer: its final message must be a verdict, and the gate weighs it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Kind, Output, Uses, ValueType};
use crate::workflow::model::is_false;

/// The keys of an `agent` step (their doc comments are the reference's text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgentStep {
    /// the role to run (a key of `[roles]`)
    pub role: String,
    /// a read-only role without `output = "verdict"` in a gated loop: its output is for
    /// information only and the gate does not weigh it (otherwise a validation error)
    #[serde(default, skip_serializing_if = "is_false")]
    pub advisory: bool,
}

impl AgentStep {
    pub(super) fn describe(&self) -> String {
        format!("agent: {}", self.role)
    }
}

pub static KIND: Kind = Kind {
    uses: Uses::Agent,
    summary: "Run a role's agent in the worktree with a fresh context and the role's prompt; a role with `output = \"verdict\"` reviews and returns a verdict.",
    outputs: &[
        Output::new("succeeded", ValueType::Bool, "the agent finished its turn normally"),
        Output::new("exit", ValueType::Text, "how the agent ended: succeeded, failed, timed_out, idle, turn_limit, cancelled, …"),
        Output::new("files_changed", ValueType::Integer, "files the agent changed (for a reviewer: files it changed against its access, reverted)"),
        Output::new("decision", ValueType::Text, "a reviewer's verdict decision: approve or feedback (empty for other roles)"),
        Output::new("text", ValueType::Text, "the agent's answer for later prompts: the file named by `$AUTOBUILD_OUTPUT` when it wrote one, else its final message (bounded; free text, so read it in prompts, never compare it)"),
    ],
    needs_worktree: true,
    spends_budget: true,
    leaves_files: false,
    loop_only: false,
};

/// What an agent step publishes.
#[derive(Debug, Clone, Serialize)]
pub struct AgentOutputs {
    pub succeeded: bool,
    pub exit: String,
    pub files_changed: usize,
    pub decision: String,
    /// The agent's answer: what it wrote to `$AUTOBUILD_OUTPUT`, else its final message.
    pub text: String,
}
