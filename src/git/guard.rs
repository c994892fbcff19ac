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

use std::os::unix::ffi::OsStrExt;

use super::error::{Context, GitError};
use super::links;
use super::repo::open_checkout;

/// The guarded files' contents and permission bits before a step (`None`: the file did not
/// exist). The mode matters: `chmod +x` on a sample hook would arm it.
#[derive(Debug, Clone)]
pub struct GitDirGuard {
    common_dir: PathBuf,
    files: BTreeMap<PathBuf, Option<(Vec<u8>, u32)>>,
}

/// The mode recorded for a guarded path that is a symbolic link (its content is the target):
/// a link is never read through, and one put in place of a file counts as a change.
const LINK_MODE: u32 = 0o120000;

fn read_guarded(common_dir: &Path, path: &Path) -> Option<(Vec<u8>, u32)> {
    use std::os::unix::fs::PermissionsExt;
    if links::linked_component(common_dir, &path.to_string_lossy()).is_some() {
        return None;
    }
    let full = &common_dir.join(path);
    let meta = fs::symlink_metadata(full).ok()?;
    if meta.file_type().is_symlink() {
        let target = fs::read_link(full).ok()?;
        return Some((target.into_os_string().into_encoded_bytes(), LINK_MODE));
    }
    Some((fs::read(full).ok()?, meta.permissions().mode()))
}

const GUARDED_FILES: [&str; 3] = ["config", "config.worktree", "objects/info/alternates"];

/// Directories whose every file is guarded, including files created in them.
const GUARDED_DIRS: [&str; 2] = ["info", "hooks"];

impl GitDirGuard {
    /// Records the guarded files of the repository `worktree` belongs to.
    pub fn capture(worktree: &Path) -> Result<GitDirGuard, GitError> {
        let repo = open_checkout(worktree)?;
        Ok(GitDirGuard::capture_in(repo.commondir()))
    }

    /// Records the guarded files of the shared git directory `common_dir`.
    pub(crate) fn capture_in(common_dir: &Path) -> GitDirGuard {
        let common_dir = common_dir.to_path_buf();
        let files = guarded_paths(&common_dir)
            .into_iter()
            .map(|path| {
                let content = read_guarded(&common_dir, &path);
                (path, content)
            })
            .collect();
        GitDirGuard { common_dir, files }
    }

    /// Puts back every guarded file that changed, appeared or disappeared since
    /// [`GitDirGuard::capture`]; returns them as `.git/<path>`.
    pub fn restore(&self) -> Result<Vec<String>, GitError> {
        let mut changed = Vec::new();
        let now: BTreeMap<PathBuf, Option<(Vec<u8>, u32)>> = guarded_paths(&self.common_dir)
            .into_iter()
            .chain(self.files.keys().cloned())
            .map(|path| {
                let content = read_guarded(&self.common_dir, &path);
                (path, content)
            })
            .collect();
        for (path, content) in &now {
            let before = self.files.get(path).cloned().flatten();
            if *content == before {
                continue;
            }
            let full = self.common_dir.join(path);
            // Never through a link: one on the way (`hooks/` -> elsewhere) or in the file's
            // place (`config` -> a file of the user's) is removed, not written to.
            let rel = path.as_os_str().as_bytes();
            links::remove_links_in_the_way(&self.common_dir, links::parent_dirs([rel]))?;
            if fs::symlink_metadata(&full).is_ok_and(|meta| meta.file_type().is_symlink()) {
                links::remove_link(&self.common_dir, rel)?;
            }
            match &before {
                Some((target, LINK_MODE)) => {
                    let target = std::ffi::OsStr::from_bytes(target);
                    std::os::unix::fs::symlink(target, &full).context("restore the link", &full)?;
                }
                Some((bytes, mode)) => {
                    use std::os::unix::fs::PermissionsExt;
                    if let Some(parent) = full.parent() {
                        fs::create_dir_all(parent).context("create directory", parent)?;
                    }
                    fs::write(&full, bytes).context("restore", &full)?;
                    fs::set_permissions(&full, fs::Permissions::from_mode(*mode))
                        .context("restore the mode of", &full)?;
                }
                None => match fs::remove_file(&full) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e).context("remove", &full),
                },
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
    // A link in a directory's place is guarded as itself, never listed through.
    let full = common_dir.join(relative);
    if fs::symlink_metadata(&full).is_ok_and(|meta| meta.file_type().is_symlink()) {
        found.push(relative.to_path_buf());
        return;
    }
    let Ok(entries) = fs::read_dir(&full) else {
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
            read_guarded(&git, Path::new("info/exclude")),
            guard
                .files
                .get(Path::new("info/exclude"))
                .cloned()
                .flatten()
        );
    }

    #[test]
    fn a_guarded_file_replaced_by_a_link_is_restored_without_writing_through_it() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        init_with_commit(dir.path(), "main", "first").unwrap();
        let git = dir.path().join(".git");
        fs::create_dir_all(git.join("hooks")).unwrap();
        fs::write(git.join("hooks/pre-commit"), "#!/bin/sh\n").unwrap();
        let config = fs::read(git.join("config")).unwrap();
        let guard = GitDirGuard::capture(dir.path()).unwrap();
        let victim = outside.path().join("victim");
        fs::write(&victim, "the user's file\n").unwrap();
        fs::remove_file(git.join("config")).unwrap();
        std::os::unix::fs::symlink(&victim, git.join("config")).unwrap();
        fs::remove_dir_all(git.join("hooks")).unwrap();
        std::os::unix::fs::symlink(outside.path(), git.join("hooks")).unwrap();

        let changed = guard.restore().unwrap();

        for named in [".git/config", ".git/hooks", ".git/hooks/pre-commit"] {
            assert!(changed.iter().any(|c| c == named), "{named}: {changed:?}");
        }
        assert!(!changed.iter().any(|c| c.contains("victim")), "{changed:?}");
        assert_eq!(fs::read_to_string(&victim).unwrap(), "the user's file\n");
        assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 1);
        assert_eq!(fs::read(git.join("config")).unwrap(), config);
        assert!(git.join("hooks").is_dir() && git.join("hooks/pre-commit").is_file());
    }
}
