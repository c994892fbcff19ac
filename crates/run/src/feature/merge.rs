//! Landing work: an approved task onto the feature branch (one squashed commit per task, the
//! task's worktree and branch removed afterwards), and the finished feature branch onto the
//! base under the project's merge strategy. Neither branch is checked out anywhere, so only
//! refs move. A task whose merge conflicts keeps its branch and worktree for the user.

use std::collections::BTreeSet;
use std::path::Path;

use crate::engine::paths::RunPaths;
use crate::engine::ref_owners::feature_tips;
use crate::engine::state::{RunState, RunStatus};
use crate::feature::events::FeatureEventKind;
use crate::feature::state::{ConflictRecord, FeatureState, HistoryEntry, TaskStatus};
use base::error::Error;
use git::task_repo;
use git::{GitError, Prepared, Repo, Trash};
use model::workflow::model::MergeStrategy;

mod hidden;

/// What merging one task into the feature branch did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskMerge {
    Merged {
        /// The feature branch's new tip.
        commit: String,
        /// Files the task changed on the feature branch.
        paths: Vec<String>,
    },
    Conflict {
        paths: Vec<String>,
    },
}

/// The branch a task runs on.
pub fn task_branch(task_id: &str) -> String {
    format!("autobuild/{task_id}")
}

/// One approved task, as the runner recorded it, for [`merge_task`].
#[derive(Debug, Clone, Copy)]
pub struct ApprovedTask<'a> {
    pub id: &'a str,
    pub title: &'a str,
    /// Its worktree (removed once it landed).
    pub worktree: &'a Path,
    /// The commit its gates approved (its run record's last checkpoint): exactly this lands.
    pub approved: &'a str,
    /// Its task file, relative to the repository: a GuardKit one moves to `completed/` in the
    /// squashed commit, as a single task's landing moves it.
    pub task_file: Option<&'a Path>,
}

