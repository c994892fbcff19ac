//! Telling a read-only step's side effects apart after the audit reverted them: files it
//! created (caches, bytecode, build output: harmless, removed) from files of the checkpoint it
//! edited or deleted (a breach of its role).

use std::path::Path;

use super::error::{Context, GitError};
use super::repo::{find_commit, open_checkout};

/// The reverted paths, split by whether `commit` holds them: `(created, edited)`. A path the
/// commit does not hold was created by the step; one it holds was edited or deleted.
pub fn split_created(
    worktree: &Path,
    commit: &str,
    paths: &[String],
) -> Result<(Vec<String>, Vec<String>), GitError> {
    if paths.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    let repo = open_checkout(worktree)?;
    let tree = find_commit(&repo, commit, worktree)?
        .tree()
        .context(format_args!("read the tree of {commit}"), worktree)?;
    Ok(paths
        .iter()
        .cloned()
        .partition(|path| super::files::entry(&tree, path).is_none()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_the_commit_lacks_are_created_the_others_edited() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("lib")).unwrap();
        std::fs::write(dir.path().join("lib/a.py"), "x = 1\n").unwrap();
        let commit = crate::init_with_commit(dir.path(), "main", "init").unwrap();
        let paths = vec![
            "lib/a.py".to_string(),
            "lib/__pycache__/a.cpython-312.pyc".to_string(),
        ];

        let (created, edited) = split_created(dir.path(), &commit, &paths).unwrap();

        assert_eq!(created, ["lib/__pycache__/a.cpython-312.pyc"]);
        assert_eq!(edited, ["lib/a.py"]);
    }
}
