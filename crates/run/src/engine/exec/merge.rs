//! The `merge` step and `autobuild complete`: an approved branch lands on the base (squash by
//! default), automatically with `--auto-merge`, after a question on a terminal, or later with
//! `autobuild complete`. The worktree is removed after a merge and preserved otherwise.

use std::path::{Path, PathBuf};

use crate::engine::cx::RunCx;
use crate::engine::events::EventKind;
use crate::engine::exec::StepDone;
use crate::engine::state::{MergePhase, Pending, RunState};
use base::error::Error;
use base::Keyword;
use git::short_id as short;
use git::{self, Landing, Prepared, Repo};
use model::workflow::kinds::MergeOutputs;
use model::workflow::model::MergeStrategy;

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
    /// Values of secret-named variables the landing must not bring into any file (empty when
    /// the user passed `--allow-secret-in-diff`).
    pub secrets: Vec<String>,
    /// The task's file, relative to the repository root: one in a GuardKit state folder moves
    /// to GuardKit's `completed/` folder in the commit that lands (`task::completed`).
    pub task_file: Option<PathBuf>,
}

impl MergeRequest {
    /// The landing of the approved commit of `state` (run `run_id`, of the repository at
    /// `root`) with `strategy`, refusing `secrets`.
    pub fn of_run(
        run_id: &str,
        root: &Path,
        state: &RunState,
        strategy: MergeStrategy,
        secrets: Vec<String>,
    ) -> MergeRequest {
        MergeRequest {
            task_id: run_id.to_string(),
            title: state.title.clone(),
            branch: state.branch.clone(),
            base: state.base_branch.clone(),
            worktree: state.worktree.clone(),
            strategy,
            turns: state.loops.values().map(|l| l.iteration).max().unwrap_or(0),
            approved: state.last_checkpoint.clone().unwrap_or_default(),
            secrets,
            task_file: Self::task_file_of(root, &state.task_path),
        }
    }

    /// The task file of a run, relative to the repository at `root` (`None` outside it).
    pub fn task_file_of(root: &Path, task_path: &Path) -> Option<PathBuf> {
        match task_path.is_absolute() {
            true => task_path.strip_prefix(root).ok().map(PathBuf::from),
            false => Some(task_path.to_path_buf()),
        }
    }
}

/// What landed, and what could not be cleaned up afterwards.
pub struct Landed {
    pub commit: String,
    pub warnings: Vec<String>,
    /// The bookkeeping the landing carried (a GuardKit task file moved to `completed/`).
    pub notes: Vec<String>,
}

/// Where a landing's progress is saved: the run's `state.json` (through the step's context or
/// `autobuild complete`'s loaded state). Every save must be durable before the next phase.
pub trait Journal {
    fn pending(&self) -> Option<Pending>;
    fn record(&mut self, pending: Option<Pending>) -> Result<(), Error>;
}

/// Lands the approved commit on the base, then removes the worktree and the branch: phase by
/// phase, journaled, so that a kill anywhere is finished by running this again (resume and
/// `complete` do). A fresh landing refuses when the branch or the worktree holds anything the
/// gates did not see.
///
/// | killed during | the journal says | running this again |
/// |---|---|---|
/// | the checks below, writing the commit object | nothing | starts over |
/// | moving the base ref | `prepared` | removes the landing's stale ref lock; moves the ref unless it already moved |
/// | updating the main checkout | `moved` | removes the landing's stale `index.lock`; rewrites files still at the old version, then the index |
/// | removing the worktree or the branch | `landed` | removes whatever is left |
pub fn merge_run(
    root: &Path,
    request: &MergeRequest,
    journal: &mut dyn Journal,
) -> Result<Landed, Error> {
    let mut warnings = Vec::new();
    let mut notes = Vec::new();
    let failed = |error: git::GitError| merge_error(request, error.into());
    let (landing, phase, since_ms) = {
        let repo = Repo::discover(root)?;
        let (landing, phase, since_ms) = match journal.pending() {
            Some(Pending::Merge {
                landing,
                phase,
                since_ms,
            }) => (landing, phase, since_ms),
            _ => match start_landing(&repo, request, journal, &mut notes, &mut warnings)? {
                Some(started) => started,
                None => {
                    clean_up(&repo, request, &mut warnings);
                    let commit = repo.resolve_branch(&request.base).unwrap_or_default();
                    return Ok(Landed {
                        commit,
                        warnings,
                        notes,
                    });
                }
            },
        };
        if phase == MergePhase::Prepared {
            if let Err(error) = repo.move_base(&landing) {
                // Nothing landed: the next attempt starts from the beginning.
                journal.record(None)?;
                return Err(failed(error));
            }
            journal.record(Some(Pending::Merge {
                landing: landing.clone(),
                phase: MergePhase::Moved,
                since_ms,
            }))?;
        }
        (landing, phase, since_ms)
    };
    // The checkouts are updated from a fresh handle, with what the phases before held (the
    // trees they merged and diffed) given back: the landing peaks at one phase's memory, not
    // at the sum of both.
    base::memory::release_freed();
    let repo = Repo::discover(root)?;
    if phase <= MergePhase::Moved {
        let kept = repo.update_checkouts(&landing, since_ms).map_err(failed)?;
        if !kept.is_empty() {
            warnings.push(format!(
                "merged, but left {} as they are: they were changed after the merge began (the merged versions are in commit {})",
                kept.join(", "),
                short(&landing.to)
            ));
        }
        journal.record(Some(Pending::Merge {
            landing: landing.clone(),
            phase: MergePhase::Landed,
            since_ms,
        }))?;
        base::failpoint::hit("merge.landed");
    }
    clean_up(&repo, request, &mut warnings);
    Ok(Landed {
        commit: landing.to,
        warnings,
        notes,
    })
}

