//! The `merge` step and `autobuild complete`: an approved branch lands on the base (squash by
//! default), automatically with `--auto-merge`, after a question on a terminal, or later with
//! `autobuild complete`. The worktree is removed after a merge and preserved otherwise.

use std::path::PathBuf;

use serde_json::json;

use crate::engine::cx::RunCx;
use crate::engine::events::EventKind;
use crate::engine::exec::StepDone;
use crate::error::Error;
use crate::git::{self, Repo};
use crate::ui;
use crate::workflow::model::MergeStrategy;

/// Everything needed to land a branch, for the step and for `autobuild complete`.
pub struct MergeRequest {
    pub task_id: String,
    pub title: String,
    pub branch: String,
    pub base: String,
    pub worktree: PathBuf,
    pub strategy: MergeStrategy,
    pub turns: u32,
    /// The commit the gates approved: only exactly that lands.
    pub approved: String,
}

/// What landed, and what could not be cleaned up afterwards.
pub struct Landed {
    pub commit: String,
    pub warnings: Vec<String>,
}

/// Merges the approved commit, then removes the worktree and the branch. Refuses when the
/// branch or the worktree holds anything the gates did not see.
pub fn merge_run(repo: &Repo, request: &MergeRequest) -> Result<Landed, Error> {
    let unreviewed = |what: String| {
        Error::usage(format!(
            "{} holds work that was not reviewed: {what}",
            request.branch
        ))
        .with_help(format!(
            "have it reviewed with `autobuild task {} --resume`, or reset it to the approved commit {}",
            request.task_id,
            short(&request.approved)
        ))
    };
    if request.worktree.is_dir() {
        let changed = git::changed_files_since(&request.worktree, &request.approved)?;
        if !changed.is_empty() {
            return Err(unreviewed(format!(
                "changes in its worktree since approval ({})",
                changed.join(", ")
            )));
        }
    }
    let tip = git::branch_tip(repo.root(), &request.branch)?;
    if tip != request.approved {
        return Err(unreviewed(format!(
            "commit {} on top of the approved {}",
            short(&tip),
            short(&request.approved)
        )));
    }
    let message = format!(
        "{}: {}\n\nApproved by autobuild after {} turn(s) on {}.\n",
        request.task_id, request.title, request.turns, request.branch
    );
    let outcome = repo
        .merge_into_base(&request.branch, &request.base, request.strategy, &message)
        .map_err(|e| {
            Error::runtime(format!(
                "cannot merge {} into {}: {e}",
                request.branch, request.base
            ))
            .with_help(format!(
                "the worktree is kept at {}; resolve the problem, then run `autobuild complete {}`",
                request.worktree.display(),
                request.task_id
            ))
        })?;
    // The work has landed: failing to tidy up afterwards is worth a warning, not a failure.
    let mut warnings = Vec::new();
    if request.worktree.exists() {
        if let Err(e) = repo.remove_worktree(&request.worktree, &request.branch) {
            warnings.push(format!(
                "merged, but could not remove the worktree {}: {e}",
                request.worktree.display()
            ));
        }
    }
    // A squash leaves the branch unmerged by ancestry although its content landed.
    if let Err(e) = repo.delete_branch(&request.branch, &request.base, true) {
        warnings.push(format!(
            "merged, but could not delete branch {}: {e}",
            request.branch
        ));
    }
    Ok(Landed {
        commit: outcome.commit,
        warnings,
    })
}

pub fn execute(cx: &mut RunCx, strategy: Option<MergeStrategy>) -> Result<StepDone, Error> {
    let plan = cx.plan;
    let strategy = strategy
        .or(plan.config.project.merge_strategy)
        .unwrap_or_default();
    cx.state.merge_strategy = Some(strategy);
    let settings = &cx.state.settings;
    let merge_now = if settings.no_merge {
        false
    } else if settings.auto_merge {
        true
    } else if ui::is_interactive() {
        let question = format!(
            "Merge {} into {} ({})?",
            cx.state.branch,
            cx.state.base_branch,
            strategy.as_str()
        );
        cx.emit(EventKind::AwaitingAnswer {
            question: question.clone(),
        });
        match ui::confirm_or_cancel(&question, &cx.cancel) {
            Some(answer) => answer,
            None => return Ok(StepDone::cancelled()),
        }
    } else {
        false
    };
    if !merge_now {
        return Ok(StepDone::ok(
            format!(
                "approved; merge later with `autobuild complete {}`",
                cx.state.task_id
            ),
            json!({"merged": false, "pending": true, "commit": ""}),
        ));
    }
    let turns = cx
        .state
        .loops
        .values()
        .map(|l| l.iteration)
        .max()
        .unwrap_or(0);
    let request = MergeRequest {
        task_id: cx.state.task_id.clone(),
        title: cx.state.title.clone(),
        branch: cx.state.branch.clone(),
        base: cx.state.base_branch.clone(),
        worktree: cx.state.worktree.clone(),
        strategy,
        turns,
        approved: cx.state.last_checkpoint.clone().unwrap_or_default(),
    };
    let commit = match merge_run(&cx.repo, &request) {
        Ok(landed) => {
            for message in landed.warnings {
                cx.emit(EventKind::Warning { message });
            }
            landed.commit
        }
        Err(error) => {
            // The work is approved and kept on its branch; only the landing failed.
            let mut message = format!("approved, but the merge failed: {error}");
            if let Some(help) = error.help() {
                message.push_str(&format!(" ({help})"));
            }
            cx.emit(EventKind::Warning {
                message: message.clone(),
            });
            return Ok(StepDone::ok(
                message,
                json!({"merged": false, "pending": true, "commit": ""}),
            ));
        }
    };
    Ok(StepDone::ok(
        format!(
            "{} into {} ({})",
            strategy.as_str(),
            request.base,
            short(&commit)
        ),
        json!({"merged": true, "pending": false, "commit": commit}),
    ))
}

fn short(commit: &str) -> &str {
    commit.get(..10).unwrap_or(commit)
}
