//! What a resume does before it continues a run that was killed or interrupted, in this order:
//!
//! 1. Stop every process group the dead runner left running — an agent (`agent.pgid`) or a
//!    check or `run` command (`command.pgid`) — so nothing keeps writing into the worktree.
//! 2. Remove lock files that only autobuild writes and that no living process holds: the task
//!    branch's ref lock, the task worktree's `index.lock` and `HEAD.lock`
//!    ([`git::remove_task_locks`]). Otherwise every git operation on them fails forever.
//! 3. Remove the temporary files an interrupted atomic write left in the run directory, and
//!    import (verified) the objects a confined step wrote before the kill stopped the runner
//!    from importing them ([`git::import_objects`]): a commit the step made must be
//!    readable to be saved in step 4.
//! 4. Unless a merge was landing (its journal finishes it: [`crate::engine::exec::merge_run`]),
//!    put HEAD back on the task branch, save whatever the interrupted step left in the worktree
//!    — files and commits no step recorded, including a checkpoint commit made just before the
//!    kill — under a new `refs/autobuild/backup/<ID>/<time>` ref, and return the worktree and
//!    branch to the last checkpoint. The interrupted step then runs again from there.
//!
//! An interrupted worktree creation is handled by the `worktree` step itself when it runs
//! again (its journal entry says the tree is incomplete); see `exec/worktree.rs`.

use std::fs;

use crate::engine::paths::RunPaths;
use crate::engine::state::{Pending, RunState};
use base::error::Error;
use git::{self, Repo};

/// Brings the repository and the run directory back to a state the interpreter can continue
/// from; returns what it did, for the run's warnings.
pub fn recover(repo: &Repo, paths: &RunPaths, state: &RunState) -> Result<Vec<String>, Error> {
    // A run with hidden paths works in its task repository.
    let task_repo = git::task_repo::of_worktree(&state.worktree)
        .map(|dir| Repo::discover(&dir))
        .transpose()?;
    let repo = task_repo.as_ref().unwrap_or(repo);
    let mut notes = Vec::new();
    for (file, what) in [
        (agents::agent_group_file(&paths.dir), "agent"),
        (agents::command_group_file(&paths.dir), "command"),
    ] {
        if let Some(pgid) = process::stop_leftover_group(&file, &[&state.worktree, &paths.dir]) {
            notes.push(format!(
                "stopped {what} process group {pgid}, left running by the interrupted run"
            ));
        }
    }
    let admin = repo.worktree_admin(&state.worktree, &state.branch)?;
    for lock in git::remove_task_locks(repo.git_dir(), &state.branch, admin.as_deref())? {
        notes.push(format!(
            "removed {}, a lock file the interrupted run left",
            lock.display()
        ));
    }
    remove_temp_files(paths);
    let private = crate::engine::exec::objects_dir(&paths.dir);
    let imported = git::import_objects(repo.root(), &private)?;
    if !imported.forged.is_empty() {
        notes.push(format!(
            "{} object(s) the interrupted step wrote do not match their names and were not \
             imported",
            imported.forged.len()
        ));
    }
    let landing = matches!(state.pending, Some(Pending::Merge { .. }));
    let creating = matches!(state.pending, Some(Pending::Worktree { .. }));
    if !landing && !creating {
        notes.extend(revert_to_checkpoint(state)?);
    }
    Ok(notes)
}

/// Step 4: save, then revert, what no step recorded.
fn revert_to_checkpoint(state: &RunState) -> Result<Vec<String>, Error> {
    let mut notes = Vec::new();
    let Some(checkpoint) = state.last_checkpoint.as_deref() else {
        return Ok(notes);
    };
    if !state.worktree.is_dir() {
        return Ok(notes);
    }
    if let Some(elsewhere) = git::reattach(&state.worktree, &state.branch)? {
        notes.push(format!(
            "HEAD of the worktree was on {elsewhere}; put it back on {}",
            state.branch
        ));
    }
    let prefix = format!("refs/autobuild/backup/{}", state.task_id);
    let message = format!(
        "autobuild: work in {} that no step had checkpointed, saved on resume",
        state.worktree.display()
    );
    if let Some(refname) = git::backup(&state.worktree, checkpoint, &prefix, &message)? {
        notes.push(format!(
            "saved the worktree's unreviewed changes as {refname} before reverting them; get them back with `git checkout {refname} -- .` in the worktree"
        ));
    }
    let reverted = git::restore(&state.worktree, checkpoint)?;
    if !reverted.is_empty() {
        notes.push(format!(
            "reverted what the interrupted step left unfinished: {}",
            reverted.join(", ")
        ));
    }
    Ok(notes)
}

/// `state.json` and the turn records are replaced through a temporary sibling (`.tmpXXXX`); a
/// kill between writing and renaming leaves it behind.
fn remove_temp_files(paths: &RunPaths) {
    let Ok(entries) = fs::read_dir(&paths.dir) else {
        return;
    };
    for entry in entries.flatten() {
        let is_temp = entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.starts_with(".tmp"));
        if is_temp && entry.file_type().is_ok_and(|t| t.is_file()) {
            let _ = fs::remove_file(entry.path());
        }
    }
}
