//! Which paths differ between two trees, found by reading only the subtrees whose ids differ:
//! the cost is proportional to the change (and the depth of the trees it touches), not to the
//! size of the trees. libgit2's own tree-to-tree diff iterates every entry of both trees, equal
//! subtrees included, which made a one-file turn cost as much as the whole repository
//! (ARCHITECTURE.md, "Walks of the worktree").
//!
//! The result is the set of paths a full `git_diff_tree_to_tree` reports (both sides of every
//! delta): blobs, symlinks and gitlinks whose id or mode differ, and every leaf under a subtree
//! that exists on one side only. A file replaced by a directory of the same name (or the other
//! way round) is the file on one side and the directory's leaves on the other, as in git, where a
//! tree `name` sorts as `name/`.

use std::cmp::Ordering;
use std::path::Path;

use git2::{Diff, DiffOptions, Index, Oid, Repository, Tree};

use super::error::{Context, GitError};
use super::repo::open_checkout;

/// The kind bits of a tree entry's mode; a subtree is `040000`.
const KIND_MASK: i32 = 0o170_000;
const TREE_KIND: i32 = 0o040_000;

/// One entry of a tree, as far as the comparison needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub name: Vec<u8>,
    /// The raw git mode: `100644`, `100755`, `120000` (symlink), `160000` (gitlink), `040000`.
    pub mode: i32,
    pub id: Oid,
}

impl Entry {
    fn is_tree(&self) -> bool {
        self.mode & KIND_MASK == TREE_KIND
    }

    /// Git's order of tree entries: by name, a subtree sorting as if its name ended in `/`.
    fn git_order(&self, other: &Entry) -> Ordering {
        self.sort_key().cmp(other.sort_key())
    }

    fn sort_key(&self) -> impl Iterator<Item = &u8> {
        let slash: &'static [u8] = if self.is_tree() { b"/" } else { b"" };
        self.name.iter().chain(slash)
    }
}

/// The leaf paths (`/`-separated, relative to the trees' root) that differ between the trees
/// `old` and `new`, sorted and unique. `read` gives a tree's entries; it is called only for
/// subtrees whose ids differ between the two sides, or that exist on one side only.
pub(crate) fn changed_leaves<E>(
    old: Oid,
    new: Oid,
    read: &mut dyn FnMut(Oid) -> Result<Vec<Entry>, E>,
) -> Result<Vec<Vec<u8>>, E> {
    let mut changed = Vec::new();
    // Subtrees still to compare: their path prefix (empty or ending in `/`) and both sides' ids.
    let mut pending: Vec<(Vec<u8>, Option<Oid>, Option<Oid>)> = Vec::new();
    if old != new {
        pending.push((Vec::new(), Some(old), Some(new)));
    }
    while let Some((prefix, old, new)) = pending.pop() {
        let old = sorted(old.map(&mut *read).transpose()?.unwrap_or_default());
        let new = sorted(new.map(&mut *read).transpose()?.unwrap_or_default());
        let (mut olds, mut news) = (old.into_iter().peekable(), new.into_iter().peekable());
        loop {
            let order = match (olds.peek(), news.peek()) {
                (None, None) => break,
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (Some(o), Some(n)) => o.git_order(n),
            };
            let (o, n) = match order {
                Ordering::Less => (olds.next(), None),
                Ordering::Greater => (None, news.next()),
                Ordering::Equal => (olds.next(), news.next()),
            };
            compare(&prefix, o, n, &mut changed, &mut pending);
        }
    }
    changed.sort_unstable();
    changed.dedup();
    Ok(changed)
}

