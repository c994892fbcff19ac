//! Creating a branch that no worktree checks out, such as a feature branch: the tasks of a
//! feature branch from it and are merged back into it, while only its ref moves.

use git2::Branch;

use super::error::{Context, GitError};
use super::repo::Repo;

impl Repo {
    /// Creates the local branch `name` at the tip of `from`; returns that commit (hex). An
    /// existing branch is never moved or replaced.
    pub fn create_branch(&self, name: &str, from: &str) -> Result<String, GitError> {
        if !Branch::name_is_valid(name).unwrap_or(false) {
            return Err(GitError::InvalidBranchName {
                name: name.to_string(),
            });
        }
        if self.branch_exists(name) {
            return Err(GitError::BranchExists {
                branch: name.to_string(),
            });
        }
        let tip = self.base_tip(from)?;
        self.repo
            .branch(name, &tip, false)
            .context(format_args!("create branch `{name}`"), self.root())?;
        tracing::debug!(branch = name, from, "created branch");
        Ok(tip.id().to_string())
    }

    /// Creates the local branch `name` at `commit` (hex). An existing branch is never moved or
    /// replaced.
    pub fn create_branch_at(&self, name: &str, commit: &str) -> Result<(), GitError> {
        if self.branch_exists(name) {
            return Err(GitError::BranchExists {
                branch: name.to_string(),
            });
        }
        let found = git2::Oid::from_str(commit)
            .and_then(|id| self.repo.find_commit(id))
            .context(format_args!("read commit {commit}"), self.root())?;
        self.repo
            .branch(name, &found, false)
            .context(format_args!("create branch `{name}`"), self.root())?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_a_branch_at_the_base_tip_and_never_replaces_one() {
        let dir = tempfile::tempdir().unwrap();
        let tip = crate::init_with_commit(dir.path(), "main", "first").unwrap();
        let repo = Repo::discover(dir.path()).unwrap();
        assert_eq!(repo.create_branch("autobuild/F", "main").unwrap(), tip);
        assert_eq!(repo.resolve_branch("autobuild/F").unwrap(), tip);
        assert!(matches!(
            repo.create_branch("autobuild/F", "main"),
            Err(GitError::BranchExists { .. })
        ));
        assert!(matches!(
            repo.create_branch("autobuild/G", "nope"),
            Err(GitError::BaseBranchNotFound { .. })
        ));
        assert!(matches!(
            repo.create_branch("bad..name", "main"),
            Err(GitError::InvalidBranchName { .. })
        ));
    }
}
