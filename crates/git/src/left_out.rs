//! What a worktree holds beyond its checkpoint: files git ignores (bytecode, build output, a
//! planted `.pyc` compiled from other code) that no checkpoint records. The runner's checks
//! must see exactly what lands, so once a writer's processes are gone these are removed,
//! except what the project declared (`[worktree]` links, copies and what its setup made).
//!
//! The checkpoint's own walk finds them ([`super::snapshot::checkpoint_within_scope`]); [`walk`]
//! is the libgit2 walk for when its metadata pass cannot tell, and for the runner's record of
//! what the setup made.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use git2::{Repository, Status};

use super::error::{Context, GitError};
use super::repo::open_checkout;

/// Every path of `repo`'s worktree that its index does not hold and that git ignores or would
/// add (relative; a directory stands for everything under it), sorted. One walk.
pub(crate) fn walk(repo: &Repository, worktree: &Path) -> Result<Vec<PathBuf>, GitError> {
    let mut options = super::repo::status_options();
    options
        .include_ignored(true)
        .recurse_ignored_dirs(false)
        .recurse_untracked_dirs(false);
    super::walks::count(worktree);
    let statuses = repo
        .statuses(Some(&mut options))
        .context("list the files git does not track", worktree)?;
    let mut paths: Vec<PathBuf> = statuses
        .iter()
        .filter(|entry| entry.status().intersects(Status::IGNORED | Status::WT_NEW))
        .map(|entry| {
            let bytes = entry.path_bytes();
            PathBuf::from(OsStr::from_bytes(bytes.strip_suffix(b"/").unwrap_or(bytes)))
        })
        .collect();
    paths.sort();
    Ok(paths)
}

/// [`walk`] of `worktree`: what the runner records right after a worktree's setup.
pub fn untracked_paths(worktree: &Path) -> Result<Vec<PathBuf>, GitError> {
    walk(&open_checkout(worktree)?, worktree)
}

/// Removes each of `paths` (worktree-relative, as [`walk`] lists them) that is not `keep` nor
/// under or above an entry of `keep`, and returns those removed. A symbolic link is removed
/// itself, never followed; a directory with everything in it. Called only when no agent or
/// check process is left that could swap a directory for a link meanwhile.
pub fn remove_left_out(
    worktree: &Path,
    paths: &[PathBuf],
    keep: &[PathBuf],
) -> Result<Vec<PathBuf>, GitError> {
    // Compared by components (`starts_with` is per component), `./` left out: `./.venv/` is
    // `.venv`.
    let keep: Vec<PathBuf> = keep
        .iter()
        .map(|k| {
            k.components()
                .filter(|c| !matches!(c, std::path::Component::CurDir))
                .collect()
        })
        .collect();
    let kept = |path: &Path| {
        keep.iter()
            .any(|k| path.starts_with(k) || k.starts_with(path))
    };
    let mut removed = Vec::new();
    for path in paths {
        if path.as_os_str().is_empty() || path == Path::new(".git") || kept(path) {
            continue;
        }
        let full = worktree.join(path);
        let Ok(meta) = std::fs::symlink_metadata(&full) else {
            continue;
        };
        let result = if meta.is_dir() {
            std::fs::remove_dir_all(&full)
        } else {
            std::fs::remove_file(&full)
        };
        result.map_err(|source| GitError::Io {
            action: "remove a file git does not track".to_string(),
            path: full.clone(),
            source,
        })?;
        removed.push(path.clone());
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_git_does_not_track_goes_except_what_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        testkit::git(root, &["init", "-q"]);
        std::fs::write(
            root.join(".gitignore"),
            "__pycache__/\n*.pyc\n.venv\nbuild/\n",
        )
        .unwrap();
        std::fs::write(root.join("app.py"), "print(1)\n").unwrap();
        for dir in ["__pycache__", ".venv/bin", "build"] {
            std::fs::create_dir_all(root.join(dir)).unwrap();
        }
        std::fs::write(root.join("__pycache__/app.cpython-311.pyc"), "planted").unwrap();
        std::fs::write(root.join("stray.pyc"), "planted").unwrap();
        std::fs::write(root.join(".venv/bin/python"), "").unwrap();
        std::fs::write(root.join("build/out"), "").unwrap();
        std::os::unix::fs::symlink("/etc", root.join("build-link.pyc")).unwrap();
        testkit::git(root, &["add", ".gitignore", "app.py"]);

        let listed = untracked_paths(root).unwrap();
        let names = |paths: &[PathBuf]| -> Vec<String> {
            paths.iter().map(|p| p.display().to_string()).collect()
        };
        assert_eq!(
            names(&listed),
            [
                ".venv",
                "__pycache__",
                "build",
                "build-link.pyc",
                "stray.pyc"
            ]
        );
        let keep = [PathBuf::from("./.venv/"), PathBuf::from("build/out")];
        let removed = remove_left_out(root, &listed, &keep).unwrap();
        assert_eq!(
            names(&removed),
            ["__pycache__", "build-link.pyc", "stray.pyc"]
        );
        assert!(root.join(".venv/bin/python").exists());
        assert!(root.join("build/out").exists());
        assert!(!root.join("__pycache__").exists());
        assert!(
            std::path::Path::new("/etc/passwd").exists(),
            "a link is never followed"
        );
        assert!(root.join("app.py").exists());
    }
}
