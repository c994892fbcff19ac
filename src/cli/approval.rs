//! `autobuild approve <ID>` and `autobuild reject <ID> --reason …`: a person's answer to a run
//! waiting at an `approval` step (exit 6). The answer is saved in the run's state under its
//! lock, then the run continues as `autobuild resume` would: an approval lets it go on (to the
//! merge, usually); a rejection ends it blocked with the reason in its report. The answer
//! records who gave it (git `user.name`, else `$USER`) and when. `approve --merge` also merges
//! without asking, so the run lands in one step.

use crate::cli::run_dir::checked_run;
use crate::cli::terminal_io;
use crate::engine::state::Answer;
use crate::error::Error;
use crate::ui::progress::Display;

/// Records `answer` for the waiting run `task_id` and continues it (merging without asking when
/// `merge`); returns its exit code.
pub fn answer(
    task_id: &str,
    answer: Answer,
    merge: bool,
    json: bool,
    quiet: bool,
) -> Result<u8, Error> {
    let root = checked_run(task_id)?;
    let run = crate::engine::existing::record_answer(&root, task_id, answer, merge)?;
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
