//! The user's main checkout around an unconfined agent step. With the sandbox off nothing
//! stops an agent from writing there; [`CheckoutGuard`] notices what changed while the step
//! ran. Who changed it cannot be told (the user may be editing too), so only the paths the
//! caller says must not change ([`CheckoutGuard::restore`]'s `revert`: the runner's own
//! inputs) are put back; every other change is kept and reported, with the version from before
//! the step saved, so the user's own edit is never undone and an agent's is never hidden.
//!
//! Captured cheaply: the paths `git status` reports (tracked changes and untracked files that
//! are not ignored), each with its content, and the index's entries. Everything else equals the
//! index, so after the step the paths status reports then — plus the ones captured — are all
//! that can differ. Each one that differs and must not change is restored to what it was (the
//! user's own uncommitted edit, exactly; or the index's version for a clean file; or removed
//! when it did not exist), and the step's version is kept in a backup directory first; any
//! other is left and its version from before kept there. A change of the index (staged
//! changes) is reported and left.
//!
//! Not covered: ignored files (build output, `.env` when ignored) and anything under
//! `.autobuild/runs/` and `.autobuild/worktrees/` (the runner's own). Nothing is written
//! beyond a symbolic link: a path whose parent is a link is reported, not restored.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use git2::Repository;

use super::error::{Context, GitError};
use super::repo::status_options;

/// Files larger than this are fingerprinted, not copied: a change to one is reported but
/// cannot be undone.
const MAX_SNAPSHOT: u64 = 8 * 1024 * 1024;

/// What one path held.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Content {
    Absent,
    File {
        bytes: Vec<u8>,
        executable: bool,
    },
    Link(PathBuf),
    /// Too large to copy: its length and modification time.
    Large {
        len: u64,
        modified: Option<std::time::SystemTime>,
    },
    /// A directory (an untracked nested repository) or something else autobuild leaves alone.
    Other,
}

/// The main checkout's changed paths and index entries before a step.
#[derive(Debug)]
pub struct CheckoutGuard {
    root: PathBuf,
    before: BTreeMap<String, Content>,
    index_entries: Vec<(Vec<u8>, git2::Oid, u32)>,
}

impl CheckoutGuard {
    /// Records the main checkout at `root`.
    pub fn capture(root: &Path) -> Result<CheckoutGuard, GitError> {
        let repo = Repository::open(root).context("open the main checkout", root)?;
        let before = changed_paths(&repo, root)?
            .into_iter()
            .map(|path| {
                let content = read(&root.join(&path));
                (path, content)
            })
            .collect();
        Ok(CheckoutGuard {
            root: root.to_path_buf(),
            before,
            index_entries: index_entries(&repo, root)?,
        })
    }

    /// Puts back every path changed since the capture for which `revert` is true, keeping the
    /// changed version under `backup`; every other changed path (and a change of the index)
    /// is kept, with its version from before under `backup`. Returns a description of each.
    pub fn restore(
        &self,
        backup: &Path,
        revert: &dyn Fn(&str) -> bool,
    ) -> Result<Guarded, GitError> {
        let repo = Repository::open(&self.root).context("open the main checkout", &self.root)?;
        let mut guarded = Guarded::default();
        if index_entries(&repo, &self.root)? != self.index_entries {
            guarded
                .kept
                .push("main checkout: the staged changes (index)".to_string());
        }
        let mut index = repo.index().context("read the index", &self.root)?;
        index.read(true).context("read the index", &self.root)?;
        let now: BTreeSet<String> = changed_paths(&repo, &self.root)?;
        let paths: BTreeSet<&String> = now.iter().chain(self.before.keys()).collect();
        for path in paths {
            let full = self.root.join(path);
            let expected = match self.before.get(path) {
                Some(content) => content.clone(),
                None => from_index(&repo, &index, path),
            };
            let current = read(&full);
            if same(&current, &expected) {
                continue;
            }
            let what = format!("main checkout: {}", base::quoted::path(path));
            if !revert(path) {
                keep(&expected, &backup.join(path))?;
                guarded.kept.push(format!(
                    "{what} (changed while the step ran; kept, as it may be your own edit; the \
                     version from before is in {})",
                    backup.display()
                ));
                continue;
            }
            let changed = &mut guarded.reverted;
            if beyond_link(&self.root, path) {
                changed.push(format!("{what} (not restored: beyond a symbolic link)"));
                continue;
            }
            keep(&current, &backup.join(path))?;
            match put_back(&full, &current, &expected)? {
                true => changed.push(format!(
                    "{what} (restored; the agent's version is kept in {})",
                    backup.display()
                )),
                false => changed.push(format!("{what} (changed; too large to restore)")),
            }
        }
        Ok(guarded)
    }
}

/// What [`CheckoutGuard::restore`] found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Guarded {
    /// Put back: the step's changes to what must not change.
    pub reverted: Vec<String>,
    /// Changed while the step ran and left as they are.
    pub kept: Vec<String>,
}

