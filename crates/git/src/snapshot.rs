//! Snapshots of a worktree: checkpoint commits after player steps, and the tree id the worktree
//! would have right now (used to audit read-only steps and to detect stalls) without committing
//! or touching the real index.
//!
//! Both stage exactly what `git add -A` would: new, modified and deleted files, honouring
//! `.gitignore`. They share [`stage_all`] so a checkpoint's tree and a later state tree of the
//! same files are always equal.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use git2::{Delta, DiffOptions, Index, Oid, Repository};
use serde::{Deserialize, Serialize};

use super::diff::changed_paths;
use super::error::{Context, GitError};
use super::repo::{find_commit, head_of, open_checkout, signature};

/// The result of checkpointing a worktree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The new commit (hex), or HEAD's when nothing changed.
    pub commit: String,
    /// The commit's tree (hex).
    pub tree: String,
    /// Whether a new commit was made.
    pub changed: bool,
    /// What the worktree holds beyond the commit's tree, found on the checkpoint's own walk:
    /// files and directories (one standing for everything under it) git ignores, relative.
    /// Only [`checkpoint_within_scope`] fills it in; never persisted.
    #[serde(skip)]
    pub left_out: Vec<std::path::PathBuf>,
}

/// Stages everything in `worktree` and commits it on the worktree's branch with `message`;
/// makes no commit when the staged tree equals HEAD's.
pub fn checkpoint(worktree: &Path, message: &str) -> Result<Checkpoint, GitError> {
    let repo = open_checkout(worktree)?;
    let head = head_of(&repo, worktree)?;
    let mut index = repo.index().context("open the index", worktree)?;
    let tree_id = stage_all(&repo, &mut index, worktree)?;
    index.write().context("write the index", worktree)?;
    base::failpoint::hit("checkpoint.index");
    let checkpoint = commit_staged(&repo, &head, tree_id, message, worktree)?;
    if checkpoint.changed {
        base::failpoint::hit("checkpoint.commit");
        tracing::debug!(commit = %checkpoint.commit, worktree = %worktree.display(), "checkpoint");
    }
    Ok(checkpoint)
}

/// [`checkpoint`] of a writer's step that first puts back what the step may not change, on one
/// walk of the working tree: the walk that stages the worktree also yields the paths changed
/// since the checkpoint `since`; `put_back` picks those to restore as they are in `since`.
/// Only when it picks some are they restored and the worktree staged again, so the common case
/// (nothing out of scope) costs one status walk where a scope check and a checkpoint cost two.
/// `since` is `None` before the first checkpoint: nothing is checked then.
pub fn checkpoint_within_scope(
    worktree: &Path,
    message: &str,
    since: Option<&str>,
    put_back: &mut dyn FnMut(&[String]) -> Vec<String>,
) -> Result<Checkpoint, GitError> {
    let (repo, mut index) = super::index_cache::take(worktree)?;
    let head = head_of(&repo, worktree)?;
    let (unstaged, candidates) = unstaged_changes_among_candidates(&repo, &mut index, worktree)?;
    let mut tree_id = stage(&mut index, unstaged, worktree)?;
    if let Some(since) = since {
        let since = find_commit(&repo, since, worktree)?;
        let changed = changed_paths(&repo, since.tree_id(), tree_id, worktree)?;
        let back = put_back(&changed);
        if !back.is_empty() {
            let paths: Vec<&str> = back.iter().map(String::as_str).collect();
            super::restore::restore_paths_in(&repo, worktree, &since, &paths)?;
            // What was staged in memory goes; the worktree as it now is gets staged.
            index.read(true).context("reload the index", worktree)?;
            tree_id = stage_all(&repo, &mut index, worktree)?;
        }
    }
    index.write().context("write the index", worktree)?;
    base::failpoint::hit("checkpoint.index");
    let mut checkpoint = commit_staged(&repo, &head, tree_id, message, worktree)?;
    checkpoint.left_out = match candidates {
        Some(candidates) => not_in_index(&index, &candidates, worktree),
        None => super::left_out::walk(&repo, worktree)?,
    };
    drop(head);
    super::index_cache::keep(worktree, repo, index);
    if checkpoint.changed {
        base::failpoint::hit("checkpoint.commit");
        tracing::debug!(commit = %checkpoint.commit, worktree = %worktree.display(), "checkpoint");
    }
    Ok(checkpoint)
}

