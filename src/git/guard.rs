//! The parts of a repository's shared git directory an agent could change to affect work
//! beyond its worktree: `config` and `config.worktree` (aliases, `core.hooksPath`, filters that
//! run programs), everything under `info/` (`exclude` would hide files from later checkpoints,
//! `attributes` would change what is checked out) and `hooks/` (which would run in the user's
//! own git commands), and `objects/info/alternates` (which would borrow objects from elsewhere).
//! No agent step may change them — a new file counts as much as an edit; [`GitDirGuard`]
//! notices and undoes changes around every agent step.
//!
//! The rest of the git directory is left to git: the user may be committing in the main
//! checkout while a run is in progress, and branches and tags are guarded by
//! [`super::RefGuard`].

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use super::error::{Context, GitError};
use super::repo::open_checkout;

/// The guarded files' contents and permission bits before a step (`None`: the file did not
/// exist). The mode matters: `chmod +x` on a sample hook would arm it.
#[derive(Debug, Clone)]
pub struct GitDirGuard {
    common_dir: PathBuf,
    files: BTreeMap<PathBuf, Option<(Vec<u8>, u32)>>,
}

fn read_guarded(full: &Path) -> Option<(Vec<u8>, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mode = fs::metadata(full).ok()?.permissions().mode();
    Some((fs::read(full).ok()?, mode))
}

const GUARDED_FILES: [&str; 3] = ["config", "config.worktree", "objects/info/alternates"];

/// Directories whose every file is guarded, including files created in them.
const GUARDED_DIRS: [&str; 2] = ["info", "hooks"];

impl GitDirGuard {
    /// Records the guarded files of the repository `worktree` belongs to.
    pub fn capture(worktree: &Path) -> Result<GitDirGuard, GitError> {
        let repo = open_checkout(worktree)?;
        let common_dir = repo.commondir().to_path_buf();
        let files = guarded_paths(&common_dir)
            .into_iter()
            .map(|path| {
                let content = read_guarded(&common_dir.join(&path));
                (path, content)
            })
            .collect();
        Ok(GitDirGuard { common_dir, files })
    }

    /// Puts back every guarded file that changed, appeared or disappeared since
    /// [`GitDirGuard::capture`]; returns them as `.git/<path>`.
    pub fn restore(&self) -> Result<Vec<String>, GitError> {
        let mut changed = Vec::new();
        let now: BTreeMap<PathBuf, Option<(Vec<u8>, u32)>> = guarded_paths(&self.common_dir)
            .into_iter()
            .chain(self.files.keys().cloned())
            .map(|path| {
                let content = read_guarded(&self.common_dir.join(&path));
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
                Some((bytes, mode)) => {
                    use std::os::unix::fs::PermissionsExt;
                    if let Some(parent) = full.parent() {
                        fs::create_dir_all(parent).context("create directory", parent)?;
                    }
                    fs::write(&full, bytes).context("restore", &full)?;
                    fs::set_permissions(&full, fs::Permissions::from_mode(*mode))
                        .context("restore the mode of", &full)?;
                }
                None => fs::remove_file(&full).context("remove", &full)?,
            }
            changed.push(format!(".git/{}", path.display()));
        }
        Ok(changed)
    }
}

fn guarded_paths(common_dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = GUARDED_FILES.iter().map(PathBuf::from).collect();
    for dir in GUARDED_DIRS {
        files_under(common_dir, Path::new(dir), &mut paths);
    }
    paths
}

/// The files under `common_dir/relative`, recursively, as paths relative to `common_dir`.
fn files_under(common_dir: &Path, relative: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(common_dir.join(relative)) else {
        return;
    };
    for entry in entries.flatten() {
        let path = relative.join(entry.file_name());
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => files_under(common_dir, &path, found),
            Ok(_) => found.push(path),
            Err(_) => {}
        }
    }
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
            read_guarded(&git.join("info/exclude")),
            guard
                .files
                .get(Path::new("info/exclude"))
                .cloned()
                .flatten()
        );
    }
}
