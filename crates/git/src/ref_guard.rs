//! Refs an agent moved: an agent with a shell can run `git update-ref refs/heads/main HEAD`,
//! check out `main` in its worktree and commit there, point the feature branch at a commit of
//! its own, create branches, or make `git replace` refs and notes that change what the user's
//! own `git show` prints. [`RefGuard`] snapshots every branch (`refs/heads/*`, the runners'
//! `refs/heads/autobuild/*` included), tag, replace ref and note ref before an agent step and
//! afterwards puts back every change the agent made, keeping what the agent pointed a ref at
//! under a new backup ref so nothing is lost. The step's own task branch is the one ref the
//! agent may move; the checkpoint and the read-only audit look after it.
//!
//! Not every ref that moved during a step moved because of the agent: the user may go on
//! working in the main checkout, and other runs (a feature's tasks run side by side) move their
//! own branches. Who moved a ref is decided from facts, never from timing ([`put_back_to`]):
//! - a user branch or tag is the agent's when the task worktree's HEAD was on it during the
//!   step (its per-worktree HEAD reflog, which only processes working in the task worktree
//!   write), or when it now holds commits of the task branch that it did not hold before (only
//!   the agent and the runner have those commits, and the runner never points other refs at
//!   them);
//! - a runner's branch (`refs/heads/autobuild/*`) may only be where its owner's record says
//!   ([`RefOwner`], from the run records): a task in progress vets its own branch (checkpoint,
//!   review, audit); a feature branch or a finished task's branch must be at its recorded tip;
//!   a branch no run owns was made by the agent and is removed;
//! - replace refs and notes are never the runner's: any change is put back.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use git2::{Oid, Repository};

use super::error::{Context, GitError};
use super::integrity::save_under_new_ref;
use super::repo::open_checkout;
use crate::short_id as short;

/// The guarded refs and the worktree HEAD's reflog before a step.
#[derive(Debug, Clone)]
pub struct RefGuard {
    refs: BTreeMap<String, Oid>,
    head_log_len: usize,
    /// The task branch's tip before the step.
    task_tip: Oid,
}

/// Who may move a runner's branch (`refs/heads/autobuild/<NAME>`), from the run records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefOwner {
    /// A task whose run is in progress: its own runner vets whatever is on its branch
    /// (checkpoint, review, read-only audit, and the landing's check of the approved commit).
    Vetted,
    /// The runner recorded where the branch may be (`tips`, the one last recorded first);
    /// `may_delete`: its owner is done with it (a landed task), so its deletion is no harm.
    Recorded { tips: Vec<Oid>, may_delete: bool },
    /// No run owns it.
    Unowned,
}

/// The namespaces the guard covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Namespace {
    /// `refs/heads/*` outside `autobuild/`, and `refs/tags/*`.
    User,
    /// `refs/heads/autobuild/*`.
    Runner,
    /// `refs/replace/*` and `refs/notes/*`: never written by the runner.
    Forgery,
}

impl Namespace {
    fn of(name: &str) -> Option<Namespace> {
        if name.starts_with("refs/heads/autobuild/") {
            Some(Namespace::Runner)
        } else if name.starts_with("refs/heads/") || name.starts_with("refs/tags/") {
            Some(Namespace::User)
        } else if name.starts_with("refs/replace/") || name.starts_with("refs/notes/") {
            Some(Namespace::Forgery)
        } else {
            None
        }
    }
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

/// Where a guarded ref that changed from `before` to `after` during a step must go back to
/// (`Some(None)`: deleted), or `None` when the change stands. `by_agent`: the facts of the task
/// worktree say the agent moved it (user refs only); `owner`: a runner's branch's record.
fn put_back_to(
    name: &str,
    before: Option<Oid>,
    after: Option<Oid>,
    by_agent: bool,
    owner: RefOwner,
) -> Option<Option<Oid>> {
    if before == after {
        return None;
    }
    match Namespace::of(name)? {
        Namespace::User => by_agent.then_some(before),
        Namespace::Forgery => Some(before),
        Namespace::Runner => match owner {
            RefOwner::Vetted => None,
            RefOwner::Recorded { tips, may_delete } => match after {
                Some(now) if tips.contains(&now) => None,
                None if may_delete => None,
                // Back to where it was when that was a recorded place, else the recorded tip.
                _ => Some(
                    before
                        .filter(|b| tips.contains(b))
                        .or(tips.first().copied()),
                ),
            },
            RefOwner::Unowned => Some(before),
        },
    }
}

impl RefGuard {
    /// Snapshots the guarded refs of the repository `worktree` belongs to: every one but the
    /// task branch itself.
    pub fn capture(worktree: &Path, task_branch: &str) -> Result<RefGuard, GitError> {
        let checkout = open_checkout(worktree)?;
        RefGuard::capture_in(&checkout, task_branch)
    }

