//! `uses = "run"`: a shell command in the worktree with the project environment (formatters,
//! code generators, notifications). Its exit code is an output, not a failure of the run.

use serde::Serialize;

use super::{Key, Kind, Output, Uses, ValueType};
use crate::workflow::model::Action;

pub static KIND: Kind = Kind {
    uses: Uses::Run,
    summary: "Run a shell command in the worktree with the project environment; `${{ … }}` in it reads expressions.",
    keys: &[
        Key::new("run", "string", "the command, run with `sh -c`"),
        Key::new("env", "table of strings", "extra environment variables"),
    ],
    outputs: &[
        Output::new("exit_code", ValueType::Integer, "the command's exit code (null when it was stopped)"),
        Output::new("passed", ValueType::Bool, "it exited 0"),
    ],
    needs_worktree: true,
    spends_budget: true,
    leaves_files: true,
    loop_only: false,
    describe: |action| match action {
        Action::Run { run, .. } => format!("run: {run}"),
        _ => "run".to_string(),
    },
};

/// What a run step publishes.
#[derive(Debug, Clone, Serialize)]
pub struct RunOutputs {
    pub exit_code: Option<i32>,
    pub passed: bool,
}