/// Squashes the approved commit of `task` onto the feature branch, then removes the task's
/// worktree and branch and marks its run merged. Merging a task whose work is already there
/// changes nothing.
///
/// Before anything moves, both branches are held at what the runner recorded
/// ([`Repo::hold_branch`]): the task branch at its approved commit, the feature branch at
/// `state.tip`. A branch moved by anyone else is put back (the moved version kept under a
/// backup ref) and the fact appended to `state.violations`. The feature branch's new tip is
/// recorded (`save`) before the branch moves, so the ref guards of other runs know the move
/// is a runner's.
pub fn merge_task(
    repo: &Repo,
    runs_dir: &Path,
    task: &ApprovedTask<'_>,
    state: &mut FeatureState,
    save: &mut dyn FnMut(&mut FeatureState) -> Result<(), Error>,
    trash: Option<&Trash>,
) -> Result<TaskMerge, Error> {
    let (task_id, worktree) = (task.id, task.worktree);
    // Which branch each task's worktree has checked out is asked three times below (the
    // feature branch's checkouts before and after it moves, the task branch's before it is
    // deleted); one reading of the records answers all three (and the rest of the wave's
    // landings, when the caller holds it for them: `Runner::merge_approved`).
    let _heads = repo.heads_read_once();
    // Found before the worktree goes: it is found beside it.
    let task_repo = task_repo::of_worktree(worktree);
    let feature_branch = state.branch.clone();
    let branch = task_branch(task_id);
    let message = format!(
        "{task_id}: {}\n\nApproved by autobuild on {branch}.\n",
        task.title
    );
    hold_feature_branch(repo, runs_dir, state)?;
    let before = repo.resolve_branch(&feature_branch)?;
    // A run killed while tidying up after the squash: the task's commit is the feature
    // branch's tip and its branch is gone. Finish the bookkeeping instead of failing forever.
    // (The squashed commit may carry the task file's move after the message: its mark line.)
    if !repo.branch_exists(&branch)
        && crate::feature::land::holds_task(&[repo.tip_message(&feature_branch)?], task_id)
    {
        remove_task_branch(repo, worktree, &branch, &feature_branch, trash)?;
        mark_run_merged(runs_dir, task_id)?;
        return Ok(TaskMerge::Merged {
            commit: before,
            paths: Vec::new(),
        });
    }
    // A task with hidden paths worked in a task repository of its own: what lands is its
    // approved change applied onto the commit it started from, hidden paths untouched
    // (`git::task_repo`), on the task branch of this repository.
    let hidden = match &task_repo {
        Some(dir) => Some(hidden::HiddenTask::open(
            repo,
            dir,
            worktree,
            task.approved,
            &branch,
        )?),
        None => None,
    };
    let approved = hidden
        .as_ref()
        .map_or(task.approved, |h| h.transplanted.as_str());
    let held = repo.hold_branch(
        &branch,
        approved,
        &format!("refs/autobuild/backup/{task_id}"),
    )?;
    if let Some(violation) = held.violation(&branch, approved) {
        tracing::warn!("{task_id}: {violation}");
        state.violations.push(violation);
    }
    let landing = match repo.prepare_landing_of(
        approved,
        &branch,
        &feature_branch,
        MergeStrategy::Squash,
        &message,
    ) {
        Ok(Prepared::Ready(landing)) => {
            let (mut notes, mut warnings) = (Vec::new(), Vec::new());
            let landing = crate::engine::exec::task_file_completed(
                repo,
                task_id,
                task.task_file,
                landing,
                &mut notes,
                &mut warnings,
            )?;
            for note in notes {
                tracing::info!("{task_id}: {note}");
            }
            for warning in warnings {
                tracing::warn!("{task_id}: {warning}");
            }
            Some(landing)
        }
        Ok(Prepared::UpToDate(_)) => None,
        Err(GitError::Conflict { paths, .. }) => return Ok(TaskMerge::Conflict { paths }),
        Err(e) => return Err(e.into()),
    };
    // The files the landing changed on the feature branch (both paths of a rename): what a
    // later conflict is attributed by.
    let (commit, paths) = match landing {
        Some(landing) => {
            state.tip = Some(landing.to.clone());
            save(state)?;
            repo.land_journaled(&landing)?;
            let paths = repo.touched_paths(&landing)?;
            (landing.to, paths)
        }
        None => (before.clone(), Vec::new()),
    };
    // Edits made in the task's worktree after its approval did not land; keep them before the
    // worktree goes.
    if worktree.is_dir() {
        let prefix = format!("refs/autobuild/backup/{task_id}");
        let note = format!("autobuild: unreviewed changes in {task_id}'s worktree, kept");
        let kept = match &hidden {
            Some(h) => task_repo::keep_unreviewed(
                repo.root(),
                worktree,
                &h.base,
                task.approved,
                &prefix,
                &note,
                &h.globs,
            )?,
            None => git::backup(worktree, task.approved, &prefix, &note)?,
        };
        if let Some(refname) = kept {
            tracing::warn!("{task_id}: changes made after approval were kept as {refname}");
        }
    }
    remove_task_branch(repo, worktree, &branch, &feature_branch, trash)?;
    mark_run_merged(runs_dir, task_id)?;
    Ok(TaskMerge::Merged { commit, paths })
}

/// Holds the feature branch at the tip the runner recorded (`state.tip`), when it recorded
/// one: a branch that recorded landings of its tasks took on from there is the runner's and
/// becomes the recorded tip; one moved by anyone else is put back and the fact appended to
/// `state.violations`.
pub fn hold_feature_branch(
    repo: &Repo,
    runs_dir: &Path,
    state: &mut FeatureState,
) -> Result<(), Error> {
    let Some(tip) = state.tip.clone() else {
        return Ok(());
    };
    let current = repo.resolve_branch(&state.branch)?;
    // At its recorded tip (every landing of the feature runner leaves it there): nothing to
    // look up. Only a branch that moved reads the tasks' run records, one per task.
    if current == tip || feature_tips(runs_dir, state).contains(&current) {
        state.tip = Some(current);
        return Ok(());
    }
    let prefix = format!("refs/autobuild/backup/{}", state.feature_id);
    let held = repo.hold_branch(&state.branch, &tip, &prefix)?;
    if let Some(violation) = held.violation(&state.branch, &tip) {
        tracing::warn!("{}: {violation}", state.feature_id);
        state.violations.push(violation);
    }
    Ok(())
}

