//! The user's main checkout around an unconfined agent step. With the sandbox off nothing
//! stops an agent from writing there; [`CheckoutGuard`] notices what changed while the step
//! ran. Who changed it cannot be told (the user may be editing too), so only the paths the
//! caller says must not change ([`CheckoutGuard::restore`]'s `revert`: the runner's own
//! inputs) are put back; every other change is kept and reported, with the version from before
//! the step saved, so the user's own edit is never undone and an agent's is never hidden.
//!
//! Captured cheaply: the paths that differ from the index (tracked changes and untracked files
//! that are not ignored; one walk, on the metadata fast path), each with its content, and the
//! index's entries. Everything else equals the index, so after the step the paths that differ
//! then — plus the ones captured, plus those whose index entry changed — are all that can
//! differ. Each one that differs and must not change is restored to what it was (the user's
//! own uncommitted edit, exactly; or the index's version from before the step for a clean file;
//! or removed when it did not exist), and the step's version is kept in a backup directory
//! first; any other is left and its version from before kept there. Restoring yields the
//! checkout as the step left it (after the restore), which guards the next step without a walk
//! of its own while HEAD and the index file are unchanged. A change of the index (staged
//! changes) is reported and left.
//!
//! Not covered: ignored files (build output, `.env` when ignored) and anything under
//! `.autobuild/runs/` and `.autobuild/worktrees/` (the runner's own). Nothing is written
//! beyond a symbolic link: a path whose parent is a link is reported, not restored.

mod watch;

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use git2::Repository;

use super::error::{Context, GitError};
use super::repo::Repo;
use watch::Watch;

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
    /// Every path that may differ from the index, with what it held.
    before: BTreeMap<String, Content>,
    /// The index's entries (path, object, mode), sorted by path as the index keeps them.
    index_entries: Vec<(Vec<u8>, git2::Oid, u32)>,
    /// HEAD and the index file's size and modification time when this was taken: while both
    /// are unchanged, what the last step left is what the next one starts from.
    head: Option<git2::Oid>,
    index_stamp: Option<(u64, std::time::SystemTime)>,
    /// What was written in the checkout since this was taken (module `watch`), while the
    /// kernel can tell: the restore then examines those paths instead of walking. Taken by
    /// the first restore, which hands it on to the guard it returns.
    watch: RefCell<Option<Watch>>,
}

impl CheckoutGuard {
    /// Records the main checkout of `repo` (whose handle keeps the index read, so that the
    /// steps' walks read it again only when its file changed).
    pub fn capture(repo: &Repo, revert: &dyn Fn(&str) -> bool) -> Result<CheckoutGuard, GitError> {
        let root = repo.root();
        let repo = &repo.repo;
        let mut index = repo.index().context("read the index", root)?;
        let (now, watch) = walk_watched(repo, &mut index, root)?;
        let before: BTreeMap<String, Content> = now
            .into_iter()
            .map(|path| {
                let content = read(&root.join(&path));
                (path, content)
            })
            .collect();
        let index_entries = index_entries(&index);
        let tracked = tracked(&index_entries);
        let watch = watch.and_then(|watch| inputs_watched(watch, root, &before, tracked, revert));
        Ok(CheckoutGuard {
            root: root.to_path_buf(),
            before,
            index_entries,
            head: head(repo),
            index_stamp: index_stamp(repo),
            watch: RefCell::new(watch),
        })
    }

    /// Whether the checkout's HEAD and index are still what they were when this was taken, so
    /// that it may stand for a fresh [`CheckoutGuard::capture`]: the files then differ from
    /// what it holds only by what was written since, which the next restore finds.
    pub fn still_current(&self, repo: &Repo) -> bool {
        repo.root() == self.root
            && head(&repo.repo) == self.head
            && index_stamp(&repo.repo) == self.index_stamp
    }

