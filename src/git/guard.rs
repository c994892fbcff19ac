//! The parts of a repository's shared git directory an agent could change to affect work
//! beyond its worktree: `config`, `info/exclude` (which would hide files from later
//! checkpoints), `info/attributes` and `hooks/` (which would run in the user's own git
//! commands). A read-only step must leave them as they were; [`GitDirGuard`] notices and undoes
//! changes.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use super::error::{Context, GitError};
use super::repo::open_checkout;

/// The guarded files' contents before a step (`None`: the file did not exist).
#[derive(Debug, Clone)]
pub struct GitDirGuard {
    common_dir: PathBuf,
    files: BTreeMap<PathBuf, Option<Vec<u8>>>,
}

const GUARDED_FILES: [&str; 3] = ["config", "info/exclude", "info/attributes"];

impl GitDirGuard {
    /// Records the guarded files of the repository `worktree` belongs to.
    pub fn capture(worktree: &Path) -> Result<GitDirGuard, GitError> {
        let repo = open_checkout(worktree)?;
        let common_dir = repo.commondir().to_path_buf();
        let files = guarded_paths(&common_dir)
            .into_iter()
            .map(|path| {
                let content = fs::read(common_dir.join(&path)).ok();
                (path, content)
            })
            .collect();
        Ok(GitDirGuard { common_dir, files })
    }

    /// Puts back every guarded file that changed, appeared or disappeared since
    /// [`GitDirGuard::capture`]; returns them as `.git/<path>`.
    pub fn restore(&self) -> Result<Vec<String>, GitError> {
        let mut changed = Vec::new();
        let now: BTreeMap<PathBuf, Option<Vec<u8>>> = guarded_paths(&self.common_dir)
            .into_iter()
            .chain(self.files.keys().cloned())
            .map(|path| {
                let content = fs::read(self.common_dir.join(&path)).ok();
                (path, content)
            })
            .collect();
        for (path, content) in &now {
            let before = self.files.get(path).cloned().flatten();
            if *content == before {
                continue;
            }
            let full = self.common_dir.join(path);
            match &before {
                Some(bytes) => fs::write(&full, bytes).context("restore", &full)?,
                None => fs::remove_file(&full).context("remove", &full)?,
            }
            changed.push(format!(".git/{}", path.display()));
        }
        Ok(changed)
    }
}

fn guarded_paths(common_dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = GUARDED_FILES.iter().map(PathBuf::from).collect();
    if let Ok(entries) = fs::read_dir(common_dir.join("hooks")) {
        paths.extend(
            entries
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .map(|e| Path::new("hooks").join(e.file_name())),
        );
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::init_with_commit;

    #[test]
    fn changes_to_exclude_and_hooks_are_undone_and_named() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        init_with_commit(dir.path(), "main", "first").unwrap();
        let guard = GitDirGuard::capture(dir.path()).unwrap();
        assert!(guard.restore().unwrap().is_empty());
        let git = dir.path().join(".git");
        fs::create_dir_all(git.join("info")).unwrap();
        fs::write(git.join("info/exclude"), "*.rs\n").unwrap();
        fs::create_dir_all(git.join("hooks")).unwrap();
        fs::write(git.join("hooks/pre-commit"), "#!/bin/sh\nrm -rf /\n").unwrap();
        let mut changed = guard.restore().unwrap();
        changed.sort();
        assert_eq!(changed, [".git/hooks/pre-commit", ".git/info/exclude"]);
        assert!(!git.join("hooks/pre-commit").exists());
        assert_eq!(
            fs::read(git.join("info/exclude")).ok(),
            guard.files[Path::new("info/exclude")].clone()
        );
    }
}
