//! `uses = "gate"`: the profile's requirements and every reviewer's verdict of the turn decide
//! whether the turn is approved; what is unmet becomes the next turn's feedback.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Kind, Uses};

/// The keys of a `gate` step (their doc comments are the reference's text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct GateStep {
    /// the reviewing steps (agent steps whose role has `output = "verdict"`, in the same loop)
    /// whose verdicts count; default: every one of the turn
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-form" = "list of step ids"))]
    pub reviews: Option<Vec<String>>,
}

impl GateStep {
    /// Whether the gate weighs the verdict of the reviewing step `step` (one of its loop).
    pub fn weighs(&self, step: &str) -> bool {
        self.reviews
            .as_ref()
            .is_none_or(|ids| ids.iter().any(|id| id == step))
    }

    pub(super) fn describe(&self) -> String {
        match &self.reviews {
            Some(reviews) => format!("gate, weighing {}", reviews.join(", ")),
            None => "gate".to_string(),
        }
    }
}

pub static KIND: Kind = Kind {
    uses: Uses::Gate,
    summary: "Judge the turn: the task profile's requirements (minus `[gate] waive`) over the turn's checks and every reviewer's verdict; unmet requirements become the next turn's feedback.",
    needs_worktree: true,
    spends_budget: false,
    leaves_files: false,
    loop_only: true,
};

/// What a gate step publishes (its doc comments are the reference's text), derived from the
/// gate's decision (`steps::gate::GateDecision::outputs`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
pub struct GateOutputs {
    /// every required gate holds
    pub approved: bool,
    /// how many requirements are unmet
    pub unmet: usize,
}
