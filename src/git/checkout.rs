//! The checkouts of a branch (the user's main checkout, other worktrees) and whether they have
//! local changes in given files: uncommitted changes in files a landing touches refuse it up
//! front ([`super::landing`] then keeps those checkouts in step).

use std::collections::BTreeSet;
use std::path::PathBuf;

use git2::Repository;

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
    /// any of `touched`, or when one of them lies beyond a symbolic link there.
    pub(crate) fn ensure_clean(&self, touched: &[String]) -> Result<(), GitError> {
        for path in touched {
            super::links::ensure_no_link(&self.path, path)?;
        }
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
}
