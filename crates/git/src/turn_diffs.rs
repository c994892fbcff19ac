//! Everything a writer's turn needs to say about what changed, computed once right after its
//! checkpoint on one repository handle and stored with the turn's records: the turn's own
//! changes, the task branch against the commit it forked from, the diff of its test files (the
//! reviewer's prompt) and the checkpoint's patch (the report). Readers take them from the
//! records instead of diffing again.

use std::path::Path;

use super::diff::{diff_stat_in, diff_text_in, DiffStat};
use super::error::{Context, GitError};
use super::repo::find_commit;
use super::tree_diff::open_for_diffs;

/// At most this much of the test-file diff is kept (it reaches a prompt).
pub const TESTS_DIFF_LIMIT: usize = 16 * 1024;
/// At most this much of a checkpoint's patch is kept (it reaches the report).
pub const PATCH_LIMIT: usize = 64 * 1024;

/// What one writer's turn changed, as the runner computed it.
#[derive(Debug)]
pub struct TurnDiffs {
    /// From the previous checkpoint to this one; empty on the first turn.
    pub stat: DiffStat,
    /// The task branch at this checkpoint against the commit it forked from, or why it cannot
    /// be computed (no fork point: the base branch is gone).
    pub branch: Result<DiffStat, String>,
    /// The diff of test files from the fork point to this checkpoint, or why there is none.
    pub tests: Result<String, String>,
    /// The checkpoint commit's own patch against its parent (empty when no commit was made),
    /// or why there is none.
    pub patch: Result<String, String>,
}

impl TurnDiffs {
    /// Diffs of the checkpoint `commit` in `worktree`: against `previous` (the last
    /// checkpoint, `None` on the first turn), against where it forked from `base_branch`, the
    /// test files `is_test` selects, and the patch of `commit` when `committed`.
    pub fn compute(
        worktree: &Path,
        base_branch: &str,
        previous: Option<&str>,
        commit: &str,
        committed: bool,
        is_test: &dyn Fn(&str) -> bool,
    ) -> Result<TurnDiffs, GitError> {
        let repo = open_for_diffs(worktree)?;
        TurnDiffs::compute_in(
            &repo,
            worktree,
            base_branch,
            previous,
            commit,
            committed,
            is_test,
        )
    }

    /// [`TurnDiffs::compute`] with a diff handle ([`super::tree_diff::for_diffs`]) already
    /// open on `worktree`.
    pub(crate) fn compute_in(
        repo: &git2::Repository,
        worktree: &Path,
        base_branch: &str,
        previous: Option<&str>,
        commit: &str,
        committed: bool,
        is_test: &dyn Fn(&str) -> bool,
    ) -> Result<TurnDiffs, GitError> {
        let checkpoint = find_commit(repo, commit, worktree)?;
        let stat = match previous {
            Some(previous) => {
                let previous = find_commit(repo, previous, worktree)?;
                diff_stat_in(repo, &previous, &checkpoint, worktree)?
            }
            None => DiffStat::default(),
        };
        let fork = repo
            .find_branch(base_branch, git2::BranchType::Local)
            .map_err(|_| GitError::BaseBranchNotFound {
                branch: base_branch.to_string(),
            })
            .and_then(|branch| {
                let tip = branch
                    .get()
                    .peel_to_commit()
                    .context(format_args!("read the tip of `{base_branch}`"), worktree)?;
                let fork = repo.merge_base(tip.id(), checkpoint.id()).context(
                    format_args!("find where the task forked from {base_branch}"),
                    worktree,
                )?;
                repo.find_commit(fork)
                    .context("read the fork point", worktree)
            });
        let (branch, tests) = match fork {
            Ok(fork) => (
                diff_stat_in(repo, &fork, &checkpoint, worktree).map_err(|e| e.to_string()),
                diff_text_in(
                    repo,
                    &fork,
                    &checkpoint,
                    is_test,
                    TESTS_DIFF_LIMIT,
                    worktree,
                )
                .map_err(|e| e.to_string()),
            ),
            Err(e) => (Err(e.to_string()), Err(e.to_string())),
        };
        let patch = if committed {
            checkpoint
                .parent(0)
                .context("read the checkpoint's parent", worktree)
                .and_then(|parent| {
                    diff_text_in(repo, &parent, &checkpoint, &|_| true, PATCH_LIMIT, worktree)
                })
                .map_err(|e| e.to_string())
        } else {
            Ok(String::new())
        };
        Ok(TurnDiffs {
            stat,
            branch,
            tests,
            patch,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{checkpoint, Repo};

    #[test]
    fn a_turn_is_diffed_once_against_its_checkpoint_its_fork_and_its_parent() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        crate::init_with_commit(dir.path(), "main", "first").unwrap();
        let repo = Repo::discover(dir.path()).unwrap();
        let wt = dir.path().join("wt");
        repo.create_worktree("autobuild/T", "main", &wt).unwrap();
        std::fs::create_dir_all(wt.join("tests")).unwrap();
        std::fs::write(wt.join("tests/t.txt"), "test\n").unwrap();
        let one = checkpoint(&wt, "one").unwrap();
        std::fs::write(wt.join("a.txt"), "a2\n").unwrap();
        let two = checkpoint(&wt, "two").unwrap();
        let is_test = |path: &str| path.starts_with("tests/");
        let diffs = TurnDiffs::compute(&wt, "main", Some(&one.commit), &two.commit, true, &is_test)
            .unwrap();
        assert_eq!(diffs.stat.paths(), ["a.txt"]);
        assert_eq!(diffs.branch.unwrap().paths(), ["a.txt", "tests/t.txt"]);
        let tests = diffs.tests.unwrap();
        assert!(tests.contains("+test"), "{tests}");
        assert!(!tests.contains("a2"), "{tests}");
        let patch = diffs.patch.unwrap();
        assert!(patch.contains("+a2") && !patch.contains("+test"), "{patch}");

        let first = TurnDiffs::compute(&wt, "main", None, &one.commit, false, &is_test).unwrap();
        assert!(first.stat.is_empty());
        assert_eq!(first.patch.unwrap(), "");
        let gone = TurnDiffs::compute(&wt, "nope", None, &one.commit, true, &is_test).unwrap();
        assert!(gone.branch.is_err() && gone.tests.is_err());
    }
}
