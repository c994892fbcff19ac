//! `uses = "gate"`: the profile's requirements and every reviewer's verdict of the turn decide
//! whether the turn is approved; what is unmet becomes the next turn's feedback.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Kind, Output, Uses, ValueType};

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
    outputs: &[
        Output::new("approved", ValueType::Bool, "every required gate holds"),
        Output::new("unmet", ValueType::Integer, "how many requirements are unmet"),
    ],
    needs_worktree: true,
    spends_budget: false,
    leaves_files: false,
    loop_only: true,
};

/// What a gate step publishes.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct GateOutputs {
    pub approved: bool,
    pub unmet: usize,
}
