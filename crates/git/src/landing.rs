//! Landing a commit on a branch in phases that a kill can stop between, each one safe to redo.
//!
//! 1. [`Repo::prepare_landing`] writes the commit to land (an object no ref points to yet),
//!    checks that every object it needs is in the repository and that it adds no submodule
//!    entry ([`super::complete_tree`]), and that no checkout of the base has local changes in
//!    the files it touches. Nothing a user sees has changed.
//! 2. [`Repo::move_base`] moves the base ref from its old tip to the new commit with a
//!    compare-and-swap. This single rename is the moment the work lands.
//! 3. [`Repo::update_checkouts`] brings every checkout of the base (usually the user's main
//!    checkout) up to the new commit, file by file and then the index: a file that holds the
//!    old or the new content is (re)written, anything else is the user's and is left alone.
//!
//! The caller journals the [`Landing`] before phase 2 and after each phase; after a kill, redoing
//! from the journaled phase ends in exactly one landed commit. A kill inside phase 3 can leave
//! the checkout's `index.lock`; a kill inside phase 2 its ref lock: both are recognized as
//! left by the landing ([`super::locks`]) and removed when it is redone.

use std::fs;
use std::path::Path;

use base::Keyword;
use git2::{Commit, ErrorCode, Oid, Tree};
use serde::{Deserialize, Serialize};

use super::checkout::BranchCheckout;
use super::complete_tree::unlandable;
use super::diff::changed_paths;
use super::error::{Context, GitError};
use super::files::{entry, on_disk, write_entry};
use super::links;
use super::locks;
use super::repo::{signature, Repo};
use super::strategy::MergeStrategy;
use super::tree_merge::{merge_tree, TreeMerge};
use base::failpoint;

/// One landing: `branch` moves from `from` to `to`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Landing {
    pub branch: String,
    /// The base tip (hex) the landing starts from.
    pub from: String,
    /// The commit (hex) the base will point to.
    pub to: String,
    pub strategy: MergeStrategy,
}

/// A landing journaled in the git directory.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct JournaledLanding {
    landing: Landing,
    since_ms: u64,
}

/// What preparing a landing found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prepared {
    /// The base already holds the work; its tip (hex).
    UpToDate(String),
    Ready(Landing),
}

/// Where the base stood when phase 2 ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BaseMove {
    /// This call moved it.
    Moved,
    /// It already pointed at the landed commit (an earlier attempt moved it).
    AlreadyThere,
    /// It has moved on past the landed commit since: the work is in, the checkouts are the
    /// user's business now.
    MovedOn,
}

impl Repo {
    /// Phase 1: the commit that lands `task_branch` on `base_branch` with `strategy`.
    pub fn prepare_landing(
        &self,
        task_branch: &str,
        base_branch: &str,
        strategy: MergeStrategy,
        message: &str,
    ) -> Result<Prepared, GitError> {
        let task = self.branch_tip(task_branch)?.id().to_string();
        self.prepare_landing_of(&task, task_branch, base_branch, strategy, message)
    }

