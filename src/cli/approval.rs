//! `autobuild approve <ID>` and `autobuild reject <ID> --reason …`: a person's answer to a run
//! waiting at an `approval` step (exit 6). The answer is saved in the run's state under its
//! lock, then the run continues as `autobuild resume` would: an approval lets it go on (to the
//! merge, usually); a rejection ends it blocked with the reason in its report. The answer
//! records who gave it (git `user.name`, else `$USER`) and when. `approve --merge` also merges
//! without asking, so the run lands in one step.

use crate::cli::run_dir::{checked_run, locate_owned_run};
use crate::cli::terminal_io;
use crate::engine::lock::RunLock;
use crate::engine::refusal::{Refusal, Subject};
use crate::engine::state::{write_json_atomic, Answer, RunStatus};
use crate::error::Error;
use crate::project::Layout;
use crate::ui::progress::Display;

/// Records `answer` for the waiting run `task_id` and continues it (merging without asking when
/// `merge`); returns its exit code.
pub fn answer(
    task_id: &str,
    mut answer: Answer,
    merge: bool,
    json: bool,
    quiet: bool,
) -> Result<u8, Error> {
    let root = checked_run(task_id)?;
    let mut run = locate_owned_run(&root, task_id)?;
    if run.state.status != RunStatus::Waiting {
        return Err(Refusal::NotWaiting {
            id: task_id.to_string(),
            status: run.state.status,
            approve: answer.approved,
        }
        .into());
    }
    if !answer.approved && answer.reason.trim().is_empty() {
        return Err(Refusal::RejectionWithoutReason.into());
    }
    {
        let _lock = RunLock::acquire(&Layout::new(&root).runs(), task_id)
            .map_err(|e| Refusal::lock(Subject::Task(task_id.to_string()), e))?;
        answer.person = crate::git::person(&root).unwrap_or_default();
        answer.at = crate::engine::cx::now();
        run.state.answer = Some(answer);
        if merge {
            run.state.settings.auto_merge = true;
            run.state.settings.no_merge = false;
        }
        let path = run.paths.state();
        write_json_atomic(&path, &run.state).map_err(|e| Error::io("cannot write", &path, e))?;
    }
    let outcome = crate::engine::run::resume(
        &run.root,
        task_id,
        terminal_io(Display::choose(json, quiet))?,
    )?;
    let code = outcome.exit_code_when_merge_asked(merge);
    super::notify::after_run(
        &run.root,
        task_id,
        code,
        outcome == crate::engine::Outcome::Cancelled,
    );
    Ok(code)
}
