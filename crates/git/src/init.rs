//! Making a new repository with one commit of everything in a directory (the demo's sample
//! project, and test fixtures).

use std::path::Path;

use git2::{IndexAddOption, Repository, RepositoryInitOptions};

use crate::error::{Context, GitError};
use crate::repo::signature;

/// `git init -b <branch>` in `dir`, then commits every file that is not ignored.
pub fn init_with_commit(dir: &Path, branch: &str, message: &str) -> Result<String, GitError> {
    let mut options = RepositoryInitOptions::new();
    options.initial_head(branch);
    let repo = Repository::init_opts(dir, &options).context("initialize a repository", dir)?;
    let mut index = repo.index().context("open the index", dir)?;
    index
        .add_all(["*"], IndexAddOption::DEFAULT, None)
        .context("stage files", dir)?;
    index.write().context("write the index", dir)?;
    let tree_id = index.write_tree().context("write the tree", dir)?;
    let tree = repo.find_tree(tree_id).context("read the tree", dir)?;
    let author = signature(&repo, dir)?;
    let commit = repo
        .commit(Some("HEAD"), &author, &author, message, &tree, &[])
        .context("commit", dir)?;
    Ok(commit.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commits_every_file_on_the_named_branch() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/a.txt"), "a").unwrap();
        init_with_commit(dir.path(), "main", "first").unwrap();
        let repo = Repository::open(dir.path()).unwrap();
        assert_eq!(repo.head().unwrap().shorthand().ok(), Some("main"));
        let tree = repo.head().unwrap().peel_to_tree().unwrap();
        assert!(tree.get_path(Path::new("src/a.txt")).is_ok());
    }
}