    /// Phase 1 for exactly `commit` (hex; what the gates approved, whatever `task_branch`
    /// points at by now): the commit that lands it on `base_branch` with `strategy`.
    /// `task_branch` names it in errors.
    pub fn prepare_landing_of(
        &self,
        commit: &str,
        task_branch: &str,
        base_branch: &str,
        strategy: MergeStrategy,
        message: &str,
    ) -> Result<Prepared, GitError> {
        let base = self.base_tip(base_branch)?;
        let task = self.repo.find_commit(self.oid(commit)?).context(
            format_args!("read the approved commit {commit}"),
            self.root(),
        )?;
        // One walk of the histories answers whether the base holds the task already, whether
        // it can fast-forward, and what the merge is over.
        let fork = self.merge_base(base.id(), task.id())?;
        if fork == Some(task.id()) {
            return Ok(Prepared::UpToDate(base.id().to_string()));
        }
        // All or nothing: the base moves only to a commit whose every object is here, and
        // none of what the task changed is a submodule entry.
        let fork_tree = fork
            .and_then(|fork| self.repo.find_commit(fork).ok())
            .map(|fork| fork.tree_id());
        let problems = unlandable(&self.repo, fork_tree, task.tree_id(), self.root())?;
        if !problems.is_empty() {
            return Err(GitError::Unlandable {
                branch: task_branch.to_string(),
                base: base_branch.to_string(),
                problems: problems.iter().map(ToString::to_string).collect(),
            });
        }
        let to = match strategy {
            MergeStrategy::Ff => {
                if fork != Some(base.id()) {
                    return Err(GitError::NotFastForward {
                        branch: task_branch.to_string(),
                        base: base_branch.to_string(),
                    });
                }
                task.id()
            }
            MergeStrategy::Squash | MergeStrategy::Merge => {
                let tree = match merge_tree(&self.repo, fork, &base, &task, self.root())? {
                    TreeMerge::Clean(tree) => tree,
                    TreeMerge::Conflicts(paths) => {
                        return Err(GitError::Conflict {
                            branch: task_branch.to_string(),
                            base: base_branch.to_string(),
                            paths,
                        })
                    }
                };
                if strategy == MergeStrategy::Squash && tree == base.tree_id() {
                    return Ok(Prepared::UpToDate(base.id().to_string()));
                }
                let parents: Vec<&Commit<'_>> = match strategy {
                    MergeStrategy::Squash => vec![&base],
                    _ => vec![&base, &task],
                };
                self.write_commit(tree, &parents, message)?
            }
        };
        let landing = Landing {
            branch: base_branch.to_string(),
            from: base.id().to_string(),
            to: to.to_string(),
            strategy,
        };
        let touched = self.touched_paths(&landing)?;
        for checkout in self.checkouts_of(base_branch)? {
            checkout.ensure_clean(&touched)?;
        }
        Ok(Prepared::Ready(landing))
    }

    /// Phase 2: moves the base ref from `landing.from` to `landing.to`, unless an earlier
    /// attempt already did. A ref lock the landing itself left behind is removed first.
    pub fn move_base(&self, landing: &Landing) -> Result<BaseMove, GitError> {
        let refname = format!("refs/heads/{}", landing.branch);
        let (from, to) = (self.oid(&landing.from)?, self.oid(&landing.to)?);
        let current = self.base_tip(&landing.branch)?.id();
        if current == to {
            return Ok(BaseMove::AlreadyThere);
        }
        if current != from {
            let tip = self
                .repo
                .find_commit(current)
                .context("read the base", self.root())?;
            let landed = self
                .repo
                .find_commit(to)
                .context("read the landed commit", self.root())?;
            if self.contains(&tip, &landed)? {
                return Ok(BaseMove::MovedOn);
            }
            return Err(GitError::BaseMoved {
                branch: landing.branch.clone(),
                actual: current.to_string(),
            });
        }
        locks::remove_stale_ref_lock(self.git_dir(), &refname, &landing.to)?;
        let reflog = format!("autobuild: {} merge", landing.strategy.as_str());
        match self
            .repo
            .reference_matching(&refname, to, true, from, &reflog)
        {
            Ok(_) => {
                failpoint::hit("merge.ref");
                tracing::debug!(branch = %landing.branch, commit = %to, "moved the base");
                Ok(BaseMove::Moved)
            }
            Err(e) if e.code() == ErrorCode::Modified => Err(GitError::BaseMoved {
                branch: landing.branch.clone(),
                actual: self
                    .resolve_branch(&landing.branch)
                    .unwrap_or_else(|_| "an unknown commit".to_string()),
            }),
            Err(e) => Err(e).context(
                format_args!("update branch `{}`", landing.branch),
                self.root(),
            ),
        }
    }

    /// Phase 3: brings every checkout of the base from `landing.from` to `landing.to`. Returns
    /// the paths left alone because they hold neither version (someone edited them after a
    /// kill interrupted the landing). `since_ms` dates the landing: an `index.lock` written
    /// after it by no living process is the landing's own and is removed.
    pub fn update_checkouts(
        &self,
        landing: &Landing,
        since_ms: u64,
    ) -> Result<Vec<String>, GitError> {
        let touched = self.touched_paths(landing)?;
        let (from, to) = (self.tree_of(&landing.from)?, self.tree_of(&landing.to)?);
        let mut kept = Vec::new();
        for checkout in self.checkouts_of(&landing.branch)? {
            let index_lock = checkout.repo.path().join("index.lock");
            locks::remove_stale_lock(&index_lock, since_ms)?;
            kept.extend(bring_up_to_date(&checkout, &from, &to, &touched)?);
        }
        Ok(kept)
    }

    /// Phases 2 and 3 with the landing journaled in `.git/autobuild-landing-*.json` while they
    /// run, so that [`Repo::finish_interrupted_landings`] can finish them after a kill.
    pub fn land_journaled(&self, landing: &Landing) -> Result<(), GitError> {
        let journal = self.landing_journal(&landing.branch);
        let entry = JournaledLanding {
            landing: landing.clone(),
            since_ms: super::now_ms(),
        };
        base::atomic_file::write_json_atomic(&journal, &entry).context("write", &journal)?;
        if let Err(error) = self.move_base(landing) {
            let _ = fs::remove_file(&journal);
            return Err(error);
        }
        self.update_checkouts(landing, entry.since_ms)?;
        fs::remove_file(&journal).context("remove", &journal)
    }

    /// Finishes the journaled landings a kill interrupted: a base that already moved gets its
    /// checkouts brought up to date; a base that never moved is left for its caller to land
    /// again. Returns what was done, for the user.
    pub fn finish_interrupted_landings(&self) -> Result<Vec<String>, GitError> {
        let mut done = Vec::new();
        let Ok(entries) = fs::read_dir(self.git_dir()) else {
            return Ok(done);
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !(name.starts_with("autobuild-landing-") && name.ends_with(".json")) {
                continue;
            }
            let path = entry.path();
            let text = fs::read_to_string(&path).context("read", &path)?;
            let Ok(journaled) = serde_json::from_str::<JournaledLanding>(&text) else {
                tracing::warn!(journal = %path.display(), "ignoring an unreadable landing journal");
                continue;
            };
            let landing = &journaled.landing;
            let at = self.resolve_branch(&landing.branch).ok();
            if at.as_deref() == Some(landing.to.as_str()) {
                let kept = self.update_checkouts(landing, journaled.since_ms)?;
                done.push(format!(
                    "finished updating the checkout of {} after an interrupted merge{}",
                    landing.branch,
                    if kept.is_empty() {
                        String::new()
                    } else {
                        format!(" (left as they are: {})", kept.join(", "))
                    }
                ));
            }
            fs::remove_file(&path).context("remove", &path)?;
        }
        Ok(done)
    }

    fn landing_journal(&self, branch: &str) -> std::path::PathBuf {
        let safe: String = branch
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        self.git_dir()
            .join(format!("autobuild-landing-{safe}.json"))
    }

    /// The paths whose content differs between the landing's old and new base (both paths of
    /// a rename), sorted.
    pub fn touched_paths(&self, landing: &Landing) -> Result<Vec<String>, GitError> {
        let (from, to) = (self.tree_of(&landing.from)?, self.tree_of(&landing.to)?);
        if let Some((a, b, paths)) = &*self.touched.borrow() {
            if (*a, *b) == (from.id(), to.id()) {
                return Ok(paths.clone());
            }
        }
        let paths = changed_paths(&self.repo, from.id(), to.id(), self.root())?;
        *self.touched.borrow_mut() = Some((from.id(), to.id(), paths.clone()));
        Ok(paths)
    }

    fn oid(&self, hex: &str) -> Result<Oid, GitError> {
        Oid::from_str(hex).context(format_args!("read commit id {hex}"), self.root())
    }

    pub(crate) fn tree_of(&self, commit: &str) -> Result<Tree<'_>, GitError> {
        let oid = self.oid(commit)?;
        self.repo
            .find_commit(oid)
            .and_then(|commit| commit.tree())
            .context(format_args!("read the tree of {commit}"), self.root())
    }

    /// A commit object that no branch points to yet.
    fn write_commit(
        &self,
        tree: Oid,
        parents: &[&Commit<'_>],
        message: &str,
    ) -> Result<Oid, GitError> {
        let tree = self
            .repo
            .find_tree(tree)
            .context("read the merged tree", self.root())?;
        let author = signature(&self.repo, self.root())?;
        self.repo
            .commit(None, &author, &author, message, &tree, parents)
            .context("write the merge commit", self.root())
    }
}