    /// Puts back every path changed since the capture for which `revert` is true, keeping the
    /// changed version under `backup`; every other changed path (and a change of the index)
    /// is kept, with its version from before under `backup`. Returns a description of each,
    /// and the checkout as it is now, to guard the next step with (without another walk).
    ///
    /// A path is compared with what it held before the step: its content then, or else the
    /// index's version from before — so a file the step changed *and* staged is found too.
    pub fn restore(
        &self,
        repo: &Repo,
        backup: &Path,
        revert: &dyn Fn(&str) -> bool,
    ) -> Result<(Guarded, CheckoutGuard), GitError> {
        let repo = &repo.repo;
        let mut guarded = Guarded::default();
        let mut index = repo.index().context("read the index", &self.root)?;
        // Read again only when the file changed (its stamp): the step may have staged.
        index.read(false).context("read the index", &self.root)?;
        let entries = index_entries(&index);
        let mut staged = BTreeSet::new();
        if entries != self.index_entries {
            guarded
                .kept
                .push("main checkout: the staged changes (index)".to_string());
            staged = restaged(&self.index_entries, &entries);
        }
        // What the watch heard, among what differs from the index; else a walk, watched anew.
        let heard = self.watch.take().and_then(|mut watch| {
            let paths = watch.changed()?;
            Some((paths, watch))
        });
        let walked = heard.is_none();
        let (now, watch) = match heard {
            Some((paths, watch)) => {
                let paths = paths.into_iter().map(String::into_bytes).collect();
                let differ =
                    super::snapshot::changes_among(repo, &mut index, &self.root, Some(paths))?;
                (own_left_out(differ), Some(watch))
            }
            None => walk_watched(repo, &mut index, &self.root)?,
        };
        let paths: BTreeSet<&String> = now
            .iter()
            .chain(self.before.keys())
            .chain(staged.iter())
            .collect();
        let mut after = BTreeMap::new();
        for path in paths {
            let expected = match self.before.get(path) {
                Some(content) => content.clone(),
                None => self.staged_before(repo, path),
            };
            let left = self.settle(path, expected, backup, revert, &mut guarded)?;
            after.insert(path.clone(), left);
        }
        let watch = watch.and_then(|watch| {
            // Kept on, the watch has the tracked inputs already, but for those staged.
            let tracked: Box<dyn Iterator<Item = &str>> = match walked {
                true => Box::new(tracked(&entries)),
                false => Box::new(staged.iter().map(String::as_str)),
            };
            inputs_watched(watch, &self.root, &after, tracked, revert)
        });
        let next = CheckoutGuard {
            root: self.root.clone(),
            before: after,
            index_entries: entries,
            head: head(repo),
            index_stamp: index_stamp(repo),
            watch: RefCell::new(watch),
        };
        Ok((guarded, next))
    }

    /// One path after the step, against what it held before (`expected`): put back where it
    /// must not change, the other version kept under `backup`, and reported in `guarded`.
    /// Returns what the path holds now.
    fn settle(
        &self,
        path: &str,
        expected: Content,
        backup: &Path,
        revert: &dyn Fn(&str) -> bool,
        guarded: &mut Guarded,
    ) -> Result<Content, GitError> {
        let full = self.root.join(path);
        let current = read(&full);
        if same(&current, &expected) {
            return Ok(current);
        }
        let what = format!("main checkout: {}", base::quoted::path(path));
        if !revert(path) {
            keep(&expected, &backup.join(path))?;
            guarded.kept.push(format!(
                "{what} (changed while the step ran; kept, as it may be your own edit; the \
                 version from before is in {})",
                backup.display()
            ));
            return Ok(current);
        }
        if beyond_link(&self.root, path) {
            guarded
                .reverted
                .push(format!("{what} (not restored: beyond a symbolic link)"));
            return Ok(current);
        }
        keep(&current, &backup.join(path))?;
        if put_back(&full, &current, &expected)? {
            guarded.reverted.push(format!(
                "{what} (restored; the agent's version is kept in {})",
                backup.display()
            ));
            Ok(expected)
        } else {
            guarded
                .reverted
                .push(format!("{what} (changed; too large to restore)"));
            Ok(current)
        }
    }