/// Checks that exactly the approved commit would land, writes the commit to land, and journals
/// it. `None` when the base already holds the work.
fn start_landing(
    repo: &Repo,
    request: &MergeRequest,
    journal: &mut dyn Journal,
    notes: &mut Vec<String>,
    warnings: &mut Vec<String>,
) -> Result<Option<(Landing, MergePhase, u64)>, Error> {
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
    let task_repo = git::task_repo::of_worktree(&request.worktree);
    if request.worktree.is_dir() {
        let changed = git::changed_files_since(&request.worktree, &request.approved)?;
        if !changed.is_empty() {
            return Err(unreviewed(format!(
                "changes in its worktree since approval ({})",
                changed.join(", ")
            )));
        }
        // That was the worktree's index's last use: what the turns held is given back before
        // the landing reads the trees it merges.
        base::memory::release_freed();
    }
    // The task branch of a run with hidden paths is in its task repository: what lands is
    // the approved change applied onto the real base (module `git::task_repo`).
    let tip_in = task_repo
        .as_ref()
        .map_or(repo.root(), |_| request.worktree.as_path());
    let tip = git::branch_tip(tip_in, &request.branch)?;
    if tip != request.approved {
        return Err(unreviewed(format!(
            "commit {} on top of the approved {}",
            short(&tip),
            short(&request.approved)
        )));
    }
    let approved = match &task_repo {
        Some(dir) => {
            let base = git::task_repo::task_base(dir)?;
            let hidden = git::task_repo::hidden_globs(dir)?;
            git::task_repo::transplant(
                repo.root(),
                &request.worktree,
                &base,
                &request.approved,
                &request.branch,
                &hidden,
            )?
        }
        None => request.approved.clone(),
    };
    let message = format!(
        "{}: {}\n\nApproved by autobuild after {} turn(s) on {}.\n",
        request.task_id, request.title, request.turns, request.branch
    );
    let prepared = repo
        .prepare_landing_of(
            &approved,
            &request.branch,
            &request.base,
            request.strategy,
            &message,
        )
        .map_err(|e| merge_error(request, e.into()))?;
    let landing = match prepared {
        Prepared::UpToDate(_) => return Ok(None),
        Prepared::Ready(landing) => landing,
    };
    let landing = with_task_completed(repo, request, landing, notes, warnings)?;
    let leaking = repo
        .paths_gaining(&landing, &request.secrets)
        .map_err(|e| merge_error(request, e.into()))?;
    if !leaking.is_empty() {
        return Err(Error::usage(format!(
            "cannot merge {} into {}: the value of a secret-named variable would be merged in {}",
            request.branch,
            request.base,
            leaking.join(", ")
        ))
        .with_help(format!(
            "nothing was merged; remove the value from the branch, or merge it anyway with \
             `autobuild complete {} --allow-secret-in-diff`",
            request.task_id
        )));
    }
    let since_ms = git::now_ms();
    journal.record(Some(Pending::Merge {
        landing: landing.clone(),
        phase: MergePhase::Prepared,
        since_ms,
    }))?;
    base::failpoint::hit("merge.prepared");
    Ok(Some((landing, MergePhase::Prepared, since_ms)))
}

/// The landing with the task's GuardKit file moved to `completed/`, through
/// [`task_file_completed`]; a git failure is this run's merge error.
fn with_task_completed(
    repo: &Repo,
    request: &MergeRequest,
    landing: Landing,
    notes: &mut Vec<String>,
    warnings: &mut Vec<String>,
) -> Result<Landing, Error> {
    task_file_completed(
        repo,
        &request.task_id,
        request.task_file.as_deref(),
        landing,
        notes,
        warnings,
    )
    .map_err(|e| merge_error(request, e.into()))
}