/// Commits the staged tree `tree_id` on HEAD with `message`, or makes no commit when it equals
/// HEAD's tree.
fn commit_staged(
    repo: &Repository,
    head: &git2::Commit,
    tree_id: Oid,
    message: &str,
    worktree: &Path,
) -> Result<Checkpoint, GitError> {
    if tree_id == head.tree_id() {
        return Ok(Checkpoint {
            commit: head.id().to_string(),
            tree: tree_id.to_string(),
            changed: false,
            left_out: Vec::new(),
        });
    }
    let tree = repo
        .find_tree(tree_id)
        .context("read the staged tree", worktree)?;
    let author = signature(repo, worktree)?;
    let commit = repo
        .commit(Some("HEAD"), &author, &author, message, &tree, &[head])
        .context("commit the checkpoint", worktree)?;
    Ok(Checkpoint {
        commit: commit.to_string(),
        tree: tree_id.to_string(),
        changed: true,
        left_out: Vec::new(),
    })
}

/// Commits the removal of `paths` (files or directories, relative) from the index of
/// `worktree` on its branch with `message`: how a checkpoint that cannot land (a submodule
/// entry, a missing object) is put back. The files on disk are left alone.
pub fn drop_from_checkpoint(
    worktree: &Path,
    paths: &[String],
    message: &str,
) -> Result<Checkpoint, GitError> {
    let repo = open_checkout(worktree)?;
    let head = head_of(&repo, worktree)?;
    let mut index = repo.index().context("open the index", worktree)?;
    for path in paths {
        let path = Path::new(path);
        index
            .remove_path(path)
            .or_else(|_| index.remove_dir(path, 0))
            .context(format_args!("unstage {}", path.display()), worktree)?;
    }
    let tree_id = index
        .write_tree()
        .context("write the staged tree", worktree)?;
    index.write().context("write the index", worktree)?;
    commit_staged(&repo, &head, tree_id, message, worktree)
}

/// The tree id (hex) `worktree` would have if everything in it were staged now, including
/// untracked files that are not ignored. The worktree's index on disk is left untouched.
pub fn worktree_state_tree(worktree: &Path) -> Result<String, GitError> {
    let repo = open_checkout(worktree)?;
    Ok(state_tree(&repo, worktree)?.to_string())
}

/// The commit (hex) HEAD points to in `worktree`.
pub fn head_commit(worktree: &Path) -> Result<String, GitError> {
    let repo = open_checkout(worktree)?;
    let head = head_of(&repo, worktree)?.id();
    Ok(head.to_string())
}

/// The paths (relative, `/`-separated, sorted) whose content in `worktree` now differs from
/// `commit`, counting uncommitted and untracked (not ignored) files: a landing's last look at
/// the worktree it removes next. The handle and index kept for the turns' walks (module
/// `index_cache`) serve this walk and are released, so that the main checkout's index the
/// landing reads next does not add to them; without them the worktree's own index is read.
pub fn changed_files_since(worktree: &Path, commit: &str) -> Result<Vec<String>, GitError> {
    let (repo, now) = match super::index_cache::take_last(worktree)? {
        Some((repo, mut index)) => {
            let now = stage_all(&repo, &mut index, worktree)?;
            (repo, now)
        }
        None => {
            let repo = open_checkout(worktree)?;
            let now = state_tree(&repo, worktree)?;
            (repo, now)
        }
    };
    let since = find_commit(&repo, commit, worktree)?;
    changed_paths(&repo, since.tree_id(), now, worktree)
}

/// The paths (as [`changed_files_since`]) in which a worktree just checked out at `commit`
/// differs from it. When it differs in none, its index is written as the walk refreshed it,
/// with the tree cache the walk built: the first turn's walk and tree write then start from
/// them instead of rebuilding the whole tree.
pub(crate) fn checked_out_differences(
    worktree: &Path,
    commit: &str,
) -> Result<Vec<String>, GitError> {
    let repo = open_checkout(worktree)?;
    let since = find_commit(&repo, commit, worktree)?;
    let mut index = repo.index().context("open the index", worktree)?;
    let now = stage_all(&repo, &mut index, worktree)?;
    if now == since.tree_id() && head_of(&repo, worktree)?.id() == since.id() {
        index.write().context("write the index", worktree)?;
        // Written by the runner's checkout and walk, before any agent ran: the first
        // checkpoint starts from it (module `index_cache`).
        drop(since);
        super::index_cache::keep(worktree, repo, index);
        return Ok(Vec::new());
    }
    index.read(true).context("reload the index", worktree)?;
    changed_paths(&repo, since.tree_id(), now, worktree)
}

/// The state tree of `repo`'s worktree, computed on the in-memory index only.
pub(crate) fn state_tree(repo: &Repository, worktree: &Path) -> Result<Oid, GitError> {
    let mut index = repo.index().context("open the index", worktree)?;
    let tree = stage_all(repo, &mut index, worktree);
    // The repository caches its index object; reload it from disk so nothing staged here
    // leaks into a later operation on the same repository handle.
    index.read(true).context("reload the index", worktree)?;
    tree
}

