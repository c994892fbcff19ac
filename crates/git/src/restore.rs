//! The audit after a read-only step: anything the step changed in the worktree is reported and
//! reverted, so read-only is enforced by the runner and not only by an agent's tool list.

use std::path::Path;

use git2::build::CheckoutBuilder;
use std::os::unix::fs::MetadataExt;
use std::time::{Duration, SystemTime};

use git2::{Commit, Index, ObjectType, Repository, ResetType, Tree};

use super::diff::changed_paths;
use super::error::{Context, GitError};
use super::repo::{find_commit, open_checkout};
use super::snapshot::{stage, unstaged_changes};
use super::{files, links};

/// Returns the worktree to exactly `commit`: tracked files, index and branch tip are reset, and
/// untracked files that are not ignored are removed (ignored files such as build output are
/// kept). Returns the paths (relative, `/`-separated, sorted, unique) whose content differed;
/// empty when the step changed nothing.
pub fn restore(worktree: &Path, commit: &str) -> Result<Vec<String>, GitError> {
    Ok(restore_since(worktree, commit, None)?.paths)
}

/// What [`restore_since`] reverted.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Reverted {
    /// Every path whose content differed from the commit (sorted, unique).
    pub paths: Vec<String>,
    /// Those of `paths` last changed before the mark: written (or, for a deleted path, its
    /// directory last changed) before it. Empty without a mark.
    pub before_mark: Vec<String>,
}

/// [`restore`], telling apart what changed before `mark` (a time taken before the last step
/// started) from what changed after it, by the change time (`ctime`) of each reverted path, or
/// of the closest directory that still exists for a deleted one. A change time cannot be set
/// back by a process, only moved forward: a step cannot make its own change look older than
/// the mark, only a change older than the mark look like its own. Paths beyond a symbolic link
/// count as changed after the mark.
///
/// This lets one walk after a run of commands (the checks) and a read-only agent serve both:
/// what the commands left is named as theirs, what the agent changed as the agent's.
pub fn restore_since(
    worktree: &Path,
    commit: &str,
    mark: Option<SystemTime>,
) -> Result<Reverted, GitError> {
    let (repo, mut index) = super::index_cache::take(worktree)?;
    let target = find_commit(&repo, commit, worktree)?;
    // Asked before the walk: refreshing a file's stat information invalidates the tree cache
    // along its path, and libgit2 then rebuilds the whole tree to answer.
    let index_is_target = index_is(&repo, &mut index, &target);
    let changes = unstaged_changes(&repo, &mut index, worktree)?;
    if changes.is_empty() && index_is_target {
        // The file's content, and stat information the walk refreshed.
        drop(target);
        super::index_cache::keep(worktree, repo, index);
        return Ok(Reverted::default());
    }
    let current = stage(&mut index, changes, worktree);
    // Nothing staged here may leak into the reset below: the file is the runner's index as
    // `take` left it.
    index.read(true).context("reload the index", worktree)?;
    let paths = changed_paths(&repo, target.tree_id(), current?, worktree)?;
    let before_mark = match mark {
        Some(mark) => paths
            .iter()
            .filter(|path| changed_before(worktree, path, mark))
            .cloned()
            .collect(),
        None => Vec::new(),
    };
    // libgit2's checkout follows a link that an agent put where a directory was, and would
    // write the commit's files wherever it points: the links go first.
    remove_links_in_the_way(&repo, &target, worktree)?;
    // It also writes a changed file in place, so a hard link the step made to a file outside
    // the worktree would be overwritten: a file with another name goes too, and the checkout
    // makes a new one.
    remove_shared_files(worktree, &paths)?;
    super::walks::count(worktree);
    repo.reset(target.as_object(), ResetType::Hard, None)
        .context(format_args!("reset the worktree to {commit}"), worktree)?;
    // A hard reset leaves untracked files alone (libgit2 ignores `remove_untracked` there),
    // so a second, forced checkout of the now-reset HEAD removes them.
    let mut checkout = CheckoutBuilder::new();
    checkout.force().remove_untracked(true);
    super::walks::count(worktree);
    repo.checkout_head(Some(&mut checkout))
        .context("remove files the step created", worktree)?;
    if !paths.is_empty() {
        tracing::debug!(reverted = ?paths, worktree = %worktree.display(), "restored worktree");
    }
    // The reset rebuilt the repository's index (this very object) from the commit and the
    // checkout refreshed it: the runner's own, so kept.
    drop(target);
    super::index_cache::keep(worktree, repo, index);
    Ok(Reverted { paths, before_mark })
}

