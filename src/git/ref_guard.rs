//! Branches and tags an agent moved: an agent with a shell can run `git update-ref
//! refs/heads/main HEAD`, or check out `main` in its worktree and commit there, and put work no
//! gate saw onto the user's branches. [`RefGuard`] snapshots `refs/heads/*` and `refs/tags/*`
//! before an agent step and afterwards puts back every change the agent made, keeping what the
//! agent pointed the ref at under a new backup ref so nothing is lost.
//!
//! The user may go on working in the main checkout while a run is in progress, and other
//! autobuild runs land their work, so not every ref that moved during a step moved because of
//! the agent. A change is the agent's when either
//! - the task worktree's HEAD was on that ref during the step (its per-worktree HEAD reflog,
//!   which only processes working in the task worktree write), or
//! - the ref now holds commits of the task branch that it did not hold before (only the agent
//!   and the runner have those commits, and the runner never points other refs at them).
//!
//! `refs/heads/autobuild/*` belongs to the runners (task and feature branches move while a
//! feature's tasks run side by side) and is not guarded here; the task's own branch is checked
//! by the checkpoint and the read-only audit.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use git2::{Oid, Repository};

use super::error::{Context, GitError};
use super::integrity::save_under_new_ref;
use super::repo::open_checkout;

/// The guarded refs and the worktree HEAD's reflog before a step.
#[derive(Debug, Clone)]
pub struct RefGuard {
    refs: BTreeMap<String, Oid>,
    head_log_len: usize,
    /// The task branch's tip before the step.
    task_tip: Oid,
}

/// One ref put back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefRestored {
    pub name: String,
    /// Where the agent had pointed it (`None`: the agent deleted it).
    pub moved_to: Option<String>,
    /// The backup ref that keeps what the agent pointed it at.
    pub kept_as: Option<String>,
}

impl RefRestored {
    /// A line for scope violations and warnings.
    pub fn describe(&self) -> String {
        let what = match &self.moved_to {
            Some(to) => format!("{} was moved to {}", self.name, short(to)),
            None => format!("{} was deleted", self.name),
        };
        match &self.kept_as {
            Some(backup) => format!("({what}; put back, the agent's commit kept as {backup})"),
            None => format!("({what}; put back)"),
        }
    }
}

impl RefGuard {
    /// Snapshots the guarded refs of the repository `worktree` belongs to.
    pub fn capture(worktree: &Path, task_branch: &str) -> Result<RefGuard, GitError> {
        let checkout = open_checkout(worktree)?;
        let shared = shared_repo(&checkout)?;
        Ok(RefGuard {
            refs: guarded_refs(&shared)?,
            head_log_len: head_log(&checkout).len(),
            task_tip: tip(&shared, task_branch)?,
        })
    }

    /// Puts back every guarded ref the agent changed since [`RefGuard::capture`]. What the agent
    /// pointed a ref at is kept under `<backup_prefix>/<time>`.
    pub fn restore(
        &self,
        worktree: &Path,
        task_branch: &str,
        backup_prefix: &str,
    ) -> Result<Vec<RefRestored>, GitError> {
        let checkout = open_checkout(worktree)?;
        let shared = shared_repo(&checkout)?;
        let now = guarded_refs(&shared)?;
        let visited = self.visited_by_head(&checkout);
        let task_commits = [self.task_tip, tip(&shared, task_branch)?];
        let names: BTreeSet<&String> = self.refs.keys().chain(now.keys()).collect();
        let mut restored = Vec::new();
        for name in names {
            let (before, after) = (self.refs.get(name).copied(), now.get(name).copied());
            if before == after {
                continue;
            }
            let by_agent = visited.contains(name.as_str())
                || after.is_some_and(|new| {
                    task_commits
                        .iter()
                        .any(|&task| newly_holds(&shared, new, before, task))
                });
            if !by_agent {
                continue;
            }
            let kept_as = match after {
                Some(new) => Some(save_under_new_ref(
                    &shared,
                    backup_prefix,
                    new,
                    &format!("autobuild: {name} as an agent left it"),
                    worktree,
                )?),
                None => None,
            };
            match before {
                Some(old) => shared
                    .reference(
                        name,
                        old,
                        true,
                        "autobuild: put back after an agent moved it",
                    )
                    .map(drop),
                None => shared.find_reference(name).and_then(|mut r| r.delete()),
            }
            .context(format_args!("put back {name}"), worktree)?;
            tracing::debug!(reference = %name, "put back a ref an agent changed");
            restored.push(RefRestored {
                name: name.clone(),
                moved_to: after.map(|oid| oid.to_string()),
                kept_as,
            });
        }
        Ok(restored)
    }

