//! The `worktree` step: the task branch `autobuild/<ID>` and its worktree under
//! `.autobuild/worktrees/<ID>`. Preflight already refused an existing branch unless the run
//! resumes, so here an existing branch always means "continue on it".
//!
//! Adding a worktree is journaled ([`Pending::Worktree`]) before it starts. When a resume finds
//! that entry, the previous attempt was killed part-way (perhaps in the middle of checking out
//! thousands of files): what it left is discarded and the worktree is added again, so no step
//! ever runs in — and no checkpoint ever commits — a half-checked-out tree.
//!
//! A worktree this step adds gets the `[worktree]` links and copies, and then the setup command
//! runs ([`super::worktree_setup`]).

use model::workflow::kinds::WorktreeOutputs;

use crate::engine::cx::RunCx;
use crate::engine::events::EventKind;
use crate::engine::exec::StepDone;
use crate::engine::state::Pending;
use base::error::Error;
use git::Repo;

pub fn execute(cx: &mut RunCx) -> Result<StepDone, Error> {
    let plan = cx.plan;
    let path = plan.worktree.clone();
    let branch = plan.branch.clone();
    let base = plan.base_branch.clone();
    plan.layout.ensure_gitignore()?;
    if let Some(Pending::Worktree {
        created_branch,
        base_commit,
    }) = cx.state.pending.clone()
    {
        let repo = match plan.task_repo() {
            Some(dir) => Repo::discover(&dir)?,
            None => Repo::discover(cx.repo.root())?,
        };
        repo.discard_partial_worktree(&path, &branch, created_branch, &base_commit)?;
        cx.emit(EventKind::Warning {
            message: format!(
                "the previous attempt to add the worktree {} was interrupted; removed what it left and adding it again",
                path.display()
            ),
        });
    }
    // With hidden paths, the task branch and worktree live in the task repository.
    let repo = match plan.task_repo() {
        Some(dir) => task_repository(cx, &dir)?,
        None => Repo::discover(cx.repo.root())?,
    };
    let resumed = repo.branch_exists(&branch);
    let head = if resumed && path.is_dir() {
        repo.open_worktree(&path, &branch)?.head
    } else {
        let created_branch = !resumed;
        let base_commit = if resumed {
            repo.resolve_branch(&branch)?
        } else {
            repo.resolve_base(&base)?
        };
        // The journal entry licenses deleting the directory on resume: never for one that
        // already holds something.
        if std::fs::read_dir(&path).is_ok_and(|mut entries| entries.next().is_some()) {
            return Err(git::GitError::WorktreePathExists { path }.into());
        }
        cx.state.pending = Some(Pending::Worktree {
            created_branch,
            base_commit,
        });
        cx.save_state()?;
        let added = if resumed {
            repo.attach_worktree(&branch, &path).map(|w| w.head)
        } else {
            repo.create_worktree(&branch, &base, &path)
                .map(|w| w.base_commit)
        };
        // A failure undid itself (creation is all-or-nothing); only a kill leaves the entry.
        cx.state.pending = None;
        cx.save_state()?;
        let head = added?;
        super::worktree_setup::populate(cx)?;
        head
    };
    if let Some(stop) = super::worktree_setup::run_setup(cx)? {
        return Ok(StepDone::halted(
            format!("the [worktree] setup command failed in {}", path.display()),
            stop,
        ));
    }
    if cx.plan.config.worktree.setup.is_some() && cx.state.provisioned.is_none() {
        // Before any agent ran here (or, for a run recorded before this was kept, now).
        cx.state.provisioned = Some(git::untracked_paths(&path)?);
    }
    cx.state.worktree = path.clone();
    cx.state.last_checkpoint = Some(head);
    if let Some(stop) = super::oracle::prepare(cx)? {
        return Ok(StepDone::halted(
            "the base's tests do not run, so the base oracle cannot judge".to_string(),
            stop,
        ));
    }
    let summary = if resumed {
        format!("continuing on {branch} in {}", path.display())
    } else {
        format!("{branch} from {base} in {}", path.display())
    };
    Ok(StepDone::ok(
        summary,
        WorktreeOutputs {
            path: path.display().to_string(),
            branch,
            base,
            resumed,
        },
    ))
}

/// The task repository at `dir`, created from the base tip without the hidden paths when it
/// does not exist yet (what an interrupted creation left is discarded first).
fn task_repository(cx: &mut RunCx, dir: &std::path::Path) -> Result<Repo, Error> {
    let plan = cx.plan;
    if !dir.join(".git").is_dir() || git::task_repo::task_base(dir).is_err() {
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(|e| Error::io("cannot remove", dir, e))?;
        }
        let hidden = plan.hidden_paths();
        let base_commit = cx.repo.resolve_base(&plan.base_branch)?;
        git::task_repo::create_task_repo(
            cx.repo.root(),
            dir,
            &base_commit,
            &plan.base_branch,
            &hidden,
        )?;
    }
    Ok(Repo::discover(dir)?)
}