/// One name of a subtree, on the old side, the new side or both: an equal entry is skipped, a
/// subtree whose id differs (or that one side lacks) is queued, a leaf that differs is changed.
fn compare(
    prefix: &[u8],
    old: Option<Entry>,
    new: Option<Entry>,
    changed: &mut Vec<Vec<u8>>,
    pending: &mut Vec<(Vec<u8>, Option<Oid>, Option<Oid>)>,
) {
    match (old, new) {
        (Some(o), Some(n)) if o.is_tree() != n.is_tree() => {
            // Only a malformed name (one with a `/`) sorts a leaf level with a subtree.
            compare(prefix, Some(o), None, changed, pending);
            compare(prefix, None, Some(n), changed, pending);
        }
        (Some(o), Some(n)) if o.id == n.id && (o.mode == n.mode || o.is_tree()) => {}
        (old, new) => {
            let Some(entry) = old.as_ref().or(new.as_ref()) else {
                return;
            };
            let path = [prefix, &entry.name].concat();
            if entry.is_tree() {
                let id = |e: &Option<Entry>| e.as_ref().map(|e| e.id);
                pending.push(([path, b"/".to_vec()].concat(), id(&old), id(&new)));
            } else {
                changed.push(path);
            }
        }
    }
}

/// Entries in git's order (a well-formed tree already is; a malformed one is compared by name
/// all the same).
fn sorted(mut entries: Vec<Entry>) -> Vec<Entry> {
    if !entries.is_sorted_by(|a, b| a.git_order(b) != Ordering::Greater) {
        entries.sort_by(Entry::git_order);
    }
    entries
}

/// [`changed_leaves`] of two trees of `repo`.
pub(crate) fn changed_leaves_in(
    repo: &Repository,
    old: Oid,
    new: Oid,
) -> Result<Vec<Vec<u8>>, git2::Error> {
    changed_leaves(old, new, &mut |id| {
        let tree = repo.find_tree(id)?;
        Ok(tree
            .iter()
            .map(|entry| Entry {
                name: entry.name_bytes().to_vec(),
                mode: entry.filemode_raw(),
                id: entry.id(),
            })
            .collect())
    })
}

/// libgit2's diff of the trees `old` and `new` restricted to `paths` (some of their
/// [`changed_leaves`]), taken literally: libgit2's tree iterators then descend only into the
/// subtrees on the way to those paths (`iterator_pathlist_next_is` in its `iterator.c`), and the
/// deltas are those a full diff has for these paths, so rename detection and line counts on the
/// result are the full diff's. `None` when `paths` is empty (an empty path list would mean
/// every path to libgit2).
pub(crate) fn diff_of<'r>(
    repo: &'r Repository,
    old: &Tree<'_>,
    new: &Tree<'_>,
    paths: &[Vec<u8>],
) -> Result<Option<Diff<'r>>, git2::Error> {
    if paths.is_empty() {
        return Ok(None);
    }
    let mut options = DiffOptions::new();
    // Binary or text is decided by content ([`super::diff::binary_content`]), never by the
    // branch's own `.gitattributes`.
    options.disable_pathspec_match(true).force_text(true);
    for path in paths {
        options.pathspec(path.as_slice());
    }
    repo.diff_tree_to_tree(Some(old), Some(new), Some(&mut options))
        .map(Some)
}

/// A handle on the checkout `checkout` for diffing commits, and for nothing else: its index is
/// an empty in-memory one. Each patch asks for the `diff` attribute of its path, and libgit2's
/// attribute lookup loads the handle's index for `.gitattributes` files that are staged but not
/// in the working tree: on a fresh handle, a read and checksum of the whole index file (most of
/// a one-file diff's cost at 10,000 files). With this handle the attributes come from the working
/// tree's `.gitattributes` files, `$GIT_DIR/info/attributes`, `core.attributesfile` and the
/// system file as before; only a `.gitattributes` staged but missing from the working tree no
/// longer counts (right after a checkpoint the index and the working tree hold the same ones).
pub(crate) fn open_for_diffs(checkout: &Path) -> Result<Repository, GitError> {
    for_diffs(open_checkout(checkout)?, checkout)
}

/// [`open_for_diffs`] from a handle already open on `checkout`.
pub(crate) fn for_diffs(repo: Repository, checkout: &Path) -> Result<Repository, GitError> {
    let mut index = Index::new().context("make an in-memory index", checkout)?;
    repo.set_index(&mut index)
        .context("give a diff handle its own index", checkout)?;
    Ok(repo)
}

#[cfg(test)]
#[path = "tree_diff/fixtures_tests.rs"]
pub(crate) mod fixtures;
#[cfg(test)]
mod tests;
