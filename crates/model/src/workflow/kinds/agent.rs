//! `uses = "agent"`: run a role's agent in the worktree. A role with `output = "verdict"` is a
//! reviewer: its final message must be a verdict, and the gate weighs it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Kind, Uses};
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
    /// for a reviewer: the task criteria it judges, as a list of ids, or `"none"` for a
    /// reviewer of one concern (security, docs) whose verdict judges no criterion; default:
    /// every criterion
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("x-form" = "list of criterion ids, or \"none\""))]
    pub criteria: Option<ReviewedCriteria>,
}

/// `criteria` of a reviewer step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum ReviewedCriteria {
    /// These criterion ids only.
    Ids(Vec<String>),
    /// `"none"`: no criterion.
    Word(NoCriteria),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NoCriteria {
    None,
}

impl AgentStep {
    /// Whether this reviewer judges the criterion `id`.
    pub fn judges(&self, id: &str) -> bool {
        match &self.criteria {
            None => true,
            Some(ReviewedCriteria::Ids(ids)) => ids.iter().any(|i| i == id),
            Some(ReviewedCriteria::Word(NoCriteria::None)) => false,
        }
    }
}

impl AgentStep {
    pub(super) fn describe(&self) -> String {
        format!("agent: {}", self.role)
    }
}

pub static KIND: Kind = Kind {
    uses: Uses::Agent,
    summary: "Run a role's agent in the worktree with a fresh context and the role's prompt; a role with `output = \"verdict\"` reviews and returns a verdict.",
    needs_worktree: true,
    spends_budget: true,
    leaves_files: false,
    loop_only: false,
};

/// What an agent step publishes (its doc comments are the reference's text).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct AgentOutputs {
    /// the agent finished its turn normally
    pub succeeded: bool,
    /// how the agent ended: succeeded, failed, timed_out, idle, turn_limit, cancelled, …
    pub exit: String,
    /// files the agent changed (for a reviewer: files it changed against its access, reverted)
    pub files_changed: usize,
    /// a reviewer's verdict decision: approve or feedback (empty for other roles)
    pub decision: String,
    /// the agent's answer for later prompts: the file named by `$AUTOBUILD_OUTPUT` when it
    /// wrote one, else its final message (bounded; free text, so read it in prompts, never
    /// compare it)
    pub text: String,
    /// the complexity (1-10) an `output = "plan"` role's answer states on a `Complexity: N/10`
    /// line (GuardKit's scale); null for other roles or when it states none
    #[serde(default)]
    pub complexity: Option<u8>,
}

/// The complexity a plan states: the last line of the form `Complexity: N` or
/// `Complexity: N/10` (any case, markdown emphasis allowed), with N from 1 to 10.
pub fn stated_complexity(plan: &str) -> Option<u8> {
    plan.lines().rev().find_map(|line| {
        let line = line
            .trim()
            .trim_matches(|c| c == '*' || c == '_' || c == '#' || c == ' ');
        let (key, value) = line.split_once(':')?;
        if !key
            .trim()
            .trim_matches(|c| c == '*' || c == '_')
            .eq_ignore_ascii_case("complexity")
        {
            return None;
        }
        let value = value.trim().trim_matches(|c| c == '*' || c == '_');
        let number = value.split('/').next()?.trim();
        let n: u8 = number.parse().ok()?;
        (1..=10).contains(&n).then_some(n)
    })
}

#[cfg(test)]
mod plan_tests {
    use super::stated_complexity;

    #[test]
    fn a_plan_states_its_complexity_on_its_own_line() {
        for (plan, expected) in [
            ("## Approach\n...\nComplexity: 7/10\n", Some(7)),
            ("**Complexity:** 3/10", Some(3)),
            ("complexity: 10", Some(10)),
            ("Complexity: 2/10\nmore\nComplexity: 8/10", Some(8)),
            ("Complexity: 0/10", None),
            ("Complexity: 11", None),
            ("Complexity: high", None),
            ("The complexity: is low", None),
            ("", None),
        ] {
            assert_eq!(stated_complexity(plan), expected, "{plan:?}");
        }
    }
}