/// The landing with task `task_id`'s GuardKit file (`from`, relative to the repository) moved
/// to `completed/` (and marked so) in the commit that lands, when the task has one; otherwise,
/// or when the move cannot be made without overwriting or following anything, the landing as
/// it was (with a warning saying why the file stayed). Every landing of a task — the merge
/// step, `complete`, and a feature's squash of the task onto its branch — goes through here.
pub fn task_file_completed(
    repo: &Repo,
    task_id: &str,
    from: Option<&std::path::Path>,
    landing: Landing,
    notes: &mut Vec<String>,
    warnings: &mut Vec<String>,
) -> Result<Landing, git::GitError> {
    let Some(from) = from else {
        return Ok(landing);
    };
    let Some(to) = model::task::completed::completed_path(from) else {
        return Ok(landing);
    };
    let rewrite = |bytes: &[u8]| match std::str::from_utf8(bytes) {
        Ok(text) => model::task::completed::marked_completed(text).into_bytes(),
        Err(_) => bytes.to_vec(),
    };
    let message = format!(
        "{task_id}: move its task file to {}\n\nThe task landed (autobuild).\n",
        to.display()
    );
    Ok(
        match repo.landing_with_move(&landing, from, &to, &rewrite, &message)? {
            Ok(moved) => {
                notes.push(format!(
                    "moved the task file {} to {} (status: completed), as GuardKit does with a finished task",
                    from.display(),
                    to.display()
                ));
                moved
            }
            Err(why) => {
                warnings.push(format!(
                    "the task file {} stays where it is, not moved to {}: {why}",
                    from.display(),
                    to.display()
                ));
                landing
            }
        },
    )
}

/// The secret values a landing refuses to merge: those of the secret-named variables in `env`
/// and autobuild's own environment, each also in its common encodings
/// ([`process::encoded_forms`]), none when the user allowed them.
pub fn refused_secrets(env: &[(String, String)], allowed: bool) -> Vec<String> {
    if allowed {
        return Vec::new();
    }
    let values = process::Redactor::new(env).secrets().to_vec();
    let encoded = values
        .iter()
        .flat_map(|value| process::encoded_forms(value));
    let mut needles: Vec<String> = values.iter().cloned().chain(encoded).collect();
    needles.sort();
    needles.dedup();
    needles
}

fn merge_error(request: &MergeRequest, error: Error) -> Error {
    Error::runtime(format!(
        "cannot merge {} into {}: {error}",
        request.branch, request.base
    ))
    .with_help(format!(
        "the worktree is kept at {}; resolve the problem, then run `autobuild complete {}`",
        request.worktree.display(),
        request.task_id
    ))
}

/// Removes the worktree and the branch once the work has landed. Both are idempotent, so an
/// interrupted clean-up is finished by the next attempt. Failing to tidy up is worth a
/// warning, not a failure: the work is in.
fn clean_up(repo: &Repo, request: &MergeRequest, warnings: &mut Vec<String>) {
    // Found before the worktree goes: it is found beside it.
    let task_repo = git::task_repo::of_worktree(&request.worktree);
    if let Err(e) = repo.remove_landed_worktree(&request.worktree, &request.branch) {
        warnings.push(format!(
            "merged, but could not remove the worktree {}: {e}",
            request.worktree.display()
        ));
    }
    if let Some(dir) = task_repo {
        if let Err(e) = std::fs::remove_dir_all(&dir) {
            warnings.push(format!(
                "merged, but could not remove the task repository {}: {e}",
                dir.display()
            ));
        }
    }
    base::failpoint::hit("cleanup.worktree");
    // A squash leaves the branch unmerged by ancestry although its content landed.
    if repo.branch_exists(&request.branch) {
        if let Err(e) = repo.delete_branch(&request.branch, &request.base, true) {
            warnings.push(format!(
                "merged, but could not delete branch {}: {e}",
                request.branch
            ));
        }
    }
    base::failpoint::hit("cleanup.branch");
}

