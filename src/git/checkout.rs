//! Keeping checkouts in step when a branch they have checked out moves, like `git merge` does
//! for the user's main checkout: the new files are checked out safely (local changes are never
//! overwritten), and uncommitted changes in files the move touches refuse the move up front.

use std::collections::BTreeSet;
use std::path::PathBuf;

use git2::build::CheckoutBuilder;
use git2::{CheckoutNotificationType, ErrorCode, Oid, Repository};

use super::error::{Context, GitError};
use super::repo::{normalize, status_options, Repo};

/// A working tree (main checkout or linked worktree) with a given branch checked out.
pub(crate) struct BranchCheckout {
    pub path: PathBuf,
    pub repo: Repository,
}

impl Repo {
    /// Every working tree whose HEAD is `branch`: usually none or the main checkout.
    pub(crate) fn checkouts_of(&self, branch: &str) -> Result<Vec<BranchCheckout>, GitError> {
        let reference = format!("refs/heads/{branch}");
        let mut found = Vec::new();
        let main = Repository::open(self.root()).context("open the main checkout", self.root())?;
        if head_is(&main, &reference) {
            found.push(BranchCheckout {
                path: self.root().to_path_buf(),
                repo: main,
            });
        }
        let names = self
            .repo
            .worktrees()
            .context("list worktrees", self.root())?;
        for name in names.iter().flatten().flatten() {
            let Ok(worktree) = self.repo.find_worktree(name) else {
                continue;
            };
            if worktree.validate().is_err() {
                continue;
            }
            let Ok(repo) = Repository::open_from_worktree(&worktree) else {
                continue;
            };
            if head_is(&repo, &reference) {
                found.push(BranchCheckout {
                    path: normalize(worktree.path()),
                    repo,
                });
            }
        }
        Ok(found)
    }
}

fn head_is(repo: &Repository, reference: &str) -> bool {
    repo.find_reference("HEAD")
        .ok()
        .and_then(|head| {
            head.symbolic_target()
                .ok()
                .flatten()
                .map(|target| target == reference)
        })
        .unwrap_or(false)
}

impl BranchCheckout {
    /// Refuses when this checkout has uncommitted changes (staged, unstaged or untracked) in
    /// any of `touched`.
    pub(crate) fn ensure_clean(&self, touched: &[String]) -> Result<(), GitError> {
        let touched: BTreeSet<&str> = touched.iter().map(String::as_str).collect();
        let statuses = self
            .repo
            .statuses(Some(&mut status_options()))
            .context("read the status", &self.path)?;
        let dirty: Vec<String> = statuses
            .iter()
            .filter(|entry| !entry.status().is_ignored())
            .filter_map(|entry| entry.path().ok().map(str::to_string))
            .filter(|path| touched.contains(path.as_str()))
            .collect();
        if dirty.is_empty() {
            Ok(())
        } else {
            Err(GitError::DirtyCheckout {
                checkout: self.path.clone(),
                paths: dirty,
            })
        }
    }

    /// Checks out `tree` over the checkout's current HEAD without overwriting local changes;
    /// updates the index. A conflict is reported with the paths in the way and writes nothing.
    pub(crate) fn checkout_safely(&self, tree: Oid) -> Result<(), GitError> {
        let tree = self
            .repo
            .find_tree(tree)
            .context("read the merged tree", &self.path)?;
        let mut in_the_way = Vec::new();
        let result = {
            let mut checkout = CheckoutBuilder::new();
            checkout
                .safe()
                .notify_on(CheckoutNotificationType::CONFLICT)
                .notify(|_, path, _, _, _| {
                    if let Some(path) = path {
                        in_the_way.push(path.to_string_lossy().into_owned());
                    }
                    true
                });
            self.repo
                .checkout_tree(tree.as_object(), Some(&mut checkout))
        };
        match result {
            Ok(()) => Ok(()),
            Err(e) if e.code() == ErrorCode::Conflict => {
                in_the_way.sort();
                in_the_way.dedup();
                Err(GitError::DirtyCheckout {
                    checkout: self.path.clone(),
                    paths: in_the_way,
                })
            }
            Err(e) => Err(e).context("check out the merged files", &self.path),
        }
    }
}
