//! Stall detection: noticing that more turns will not help, from facts the runner recorded.
//!
//! Three patterns, each over recent turns of the loop:
//! - **unchanged**: the worktree tree hash after the player step is the same in every turn of the
//!   window, so the player is not changing anything;
//! - **infrastructure**: the same infrastructure-class check failure (a missing module, tool or
//!   service) on the last two turns: more code will not fix the environment, so the loop stops
//!   at once, without a nudge, and the report says to fix `[env]`;
//! - **repeated feedback**: at least one failure persists in every turn of the window — a line
//!   of the normalized feedback signature (a failing check, an unmet criterion, a reviewer's
//!   `must_fix`) present in each — and no turn met more criteria than the window's first. Each
//!   failure is judged on its own, so one check failing identically every turn stalls even when
//!   another flips between turns and the signature as a whole never repeats. A reviewer
//!   restating one objection while the checks pass counts too; an empty signature (nothing
//!   failed, no blocking objection) never counts;
//! - **oscillation**: the tree alternates A, B, A, B over the last four turns. This looks at the
//!   last four turns whatever the window is (the window only needs to be at least 2), because an
//!   alternation needs four turns to be told apart from a single undo.
//!
//! A window below 2 is treated as 2: one turn cannot repeat anything. The response is a small
//! state machine ([`decide`]): the first stall nudges the player once (a `stall_notice` in the
//! next prompt) when the loop allows it, and the next detected stall stops the loop; an
//! infrastructure stall stops it at once.

use std::fmt;

use base::text::elide;
use serde::{Deserialize, Serialize};

use crate::workflow::model::StallConfig;

/// What the runner recorded about one finished turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnFacts {
    pub turn: u32,
    /// The worktree's tree hash after the player step.
    pub tree: String,
    /// [`crate::steps::feedback::turn_signature`] of the turn: runner-observed failures only.
    pub feedback_signature: String,
    pub criteria_met: usize,
    pub approved: bool,
    /// The signature lines of the turn's infrastructure-class check failures.
    #[serde(default)]
    pub infrastructure: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum StallReason {
    Infrastructure { failure: String },
    Unchanged { turns: u32, tree: String },
    RepeatedFeedback { turns: u32, signature: String },
    Oscillation { first: String, second: String },
}

/// How much of a signature a message shows.
const SIGNATURE_EXCERPT_CHARS: usize = 160;
/// How much of a tree hash a message shows.
const TREE_EXCERPT_CHARS: usize = 10;

impl fmt::Display for StallReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StallReason::Infrastructure { failure } => write!(
                f,
                "the same environment failure on two consecutive turns: {}; more code will not \
                 fix it. Fix the environment the checks and agents share (`[env]` in \
                 .autobuild/config.toml), then resume",
                elide(failure, SIGNATURE_EXCERPT_CHARS)
            ),
            StallReason::Unchanged { turns, tree } => write!(
                f,
                "the worktree was identical after each of the last {turns} turns (tree {})",
                elide(tree, TREE_EXCERPT_CHARS)
            ),
            StallReason::RepeatedFeedback { turns, signature } => write!(
                f,
                "the same failure repeated for {turns} turns with no new criteria met: {}",
                elide(
                    signature.lines().next().unwrap_or_default(),
                    SIGNATURE_EXCERPT_CHARS
                )
            ),
            StallReason::Oscillation { first, second } => write!(
                f,
                "the worktree alternated between two states over the last 4 turns (trees {} and {})",
                elide(first, TREE_EXCERPT_CHARS),
                elide(second, TREE_EXCERPT_CHARS)
            ),
        }
    }
}

/// The stall the recent turns show, if any. Never reports a stall when the latest turn was
/// approved. Patterns are checked in the order infrastructure, unchanged, repeated feedback,
/// oscillation.
pub fn detect_stall(history: &[TurnFacts], window: u32) -> Option<StallReason> {
    let latest = history.last()?;
    if latest.approved {
        return None;
    }
    if let [.., before, _] = history {
        if let Some(failure) = latest
            .infrastructure
            .iter()
            .find(|line| before.infrastructure.contains(line))
        {
            return Some(StallReason::Infrastructure {
                failure: failure.clone(),
            });
        }
    }
    let window = window.max(2);
    let size = usize::try_from(window).ok()?;
    if history.len() >= size {
        let recent = &history[history.len() - size..];
        let first = &recent[0];
        if recent.iter().all(|turn| turn.tree == first.tree) {
            return Some(StallReason::Unchanged {
                turns: window,
                tree: first.tree.clone(),
            });
        }
        let persistent: Vec<&str> = first
            .feedback_signature
            .lines()
            .filter(|line| {
                !line.is_empty()
                    && recent
                        .iter()
                        .all(|turn| turn.feedback_signature.lines().any(|l| l == *line))
            })
            .collect();
        let no_progress = recent
            .iter()
            .all(|turn| turn.criteria_met <= first.criteria_met);
        if !persistent.is_empty() && no_progress {
            return Some(StallReason::RepeatedFeedback {
                turns: window,
                signature: persistent.join("\n"),
            });
        }
    }
    if let [a, b, c, d] = &history[history.len().saturating_sub(4)..] {
        if a.tree == c.tree && b.tree == d.tree && a.tree != b.tree {
            return Some(StallReason::Oscillation {
                first: a.tree.clone(),
                second: b.tree.clone(),
            });
        }
    }
    None
}

/// Whether a loop nudges the player once before stopping on a stall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StallPolicy {
    pub nudge: bool,
}

impl From<StallConfig> for StallPolicy {
    fn from(config: StallConfig) -> Self {
        StallPolicy {
            nudge: config.nudge,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StallAction {
    Continue,
    /// Run the next turn with this `stall_notice` in the player's prompt.
    Nudge(String),
    /// End the loop with exit `stalled`.
    Stop(StallReason),
}

/// What the loop does about this turn's stall detection. `already_nudged` is whether an
/// earlier turn of this loop was nudged; a stall detected after that stops the loop.
pub fn decide(
    policy: StallPolicy,
    already_nudged: bool,
    reason: Option<StallReason>,
) -> StallAction {
    match reason {
        None => StallAction::Continue,
        Some(reason @ StallReason::Infrastructure { .. }) => StallAction::Stop(reason),
        Some(reason) if policy.nudge && !already_nudged => StallAction::Nudge(notice(&reason)),
        Some(reason) => StallAction::Stop(reason),
    }
}

/// The one-time notice for the player's next prompt.
fn notice(reason: &StallReason) -> String {
    format!(
        "The runner detected a stall: {reason}. Repeating the previous approach will not help, \
         and the loop stops if the next turn stalls too. Before changing code, read the full \
         logs named in the feedback and find the root cause. If the failure comes from the \
         environment (a missing package, tool, service or setting), fix that rather than \
         rewriting or renaming tests. Then take a different approach from the last turns."
    )
}

#[cfg(test)]
mod tests;
