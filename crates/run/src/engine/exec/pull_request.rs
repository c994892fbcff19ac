//! `--pr`: an approved run lands as a pull request instead of a local merge — from the workflow's
//! `merge` step (`autobuild task … --pr`) or from `autobuild complete <ID> --pr`. The forge
//! work is [`crate::forge`]'s; this is the glue: which commit (the approved one, or its
//! transplant into this repository when the run hid paths), the text (the run's report), and
//! the record (`state.json`'s `pr`).

use std::path::Path;

use crate::engine::cx::RunCx;
use crate::engine::events::EventKind;
use crate::engine::exec::StepDone;
use crate::engine::outcome::Outcome;
use crate::engine::paths::RunPaths;
use crate::engine::records::load_turns;
use crate::engine::state::RunState;
use crate::forge::{self, PrRequest, PullRequest};
use base::error::Error;
use git::Repo;
use model::project::Config;
use model::workflow::kinds::MergeOutputs;

/// Pushes the run's approved commit and opens (or updates) its pull request; records it in
/// `state` (the caller saves it).
pub fn land_as_pr(
    repo: &Repo,
    runs_dir: &Path,
    paths: &RunPaths,
    state: &mut RunState,
    config: &Config,
) -> Result<PullRequest, Error> {
    let commit = state
        .transplanted
        .clone()
        .or_else(|| state.last_checkpoint.clone())
        .ok_or_else(|| Error::runtime("the run records no approved commit to push"))?;
    let body = pr_body(paths, state)?;
    let title = format!("{}: {}", state.task_id, state.title);
    let mut pushed_before = forge::pushed_before(runs_dir, &state.task_id);
    pushed_before.extend(state.pr.as_ref().map(|pr| pr.head.clone()));
    let pr = forge::open_or_update(&PrRequest {
        repo,
        config,
        branch: &state.branch,
        base: &state.base_branch,
        commit: &commit,
        title: &title,
        body: &body,
        pushed_before: &pushed_before,
    })?;
    state.pr = Some(pr.clone());
    Ok(pr)
}

/// The `merge` step of a `--pr` run: the approved commit is pushed and its pull request opened
/// instead of a merge. A failure leaves the run approved, with a warning (and `complete <ID>
/// --pr` to try again).
pub(super) fn step(cx: &mut RunCx) -> Result<StepDone, Error> {
    let repo = Repo::discover(cx.repo.root())?;
    let runs = cx.plan.layout.runs();
    let summary = match land_as_pr(&repo, &runs, &cx.paths, &mut cx.state, &cx.plan.config) {
        Ok(pr) => describe(&pr),
        Err(error) => {
            let message = format!(
                "approved, but no pull request was opened: {}",
                error.one_line()
            );
            cx.emit(EventKind::Warning {
                message: message.clone(),
            });
            message
        }
    };
    Ok(StepDone::ok(
        summary,
        MergeOutputs {
            pending: true,
            ..MergeOutputs::default()
        },
    ))
}

/// The run's report as the pull request's text: what was approved, turn by turn, with the
/// reviewers' notes — without what only makes sense on this machine (the worktree's path, the
/// local next step).
fn pr_body(paths: &RunPaths, state: &RunState) -> Result<String, Error> {
    let turns = load_turns(paths, state);
    let report = super::report::render(state, &Outcome::Approved { merged: false }, turns, false)?;
    Ok(process::Redactor::new(&[]).apply(report.trim_end()))
}

/// One sentence for the step's summary and `complete`'s line.
pub fn describe(pr: &PullRequest) -> String {
    let what = pr.forge.request_name();
    let done = if pr.opened { "opened" } else { "updated" };
    format!("{what} #{} {done}: {}", pr.number, pr.url)
}