    /// The refs the worktree's HEAD was on during the step, from the new entries of its
    /// reflog ("checkout: moving from A to B").
    fn visited_by_head(&self, checkout: &Repository) -> BTreeSet<String> {
        let log = head_log(checkout);
        let new_entries = log.len().saturating_sub(self.head_log_len);
        let mut visited: BTreeSet<String> = log
            .iter()
            .take(new_entries)
            .filter_map(|message| message.strip_prefix("checkout: moving from "))
            .filter_map(|rest| rest.rsplit_once(" to ").map(|(_, to)| to.to_string()))
            .map(|branch| format!("refs/heads/{branch}"))
            .collect();
        let head_target = checkout
            .find_reference("HEAD")
            .ok()
            .and_then(|head| head.symbolic_target().ok().flatten().map(str::to_string));
        visited.extend(head_target);
        visited
    }
}

/// The repository opened on its shared git directory, where branches and tags live.
fn shared_repo(checkout: &Repository) -> Result<Repository, GitError> {
    Repository::open(checkout.commondir()).context("open the repository", checkout.commondir())
}

fn guarded_refs(repo: &Repository) -> Result<BTreeMap<String, Oid>, GitError> {
    let references = repo
        .references()
        .context("list branches and tags", repo.path())?;
    Ok(references
        .flatten()
        .filter_map(|reference| Some((reference.name().ok()?.to_string(), reference.target()?)))
        .filter(|(name, _)| {
            (name.starts_with("refs/heads/") || name.starts_with("refs/tags/"))
                && !name.starts_with("refs/heads/autobuild/")
        })
        .collect())
}

/// Newest first: the messages of the worktree HEAD's reflog.
fn head_log(checkout: &Repository) -> Vec<String> {
    checkout
        .reflog("HEAD")
        .map(|log| {
            log.iter()
                .map(|entry| {
                    entry
                        .message()
                        .ok()
                        .flatten()
                        .unwrap_or_default()
                        .to_string()
                })
                .collect()
        })
        .unwrap_or_default()
}

fn tip(repo: &Repository, branch: &str) -> Result<Oid, GitError> {
    repo.find_reference(&format!("refs/heads/{branch}"))
        .and_then(|r| r.peel_to_commit())
        .map(|c| c.id())
        .map_err(|_| GitError::BranchNotFound {
            branch: branch.to_string(),
        })
}

/// Whether `new` holds `task` while `old` (if any) did not.
fn newly_holds(repo: &Repository, new: Oid, old: Option<Oid>, task: Oid) -> bool {
    let holds = |tip: Oid| tip == task || repo.graph_descendant_of(tip, task).unwrap_or(false);
    let Ok(new) = repo.find_object(new, None).and_then(|o| o.peel_to_commit()) else {
        return false;
    };
    holds(new.id()) && !old.is_some_and(holds)
}

fn short(hex: &str) -> &str {
    hex.get(..10).unwrap_or(hex)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::{checkpoint, init_with_commit, Repo};

    /// The repository and, in a directory of its own, the task worktree.
    fn task_worktree() -> (tempfile::TempDir, tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        init_with_commit(dir.path(), "main", "first").unwrap();
        let repo = Repo::discover(dir.path()).unwrap();
        let path = elsewhere.path().join("wt");
        repo.create_worktree("autobuild/T", "main", &path).unwrap();
        std::fs::write(path.join("b.txt"), "b\n").unwrap();
        checkpoint(&path, "turn 1").unwrap();
        (dir, elsewhere, path)
    }

    #[test]
    fn a_base_branch_pointed_at_task_commits_is_put_back_and_kept() {
        let (dir, _elsewhere, wt) = task_worktree();
        let main = git2::Repository::open(dir.path()).unwrap();
        let before = main.refname_to_id("refs/heads/main").unwrap();
        let guard = RefGuard::capture(&wt, "autobuild/T").unwrap();
        let task = main.refname_to_id("refs/heads/autobuild/T").unwrap();
        main.reference("refs/heads/main", task, true, "agent")
            .unwrap();
        main.reference("refs/tags/v9", task, false, "agent")
            .unwrap();

        let restored = guard
            .restore(&wt, "autobuild/T", "refs/autobuild/backup/T")
            .unwrap();

        assert_eq!(restored.len(), 2, "{restored:?}");
        assert_eq!(main.refname_to_id("refs/heads/main").unwrap(), before);
        assert!(main.find_reference("refs/tags/v9").is_err());
        let kept = restored[0].kept_as.clone().unwrap();
        assert_eq!(main.refname_to_id(&kept).unwrap(), task);
    }

    #[test]
    fn the_users_own_commits_on_main_are_left_alone() {
        let (dir, _elsewhere, wt) = task_worktree();
        let main = git2::Repository::open(dir.path()).unwrap();
        let guard = RefGuard::capture(&wt, "autobuild/T").unwrap();
        std::fs::write(dir.path().join("c.txt"), "c\n").unwrap();
        let mine = checkpoint(dir.path(), "my own work").unwrap();

        let restored = guard
            .restore(&wt, "autobuild/T", "refs/autobuild/backup/T")
            .unwrap();

        assert!(restored.is_empty());
        assert_eq!(
            main.refname_to_id("refs/heads/main").unwrap().to_string(),
            mine.commit
        );
    }
}