    /// [`RefGuard::capture`] with the worktree's repository (`checkout`) already open. A
    /// worktree's handle reads and writes the branches and tags of the shared git directory
    /// (only HEAD and its reflog are the worktree's own).
    pub(crate) fn capture_in(
        checkout: &Repository,
        task_branch: &str,
    ) -> Result<RefGuard, GitError> {
        Ok(RefGuard {
            refs: guarded_refs(checkout, task_branch)?,
            head_log_len: head_log(checkout).len(),
            task_tip: tip(checkout, task_branch)?,
        })
    }

    /// Puts back every guarded ref the agent changed since [`RefGuard::capture`]. What the agent
    /// pointed a ref at is kept under `<backup_prefix>/<time>`. `owner` says who owns a runner
    /// branch (given its name without `refs/heads/`), read when a change is found so that it
    /// sees what other runners recorded during the step.
    pub fn restore(
        &self,
        worktree: &Path,
        task_branch: &str,
        backup_prefix: &str,
        owner: &dyn Fn(&str) -> RefOwner,
    ) -> Result<Vec<RefRestored>, GitError> {
        let checkout = open_checkout(worktree)?;
        self.restore_in(&checkout, worktree, task_branch, backup_prefix, owner)
    }

    /// [`RefGuard::restore`] with the repository already open as in [`RefGuard::capture_in`]
    /// (opened after the step, so it reads the refs as the step left them).
    pub(crate) fn restore_in(
        &self,
        checkout: &Repository,
        worktree: &Path,
        task_branch: &str,
        backup_prefix: &str,
        owner: &dyn Fn(&str) -> RefOwner,
    ) -> Result<Vec<RefRestored>, GitError> {
        let now = guarded_refs(checkout, task_branch)?;
        let visited = self.visited_by_head(checkout);
        let task_commits = [self.task_tip, tip(checkout, task_branch)?];
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
                        .any(|&task| newly_holds(checkout, new, before, task))
                });
            let owner = match name.strip_prefix("refs/heads/autobuild/") {
                Some(_) => owner(name.trim_start_matches("refs/heads/")),
                None => RefOwner::Unowned,
            };
            let Some(target) = put_back_to(name, before, after, by_agent, owner) else {
                continue;
            };
            let kept_as = match after {
                Some(new) => Some(save_under_new_ref(
                    checkout,
                    backup_prefix,
                    new,
                    &format!("autobuild: {name} as an agent left it"),
                    worktree,
                )?),
                None => None,
            };
            match target {
                Some(old) => checkout
                    .reference(
                        name,
                        old,
                        true,
                        "autobuild: put back after an agent moved it",
                    )
                    .map(drop),
                None => checkout.find_reference(name).and_then(|mut r| r.delete()),
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

/// Every ref of the guarded namespaces but the task branch, with its target (a tag or a note
/// ref may point at any object).
fn guarded_refs(repo: &Repository, task_branch: &str) -> Result<BTreeMap<String, Oid>, GitError> {
    let own = format!("refs/heads/{task_branch}");
    let references = repo.references().context("list the refs", repo.path())?;
    Ok(references
        .flatten()
        .filter_map(|reference| Some((reference.name().ok()?.to_string(), reference.target()?)))
        .filter(|(name, _)| *name != own && Namespace::of(name).is_some())
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

#[cfg(test)]
mod tests;