/// HEAD is `commit` and the index holds exactly its tree: nothing is staged, nor committed on
/// top of it. The index's tree cache answers this without reading the whole tree when it is
/// valid (as a checkpoint or a reset leaves it); an index that cannot make a tree (a conflict)
/// is not `commit`'s.
fn index_is(repo: &Repository, index: &mut Index, commit: &Commit<'_>) -> bool {
    let head = repo.head().ok().and_then(|h| h.target());
    head == Some(commit.id()) && index.write_tree().ok() == Some(commit.tree_id())
}

/// Whether `path` (relative to `worktree`) was last changed before `mark`: its own change time,
/// or for a path that no longer exists the change time of the closest directory above it that
/// does (removing a file changes its directory). Anything that cannot be read, or lies beyond
/// a symbolic link, was not.
fn changed_before(worktree: &Path, path: &str, mark: SystemTime) -> bool {
    if links::linked_component(worktree, path).is_some() {
        return false;
    }
    let mut at = worktree.join(path);
    loop {
        match std::fs::symlink_metadata(&at) {
            Ok(meta) => return changed_at(&meta).is_some_and(|ctime| ctime < mark),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(_) => return false,
        }
        if at.as_path() == worktree || !at.pop() || !at.starts_with(worktree) {
            return false;
        }
    }
}

/// The change time of what `meta` describes.
fn changed_at(meta: &std::fs::Metadata) -> Option<SystemTime> {
    let seconds = u64::try_from(meta.ctime()).ok()?;
    let nanos = u32::try_from(meta.ctime_nsec()).ok()?;
    SystemTime::UNIX_EPOCH.checked_add(Duration::new(seconds, nanos))
}

/// Puts `paths` (worktree-relative) back as they are in `commit`: a changed file gets its
/// committed content and mode again, a deleted one is recreated, a new one is removed. Nothing
/// else in the worktree is touched.
pub fn restore_paths(worktree: &Path, commit: &str, paths: &[&str]) -> Result<(), GitError> {
    let repo = open_checkout(worktree)?;
    let commit = find_commit(&repo, commit, worktree)?;
    restore_paths_in(&repo, worktree, &commit, paths)
}

/// Makes the worktree's files those of `commit`, as if a writer had written them: every path
/// where the tree of the worktree's HEAD and `commit`'s tree differ is written (or removed);
/// HEAD, the branch and the index are not touched, so the next checkpoint records the change
/// (`autobuild replay` puts a recorded turn's work back this way). Returns the paths written.
pub fn write_commit_files(worktree: &Path, commit: &str) -> Result<Vec<String>, GitError> {
    let repo = open_checkout(worktree)?;
    let target = find_commit(&repo, commit, worktree)?;
    let head = repo
        .head()
        .and_then(|head| head.peel_to_commit())
        .context("read HEAD", worktree)?;
    let paths = super::diff::changed_paths(&repo, head.tree_id(), target.tree_id(), worktree)?;
    let shown: Vec<&str> = paths.iter().map(String::as_str).collect();
    restore_paths_in(&repo, worktree, &target, &shown)?;
    Ok(paths)
}

/// [`restore_paths`] on an open repository.
pub(crate) fn restore_paths_in(
    repo: &Repository,
    worktree: &Path,
    commit: &Commit<'_>,
    paths: &[&str],
) -> Result<(), GitError> {
    let tree = commit
        .tree()
        .context(format_args!("read the tree of {}", commit.id()), worktree)?;
    for path in paths {
        // A link where a directory should be is what gets restored: it goes, and the path is
        // written in a real directory in its place.
        if let Some(link) = links::linked_component(worktree, path) {
            links::remove_link(worktree, link.as_bytes())?;
        }
        let wanted = files::entry(&tree, path);
        if files::on_disk(worktree, path)? != wanted.map(|e| e.0) || wanted.is_none() {
            files::write_entry(repo, worktree, path, wanted)?;
        }
    }
    tracing::debug!(?paths, worktree = %worktree.display(), "restored paths");
    Ok(())
}

/// Removes each of `paths` (worktree-relative) that is a regular file with more than one name
/// (a hard link): what is written there next is a new file, not the other name's content.
fn remove_shared_files(worktree: &Path, paths: &[String]) -> Result<(), GitError> {
    for path in paths {
        if links::linked_component(worktree, path).is_some() {
            continue;
        }
        let full = worktree.join(path);
        let shared = std::fs::symlink_metadata(&full)
            .is_ok_and(|meta| meta.file_type().is_file() && meta.nlink() > 1);
        if shared {
            std::fs::remove_file(&full).context("remove a hard link", &full)?;
        }
    }
    Ok(())
}