    /// What the index held before the step for a path that did not differ from it then: the
    /// file as staged (which the checkout held then), or nothing.
    fn staged_before(&self, repo: &Repository, path: &str) -> Content {
        let found = self
            .index_entries
            .binary_search_by(|(p, _, _)| p.as_slice().cmp(path.as_bytes()));
        let Ok(at) = found else {
            return Content::Absent;
        };
        let (_, id, mode) = self.index_entries[at];
        let Ok(blob) = repo.find_blob(id) else {
            return Content::Other;
        };
        match mode {
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
}

/// What [`CheckoutGuard::restore`] found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Guarded {
    /// Put back: the step's changes to what must not change.
    pub reverted: Vec<String>,
    /// Changed while the step ran and left as they are.
    pub kept: Vec<String>,
}

/// The paths that differ from the index (tracked changes and untracked files that are not
/// ignored; what is staged and unchanged since equals the index), relative, without the
/// runner's own directories: one walk, on the metadata fast path where it can tell
/// ([`super::snapshot::unstaged_changes`]; the index is refreshed in memory only) — and a
/// watch on the checkout, started before the walk so that it hears whatever comes after.
fn walk_watched(
    repo: &Repository,
    index: &mut git2::Index,
    root: &Path,
) -> Result<(BTreeSet<String>, Option<Watch>), GitError> {
    let watch = Watch::start(repo, root);
    let changes = super::snapshot::unstaged_changes(repo, index, root)?;
    Ok((own_left_out(changes), watch))
}

/// The paths of `changes` (as [`super::snapshot::unstaged_changes`] lists them) but the
/// runner's own directories.
fn own_left_out(changes: Vec<(Vec<u8>, bool)>) -> BTreeSet<String> {
    changes
        .into_iter()
        .filter_map(|(path, _)| {
            let path = String::from_utf8_lossy(&path).into_owned();
            let path = path.trim_end_matches('/').to_string();
            let own = path.starts_with(".autobuild/runs/")
                || path.starts_with(".autobuild/worktrees/")
                || path == ".autobuild/runs"
                || path == ".autobuild/worktrees";
            (!own).then_some(path)
        })
        .collect()
}

/// `watch`, with each of the files a restore would put back (tracked or held) watched by
/// itself; `None` when one cannot be (the guard then walks).
fn inputs_watched<'a>(
    mut watch: Watch,
    root: &Path,
    held: &'a BTreeMap<String, Content>,
    tracked: impl Iterator<Item = &'a str>,
    revert: &dyn Fn(&str) -> bool,
) -> Option<Watch> {
    let inputs = held
        .keys()
        .map(String::as_str)
        .chain(tracked)
        .filter(|path| revert(path));
    watch.files(root, inputs).then_some(watch)
}

/// The paths the index tracks.
fn tracked(entries: &[(Vec<u8>, git2::Oid, u32)]) -> impl Iterator<Item = &str> {
    entries
        .iter()
        .filter_map(|(path, _, _)| std::str::from_utf8(path).ok())
}

/// Stage-0 and conflict entries alike, in the index's order (by path).
fn index_entries(index: &git2::Index) -> Vec<(Vec<u8>, git2::Oid, u32)> {
    index
        .iter()
        .map(|entry| (entry.path, entry.id, entry.mode))
        .collect()
}

/// The paths whose index entry differs between `before` and `now` (both sorted by path).
fn restaged(
    before: &[(Vec<u8>, git2::Oid, u32)],
    now: &[(Vec<u8>, git2::Oid, u32)],
) -> BTreeSet<String> {
    let map = |entries: &[(Vec<u8>, git2::Oid, u32)]| -> BTreeMap<Vec<u8>, (git2::Oid, u32)> {
        entries
            .iter()
            .map(|(p, id, mode)| (p.clone(), (*id, *mode)))
            .collect()
    };
    let (before, now) = (map(before), map(now));
    before
        .keys()
        .chain(now.keys())
        .filter(|path| before.get(*path) != now.get(*path))
        .map(|path| String::from_utf8_lossy(path).into_owned())
        .collect()
}

fn head(repo: &Repository) -> Option<git2::Oid> {
    repo.head().ok().and_then(|head| head.target())
}