pub fn execute(cx: &mut RunCx, strategy: Option<MergeStrategy>) -> Result<StepDone, Error> {
    let plan = cx.plan;
    let strategy = strategy
        .or(plan.config.project.merge_strategy)
        .unwrap_or_default();
    cx.state.merge_strategy = Some(strategy);
    let settings = &cx.state.settings;
    let interrupted = matches!(cx.state.pending, Some(Pending::Merge { .. }));
    if settings.pr && !interrupted {
        transplant_unmerged(cx)?;
        return super::pull_request::step(cx);
    }
    let merge_now = if interrupted {
        true
    } else if settings.no_merge {
        false
    } else if settings.auto_merge {
        true
    } else if cx.prompter.is_interactive() {
        let question = format!(
            "Merge {} into {} ({})?",
            cx.state.branch,
            cx.state.base_branch,
            strategy.as_str()
        );
        match cx.ask(&question) {
            Some(answer) => answer,
            None => return Ok(StepDone::cancelled()),
        }
    } else {
        false
    };
    if !merge_now {
        transplant_unmerged(cx)?;
        return Ok(StepDone::ok(
            format!(
                "approved; merge later with `autobuild complete {}`",
                cx.state.task_id
            ),
            MergeOutputs {
                pending: true,
                ..MergeOutputs::default()
            },
        ));
    }
    let secrets = refused_secrets(&cx.env_vars(), cx.state.settings.allow_secret_in_diff);
    let request = MergeRequest::of_run(
        &cx.state.task_id,
        &cx.plan.root,
        &cx.state,
        strategy,
        secrets,
    );
    // No agent step follows: what guarded the main checkout between them is released, so the
    // landing's memory does not add to it.
    cx.main_checkout = None;
    let root = cx.repo.root().to_path_buf();
    let notes: Vec<String>;
    let commit = match merge_run(&root, &request, &mut StepJournal { cx: &mut *cx }) {
        Ok(landed) => {
            // Saved with the step's completion: a kill before that redoes only the clean-up.
            cx.state.pending = None;
            for message in landed.warnings {
                cx.emit(EventKind::Warning { message });
            }
            notes = landed.notes;
            landed.commit
        }
        Err(error) => {
            // The work is approved and kept on its branch; only the landing failed.
            let message = format!("approved, but the merge failed: {}", error.one_line());
            cx.emit(EventKind::Warning {
                message: message.clone(),
            });
            return Ok(StepDone::ok(
                message,
                MergeOutputs {
                    pending: true,
                    ..MergeOutputs::default()
                },
            ));
        }
    };
    let mut summary = format!(
        "{} into {} ({})",
        strategy.as_str(),
        request.base,
        short(&commit)
    );
    for note in notes {
        summary.push_str(&format!("; {note}"));
    }
    Ok(StepDone::ok(
        summary,
        MergeOutputs {
            merged: true,
            commit,
            pending: false,
        },
    ))
}

/// `autobuild complete` journals into the run state it loaded.
pub struct StateJournal<'s> {
    pub state: &'s mut crate::engine::state::RunState,
    pub path: PathBuf,
}

impl Journal for StateJournal<'_> {
    fn pending(&self) -> Option<Pending> {
        self.state.pending.clone()
    }

    fn record(&mut self, pending: Option<Pending>) -> Result<(), Error> {
        self.state.journal(pending);
        self.state.updated_at = crate::engine::cx::now();
        self.state
            .save(&self.path)
            .map_err(|e| Error::io("cannot write", &self.path, e))
    }
}

/// The merge step journals into the live run state.
struct StepJournal<'c, 'p> {
    cx: &'c mut RunCx<'p>,
}

impl Journal for StepJournal<'_, '_> {
    fn pending(&self) -> Option<Pending> {
        self.cx.state.pending.clone()
    }

    fn record(&mut self, pending: Option<Pending>) -> Result<(), Error> {
        self.cx.state.journal(pending);
        self.cx.save_state()
    }
}

/// A run with hidden paths worked in a task repository of its own, so its approved commit is
/// not in the user's repository. Left unmerged, its approved change is applied onto the commit
/// it started from there (`git::task_repo::transplanted`, hidden paths untouched), recorded
/// ([`RunState::transplanted`](crate::engine::state::RunState)), and put on the task branch
/// of the user's repository unless that branch exists elsewhere (never moved: it may hold
/// someone's work), so that another checkout can land it (a CI landing job).
fn transplant_unmerged(cx: &mut RunCx) -> Result<(), Error> {
    let Some(dir) = git::task_repo::of_worktree(&cx.state.worktree) else {
        return Ok(());
    };
    let Some(approved) = cx.state.last_checkpoint.clone() else {
        return Ok(());
    };
    let base = git::task_repo::task_base(&dir)?;
    let hidden = git::task_repo::hidden_globs(&dir)?;
    let commit = git::task_repo::transplanted(
        cx.repo.root(),
        &cx.state.worktree,
        &base,
        &approved,
        &hidden,
    )?;
    let branch = cx.state.branch.clone();
    if !cx.repo.branch_exists(&branch) {
        cx.repo.create_branch_at(&branch, &commit)?;
    } else if cx.repo.resolve_branch(&branch)? != commit {
        cx.emit(EventKind::Warning {
            message: format!(
                "{branch} already exists in this repository and was left as it is; the approved \
                 change is commit {commit}, which a landing from another checkout will not find \
                 on it"
            ),
        });
    }
    cx.state.transplanted = Some(commit);
    Ok(())
}
