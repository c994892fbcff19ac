//! Preparing a task worktree the `worktree` step just added: the `[worktree]` links and copies
//! from the main checkout, then the `setup` command, once.
//!
//! Setup runs with the project environment (the one checks and agents get), in the worktree,
//! its output in `logs/worktree_setup.log` of the run directory. It has succeeded once a marker
//! file sits in the run directory: after a failed setup, `autobuild task ID --resume` (a new run
//! on the same branch and worktree) runs it again; within one run a successful setup is never
//! repeated. A failure is the environment's,
//! not the task's: the run stops with an infrastructure failure and advice, before any agent
//! spends a turn in a worktree whose tests cannot run.

use std::fs;
use std::time::Duration;

use crate::engine::cx::RunCx;
use crate::engine::events::EventKind;
use crate::engine::Outcome;
use base::error::Error;
use model::project::worktree_files;
use process::{self, ProcessEnd, ProcessSpec};

/// The bound on the setup command: installing a project's dependencies can take a while.
const SETUP_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// The file, in the run directory, that says the setup command succeeded.
const DONE_MARKER: &str = "worktree_setup.done";
/// The setup command's log, in the run's `logs/`.
pub const SETUP_LOG: &str = "worktree_setup.log";

/// Links and copies `[worktree]` paths into a worktree that was just added.
pub fn populate(cx: &mut RunCx) -> Result<(), Error> {
    let plan = cx.plan;
    let hidden = plan.hidden_set()?;
    for note in worktree_files::populate(
        &plan.root,
        &plan.worktree,
        &plan.config.worktree,
        hidden.as_ref(),
    )? {
        cx.emit(EventKind::Warning { message: note });
    }
    Ok(())
}

/// Runs `[worktree] setup` unless it already succeeded for this run; `Some` is the outcome
/// that stops the run when it fails.
pub fn run_setup(cx: &mut RunCx) -> Result<Option<Outcome>, Error> {
    let Some(command) = cx.plan.config.worktree.setup.clone() else {
        return Ok(None);
    };
    let marker = cx.paths.dir.join(DONE_MARKER);
    if marker.exists() {
        return Ok(None);
    }
    let logs = cx.paths.logs();
    fs::create_dir_all(&logs).map_err(|e| Error::io("cannot create", &logs, e))?;
    let log_path = logs.join(SETUP_LOG);
    let (program, args) = cx.project_env.shell_command(&command);
    let mut spec = ProcessSpec::new(program, &cx.plan.worktree, &log_path);
    spec.args = args;
    spec.env = cx.env_vars();
    spec.timeout = Some(cx.clamp(SETUP_TIMEOUT));
    spec.group_file = Some(agents::command_group_file(&cx.paths.dir));
    let shown_log = log_path
        .strip_prefix(&cx.plan.root)
        .unwrap_or(&log_path)
        .display()
        .to_string();
    let failed = match process::run(&spec, &cx.cancel) {
        Ok(outcome) => match outcome.end {
            ProcessEnd::Exited(0) => None,
            ProcessEnd::Exited(code) => Some(format!("exited with status {code}")),
            ProcessEnd::Signaled(signal) => Some(format!("was killed by signal {signal}")),
            ProcessEnd::TimedOut | ProcessEnd::IdleTimedOut => Some(format!(
                "did not finish within {}",
                humantime::format_duration(spec.timeout.unwrap_or(SETUP_TIMEOUT))
            )),
            ProcessEnd::Cancelled | ProcessEnd::Aborted => {
                return Ok(Some(cx.cancel_outcome()));
            }
        },
        Err(error) => Some(format!("could not start: {error}")),
    };
    match failed {
        None => {
            fs::write(&marker, b"").map_err(|e| Error::io("cannot write", &marker, e))?;
            Ok(None)
        }
        Some(why) => Ok(Some(Outcome::Failed {
            message: format!(
                "infrastructure — the worktree setup command `{command}` {why}; its output is in {shown_log}. \
                 Fix the command or the environment it needs ([worktree] setup and [env] in \
                 .autobuild/config.toml), try it by hand in the worktree {}, then continue with \
                 `autobuild task {} --resume`",
                cx.plan.worktree.strip_prefix(&cx.plan.root).unwrap_or(&cx.plan.worktree).display(),
                cx.plan.task.id
            ),
            infrastructure: true,
        })),
    }
}