/// The commit the gates of `task_id` approved, from its run record under `runs_dir`.
pub fn approved_commit(runs_dir: &Path, task_id: &str) -> Result<String, Error> {
    let path = RunPaths::new(runs_dir, task_id).state();
    let state = RunState::load(&path).map_err(|e| Error::io("cannot read", &path, e))?;
    state.last_checkpoint.ok_or_else(|| {
        Error::runtime(format!(
            "{} records no approved commit for {task_id}",
            path.display()
        ))
    })
}

/// Removes a landed task's worktree and branch, whichever still exist, and its task
/// repository when it had one (hidden paths: the worktree belongs to it, not to `repo`). With a
/// `trash`, the worktree's directory is deleted there, beside the next landing. A record whose
/// directory is already gone (a kill after the directory went to the trash) is pruned.
pub fn remove_task_branch(
    repo: &Repo,
    worktree: &Path,
    branch: &str,
    feature_branch: &str,
    trash: Option<&Trash>,
) -> Result<(), Error> {
    if let Some(dir) = task_repo::of_worktree(worktree) {
        hidden::remove_task_repo(worktree, &dir)?;
    } else if worktree.exists() {
        repo.remove_worktree_into(worktree, branch, trash)?;
    } else {
        repo.prune_missing_worktree(worktree)?;
    }
    if repo.branch_exists(branch) {
        // A squash leaves the branch unmerged by ancestry although its content landed.
        repo.delete_branch(branch, feature_branch, true)?;
    }
    Ok(())
}

/// The task's own run record says where its work went, so `autobuild status` and
/// `autobuild complete` agree with the feature.
fn mark_run_merged(runs_dir: &Path, task_id: &str) -> Result<(), Error> {
    let paths = RunPaths::new(runs_dir, task_id);
    let Ok(mut state) = RunState::load(&paths.state()) else {
        return Ok(());
    };
    state.status = RunStatus::Merged;
    state
        .save(&paths.state())
        .map_err(|e| Error::io("cannot write", paths.state(), e))
}

/// Records how merging `task` went in the feature's state; returns the event that says so. A
/// conflict names the tasks already on the feature branch that changed the same files.
pub fn record_merge(state: &mut FeatureState, task: &str, merged: TaskMerge) -> FeatureEventKind {
    match merged {
        TaskMerge::Merged { commit, paths } => {
            if let Some(record) = state.tasks.get_mut(task) {
                record.status = TaskStatus::Merged;
                record.message = None;
                record.merged_commit = Some(commit.clone());
                record.changed_paths = paths.clone();
            }
            FeatureEventKind::TaskMerged {
                task: task.to_string(),
                commit,
                files: paths.len(),
            }
        }
        TaskMerge::Conflict { paths } => {
            let merged_before = state.waves.iter().flatten().filter_map(|t| {
                let record = state.tasks.get(t)?;
                (record.status == TaskStatus::Merged)
                    .then_some((t.as_str(), record.changed_paths.as_slice()))
            });
            let with_tasks = conflicting_tasks(merged_before, &paths);
            let message = format!(
                "approved, but merging it into {} conflicts in {}",
                state.branch,
                paths.join(", ")
            );
            if let Some(record) = state.tasks.get_mut(task) {
                record.status = TaskStatus::Conflict;
                record.message = Some(message);
            }
            let conflict = ConflictRecord {
                task: task.to_string(),
                paths: paths.clone(),
                with_tasks: with_tasks.clone(),
            };
            state.history.push(HistoryEntry::Conflict {
                at: crate::engine::cx::now(),
                conflict: conflict.clone(),
            });
            state.conflict = Some(conflict);
            FeatureEventKind::Conflict {
                task: task.to_string(),
                with_tasks,
                paths,
            }
        }
    }
}