/// Updates `touched` in one checkout from `from` to `to`: files first, then the index. Returns
/// the paths left alone.
fn bring_up_to_date(
    checkout: &BranchCheckout,
    from: &Tree<'_>,
    to: &Tree<'_>,
    touched: &[String],
) -> Result<Vec<String>, GitError> {
    let repo = &checkout.repo;
    let mut index = repo.index().context("open the index", &checkout.path)?;
    let mut kept = Vec::new();
    let mut updated = Vec::new();
    // Deletions first, so a file that becomes a directory (or back) has room.
    let mut ordered: Vec<&String> = touched.iter().collect();
    ordered.sort_by_key(|path| entry(to, path).is_some());
    for path in ordered {
        let (old, new) = (entry(from, path), entry(to, path));
        // A link on the way is the user's (or an agent's) and is not followed: the path is
        // left alone, as one holding neither version.
        if links::linked_component(&checkout.path, path).is_some() {
            kept.push(path.clone());
            continue;
        }
        let disk = on_disk(&checkout.path, path)?;
        let staged = index.get_path(Path::new(path), 0).map(|e| e.id);
        let known = |id: Option<Oid>| id == old.map(|e| e.0) || id == new.map(|e| e.0);
        if !known(disk) || !known(staged) {
            kept.push(path.clone());
            continue;
        }
        if disk != new.map(|e| e.0) {
            write_entry(repo, &checkout.path, path, new)?;
        }
        updated.push((path, new));
    }
    failpoint::hit("merge.files");
    for (path, new) in updated {
        match new {
            Some(_) => index
                .add_path(Path::new(path))
                .context(format_args!("stage {path}"), &checkout.path)?,
            None => match index.remove_path(Path::new(path)) {
                Ok(()) => {}
                Err(e) if e.code() == ErrorCode::NotFound => {}
                Err(e) => return Err(e).context(format_args!("unstage {path}"), &checkout.path),
            },
        }
    }
    index.write().context("write the index", &checkout.path)?;
    failpoint::hit("merge.index");
    Ok(kept)
}

mod bookkeeping;
pub use bookkeeping::NotMoved;

#[cfg(test)]
mod tests;
