//! `autobuild demo`: the default Player/Coach workflow on a bundled sample project, in a
//! temporary git repository, with scripted `command` agents instead of LLMs. The scripted
//! player's first attempt is plausible but wrong; the runner's checks and the coach catch it,
//! the feedback reaches the second turn, which fixes it; the run is approved and merged.
//! It needs nothing but the binary, git's library (built in) and a POSIX shell.

use std::fs;
use std::path::Path;

use crate::cli::command_error::CommandError;
use crate::engine::plan::BranchPolicy;
use crate::engine::run::{start, StartOptions};
use crate::engine::state::RunSettings;
use crate::error::Error;
use crate::git;
use crate::ui;
use crate::ui::progress::Display;

/// The sample project, embedded so the demo works from the binary alone.
const FILES: &[(&str, &str)] = &[
    ("README.md", include_str!("../../demo/project/README.md")),
    (
        "lib/greet.sh",
        include_str!("../../demo/project/lib/greet.sh"),
    ),
    (
        "tests/run.sh",
        include_str!("../../demo/project/tests/run.sh"),
    ),
    (
        "tests/test_farewell.sh",
        include_str!("../../demo/project/tests/test_farewell.sh"),
    ),
    (
        ".autobuild/config.toml",
        include_str!("../../demo/project/.autobuild/config.toml"),
    ),
    (
        ".autobuild/.gitignore",
        include_str!("../../demo/project/.autobuild/.gitignore"),
    ),
    (
        ".autobuild/tasks/TASK-DEMO-001.md",
        include_str!("../../demo/project/.autobuild/tasks/TASK-DEMO-001.md"),
    ),
    (
        ".autobuild/agents/player.sh",
        include_str!("../../demo/project/.autobuild/agents/player.sh"),
    ),
    (
        ".autobuild/agents/coach.sh",
        include_str!("../../demo/project/.autobuild/agents/coach.sh"),
    ),
];

const TASK: &str = "TASK-DEMO-001";

pub fn run(json: bool, quiet: bool) -> Result<u8, Error> {
    let dir = tempfile::Builder::new()
        .prefix("autobuild-demo-")
        .tempdir()
        .map_err(|e| {
            Error::io(
                "cannot create a temporary directory in",
                std::env::temp_dir(),
                e,
            )
        })?
        .keep();
    write_project(&dir)?;
    git::init_with_commit(&dir, "main", "Sample project for the autobuild demo")
        .map_err(CommandError::DemoRepository)?;
    if !json && !quiet {
        ui::line(&format!(
            "autobuild demo — the default player-coach workflow on a sample project in\n  {}\n\
             The Player and Coach here are scripted shell stand-ins (the `command` adapter), not LLMs:\n\
             the player's first attempt is plausible but wrong; watch the runner and the coach catch it.\n",
            dir.display()
        ));
    }
    let settings = RunSettings {
        auto_merge: true,
        ..RunSettings::default()
    };
    let options = StartOptions {
        policy: BranchPolicy::New,
        yes: false,
        moved_checkout: false,
        io: super::terminal_io(Display::choose(json, quiet))?,
    };
    let outcome = start(&dir, TASK, settings, options)?;
    if !json && !quiet {
        ui::line(&format!(
            "\nRun records (prompts, transcripts, verdicts, check logs, report.md, report.html):\n  {}\n\
             Look around: `cd {} && {} status {TASK}`\n\
             The directory is kept for that; remove it when done: `rm -rf {}`",
            dir.join(".autobuild/runs").join(TASK).display(),
            dir.display(),
            program(),
            dir.display()
        ));
    }
    Ok(outcome.exit_code())
}

/// How to call this program again: `autobuild` when that is what PATH finds, else its path
/// (`cargo run` puts nothing on PATH).
fn program() -> String {
    let this = std::env::current_exe()
        .ok()
        .and_then(|p| p.canonicalize().ok());
    let on_path = which::which("autobuild")
        .ok()
        .and_then(|p| p.canonicalize().ok());
    match this {
        Some(this) if on_path.as_ref() != Some(&this) => this.display().to_string(),
        _ => "autobuild".to_string(),
    }
}

fn write_project(dir: &Path) -> Result<(), Error> {
    for (relative, text) in FILES {
        let path = dir.join(relative);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| Error::io("cannot create", parent, e))?;
        }
        fs::write(&path, text).map_err(|e| Error::io("cannot write", &path, e))?;
    }
    Ok(())
}