/// The tasks already on the feature branch whose changes touch `paths`, in the order given.
pub fn conflicting_tasks<'a>(
    merged: impl IntoIterator<Item = (&'a str, &'a [String])>,
    paths: &[String],
) -> Vec<String> {
    let wanted: BTreeSet<&str> = paths.iter().map(String::as_str).collect();
    merged
        .into_iter()
        .filter(|(_, changed)| changed.iter().any(|p| wanted.contains(p.as_str())))
        .map(|(task, _)| task.to_string())
        .collect()
}

/// What the finished feature is, for its merge commit message.
pub struct FeatureLanding<'a> {
    pub feature_id: &'a str,
    pub name: &'a str,
    pub branch: &'a str,
    pub base: &'a str,
    pub strategy: MergeStrategy,
    /// `(task id, title)` in merge order.
    pub tasks: Vec<(&'a str, &'a str)>,
}

/// Merges the feature branch into the base, then deletes the feature branch. Returns the
/// base's new tip.
pub fn land_feature(repo: &Repo, landing: &FeatureLanding<'_>) -> Result<String, Error> {
    let mut message = format!(
        "{}: {}\n\nApproved by autobuild, task by task, on {}:\n",
        landing.feature_id, landing.name, landing.branch
    );
    for (id, title) in &landing.tasks {
        message.push_str(&format!("- {id}: {title}\n"));
    }
    let outcome = repo
        .merge_into_base(landing.branch, landing.base, landing.strategy, &message)
        .map_err(|e| {
            Error::runtime(format!(
                "cannot merge {} into {}: {e}",
                landing.branch, landing.base
            ))
            .with_help(format!(
                "resolve the problem, then run `autobuild complete {}`",
                landing.feature_id
            ))
        })?;
    repo.delete_branch(landing.branch, landing.base, true)?;
    Ok(outcome.commit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conflicting_tasks_are_those_that_changed_a_conflicting_file() {
        let a = vec!["lib/greet.sh".to_string(), "README.md".to_string()];
        let b = vec!["tests/test_b.sh".to_string()];
        let c = vec!["lib/greet.sh".to_string()];
        let merged = [
            ("A", a.as_slice()),
            ("B", b.as_slice()),
            ("C", c.as_slice()),
        ];
        assert_eq!(
            conflicting_tasks(merged, &["lib/greet.sh".to_string()]),
            vec!["A", "C"]
        );
        assert!(conflicting_tasks(merged, &["other".to_string()]).is_empty());
    }

    #[test]
    fn a_conflict_is_recorded_with_the_tasks_that_changed_the_files() {
        use crate::feature::state::sample_state;
        let mut state = sample_state(&[TaskStatus::Approved, TaskStatus::Approved]);
        let merged = TaskMerge::Merged {
            commit: "abc".into(),
            paths: vec!["lib/greet.sh".into()],
        };
        record_merge(&mut state, "T0", merged);
        let conflict = TaskMerge::Conflict {
            paths: vec!["lib/greet.sh".into()],
        };

        let event = record_merge(&mut state, "T1", conflict);

        assert_eq!(state.status_of("T0"), TaskStatus::Merged);
        assert_eq!(state.status_of("T1"), TaskStatus::Conflict);
        let expected = ConflictRecord {
            task: "T1".into(),
            paths: vec!["lib/greet.sh".into()],
            with_tasks: vec!["T0".into()],
        };
        assert_eq!(state.conflict.as_ref(), Some(&expected));
        assert!(matches!(event, FeatureEventKind::Conflict { .. }));
        // The history keeps it after the conflict is resolved.
        assert!(matches!(
            state.history.as_slice(),
            [HistoryEntry::Conflict { conflict, .. }] if *conflict == expected
        ));
    }

    /// A repository whose `autobuild/F` is at `main`, and a commit beside it (hex) holding
    /// `b.txt`.
    fn feature_repo() -> (tempfile::TempDir, Repo, String) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        git::init_with_commit(dir.path(), "main", "first").unwrap();
        let repo = Repo::discover(dir.path()).unwrap();
        repo.create_branch("autobuild/F", "main").unwrap();
        repo.create_branch("other", "main").unwrap();
        let wt = dir.path().join(".autobuild/worktrees/other");
        repo.attach_worktree("other", &wt).unwrap();
        std::fs::write(wt.join("b.txt"), "b\n").unwrap();
        let beside = git::checkpoint(&wt, "beside").unwrap().commit;
        (dir, repo, beside)
    }

    fn move_feature_branch(repo: &Repo, to: &str) {
        let git = git2::Repository::open(repo.root()).unwrap();
        let to = git2::Oid::from_str(to).unwrap();
        git.reference("refs/heads/autobuild/F", to, true, "test")
            .unwrap();
    }

    /// `runs/T0/state.json`, saying the task landed on `autobuild/F` from `from` to `to`.
    fn record_landing(runs: &Path, from: &str, to: &str) {
        let paths = RunPaths::new(runs, "T0");
        std::fs::create_dir_all(&paths.dir).unwrap();
        let state: RunState = serde_json::from_value(serde_json::json!({
            "version": 1, "task_id": "T0", "task_path": "t.md", "title": "T0",
            "workflow": "w", "workflow_hash": "x", "status": "merged",
            "started_at": "", "updated_at": "", "base_branch": "autobuild/F",
            "branch": "autobuild/T0", "worktree": "/w", "settings": {
                "workflow_arg": null, "auto_merge": false, "no_merge": false,
                "overrides": [], "max_turns": null, "agent": null},
            "max_turns": 1, "completed": {}, "loops": {}, "last_checkpoint": null,
            "cost_usd": 0.0, "tokens_in": 0, "tokens_out": 0, "outcome": null,
            "landed": {"branch": "autobuild/F", "from": from, "to": to, "strategy": "squash"}
        }))
        .unwrap();
        state.save(&paths.state()).unwrap();
    }

    #[test]
    fn a_feature_branch_moved_by_no_recorded_landing_is_put_back_and_recorded() {
        use crate::feature::state::sample_state;
        let (dir, repo, beside) = feature_repo();
        let tip = repo.resolve_branch("autobuild/F").unwrap();
        let mut state = sample_state(&[TaskStatus::Approved]);
        state.tip = Some(tip.clone());
        move_feature_branch(&repo, &beside);

        hold_feature_branch(&repo, &dir.path().join("runs"), &mut state).unwrap();

        assert_eq!(repo.resolve_branch("autobuild/F").unwrap(), tip);
        assert_eq!(state.violations.len(), 1, "{:?}", state.violations);
        assert!(state.violations[0].contains("autobuild/F was moved"));
    }

    #[test]
    fn a_feature_branch_a_tasks_recorded_landing_moved_is_the_runners() {
        use crate::feature::state::sample_state;
        let (dir, repo, beside) = feature_repo();
        let tip = repo.resolve_branch("autobuild/F").unwrap();
        let runs = dir.path().join("runs");
        record_landing(&runs, &tip, &beside);
        let mut state = sample_state(&[TaskStatus::Merged]);
        state.tip = Some(tip);
        move_feature_branch(&repo, &beside);

        hold_feature_branch(&repo, &runs, &mut state).unwrap();

        assert_eq!(repo.resolve_branch("autobuild/F").unwrap(), beside);
        assert_eq!(state.tip.as_deref(), Some(beside.as_str()));
        assert!(state.violations.is_empty(), "{:?}", state.violations);
    }
}
