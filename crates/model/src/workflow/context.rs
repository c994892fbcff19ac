//! The data prompt templates and expressions may read (docs/workflows.md).
//!
//! These structs are the contract between the engine, which fills them from runner-produced
//! records, and the templates users write. The validator checks templates against
//! [`PROMPT_VARIABLES`], so adding a field here means adding its name there.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

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
    "structured_verdict",
    "scope",
    "steps",
    "output_file",
    "context_files",
];

/// Top-level names an `if`/`until` expression may use (besides minijinja's own).
pub const EXPRESSION_VARIABLES: &[&str] = &["steps", "prev", "inputs", "task", "turn"];

/// Everything a rendered prompt can see.
#[derive(Debug, Clone, Serialize, Deserialize)]
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
    /// The role's adapter carries the verdict in a structured-output channel (validated against
    /// the schema), so its prompt asks for the verdict itself, not for a fenced block.
    #[serde(default)]
    pub structured_verdict: bool,
    /// What the agent may not change: protected globs, and its role's write scope.
    pub scope: ScopeContext,
    /// The outputs of the steps that ran before this one, as expressions see them
    /// (`steps.<id>.outputs.<name>`; an agent step's answer is `steps.<id>.outputs.text`).
    /// Which of them a template may read depends on the workflow, so the validator checks
    /// `steps.…` references against the steps that precede each use of the role.
    #[serde(default)]
    pub steps: serde_json::Map<String, serde_json::Value>,
    /// The file (in the run's scratch directory) this agent may write its answer to, also in
    /// `$AUTOBUILD_OUTPUT`; it becomes the step's `outputs.text` instead of the final message.
    #[serde(default)]
    pub output_file: String,
    /// `[context] files` and the task's `context_files:`: shown to every role.
    #[serde(default)]
    pub context_files: Vec<ContextFileContext>,
}

/// A file every role is shown: its path (relative to the repository root) and its contents,
/// cut at a bound (`truncated`, with a note at the end of `content`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ContextFileContext {
    pub path: String,
    pub content: String,
    pub truncated: bool,
}