/// [`state_tree`] for a handle whose index is never used again (its in-memory index keeps
/// what was staged; nothing reloads it): a landed worktree's last look, which spares a read of
/// the whole index.
pub(crate) fn state_tree_last(repo: &Repository, worktree: &Path) -> Result<Oid, GitError> {
    let mut index = repo.index().context("open the index", worktree)?;
    stage_all(repo, &mut index, worktree)
}

/// `git add -A` on `index` (in memory), returning the resulting tree id. Writes blobs and
/// trees to the object database, not the index file.
///
/// Only the paths that differ between the index and the working tree are staged (what `git
/// status` lists as unstaged or untracked): the walk answers unchanged files from the index's
/// stat cache, so a large repository with a small change costs a scan of file metadata, not a
/// re-hash of every file. HEAD is not compared with the index (what is staged already is kept
/// as it is), and the stat information the walk refreshed is kept in `index`, so that a
/// checkpoint, which writes the index, spares the next walk from reading those files again.
/// The tree is written from the index's tree cache: only the directories holding a staged
/// path are rebuilt.
fn stage_all(repo: &Repository, index: &mut Index, worktree: &Path) -> Result<Oid, GitError> {
    let unstaged = unstaged_changes(repo, index, worktree)?;
    stage(index, unstaged, worktree)
}

/// What differs between `index` and the working tree, file by file, as `git status` lists it
/// unstaged or untracked (ignored files and submodules left out): each path with whether it is
/// present (added, modified, a type change) or deleted. One walk of the working tree; the stat
/// information it refreshes is kept in `index` (in memory). The walk's metadata pass
/// ([`super::stat_walk`]) picks the paths that may differ, and libgit2 decides on those alone;
/// when that pass cannot tell, libgit2 walks everything.
pub(crate) fn unstaged_changes(
    repo: &Repository,
    index: &mut Index,
    worktree: &Path,
) -> Result<Vec<(Vec<u8>, bool)>, GitError> {
    Ok(unstaged_changes_among_candidates(repo, index, worktree)?.0)
}

/// [`unstaged_changes`], with the candidate paths the metadata pass found (`None` where it
/// could not tell and libgit2 walked everything).
#[allow(clippy::type_complexity)]
fn unstaged_changes_among_candidates(
    repo: &Repository,
    index: &mut Index,
    worktree: &Path,
) -> Result<(Vec<(Vec<u8>, bool)>, Option<Vec<Vec<u8>>>), GitError> {
    // The metadata pass judges entries against the index file's write time, which holds only
    // for the index as that file has it: a handle's copy that an older read left is brought
    // up to date first (libgit2 rereads only a changed file, and its own walk needs the same).
    index.read(false).context("read the index", worktree)?;
    let candidates = index
        .path()
        .map(Path::to_path_buf)
        .and_then(|file| super::stat_walk::candidates(index, &file, worktree));
    super::walks::count(worktree);
    let changes = changes_among(repo, index, worktree, candidates.clone())?;
    Ok((changes, candidates))
}