/// Removes the links standing where `target` or the index has a directory, so neither the
/// reset nor the removal of untracked files reaches through one. Paths are bytes: a directory
/// name need not be UTF-8.
fn remove_links_in_the_way(
    repo: &Repository,
    target: &Commit<'_>,
    worktree: &Path,
) -> Result<(), GitError> {
    let tree = target
        .tree()
        .context("read the checkpoint's tree", worktree)?;
    let mut dirs: Vec<Vec<u8>> = Vec::new();
    tree_dirs(repo, &tree, &[], &mut dirs, worktree)?;
    let index = repo.index().context("open the index", worktree)?;
    let staged: Vec<Vec<u8>> = index.iter().map(|entry| entry.path).collect();
    let all = dirs
        .iter()
        .map(Vec::as_slice)
        .chain(links::parent_dirs(staged.iter().map(Vec::as_slice)));
    links::remove_links_in_the_way(worktree, all)?;
    Ok(())
}

/// Every directory of `tree`, recursively, as `prefix`-relative paths.
fn tree_dirs(
    repo: &Repository,
    tree: &Tree<'_>,
    prefix: &[u8],
    dirs: &mut Vec<Vec<u8>>,
    worktree: &Path,
) -> Result<(), GitError> {
    for entry in tree.iter() {
        if entry.kind() != Some(ObjectType::Tree) {
            continue;
        }
        let mut path = prefix.to_vec();
        if !path.is_empty() {
            path.push(b'/');
        }
        path.extend_from_slice(entry.name_bytes());
        let subtree = repo
            .find_tree(entry.id())
            .context("read the checkpoint's tree", worktree)?;
        tree_dirs(repo, &subtree, &path, dirs, worktree)?;
        dirs.push(path);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, path: &str, text: &str) {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    fn ctime(path: &Path) -> SystemTime {
        changed_at(&std::fs::symlink_metadata(path).unwrap()).unwrap()
    }

    #[test]
    fn one_walk_tells_what_changed_before_the_mark_from_what_changed_after() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for path in ["a.txt", "b.txt", "old/c.txt", "new/d.txt", "new/e.txt"] {
            write(root, path, "committed\n");
        }
        let commit = crate::init_with_commit(root, "main", "first").unwrap();
        assert_eq!(
            restore_since(root, &commit, None).unwrap(),
            Reverted::default()
        );
        let walks = crate::walks_of(root);

        // Before the mark (the checks): a new report, an edit, a deletion.
        write(root, "report.out", "left\n");
        write(root, "a.txt", "checks\n");
        std::fs::remove_file(root.join("old/c.txt")).unwrap();
        let last = ctime(&root.join("old"));
        // The mark is taken once the kernel's (coarse) clock has moved past those writes.
        let mark = loop {
            let mark = SystemTime::now() - Duration::from_millis(20);
            if mark > last {
                break mark;
            }
            std::thread::yield_now();
        };
        // After it (the reviewer): a new file, an edit, a deletion.
        write(root, "scratch.txt", "mine\n");
        write(root, "b.txt", "reviewer\n");
        std::fs::remove_file(root.join("new/d.txt")).unwrap();

        let reverted = restore_since(root, &commit, Some(mark)).unwrap();

        assert_eq!(
            reverted.paths,
            [
                "a.txt",
                "b.txt",
                "new/d.txt",
                "old/c.txt",
                "report.out",
                "scratch.txt"
            ]
        );
        assert_eq!(reverted.before_mark, ["a.txt", "old/c.txt", "report.out"]);
        assert_eq!(
            std::fs::read_to_string(root.join("a.txt")).unwrap(),
            "committed\n"
        );
        assert!(root.join("new/d.txt").exists() && root.join("old/c.txt").exists());
        assert!(!root.join("scratch.txt").exists() && !root.join("report.out").exists());
        // The clean check is one walk; a restore walks for the status, the reset and the
        // removal of untracked files.
        assert_eq!(crate::walks_of(root) - walks, 3);
        assert_eq!(
            restore_since(root, &commit, Some(mark)).unwrap(),
            Reverted::default()
        );
        assert_eq!(crate::walks_of(root) - walks, 4);
    }

    #[test]
    fn a_staged_change_or_a_moved_head_is_not_pristine() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "a.txt", "a\n");
        let commit = crate::init_with_commit(root, "main", "first").unwrap();
        // Staged, then the file put back as committed: nothing differs on disk, yet the index
        // does; the restore resets it without naming a path.
        write(root, "a.txt", "staged\n");
        let repo = open_checkout(root).unwrap();
        let mut index = repo.index().unwrap();
        index.add_path(Path::new("a.txt")).unwrap();
        index.write().unwrap();
        write(root, "a.txt", "a\n");
        assert!(restore(root, &commit).unwrap().is_empty());
        let mut index = repo.index().unwrap();
        index.read(true).unwrap();
        assert_eq!(index.write_tree().unwrap().to_string(), {
            let c = find_commit(&repo, &commit, root).unwrap();
            c.tree_id().to_string()
        });
    }
}