/// The paths status reports, relative, without the runner's own directories.
fn changed_paths(repo: &Repository, root: &Path) -> Result<BTreeSet<String>, GitError> {
    let statuses = repo
        .statuses(Some(&mut status_options()))
        .context("read the status of the main checkout", root)?;
    Ok(statuses
        .iter()
        .filter_map(|entry| {
            let path = String::from_utf8_lossy(entry.path_bytes()).into_owned();
            let path = path.trim_end_matches('/').to_string();
            let own = path.starts_with(".autobuild/runs/")
                || path.starts_with(".autobuild/worktrees/")
                || path == ".autobuild/runs"
                || path == ".autobuild/worktrees";
            (!own).then_some(path)
        })
        .collect())
}

fn index_entries(
    repo: &Repository,
    root: &Path,
) -> Result<Vec<(Vec<u8>, git2::Oid, u32)>, GitError> {
    let index = repo.index().context("read the index", root)?;
    Ok(index
        .iter()
        .map(|entry| (entry.path, entry.id, entry.mode))
        .collect())
}

fn read(full: &Path) -> Content {
    let Ok(meta) = fs::symlink_metadata(full) else {
        return Content::Absent;
    };
    if meta.file_type().is_symlink() {
        return fs::read_link(full).map_or(Content::Other, Content::Link);
    }
    if !meta.is_file() {
        return Content::Other;
    }
    if meta.len() > MAX_SNAPSHOT {
        return Content::Large {
            len: meta.len(),
            modified: meta.modified().ok(),
        };
    }
    match fs::read(full) {
        Ok(bytes) => Content::File {
            bytes,
            executable: meta.permissions().mode() & 0o111 != 0,
        },
        Err(_) => Content::Other,
    }
}

/// What the index holds for a path status no longer reported before the step: the file as
/// staged (which the checkout held then).
fn from_index(repo: &Repository, index: &git2::Index, path: &str) -> Content {
    let Some(entry) = index.get_path(Path::new(path), 0) else {
        return Content::Absent;
    };
    let Ok(blob) = repo.find_blob(entry.id) else {
        return Content::Other;
    };
    match entry.mode {
        0o120000 => Content::Link(PathBuf::from(OsStr::from_bytes(blob.content()))),
        0o100755 => Content::File {
            bytes: blob.content().to_vec(),
            executable: true,
        },
        0o100644 => Content::File {
            bytes: blob.content().to_vec(),
            executable: false,
        },
        _ => Content::Other,
    }
}

fn same(current: &Content, expected: &Content) -> bool {
    match (current, expected) {
        // A directory or a submodule: not autobuild's to judge.
        (_, Content::Other) | (Content::Other, _) => true,
        _ => current == expected,
    }
}

/// Whether a parent of `path` inside `root` is a symbolic link.
fn beyond_link(root: &Path, path: &str) -> bool {
    let mut at = root.to_path_buf();
    let parts: Vec<&str> = path.split('/').collect();
    for part in &parts[..parts.len().saturating_sub(1)] {
        at.push(part);
        if fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            return true;
        }
    }
    false
}

/// Copies what the step left at a path to `to` (a link as a file holding its target).
fn keep(current: &Content, to: &Path) -> Result<(), GitError> {
    let bytes = match current {
        Content::File { bytes, .. } => bytes.clone(),
        Content::Link(target) => target.as_os_str().as_bytes().to_vec(),
        _ => return Ok(()),
    };
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent).context("create directory", parent)?;
    }
    fs::write(to, bytes).context("back up", to)
}

