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
        let wanted = format!("ref: {reference}");
        for (name, head) in self.worktree_heads().iter() {
            let name = name.as_str();
            // A feature's wave keeps one worktree per task, and every landing asks this of
            // each branch it moves or deletes: a worktree whose HEAD file plainly names
            // another branch (or a commit) is passed without opening its repository (and the
            // file is read again only when it changed). One that cannot be read is opened and
            // asked, as before.
            if let Some(text) = head {
                if text.trim_end() != wanted {
                    continue;
                }
            }
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

impl Repo {
    /// Refuses with [`GitError::CheckedOut`] when a working tree has `branch` checked out
    /// (git's rule for adding a worktree on it or deleting it).
    pub(crate) fn ensure_not_checked_out(&self, branch: &str) -> Result<(), GitError> {
        match self.checkouts_of(branch)?.into_iter().next() {
            Some(checkout) => Err(GitError::CheckedOut {
                branch: branch.to_string(),
                path: checkout.path,
            }),
            None => Ok(()),
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::init_with_commit;

    use testkit::git;

    /// A directory holding a repository `repo` whose `main` has one commit (beside it, room for
    /// worktrees).
    fn a_repository() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(root.join("a.txt"), "a\n").unwrap();
        init_with_commit(&root, "main", "first").unwrap();
        (dir, root)
    }

    /// Worktrees on other branches (or detached) are passed by their HEAD file; the one on the
    /// branch asked about is found, and so is the main checkout.
    #[test]
    fn the_checkouts_of_a_branch_are_found_among_many_worktrees() {
        let (dir, root) = a_repository();
        for n in 0..5 {
            let path = dir.path().join(format!("wt{n}"));
            git(
                &root,
                &[
                    "worktree",
                    "add",
                    "-q",
                    "-b",
                    &format!("task{n}"),
                    path.to_str().unwrap(),
                ],
            );
        }
        git(
            &root,
            &[
                "worktree",
                "add",
                "-q",
                "--detach",
                dir.path().join("detached").to_str().unwrap(),
            ],
        );
        let repo = Repo::discover(&root).unwrap();
        let checkouts = |branch: &str| -> Vec<PathBuf> {
            let found = repo.checkouts_of(branch).unwrap();
            found.into_iter().map(|c| c.path).collect()
        };
        assert_eq!(checkouts("task3"), [normalize(&dir.path().join("wt3"))]);
        assert_eq!(checkouts("main"), [repo.root().to_path_buf()]);
        assert!(checkouts("nobody").is_empty());

        // The HEAD records are kept between calls; one switched since is read again.
        git(
            &dir.path().join("wt1"),
            &["symbolic-ref", "HEAD", "refs/heads/nobody"],
        );
        assert_eq!(checkouts("nobody"), [normalize(&dir.path().join("wt1"))]);
        assert!(checkouts("task1").is_empty());
    }

    #[test]
    fn a_held_reading_answers_until_released_and_follows_the_runners_own_removals() {
        let (dir, root) = a_repository();
        let repo = Repo::discover(&root).unwrap();
        let wt = |n: u32| dir.path().join(format!("wt{n}"));
        for n in 0..3 {
            repo.create_worktree(&format!("task{n}"), "main", &wt(n))
                .unwrap();
        }
        let checkouts = |branch: &str| -> Vec<PathBuf> {
            let found = repo.checkouts_of(branch).unwrap();
            found.into_iter().map(|c| c.path).collect()
        };

        let held = repo.heads_read_once();
        let nested = repo.heads_read_once();
        assert_eq!(checkouts("task1"), [normalize(&wt(1))]);
        // Switched by someone else while the reading is held: the new branch is not seen yet;
        // a worktree the reading names is asked itself before it is answered.
        git(&wt(2), &["symbolic-ref", "HEAD", "refs/heads/elsewhere"]);
        assert!(checkouts("elsewhere").is_empty());
        assert!(checkouts("task2").is_empty());
        // The main checkout is asked afresh each time.
        git(&root, &["symbolic-ref", "HEAD", "refs/heads/task0x"]);
        assert_eq!(checkouts("task0x"), [repo.root().to_path_buf()]);
        git(&root, &["symbolic-ref", "HEAD", "refs/heads/main"]);
        // The runner's own removal is followed: the branch is free to delete.
        repo.remove_worktree(&wt(1), "task1").unwrap();
        assert!(checkouts("task1").is_empty());
        repo.delete_branch("task1", "main", true).unwrap();
        drop(nested);
        assert!(
            checkouts("elsewhere").is_empty(),
            "still held by the outer one"
        );
        // The runner's own addition takes the reading again.
        repo.create_worktree("task3", "main", &wt(3)).unwrap();
        assert_eq!(checkouts("task3"), [normalize(&wt(3))]);
        assert_eq!(checkouts("elsewhere"), [normalize(&wt(2))]);
        git(&wt(3), &["symbolic-ref", "HEAD", "refs/heads/other"]);
        assert!(checkouts("other").is_empty());
        drop(held);
        // Released: the records are read at each question again.
        assert_eq!(checkouts("other"), [normalize(&wt(3))]);
    }
}
