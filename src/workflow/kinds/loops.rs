//! `uses = "loop"`: repeat a body of steps (one turn per iteration) until `until` holds, the
//! bound is hit, or stall detection stops it. Run by the interpreter itself.

use serde::{Deserialize, Serialize};

use super::{Key, Kind, Output, Uses, ValueType};
use crate::workflow::model::Action;

pub static KIND: Kind = Kind {
    uses: Uses::Loop,
    summary: "Repeat the nested `steps` (one turn per iteration, fresh agent contexts each time) until `until` holds, `max_iterations` is reached, or the loop stalls.",
    keys: &[
        Key::new("max_iterations", "integer ≥ 1", "the bound on turns (`--max-turns` overrides the first loop's)"),
        Key::new("until", "expression", "checked after each turn; true ends the loop as done"),
        Key::new("stall", "table", "stall detection: `window` (turns compared, default 3) and `nudge` (warn the player once first, default true)"),
        Key::new("steps", "list of steps", "the loop body"),
    ],
    outputs: &[
        Output::new("iterations", ValueType::Integer, "turns run"),
        Output::new("exit", ValueType::Text, "why the loop ended: done, exhausted or stalled"),
    ],
    needs_worktree: false,
    spends_budget: true,
    leaves_files: false,
    loop_only: false,
    describe: |action| match action {
        Action::Loop {
            max_iterations,
            until,
            stall,
            ..
        } => {
            let mut text = format!("loop, up to {max_iterations} iteration(s)");
            if let Some(until) = until {
                text.push_str(&format!(", until {until}"));
            }
            if let Some(stall) = stall {
                text.push_str(&format!(", stall window {}", stall.window));
            }
            text
        }
        _ => "loop".to_string(),
    },
};

/// Why a loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoopExit {
    /// `until` held.
    Done,
    /// The bound was reached.
    Exhausted,
    /// Stall detection stopped it.
    Stalled,
}

/// What a loop publishes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LoopOutputs {
    pub iterations: u32,
    pub exit: LoopExit,
}