/// The path scope of the role a prompt is rendered for.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ScopeContext {
    /// Globs no agent may create, change or delete.
    pub protect: Vec<String>,
    /// The only globs this role may change; `none` when it may change anything unprotected.
    pub writes: Option<Vec<String>>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskContext {
    pub id: String,
    pub title: String,
    pub requirements: String,
    pub criteria: Vec<CriterionContext>,
    /// The criteria section's text after the last criterion (prose, code, tables).
    #[serde(default)]
    pub criteria_epilogue: String,
    pub task_type: String,
    pub complexity: Option<u8>,
    pub path: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CriterionContext {
    pub id: String,
    pub text: String,
    pub verify: Option<String>,
    /// The criteria section's text just before this criterion (a group heading, prose).
    #[serde(default)]
    pub preamble: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorktreeContext {
    pub path: String,
    pub branch: String,
    pub base: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProfileContext {
    pub name: String,
    pub require: Vec<String>,
    /// The checks the runner runs after the player's turn, with their exact commands.
    #[serde(default)]
    pub checks: Vec<CheckCommandContext>,
}

/// A check the runner runs: its name and exact command, and whether the gate requires it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CheckCommandContext {
    pub name: String,
    pub command: String,
    pub required: bool,
}

/// What the previous turn taught: coach issues, failing checks, unmet criteria.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FeedbackContext {
    pub summary: String,
    /// What to fix for the next turn to be approved: numbered in the prompt, de-duplicated,
    /// only what the player can act on.
    #[serde(default)]
    pub fix: Vec<String>,
    pub issues: Vec<IssueContext>,
    pub failing_checks: Vec<CheckContext>,
    pub unmet_criteria: Vec<CriterionStatusContext>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IssueContext {
    pub severity: String,
    pub category: String,
    pub description: String,
    pub location: String,
    pub suggestion: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// The task's profile does not require this check; its failure does not block approval.
    #[serde(default)]
    pub advisory: bool,
    /// What the test runner said it ran (`3 passed, 1 skipped (pytest)`), where it could be read.
    #[serde(default)]
    pub tests: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriterionStatusContext {
    pub id: String,
    pub text: String,
    /// Why it is unmet (failing verify command summary, or the coach's evidence).
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VerifyContext {
    pub passed: bool,
    pub checks: Vec<CheckContext>,
    /// Executable criteria, run as checks named by criterion id.
    pub criteria: Vec<CheckContext>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlayerContext {
    pub succeeded: bool,
    pub files_changed: Vec<String>,
    pub diff_stat: String,
    pub final_message: String,
    /// The `## Disputed` section of the final message: objections the player says need no
    /// change, each with its reason (empty when there is none).
    #[serde(default)]
    pub disputed: String,
    /// The diff stat of the whole task branch against its base (every turn's work so far).
    #[serde(default)]
    pub branch_diff_stat: String,
    /// The diff of every test file changed on the task branch so far (empty when none): shown
    /// to reviewers on its own, so a weakened test is seen even where changing tests is allowed.
    pub tests_diff: String,
}

impl PromptContext {
    /// A context with every optional part present. The validator checks the attribute paths a
    /// template reads (`task.title`, `feedback.failing_checks`) against its shape, so a typo in
    /// a template is caught before any agent runs; `workflows validate` renders templates with it.
    pub fn example() -> PromptContext {
        let check = CheckContext {
            name: "test".into(),
            command: "cargo test".into(),
            status: "failed".into(),
            exit_code: Some(101),
            summary: "test tests::greets ... FAILED".into(),
            log_path: ".autobuild/runs/TASK-001/logs/verify_turn_1_test.log".into(),
            failure_class: Some("code".into()),
            advice: Some("fix the failing test".into()),
            advisory: false,
            tests: Some("1 passed, 1 failed (cargo test)".into()),
        };
        PromptContext {
            task: TaskContext {
                id: "TASK-001".into(),
                title: "Add greeting function".into(),
                requirements: "Add `greeting(name)`.".into(),
                criteria: vec![CriterionContext {
                    id: "AC-001".into(),
                    text: "greeting(\"Ada\") returns \"Hello, Ada!\"".into(),
                    verify: Some("python -c 'import x'".into()),
                    preamble: String::new(),
                }],
                criteria_epilogue: String::new(),
                task_type: "feature".into(),
                complexity: Some(3),
                path: ".autobuild/tasks/TASK-001.md".into(),
            },
            turn: 2,
            max_turns: 5,
            worktree: WorktreeContext {
                path: ".autobuild/worktrees/TASK-001".into(),
                branch: "autobuild/TASK-001".into(),
                base: "main".into(),
            },
            profile: ProfileContext {
                name: "feature".into(),
                require: vec!["checks.test".into(), "coach".into()],
                checks: vec![CheckCommandContext {
                    name: "test".into(),
                    command: "cargo test".into(),
                    required: true,
                }],
            },
            feedback: Some(FeedbackContext {
                summary: "The test fails.".into(),
                fix: vec!["Make the required check `test` pass".into()],
                issues: vec![IssueContext {
                    severity: "must_fix".into(),
                    category: "correctness".into(),
                    description: "wrong punctuation".into(),
                    location: "src/utils.py:3".into(),
                    suggestion: "add the exclamation mark".into(),
                }],
                failing_checks: vec![check.clone()],
                unmet_criteria: vec![CriterionStatusContext {
                    id: "AC-001".into(),
                    text: "greeting works".into(),
                    reason: "verify command exited 1".into(),
                }],
            }),
            verify: Some(VerifyContext {
                passed: false,
                checks: vec![check.clone()],
                criteria: vec![check],
            }),
            player: Some(PlayerContext {
                succeeded: true,
                files_changed: vec!["src/utils.py".into()],
                diff_stat: " src/utils.py | 2 ++".into(),
                final_message: "Done.".into(),
                disputed: "- the must_fix about logging: the task asks for no logging".into(),
                branch_diff_stat: " src/utils.py | 4 ++++".into(),
                tests_diff: "--- a/tests/test_utils.py\n+++ b/tests/test_utils.py\n".into(),
            }),
            stall_notice: Some("No progress in 3 turns.".into()),
            inputs: BTreeMap::from([("focus".to_string(), "tests".to_string())]),
            verdict_schema: "{\"type\": \"object\"}".into(),
            structured_verdict: false,
            scope: ScopeContext {
                protect: vec![".autobuild/**".into(), "tests/acceptance/**".into()],
                writes: Some(vec!["src/**".into(), "tests/**".into()]),
            },
            steps: serde_json::Map::new(),
            output_file: ".autobuild/runs/TASK-001/scratch/output/turn_2_player.md".into(),
            context_files: vec![ContextFileContext {
                path: "docs/architecture.md".into(),
                content: "# Architecture".into(),
                truncated: false,
            }],
        }
    }
}
