//! `uses = "loop"`: repeat a body of steps (one turn per iteration) until `until` holds, the
//! bound is hit, or stall detection stops it. Run by the interpreter itself.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Kind, Uses};
use crate::workflow::model::{StallConfig, Step};

/// The keys of a `loop` step (their doc comments are the reference's text).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LoopStep {
    /// the bound on turns (`--max-turns` overrides the first loop's)
    #[schemars(range(min = 1))]
    pub max_iterations: u32,
    /// checked after each turn; true ends the loop as done
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-form" = "expression"))]
    pub until: Option<String>,
    /// stall detection: `window` (turns compared, default 3) and `nudge` (warn the player once
    /// first, default true)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall: Option<StallConfig>,
    /// the loop body
    pub steps: Vec<Step>,
}

impl LoopStep {
    pub(super) fn describe(&self) -> String {
        let mut text = format!("loop, up to {} iteration(s)", self.max_iterations);
        if let Some(until) = &self.until {
            text.push_str(&format!(", until {until}"));
        }
        if let Some(stall) = &self.stall {
            text.push_str(&format!(", stall window {}", stall.window));
        }
        text
    }
}

pub static KIND: Kind = Kind {
    uses: Uses::Loop,
    summary: "Repeat the nested `steps` (one turn per iteration, fresh agent contexts each time) until `until` holds, `max_iterations` is reached, or the loop stalls.",
    needs_worktree: false,
    spends_budget: true,
    leaves_files: false,
    loop_only: false,
};

/// Why a loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LoopExit {
    /// `until` held.
    Done,
    /// The bound was reached.
    Exhausted,
    /// Stall detection stopped it.
    Stalled,
}

/// What a loop publishes (its doc comments are the reference's text).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct LoopOutputs {
    /// turns run
    pub iterations: u32,
    /// why the loop ended: done, exhausted or stalled
    pub exit: LoopExit,
}
