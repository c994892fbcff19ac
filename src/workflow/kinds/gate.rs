//! `uses = "gate"`: the profile's requirements and every reviewer's verdict of the turn decide
//! whether the turn is approved; what is unmet becomes the next turn's feedback.

use serde::{Deserialize, Serialize};

use crate::workflow::model::Action;

use super::{Key, Kind, Output, Uses, ValueType};

pub static KIND: Kind = Kind {
    uses: Uses::Gate,
    summary: "Judge the turn: the task profile's requirements (minus `[gate] waive`) over the turn's checks and every reviewer's verdict; unmet requirements become the next turn's feedback.",
    keys: &[Key::new(
        "reviews",
        "list of step ids",
        "the reviewing steps (agent steps whose role has `output = \"verdict\"`, in the same loop) whose verdicts count; default: every one of the turn",
    )],
    outputs: &[
        Output::new("approved", ValueType::Bool, "every required gate holds"),
        Output::new("unmet", ValueType::Integer, "how many requirements are unmet"),
    ],
    needs_worktree: true,
    spends_budget: false,
    leaves_files: false,
    loop_only: true,
    describe: |action| match action {
        Action::Gate {
            reviews: Some(reviews),
        } => format!("gate, weighing {}", reviews.join(", ")),
        _ => "gate".to_string(),
    },
};

/// What a gate step publishes.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct GateOutputs {
    pub approved: bool,
    pub unmet: usize,
}