/// The index file's size and modification time, without reading it.
fn index_stamp(repo: &Repository) -> Option<(u64, std::time::SystemTime)> {
    let meta = fs::metadata(repo.path().join("index")).ok()?;
    Some((meta.len(), meta.modified().ok()?))
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
mod watch_tests;

#[cfg(test)]
impl CheckoutGuard {
    /// This guard without its watch: its restore walks.
    fn unwatched(self) -> CheckoutGuard {
        self.watch.take();
        self
    }
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
        let guard = CheckoutGuard::capture(&Repo::discover(&root).unwrap(), &|_| true).unwrap();
        let backup = dir.path().join("backup");
        assert!(
            guard
                .restore(&repo_of(&root), &backup, &|_| true)
                .unwrap()
                .0
                == Guarded::default()
        );

        fs::write(root.join("src/a.txt"), "agent\n").unwrap();
        fs::write(root.join("b.txt"), "agent\n").unwrap();
        fs::write(root.join("new.txt"), "agent\n").unwrap();
        fs::remove_file(root.join("gone.txt")).unwrap();
        fs::remove_file(root.join("notes.txt")).unwrap();
        fs::create_dir_all(root.join(".autobuild/runs/T")).unwrap();
        fs::write(root.join(".autobuild/runs/T/x"), "runner\n").unwrap();
        let changed = guard
            .restore(&repo_of(&root), &backup, &|_| true)
            .unwrap()
            .0
            .reverted;

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
        assert!(
            guard
                .restore(&repo_of(&root), &backup, &|_| true)
                .unwrap()
                .0
                == Guarded::default()
        );
    }

    #[test]
    fn a_staged_change_is_reported_and_left() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        init_with_commit(dir.path(), "main", "first").unwrap();
        let guard =
            CheckoutGuard::capture(&Repo::discover(dir.path()).unwrap(), &|_| true).unwrap();
        let repo = Repository::open(dir.path()).unwrap();
        let mut index = repo.index().unwrap();
        index.remove_path(Path::new("a.txt")).unwrap();
        index.write().unwrap();
        let guarded = guard
            .restore(&repo_of(dir.path()), &dir.path().join("backup"), &|_| true)
            .unwrap()
            .0;
        assert_eq!(guarded.kept, ["main checkout: the staged changes (index)"]);
        let mut index = repo.index().unwrap();
        index.read(true).unwrap();
        assert!(index.get_path(Path::new("a.txt"), 0).is_none());
    }

    /// A runner input the step changed and staged (`git add`) is still put back: it is
    /// compared with what the index held before the step, not after.
    #[test]
    fn a_change_the_step_also_staged_is_put_back() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        fs::create_dir_all(root.join(".autobuild")).unwrap();
        fs::write(root.join(".autobuild/config.toml"), "[checks.test]\n").unwrap();
        init_with_commit(&root, "main", "first").unwrap();
        let guard = CheckoutGuard::capture(&Repo::discover(&root).unwrap(), &|_| true).unwrap();
        fs::write(root.join(".autobuild/config.toml"), "# weakened\n").unwrap();
        let repo = Repository::open(&root).unwrap();
        let mut index = repo.index().unwrap();
        index.add_path(Path::new(".autobuild/config.toml")).unwrap();
        index.write().unwrap();

        let (guarded, _) = guard
            .restore(&repo_of(&root), &dir.path().join("backup"), &|_| true)
            .unwrap();

        assert_eq!(guarded.kept, ["main checkout: the staged changes (index)"]);
        assert_eq!(guarded.reverted.len(), 1, "{guarded:?}");
        assert_eq!(
            fs::read_to_string(root.join(".autobuild/config.toml")).unwrap(),
            "[checks.test]\n"
        );
    }

    /// What a restore returns guards the next step as a fresh capture would: a second step's
    /// change is found against what the first left (its kept change is not reported again).
    #[test]
    fn the_checkout_a_restore_leaves_guards_the_next_step() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        fs::create_dir_all(&root).unwrap();
        fs::write(root.join("a.txt"), "a\n").unwrap();
        fs::write(root.join("b.txt"), "b\n").unwrap();
        init_with_commit(&root, "main", "first").unwrap();
        let backup = dir.path().join("backup");
        let first = CheckoutGuard::capture(&Repo::discover(&root).unwrap(), &|_| true).unwrap();
        fs::write(root.join("a.txt"), "kept\n").unwrap();
        fs::write(root.join("b.txt"), "reverted\n").unwrap();
        let (guarded, next) = first
            .restore(&repo_of(&root), &backup, &|p| p == "b.txt")
            .unwrap();
        assert_eq!((guarded.kept.len(), guarded.reverted.len()), (1, 1));
        assert!(next.still_current(&repo_of(&root)));

        fs::write(root.join("b.txt"), "again\n").unwrap();
        let (guarded, _) = next
            .restore(&repo_of(&root), &backup, &|p| p == "b.txt")
            .unwrap();

        assert!(guarded.kept.is_empty(), "{guarded:?}");
        assert_eq!(guarded.reverted.len(), 1, "{guarded:?}");
        assert_eq!(fs::read_to_string(root.join("a.txt")).unwrap(), "kept\n");
        assert_eq!(fs::read_to_string(root.join("b.txt")).unwrap(), "b\n");
        // A commit moves HEAD: what the last restore saw no longer stands for a capture.
        init_commit_all(&root);
        assert!(!next.still_current(&repo_of(&root)));
    }

    fn repo_of(root: &Path) -> Repo {
        Repo::discover(root).unwrap()
    }

    fn init_commit_all(root: &Path) {
        let repo = Repository::open(root).unwrap();
        let mut index = repo.index().unwrap();
        index.add_path(Path::new("a.txt")).unwrap();
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = git2::Signature::now("t", "t@t").unwrap();
        let parent = repo.head().unwrap().peel_to_commit().unwrap();
        repo.commit(Some("HEAD"), &sig, &sig, "second", &tree, &[&parent])
            .unwrap();
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
        let guard = CheckoutGuard::capture(&Repo::discover(&root).unwrap(), &|_| true).unwrap();
        fs::write(root.join("a.txt"), "edited during the step\n").unwrap();
        fs::write(root.join(".autobuild/config.toml"), "# weakened\n").unwrap();
        let backup = dir.path().join("backup");

        let guarded = guard
            .restore(&repo_of(&root), &backup, &|path| {
                path.starts_with(".autobuild/")
            })
            .unwrap()
            .0;

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