/// Replaces `current` at `full` with `expected`; `false` when that cannot be done (a large
/// file whose content was not copied).
fn put_back(full: &Path, current: &Content, expected: &Content) -> Result<bool, GitError> {
    if matches!(expected, Content::Large { .. }) {
        return Ok(false);
    }
    if !matches!(current, Content::Absent | Content::Other) {
        fs::remove_file(full).context("remove", full)?;
    }
    match expected {
        Content::File { bytes, executable } => {
            if let Some(parent) = full.parent() {
                fs::create_dir_all(parent).context("create directory", parent)?;
            }
            fs::write(full, bytes).context("restore", full)?;
            let mode = if *executable { 0o755 } else { 0o644 };
            fs::set_permissions(full, fs::Permissions::from_mode(mode))
                .context("restore the mode of", full)?;
        }
        Content::Link(target) => {
            if let Some(parent) = full.parent() {
                fs::create_dir_all(parent).context("create directory", parent)?;
            }
            std::os::unix::fs::symlink(target, full).context("restore the link", full)?;
        }
        Content::Absent | Content::Other | Content::Large { .. } => {}
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::init_with_commit;

    #[test]
    fn a_steps_changes_are_undone_and_the_users_own_edits_kept() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        fs::create_dir_all(root.join("src")).unwrap();
        fs::write(root.join("src/a.txt"), "a\n").unwrap();
        fs::write(root.join("b.txt"), "b\n").unwrap();
        fs::write(root.join("gone.txt"), "gone\n").unwrap();
        init_with_commit(&root, "main", "first").unwrap();
        // The user's own uncommitted work.
        fs::write(root.join("b.txt"), "b, edited by the user\n").unwrap();
        fs::write(root.join("notes.txt"), "user notes\n").unwrap();
        let guard = CheckoutGuard::capture(&root).unwrap();
        let backup = dir.path().join("backup");
        assert!(guard.restore(&backup, &|_| true).unwrap() == Guarded::default());

        fs::write(root.join("src/a.txt"), "agent\n").unwrap();
        fs::write(root.join("b.txt"), "agent\n").unwrap();
        fs::write(root.join("new.txt"), "agent\n").unwrap();
        fs::remove_file(root.join("gone.txt")).unwrap();
        fs::remove_file(root.join("notes.txt")).unwrap();
        fs::create_dir_all(root.join(".autobuild/runs/T")).unwrap();
        fs::write(root.join(".autobuild/runs/T/x"), "runner\n").unwrap();
        let changed = guard.restore(&backup, &|_| true).unwrap().reverted;

        let names: Vec<&str> = changed
            .iter()
            .map(|c| c.split(' ').nth(2).unwrap())
            .collect();
        assert_eq!(
            names,
            ["b.txt", "gone.txt", "new.txt", "notes.txt", "src/a.txt"]
        );
        let read = |p: &str| fs::read_to_string(root.join(p)).unwrap();
        assert_eq!(read("src/a.txt"), "a\n");
        assert_eq!(read("b.txt"), "b, edited by the user\n");
        assert_eq!(read("gone.txt"), "gone\n");
        assert_eq!(read("notes.txt"), "user notes\n");
        assert!(!root.join("new.txt").exists());
        assert_eq!(read(".autobuild/runs/T/x"), "runner\n");
        assert_eq!(
            fs::read_to_string(backup.join("new.txt")).unwrap(),
            "agent\n"
        );
        assert_eq!(fs::read_to_string(backup.join("b.txt")).unwrap(), "agent\n");
        assert!(guard.restore(&backup, &|_| true).unwrap() == Guarded::default());
    }

    #[test]
    fn a_staged_change_is_reported_and_left() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        init_with_commit(dir.path(), "main", "first").unwrap();
        let guard = CheckoutGuard::capture(dir.path()).unwrap();
        let repo = Repository::open(dir.path()).unwrap();
        let mut index = repo.index().unwrap();
        index.remove_path(Path::new("a.txt")).unwrap();
        index.write().unwrap();
        let guarded = guard
            .restore(&dir.path().join("backup"), &|_| true)
            .unwrap();
        assert_eq!(guarded.kept, ["main checkout: the staged changes (index)"]);
        let mut index = repo.index().unwrap();
        index.read(true).unwrap();
        assert!(index.get_path(Path::new("a.txt"), 0).is_none());
    }

    /// What the caller does not ask to revert stays as it is now, reported, its version from
    /// before the step in the backup: the runner cannot tell the user's edit from the step's.
    #[test]
    fn a_change_not_to_revert_is_kept_with_its_version_from_before() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        fs::create_dir_all(root.join(".autobuild")).unwrap();
        fs::write(root.join("a.txt"), "a\n").unwrap();
        fs::write(root.join(".autobuild/config.toml"), "[checks.test]\n").unwrap();
        init_with_commit(&root, "main", "first").unwrap();
        let guard = CheckoutGuard::capture(&root).unwrap();
        fs::write(root.join("a.txt"), "edited during the step\n").unwrap();
        fs::write(root.join(".autobuild/config.toml"), "# weakened\n").unwrap();
        let backup = dir.path().join("backup");

        let guarded = guard
            .restore(&backup, &|path| path.starts_with(".autobuild/"))
            .unwrap();

        assert_eq!(guarded.kept.len(), 1, "{guarded:?}");
        assert!(guarded.kept[0].starts_with("main checkout: a.txt (changed while"));
        assert_eq!(guarded.reverted.len(), 1, "{guarded:?}");
        assert!(guarded.reverted[0].starts_with("main checkout: .autobuild/config.toml (restored"));
        let read = |p: &Path| fs::read_to_string(p).unwrap();
        assert_eq!(read(&root.join("a.txt")), "edited during the step\n");
        assert_eq!(read(&backup.join("a.txt")), "a\n");
        assert_eq!(
            read(&root.join(".autobuild/config.toml")),
            "[checks.test]\n"
        );
        assert_eq!(read(&backup.join(".autobuild/config.toml")), "# weakened\n");
    }
}