/// Of `candidates` (paths the metadata pass found that may differ from the index; a directory
/// stands for everything under it), those that exist in `worktree` but that `index`, staged,
/// does not hold: what git ignores. Sorted.
fn not_in_index(index: &Index, candidates: &[Vec<u8>], worktree: &Path) -> Vec<std::path::PathBuf> {
    let mut left_out = Vec::new();
    for candidate in candidates {
        if index
            .get_path(Path::new(OsStr::from_bytes(candidate)), 0)
            .is_some()
        {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(worktree.join(OsStr::from_bytes(candidate)))
        else {
            continue; // a deletion, staged
        };
        if meta.is_dir() {
            let mut prefix = candidate.clone();
            prefix.push(b'/');
            if index
                .find_prefix(Path::new(OsStr::from_bytes(&prefix)))
                .is_ok()
            {
                continue; // holds tracked files: its untracked ones are candidates of their own
            }
        }
        left_out.push(std::path::PathBuf::from(OsStr::from_bytes(candidate)));
    }
    left_out.sort();
    left_out
}

/// [`unstaged_changes`] among `candidates` only (paths, a directory standing for everything
/// under it), or everywhere for `None`.
pub(super) fn changes_among(
    repo: &Repository,
    index: &mut Index,
    worktree: &Path,
    candidates: Option<Vec<Vec<u8>>>,
) -> Result<Vec<(Vec<u8>, bool)>, GitError> {
    let mut options = DiffOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .include_typechange(true)
        .ignore_submodules(true)
        .update_index(true);
    if let Some(candidates) = candidates {
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        // libgit2 looks at these paths (and under these directories) only.
        options.disable_pathspec_match(true);
        for path in candidates {
            options.pathspec(path);
        }
    }
    let diff = repo
        .diff_index_to_workdir(Some(index), Some(&mut options))
        .context("read the worktree status", worktree)?;
    let mut changes: Vec<(Vec<u8>, bool)> = Vec::new();
    for delta in diff.deltas() {
        // Submodule entries are left as they are, as `git status` without submodules shows
        // them (a gitlink whose directory is missing is not a deletion to stage).
        let gitlink = |file: git2::DiffFile<'_>| file.mode() == git2::FileMode::Commit;
        if gitlink(delta.old_file()) || gitlink(delta.new_file()) {
            continue;
        }
        match delta.status() {
            Delta::Deleted => changes.extend(
                delta
                    .old_file()
                    .path_bytes()
                    .map(|path| (path.to_vec(), false)),
            ),
            Delta::Added | Delta::Untracked | Delta::Modified | Delta::Typechange => changes
                .extend(
                    delta
                        .new_file()
                        .path_bytes()
                        .map(|path| (path.to_vec(), true)),
                ),
            _ => {}
        }
    }
    Ok(changes)
}

/// Stages `changes` (from [`unstaged_changes`]) in `index`, in memory, and writes the tree from
/// the index's tree cache; returns its id.
pub(crate) fn stage(
    index: &mut Index,
    changes: Vec<(Vec<u8>, bool)>,
    worktree: &Path,
) -> Result<Oid, GitError> {
    for (path, present) in changes {
        let path = Path::new(OsStr::from_bytes(&path));
        if present {
            index
                .add_path(path)
                .context(format_args!("stage {}", path.display()), worktree)?;
        } else {
            index
                .remove_path(path)
                .context(format_args!("unstage deleted {}", path.display()), worktree)?;
        }
    }
    index
        .write_tree()
        .context("write the staged tree", worktree)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo_with(files: &[(&str, &str)]) -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let commit = crate::init_with_commit(dir.path(), "main", "first").unwrap();
        (dir, commit)
    }

    fn committed(root: &Path, commit: &str) -> Vec<String> {
        let repo = open_checkout(root).unwrap();
        let commit = find_commit(&repo, commit, root).unwrap();
        let parent = commit.parent(0).unwrap();
        changed_paths(&repo, parent.tree_id(), commit.tree_id(), root).unwrap()
    }

    #[test]
    fn one_walk_checkpoints_what_is_in_scope_and_puts_back_the_rest() {
        let (dir, first) = repo_with(&[("a.txt", "a\n"), ("b.txt", "b\n"), ("d.txt", "d\n")]);
        let root = dir.path();
        std::fs::write(root.join("a.txt"), "a2\n").unwrap();
        std::fs::write(root.join("b.txt"), "b2\n").unwrap();
        std::fs::remove_file(root.join("d.txt")).unwrap();
        std::fs::create_dir_all(root.join("new")).unwrap();
        std::fs::write(root.join("new/c.txt"), "c\n").unwrap();
        let mut seen = Vec::new();
        let mut put_back = |changed: &[String]| {
            seen = changed.to_vec();
            vec![
                "b.txt".to_string(),
                "new/c.txt".to_string(),
                "d.txt".to_string(),
            ]
        };
        let done = checkpoint_within_scope(root, "turn", Some(&first), &mut put_back).unwrap();
        assert_eq!(seen, ["a.txt", "b.txt", "d.txt", "new/c.txt"]);
        assert!(done.changed);
        assert_eq!(committed(root, &done.commit), ["a.txt"]);
        assert_eq!(std::fs::read_to_string(root.join("b.txt")).unwrap(), "b\n");
        assert_eq!(std::fs::read_to_string(root.join("d.txt")).unwrap(), "d\n");
        assert!(!root.join("new/c.txt").exists());
        // The index on disk is the checkpoint's: nothing is left staged or unstaged.
        let repo = open_checkout(root).unwrap();
        assert!(repo
            .statuses(Some(&mut super::super::repo::status_options()))
            .unwrap()
            .is_empty());

        // Nothing changed since: no commit; nothing to put back is asked about nothing.
        let mut asked = false;
        let mut none = |changed: &[String]| {
            asked = !changed.is_empty();
            Vec::new()
        };
        let again = checkpoint_within_scope(root, "again", Some(&done.commit), &mut none).unwrap();
        assert!(!again.changed);
        assert_eq!(again.commit, done.commit);
        assert!(!asked);
    }

    #[test]
    fn without_a_previous_checkpoint_nothing_is_put_back() {
        let (dir, _) = repo_with(&[("a.txt", "a\n")]);
        std::fs::write(dir.path().join("b.txt"), "b\n").unwrap();
        let mut never = |_: &[String]| -> Vec<String> { panic!("asked without a checkpoint") };
        let done = checkpoint_within_scope(dir.path(), "turn", None, &mut never).unwrap();
        assert_eq!(committed(dir.path(), &done.commit), ["b.txt"]);
    }
}
