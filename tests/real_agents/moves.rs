//! What the scripted model does, in each CLI's own tools: writing files, running a shell
//! command, trying to write as the read-only coach, and answering with a verdict.
//!
//! Claude Code: `Read`, `Write` (absolute paths; an existing file must be read first), `Bash`,
//! and the `StructuredOutput` tool that `--json-schema` adds. codex: `exec_command` (its shell
//! tool) for everything, and the verdict as the final message, which `--output-schema` makes
//! the API constrain.

use std::path::Path;

use serde_json::{json, Value};

use crate::harness::Cli;
use crate::model_server::{text, tool, Step};

/// `lib/greet.sh` with `greeting`; `punctuation` ends its line.
pub fn greet_sh(punctuation: &str) -> String {
    format!(
        "# greet.sh: greeting helpers, sourced by scripts and tests.\n\
         farewell() {{\n    printf 'Goodbye, %s.\\n' \"$1\"\n}}\n\
         greeting() {{\n    printf 'Hello, %s{punctuation}\\n' \"$1\"\n}}\n"
    )
}

/// The player's unit test for `greeting`.
pub const TEST_GREET: &str = ". ./lib/greet.sh\n\
got=$(greeting Ada)\n\
[ \"$got\" = \"Hello, Ada!\" ] || { echo \"error: greeting Ada: expected \\\"Hello, Ada!\\\", got \\\"$got\\\"\"; exit 1; }\n";

/// What the check prints when the greeting lacks its exclamation mark.
pub const WRONG_GREETING_FAILURE: &str = r#"expected "Hello, Ada!", got "Hello, Ada""#;

/// The coach's file that must never appear.
pub const COACH_FILE: &str = "COACH_WAS_HERE.txt";

#[derive(Debug, Clone, Copy)]
pub struct Moves<'a> {
    pub cli: Cli,
    pub worktree: &'a Path,
}

impl Moves<'_> {
    /// Writes `lib/greet.sh` (ending the greeting in `punctuation`) and `tests/test_greet.sh`.
    pub fn implement_greeting(&self, punctuation: &str) -> Vec<Step> {
        let greet = greet_sh(punctuation);
        match self.cli {
            Cli::Claude => vec![
                tool("Read", json!({"file_path": self.path("lib/greet.sh")})),
                tool(
                    "Write",
                    json!({"file_path": self.path("lib/greet.sh"), "content": greet}),
                ),
                tool(
                    "Write",
                    json!({"file_path": self.path("tests/test_greet.sh"), "content": TEST_GREET}),
                ),
            ],
            Cli::Codex => vec![self.shell(&format!(
                "cat > lib/greet.sh <<'EOF'\n{greet}EOF\ncat > tests/test_greet.sh <<'EOF'\n{TEST_GREET}EOF"
            ))],
        }
    }

    /// Runs `command` in the shell.
    pub fn shell(&self, command: &str) -> Step {
        match self.cli {
            Cli::Claude => tool(
                "Bash",
                json!({"command": command, "description": "Run a command"}),
            ),
            Cli::Codex => tool("exec_command", json!({"cmd": command})),
        }
    }

    /// The read-only coach's attempt to create [`COACH_FILE`] with the CLI's write tool
    /// (Claude Code) or its shell (codex, whose only tool it is).
    pub fn try_to_write(&self) -> Step {
        match self.cli {
            Cli::Claude => tool(
                "Write",
                json!({"file_path": self.path(COACH_FILE), "content": "the coach was here\n"}),
            ),
            Cli::Codex => self.shell(&format!("echo 'the coach was here' > {COACH_FILE}")),
        }
    }

    /// The coach's last steps: the verdict through the CLI's structured output.
    pub fn verdict(&self, verdict: Value) -> Vec<Step> {
        match self.cli {
            // The session ends when the structured output is accepted; the text is only
            // there should the CLI ask once more.
            Cli::Claude => vec![tool("StructuredOutput", verdict), text("Review submitted.")],
            Cli::Codex => vec![text(&verdict.to_string())],
        }
    }

    fn path(&self, relative: &str) -> String {
        self.worktree.join(relative).display().to_string()
    }
}

/// Concatenates step lists.
pub fn steps(parts: Vec<Vec<Step>>) -> Vec<Step> {
    parts.into_iter().flatten().collect()
}

pub fn approve() -> Value {
    json!({
        "decision": "approve",
        "summary": "greeting prints the expected line and is tested",
        "issues": [],
        "criteria": [{"id": "AC-001", "status": "met", "evidence": "tests/run.sh passes"}],
    })
}

/// The coach's turn-1 summary when the greeting lacks its exclamation mark.
pub const FEEDBACK_SUMMARY: &str = "greeting drops the exclamation mark";

pub fn feedback() -> Value {
    json!({
        "decision": "feedback",
        "summary": FEEDBACK_SUMMARY,
        "issues": [{"severity": "must_fix", "category": "correctness",
                    "description": "greeting Ada prints 'Hello, Ada' without the '!'",
                    "location": "lib/greet.sh", "suggestion": "end the line with '!'"}],
        "criteria": [{"id": "AC-001", "status": "not_met", "evidence": "the test fails"}],
    })
}
