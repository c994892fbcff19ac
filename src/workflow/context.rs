//! The data prompt templates and expressions may read (DESIGN.md §4.1).
//!
//! These structs are the contract between the engine, which fills them from runner-produced
//! records, and the templates users write. The validator checks templates against
//! [`PROMPT_VARIABLES`], so adding a field here means adding its name there.

use std::collections::BTreeMap;

use serde::Serialize;

/// Top-level names a prompt template may use.
pub const PROMPT_VARIABLES: &[&str] = &[
    "task",
    "turn",
    "max_turns",
    "worktree",
    "profile",
    "feedback",
    "verify",
    "player",
    "stall_notice",
    "inputs",
    "verdict_schema",
];

/// Top-level names an `if`/`until` expression may use (besides minijinja's own).
pub const EXPRESSION_VARIABLES: &[&str] = &["steps", "prev", "inputs", "task", "turn"];

/// Everything a rendered prompt can see.
#[derive(Debug, Clone, Serialize)]
pub struct PromptContext {
    pub task: TaskContext,
    pub turn: u32,
    pub max_turns: u32,
    pub worktree: WorktreeContext,
    pub profile: ProfileContext,
    /// The previous turn's feedback; `none` on turn 1.
    pub feedback: Option<FeedbackContext>,
    /// This turn's runner verification, for the coach; `none` before verify ran.
    pub verify: Option<VerifyContext>,
    /// What the runner computed about this turn's player step; `none` before it ran.
    pub player: Option<PlayerContext>,
    /// Set once when the runner detected a stall and nudges the player.
    pub stall_notice: Option<String>,
    pub inputs: BTreeMap<String, String>,
    /// The JSON schema a verdict must follow, pretty-printed.
    pub verdict_schema: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct TaskContext {
    pub id: String,
    pub title: String,
    pub requirements: String,
    pub criteria: Vec<CriterionContext>,
    pub task_type: String,
    pub complexity: Option<u8>,
    pub path: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct CriterionContext {
    pub id: String,
    pub text: String,
    pub verify: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct WorktreeContext {
    pub path: String,
    pub branch: String,
    pub base: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProfileContext {
    pub name: String,
    pub require: Vec<String>,
}

/// What the previous turn taught: coach issues, failing checks, unmet criteria.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FeedbackContext {
    pub summary: String,
    pub issues: Vec<IssueContext>,
    pub failing_checks: Vec<CheckContext>,
    pub unmet_criteria: Vec<CriterionStatusContext>,
}

#[derive(Debug, Clone, Serialize)]
pub struct IssueContext {
    pub severity: String,
    pub category: String,
    pub description: String,
    pub location: String,
    pub suggestion: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct CheckContext {
    pub name: String,
    pub command: String,
    /// `passed`, `failed`, `timed_out` or `error`.
    pub status: String,
    pub exit_code: Option<i32>,
    /// Bounded: first error block plus final summary lines.
    pub summary: String,
    pub log_path: String,
    /// `code` or `infrastructure`.
    pub failure_class: Option<String>,
    pub advice: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CriterionStatusContext {
    pub id: String,
    pub text: String,
    /// Why it is unmet (failing verify command summary, or the coach's evidence).
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct VerifyContext {
    pub passed: bool,
    pub checks: Vec<CheckContext>,
    /// Executable criteria, run as checks named by criterion id.
    pub criteria: Vec<CheckContext>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PlayerContext {
    pub succeeded: bool,
    pub files_changed: Vec<String>,
    pub diff_stat: String,
    pub final_message: String,
}
